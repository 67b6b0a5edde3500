/* Internal: the state journal (docs/state-format.md).
 *
 * One JSON document in the state directory (0700), changed only under an exclusive flock and
 * written atomically. Layout (schema 1):
 *   { "schema": 1,
 *     "preference": { ...recorded original, when changed... } | absent,
 *     "vms": { "<name>": { ...what was done to that VM (flow module)... } } }
 * Modules other than prefs/state read and change their own parts through cJSON.
 */
#ifndef LM_STATE_H
#define LM_STATE_H

#include <cjson/cJSON.h>

#include "lume-metal/context.h"

typedef struct lm_state lm_state;

/* Take the exclusive lock (waiting at most a few seconds, else LM_ELOCKED) and load the journal,
 * creating the directory 0700 and an empty document when there is none. A corrupt journal is
 * LM_ECORRUPT: the file is kept, a timestamped copy is made, and the message says how to recover. */
int lm_state_open(lm_state **out, lm_context *ctx);

/* lm_state_open() with flags and a lock timeout in seconds (<= 0: the default, 10 s).
 * LM_STATE_READONLY: a shared lock (so that what is read with it is one consistent snapshot),
 * nothing created but the lock file, lm_state_save() refused; a missing directory or file reads as
 * the empty document.
 * A corrupt journal opened read-only is LM_ECORRUPT without the copy. */
#define LM_STATE_READONLY 1u
int lm_state_open_ex(lm_state **out, lm_context *ctx, unsigned flags, double lock_timeout);

/* The journal's path (DIR/state.json), its context, and whether it was opened read-only. */
const char *lm_state_file(const lm_state *st);
lm_context *lm_state_context(const lm_state *st);
int lm_state_is_readonly(const lm_state *st);

/* A module found its part of the journal damaged (`why` says where): keep the file, make the
 * timestamped copy (not when read-only) and return LM_ECORRUPT with the recovery advice. */
int lm_state_corrupt(lm_state *st, const char *why);

/* The document; modify in place, then lm_state_save(). Never NULL after a successful open. */
cJSON *lm_state_doc(lm_state *st);

/* The "vms" object, created when missing; and one VM's entry (created when `create`). */
cJSON *lm_state_vms(lm_state *st);
cJSON *lm_state_vm(lm_state *st, const char *name, int create);

/* Write atomically (temp file in the same directory, fsync, rename, directory fsync). The lock is
 * kept until lm_state_close(). */
int lm_state_save(lm_state *st);

/* Release the lock and free. NULL is fine. Unsaved changes are dropped. */
void lm_state_close(lm_state *st);

/* Path of a file inside the state directory (e.g. "known_hosts"); creates the directory 0700. */
int lm_state_path(lm_context *ctx, const char *file, char **out);

/* VMs whose status is "enabled" or "enabling", other than `except` (may be NULL): the host
 * preference is still needed for them. Their names, comma-separated, go to names (when not NULL). */
int lm_state_live_vms(lm_state *st, const char *except, char *names, size_t len);

#endif
