/* lume-metal, lower-level calls: the SSH transport to guests (libssh2), with our own known_hosts.
 * Not included by lume-metal.h: #include <lume-metal/sys/ssh.h> (docs/embedding.md, "Lower-level
 * calls"). The flow calls use it for every guest; an embedder needs it only to talk to a guest
 * itself. Less stable than the flow calls: it follows what the flows need. */
#ifndef LUME_METAL_SYS_SSH_H
#define LUME_METAL_SYS_SSH_H

#include "../common.h"

#include <stddef.h>
#include <stdint.h>

#include "../context.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lm_ssh lm_ssh;

/* Connect and authenticate (agent, key files, password from env/file, Lume's default), verifying
 * the host key against <state dir>/known_hosts under the VM's name. One session serves a whole
 * operation. The user's ~/.ssh/config is read for `address` (ssh_config(5)'s Host sections):
 * its User and IdentityFile are used where the context gives no ssh_user and ssh_key (the key
 * after the context's), its Port when `port` is 0 (else 22), and a ProxyJump is refused
 * (LM_EUNSUPPORTED: the VMs are reached directly); docs/security.md. */
LM_EXTERN(int) lm_ssh_connect(lm_ssh **out, lm_context *ctx, const char *vm_name, const char *address, int port);
/* The same, with the guest account of the VM manager's images ("lume" for Lume's, "admin" for
 * Cirrus Labs' Tart images, lm_vm_info.account) as the user and password to try when none is
 * given; NULL or "": "lume". */
LM_EXTERN(int) lm_ssh_connect_as(lm_ssh **out, lm_context *ctx, const char *vm_name, const char *address, int port,
    const char *account);
LM_EXTERN(void) lm_ssh_free(lm_ssh *ssh); /* disconnects */

/* The command timeout of this session in seconds (0: no limit), replacing the context's
 * command_timeout: a command (lm_ssh_exec) must finish within it, and every SFTP request must be
 * answered within it. Long workloads (`run`) can lift it. */
LM_EXTERN(int) lm_ssh_set_command_timeout(lm_ssh *ssh, double seconds);

/* 1 while the session can carry commands; 0 once a lost connection, a timeout or a cancellation
 * left it in an unknown state (every later call fails fast): connect again. */
LM_EXTERN(int) lm_ssh_usable(const lm_ssh *ssh);
/* cancelable 0: this session no longer asks the context's should_cancel while it waits, for work
 * that must finish even when the operation was canceled (putting a guest back as it was). The
 * command timeout still bounds every wait. Sessions start cancelable. */
LM_EXTERN(void) lm_ssh_set_cancelable(lm_ssh *ssh, int cancelable);

/* Streamed output: stream 1 = stdout, 2 = stderr. */
typedef void (*lm_ssh_output_fn)(void *data, int stream, const char *bytes, size_t len);

/* Run a command line (build it with lm_shell_quote_argv). *exit_status gets the remote status
 * (or 255 when the command was killed by a signal). Transport failures are errors; a non-zero
 * remote status is not. */
LM_EXTERN(int) lm_ssh_exec(lm_ssh *ssh, const char *command, lm_ssh_output_fn out, void *data, int *exit_status);
/* Same, collecting stdout (and stderr) in memory; free with lm_free(). More than max bytes on
 * either stream is LM_ETOOLARGE naming the limit (the command still runs to its end, its output
 * read and dropped; nothing is returned), never a cut result. */
LM_EXTERN(int) lm_ssh_exec_capture(lm_ssh *ssh, const char *command, size_t max, char **out_stdout,
    char **out_stderr, int *exit_status);

/* Upload bytes to remote_path: written to a temporary name in the same directory, read back and
 * checked against the SHA-256 of the bytes, chmod'ed to mode, then renamed into place. On any
 * failure nothing is left at remote_path (nor at the temporary name, when still reachable). */
LM_EXTERN(int) lm_ssh_upload(lm_ssh *ssh, const void *bytes, size_t len, const char *remote_path, int mode);
/* SHA-256 of a remote regular file, read over SFTP; LM_ENOTFOUND when absent. Anything else (a
 * link, a FIFO, a device) is LM_EREMOTE naming what it is, never opened; a file that grows while
 * read is LM_EREMOTE, a read past the command timeout LM_ETIMEOUT. */
LM_EXTERN(int) lm_ssh_sha256(lm_ssh *ssh, const char *remote_path, uint8_t digest[32]);
LM_EXTERN(int) lm_ssh_remove(lm_ssh *ssh, const char *remote_path); /* absent is fine */
typedef struct { int exists; int is_dir; int is_link; uint64_t size; int mode; } lm_ssh_stat_info;
LM_EXTERN(int) lm_ssh_stat(lm_ssh *ssh, const char *remote_path, lm_ssh_stat_info *out);

/* POSIX sh quoting: one argument, and an argv joined with spaces. Free with lm_free(). */
LM_EXTERN(int) lm_shell_quote(const char *arg, char **out);
LM_EXTERN(int) lm_shell_quote_argv(const char *const *argv, size_t argc, char **out);

#ifdef __cplusplus
}
#endif
#endif
