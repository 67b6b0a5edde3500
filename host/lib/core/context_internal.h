/* Internal: the context's layout, logging, and the per-user paths. */
#ifndef LM_CONTEXT_INTERNAL_H
#define LM_CONTEXT_INTERNAL_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

#include "lume-metal/context.h"
#include "error_internal.h"

struct lm_context {
	lm_options opts;  /* strings owned by the context */
	char *state_dir;  /* resolved */
	atomic_int interrupted; /* lm_context_interrupt() was called (lock-free: set from signal handlers) */
};

/* The longest timeout accepted, in seconds (a week): longer than any wait lume-metal has a reason
 * for, and small enough that its milliseconds fit an int. */
#define LM_TIMEOUT_MAX (7.0 * 24 * 3600)
/* LM_EINTERRUPTED with its message once lm_context_interrupt() was called, else 0. Checked
 * between steps and in every wait, never while undoing. */
int lm_context_check_interrupt(const lm_context *ctx);

void lm_log(const lm_context *ctx, lm_log_level level, const char *fmt, ...) LM_PRINTF(3, 4);

/* Resolve the state directory: explicit, else $LUME_METAL_STATE_DIR is the CLI's business, else
 * $XDG_STATE_HOME/lume-metal or ~/.local/state/lume-metal (Linux),
 * ~/Library/Application Support/lume-metal (macOS). Does not create it. */
int lm_paths_state_dir(char **out, const char *explicit_dir);

/* $HOME, or the password database's home; LM_ENOTFOUND when neither is known. */
int lm_paths_home(const char **out);

/* A user's name from the password database, "uid N" without one, "an unknown user" for -1. */
void lm_paths_user_name(long uid, char *buf, size_t cap);

#endif
