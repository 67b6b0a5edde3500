/* Internal: the SSH transport's interface to the flow — connecting to a VM whose identity is
 * known, and the host-key pins as a set (docs/security.md, "Host keys"). */
#ifndef LM_SSH_PINS_H
#define LM_SSH_PINS_H

#include "lume-metal/sys/ssh.h"

/* lm_ssh_connect_as() for a VM whose manager told its identity (lm_vm_info.vm_id; "" or NULL
 * when unknown). The pin records the identity; a pin of another identity belongs to a VM that is
 * gone: it is replaced, with a warning, instead of refusing the new VM's key. The same identity
 * (or an unknown one) with another key is refused as always. */
int lm_ssh_connect_vm(lm_ssh **out, lm_context *ctx, const char *vm_name, const char *address, int port,
    const char *account, const char *vm_id);

/* The names of the VMs known_hosts pins, NULL-terminated (NULL when none; free with
 * lm_strv_free). Lines that cannot be read are not names. */
int lm_ssh_pinned_vms(lm_context *ctx, char ***names);

/* Forget the pins of the `count` VMs in `sorted` (lm_strv_sort order; names already checked)
 * with one read and one write of known_hosts under its lock; removed[i] (when not NULL) is set
 * for each name that had one. With dry_run, only says so: nothing is written. The number of
 * lines removed (or that would be). */
int lm_ssh_forget_hosts(lm_context *ctx, char *const *sorted, size_t count, unsigned char *removed, int dry_run);

#endif
