/* Internal: how long a question to the guest may take.
 *
 * Threat: a guest that never answers (a FIFO where a file should be, a hung tool) would hold the
 * VM's lock for as long as lume-metal waits, so that not even `rollback` could proceed. Rule:
 * every remote command has a deadline. The questions lume-metal asks (facts, installs, removals,
 * launchd, the probe without its exercise) use lm_ssh_ask: LM_SSH_ASK_SECONDS, or the session's
 * command timeout when that is shorter. The few commands that run a workload (the probe's
 * exercise, the confirmation that includes it, a bench run, `run`) use lm_ssh_exec_capture or
 * lm_ssh_exec (ssh.h) with the session's command timeout (120 s by default; 0: none). Errors:
 * those of lm_ssh_exec_capture; LM_ETIMEOUT says "guest command `...` gave no answer in N s". */
#ifndef LM_SSH_DEADLINE_H
#define LM_SSH_DEADLINE_H

#include <stddef.h>

#include "lume-metal/sys/ssh.h"

#define LM_SSH_ASK_SECONDS 30.0

/* lm_ssh_exec_capture with the question's deadline. */
int lm_ssh_ask(lm_ssh *ssh, const char *command, size_t max, char **out_stdout, char **out_stderr,
    int *exit_status);
/* lm_ssh_ask of argv, each word quoted for the guest's shell (lm_shell_quote_argv). */
int lm_ssh_ask_argv(lm_ssh *ssh, const char *const *argv, size_t argc, size_t max, char **out_stdout,
    char **out_stderr, int *exit_status);

#endif
