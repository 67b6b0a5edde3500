/* SHA-256 against the FIPS 180-4 / NIST example vectors, incremental updates, and files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "lume-metal/error.h"
#include "sha256.h"
#include "lm_test.h"

static void assert_hex(const uint8_t digest[32], const char *want)
{
	char hex[65];

	lm_sha256_hex(digest, hex);
	assert_string_equal(hex, want);
}

static void test_empty(void **state)
{
	uint8_t d[32];

	lm_sha256("", 0, d);
	assert_hex(d, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

static void test_abc(void **state)
{
	uint8_t d[32];

	lm_sha256("abc", 3, d);
	assert_hex(d, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

static void test_448_bits(void **state)
{
	static const char msg[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	uint8_t d[32];

	assert_int_equal(strlen(msg) * 8, 448);
	lm_sha256(msg, strlen(msg), d);
	assert_hex(d, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

static void test_896_bits(void **state)
{
	static const char msg[] = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
	uint8_t d[32];

	lm_sha256(msg, strlen(msg), d);
	assert_hex(d, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

static void test_million_a(void **state)
{
	static const char want[] = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
	char *buf = malloc(1000000);
	lm_sha256_ctx c;
	uint8_t d[32];
	int i;

	assert_non_null(buf);
	memset(buf, 'a', 1000000);
	lm_sha256(buf, 1000000, d);
	assert_hex(d, want);
	/* The same in uneven pieces: every split point of the block buffer is exercised. */
	lm_sha256_init(&c);
	for (i = 0; i < 1000000;) {
		int n = 1 + (i % 97);
		if (i + n > 1000000)
			n = 1000000 - i;
		lm_sha256_update(&c, buf + i, (size_t)n);
		i += n;
	}
	lm_sha256_final(&c, d);
	assert_hex(d, want);
	free(buf);
}

static void test_padding_boundaries(void **state)
{
	/* Lengths around the 55/56/64-byte padding edges, one-shot vs byte by byte. */
	uint8_t buf[130], a[32], b[32];
	lm_sha256_ctx c;
	size_t len, i;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 7 + 3);
	for (len = 50; len <= 130; len++) {
		lm_sha256(buf, len, a);
		lm_sha256_init(&c);
		for (i = 0; i < len; i++)
			lm_sha256_update(&c, buf + i, 1);
		lm_sha256_final(&c, b);
		assert_memory_equal(a, b, 32);
	}
	/* 55 and 56 bytes of 'a': one and two final blocks. */
	memset(buf, 'a', 56);
	lm_sha256(buf, 55, a);
	assert_hex(a, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
	lm_sha256(buf, 56, a);
	assert_hex(a, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
}

static void test_file(void **state)
{
	char path[] = "/tmp/lm-sha256-XXXXXX";
	uint8_t d[32];
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "abc", 3), 3);
	close(fd);
	lm_assert_ok(lm_sha256_file(path, d));
	assert_hex(d, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	unlink(path);
	lm_assert_fails(lm_sha256_file(path, d), LM_ENOTFOUND);
	lm_assert_error_has(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_abc),
		cmocka_unit_test(test_448_bits),
		cmocka_unit_test(test_896_bits),
		cmocka_unit_test(test_million_a),
		cmocka_unit_test(test_padding_boundaries),
		cmocka_unit_test(test_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
