/* Internal: the one place that writes files atomically and creates private directories.
 *
 * Every file lume-metal owns (state journal, preference plists, known_hosts, ...) is written
 * through lm_fs_write_atomic(): a reader sees either the old or the new content, never a mix,
 * and after a crash the file holds one of the two.
 */
#ifndef LM_FS_H
#define LM_FS_H

#include <stddef.h>
#include <sys/types.h>

#include "str.h"

/* Replace `path` with `data`: temporary file in the same directory (".<name>.tmp-<pid>-<n>"),
 * write, fsync, chmod `mode`, rename over `path`, fsync the directory. On failure the temporary
 * file is removed and `path` is untouched (LM_EIO naming the file and the reason).
 *
 * Test builds only (LM_TEST_HOOKS, never the installed library or tool):
 * LUME_METAL_TEST_WRITE_DELAY_US=N sleeps N microseconds half-way through writing the temporary
 * file and again before the rename, so that tests can kill a writer mid-write. */
int lm_fs_write_atomic(const char *path, const void *data, size_t len, mode_t mode);

/* Create `path` and its missing parents with mode 0700. An existing directory is fine (its mode
 * is left alone); an existing non-directory is LM_EIO. */
int lm_fs_mkdir_private(const char *path);

/* Like lm_fs_mkdir_private() with any mode, and reports which directories it created, outermost
 * first, as a NULL-terminated array (free with lm_strv_free; NULL when none were created). */
int lm_fs_mkdir_p(const char *path, mode_t mode, char ***created);

/* The parent directories of `path` that do not exist yet, outermost first (NULL-terminated;
 * NULL when all exist). Nothing is created. */
int lm_fs_missing_dirs(const char *path, char ***missing);

/* Read a whole regular file (at most `max` bytes, else LM_EINVALID). LM_ENOTFOUND when it does
 * not exist; LM_EIO naming the file otherwise. *data is NUL-terminated; free with free(). */
int lm_fs_read_file(const char *path, size_t max, char **data, size_t *len);

/* Remove `path` and fsync its directory; a missing file is fine. */
int lm_fs_remove(const char *path);

/* fsync the directory that contains `path`. */
int lm_fs_sync_parent(const char *path);

/* Remove temporary files that an interrupted lm_fs_write_atomic(path, ...) left behind. Call only
 * while holding the lock that serialises every writer of `path`. */
void lm_fs_remove_stale_temps(const char *path);

#endif
