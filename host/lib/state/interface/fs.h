/* Internal: the one place that writes files atomically and creates private directories.
 *
 * Every file lume-metal owns (state journal, preference plists, known_hosts, ...) is written
 * through lm_fs_write_atomic(), under the lock of lm_fs_lock(): a reader sees either the old or the
 * new content, never a mix, and after a crash the file holds one of the two.
 */
#ifndef LM_FS_H
#define LM_FS_H

#include <stddef.h>
#include <sys/types.h>

#include "file.h"
#include "lume-metal/context.h"
#include "str.h"

/* Replace `path` with `data`: temporary file in the same directory (".<name>.tmp-XXXXXX", mkstemp),
 * write, flush (lm_fs_flush), chmod `mode`, rename over `path`, flush the directory. On failure the temporary
 * file is removed and `path` is untouched (LM_EIO naming the file and the reason).
 *
 * Test builds only (LM_TEST_HOOKS, never the installed library or tool):
 * LUME_METAL_TEST_WRITE_DELAY_US=N sleeps N microseconds half-way through writing the temporary
 * file and again before the rename, so that tests can kill a writer mid-write. */
int lm_fs_write_atomic(const char *path, const void *data, size_t len, mode_t mode);

/* fd's data and metadata on the disk itself: fsync(), and on macOS fcntl(F_FULLFSYNC), because
 * there fsync() only hands the data to the drive, which may keep it in its cache across a power
 * loss (Apple's fsync(2)). A file system that refuses F_FULLFSYNC (ENOTSUP, EINVAL: some network
 * file systems) gets fsync(), the most it offers. 0, or -1 with errno set. Every flush lume-metal
 * makes goes through here: the journal, the preference store's own writes, the local install. */
int lm_fs_flush(int fd);

/* Create `path` and its missing parents with mode 0700. An existing directory is fine (its mode
 * is left alone); an existing non-directory is LM_EIO. */
int lm_fs_mkdir_private(const char *path);

/* Like lm_fs_mkdir_private() with any mode, and reports which directories it created, outermost
 * first, as a NULL-terminated array (free with lm_strv_free; NULL when none were created). */
int lm_fs_mkdir_p(const char *path, mode_t mode, char ***created);

/* The parent directories of `path` that do not exist yet, outermost first (NULL-terminated;
 * NULL when all exist). Nothing is created. */
int lm_fs_missing_dirs(const char *path, char ***missing);

/* Reading: lm_fs_read_file() and lm_fs_open_read() (common/src/file.h), which never block on a
 * FIFO. */

/* The one lock for files several lume-metal processes change (the state journal, known_hosts):
 * an flock (`how`: LOCK_EX or LOCK_SH) on the lock file `path`, created 0600; a symlink or a
 * non-regular file there is refused. Waits at most `timeout` seconds, then LM_ELOCKED naming
 * `what` ("the state lock"). *fd holds the lock until lm_fs_unlock(*fd); -1 on failure. */
int lm_fs_lock(const char *path, int how, double timeout, const char *what, int *fd);
/* lm_fs_lock() without a time limit, for a holder that may rightly take long (another operation
 * on the same VM); ends early with LM_ECANCELED once ctx (may be NULL) asks to cancel. While it
 * waits, ctx's on_step hears LM_STEP_WAITING for vm's step "wait-lock", `holder` as the detail. */
int lm_fs_lock_wait(const char *path, int how, const lm_context *ctx, const char *what, const char *vm,
    const char *holder, int *fd);
void lm_fs_unlock(int fd);

/* Remove `path` and fsync its directory; a missing file is fine. */
int lm_fs_remove(const char *path);

/* fsync the directory that contains `path`. */
int lm_fs_sync_parent(const char *path);

/* Remove temporary files that an interrupted lm_fs_write_atomic(path, ...) left behind. Call only
 * while holding the lock that serialises every writer of `path`. */
void lm_fs_remove_stale_temps(const char *path);

#endif
