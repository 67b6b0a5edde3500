/* Internal: a VM stopped or started by an undo. Every wait of the VM manager -- its HTTP calls, its
 * child processes, its polls for a VM's state -- ends within a second with LM_ECANCELED once the
 * context's should_cancel asks (lm_context_check_cancel); an undo's own steps must not, or a
 * canceled command could not give back what it changed. These run with should_cancel not asked
 * (their timeouts still bound them; a second signal ends the tool at once). */
#ifndef LM_VM_UNDO_H
#define LM_VM_UNDO_H

#include "lume-metal/sys/vm.h"

int lm_vm_stop_undo(lm_vm_manager *vmm, const char *name);
int lm_vm_start_undo(lm_vm_manager *vmm, const char *name);

#endif
