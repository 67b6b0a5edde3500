/* Internal: the SSH transport's session and helpers shared by its files.
 *
 *   session.c      TCP connect, handshake, timeouts, lm_ssh_connect/free
 *   ssh_config.c   ~/.ssh/config's IdentityFile, User, Port, ProxyJump for an address (ssh_config.h)
 *   fail.c         a failure said from libssh2's error, the session marked broken (every file's)
 *   known_hosts.c  our own known_hosts (keyed by VM name), lm_ssh_forget_host
 *   auth.c         agent, key files, password
 *   exec.c         remote commands (non-blocking, both streams at once)
 *   exec_interactive.c  one command as a terminal session runs it (run: input, pty, signals)
 *   sftp.c         upload with verification, sha256, remove, stat
 *   quote.c        the one POSIX sh quoting function
 *   local.c        the local transport: the same calls on this machine (ssh_local.h)
 */
#ifndef LM_SSH_INTERNAL_H
#define LM_SSH_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <libssh2.h>
#include <libssh2_sftp.h>

#include "lume-metal/sys/ssh.h"
#include "context_internal.h"
#include "b64.h"
#include "clock.h"
#include "error_internal.h"
#include "ssh_config.h"

struct lm_ssh {
	lm_context *ctx;
	char *vm;               /* the VM's name: the key in known_hosts, and in every message */
	char *address;
	int port;
	int fd;
	LIBSSH2_SESSION *session;
	LIBSSH2_SFTP *sftp;     /* opened on first use, kept for the session */
	double connect_timeout; /* seconds */
	double command_timeout; /* seconds; 0: no limit */
	int broken;             /* the transport failed: every later call fails fast */
	int uncancelable;       /* should_cancel is not asked (lm_ssh_set_cancelable) */
	char account[32];       /* the VM manager's image account (user and password), when no user is given */
	char vm_id[72];         /* the VM's identity from its manager ("" unknown): the pin records it */
	int local;              /* the local transport (local.c): no session, every call served here */
	char *local_shell;      /* its login shell */
	char **local_env;       /* its commands' environment, NULL-terminated */
	char *local_home;       /* where they start ($HOME; NULL: where we are) */
	lm_ssh_config_host config; /* ~/.ssh/config for its address: User, IdentityFile (ssh_config.c) */
};


/* fail.c */
/* Set the last error from the session's own error ("VM 'x' (addr:port): <what>: <libssh2's
 * message>"); transport failures mark the session broken. Returns the lm_error_code. */
int lm_ssh_fail(lm_ssh *ssh, int libssh2_rc, const char *what);

/* The transport failed: later calls fail fast, and freeing does not wait for the peer. */
void lm_ssh_mark_broken(lm_ssh *ssh);

/* Fail fast when an earlier call lost the connection. */
int lm_ssh_check_usable(lm_ssh *ssh);

/* Non-blocking helper: wait until the socket is ready in the directions libssh2 is blocked on,
 * or until `deadline` (lm_clock_monotonic() based; 0: none). LM_ETIMEOUT (message naming the VM and
 * `what`) when the deadline passes. */
int lm_ssh_wait(lm_ssh *ssh, double deadline, const char *what);
/* The same, also waking when fd (-1: none) has something to read (*fd_ready 1), and -- with
 * wake_ms > 0 -- after wake_ms or a signal (0, nothing ready), for a caller that watches more. */
int lm_ssh_wait_io(lm_ssh *ssh, double deadline, const char *what, int fd, int *fd_ready, int wake_ms);

/* Run one non-blocking libssh2 call until it stops saying EAGAIN; werr gets our own error code
 * when waiting failed (deadline, socket), rc the call's last libssh2 result. */
#define RETRY(ssh, deadline, what, call, rc, werr)                          \
	do {                                                                \
		(werr) = 0;                                                 \
		while (((rc) = (call)) == LIBSSH2_ERROR_EAGAIN) {           \
			if (((werr) = lm_ssh_wait((ssh), (deadline), (what))) < 0) \
				break;                                      \
		}                                                           \
	} while (0)

/* Blocking libssh2 calls time out after this many seconds of silence from the server. */
void lm_ssh_set_blocking_timeout(lm_ssh *ssh, double seconds);

/* known_hosts.c (VM names key the known hosts: the one rule of vm_name.h, whose [A-Za-z0-9._-]
 * holds nothing OpenSSH reads as a pattern) */
/* Host-key algorithms to offer, the VM's recorded key types first (as OpenSSH does). */
int lm_ssh_hostkey_prefs(lm_ssh *ssh, char *buf, size_t size);
/* After the handshake: match, record (accept-new) or refuse. */
int lm_ssh_verify_host_key(lm_ssh *ssh);

/* auth.c */
/* Check an explicitly given key before any connection (missing file, RSA). */
int lm_ssh_check_key_option(const lm_context *ctx);
/* Check the password file, when one is given, before any connection: missing, unreadable, not a
 * regular file, too large or empty is an error. */
int lm_ssh_check_password_option(const lm_context *ctx);
int lm_ssh_authenticate(lm_ssh *ssh);


/* OpenSSH-style fingerprint of a key blob: "SHA256:" + base64 without padding (51 bytes + NUL). */
void lm_ssh_fingerprint(const uint8_t *blob, size_t len, char out[64]);
/* The algorithm name at the start of a key blob ("ssh-ed25519"), into out; "" when malformed. */
void lm_ssh_blob_type(const uint8_t *blob, size_t len, char *out, size_t size);

/* local.c: the local transport's side of each call (ssh_local.h). */
int lm_ssh_local_exec(lm_ssh *ssh, const char *command, double timeout, lm_ssh_output_fn out, void *data,
    int *exit_status);
int lm_ssh_local_upload(const void *bytes, size_t len, const char *path, int mode);
int lm_ssh_local_sha256(const char *path, uint8_t digest[32]);
int lm_ssh_local_remove(const char *path);
int lm_ssh_local_stat(const char *path, lm_ssh_stat_info *out);
int lm_ssh_local_list_dir(const char *dir, size_t max_names, char ***names);
int lm_ssh_local_read_file(const char *path, size_t max, char **data, size_t *len);

/* libssh2_init, once per process, from any thread (session.c). */
void lm_ssh_global_init(void);

#endif
