/* The one reader of untrusted lines (common/interface/text.h, issue 51): lm_scan's lines, words
 * and tokens never read past the cursor's length, whatever the bytes (no trailing newline, empty
 * lines, CR, NUL bytes, very long lines), and the strict number parsers take exactly the digits
 * they are given, refusing signs, blanks, trailing bytes and overflow. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "text.h"

/* The next line is `want` (complete: rc 1, or the tail without a newline: rc 2). */
static void next_line_is(lm_scan *s, int rc, const char *want, size_t want_n)
{
	const char *line = NULL;
	size_t n = 99;

	assert_int_equal(lm_scan_line(s, &line, &n), rc);
	assert_int_equal(n, want_n);
	assert_memory_equal(line, want, want_n);
}

static void next_word_is(lm_scan *s, const char *want)
{
	const char *w = NULL;
	size_t n = 99;

	assert_int_equal(lm_scan_word(s, &w, &n), 1);
	assert_int_equal(n, strlen(want));
	assert_memory_equal(w, want, n);
}

static void no_more_words(lm_scan *s)
{
	const char *w = NULL;
	size_t n = 99;

	assert_int_equal(lm_scan_word(s, &w, &n), 0);
	assert_int_equal(lm_scan_left(s), 0);
}

static void test_lines(void **state)
{
	static const char text[] = "one\n\ntwo\r\nthree";
	const char *line;
	size_t n;
	lm_scan s;

	(void)state;
	lm_scan_init(&s, text, sizeof(text) - 1);
	next_line_is(&s, 1, "one", 3);
	next_line_is(&s, 1, "", 0);          /* an empty line is a line */
	next_line_is(&s, 1, "two\r", 4);     /* the CR is the line's */
	next_line_is(&s, 2, "three", 5);     /* no trailing newline: the tail, marked */
	assert_int_equal(lm_scan_line(&s, &line, &n), 0);
	assert_int_equal(lm_scan_line(&s, &line, &n), 0); /* and stays at the end */

	/* Only newlines: as many empty lines, then the end. */
	lm_scan_init(&s, "\n\n", 2);
	next_line_is(&s, 1, "", 0);
	next_line_is(&s, 1, "", 0);
	assert_int_equal(lm_scan_line(&s, &line, &n), 0);

	/* Nothing, and NULL data: no line at all. */
	lm_scan_init(&s, "", 0);
	assert_int_equal(lm_scan_line(&s, &line, &n), 0);
	lm_scan_init(&s, NULL, 10);
	assert_int_equal(lm_scan_left(&s), 0);
	assert_int_equal(lm_scan_line(&s, &line, &n), 0);
}

static void test_lines_never_read_past_the_length(void **state)
{
	/* NUL bytes are bytes like any other; the length, not a terminator, ends the data. */
	static const char text[] = {'a', '\0', 'b', '\n', '\0', '\n', 'c', 'd', '\n', 'X'};
	lm_scan s;
	char *heap;

	(void)state;
	lm_scan_init(&s, text, sizeof(text) - 1); /* the 'X' is past the end */
	next_line_is(&s, 1, "a\0b", 3);
	next_line_is(&s, 1, "\0", 1);
	next_line_is(&s, 1, "cd", 2);
	assert_int_equal(lm_scan_left(&s), 0);

	/* A buffer exactly as long as its bytes, with no terminator (ASan sees any read past it). */
	heap = malloc(5);
	assert_non_null(heap);
	memcpy(heap, "ab\ncd", 5);
	lm_scan_init(&s, heap, 5);
	next_line_is(&s, 1, "ab", 2);
	next_line_is(&s, 2, "cd", 2);
	free(heap);
}

static void test_very_long_line(void **state)
{
	const size_t big = 1u << 20;
	char *text = malloc(big + 2);
	const char *line, *w;
	size_t n;
	lm_scan s, l;

	(void)state;
	assert_non_null(text);
	memset(text, 'x', big);
	text[big] = '\n';
	text[big + 1] = 'y';
	lm_scan_init(&s, text, big + 2);
	assert_int_equal(lm_scan_line(&s, &line, &n), 1);
	assert_int_equal(n, big);
	lm_scan_init(&l, line, n);
	assert_int_equal(lm_scan_word(&l, &w, &n), 1); /* one word, the whole line */
	assert_int_equal(n, big);
	no_more_words(&l);
	next_line_is(&s, 2, "y", 1);
	free(text);
}

static void test_words(void **state)
{
	static const char text[] = "  \t tcp  \t\t127.0.0.1:22\tLISTEN   ";
	lm_scan s;

	(void)state;
	lm_scan_init(&s, text, sizeof(text) - 1);
	next_word_is(&s, "tcp");
	next_word_is(&s, "127.0.0.1:22");
	next_word_is(&s, "LISTEN");
	no_more_words(&s); /* trailing blanks: no word, the cursor at the end */
	no_more_words(&s);

	/* Blanks only, and nothing: no word. */
	lm_scan_init(&s, " \t \t", 4);
	no_more_words(&s);
	lm_scan_init(&s, "", 0);
	no_more_words(&s);

	/* Blanks are ' ' and '\t' only: a CR, a vertical tab or a NUL byte is part of a word. */
	lm_scan_init(&s, "a\rb c\0d\ve\r", 10);
	next_word_is(&s, "a\rb");
	{
		const char *w;
		size_t n;
		assert_int_equal(lm_scan_word(&s, &w, &n), 1);
		assert_int_equal(n, 6);
		assert_memory_equal(w, "c\0d\ve\r", 6);
	}
	no_more_words(&s);

	/* A cursor over part of a buffer stops at its end, not at the buffer's. */
	lm_scan_init(&s, "ab cd", 4);
	next_word_is(&s, "ab");
	next_word_is(&s, "c");
	no_more_words(&s);
}

static void test_tokens(void **state)
{
	const char *t;
	size_t n;
	lm_scan s;

	(void)state;
	/* strtok's tokens: separators in a row, at the start and at the end give no empty token. */
	lm_scan_init(&s, ",,a,,b c,", 9);
	assert_int_equal(lm_scan_token(&s, ",", &t, &n), 1);
	assert_int_equal(n, 1);
	assert_memory_equal(t, "a", 1);
	assert_int_equal(lm_scan_token(&s, ",", &t, &n), 1);
	assert_int_equal(n, 3);
	assert_memory_equal(t, "b c", 3);
	assert_int_equal(lm_scan_token(&s, ",", &t, &n), 0);

	/* Lines cut at CR or LF, as a manager that ends lines with "\r" or "\r\n" prints them. */
	lm_scan_init(&s, "one\r\ntwo\rthree\n\n", 16);
	assert_int_equal(lm_scan_token(&s, "\r\n", &t, &n), 1);
	assert_memory_equal(t, "one", n);
	assert_int_equal(lm_scan_token(&s, "\r\n", &t, &n), 1);
	assert_memory_equal(t, "two", n);
	assert_int_equal(lm_scan_token(&s, "\r\n", &t, &n), 1);
	assert_int_equal(n, 5);
	assert_memory_equal(t, "three", n);
	assert_int_equal(lm_scan_token(&s, "\r\n", &t, &n), 0);

	/* sscanf's white space: every isspace byte; a NUL byte never separates. */
	lm_scan_init(&s, "\n\v\f x\0y\r\n", 9);
	assert_int_equal(lm_scan_token(&s, LM_SCAN_SPACE, &t, &n), 1);
	assert_int_equal(n, 3);
	assert_memory_equal(t, "x\0y", 3);
	assert_int_equal(lm_scan_token(&s, LM_SCAN_SPACE, &t, &n), 0);
	assert_int_equal(lm_scan_left(&s), 0);
}

static void test_span_skip_rest(void **state)
{
	const char *rest;
	size_t n;
	lm_scan s;

	(void)state;
	lm_scan_init(&s, "  pid = 123 tail", 16);
	assert_int_equal(lm_scan_span(&s, " \t"), 2);
	assert_int_equal(lm_scan_span(&s, " \t"), 0);
	assert_int_equal(lm_scan_skip(&s, "pid = 1234567890"), 0); /* longer than what is left */
	assert_int_equal(lm_scan_skip(&s, "pix"), 0);
	assert_int_equal(lm_scan_left(&s), 14); /* unmoved */
	assert_int_equal(lm_scan_skip(&s, "pid = "), 1);
	assert_int_equal(lm_scan_span(&s, "0123456789"), 3);
	assert_int_equal(lm_scan_skip(&s, ""), 1);
	lm_scan_rest(&s, &rest, &n);
	assert_int_equal(n, 5);
	assert_memory_equal(rest, " tail", 5);
	assert_int_equal(lm_scan_left(&s), 0);
	lm_scan_rest(&s, &rest, &n);
	assert_int_equal(n, 0);

	/* A NUL byte is never in a set. */
	lm_scan_init(&s, "\0\0a", 3);
	assert_int_equal(lm_scan_span(&s, " "), 0);
	lm_scan_init(&s, NULL, 0);
	lm_scan_rest(&s, &rest, &n);
	assert_non_null(rest);
	assert_int_equal(n, 0);
}

static void test_parse_u64(void **state)
{
	uint64_t v = 7;

	(void)state;
	assert_int_equal(lm_text_parse_u64("0", 1, 10, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(lm_text_parse_u64("00042", 5, 100, &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(lm_text_parse_u64("18446744073709551615", 20, UINT64_MAX, &v), 0);
	assert_true(v == UINT64_MAX);
	v = 7;
	assert_int_equal(lm_text_parse_u64("18446744073709551616", 20, UINT64_MAX, &v), -1); /* overflow */
	assert_int_equal(lm_text_parse_u64("99999999999999999999999", 23, UINT64_MAX, &v), -1);
	assert_int_equal(lm_text_parse_u64("101", 3, 100, &v), -1);
	assert_int_equal(lm_text_parse_u64("", 0, 100, &v), -1);
	assert_int_equal(lm_text_parse_u64("+1", 2, 100, &v), -1);
	assert_int_equal(lm_text_parse_u64("-1", 2, 100, &v), -1);
	assert_int_equal(lm_text_parse_u64(" 1", 2, 100, &v), -1);
	assert_int_equal(lm_text_parse_u64("1 ", 2, 100, &v), -1);
	assert_int_equal(lm_text_parse_u64("1\0", 2, 100, &v), -1);
	assert_int_equal(v, 7); /* untouched on failure */
	/* only the n bytes given: "12" of "123" */
	assert_int_equal(lm_text_parse_u64("123", 2, 100, &v), 0);
	assert_int_equal(v, 12);
}

static void test_parse_i64(void **state)
{
	int64_t v = 7;

	(void)state;
	assert_int_equal(lm_text_parse_i64("-255", 4, -255, 255, &v), 0);
	assert_int_equal(v, -255);
	assert_int_equal(lm_text_parse_i64("255", 3, -255, 255, &v), 0);
	assert_int_equal(v, 255);
	assert_int_equal(lm_text_parse_i64("-0", 2, 0, 10, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(lm_text_parse_i64("9223372036854775807", 19, INT64_MIN, INT64_MAX, &v), 0);
	assert_true(v == INT64_MAX);
	assert_int_equal(lm_text_parse_i64("-9223372036854775808", 20, INT64_MIN, INT64_MAX, &v), 0);
	assert_true(v == INT64_MIN);
	v = 7;
	assert_int_equal(lm_text_parse_i64("9223372036854775808", 19, INT64_MIN, INT64_MAX, &v), -1);
	assert_int_equal(lm_text_parse_i64("-9223372036854775809", 20, INT64_MIN, INT64_MAX, &v), -1);
	assert_int_equal(lm_text_parse_i64("-99999999999999999999", 21, INT64_MIN, INT64_MAX, &v), -1);
	assert_int_equal(lm_text_parse_i64("-256", 4, -255, 255, &v), -1);
	assert_int_equal(lm_text_parse_i64("256", 3, -255, 255, &v), -1);
	assert_int_equal(lm_text_parse_i64("-1", 2, 0, 10, &v), -1);
	assert_int_equal(lm_text_parse_i64("-", 1, -10, 10, &v), -1);
	assert_int_equal(lm_text_parse_i64("", 0, -10, 10, &v), -1);
	assert_int_equal(lm_text_parse_i64("+1", 2, -10, 10, &v), -1);
	assert_int_equal(lm_text_parse_i64("--1", 3, -10, 10, &v), -1);
	assert_int_equal(lm_text_parse_i64("- 1", 3, -10, 10, &v), -1);
	assert_int_equal(lm_text_parse_i64("1x", 2, -10, 10, &v), -1);
	assert_int_equal(v, 7);
}

static void test_parse_hex(void **state)
{
	uint64_t v = 7;

	(void)state;
	assert_int_equal(lm_text_parse_hex("0A", 2, 0xff, &v), 0);
	assert_int_equal(v, 10);
	assert_int_equal(lm_text_parse_hex("fFfF", 4, 0xffff, &v), 0);
	assert_int_equal(v, 0xffff);
	assert_int_equal(lm_text_parse_hex("0100007F", 8, UINT32_MAX, &v), 0);
	assert_int_equal(v, 0x0100007f);
	assert_int_equal(lm_text_parse_hex("ffffffffffffffff", 16, UINT64_MAX, &v), 0);
	assert_true(v == UINT64_MAX);
	v = 7;
	assert_int_equal(lm_text_parse_hex("10000000000000000", 17, UINT64_MAX, &v), -1); /* overflow */
	assert_int_equal(lm_text_parse_hex("100000000", 9, UINT32_MAX, &v), -1);
	assert_int_equal(lm_text_parse_hex("10000", 5, 0xffff, &v), -1);
	assert_int_equal(lm_text_parse_hex("0x1", 3, 0xff, &v), -1);
	assert_int_equal(lm_text_parse_hex("g", 1, 0xff, &v), -1);
	assert_int_equal(lm_text_parse_hex("", 0, 0xff, &v), -1);
	assert_int_equal(lm_text_parse_hex(" 1", 2, 0xff, &v), -1);
	assert_int_equal(lm_text_parse_hex("-1", 2, 0xff, &v), -1);
	assert_int_equal(v, 7);
}

static void test_scan_u64(void **state)
{
	const char *rest;
	uint64_t v = 7;
	size_t n;
	lm_scan s;

	(void)state;
	/* "pid 4242, enable": the digits, then what follows is the caller's */
	lm_scan_init(&s, "4242, enable", 12);
	assert_int_equal(lm_scan_u64(&s, UINT32_MAX, &v), 0);
	assert_int_equal(v, 4242);
	assert_true(lm_scan_skip(&s, ","));
	/* every digit that comes next is the number's: too many is a failure, not a cut */
	lm_scan_init(&s, "99999999999999999999x", 21);
	v = 7;
	assert_int_equal(lm_scan_u64(&s, UINT64_MAX, &v), -1);
	assert_int_equal(v, 7);
	assert_int_equal(lm_scan_left(&s), 21); /* unmoved */
	lm_scan_init(&s, "4294967296", 10);
	assert_int_equal(lm_scan_u64(&s, UINT32_MAX, &v), -1);
	assert_int_equal(lm_scan_left(&s), 10);
	/* no digit there: a sign, a blank, the end */
	lm_scan_init(&s, "-1", 2);
	assert_int_equal(lm_scan_u64(&s, 10, &v), -1);
	lm_scan_init(&s, " 1", 2);
	assert_int_equal(lm_scan_u64(&s, 10, &v), -1);
	lm_scan_init(&s, "", 0);
	assert_int_equal(lm_scan_u64(&s, 10, &v), -1);
	/* the cursor's length ends the digits: "12" of "123" */
	lm_scan_init(&s, "123", 2);
	assert_int_equal(lm_scan_u64(&s, 1000, &v), 0);
	assert_int_equal(v, 12);
	lm_scan_rest(&s, &rest, &n);
	assert_int_equal(n, 0);
	/* "0.4.1": MAJOR . MINOR */
	lm_scan_init(&s, "0.4.1", 5);
	assert_int_equal(lm_scan_u64(&s, 99, &v), 0);
	assert_int_equal(v, 0);
	assert_true(lm_scan_skip(&s, "."));
	assert_int_equal(lm_scan_u64(&s, 99, &v), 0);
	assert_int_equal(v, 4);
}

static void test_find(void **state)
{
	static const char line[] = "  - default: ~/.lume (default)";

	(void)state;
	assert_ptr_equal(lm_text_find(line, sizeof(line) - 1, ": "), line + 11);
	assert_ptr_equal(lm_text_find(line, sizeof(line) - 1, " (default)"), line + 20);
	assert_null(lm_text_find(line, sizeof(line) - 2, " (default)")); /* only within the n bytes */
	assert_null(lm_text_find(line, 3, "- d"));
	assert_ptr_equal(lm_text_find(line, 4, "- "), line + 2);
	assert_ptr_equal(lm_text_find(line, 0, ""), line);
	assert_null(lm_text_find("", 0, "x"));
	{
		static const char nul[] = "a\0b:";
		assert_ptr_equal(lm_text_find(nul, 4, ":"), nul + 3); /* past a NUL byte too */
	}
}

static void test_is_copy_dupn(void **state)
{
	char out[4] = "zzz", *d;

	(void)state;
	assert_true(lm_text_is("tart-shim", 9, "tart-shim"));
	assert_false(lm_text_is("tart-shim", 8, "tart-shim"));
	assert_false(lm_text_is("tart-shimx", 10, "tart-shim"));
	assert_true(lm_text_is("", 0, ""));
	assert_false(lm_text_is("a\0", 2, "a"));

	assert_int_equal(lm_text_copy(out, sizeof(out), "abcdef", 3), 0);
	assert_string_equal(out, "abc");
	assert_int_equal(lm_text_copy(out, sizeof(out), "abcd", 4), -1); /* never a cut */
	assert_string_equal(out, "");
	assert_int_equal(lm_text_copy(out, sizeof(out), "a\0b", 3), -1); /* nor a NUL inside */
	assert_string_equal(out, "");
	assert_int_equal(lm_text_copy(out, sizeof(out), NULL, 0), 0);
	assert_string_equal(out, "");
	assert_int_equal(lm_text_copy(out, 0, "a", 1), -1);

	d = lm_text_dupn("abcdef", 3);
	assert_non_null(d);
	assert_string_equal(d, "abc");
	free(d);
	d = lm_text_dupn(NULL, 0);
	assert_non_null(d);
	assert_string_equal(d, "");
	free(d);
}

/* A line then its words, as the callers read ps-like output. */
static void test_lines_then_words(void **state)
{
	static const char text[] = "  sl  local_address st\n"
	                           "   0: 0100007F:0016 0A\r\n"
	                           "\n"
	                           "\t\t";
	const char *line, *w;
	size_t n, wn, words = 0, lines = 0;
	lm_scan s, l;
	uint64_t v;

	(void)state;
	lm_scan_init(&s, text, sizeof(text) - 1);
	while (lm_scan_line(&s, &line, &n) != 0) {
		lines++;
		lm_scan_init(&l, line, n);
		while (lm_scan_word(&l, &w, &wn) == 1)
			words++;
	}
	assert_int_equal(lines, 4);
	assert_int_equal(words, 6);
	/* The state word keeps the CR that ended its line: not a hex number. */
	lm_scan_init(&s, text, sizeof(text) - 1);
	assert_int_equal(lm_scan_line(&s, &line, &n), 1);
	assert_int_equal(lm_scan_line(&s, &line, &n), 1);
	lm_scan_init(&l, line, n);
	next_word_is(&l, "0:");
	assert_int_equal(lm_scan_word(&l, &w, &wn), 1);
	assert_int_equal(lm_scan_word(&l, &w, &wn), 1);
	assert_int_equal(lm_text_parse_hex(w, wn, 0xff, &v), -1);
	assert_int_equal(lm_text_parse_hex(w, wn - 1, 0xff, &v), 0);
	assert_int_equal(v, 0x0a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_lines_never_read_past_the_length),
		cmocka_unit_test(test_very_long_line),
		cmocka_unit_test(test_words),
		cmocka_unit_test(test_tokens),
		cmocka_unit_test(test_span_skip_rest),
		cmocka_unit_test(test_parse_u64),
		cmocka_unit_test(test_parse_i64),
		cmocka_unit_test(test_parse_hex),
		cmocka_unit_test(test_scan_u64),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_is_copy_dupn),
		cmocka_unit_test(test_lines_then_words),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
