/* An enabled VM opened for work (probe, run, agent, bench): its record, the VM running, its guest
 * reached over SSH and its installed bundle the one the record names. */
#include <stdio.h>
#include <string.h>

#include "flow_internal.h"
#include "ssh_pins.h"

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
