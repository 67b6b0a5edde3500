/* Internal: the local transport (host/lib/ssh/local.c) -- an lm_ssh whose every call (exec, upload,
 * sha256, remove, stat, listing and reading) is served on the machine lume-metal runs on, for
 * `lume-metal local`. Commands run as the guest's sshd would run them: the account's login shell
 * from the password database, `SHELL -c COMMAND`, in the home directory, stdin /dev/null, a process
 * group of its own; the environment is the caller's less the guest password and the shim's
 * variables (DYLD_INSERT_LIBRARIES, LD_PRELOAD, LUME_METAL_*, TART_METAL_*), so that "stock" is
 * stock even in a CI step that exported the shim's environment. */
#ifndef LM_SSH_LOCAL_H
#define LM_SSH_LOCAL_H

#include "lume-metal/ssh.h"

/* A session on this machine: the context's command timeout and should_cancel apply as over SSH;
 * lm_ssh_free() frees it. */
int lm_ssh_open_local(lm_ssh **out, lm_context *ctx);
/* The local session's shell and environment (NULL for an SSH session): what `local run` starts
 * its workload with. */
const char *lm_ssh_local_shell(const lm_ssh *ssh);
char *const *lm_ssh_local_environment(const lm_ssh *ssh);

#endif
