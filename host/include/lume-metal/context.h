/* lume-metal: the context every host operation runs in.
 *
 * A context carries where state and preferences live, how to reach Lume and the guests, and
 * where progress goes. Fields left NULL/0 take the documented defaults; the CLI fills them from
 * its options and environment variables (host/cli/options.c is the one place that knows them).
 */
#ifndef LUME_METAL_CONTEXT_H
#define LUME_METAL_CONTEXT_H

#include "lume-metal/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
	LM_VM_MANAGER_AUTO = 0, LM_VM_MANAGER_LUME_API, LM_VM_MANAGER_LUME_CLI,
	LM_VM_MANAGER_TART, LM_VM_MANAGER_UTM, LM_VM_MANAGER_NONE
} lm_vm_manager_kind;
typedef enum { LM_HOST_KEY_ACCEPT_NEW = 0, LM_HOST_KEY_STRICT } lm_host_key_policy;

/* Progress and diagnostics: one line of human text (no newline) at a level. */
typedef enum { LM_LOG_DEBUG, LM_LOG_INFO, LM_LOG_WARN } lm_log_level;
typedef void (*lm_log_fn)(void *data, lm_log_level level, const char *line);

#define LM_OPTIONS_VERSION 1
typedef struct {
	unsigned int version;           /* LM_OPTIONS_VERSION */
	const char *state_dir;          /* NULL: $XDG_STATE_HOME/lume-metal, ~/.local/state/lume-metal
	                                   (Linux), ~/Library/Application Support/lume-metal (macOS) */
	const char *prefs_dir;          /* NULL: CFPreferences on macOS, ~/Library/Preferences plist files elsewhere */
	const char *lume_url;           /* NULL: http://127.0.0.1:7777 */
	lm_vm_manager_kind vm_manager;
	const char *lume_program;       /* NULL: "lume" found on PATH */
	lm_host_key_policy host_key_policy;
	const char *ssh_user;           /* NULL: "lume" */
	const char *ssh_key;            /* NULL: ~/.ssh/id_ed25519, ~/.ssh/id_ecdsa */
	const char *ssh_password_file;  /* NULL: $LUME_METAL_SSH_PASSWORD, else Lume's default; a file that
	                                   cannot be used is an error, never a fall-back */
	const char *bundle_dir;         /* NULL: the installed bundle for the guest's OS */
	double connect_timeout;         /* seconds; 0: 10 */
	double ready_timeout;           /* seconds; 0: 300 (as Lume's own tooling) */
	double command_timeout;         /* seconds; 0: 120 */
	double boot_margin;             /* seconds a VM may take from its start to its kernel's boot
	                                   (the restart rule, docs/lume-metal.md); 0: 30 */
	int dry_run;
	int force;
	int force_user_mismatch;        /* write the preference although the Lume server runs as another
	                                   user (or as root with no server found): dangerous, the VMs
	                                   will most likely not read it (docs/preferences.md) */
	int no_wait;                    /* a VM another process is working on: LM_ELOCKED at once
	                                   instead of waiting for it (one operation per VM at a time) */
	lm_log_fn log;
	void *log_data;
	const char *vm_address;         /* the guest's IPv4 address, when the manager cannot tell it:
	                                   required with LM_VM_MANAGER_NONE, and UTM older than 5.0.3 */
	const char *tart_program;       /* NULL: "tart" on PATH */
	const char *utmctl_program;     /* NULL: "utmctl" on PATH, else UTM.app's */
} lm_options;

#define LM_OPTIONS_INIT {LM_OPTIONS_VERSION, NULL, NULL, NULL, LM_VM_MANAGER_AUTO, NULL, \
	LM_HOST_KEY_ACCEPT_NEW, NULL, NULL, NULL, NULL, 0, 0, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL}

typedef struct lm_context lm_context;

/* Copies every string in opts; opts may be freed afterwards. Directories (state_dir, prefs_dir,
 * bundle_dir) must be absolute paths and timeouts between 0 and a week: LM_EINVALID otherwise. */
int lm_context_new(lm_context **out, const lm_options *opts);
void lm_context_free(lm_context *ctx);
const lm_options *lm_context_options(const lm_context *ctx);
/* The state directory in use (resolved, created 0700 on first use by the state module). */
const char *lm_context_state_dir(const lm_context *ctx);

/* Ask the operations running in ctx to stop at their next safe point: each undoes what it did,
 * as after a failure, and ends with LM_EINTERRUPTED; what was left is in its outcome's message.
 * Async-signal-safe and thread-safe: a SIGINT/SIGTERM handler may call it. */
void lm_context_interrupt(lm_context *ctx);

#ifdef __cplusplus
}
#endif
#endif
