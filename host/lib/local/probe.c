/* lume-metal local probe [--exercise] [--require-exercise]: this machine's answers stock and
 * shimmed, whether it looks like a VM, and whether the kernels the answers turn on run. */
#include <stdio.h>
#include <string.h>

#include "local_internal.h"
#include "guest_shim.h"

/* Whether the profile's kernels ran (reported always; required with --require-exercise). */
static int kernels_verdict(lm_local_machine *m, unsigned flags)
{
	lm_vm_outcome *o = m->res->machine;
	int rc;

	if ((flags & LM_LOCAL_REQUIRE_EXERCISE) != 0)
		return lm_flow_step_exercise(m->ctx, m->ssh, &m->se, m->profile, o);
	if ((rc = lm_flow_step_exercise(m->ctx, m->ssh, &m->se, NULL, o)) < 0)
		return rc;
	rc = lm_guest_exercise_check(m->profile, o->exercised, &o->guest, m->res->kernels_note,
	    sizeof(m->res->kernels_note));
	m->res->kernels_ran = rc == 0;
	if (rc < 0)
		snprintf(m->res->kernels_note, sizeof(m->res->kernels_note), "%s", lm_error_last()->message);
	return 0;
}

int lm_local_probe(lm_context *ctx, const lm_profile *profile, unsigned flags, lm_local_result **out)
{
	lm_local_machine m;
	lm_vm_outcome *o;
	double t;
	int rc;

	if ((rc = lm_local_begin(&m, ctx, profile, "probe", &t, out)) < 0)
		return lm_local_close(&m, rc);
	o = m.res->machine;
	if ((rc = lm_guest_probe(m.ssh, &m.se, 1, &o->shimmed, NULL, 0)) < 0)
		return lm_local_close(&m, rc);
	lm_workload_derive(o->shimmed, &o->shimmed_flags);
	m.res->answers_hold = lm_report_shim_active(o->shimmed) && lm_profile_check(m.profile, o->stock, o->shimmed) == 0;
	lm_step_add(ctx, o, "probe", t, "stock %s; shimmed answers %s; %s", lm_report_device(o->stock),
	    m.res->answers_hold ? "hold" : "do not hold", m.res->looks_like_vm == 1 ? "this machine looks like a VM" :
	    m.res->looks_like_vm == 0 ? "this machine does not look like a VM" : "whether this machine is a VM is unknown");
	if ((flags & (LM_LOCAL_EXERCISE | LM_LOCAL_REQUIRE_EXERCISE)) != 0 && (rc = kernels_verdict(&m, flags)) < 0) {
		/* Required and not run: the kernels' own verdict, which a CI job tells from other failures. */
		if (rc == LM_ENOTPROVEN)
			m.res->kernels_ran = 0;
		return lm_local_close(&m, rc);
	}
	if ((flags & LM_LOCAL_REQUIRE_EXERCISE) != 0)
		m.res->kernels_ran = 1;
	return lm_local_close(&m, 0);
}
