/* Internal: which value of the host preference a running VM got, the one restart rule behind
 * enable's restarts, status's "restart pending" and rollback's (level.c; docs/lume-metal.md, "When
 * a VM is restarted"). */
#ifndef LUME_METAL_VM_LEVEL_H
#define LUME_METAL_VM_LEVEL_H

#include "lume-metal/prefs.h"

/* The host side reads it when the VM process starts, which is some seconds (firmware start-up)
 * before the guest kernel boots. A guest reboot (Lume 0.5's `lume restart` and `lume shutdown`,
 * which run `shutdown -r`/`-h` in the guest over SSH, trycua/cua Commands/GuestPower.swift; a
 * guest `sudo reboot`; a macOS update) boots a new kernel in the same VM process: a boot after
 * the change says nothing of the process. What we can see: the VM process's start where its
 * manager shows it (vm_process.h), the kernel's boot time as a lower bound, and what this tool
 * started itself. See docs/lume-metal.md, "When a VM is restarted". */
typedef enum {
	LM_VM_LEVEL_UNSURE = 0, /* it may have read either value */
	LM_VM_LEVEL_BEFORE,     /* its process started, or its guest kernel booted, before the change:
	                           it read the old value */
	LM_VM_LEVEL_AFTER       /* this tool started it after the change, or its process started
	                           after it: it read the new value */
} lm_vm_level;

/* The one rule. changed_at: when the preference changed (0: unknown); boot_time: the guest's
 * kern.boottime (0: unknown); started_at: when this tool last asked for the VM to be started
 * (the record's vm_started_at; 0: never); process: when the VM's process started as the host
 * sees it (lm_vm_process_started: 0 not visible; below 0, LM_VM_PROCESS_NO_MANAGER: no VM manager,
 * the boot time is all there is); margin: seconds a VM may take from its process's start to its
 * kernel's boot (lm_options.boot_margin), within which it reads the preference. All epoch
 * seconds with fractions. */
lm_vm_level lm_vm_level_of(double changed_at, double boot_time, double started_at, double process, double margin);

/* enable and status: a running VM must be restarted unless it certainly read the preference as
 * this tool set it (pref->recorded: this tool changed it). Errs toward restarting. */
int lm_vm_restart_needed(const lm_host_pref_info *pref, double boot_time, double started_at, double process,
    double margin);

/* A VM proven now runs at the stock level: the preference does not hold the profile's value, or
 * its recorded change came after the VM read it (LM_VM_LEVEL_BEFORE). Anything else -- the
 * preference in effect, or not known to be -- is not the stock level. */
int lm_vm_at_stock_level(const lm_host_pref_info *pref, double boot_time, double started_at, double process,
    double margin);

/* Why enable restarts a running VM, in words for its step: held (paused or suspended), the guest's
 * boot time (0: unknown), its process's start (as lm_vm_level_of's), the preference's change and
 * when the manager said the VM was running. */
const char *lm_vm_restart_reason(int held, double boot_time, double process, double changed_at, double seen_at);

#endif
