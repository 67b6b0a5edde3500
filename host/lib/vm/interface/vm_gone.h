/* Internal: the VM manager's answer to "does this VM still exist?", for the flow's forgetting of
 * deleted VMs (docs/state-format.md, "Gone VMs"). */
#ifndef LM_VM_GONE_H
#define LM_VM_GONE_H

#include "lume-metal/sys/vm.h"

/* 1 only when the VM certainly does not exist: every manager asked (the forced one, or every one
 * found automatically) answered that it does not know `name`, none failed to answer, and the one
 * that ran it (`manager`: "lume-api", "tart"... as the journal recorded it; NULL or "" unknown)
 * was among them. A manager that cannot be reached, or is not there at all, proves nothing. A
 * manager whose own files hold the VM (Lume: its three files in a storage location) is not asked:
 * 0 at once, without the `get` that costs Lume a 2-second port check of a silent guest. Memory
 * that runs out while asking is no answer: LM_ENOMEM, said. */
int lm_vm_gone(lm_vm_manager *vmm, const char *name, const char *manager);

#endif
