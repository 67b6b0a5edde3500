/* The one bounded buffer (common/interface/buf.h): it holds exactly what was added up to its
 * limit, and past the limit it fails with LM_ETOOLARGE naming the limit instead of cutting. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "buf.h"

static void test_adds_and_takes(void **state)
{
	lm_buf b;
	char *s;
	size_t len;

	(void)state;
	lm_buf_init(&b, 64);
	assert_string_equal(lm_buf_ptr(&b), "");
	assert_int_equal(lm_buf_len(&b), 0);
	assert_int_equal(lm_buf_add(&b, "ab", 2), 0);
	assert_int_equal(lm_buf_adds(&b, "cd"), 0);
	assert_int_equal(lm_buf_addf(&b, "-%d-%s", 42, "x"), 0);
	assert_int_equal(lm_buf_add(&b, "", 0), 0);
	assert_string_equal(lm_buf_ptr(&b), "abcd-42-x");
	assert_int_equal(lm_buf_len(&b), 9);
	assert_int_equal(lm_buf_error(&b), 0);
	assert_int_equal(lm_buf_take(&b, &s, &len), 0);
	assert_string_equal(s, "abcd-42-x");
	assert_int_equal(len, 9);
	free(s);
	/* Taken: empty again, with its limit. */
	assert_int_equal(lm_buf_len(&b), 0);
	assert_int_equal(b.limit, 64);
	/* Nothing added: "" (never NULL). */
	assert_int_equal(lm_buf_take(&b, &s, &len), 0);
	assert_string_equal(s, "");
	assert_int_equal(len, 0);
	free(s);
}

static void test_binary_bytes_kept(void **state)
{
	static const char bytes[] = {'a', '\0', 'b', '\n', '\xff'};
	lm_buf b;
	char *s;
	size_t len;

	(void)state;
	lm_buf_init(&b, sizeof(bytes));
	assert_int_equal(lm_buf_add(&b, bytes, sizeof(bytes)), 0);
	assert_int_equal(lm_buf_take(&b, &s, &len), 0);
	assert_int_equal(len, sizeof(bytes));
	assert_memory_equal(s, bytes, sizeof(bytes));
	assert_int_equal(s[len], '\0'); /* terminated after the bytes */
	free(s);
}

static void test_exactly_the_limit_fits(void **state)
{
	char text[100];
	lm_buf b;
	size_t i;

	(void)state;
	memset(text, 'z', sizeof(text));
	lm_buf_init(&b, sizeof(text));
	for (i = 0; i < sizeof(text); i++)
		assert_int_equal(lm_buf_add(&b, text + i, 1), 0);
	assert_int_equal(lm_buf_len(&b), sizeof(text));
	assert_memory_equal(lm_buf_ptr(&b), text, sizeof(text));
	lm_buf_dispose(&b);
	lm_buf_init(&b, 5);
	assert_int_equal(lm_buf_addf(&b, "%05d", 7), 0);
	assert_string_equal(lm_buf_ptr(&b), "00007");
	lm_buf_dispose(&b);
}

static void test_one_byte_over_fails_naming_the_limit(void **state)
{
	lm_buf b;
	char *s = (char *)"untouched";
	size_t len = 7;

	(void)state;
	lm_buf_init(&b, 10);
	assert_int_equal(lm_buf_adds(&b, "0123456789"), 0);
	assert_int_equal(lm_buf_add(&b, "x", 1), LM_ETOOLARGE);
	assert_int_equal(lm_error_last()->code, LM_ETOOLARGE);
	assert_string_equal(lm_error_last()->message, "more than 10 bytes (the limit)");
	assert_string_equal(lm_error_name(LM_ETOOLARGE), "too-large");
	/* Nothing is kept: no partial result can pass for a whole one. */
	assert_string_equal(lm_buf_ptr(&b), "");
	assert_int_equal(lm_buf_len(&b), 0);
	/* Sticky: later adds, even ones that would fit, fail the same way; so does the take. */
	lm_error_clear();
	assert_int_equal(lm_buf_add(&b, "", 0), LM_ETOOLARGE);
	assert_int_equal(lm_buf_adds(&b, "a"), LM_ETOOLARGE);
	assert_int_equal(lm_buf_addf(&b, "%s", "b"), LM_ETOOLARGE);
	assert_int_equal(lm_error_last()->code, LM_OK); /* the message was set once, at the failure */
	assert_int_equal(lm_buf_error(&b), LM_ETOOLARGE);
	assert_int_equal(lm_buf_take(&b, &s, &len), LM_ETOOLARGE);
	assert_null(s);
	assert_int_equal(len, 0);
	/* The take leaves it empty and usable again. */
	assert_int_equal(lm_buf_error(&b), 0);
	assert_int_equal(lm_buf_adds(&b, "fits"), 0);
	assert_string_equal(lm_buf_ptr(&b), "fits");
	lm_buf_dispose(&b);
}

static void test_formatted_text_past_the_limit_is_not_cut(void **state)
{
	char big[1000];
	lm_buf b;
	char *s;

	(void)state;
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	/* Far more than any stack buffer inside: formatted whole. */
	lm_buf_init(&b, 2000);
	assert_int_equal(lm_buf_addf(&b, "<%s>", big), 0);
	assert_int_equal(lm_buf_len(&b), sizeof(big) + 1);
	assert_int_equal(lm_buf_take(&b, &s, NULL), 0);
	assert_int_equal(s[0], '<');
	assert_int_equal(s[sizeof(big)], '>');
	free(s);
	/* One byte too long for the limit: an error, not the first 999 bytes. */
	lm_buf_init(&b, sizeof(big));
	assert_int_equal(lm_buf_addf(&b, "<%s>", big), LM_ETOOLARGE);
	assert_int_equal(lm_buf_len(&b), 0);
	assert_int_equal(lm_buf_take(&b, &s, NULL), LM_ETOOLARGE);
	assert_null(s);
}

static void test_limit_zero_and_huge_adds(void **state)
{
	lm_buf b;

	(void)state;
	lm_buf_init(&b, 0);
	assert_int_equal(lm_buf_add(&b, "", 0), 0);
	assert_int_equal(lm_buf_add(&b, "a", 1), LM_ETOOLARGE);
	assert_string_equal(lm_error_last()->message, "more than 0 bytes (the limit)");
	lm_buf_dispose(&b);
	/* A length that would overflow len + n is refused by the limit, not wrapped around. */
	lm_buf_init(&b, 16);
	assert_int_equal(lm_buf_adds(&b, "abc"), 0);
	assert_int_equal(lm_buf_add(&b, "x", SIZE_MAX), LM_ETOOLARGE);
	lm_buf_dispose(&b);
}

static void test_reset_and_dispose(void **state)
{
	lm_buf b;

	(void)state;
	lm_buf_init(&b, 4);
	assert_int_equal(lm_buf_adds(&b, "abcde"), LM_ETOOLARGE);
	lm_buf_reset(&b);
	assert_int_equal(lm_buf_error(&b), 0);
	assert_int_equal(lm_buf_adds(&b, "abcd"), 0);
	lm_buf_reset(&b);
	assert_string_equal(lm_buf_ptr(&b), "");
	assert_int_equal(lm_buf_adds(&b, "wxyz"), 0);
	assert_string_equal(lm_buf_ptr(&b), "wxyz");
	lm_buf_dispose(&b);
	assert_null(b.data);
	assert_int_equal(b.limit, 4);
	lm_buf_dispose(&b); /* twice is fine */
}

static void test_large_growth(void **state)
{
	const size_t n = 1u << 20;
	lm_buf b;
	char *s;
	size_t len, i;

	(void)state;
	lm_buf_init(&b, n);
	for (i = 0; i < n / 8; i++)
		assert_int_equal(lm_buf_add(&b, "01234567", 8), 0);
	assert_int_equal(lm_buf_take(&b, &s, &len), 0);
	assert_int_equal(len, n);
	for (i = 0; i < n; i++)
		if (s[i] != (char)('0' + i % 8))
			fail_msg("byte %zu is %c", i, s[i]);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_adds_and_takes),
		cmocka_unit_test(test_binary_bytes_kept),
		cmocka_unit_test(test_exactly_the_limit_fits),
		cmocka_unit_test(test_one_byte_over_fails_naming_the_limit),
		cmocka_unit_test(test_formatted_text_past_the_limit_is_not_cut),
		cmocka_unit_test(test_limit_zero_and_huge_adds),
		cmocka_unit_test(test_reset_and_dispose),
		cmocka_unit_test(test_large_growth),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
