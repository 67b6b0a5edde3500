/* Atomic file writes and private directories (fs.h). */
#include "fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "trace.h"
#include "context_internal.h"
#include "error_internal.h"
#include "path.h"

/* Split "dir/name" into its directory ("." when none) and base name. */
static int split_path(const char *path, char **dir, const char **base)
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL) {
		*dir = strdup(".");
		*base = path;
	} else if (slash == path) {
		*dir = strdup("/");
		*base = slash + 1;
	} else {
		*dir = strndup(path, (size_t)(slash - path));
		*base = slash + 1;
	}
	if (*dir == NULL)
		return lm_error_nomem();
	if ((*base)[0] == '\0') {
		free(*dir);
		*dir = NULL;
		return lm_error_set(LM_EINVALID, "%s: expected a file name, found a directory path", path);
	}
	return 0;
}

int lm_fs_flush(int fd)
{
#ifdef __APPLE__
	if (fcntl(fd, F_FULLFSYNC) == 0)
		return 0;
	if (errno != ENOTSUP && errno != EINVAL)
		return -1;
#endif
	return fsync(fd);
}

static int sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc = 0;

	if (fd < 0)
		return lm_error_set(LM_EIO, "%s: cannot open the directory to sync it: %s", dir, strerror(errno));
	if (lm_fs_flush(fd) != 0 && errno != EINVAL)
		rc = lm_error_set(LM_EIO, "%s: cannot sync the directory: %s", dir, strerror(errno));
	close(fd);
	return rc;
}

int lm_fs_sync_parent(const char *path)
{
	const char *base;
	char *dir;
	int rc;

	if ((rc = split_path(path, &dir, &base)) < 0)
		return rc;
	rc = sync_dir(dir);
	free(dir);
	return rc;
}

#ifdef LM_TEST_HOOKS
/* Test builds only (see fs.h): seconds to sleep mid-write; 0 when unset or malformed. */
static double test_delay(void)
{
	const char *s = getenv("LUME_METAL_TEST_WRITE_DELAY_US");
	char *end;
	unsigned long v;

	if (s == NULL || s[0] == '\0')
		return 0;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || *end != '\0' || v > 10000000UL)
		return 0;
	return (double)v / 1e6;
}
#else
#define test_delay() 0.0
#endif

static int write_all(int fd, const char *p, size_t len)
{
	ssize_t n;

	while (len > 0) {
		n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int lm_fs_write_atomic(const char *path, const void *data, size_t len, mode_t mode)
{
	const char *base;
	char *dir = NULL, *tmp = NULL;
	size_t n, half = len / 2;
	double delay = test_delay();
	int fd = -1, rc;

	if ((rc = split_path(path, &dir, &base)) < 0)
		return rc;
	n = strlen(dir) + strlen(base) + 16;
	if ((tmp = malloc(n)) == NULL) {
		rc = lm_error_nomem();
		goto out;
	}
	snprintf(tmp, n, "%s/.%s.tmp-XXXXXX", dir, base);
	if ((fd = mkstemp(tmp)) < 0) {
		rc = lm_error_set(LM_EIO, "%s: cannot create a temporary file in %s: %s", path, dir, strerror(errno));
		goto out;
	}
	(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
	if (write_all(fd, data, half) != 0)
		goto io_error;
	lm_clock_sleep(delay);
	if (write_all(fd, (const char *)data + half, len - half) != 0 || fchmod(fd, mode) != 0 || lm_fs_flush(fd) != 0)
		goto io_error;
	if (close(fd) != 0) {
		fd = -1;
		goto io_error;
	}
	fd = -1;
	lm_clock_sleep(delay);
	if (rename(tmp, path) != 0)
		goto io_error;
	rc = sync_dir(dir);
	goto out;

io_error:
	rc = lm_error_set(LM_EIO, "%s: cannot write: %s (the file is unchanged)", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	fd = -1;
	unlink(tmp);
out:
	free(tmp);
	free(dir);
	return rc;
}

/* Every missing ancestor of `path` including `path` itself, outermost first. */
static int missing_including(const char *path, char ***out)
{
	char *copy, **list = NULL, **grown;
	size_t count = 0, i;
	struct stat sb;
	char *p;
	int rc = 0;

	*out = NULL;
	if ((copy = strdup(path)) == NULL)
		return lm_error_nomem();
	/* Walk up from the full path until an existing ancestor is found. */
	for (;;) {
		while ((p = strrchr(copy, '/')) != NULL && p != copy && p[1] == '\0')
			*p = '\0';
		if (copy[0] == '\0' || stat(copy, &sb) == 0)
			break;
		if (errno != ENOENT) {
			rc = lm_error_set(LM_EIO, "%s: %s", copy, strerror(errno));
			goto fail;
		}
		if ((grown = realloc(list, (count + 2) * sizeof(*list))) == NULL) {
			rc = lm_error_nomem();
			goto fail;
		}
		list = grown;
		list[count + 1] = NULL;
		if ((list[count] = strdup(copy)) == NULL) {
			rc = lm_error_nomem();
			goto fail;
		}
		count++;
		if ((p = strrchr(copy, '/')) == NULL)
			break;
		if (p == copy) {
			p[1] = '\0';
			continue;
		}
		*p = '\0';
	}
	free(copy);
	/* Reverse: outermost first. */
	for (i = 0; i < count / 2; i++) {
		p = list[i];
		list[i] = list[count - 1 - i];
		list[count - 1 - i] = p;
	}
	*out = list;
	return 0;
fail:
	free(copy);
	if (list != NULL)
		list[count] = NULL;
	lm_strv_free(list);
	return rc;
}

int lm_fs_missing_dirs(const char *path, char ***missing)
{
	const char *base;
	char *dir;
	int rc;

	*missing = NULL;
	if ((rc = split_path(path, &dir, &base)) < 0)
		return rc;
	rc = missing_including(dir, missing);
	free(dir);
	return rc;
}

int lm_fs_mkdir_p(const char *path, mode_t mode, char ***created)
{
	char **missing = NULL;
	struct stat sb;
	size_t i;
	int rc;

	if (created != NULL)
		*created = NULL;
	if ((rc = missing_including(path, &missing)) < 0)
		return rc;
	for (i = 0; missing != NULL && missing[i] != NULL; i++) {
		if (mkdir(missing[i], mode) != 0 && errno != EEXIST) {
			rc = lm_error_set(LM_EIO, "%s: cannot create the directory: %s", missing[i], strerror(errno));
			break;
		}
	}
	if (rc == 0 && (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode)))
		rc = lm_error_set(LM_EIO, "%s: exists and is not a directory", path);
	if (rc == 0 && created != NULL) {
		*created = missing;
		missing = NULL;
	}
	lm_strv_free(missing);
	return rc;
}

int lm_fs_mkdir_private(const char *path)
{
	return lm_fs_mkdir_p(path, 0700, NULL);
}

int lm_fs_remove(const char *path)
{
	if (unlink(path) != 0) {
		if (errno == ENOENT)
			return 0;
		return lm_error_set(LM_EIO, "%s: cannot remove: %s", path, strerror(errno));
	}
	return lm_fs_sync_parent(path);
}

void lm_fs_remove_stale_temps(const char *path)
{
	const char *base;
	char *dir, *prefix, full[PATH_MAX];
	struct dirent *de;
	size_t plen;
	DIR *d;

	if (split_path(path, &dir, &base) < 0)
		return;
	plen = strlen(base) + 7;
	if ((prefix = malloc(plen)) == NULL) {
		free(dir);
		return;
	}
	snprintf(prefix, plen, ".%s.tmp-", base);
	if ((d = opendir(dir)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			/* mkstemp's suffix is exactly six characters. */
			if (strncmp(de->d_name, prefix, plen - 1) != 0 || strlen(de->d_name) != plen - 1 + 6)
				continue;
			if (lm_path_join_buf(full, sizeof(full), dir, de->d_name, NULL) == 0)
				unlink(full);
		}
		closedir(d);
	}
	free(prefix);
	free(dir);
}

/* timeout < 0: no limit; ctx (may be NULL) asked to cancel: LM_ECANCELED. */
/* Whether the file open as fd is still the one at path (a lock file removed while its next holder
 * waited is not). */
static int still_at(int fd, const char *path)
{
	struct stat here, there;

	if (stat(path, &there) != 0)
		return errno != ENOENT;
	return fstat(fd, &here) != 0 || (here.st_dev == there.st_dev && here.st_ino == there.st_ino);
}

/* waiting: the vm and holder lm_fs_lock_wait reports while it waits, or NULL. */
static int lock_file(const char *path, int how, double timeout, const lm_context *ctx, const char *what,
    const char *const waiting[2], int *fd_out)
{
	double start = lm_clock_monotonic(), deadline = start + timeout, reported = 0;
	struct stat sb;
	long wait_ms = 1;
	int fd, rc = 0;

	*fd_out = -1;
	/* O_NONBLOCK and O_NOFOLLOW: a FIFO or a symlink planted at the lock's name is refused, not
	 * waited on or followed. */
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600)) < 0)
		return lm_error_set(LM_EIO, "%s: cannot open the lock file: %s", path, strerror(errno));
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return lm_error_set(LM_EIO, "%s: the lock file is not a regular file; remove it", path);
	}
	/* Poll rather than block, so that a stuck holder becomes a clear error, not a hang. */
	while (flock(fd, how | LOCK_NB) != 0) {
		if (errno != EWOULDBLOCK && errno != EINTR) {
			rc = lm_error_set(LM_EIO, "%s: cannot lock: %s", path, strerror(errno));
			break;
		}
		if (waiting != NULL)
			lm_context_waiting(ctx, waiting[0], "wait-lock", start, &reported, waiting[1]);
		if (lm_context_check_cancel(ctx, what) < 0) {
			/* `what` names the lock ("this VM's lock"): said as the wait it ended */
			rc = lm_error_set(LM_ECANCELED, "canceled while waiting for %s; nothing was changed", what);
			break;
		}
		if (timeout >= 0 && lm_clock_monotonic() >= deadline) {
			rc = lm_error_set(LM_ELOCKED, "%s: another lume-metal process has held %s for more than %.0f s; "
			    "wait for it to finish and try again", path, what, timeout);
			break;
		}
		/* Short naps: a holder keeps the journal's lock a few milliseconds, and sixteen workers of
		 * one fleet run queue for it; naps of 32 ms left it idle most of the time (one VM's
		 * preference step every 30 ms). A flock attempt every 4 ms costs nothing. */
		lm_clock_sleep((double)wait_ms / 1000);
		if (wait_ms < 4)
			wait_ms *= 2;
	}
	if (rc < 0) {
		close(fd);
		return rc;
	}
	/* A lock file is removed only by a holder of it (lm_vm_lock_drop): a file no longer at its
	 * path was dropped while this process waited, and locks nothing; the one there now does. */
	if (!still_at(fd, path)) {
		close(fd);
		return lock_file(path, how, timeout, ctx, what, waiting, fd_out);
	}
	if (waiting != NULL)
		lm_trace(ctx, waiting[0], "vm-lock-wait", start);
	*fd_out = fd;
	return 0;
}

int lm_fs_lock(const char *path, int how, double timeout, const char *what, int *fd_out)
{
	return lock_file(path, how, timeout, NULL, what, NULL, fd_out);
}

int lm_fs_lock_wait(const char *path, int how, const lm_context *ctx, const char *what, const char *vm,
    const char *holder, int *fd_out)
{
	const char *const waiting[2] = {vm, holder};

	return lock_file(path, how, -1, ctx, what, waiting, fd_out);
}

void lm_fs_unlock(int fd)
{
	if (fd >= 0)
		close(fd); /* releases the flock */
}
