/* Which value of the host preference a running VM got: the one restart rule behind enable's
 * restarts, status's "restart pending" and rollback's restarts (docs/lume-metal.md, "When a VM
 * is restarted"). */
#include "record.h"

lm_vm_level lm_vm_level_of(double changed_at, double boot_time, double started_at, double margin)
{
	if (changed_at <= 0)
		return LM_VM_LEVEL_UNSURE;
	/* Started by us after the change: its process can only have read the new value. */
	if (started_at > changed_at)
		return LM_VM_LEVEL_AFTER;
	if (boot_time <= 0)
		return LM_VM_LEVEL_UNSURE;
	/* The process starts before the kernel boots: a kernel that booted before the change belongs
	 * to a process that started before it too. */
	if (boot_time < changed_at)
		return LM_VM_LEVEL_BEFORE;
	/* After the change, but its process may have started up to `margin` earlier than its kernel. */
	if (boot_time > changed_at + margin)
		return LM_VM_LEVEL_AFTER;
	return LM_VM_LEVEL_UNSURE;
}

int lm_vm_restart_needed(const lm_host_pref_info *pref, double boot_time, double started_at, double margin)
{
	return pref->recorded && lm_vm_level_of(pref->changed_at, boot_time, started_at, margin) != LM_VM_LEVEL_AFTER;
}

int lm_vm_at_stock_level(const lm_host_pref_info *pref, double boot_time, double started_at, double margin)
{
	return !pref->matches ||
	    (pref->recorded && lm_vm_level_of(pref->changed_at, boot_time, started_at, margin) == LM_VM_LEVEL_BEFORE);
}

const char *lm_vm_restart_reason(int held, double boot_time, double changed_at, double seen_at)
{
	/* UTM's start resumes a paused VM or restores a saved state, `tart run` restores a suspended
	 * VM's snapshot: the guest comes back with the GPU device its VM was created with. */
	if (held)
		return "resuming it keeps the GPU level it was created with: stopped for real, its saved state "
		    "discarded, and booted afresh";
	if (boot_time <= 0 && changed_at > seen_at)
		return "the VM was already running when the preference changed";
	if (boot_time <= 0)
		return "the guest's boot time is unknown";
	if (boot_time < changed_at)
		return "the guest booted before the preference changed";
	return "the guest booted within the boot margin after the preference changed: its VM may have "
	       "started before the change";
}
