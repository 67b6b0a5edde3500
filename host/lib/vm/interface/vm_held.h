/* Internal: paused and suspended VMs, for the flow's restart rule (docs/vm-managers.md, "Paused
 * and suspended VMs"). */
#ifndef LM_VM_HELD_H
#define LM_VM_HELD_H

/* 1 for a VM whose guest is kept, not running: UTM's "paused" (and "pausing", "resuming") and a
 * saved state -- Tart's "suspended" (state.vzvmsave), a UTM VM stopped with its state saved
 * (Data/vmstate), which the backend reports as "suspended". Starting such a VM resumes it: the
 * guest it had comes back with the GPU device its VM process was created with, so for the
 * preference it counts as running since before any change. lm_vm_stop stops it for real,
 * discarding the saved state. */
int lm_vm_status_held(const char *status);

#endif
