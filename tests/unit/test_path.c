/* The one path join (host/lib/core/path.c): parts joined as given, and a result that does not fit
 * its room is an error naming the limit, never a shorter path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lume-metal/error.h"
#include "path.h"

static void test_joins_as_given(void **state)
{
	char buf[64], *p;

	(void)state;
	assert_int_equal(lm_path_join(&p, "/state", "state.json", NULL), 0);
	assert_string_equal(p, "/state/state.json");
	free(p);
	assert_int_equal(lm_path_join(&p, "/home/u/.tart", "vms", "vm-1", "config.json", NULL), 0);
	assert_string_equal(p, "/home/u/.tart/vms/vm-1/config.json");
	free(p);
	/* Nothing is cleaned up: the same as the "%s/%s" it replaces. */
	assert_int_equal(lm_path_join(&p, "/", "x", NULL), 0);
	assert_string_equal(p, "//x");
	free(p);
	assert_int_equal(lm_path_join(&p, "only", NULL), 0);
	assert_string_equal(p, "only");
	free(p);
	assert_int_equal(lm_path_join_buf(buf, sizeof(buf), "dir", "a b", "c", NULL), 0);
	assert_string_equal(buf, "dir/a b/c");
}

static void test_buffer_exactly_or_error(void **state)
{
	char buf[8] = "garbage";

	(void)state;
	/* "abc/def" is 7 bytes: with its NUL, exactly 8. */
	assert_int_equal(lm_path_join_buf(buf, sizeof(buf), "abc", "def", NULL), 0);
	assert_string_equal(buf, "abc/def");
	/* One byte more: an error, and no "abc/def" standing in for "abc/defg". */
	assert_int_equal(lm_path_join_buf(buf, sizeof(buf), "abc", "defg", NULL), LM_EINVALID);
	assert_string_equal(buf, "");
	assert_string_equal(lm_error_last()->message, "a path under 'abc' would be longer than 7 bytes (the limit)");
	assert_int_equal(lm_path_join_buf(buf, 0, "a", "b", NULL), LM_EINVALID);
}

static void test_new_string_up_to_path_max(void **state)
{
	char *dir = malloc(PATH_MAX), *p = (char *)"untouched";
	size_t n = PATH_MAX - 3; /* dir + "/x" is PATH_MAX - 1 bytes: the longest a system call takes */

	(void)state;
	assert_non_null(dir);
	memset(dir, 'd', n);
	dir[n] = '\0';
	assert_int_equal(lm_path_join(&p, dir, "x", NULL), 0);
	assert_int_equal(strlen(p), PATH_MAX - 1);
	free(p);
	assert_int_equal(lm_path_join(&p, dir, "xy", NULL), LM_EINVALID);
	assert_null(p);
	assert_non_null(strstr(lm_error_last()->message, "would be longer than"));
	assert_non_null(strstr(lm_error_last()->message, "bytes (the limit)"));
	/* The message shows the start of the path, not all of it. */
	assert_true(strlen(lm_error_last()->message) < 200);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_joins_as_given),
		cmocka_unit_test(test_buffer_exactly_or_error),
		cmocka_unit_test(test_new_string_up_to_path_max),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
