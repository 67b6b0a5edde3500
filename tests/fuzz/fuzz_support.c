#include "fuzz_support.h"
#include "lm_test.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *scratch;
static char path_buf[4096];

void lm_fuzz_fail(const char *what, const char *file, int line)
{
	fprintf(stderr, "%s:%d: property does not hold: %s\n", file, line, what);
	abort();
}

static void remove_scratch(void)
{
	lm_test_rmtree(scratch);
}

const char *lm_fuzz_dir(void)
{
	if (scratch != NULL)
		return scratch;
	/* In memory when possible: the targets rewrite a file per input, and on a disk file system
	 * each rewrite waits for the disk (ext4 flushes a truncated file when it is closed). */
	scratch = lm_test_tmpdir_in(access("/dev/shm", W_OK) == 0 ? "/dev/shm" : NULL, "fuzz");
	atexit(remove_scratch);
	return scratch;
}

const char *lm_fuzz_subdir(const char *name)
{
	static char dir[4096];

	snprintf(dir, sizeof(dir), "%s/%s", lm_fuzz_dir(), name);
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		lm_fuzz_fail("the scratch subdirectory can be created", __FILE__, __LINE__);
	return dir;
}

const char *lm_fuzz_path(const char *name)
{
	const char *slash = strchr(name, '/');

	if (slash != NULL) {
		char sub[128];
		snprintf(sub, sizeof(sub), "%.*s", (int)(slash - name), name);
		(void)lm_fuzz_subdir(sub);
	}
	snprintf(path_buf, sizeof(path_buf), "%s/%s", lm_fuzz_dir(), name);
	return path_buf;
}

void lm_fuzz_write(const char *name, const uint8_t *data, size_t size)
{
	const char *path = lm_fuzz_path(name);
	size_t done = 0;
	ssize_t n;
	int fd;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0)
		lm_fuzz_fail("the scratch file can be written", __FILE__, __LINE__);
	while (done < size) {
		if ((n = write(fd, data + done, size - done)) < 0) {
			if (errno == EINTR)
				continue;
			lm_fuzz_fail("the scratch file can be written", __FILE__, __LINE__);
		}
		done += (size_t)n;
	}
	close(fd);
}

char *lm_fuzz_strdup(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (s == NULL)
		abort();
	if (size > 0)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

void lm_fuzz_options(lm_options *opts)
{
	LM_FUZZ_CHECK(lm_options_init(opts, LM_OPTIONS_VERSION) == 0);
	opts->state_dir = lm_fuzz_dir();
	opts->prefs_dir = lm_fuzz_dir();
}

lm_context *lm_fuzz_context(const lm_options *opts)
{
	lm_context *ctx;

	if (lm_context_new(&ctx, opts) < 0) {
		fprintf(stderr, "fuzz: %s\n", lm_error_last()->message);
		lm_fuzz_fail("a context can be made", __FILE__, __LINE__);
	}
	return ctx;
}
