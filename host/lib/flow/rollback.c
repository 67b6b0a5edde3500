/* lume-metal rollback: guest files gone, the VM forgotten, and — when no enabled VM is left —
 * the host preference exactly as it was, with running VMs restarted off the unlocked level. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow_internal.h"
#include "prefs_internal.h"

/* Reach the guest to remove its files. A stopped VM is started for it and stopped again, so
 * that it is left as it was found. */
static int remove_guest_files(lm_context *ctx, lm_vm_manager *vmm, lm_vm_outcome *o)
{
	const lm_options *opts = lm_context_options(ctx);
	lm_ssh *ssh = NULL;
	lm_guest_facts facts;
	double t;
	int was_running, rc;

	if ((rc = lm_step_begin(ctx, o, "guest-files", &t)) < 0)
		return rc;
	if ((rc = lm_vm_get(vmm, o->vm, &o->info)) < 0)
		return rc;
	was_running = strcmp(o->info.status, "running") == 0;
	if (opts->dry_run) {
		lm_step_add(ctx, o, "guest-files", t, "would remove ~/%s%s", LM_GUEST_BASE,
		    was_running ? "" : " (starting the VM for it, then stopping it again)");
		return 0;
	}
	if (!was_running) {
		if ((rc = lm_vm_start(vmm, o->vm)) < 0)
			return rc;
		o->started = 1;
	}
	if ((rc = lm_vm_wait_ready(vmm, o->vm, opts->ready_timeout, &o->info)) < 0 ||
	    (rc = lm_flow_connect(ctx, o->vm, &o->info, &ssh)) < 0 ||
	    (rc = lm_guest_facts_read(ssh, &facts, NULL, 0)) < 0 ||
	    (rc = lm_guest_remove_all(ssh, &facts)) < 0)
		goto out;
	o->guest = facts;
	lm_step_add(ctx, o, "guest-files", t, "removed ~/%s", LM_GUEST_BASE);
out:
	lm_ssh_free(ssh);
	if (!was_running && o->started) {
		if (lm_vm_stop(vmm, o->vm) < 0 && rc == 0)
			rc = lm_error_last()->code;
	}
	return rc;
}

static int rollback_one(lm_context *ctx, lm_vm_manager *vmm, lm_flow_result *res, lm_vm_outcome *o)
{
	const lm_options *opts = lm_context_options(ctx);
	lm_state *st = NULL;
	lm_host_pref_info restored;
	double t;
	int known, rc;

	if ((rc = lm_state_open(&st, ctx)) < 0)
		return lm_outcome_fail(ctx, o, rc);
	known = lm_state_vm(st, o->vm, 0) != NULL;
	lm_state_close(st);
	if (!known) {
		lm_outcome_message(o, "%s: was never enabled, nothing to roll back", o->vm);
		o->already_enabled = 0;
		return 0;
	}
	if ((rc = remove_guest_files(ctx, vmm, o)) < 0) {
		if (rc != LM_ENOTFOUND || lm_vm_get(vmm, o->vm, &o->info) != LM_ENOTFOUND)
			return lm_outcome_fail(ctx, o, rc);
		/* The VM itself is gone: nothing left in a guest; forget it. */
		lm_step_add(ctx, o, "guest-files", lm_clock_epoch(), "the VM no longer exists: nothing to remove");
	}
	lm_flow_test_kill_point("rollback-after-guest");
	if ((rc = lm_step_begin(ctx, o, "host-preference", &t)) < 0)
		return lm_outcome_fail(ctx, o, rc);
	if ((rc = lm_state_open(&st, ctx)) < 0)
		return lm_outcome_fail(ctx, o, rc);
	if (!opts->dry_run)
		cJSON_DeleteItemFromObjectCaseSensitive(lm_state_vms(st), o->vm);
	if (lm_state_live_vms(st, o->vm, NULL, 0) == 0) {
		lm_host_pref_info before;
		if ((rc = lm_host_pref_status_locked(st, NULL, &before)) == 0 && before.recorded) {
			if ((rc = lm_host_pref_disable_locked(st, &restored)) < 0) {
				lm_state_close(st);
				return lm_outcome_fail(ctx, o, rc);
			}
			res->pref = restored;
			res->pref.changed_at = before.changed_at; /* when the unlocked level began */
			res->pref_restored = 1;
			lm_step_add(ctx, o, "host-preference", t, "%s to %s", opts->dry_run ? "would restore" : "restored",
			    before.original);
		} else {
			lm_step_add(ctx, o, "host-preference", t, "no change of lume-metal's to restore");
		}
	} else {
		lm_step_add(ctx, o, "host-preference", t, "kept: other VMs are still enabled");
	}
	if (!opts->dry_run && (rc = lm_state_save(st)) < 0) {
		lm_state_close(st);
		return lm_outcome_fail(ctx, o, rc);
	}
	lm_state_close(st);
	lm_outcome_message(o, "%s: %s", o->vm, opts->dry_run ? "would be rolled back" : "rolled back");
	return 0;
}

/* After the preference is restored, running VMs that booted with it still run unlocked. */
static void restart_unlocked(lm_context *ctx, lm_vm_manager *vmm, lm_flow_result *res, double changed_at)
{
	lm_vm_info *list = NULL;
	size_t count = 0, i;

	if (lm_vm_list(vmm, &list, &count) < 0) {
		lm_log(ctx, LM_LOG_WARN, "could not list VMs to restart them: %s", lm_error_last()->message);
		return;
	}
	for (i = 0; i < count; i++) {
		lm_ssh *ssh = NULL;
		lm_guest_facts facts;
		double t = lm_clock_epoch();

		if (strcmp(list[i].status, "running") != 0 || list[i].ip[0] == '\0')
			continue;
		if (lm_flow_connect(ctx, list[i].name, &list[i], &ssh) < 0 ||
		    lm_guest_facts_read(ssh, &facts, NULL, 0) < 0) {
			lm_log(ctx, LM_LOG_WARN, "%s: cannot tell whether it still runs at the unlocked level (%s); "
			    "it was not restarted", list[i].name, lm_error_last()->message);
			lm_ssh_free(ssh);
			continue;
		}
		lm_ssh_free(ssh);
		if (lm_booted_before(facts.boot_time, changed_at))
			continue; /* booted before the change: stock level already */
		if (lm_context_options(ctx)->dry_run) {
			lm_log(ctx, LM_LOG_INFO, "would restart %s (booted with the unlocked level)", list[i].name);
			continue;
		}
		if (lm_vm_stop(vmm, list[i].name) < 0 || lm_vm_start(vmm, list[i].name) < 0 ||
		    lm_vm_wait_ready(vmm, list[i].name, lm_context_options(ctx)->ready_timeout, NULL) < 0) {
			lm_log(ctx, LM_LOG_WARN, "%s: restart failed: %s", list[i].name, lm_error_last()->message);
			continue;
		}
		for (size_t k = 0; k < res->count; k++)
			if (strcmp(res->vms[k].vm, list[i].name) == 0) {
				res->vms[k].restarted = 1;
				lm_step_add(ctx, &res->vms[k], "restart", t, "restarted off the unlocked level");
			}
		lm_log(ctx, LM_LOG_INFO, "%s restarted: it had booted with the unlocked level (%.1f s)", list[i].name,
		    lm_clock_epoch() - t);
	}
	lm_free(list);
}

int lm_flow_rollback(lm_context *ctx, const char *const *vms, size_t n, int all, int restart,
    lm_flow_result *result)
{
	lm_vm_manager *vmm = NULL;
	lm_state *st = NULL;
	double t = lm_clock_epoch();
	size_t i;
	int rc;

	memset(result, 0, sizeof(*result));
	if (all) {
		rc = lm_flow_open_known(ctx, result);
	} else {
		if (n == 0)
			return lm_error_set(LM_EINVALID, "rollback: no VM named and `all` not set");
		rc = lm_flow_open_outcomes(result, vms, n);
	}
	if (rc < 0)
		return rc;
	if ((rc = lm_vm_manager_open(&vmm, ctx)) < 0)
		return lm_flow_fail_all(ctx, result, rc);
	for (i = 0; i < result->count; i++)
		(void)rollback_one(ctx, vmm, result, &result->vms[i]);
	if (all && result->count == 0) {
		/* Nothing enabled, but a recorded preference (e.g. left by a crash) still goes back. */
		lm_host_pref_info before;
		if (lm_state_open(&st, ctx) == 0) {
			if (lm_host_pref_status_locked(st, NULL, &before) == 0 && before.recorded &&
			    lm_state_live_vms(st, NULL, NULL, 0) == 0 && lm_host_pref_disable_locked(st, &result->pref) == 0) {
				result->pref_restored = 1;
				result->pref.changed_at = before.changed_at;
			}
			lm_state_close(st);
		}
	}
	if (result->pref_restored && restart)
		restart_unlocked(ctx, vmm, result, result->pref.changed_at);
	lm_vm_manager_free(vmm);
	if (!result->pref_restored && lm_host_pref_status(ctx, NULL, &result->pref) < 0)
		lm_log(ctx, LM_LOG_WARN, "could not read the host preference: %s", lm_error_last()->message);
	result->seconds = lm_clock_epoch() - t;
	return lm_flow_summary_rc(result);
}
