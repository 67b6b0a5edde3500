/* The state journal (state.h, docs/state-format.md): one JSON document, changed under an
 * exclusive flock on a separate lock file and replaced atomically. */
#include "state.h"
#include "clock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "context_internal.h"
#include "error_internal.h"
#include "fs.h"
#include "json.h"
#include "path.h"
#include "random.h"
#include "test_hooks.h"
#include "text.h"
#include "trace.h"

#define STATE_FILE "state.json"
#define LOCK_FILE "state.lock"
#define STATE_MAX (16u * 1024u * 1024u)
/* The state lock is held for milliseconds (one read-modify-write); the wait only has to tell a
 * stuck holder from a busy machine. 10 s was too short at load 20-28 on 2 CPUs: eight processes
 * taking turns waited longer (prefs_cli_concurrency in the Debian 13 root, 2026-12-07). */
#define LOCK_TIMEOUT_DEFAULT 60.0
#define IDENTITY_FILE "identity"

struct lm_state {
	lm_context *ctx;
	char *dir;
	char *path;
	int lock_fd;
	double locked_at; /* when the lock was taken (lm_clock_monotonic), for the trace */
	int readonly;
	cJSON *doc;
	char *saved;      /* the file's bytes as read or last written (read-write opens; NULL: none) */
	size_t saved_len;
};

/* The state directory must be ours and not writable by anyone else (OpenSSH's rule for ~/.ssh:
 * auth.c's safe_path() lstat()s each component). Its own path must name a real directory, not a
 * symbolic link: whoever can change the link chooses where the journal, the pinned host keys and
 * the saved preference go. The folders above it may be links (macOS's /tmp and /var are). */
static int check_dir(const char *dir)
{
	struct stat sb;

	if (lstat(dir, &sb) != 0)
		return lm_error_set(LM_EIO, "state directory %s: %s", dir, strerror(errno));
	if (S_ISLNK(sb.st_mode)) {
		char target[1024];
		ssize_t n = readlink(dir, target, sizeof(target) - 1);

		target[n > 0 ? n : 0] = '\0';
		return lm_error_set(LM_EINVALID, "state directory %s is a symbolic link%s%s%s; lume-metal keeps "
		    "its state only in a real directory: give the directory itself, or "
		    "replace the link with the directory it names",
		    dir, n > 0 ? " (to " : "", target, n > 0 ? ")" : "");
	}
	if (!S_ISDIR(sb.st_mode))
		return lm_error_set(LM_EIO, "state directory %s: not a directory", dir);
	if (sb.st_uid != geteuid() && sb.st_uid != 0)
		return lm_error_set(LM_EINVALID, "state directory %s belongs to another user (uid %u); "
		    "lume-metal keeps its state only in a directory of its user's own", dir, (unsigned)sb.st_uid);
	if ((sb.st_mode & 022) != 0)
		return lm_error_set(LM_EINVALID, "state directory %s is writable by other users (mode %03o); "
		    "run: chmod 700 '%s'", dir, (unsigned)(sb.st_mode & 0777), dir);
	return 0;
}

static int take_lock(lm_state *st, int how, double timeout)
{
	double start = lm_clock_monotonic();
	char *lock_path;
	int rc;

	if ((rc = lm_path_join(&lock_path, st->dir, LOCK_FILE, NULL)) < 0)
		return rc;
	rc = lm_fs_lock(lock_path, how, timeout, "the state lock", &st->lock_fd);
	free(lock_path);
	if (rc == 0) {
		lm_trace(st->ctx, NULL, how == LOCK_EX ? "journal-lock-wait" : "journal-lock-wait-shared", start);
		st->locked_at = lm_clock_monotonic();
	}
	return rc;
}

/* An existing copy in the state directory holding exactly `data`, if any (so that repeated runs
 * on the same damaged file do not pile up copies). */
static char *find_identical_copy(const lm_state *st, const char *data, size_t len)
{
	static const char prefix[] = STATE_FILE ".corrupt-";
	struct dirent *de;
	char *full, *buf, *found = NULL;
	size_t blen;
	DIR *d;

	if ((d = opendir(st->dir)) == NULL)
		return NULL;
	while (found == NULL && (de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, prefix, sizeof(prefix) - 1) != 0)
			continue;
		if (lm_path_join(&full, st->dir, de->d_name, NULL) < 0)
			break;
		if (lm_fs_read_file(full, STATE_MAX, &buf, &blen) == 0) {
			if (blen == len && memcmp(buf, data, len) == 0)
				found = full;
			free(buf);
		}
		if (found == NULL)
			free(full);
	}
	closedir(d);
	lm_error_clear();
	return found;
}

static int corrupt(lm_state *st, const char *data, size_t len, const char *why)
{
	char stamp[32], *copy = NULL, name[64];
	struct tm tm;
	time_t now = time(NULL);
	int rc;

	if (!st->readonly && (copy = find_identical_copy(st, data, len)) == NULL) {
		gmtime_r(&now, &tm);
		strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
		snprintf(name, sizeof(name), STATE_FILE ".corrupt-%s", stamp);
		if ((rc = lm_path_join(&copy, st->dir, name, NULL)) < 0)
			return rc;
		if (lm_fs_write_atomic(copy, data, len, 0600) < 0) {
			rc = lm_error_set(LM_ECORRUPT, "%s: the state file is damaged (%s) and could not be copied "
			    "aside either (%s); it was left as it is (its format: docs/state-format.md)",
			    st->path, why, lm_error_last()->message);
			free(copy);
			return rc;
		}
	}
	if (copy != NULL)
		rc = lm_error_set(LM_ECORRUPT, "%s: the state file is damaged (%s). It was left as it is; a copy "
		    "is in %s. Its format: docs/state-format.md. Without it, lume-metal no longer knows the host "
		    "preference's original value", st->path, why, copy);
	else
		rc = lm_error_set(LM_ECORRUPT, "%s: the state file is damaged (%s); nothing was changed and, read-only, "
		    "no copy was made (its format: docs/state-format.md)", st->path, why);
	free(copy);
	return rc;
}

static int load(lm_state *st)
{
	const char *end = NULL;
	char *data = NULL, why[160];
	size_t len;
	int rc;

	rc = lm_fs_read_file(st->path, STATE_MAX, &data, &len);
	if (rc == LM_ENOTFOUND) {
		lm_error_clear();
		return (st->doc = cJSON_CreateObject()) != NULL ? 0 : lm_error_nomem();
	}
	/* Too large (or not a file): the journal is what is wrong, not how lume-metal was called. */
	if (rc == LM_EINVALID)
		return lm_error_set(LM_ECORRUPT, "%s; the state file cannot be read as it is and was left alone (its "
		    "format: docs/state-format.md)", lm_error_last()->message);
	if (rc < 0)
		return rc;
	/* len + 1: cJSON's length-bounded parser wants the terminating NUL inside the length. */
	/* Out of memory is that, not a damaged document (no copy of a sound file is made). */
	if ((rc = lm_json_parse(&st->doc, data, len + 1, &end, 1)) == LM_ENOMEM) {
		free(data);
		return rc;
	}
	if (st->doc == NULL || !cJSON_IsObject(st->doc)) {
		if (st->doc == NULL)
			snprintf(why, sizeof(why), "not valid JSON near byte %ld",
			    end != NULL && end >= data ? (long)(end - data) : 0L);
		else
			snprintf(why, sizeof(why), "not a JSON object");
		cJSON_Delete(st->doc);
		st->doc = NULL;
		rc = corrupt(st, data, len, why);
	}
	/* Kept to tell an unchanged document from a changed one (lm_state_save). */
	if (rc == 0 && !st->readonly) {
		st->saved = data;
		st->saved_len = len;
		return 0;
	}
	free(data);
	return rc;
}

int lm_state_corrupt(lm_state *st, const char *why)
{
	char *data = NULL;
	size_t len = 0;
	int rc;

	if ((rc = lm_fs_read_file(st->path, STATE_MAX, &data, &len)) < 0)
		return rc;
	rc = corrupt(st, data, len, why);
	free(data);
	return rc;
}

int lm_state_open_ex(lm_state **out, lm_context *ctx, unsigned flags, double lock_timeout)
{
	const char *dir = lm_context_state_dir(ctx);
	struct stat sb;
	lm_state *st;
	int rc;

	*out = NULL;
	if (dir == NULL || dir[0] == '\0')
		return lm_error_set(LM_EINVALID, "no state directory is set");
	if ((st = calloc(1, sizeof(*st))) == NULL)
		return lm_error_nomem();
	st->ctx = ctx;
	st->lock_fd = -1;
	st->readonly = (flags & LM_STATE_READONLY) != 0;
	if ((st->dir = strdup(dir)) == NULL) {
		rc = lm_error_nomem();
		goto fail;
	}
	if ((rc = lm_path_join(&st->path, dir, STATE_FILE, NULL)) < 0)
		goto fail;
	if (st->readonly) {
		/* No directory: nothing was ever recorded, and a read-only open creates nothing. */
		if (stat(dir, &sb) != 0 && errno == ENOENT) {
			if ((st->doc = cJSON_CreateObject()) == NULL) {
				rc = lm_error_nomem();
				goto fail;
			}
			*out = st;
			return 0;
		}
		/* A shared lock: the journal and the preference are read as one consistent snapshot. */
		if ((rc = check_dir(dir)) < 0 ||
		    (rc = take_lock(st, LOCK_SH, lock_timeout > 0 ? lock_timeout : LOCK_TIMEOUT_DEFAULT)) < 0)
			goto fail;
	} else {
		if ((rc = lm_fs_mkdir_private(dir)) < 0 || (rc = check_dir(dir)) < 0 ||
		    (rc = take_lock(st, LOCK_EX, lock_timeout > 0 ? lock_timeout : LOCK_TIMEOUT_DEFAULT)) < 0)
			goto fail;
		lm_fs_remove_stale_temps(st->path);
	}
	if ((rc = load(st)) < 0)
		goto fail;
	*out = st;
	return 0;
fail:
	lm_state_close(st);
	return rc;
}

int lm_state_open(lm_state **out, lm_context *ctx)
{
	return lm_state_open_ex(out, ctx, 0, 0);
}

cJSON *lm_state_doc(lm_state *st)
{
	return st->doc;
}

const char *lm_state_file(const lm_state *st)
{
	return st->path;
}

lm_context *lm_state_context(const lm_state *st)
{
	return st->ctx;
}

int lm_state_is_readonly(const lm_state *st)
{
	return st->readonly;
}

int lm_state_save(lm_state *st)
{
	double start = lm_clock_monotonic();
	char *text;
	size_t len;
	int rc;

	if (st->readonly)
		return lm_error_set(LM_EINVALID, "%s: opened read-only; nothing may be saved", st->path);
	if ((text = cJSON_Print(st->doc)) == NULL)
		return lm_error_nomem();
	len = strlen(text);
	/* cJSON_Print has no trailing newline; files we write end with one. */
	{
		char *withnl = realloc(text, len + 2);

		if (withnl == NULL) {
			free(text);
			return lm_error_nomem();
		}
		text = withnl;
		text[len++] = '\n';
		text[len] = '\0';
	}
	/* The same bytes as the file already holds (written, synced and renamed by the save that made
	 * them): nothing to write, and no fsync to wait for. A re-enable that changed nothing in step 1
	 * is one (docs/state-format.md, "Locks"). */
	if (st->saved != NULL && st->saved_len == len && memcmp(st->saved, text, len) == 0) {
		free(text);
		lm_trace(st->ctx, NULL, "journal-unchanged", start);
		return 0;
	}
	/* Test builds: the disk full from the Nth write on (test_hooks.h). */
	if (lm_test_journal_full())
		rc = lm_error_set(LM_EIO, "%s: cannot write: %s (the file is unchanged)", st->path, strerror(ENOSPC));
	else
		rc = lm_fs_write_atomic(st->path, text, len, 0600);
	if (rc == 0) {
		free(st->saved);
		st->saved = text;
		st->saved_len = len;
	} else {
		free(text);
	}
	lm_trace(st->ctx, NULL, "journal-save", start);
	return rc;
}

void lm_state_close(lm_state *st)
{
	if (st == NULL)
		return;
	/* How long the journal was held: what every other worker of a fleet queued behind. */
	if (st->lock_fd >= 0)
		lm_trace(st->ctx, NULL, st->readonly ? "journal-held-shared" : "journal-held", st->locked_at);
	lm_fs_unlock(st->lock_fd);
	cJSON_Delete(st->doc);
	free(st->saved);
	free(st->path);
	free(st->dir);
	free(st);
}

int lm_state_path(lm_context *ctx, const char *file, char **out)
{
	const char *dir = lm_context_state_dir(ctx);
	int rc;

	*out = NULL;
	if (file == NULL || file[0] == '\0' || strchr(file, '/') != NULL || strcmp(file, ".") == 0 ||
	    strcmp(file, "..") == 0)
		return lm_error_set(LM_EINVALID, "lm_state_path: '%s' is not a plain file name", file ? file : "");
	if (dir == NULL || dir[0] == '\0')
		return lm_error_set(LM_EINVALID, "no state directory is set");
	if ((rc = lm_fs_mkdir_private(dir)) < 0 || (rc = check_dir(dir)) < 0)
		return rc;
	return lm_path_join(out, dir, file, NULL);
}

/* DIR/identity's digits into id; *found 0 (and no error) when there is no such file. */
static int read_identity(const char *path, char id[LM_STATE_ID_SIZE], int *found)
{
	char *data = NULL;
	size_t len = 0;
	int rc;

	*found = 0;
	id[0] = '\0';
	if ((rc = lm_fs_read_file(path, 256, &data, &len)) == LM_ENOTFOUND) {
		lm_error_clear();
		return 0;
	}
	if (rc < 0 && rc != LM_EINVALID)
		return rc;
	if (rc == LM_EINVALID || !(len == LM_STATE_ID_SIZE && data[LM_STATE_ID_SIZE - 1] == '\n') ||
	    strspn(data, "0123456789abcdef") != LM_STATE_ID_SIZE - 1) {
		free(data);
		return lm_error_set(LM_ECORRUPT, "%s: the state directory's identity file holds no identity (32 hex "
		    "digits and a newline; docs/state-format.md). Removed, it is made afresh, but the guest files this "
		    "state directory installed then count as another's", path);
	}
	memcpy(id, data, LM_STATE_ID_SIZE - 1);
	id[LM_STATE_ID_SIZE - 1] = '\0';
	*found = 1;
	free(data);
	return 0;
}

int lm_state_identity(lm_context *ctx, int create, char id[LM_STATE_ID_SIZE])
{
	const char *dir = lm_context_state_dir(ctx);
	char *path = NULL, *lock_path = NULL, text[LM_STATE_ID_SIZE + 1];
	int found = 0, fd = -1, rc;

	id[0] = '\0';
	if (dir == NULL || dir[0] == '\0')
		return lm_error_set(LM_EINVALID, "no state directory is set");
	if ((rc = lm_path_join(&path, dir, IDENTITY_FILE, NULL)) < 0)
		return rc;
	if ((rc = read_identity(path, id, &found)) < 0 || found || !create)
		goto out;
	/* Made under the journal's lock and read again there: a process that made it meanwhile wins. */
	if ((rc = lm_fs_mkdir_private(dir)) < 0 || (rc = check_dir(dir)) < 0 ||
	    (rc = lm_path_join(&lock_path, dir, LOCK_FILE, NULL)) < 0 ||
	    (rc = lm_fs_lock(lock_path, LOCK_EX, LOCK_TIMEOUT_DEFAULT, "the state lock", &fd)) < 0 ||
	    (rc = read_identity(path, id, &found)) < 0 || found)
		goto out;
	if ((rc = lm_random_hex(id, (LM_STATE_ID_SIZE - 1) / 2)) < 0)
		goto out;
	snprintf(text, sizeof(text), "%s\n", id);
	rc = lm_fs_write_atomic(path, text, LM_STATE_ID_SIZE, 0600);
out:
	if (rc < 0)
		id[0] = '\0';
	lm_fs_unlock(fd);
	free(lock_path);
	free(path);
	return rc;
}
