/* The one base64 (host/lib/core/b64.c): RFC 4648's test vectors, both decoding modes (OpenSSH's
 * wrapped key files; the journal's canonical values), and what each refuses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "b64.h"

static const struct {
	const char *plain, *padded, *bare;
} vectors[] = {
	{"", "", ""},
	{"f", "Zg==", "Zg"},
	{"fo", "Zm8=", "Zm8"},
	{"foo", "Zm9v", "Zm9v"},
	{"foob", "Zm9vYg==", "Zm9vYg"},
	{"fooba", "Zm9vYmE=", "Zm9vYmE"},
	{"foobar", "Zm9vYmFy", "Zm9vYmFy"},
};
#define N_VECTORS (sizeof(vectors) / sizeof(vectors[0]))

static void test_rfc4648_vectors(void **state)
{
	char out[16];
	uint8_t back[16];
	size_t i, n;

	(void)state;
	for (i = 0; i < N_VECTORS; i++) {
		n = strlen(vectors[i].plain);
		assert_int_equal(lm_b64_encoded_len(n, 1), strlen(vectors[i].padded));
		assert_int_equal(lm_b64_encoded_len(n, 0), strlen(vectors[i].bare));
		lm_b64_encode((const uint8_t *)vectors[i].plain, n, out, 1);
		assert_string_equal(out, vectors[i].padded);
		lm_b64_encode((const uint8_t *)vectors[i].plain, n, out, 0);
		assert_string_equal(out, vectors[i].bare);
		/* Both forms decode without flags; only the padded one is canonical. */
		assert_int_equal(lm_b64_decode(vectors[i].padded, strlen(vectors[i].padded), back, sizeof(back), 0), (long)n);
		assert_memory_equal(back, vectors[i].plain, n);
		assert_int_equal(lm_b64_decode(vectors[i].bare, strlen(vectors[i].bare), back, sizeof(back), 0), (long)n);
		assert_memory_equal(back, vectors[i].plain, n);
		if (n > 0) {
			assert_int_equal(lm_b64_decode(vectors[i].padded, strlen(vectors[i].padded), back, sizeof(back),
			                     LM_B64_STRICT), (long)n);
			assert_memory_equal(back, vectors[i].plain, n);
		}
		if (n % 3 != 0)
			assert_int_equal(lm_b64_decode(vectors[i].bare, strlen(vectors[i].bare), back, sizeof(back),
			                     LM_B64_STRICT), -1);
	}
}

static void test_every_byte_round_trips(void **state)
{
	uint8_t all[256], back[256 + 2];
	char text[4 * 86 + 1];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(all); i++)
		all[i] = (uint8_t)i;
	lm_b64_encode(all, sizeof(all), text, 1);
	assert_int_equal(strlen(text), lm_b64_encoded_len(sizeof(all), 1));
	assert_int_equal(lm_b64_decode(text, strlen(text), back, sizeof(back), LM_B64_STRICT), (long)sizeof(all));
	assert_memory_equal(back, all, sizeof(all));
	/* n / 4 * 3 + 2 is always room enough. */
	lm_b64_encode(all, 254, text, 0);
	assert_int_equal(lm_b64_decode(text, strlen(text), back, strlen(text) / 4 * 3 + 2, 0), 254);
}

static void test_lenient_takes_wrapped_lines(void **state)
{
	static const char wrapped[] = "Zm9v\nYmFy\r\n Zm9v\tYg==\n";
	uint8_t back[32];

	(void)state;
	assert_int_equal(lm_b64_decode(wrapped, strlen(wrapped), back, sizeof(back), 0), 10);
	assert_memory_equal(back, "foobarfoob", 10);
	assert_int_equal(lm_b64_decode(wrapped, strlen(wrapped), back, sizeof(back), LM_B64_STRICT), -1);
}

static void test_what_is_refused(void **state)
{
	static const char *const bad_both[] = {"Zm9v!", "Zg=a", "Zg=\nZg==", "Z===", "====", "Zm9vYg==Zg==", "Zm-v"};
	static const char *const bad_strict[] = {"", "Zg", "Zm9vY", "Zm9 v", "Zg=", "Zm9v\n"};
	uint8_t back[32];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad_both) / sizeof(bad_both[0]); i++) {
		if (lm_b64_decode(bad_both[i], strlen(bad_both[i]), back, sizeof(back), 0) != -1)
			fail_msg("'%s' was taken", bad_both[i]);
		if (lm_b64_decode(bad_both[i], strlen(bad_both[i]), back, sizeof(back), LM_B64_STRICT) != -1)
			fail_msg("'%s' was taken (strict)", bad_both[i]);
	}
	for (i = 0; i < sizeof(bad_strict) / sizeof(bad_strict[0]); i++)
		if (lm_b64_decode(bad_strict[i], strlen(bad_strict[i]), back, sizeof(back), LM_B64_STRICT) != -1)
			fail_msg("'%s' was taken (strict)", bad_strict[i]);
	/* A NUL inside is not base64, and nothing is written past out_size. */
	assert_int_equal(lm_b64_decode("Zm\0v", 4, back, sizeof(back), 0), -1);
	back[2] = 0xee;
	assert_int_equal(lm_b64_decode("Zm9v", 4, back, 2, 0), -1);
	assert_int_equal(back[2], 0xee);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc4648_vectors),
		cmocka_unit_test(test_every_byte_round_trips),
		cmocka_unit_test(test_lenient_takes_wrapped_lines),
		cmocka_unit_test(test_what_is_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
