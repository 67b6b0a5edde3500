/* The atomic-write and private-directory helpers (host/lib/state/interface/fs.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error_internal.h"
#include "fs.h"
#include "lm_test.h"

static void test_write_atomic_replaces_whole_file(void **state)
{
	char *dir = lm_test_tmpdir("state"), *path = lm_test_join(dir, "f.txt"), *got;
	struct stat sb;
	size_t len;

	(void)state;
	lm_assert_ok(lm_fs_write_atomic(path, "first version", 13, 0600));
	lm_assert_ok(lm_fs_write_atomic(path, "second", 6, 0640));
	got = lm_test_slurp(path, &len);
	assert_int_equal(len, 6);
	assert_memory_equal(got, "second", 6);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0640);
	free(got);
	/* No temporary file is left behind: the directory is empty once the file is gone. */
	lm_assert_ok(lm_fs_remove(path));
	assert_int_equal(rmdir(dir), 0);
	free(path);
	free(dir);
}

static void test_write_atomic_missing_dir_fails_clearly(void **state)
{
	char *dir = lm_test_tmpdir("state"), *path = lm_test_join(dir, "no/such/f.txt");

	(void)state;
	lm_assert_fails(lm_fs_write_atomic(path, "x", 1, 0600), LM_EIO);
	lm_assert_error_has(path);
	assert_false(lm_test_exists(path));
	lm_test_rmtree(dir);
	free(path);
	free(dir);
}

static void test_mkdir_private_nested(void **state)
{
	char *dir = lm_test_tmpdir("state"), *deep = lm_test_join(dir, "a/b/c"), *file = lm_test_join(dir, "file");
	char *under_file = lm_test_join(file, "x"), **created = NULL, **missing = NULL;
	struct stat sb;

	(void)state;
	lm_assert_ok(lm_fs_missing_dirs(deep, &missing)); /* parents of deep: a, a/b */
	assert_non_null(missing);
	assert_string_equal(strrchr(missing[0], '/'), "/a");
	assert_string_equal(strrchr(missing[1], '/'), "/b");
	assert_null(missing[2]);
	lm_strv_free(missing);

	lm_assert_ok(lm_fs_mkdir_p(deep, 0700, &created));
	assert_non_null(created);
	assert_string_equal(strrchr(created[2], '/'), "/c");
	assert_null(created[3]);
	lm_strv_free(created);
	assert_int_equal(stat(deep, &sb), 0);
	assert_true(S_ISDIR(sb.st_mode));
	assert_int_equal(sb.st_mode & 0777, 0700);
	/* Existing: fine, nothing created. */
	lm_assert_ok(lm_fs_mkdir_p(deep, 0700, &created));
	assert_null(created);
	lm_assert_ok(lm_fs_mkdir_private(deep));
	/* A file in the way is an error. */
	lm_test_write(file, "x", 1);
	lm_assert_fails(lm_fs_mkdir_private(file), LM_EIO);
	assert_true(lm_fs_mkdir_private(under_file) < 0);
	lm_test_rmtree(dir);
	free(under_file);
	free(file);
	free(deep);
	free(dir);
}

static void test_read_file_errors(void **state)
{
	char *dir = lm_test_tmpdir("state"), *path = lm_test_join(dir, "f"), *data = NULL;
	size_t len = 0;

	(void)state;
	lm_assert_fails(lm_fs_read_file(path, 100, &data, &len), LM_ENOTFOUND);
	lm_test_write(path, "0123456789", 10);
	lm_assert_fails(lm_fs_read_file(path, 9, &data, &len), LM_EINVALID);
	assert_null(data);
	lm_assert_ok(lm_fs_read_file(path, 10, &data, &len));
	assert_int_equal(len, 10);
	assert_int_equal(data[10], '\0');
	free(data);
	lm_assert_fails(lm_fs_read_file(dir, 10, &data, &len), LM_EINVALID);
	lm_test_rmtree(dir);
	free(path);
	free(dir);
}

static void test_stale_temps_removed_only_for_that_file(void **state)
{
	char *dir = lm_test_tmpdir("state"), *path = lm_test_join(dir, "s.json");
	char *stale = lm_test_join(dir, ".s.json.tmp-Ab12Cd"), *other = lm_test_join(dir, ".t.json.tmp-Ab12Cd");

	(void)state;
	lm_test_write(stale, "half", 4);
	lm_test_write(other, "half", 4);
	lm_fs_remove_stale_temps(path);
	assert_false(lm_test_exists(stale));
	assert_true(lm_test_exists(other));
	lm_test_rmtree(dir);
	free(other);
	free(stale);
	free(path);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_atomic_replaces_whole_file),
		cmocka_unit_test(test_write_atomic_missing_dir_fails_clearly),
		cmocka_unit_test(test_mkdir_private_nested),
		cmocka_unit_test(test_read_file_errors),
		cmocka_unit_test(test_stale_temps_removed_only_for_that_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
