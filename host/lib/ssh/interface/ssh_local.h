/* Internal: the local transport (host/lib/ssh/local.c) -- an lm_ssh whose every call (exec, upload,
 * sha256, remove, stat, listing and reading) is served on the machine lume-metal runs on, for
 * `lume-metal local`. Commands run as the guest's sshd would run them: the account's login shell
 * from the password database, `SHELL -c COMMAND`, in the home directory, stdin /dev/null, a process
 * group of its own; the environment is the caller's less the guest password and the shim's
 * variables (DYLD_INSERT_LIBRARIES, LD_PRELOAD, LUME_METAL_*, TART_METAL_*), so that "stock" is
 * stock even in a CI step that exported the shim's environment. */
#ifndef LM_SSH_LOCAL_H
#define LM_SSH_LOCAL_H

#include <sys/types.h>

#include "lume-metal/sys/ssh.h"

/* A session on this machine: the context's command timeout and should_cancel apply as over SSH;
 * lm_ssh_free() frees it. ctx NULL: a session for the file calls alone (`local env` verifying the
 * installed bundle), in which a command is refused. */
int lm_ssh_open_local(lm_ssh **out, lm_context *ctx);
/* The local session's shell and environment (NULL for an SSH session): what `local run` starts
 * its workload with. */
/* The local session's login shell running `SHELL -c command` in a process group of its own (its
 * pid is the group's), with the environment above and the signal state a shell gives a program
 * (none blocked; INT, TERM, HUP, QUIT, PIPE and the job-control signals at their defaults). out:
 * the descriptors for its stdout and stderr, stdin /dev/null and the start in $HOME, as sshd runs
 * a command; NULL: the caller's streams and directory (`local run`). */
int lm_ssh_local_spawn(const lm_ssh *ssh, const char *command, const int out[2], pid_t *pid);

#endif
