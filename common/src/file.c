/* Reading local files without ever blocking on a FIFO (file.h). */
#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error_internal.h"

static const char *kind_of(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISCHR(mode) || S_ISBLK(mode))
		return "a device";
	return "not a regular file";
}

int lm_fs_open_read(const char *path, int *fd_out, struct stat *st)
{
	int fd, flags, err;

	*fd_out = -1;
	/* O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting for one. */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)) < 0) {
		err = errno;
		if (err == ENOENT)
			return lm_error_set(LM_ENOTFOUND, "%s: no such file", path);
		return lm_error_set(LM_EIO, "%s: cannot open: %s", path, strerror(err));
	}
	if (fstat(fd, st) != 0) {
		err = errno;
		close(fd);
		return lm_error_set(LM_EIO, "%s: cannot stat: %s", path, strerror(err));
	}
	if (!S_ISREG(st->st_mode)) {
		close(fd);
		return lm_error_set(LM_EINVALID, "%s: not a regular file (%s); give a regular file", path,
		    kind_of(st->st_mode));
	}
	/* A regular file: back to blocking reads, so that a short read only ever means the end. */
	if ((flags = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
		err = errno;
		close(fd);
		return lm_error_set(LM_EIO, "%s: cannot prepare for reading: %s", path, strerror(err));
	}
	*fd_out = fd;
	return 0;
}

static void discard(char *buf, size_t size)
{
	volatile char *p = buf;

	if (buf == NULL)
		return;
	while (size-- > 0)
		*p++ = 0;
	free(buf);
}

int lm_fs_read_file(const char *path, size_t max, char **data, size_t *len)
{
	struct stat sb;
	char *buf = NULL;
	size_t used = 0, cap = 0;
	ssize_t n;
	int fd, rc = 0;

	*data = NULL;
	*len = 0;
	if ((rc = lm_fs_open_read(path, &fd, &sb)) < 0)
		return rc;
	if (sb.st_size < 0 || (unsigned long long)sb.st_size > (unsigned long long)max) {
		rc = lm_error_set(LM_EINVALID, "%s: too large (%lld bytes; at most %zu)", path, (long long)sb.st_size,
		    max);
		goto out;
	}
	/* Sized from fstat; a file that grows while we read is caught by the cap below. */
	cap = (size_t)sb.st_size + 1;
	if ((buf = malloc(cap + 1)) == NULL) {
		rc = lm_error_nomem();
		goto out;
	}
	for (;;) {
		n = read(fd, buf + used, cap - used);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = lm_error_set(LM_EIO, "%s: cannot read: %s", path, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		used += (size_t)n;
		if (used > max) {
			rc = lm_error_set(LM_EINVALID, "%s: too large (more than %zu bytes)", path, max);
			goto out;
		}
		if (used == cap) {
			rc = lm_error_set(LM_EIO, "%s: changed while being read; try again", path);
			goto out;
		}
	}
	buf[used] = '\0';
	*data = buf;
	*len = used;
	buf = NULL;
out:
	discard(buf, cap + 1);
	close(fd);
	return rc;
}
