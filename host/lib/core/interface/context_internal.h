/* Internal: the context's layout, logging, and the per-user paths. */
#ifndef LM_CONTEXT_INTERNAL_H
#define LM_CONTEXT_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#include "lume-metal/context.h"
#include "error_internal.h"

struct lm_context {
	lm_options opts;  /* strings owned by the context */
	char *state_dir;  /* resolved */
	pthread_mutex_t callback_lock; /* the embedder's callbacks are never called two at once */
	/* The Lume server's owner as lm_vm_server_lookup (host/lib/vm/server.c) last found it, for
	 * LM_SERVER_MEMO_SECONDS: one command asks several times (enable's check, each VM's
	 * preference step, the report), and each answer scans every process's open files. An
	 * lm_vm_server_info, malloc'd, freed with the context. */
	pthread_mutex_t memo_lock;
	void *server_memo;
	double server_memo_at; /* monotonic */
	int trace_fd; /* LUME_METAL_TRACE (trace.h), or -1 */
	double created_at; /* lm_clock_monotonic at lm_context_new: the trace's "context" line spans the context's life */
	/* The guest password lm_context_new took out of the environment (LM_SSH_PASSWORD_ENV,
	 * secret.h), or NULL; overwritten when the context is freed. */
	char *ssh_password;
};
#define LM_SERVER_MEMO_SECONDS 2.0

/* The longest timeout accepted, in seconds (a week): longer than any wait lume-metal has a reason
 * for, and small enough that its milliseconds fit an int. */
#define LM_TIMEOUT_MAX (7.0 * 24 * 3600)

/* The embedder's callbacks (context.h), each called under the context's callback lock; every
 * one is a no-op when the embedder did not set it. */
void lm_log(const lm_context *ctx, lm_log_level level, const char *fmt, ...) LM_PRINTF(3, 4);
void lm_context_step(const lm_context *ctx, const char *vm, const char *name, lm_step_state state,
    double elapsed, const char *detail);
void lm_context_output(const lm_context *ctx, const char *vm, int stream, const char *bytes, size_t len);
/* 0, or LM_ECANCELED with a message saying what was being done (`what`) when should_cancel asks
 * to stop. */
int lm_context_check_cancel(const lm_context *ctx, const char *what);

/* A wait in progress (a VM booting, SSH, another process's lock): call on each round of the wait
 * loop. Reports LM_STEP_WAITING for vm's step `step` with `what` as the detail, the first time and
 * then at most once a second (*last: 0 before the first call, kept by the caller); `since` is
 * the wait's start (lm_clock_monotonic). */
void lm_context_waiting(const lm_context *ctx, const char *vm, const char *step, double since, double *last,
    const char *what);

/* Resolve the state directory: explicit, else $LUME_METAL_STATE_DIR is the CLI's business, else
 * $XDG_STATE_HOME/lume-metal or ~/.local/state/lume-metal (Linux),
 * ~/Library/Application Support/lume-metal (macOS). Does not create it. */
int lm_paths_state_dir(char **out, const char *explicit_dir);

/* The installation's data directory (<prefix>/share/lume-metal, holding bundles/<platform>),
 * located from where the library itself is loaded so that a relocated installation finds its
 * own data; the configured install directory when that cannot be told. Free with free(). */
int lm_paths_data_dir(char **out);

/* $HOME, or the password database's home; LM_ENOTFOUND when neither is known. */
int lm_paths_home(const char **out);

/* A user's name from the password database, "uid N" without one, "an unknown user" for -1. */
void lm_paths_user_name(long uid, char *buf, size_t cap);

#endif
