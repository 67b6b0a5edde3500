#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "error_internal.h"
#include "lm_test.h"

static void test_set_and_prefix(void **state)
{
	(void)state;
	assert_int_equal(lm_error_set(LM_EINVALID, "expected %s", "x"), LM_EINVALID);
	assert_string_equal(lm_error_last()->message, "expected x");
	assert_int_equal(lm_error_prefix("file.json: "), LM_EINVALID);
	assert_string_equal(lm_error_last()->message, "file.json: expected x");
	assert_string_equal(lm_error_name(LM_EINVALID), "invalid");
	lm_error_clear();
	assert_int_equal(lm_error_last()->code, LM_OK);
	assert_string_equal(lm_error_last()->message, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_set_and_prefix)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
