/* Helpers shared by the preference tests: a private temporary directory per test and files. */
#ifndef LM_TEST_PREFS_UTIL_H
#define LM_TEST_PREFS_UTIL_H

#include <stddef.h>

/* mkdtemp under $TMPDIR (or /tmp); the caller frees the path after lm_test_rmtree(). */
char *lm_test_tmpdir(void);
/* Remove a tree (nftw, depth first); missing is fine. */
void lm_test_rmtree(const char *path);
/* "a/b" joined; free(). */
char *lm_test_join(const char *a, const char *b);
/* Whole file into a malloc'ed buffer (NULL when missing). */
char *lm_test_slurp(const char *path, size_t *len);
void lm_test_write(const char *path, const void *data, size_t len);
int lm_test_exists(const char *path);

#endif
