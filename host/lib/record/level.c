/* Which value of the host preference a running VM got: the one restart rule behind enable's
 * restarts, status's "restart pending" and rollback's restarts (docs/lume-metal.md, "When a VM
 * is restarted"). */
#include "vm_level.h"

lm_vm_level lm_vm_level_of(double changed_at, double boot_time, double started_at, double process, double margin)
{
	if (changed_at <= 0)
		return LM_VM_LEVEL_UNSURE;
	/* Started by us after the change: its process can only have read the new value. */
	if (started_at > changed_at)
		return LM_VM_LEVEL_AFTER;
	/* The process starts before the kernel boots: a kernel that booted before the change belongs
	 * to a process that started (and read the preference) before it too. */
	if (boot_time > 0 && boot_time < changed_at)
		return LM_VM_LEVEL_BEFORE;
	if (process > 0) {
		/* The VM's own process, as the host's process table shows it: started after the change,
		 * it read the new value, however its guest has rebooted since. */
		if (process > changed_at)
			return LM_VM_LEVEL_AFTER;
		/* Started before: it reads the preference on its way to booting the first kernel, within
		 * the margin of its start. A guest kernel booted after the change is a guest reboot in
		 * the same process (`lume restart`, `sudo reboot`, a macOS update), not a VM restart. */
		return process + margin < changed_at ? LM_VM_LEVEL_BEFORE : LM_VM_LEVEL_UNSURE;
	}
	/* No VM manager: nothing shows the VM's process, nor restarts it but the user, who was told
	 * to restart the VM, not to reboot its guest. A kernel that booted well after the change is
	 * taken for that restart: there is no other evidence to go by (docs/lume-metal.md). */
	if (process < 0 && boot_time > changed_at + margin)
		return LM_VM_LEVEL_AFTER;
	/* A manager that does not show the VM's process (Lume's server, UTM.app): a boot after the
	 * change may be a guest reboot in a process that started long before it. */
	return LM_VM_LEVEL_UNSURE;
}

int lm_vm_restart_needed(const lm_host_pref_info *pref, double boot_time, double started_at, double process,
    double margin)
{
	return pref->recorded &&
	    lm_vm_level_of(pref->changed_at, boot_time, started_at, process, margin) != LM_VM_LEVEL_AFTER;
}

int lm_vm_at_stock_level(const lm_host_pref_info *pref, double boot_time, double started_at, double process,
    double margin)
{
	return !pref->matches || (pref->recorded &&
	    lm_vm_level_of(pref->changed_at, boot_time, started_at, process, margin) == LM_VM_LEVEL_BEFORE);
}

const char *lm_vm_restart_reason(int held, double boot_time, double process, double changed_at, double seen_at)
{
	/* UTM's start resumes a paused VM or restores a saved state, `tart run` restores a suspended
	 * VM's snapshot: the guest comes back with the GPU device its VM was created with. */
	if (held)
		return "resuming it keeps the GPU level it was created with: stopped for real, its saved state "
		    "discarded, and booted afresh";
	if (boot_time <= 0 && changed_at > seen_at)
		return "the VM was already running when the preference changed";
	if (boot_time > 0 && boot_time < changed_at)
		return "the guest booted before the preference changed";
	if (process > 0 && boot_time > 0)
		return "its VM process started before the preference changed; its guest has rebooted since, and a "
		       "guest reboot is not a VM restart";
	if (process > 0)
		return "its VM process started before the preference changed";
	if (boot_time <= 0)
		return "the guest's boot time is unknown";
	if (process < 0)
		return "the guest booted within the boot margin after the preference changed: its VM may have "
		       "started before the change";
	return "the guest booted after the preference changed, but its VM process's start is not visible with "
	       "this VM manager: a guest reboot (`lume restart`, `sudo reboot`, a macOS update) is not a VM restart";
}
