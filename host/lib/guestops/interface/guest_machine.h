/* Internal (guestops): the guest as a machine -- its facts, its login shell, its boot time,
 * whether it is a VM -- and the one way a command given as argv runs in it. */
#ifndef LM_GUEST_MACHINE_H
#define LM_GUEST_MACHINE_H

#include <stddef.h>

#include "lume-metal/flow.h"
#include "lume-metal/sys/ssh.h"

/* ---- guest.c: the guest's facts ---- */

/* The guest's facts (lm_guest_facts) in one command, and (current, may be NULL) what the install
 * directory's `current` link names. */
int lm_guest_facts_read(lm_ssh *ssh, lm_guest_facts *facts, char *current, size_t current_len);
/* The guest's login shell ($SHELL) into buf (a longer answer is an error); *written_for: zsh, bash
 * or sh, the shells lume-metal's guest commands are written for. */
int lm_guest_login_shell(lm_ssh *ssh, char *buf, size_t len, int *written_for);
/* The facts command's output (read, never modified: one fact a line; NULL reads as empty);
 * `err` is its stderr, quoted when the output says nothing usable. Split out of the read so that
 * the parse of what the guest prints can be tested and fuzzed without a guest. */
int lm_guest_facts_parse(const char *out, const char *err, lm_guest_facts *facts, char *current, size_t current_len);
/* `sysctl -n kern.boottime`'s "{ sec = S, usec = U } ..." as epoch seconds; 0 when not that. */
double lm_guest_boot_time_parse(const char *boot);

/* ---- launchd.c: a command from argv ---- */

/* A guest command from argv; a non-zero exit is LM_EREMOTE naming `what` and its stderr, unless
 * *status is wanted (then the caller judges). *out (may be NULL) gets its stdout. */
int lm_guest_run_argv(lm_ssh *ssh, const char *const *argv, size_t argc, const char *what, char **out,
    int *status);

/* ---- machine.c: the machine lume-metal runs on (`local`, over the local transport) ---- */

/* sysctl kern.hv_vmm_present: *present 1 (a VM), 0 (not), -1 (no answer). */
int lm_machine_hv_vmm_present(lm_ssh *ssh, int *present);

#endif
