/* Internal: the state document (docs/state-format.md, "How it is changed").
 *
 * One JSON object in the state directory (0700), read under a shared or exclusive flock, changed
 * only under the exclusive one and written atomically. This module knows nothing of what the
 * document holds: its layout and keys are the record module's (record.h).
 */
#ifndef LM_STATE_H
#define LM_STATE_H

#include <cjson/cJSON.h>

#include "lume-metal/context.h"

typedef struct lm_state lm_state;

/* Take the exclusive lock (waiting at most a few seconds, else LM_ELOCKED) and load the document,
 * creating the directory 0700 and an empty object when there is none. A document that is not a
 * JSON object is LM_ECORRUPT: the file is kept, a timestamped copy is made, and the message says
 * how to recover. */
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

/* A module found its part of the document damaged (`why` says where): keep the file, make the
 * timestamped copy (not when read-only) and return LM_ECORRUPT with the recovery advice. */
int lm_state_corrupt(lm_state *st, const char *why);

/* The document; modify in place, then lm_state_save(). Never NULL after a successful open. */
cJSON *lm_state_doc(lm_state *st);

/* Write atomically (temp file in the same directory, fsync, rename, directory fsync). The lock is
 * kept until lm_state_close(). A document that prints to the bytes the file already holds is not
 * written again (nothing to sync; trace event journal-unchanged). */
int lm_state_save(lm_state *st);

/* Release the lock and free. NULL is fine. Unsaved changes are dropped. */
void lm_state_close(lm_state *st);

/* Path of a file inside the state directory (e.g. "known_hosts"); creates the directory 0700. */
int lm_state_path(lm_context *ctx, const char *file, char **out);

/* The state directory's identity (docs/state-format.md, "Identity"): 32 random hex digits in
 * DIR/identity, made once and never changed, which the guest files it installs record as their
 * owner (guest_owner.h). Into id (LM_STATE_ID_SIZE bytes); "" when there is none yet and not
 * `create`. With `create`, one is made (the directory too) under the journal's lock, so that two
 * processes making it at once agree on one: never call it while holding that lock. A file that
 * holds anything else is LM_ECORRUPT naming it. */
#define LM_STATE_ID_SIZE 33
int lm_state_identity(lm_context *ctx, int create, char id[LM_STATE_ID_SIZE]);

/* One operation at a time per VM (docs/state-format.md, "Locks"): an flock on a lock file of the
 * VM's own in the state directory, held from lm_vm_lock_take() to lm_vm_lock_release() and let go
 * by the kernel if the holder dies. `operation` ("enable", "rollback", ...) is written into the
 * file by an exclusive holder so that whoever waits can say for whom.
 * When another process holds it: with the context's no_wait (or LM_VM_LOCK_TRY), LM_ELOCKED at
 * once; otherwise one progress line through the context's log, then wait without a limit (the
 * holder's own steps have timeouts), ending early with LM_ECANCELED when the context asks to cancel.
 * Never taken while the journal lock is held (the journal lock is always the inner one). */
#define LM_VM_LOCK_SHARED 1u  /* several holders at once (`run`), but never with an exclusive one */
#define LM_VM_LOCK_TRY 2u     /* never wait */
typedef struct lm_vm_lock lm_vm_lock;
int lm_vm_lock_take(lm_vm_lock **out, lm_context *ctx, const char *vm, const char *operation, unsigned flags);
void lm_vm_lock_release(lm_vm_lock *lock); /* NULL is fine */
/* Release and remove the lock file, with the VM's record (rollback, gc): lume-metal keeps no
 * file of a VM it has forgotten. Held shared, it is only released. NULL is fine. */
void lm_vm_lock_drop(lm_vm_lock *lock);
/* The lock file of a VM that is forgotten without being worked on (gc): removed unless another
 * process holds it. Never fails. */
void lm_vm_lock_remove(lm_context *ctx, const char *vm);

#endif
