/* Internal: when a running VM's process started, for the flow's restart rule (record/level.c,
 * docs/lume-metal.md "When a VM is restarted"). Virtualization.framework reads the host
 * preference when the VM process starts; a guest reboot (`lume restart`, `lume shutdown`, a guest
 * `sudo reboot`, a macOS update) boots a new guest kernel in the same process, so the guest's boot
 * time alone cannot tell a reboot from a restart. */
#ifndef LM_VM_PROCESS_H
#define LM_VM_PROCESS_H

#include "lume-metal/sys/vm.h"

/* No VM manager runs the VM (--vm-manager none): nothing can show its process, nor restart it;
 * the guest's boot time is all there is (lm_vm_level_of). */
#define LM_VM_PROCESS_NO_MANAGER (-1.0)

/* *at: when the process that runs the running VM `name` started (epoch, with fractions), as the
 * host's process table says: Tart's `tart run` holding config.json's lock, Lume's `lume run`
 * holding config.json. 0 when its manager does not let us see it (Lume's server runs every VM it
 * started in one process that predates them; UTM.app likewise; another user's process),
 * LM_VM_PROCESS_NO_MANAGER without a manager. Call after lm_vm_get of the VM (the automatic
 * choice knows its manager then). < 0 only when out of memory. */
int lm_vm_process_started(lm_vm_manager *vmm, const char *name, double *at);

/* *at: when the VM's own files were created (epoch), where its manager's store is on this host:
 * Lume's LOCATION/NAME directory, its birth time (a `lume clone` for a CI job makes a new one).
 * No process can have run the VM before its files existed, so a VM created after the preference
 * changed read the new value whatever ran it -- Lume's server included, whose process shows
 * nothing. 0 when not known (another manager, a file system without birth times). < 0 only when
 * out of memory. */
int lm_vm_created_at(lm_vm_manager *vmm, const char *name, double *at);

#endif
