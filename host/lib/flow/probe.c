/* lume-metal probe [--exercise]: an enabled VM's answers stock and shimmed, and whether its GPU
 * runs the kernels those answers turn on (the exercise step, which enable runs too). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow_internal.h"
#include "guest_shim.h"

/* The profile's expected kernels passed, those the guest's macOS can run (a profile of NULL: any
 * result is reported). The step says what was not required of this guest, and why. */
static int exercise_verdict(lm_context *ctx, const lm_profile *profile, lm_vm_outcome *o, double t)
{
	char summary[200], note[200] = "";
	int rc;

	lm_exercise_summary(o->exercised, summary, sizeof(summary));
	if (profile != NULL && (rc = lm_guest_exercise_check(profile, o->exercised, &o->guest, note, sizeof(note))) < 0)
		return rc;
	char took[64] = "";

	/* The exercise's own time: in enable it ran in the round trip of the probes, so the step's
	 * own time is the verdict's, not the kernels'. */
	if (lm_report_exercise_seconds(o->exercised) >= 0)
		snprintf(took, sizeof(took), "; the exercise took %.2f s", lm_report_exercise_seconds(o->exercised));
	lm_step_add(ctx, o, "exercise", t, "%s%s%s%s", summary, took, note[0] ? "; " : "", note);
	return 0;
}

int lm_flow_step_exercise(lm_context *ctx, lm_ssh *ssh, const lm_shim_env *se, const lm_profile *profile,
    lm_vm_outcome *o)
{
	double t;
	int rc;

	if ((rc = lm_step_begin(ctx, o, "exercise", &t)) < 0)
		return rc;
	lm_report_free(o->exercised);
	o->exercised = NULL;
	if ((rc = lm_guest_exercise(ssh, se, &o->exercised)) < 0)
		return rc;
	return exercise_verdict(ctx, profile, o, t);
}

int lm_flow_step_exercised(lm_context *ctx, const lm_profile *profile, lm_vm_outcome *o)
{
	double t;
	int rc;

	if ((rc = lm_step_begin(ctx, o, "exercise", &t)) < 0)
		return rc;
	return exercise_verdict(ctx, profile, o, t);
}

static int probe_vm(lm_context *ctx, const char *vm, int exercise, lm_flow_result **out)
{
	lm_vm_lock *lock = NULL;
	lm_vm_manager *vmm = NULL;
	lm_ssh *ssh = NULL;
	lm_state *st = NULL;
	lm_shim_env se;
	lm_vm_record r;
	lm_vm_record fresh;
	lm_vm_outcome *o;
	double t;
	int rc;

	memset(&r, 0, sizeof(r));
	if ((rc = lm_flow_result_new(out)) < 0 || (rc = lm_flow_open_outcomes(*out, &vm, 1)) < 0)
		return rc;
	o = (*out)->vms[0];
	if ((rc = lm_vm_lock_take(&lock, ctx, o->vm, "probe", 0)) < 0 ||
	    (rc = lm_vm_manager_open(&vmm, ctx)) < 0 || (rc = lm_flow_open_enabled(ctx, vmm, o, &r, &ssh, &se)) < 0 ||
	    (rc = lm_step_begin(ctx, o, "probe", &t)) < 0 ||
	    (rc = lm_guest_probe(ssh, &se, 0, &o->stock, NULL, 0)) < 0 ||
	    (rc = lm_guest_probe(ssh, &se, 1, &o->shimmed, NULL, 0)) < 0) {
		lm_outcome_fail(ctx, o, rc);
		goto out;
	}
	snprintf(o->profile, sizeof(o->profile), "%s", r.profile_name);
	lm_workload_derive(o->stock, &o->stock_flags);
	lm_workload_derive(o->shimmed, &o->shimmed_flags);
	/* A Tart image's own shim: a third column, the answers it gives once enabled as its README says
	 * (Cirrus Labs' images install it without enabling it). */
	if (o->guest.tart_shim) {
		lm_shim_env tart;
		if (lm_shim_env_tart(&tart, &se) < 0 || lm_guest_probe(ssh, &tart, 1, &o->tart, NULL, 0) < 0)
			lm_log(ctx, LM_LOG_WARN, "%s: the Tart image's shim (%s) could not be probed: %s", o->vm,
			    LM_TART_SHIM_PATH, lm_error_last()->message);
	}
	lm_step_add(ctx, o, "probe", t, "stock and shimmed reports%s", o->tart != NULL ? ", and the Tart image's shim" : "");
	/* Run on demand and reported, not judged; without --exercise the last one recorded is shown. */
	if (exercise && (rc = lm_flow_step_exercise(ctx, ssh, &se, NULL, o)) < 0) {
		lm_outcome_fail(ctx, o, rc);
		goto out;
	}
	if (!exercise) {
		o->exercised = r.exercised;
		r.exercised = NULL;
	}
	/* The last probe is recorded when it can be; the answers stand either way. */
	if (lm_journal_open_rw(&st, ctx) == 0) {
		if (lm_vm_record_get(st, o->vm, &fresh) == 0 && fresh.known &&
		    lm_vm_record_set_probe(&fresh, lm_clock_epoch(), o->stock, o->shimmed, o->exercised) == 0 &&
		    lm_vm_record_put(st, &fresh) == 0)
			(void)lm_state_save(st);
		lm_vm_record_dispose(&fresh);
		lm_state_close(st);
	}
out:
	lm_vm_record_dispose(&r);
	lm_ssh_free(ssh);
	lm_vm_manager_free(vmm);
	lm_vm_lock_release(lock);
	return rc;
}

int lm_flow_probe(lm_context *ctx, const char *vm, lm_flow_result **out)
{
	return probe_vm(ctx, vm, 0, out);
}

int lm_flow_probe_exercise(lm_context *ctx, const char *vm, lm_flow_result **out)
{
	return probe_vm(ctx, vm, 1, out);
}

