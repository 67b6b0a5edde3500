/* lume-metal status: the host preference and, per VM, what its record says and what its guest
 * shows now (bundle verified, restart pending, agents). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow_internal.h"
#include "vm_level.h"
#include "vm_gone.h"
#include "vm_process.h"
#include "guest_bundle.h"
#include "guest_machine.h"

#define LOCAL_FAILURE(rc) ((rc) == LM_ENOMEM || (rc) == LM_EIO)

static int status_one(lm_context *ctx, lm_vm_manager *vmm, const lm_host_pref_info *pref, lm_vm_outcome *o)
{
	lm_ssh *ssh = NULL;
	lm_bundle *b = NULL;
	lm_vm_record r;
	char current[128], why[512];
	int ok = 0, rc;

	if ((rc = lm_vm_record_load(ctx, o->vm, &r)) < 0)
		return lm_outcome_fail(ctx, o, rc);
	snprintf(o->profile, sizeof(o->profile), "%s", r.profile_name);
	snprintf(o->bundle_id, sizeof(o->bundle_id), "%s", r.bundle.id);
	o->already_enabled = r.known && r.status == LM_VM_STATUS_ENABLED;
	o->journal_status = r.known ? lm_vm_record_status_name(r.status) : "";
	o->pref_mode = r.pref_mode;
	o->pref_needed = r.pref_needed;
	o->stock = r.stock;
	o->shimmed = r.shimmed;
	o->exercised = r.exercised;
	r.stock = r.shimmed = r.exercised = NULL;
	if (o->stock != NULL)
		lm_workload_derive(o->stock, &o->stock_flags);
	if (o->shimmed != NULL)
		lm_workload_derive(o->shimmed, &o->shimmed_flags);
	o->guest = r.guest;
	if ((rc = lm_vm_get(vmm, o->vm, &o->info)) < 0) {
		int known = r.known, step = 0;
		char manager[32], said[2048];
		lm_vm_record_dispose(&r);
		snprintf(said, sizeof(said), "%s", lm_error_last()->message);
		/* Deleted since: listed as gone, and left for gc to forget -- status only reads (issue 50),
		 * so a second status says the same. A step of that which fails (out of memory asking) is
		 * the status's failure, with its own message. */
		if (rc == LM_ENOTFOUND && known && (step = lm_flow_journal_manager(ctx, o->vm, manager, sizeof(manager))) == 0 &&
		    (step = lm_vm_gone(vmm, o->vm, manager)) == 1) {
			lm_error_clear();
			o->already_enabled = 0;
			o->gone = 1;
			return lm_outcome_message(ctx, o, "%s: gone (its VM manager does not know it); what is "
			    "remembered of it is kept until it is forgotten", o->vm);
		}
		if (step < 0)
			return lm_outcome_fail(ctx, o, step);
		(void)lm_error_set(rc, "%s", said); /* not certainly gone: the manager's own answer */
		return lm_outcome_fail(ctx, o, rc);
	}
	if ((rc = lm_outcome_message(ctx, o, "%s: %s", o->vm, !r.known ? "not enabled" : r.status == LM_VM_STATUS_ROLLING_BACK ? "rolling back: "
	    "a rollback began and did not finish (its guest's files may be partly removed); the next rollback "
	    "finishes it" : lm_vm_record_status_name(r.status))) < 0) {
		lm_vm_record_dispose(&r); /* a status without its message is no status: failed, out of memory */
		return rc;
	}
	/* What cannot be asked is said in the message; what this host lacks fails the VM's status:
	 * memory, or a local file or socket it cannot open (too many open files: LM_EIO). A bundle not
	 * verified for want of memory is not an unverified bundle, nor is a guest this process could
	 * not reach "unreachable" (issue 49, 9). */
	rc = 0;
	if (strcmp(o->info.status, "running") == 0 && o->info.ip[0] != '\0' && o->info.ssh_available) {
		if ((rc = lm_flow_connect(ctx, o->vm, &o->info, &ssh)) == 0 &&
		    (rc = lm_guest_facts_read(ssh, &o->guest, current, sizeof(current))) == 0) {
			double process = 0, created = 0;
			/* Not for a VM enabled without the preference (never; auto that did not need it). Its
			 * process's start tells a VM restart from a guest reboot where its manager shows it; no
			 * process ran it before its files were created (vm_process.h). */
			if (r.pref_mode != LM_HOST_PREF_NEVER && lm_vm_record_uses_preference(&r) &&
			    (rc = lm_vm_process_started(vmm, o->vm, &process)) == 0 &&
			    (rc = lm_vm_created_at(vmm, o->vm, &created)) == 0)
				o->restart_pending = lm_vm_restart_needed(pref, o->guest.boot_time,
				    r.vm_started_at > created ? r.vm_started_at : created, process,
				    lm_context_options(ctx)->boot_margin);
			if (rc == 0 && r.known && strcmp(current, r.bundle.id) == 0 && (rc = lm_bundle_open(&b, ctx, &o->guest)) == 0 &&
			    strcmp(b->id, r.bundle.id) == 0 && ((rc = lm_guest_bundle_verify(ssh, &o->guest, b, &ok, why,
			    sizeof(why))) < 0 || !(o->bundle_verified = ok)) && !LOCAL_FAILURE(rc))
				lm_outcome_append(o, "; bundle not verified: %s", why);
		} else if (!LOCAL_FAILURE(rc)) {
			lm_outcome_append(o, "; guest unreachable: %s", lm_error_last()->message);
			lm_ssh_free(ssh);
			ssh = NULL;
		}
	}
	if (!LOCAL_FAILURE(rc) && (rc = lm_flow_agents_status(ssh, &r, o)) < 0 && !LOCAL_FAILURE(rc))
		lm_outcome_append(o, "; agents: %s", lm_error_last()->message);
	lm_bundle_free(b);
	lm_ssh_free(ssh);
	lm_vm_record_dispose(&r);
	return LOCAL_FAILURE(rc) ? lm_outcome_fail(ctx, o, rc) : 0;
}

int lm_flow_status(lm_context *ctx, const char *const *vms, size_t n, lm_flow_result **out)
{
	lm_flow_result *result;
	lm_vm_manager *vmm = NULL;
	size_t i;
	int rc;

	if ((rc = lm_flow_result_new(out)) < 0)
		return rc;
	result = *out;
	if ((rc = lm_host_pref_status(ctx, NULL, &result->pref)) < 0 ||
	    (rc = lm_host_pref_byhost_status(ctx, NULL, &result->byhost)) < 0)
		return rc;
	rc = n > 0 ? lm_flow_open_outcomes(result, vms, n) : lm_flow_open_known(ctx, result);
	if (rc < 0 || result->count == 0)
		return rc;
	if ((rc = lm_vm_manager_open(&vmm, ctx)) < 0)
		return lm_flow_fail_all(ctx, result, rc);
	for (i = 0; i < result->count; i++)
		(void)status_one(ctx, vmm, &result->pref, result->vms[i]);
	lm_vm_manager_free(vmm);
	return 0;
}
