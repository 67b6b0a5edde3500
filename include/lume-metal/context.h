/* lume-metal: the context every host operation runs in.
 *
 * A context carries where state and preferences live, how to reach Lume and the guests, and the
 * callbacks that receive progress, guest output and cancellation. Fields left NULL/0 take the
 * documented defaults. The library reads no option from the environment; the lume-metal tool
 * fills these from its options and environment variables (host/cli/options.c).
 *
 * Threading (docs/embedding.md): a context may be used by one operation at a time. Callbacks
 * may be called from threads the library starts (enable with jobs > 1), but never two at once
 * for one context; they must return promptly and must not start an operation on the same
 * context. lm_error_last() inside a callback is the calling thread's, not the operation's.
 */
#ifndef LUME_METAL_CONTEXT_H
#define LUME_METAL_CONTEXT_H

#include <stddef.h>

#include "common.h"
#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
	LM_VM_MANAGER_AUTO = 0, LM_VM_MANAGER_LUME_API, LM_VM_MANAGER_LUME_CLI,
	LM_VM_MANAGER_TART, LM_VM_MANAGER_UTM, LM_VM_MANAGER_NONE
} lm_vm_manager_kind;
typedef enum { LM_HOST_KEY_ACCEPT_NEW = 0, LM_HOST_KEY_STRICT } lm_host_key_policy;

/* enable: whether the host preference is set (docs/lume-metal.md, "The host preference, measured").
 * Whether a host/guest combination needs it is not settled (public reports disagree by version). */
typedef enum {
	LM_HOST_PREF_ALWAYS = 0, /* set it when not set and restart as the rule says (the published recipe) */
	LM_HOST_PREF_AUTO,       /* prove with the shim on the VM as it is first; only when the kernels fail,
	                            set it, restart the VM and prove again */
	LM_HOST_PREF_NEVER       /* the shim alone, the host untouched: kernels that fail are LM_ENOTPROVEN */
} lm_host_pref_mode;

/* Whether a VM needed the host preference for the kernels the profile needs: measured by `auto`
 * (and by `never` on a VM at the stock level); not measured by `always`, which sets it first. */
typedef enum {
	LM_PREF_NEEDED_UNKNOWN = 0, /* not measured: the kernels were proven with the preference in effect */
	LM_PREF_NEEDED_YES,         /* they failed at the stock level and ran once it was set */
	LM_PREF_NEEDED_NO           /* they ran with the shim alone at the stock level */
} lm_pref_needed;

/* Diagnostics: one line of human text (no newline) at a level. */
typedef enum { LM_LOG_DEBUG, LM_LOG_INFO, LM_LOG_WARN } lm_log_level;
typedef void (*lm_log_fn)(void *data, lm_log_level level, const char *line);

/* Progress: every step of an operation is reported when it starts and when it ends. */
/* LM_STEP_WAITING: while a step waits (a VM booting, SSH, another process's lock of the VM),
 * about once a second; elapsed counts from the wait's start and detail says what is awaited. */
typedef enum { LM_STEP_STARTED, LM_STEP_DONE, LM_STEP_FAILED, LM_STEP_WAITING } lm_step_state;
typedef struct {
	const char *vm;         /* the VM the step is about ("" for the host alone) */
	const char *name;       /* "host-preference", "start", "ready", "guest", "restart", "bundle",
	                           "install", "probe", "record", "guest-files", ... */
	lm_step_state state;
	double elapsed;         /* seconds since the step started; 0 when STARTED */
	const char *detail;     /* DONE: what was done; FAILED: the error; STARTED: "" */
} lm_step_event;
typedef void (*lm_step_fn)(void *data, const lm_step_event *event);

/* A guest command's output (run): stream 1 = stdout, 2 = stderr, bytes as they arrive. */
typedef void (*lm_output_fn)(void *data, const char *vm, int stream, const char *bytes, size_t len);

/* Polled between steps and while waiting (for a VM, a guest command, a lock); non-zero stops the
 * operation at the next safe point with LM_ECANCELED, undoing what it did as on a failure. It may
 * return a flag that a signal handler sets (the lume-metal tool does so for SIGINT and SIGTERM). */
typedef int (*lm_cancel_fn)(void *data);

/* The options' version: a program fills them with lm_options_init(&opts, LM_OPTIONS_VERSION) and
 * the library reads exactly the fields of that version, so that a program built against an older
 * header keeps working with a newer library (its struct is shorter). The rule: a field is only
 * ever added at the end, and every field added bumps LM_OPTIONS_VERSION (with the size of the new
 * version in host/lib/core/context.c); no field is removed, reordered or retyped without a new
 * SOVERSION (docs/embedding.md, "ABI"). */
#define LM_OPTIONS_VERSION 3
typedef struct {
	unsigned int version;           /* the version the caller was built with (lm_options_init) */
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
	lm_log_fn log;                  /* NULL: diagnostics are dropped */
	void *log_data;
	lm_step_fn on_step;             /* NULL: progress is not reported (results still list steps) */
	lm_output_fn on_output;         /* NULL: a run's guest output is dropped */
	lm_cancel_fn should_cancel;     /* NULL: never canceled */
	void *callback_data;            /* passed to on_step, on_output and should_cancel */
	const char *vm_address;         /* the guest's IPv4 address, when the manager cannot tell it:
	                                   required with LM_VM_MANAGER_NONE, and UTM older than 5.0.3 */
	const char *tart_program;       /* NULL: "tart" on PATH */
	const char *utmctl_program;     /* NULL: "utmctl" on PATH, else UTM.app's */
	int keep_host;                  /* enable, host enable: the host preference is kept by the fleet:
	                                   rolling back the last enabled VM leaves it set; only a host
	                                   disable (or a rollback with restore_host) restores it */
	int restore_host;               /* rollback: restore the preference when no enabled VM is left,
	                                   kept by keep_host or not */
	/* Version 2. */
	lm_host_pref_mode host_preference; /* enable: LM_HOST_PREF_ALWAYS (0, the default), AUTO or NEVER */
	/* Version 3. */
	int take_over;                  /* enable, rollback: guest files another state directory installed
	                                   (their owner record names it, or cannot be read) are this
	                                   one's to act on: enable records this state directory as their
	                                   owner, rollback removes them. Without it both fail with
	                                   LM_EOTHERSTATE and change nothing there */
} lm_options;

typedef struct lm_context lm_context;

/* Fill *opts with the defaults of `version` (every field 0 or NULL: the defaults documented above
 * are resolved by lm_context_new) and set opts->version. Writes only the fields that `version`
 * has. LM_EINVALID for a version this library does not know (0, or newer than LM_OPTIONS_VERSION
 * of the library's own headers). */
LM_EXTERN(int) lm_options_init(lm_options *opts, unsigned int version);

/* "always", "auto", "never" (static; "" for a value that is none of them). */
LM_EXTERN(const char *) lm_host_pref_mode_name(lm_host_pref_mode mode);
/* The mode of that name; LM_EINVALID (saying what is expected) for any other. */
LM_EXTERN(int) lm_host_pref_mode_parse(const char *name, lm_host_pref_mode *out);

/* Reads the fields of opts->version only (any version from 1 to LM_OPTIONS_VERSION; LM_EINVALID
 * otherwise): the fields added after it take their defaults. Copies every string in opts; opts
 * may be freed afterwards. Directories (state_dir, prefs_dir, bundle_dir) must be absolute paths
 * and timeouts between 0 and a week: LM_EINVALID otherwise. */
LM_EXTERN(int) lm_context_new(lm_context **out, const lm_options *opts);
LM_EXTERN(void) lm_context_free(lm_context *ctx);
/* The options in use (the timeouts' defaults filled in), as the current version's struct: a
 * program built against an older version reads the fields it knows, which come first. */
LM_EXTERN(const lm_options *) lm_context_options(const lm_context *ctx);
/* The state directory in use (resolved, created 0700 on first use by the state module). */
LM_EXTERN(const char *) lm_context_state_dir(const lm_context *ctx);

#ifdef __cplusplus
}
#endif
#endif
