/* Internal (for the modules that depend on vm): why lume-metal's own probe of a VM's port 22
 * failed, for the checks that report it (doctor). */
#ifndef LM_VM_PROBE_H
#define LM_VM_PROBE_H

#include "lume-metal/sys/vm.h"

/* Why the port-22 probe of the manager's last lm_vm_get failed (an errno value: ECONNREFUSED,
 * EHOSTUNREACH, ETIMEDOUT...), 0 when it answered, there was no address, or the manager probes
 * it itself (Lume). Words for it: lm_connect_error_words (net_words.h). */
int lm_vm_ssh_probe_error(const lm_vm_manager *vmm);

#endif
