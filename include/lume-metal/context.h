/* lume-metal: the context every host operation runs in.
 *
 * A context carries where state and preferences live, how to reach Lume and the guests, and
 * where progress goes. Fields left NULL/0 take the documented defaults; the CLI fills them from
 * its options and environment variables (host/cli/options.c is the one place that knows them).
 */
#ifndef LUME_METAL_CONTEXT_H
#define LUME_METAL_CONTEXT_H

#include "common.h"

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { LM_VM_MANAGER_AUTO = 0, LM_VM_MANAGER_LUME_API, LM_VM_MANAGER_LUME_CLI } lm_vm_manager_kind;
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
	const char *ssh_password_file;  /* NULL: $LUME_METAL_SSH_PASSWORD, then Lume's default */
	const char *bundle_dir;         /* NULL: the installed bundle for the guest's OS */
	double connect_timeout;         /* seconds; 0: 10 */
	double ready_timeout;           /* seconds; 0: 300 (as Lume's own tooling) */
	double command_timeout;         /* seconds; 0: 120 */
	int dry_run;
	int force;
	lm_log_fn log;
	void *log_data;
} lm_options;

#define LM_OPTIONS_INIT {LM_OPTIONS_VERSION, NULL, NULL, NULL, LM_VM_MANAGER_AUTO, NULL, \
	LM_HOST_KEY_ACCEPT_NEW, NULL, NULL, NULL, NULL, 0, 0, 0, 0, 0, NULL, NULL}

typedef struct lm_context lm_context;

/* Copies every string in opts; opts may be freed afterwards. */
LM_EXTERN(int) lm_context_new(lm_context **out, const lm_options *opts);
LM_EXTERN(void) lm_context_free(lm_context *ctx);
LM_EXTERN(const lm_options *) lm_context_options(const lm_context *ctx);
/* The state directory in use (resolved, created 0700 on first use by the state module). */
LM_EXTERN(const char *) lm_context_state_dir(const lm_context *ctx);

#ifdef __cplusplus
}
#endif
#endif
