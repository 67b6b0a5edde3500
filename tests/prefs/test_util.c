/* nftw() is an X/Open extension. */
#define _XOPEN_SOURCE 700
#include "test_util.h"
#include "fs.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *lm_test_tmpdir(void)
{
	const char *base = getenv("TMPDIR");
	char *path = lm_test_join(base != NULL && base[0] == '/' ? base : "/tmp", "lm-prefs-test.XXXXXX");

	if (mkdtemp(path) == NULL) {
		perror("mkdtemp");
		abort();
	}
	return path;
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

void lm_test_rmtree(const char *path)
{
	struct stat sb;

	if (lstat(path, &sb) != 0)
		return;
	chmod(path, 0700);
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

char *lm_test_join(const char *a, const char *b)
{
	size_t n = strlen(a) + strlen(b) + 2;
	char *s = malloc(n);

	if (s == NULL)
		abort();
	snprintf(s, n, "%s/%s", a, b);
	return s;
}

char *lm_test_slurp(const char *path, size_t *len)
{
	char *data = NULL;
	size_t n = 0;

	/* The library's own reader: tests read files exactly as the code under test does. */
	if (lm_fs_read_file(path, 64u << 20, &data, &n) < 0)
		return NULL;
	if (len != NULL)
		*len = n;
	return data;
}

void lm_test_write(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (f == NULL || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
		perror(path);
		abort();
	}
}

int lm_test_exists(const char *path)
{
	struct stat sb;

	return lstat(path, &sb) == 0;
}
