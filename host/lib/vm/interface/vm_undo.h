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
/* Undo a start this manager launched (lm_vm_start, one that succeeded or one that failed or was
 * canceled after it launched the VM: lm_vm_start_launched): the VM stopped as lm_vm_stop_undo does,
 * then the process that start spawned to run it (`tart run`, an old `lume run`) waited for until it
 * has ended -- sent SIGINT, as its manager's own stop does, and SIGKILL after a grace, when it is
 * still there. `said` gets what became of that process ("" when the start spawned none). */
int lm_vm_launch_undo(lm_vm_manager *vmm, const char *name, char *said, size_t cap);

#endif
