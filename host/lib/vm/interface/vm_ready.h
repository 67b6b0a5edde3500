/* Internal: waiting for a VM that was just started at the address it had before. A guest that
 * boots again keeps its DHCP lease, so Lume gives that address while the guest is still silent and
 * each question then waits out Lume's 2-second check of port 22 (shared/reference/lume.md): with
 * the address known, its port 22 is tried first and the manager asked once it answers. */
#ifndef LM_VM_READY_H
#define LM_VM_READY_H

#include "lume-metal/sys/vm.h"

/* lm_vm_wait_ready, trying `address` (the VM's IPv4 address before its restart; NULL or not an
 * IPv4 address: none) first. The manager's answer still decides: the VM is ready when it says so. */
int lm_vm_wait_ready_at(lm_vm_manager *vmm, const char *name, double timeout, const char *address,
    lm_vm_info *out);

#endif
