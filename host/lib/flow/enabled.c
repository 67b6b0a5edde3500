/* An enabled VM opened for work (probe, run, agent, bench): its record, the VM running, its guest
 * reached over SSH and its installed bundle the one the record names. */
#include <stdio.h>
#include <string.h>

#include "flow_internal.h"
#include "ssh_pins.h"
#include "guest_codesign.h"
#include "guest_machine.h"
#include "guest_shim.h"
#include "guest_workload.h"

int lm_flow_connect(lm_context *ctx, const char *vm, const lm_vm_info *info, lm_ssh **out)
{
	if (info->ip[0] == '\0')
		return lm_error_set(LM_ERROR, "%s has no IP address (is it running?)", vm);
	return lm_ssh_connect_vm(out, ctx, vm, info->ip, 22, info->account, info->vm_id);
}

int lm_flow_open_enabled(lm_context *ctx, lm_vm_manager *vmm, lm_vm_outcome *o, lm_vm_record *r, lm_ssh **ssh,
    lm_shim_env *se)
{
	char current[128];
	int rc;

	if ((rc = lm_vm_record_load(ctx, o->vm, r)) < 0)
		return rc;
	if (!r->known || r->status != LM_VM_STATUS_ENABLED || r->profile == NULL)
		return lm_error_set(LM_ENOTENABLED, "%s is not enabled", o->vm);
	if ((rc = lm_vm_get(vmm, o->vm, &o->info)) < 0)
		return rc;
	/* Not "guest unsupported": nothing is wrong with the guest, it is just not running. */
	if (strcmp(o->info.status, "running") != 0)
		return lm_error_set(LM_ENOTRUNNING, "%s is %s, not running", o->vm, o->info.status);
	if ((rc = lm_flow_connect(ctx, o->vm, &o->info, ssh)) < 0 ||
	    (rc = lm_guest_facts_read(*ssh, &o->guest, current, sizeof(current))) < 0)
		return rc;
	if (strcmp(current, r->bundle.id) != 0)
		return lm_error_set(LM_ECORRUPT, "%s: the installed bundle is %s, the state says %s", o->vm,
		    current[0] ? current : "missing", r->bundle.id);
	return lm_shim_env_make(se, &o->guest, r->bundle.injection, r->bundle.shim, r->bundle.probe, r->profile);
}

int lm_flow_workload_check(lm_context *ctx, lm_ssh *ssh, lm_shim_env *se, const lm_vm_outcome *o,
    const char *const *argv, size_t argc, const lm_workload_options *opts, const char *copy_name,
    lm_flow_workload *w)
{
	char msg[4 * PATH_MAX];
	lm_resign_copy c;
	size_t i;
	int rc, own;

	memset(w, 0, sizeof(*w));
	if ((rc = lm_guest_run_target(ssh, se, argv, argc, &w->target)) < 0)
		return rc;
	i = lm_run_program_index(argv, argc, &own);
	if (i < argc && lm_workload_resign_copy(opts) && w->target.program[0] != '\0') {
		if ((rc = lm_guest_resign_workload(ssh, se, o->guest.home, copy_name, argv, argc, &w->target, &c)) < 0)
			return lm_error_prefix("%s: ", o->vm);
		snprintf(w->copy, sizeof(w->copy), "%s", c.program);
		lm_log(ctx, LM_LOG_INFO, "%s: --resign-copy: %s", o->vm, c.said);
	}
	if (i < argc && lm_sip_warning(&o->guest, argv[i], &w->target, msg, sizeof(msg)))
		lm_log(ctx, LM_LOG_WARN, "%s: %s", o->vm, msg);
	for (size_t k = 0; k < w->target.nsiblings; k++)
		if (lm_codesign_sibling_warning(&w->target, k, msg, sizeof(msg)))
			lm_log(ctx, LM_LOG_WARN, "%s: %s", o->vm, msg);
	if (i < argc && lm_codesign_refusal(argv[i], &w->target, msg, sizeof(msg))) {
		if (opts == NULL || !opts->run_hardened_stock)
			return lm_error_set(LM_EHARDENED, "%s: %s", o->vm, msg);
		lm_log(ctx, LM_LOG_WARN, "%s: %s; started all the same, as asked: it runs stock", o->vm, msg);
		w->hardened = 1;
	} else if (i < argc && lm_codesign_warning(argv[i], &w->target, msg, sizeof(msg))) {
		lm_log(ctx, LM_LOG_WARN, "%s: %s", o->vm, msg);
	}
	/* The user's own LUME_METAL_INHERIT wins: nothing of ours beside it. */
	if (own) {
		w->inherit = -1;
		return 0;
	}
	/* The shim decides at each spawn, from what the guest is (docs/guest.md): no LUME_METAL_INHERIT,
	 * which would override that. Children keep the shim; the reason says when protected ones
	 * start without it. */
	(void)lm_children_policy(&o->guest, w->target.shim_arm64e, w->inherit_reason, sizeof(w->inherit_reason));
	w->inherit = 1;
	lm_shim_env_guest(se, o->guest.sip, w->target.shim_arm64e);
	return lm_shim_env_workload(se, NULL, w->inherit_reason, NULL);
}
