/* The one reader of outside property lists (host/lib/core/interface/plist_read.h): nesting bounded
 * and NULs refused on the raw bytes, before libplist (which recurses per level, and cuts a binary
 * plist's ASCII string at a NUL) sees them. Found by issue 49: a file 50,000 deep crashed every
 * command (stack overflow), and {"a": 1, "a\0b": 2} was written back as two keys "a". */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error_internal.h"
#include "plist_read.h"
#include "lm_test.h"

/* ---- a binary plist written by hand: 4-byte offsets and references ---- */

typedef struct {
	unsigned char *data;
	size_t len, cap;
	uint32_t *offsets;
	size_t nobj, objcap;
} bp;

static void bp_put(bp *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2 + 64;
		b->data = realloc(b->data, b->cap);
		assert_non_null(b->data);
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

static void bp_be(bp *b, uint64_t v, size_t n)
{
	unsigned char x[8];
	size_t i;

	for (i = 0; i < n; i++)
		x[i] = (unsigned char)(v >> (8 * (n - 1 - i)));
	bp_put(b, x, n);
}

static void bp_init(bp *b)
{
	memset(b, 0, sizeof(*b));
	bp_put(b, "bplist00", 8);
}

/* Starts object number b->nobj: its marker (type, count) at the current end. */
static void bp_object(bp *b, unsigned type, uint64_t count)
{
	unsigned char m;

	if (b->nobj == b->objcap) {
		b->objcap = b->objcap * 2 + 16;
		b->offsets = realloc(b->offsets, b->objcap * sizeof(*b->offsets));
		assert_non_null(b->offsets);
	}
	b->offsets[b->nobj++] = (uint32_t)b->len;
	if (count < 15) {
		m = (unsigned char)(type << 4 | count);
		bp_put(b, &m, 1);
	} else {
		m = (unsigned char)(type << 4 | 0xf);
		bp_put(b, &m, 1);
		m = 0x12; /* a 4-byte integer: the count */
		bp_put(b, &m, 1);
		bp_be(b, count, 4);
	}
}

static void bp_ascii(bp *b, const char *s, size_t n)
{
	bp_object(b, 0x5, n);
	bp_put(b, s, n);
}

/* The offset table and the trailer; the bytes in *len, free with free(). */
static char *bp_finish(bp *b, uint64_t top, size_t *len)
{
	size_t table = b->len, i;
	static const unsigned char pad[6];

	for (i = 0; i < b->nobj; i++)
		bp_be(b, b->offsets[i], 4);
	bp_put(b, pad, sizeof(pad));
	bp_be(b, 4, 1);
	bp_be(b, 4, 1);
	bp_be(b, b->nobj, 8);
	bp_be(b, top, 8);
	bp_be(b, table, 8);
	free(b->offsets);
	*len = b->len;
	return (char *)b->data;
}

/* The arrays and dictionaries nested in what libplist built, following the arrays' items and the
 * key "Deep" (the reader bounded the tree, so this recursion is bounded too). */
static unsigned tree_depth(plist_t node)
{
	unsigned best = 0, d;
	uint32_t i;

	if (plist_get_node_type(node) == PLIST_DICT)
		return 1 + (plist_dict_get_item(node, "Deep") != NULL ? tree_depth(plist_dict_get_item(node, "Deep")) : 0);
	if (plist_get_node_type(node) != PLIST_ARRAY)
		return 0;
	for (i = 0; i < plist_array_get_size(node); i++)
		if ((d = tree_depth(plist_array_get_item(node, i))) > best)
			best = d;
	return best + 1;
}

static void expect_read(const char *data, size_t len, unsigned depth)
{
	plist_t p = NULL;
	lm_plist_flaw flaw = LM_PLIST_NOT_PLIST;

	lm_assert_ok(lm_plist_read(data, len, "test input", &p, &flaw));
	assert_int_equal(flaw, LM_PLIST_FINE);
	assert_non_null(p);
	if (depth > 0)
		assert_int_equal(tree_depth(p), depth);
	plist_free(p);
}

static void expect_refused(const char *data, size_t len, lm_plist_flaw want, const char *says)
{
	plist_t p = (plist_t)1;
	lm_plist_flaw flaw = LM_PLIST_FINE;

	assert_int_equal(lm_plist_read(data, len, "test input", &p, &flaw), LM_EINVALID);
	assert_null(p);
	assert_int_equal(flaw, want);
	lm_assert_error_has("test input");
	lm_assert_error_has(says);
}

/* 512 arrays and dictionaries (macOS's own limit) read; 513 and 50,000 are refused, never a crash. */
static void depth_is_bounded(int binary)
{
	static const unsigned refused[] = {LM_PLIST_MAX_DEPTH + 1, 50000};
	size_t len, i;
	char *d;

	d = lm_test_deep_plist(LM_PLIST_MAX_DEPTH, binary, &len);
	expect_read(d, len, LM_PLIST_MAX_DEPTH);
	free(d);
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		d = lm_test_deep_plist(refused[i], binary, &len);
		expect_refused(d, len, LM_PLIST_TOO_DEEP, "more than 512 deep");
		free(d);
	}
}

static void test_depth_is_bounded_xml(void **state)
{
	(void)state;
	depth_is_bounded(0);
}

static void test_depth_is_bounded_binary(void **state)
{
	(void)state;
	depth_is_bounded(1);
}

/* Only nesting that libplist builds counts: empty containers, comments, CDATA, processing
 * instructions and attribute values hold no level. */
static void test_xml_count_follows_the_markup(void **state)
{
	static const char head[] = "<?xml version=\"1.0\"?><!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" "
	    "\"http://www.apple.com/DTDs/PropertyList-1.0.dtd\"><plist version=\"1.0\"><array>";
	char *x = malloc(200000), *p;
	unsigned i;

	(void)state;
	assert_non_null(x);
	p = x + sprintf(x, "%s", head);
	for (i = 0; i < 1000; i++)
		p += sprintf(p, "<array/><dict/><array /><!-- <array> -->");
	p += sprintf(p, "<string><![CDATA[");
	for (i = 0; i < 1000; i++)
		p += sprintf(p, "<dict>");
	p += sprintf(p, "]]></string><?pi <array><array> ?></array></plist>");
	expect_read(x, (size_t)(p - x), 0);
	free(x);
}

/* Shared objects are walked once (the walk remembers each object's height), and an object that
 * contains itself is no property list (libplist refuses it too), whatever the depth. */
static void test_binary_shared_and_cyclic_objects(void **state)
{
	bp b;
	size_t len;
	char *data;
	unsigned i;

	(void)state;
	/* [A, B]: A is 400 levels, each array holding the next level twice (2^400 paths through 400
	 * objects), B is 513 arrays deep. Walked path by path, A would never end; object by object, the
	 * walk reaches B and refuses it (so libplist, which would build all 2^400 paths, never runs). */
	bp_init(&b);
	bp_object(&b, 0xa, 2);
	bp_be(&b, 1, 4);
	bp_be(&b, 401, 4);
	for (i = 0; i < 400; i++) {
		bp_object(&b, 0xa, i + 1 < 400 ? 2 : 0);
		if (i + 1 < 400) {
			bp_be(&b, i + 2, 4);
			bp_be(&b, i + 2, 4);
		}
	}
	for (i = 0; i < LM_PLIST_MAX_DEPTH; i++) {
		bp_object(&b, 0xa, i + 1 < LM_PLIST_MAX_DEPTH ? 1 : 0);
		if (i + 1 < LM_PLIST_MAX_DEPTH)
			bp_be(&b, 401 + i + 1, 4);
	}
	data = bp_finish(&b, 0, &len);
	expect_refused(data, len, LM_PLIST_TOO_DEEP, "more than 512 deep");
	free(data);
	/* [[<itself>]] */
	bp_init(&b);
	bp_object(&b, 0xa, 1);
	bp_be(&b, 1, 4);
	bp_object(&b, 0xa, 1);
	bp_be(&b, 0, 4);
	data = bp_finish(&b, 0, &len);
	expect_refused(data, len, LM_PLIST_NOT_PLIST, "not a property list");
	free(data);
	/* A reference out of range, a count past the end, a damaged trailer: refused, read safely. */
	bp_init(&b);
	bp_object(&b, 0xa, 2);
	bp_be(&b, 1, 4);
	bp_be(&b, 7, 4);
	bp_object(&b, 0xd, 1000000);
	data = bp_finish(&b, 0, &len);
	expect_refused(data, len, LM_PLIST_NOT_PLIST, "not a property list");
	data[len - 8] = 0x7f; /* the offset table far past the end */
	expect_refused(data, len, LM_PLIST_NOT_PLIST, "not a property list");
	free(data);
}

/* libplist cuts a binary plist's ASCII string at a NUL: a key "a\0b" would read as "a" and merge
 * with the key "a". Such bytes are refused, keys and values alike, ASCII and UTF-16; a NUL byte in
 * data (or in an object nothing refers to) is no string and is read. */
static void test_nul_in_keys_and_strings(void **state)
{
	static const unsigned char utf16_nul[] = {0x00, 'a', 0x00, 0x00, 0x00, 'b'};
	static const unsigned char bytes[] = {0x00, 0x01, 0x00};
	static const char xml_key[] = "<?xml version=\"1.0\"?><plist version=\"1.0\"><dict><key>a</key><integer>1</integer>"
	    "<key>a\0b</key><integer>2</integer></dict></plist>";
	bp b;
	size_t len;
	char *data;
	int value;

	(void)state;
	for (value = 0; value < 2; value++) {
		/* {"a": 1, "a\0b": 2, "Keep": "me"}, or {"a": 1, "x": "a\0b", "Keep": "me"} */
		bp_init(&b);
		bp_object(&b, 0xd, 3);
		bp_be(&b, 1, 4);
		bp_be(&b, 2, 4);
		bp_be(&b, 3, 4);
		bp_be(&b, 4, 4);
		bp_be(&b, 5, 4);
		bp_be(&b, 6, 4);
		bp_ascii(&b, "a", 1);
		bp_ascii(&b, value ? "x" : "a\0b", value ? 1 : 3);
		bp_ascii(&b, "Keep", 4);
		bp_object(&b, 0x1, 0);
		bp_be(&b, 1, 1);
		if (value) {
			bp_ascii(&b, "a\0b", 3);
		} else {
			bp_object(&b, 0x1, 0);
			bp_be(&b, 2, 1);
		}
		bp_ascii(&b, "me", 2);
		data = bp_finish(&b, 0, &len);
		expect_refused(data, len, LM_PLIST_NUL, "NUL character");
		free(data);
	}
	/* ["a\0\0b"] in UTF-16 */
	bp_init(&b);
	bp_object(&b, 0xa, 1);
	bp_be(&b, 1, 4);
	bp_object(&b, 0x6, 3);
	bp_put(&b, utf16_nul, sizeof(utf16_nul));
	data = bp_finish(&b, 0, &len);
	expect_refused(data, len, LM_PLIST_NUL, "NUL character");
	free(data);
	/* [<00 01 00>], and an unreferenced "a\0b" */
	bp_init(&b);
	bp_object(&b, 0xa, 1);
	bp_be(&b, 1, 4);
	bp_object(&b, 0x4, sizeof(bytes));
	bp_put(&b, bytes, sizeof(bytes));
	bp_ascii(&b, "a\0b", 3);
	data = bp_finish(&b, 0, &len);
	expect_read(data, len, 1);
	free(data);
	/* XML allows no NUL anywhere; libplist would cut the key there. */
	expect_refused(xml_key, sizeof(xml_key) - 1, LM_PLIST_NUL, "NUL character");
}

static void test_not_a_plist(void **state)
{
	plist_t p = (plist_t)1;

	(void)state;
	expect_refused("", 0, LM_PLIST_NOT_PLIST, "not a property list");
	expect_refused("bplist00", 8, LM_PLIST_NOT_PLIST, "not a property list");
	expect_refused("just words", 10, LM_PLIST_NOT_PLIST, "not a property list");
	assert_int_equal(lm_plist_read("<plist version=\"1.0\"><true/></plist>", 36, "x", &p, NULL), 0);
	plist_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_depth_is_bounded_xml),
		cmocka_unit_test(test_depth_is_bounded_binary),
		cmocka_unit_test(test_xml_count_follows_the_markup),
		cmocka_unit_test(test_binary_shared_and_cyclic_objects),
		cmocka_unit_test(test_nul_in_keys_and_strings),
		cmocka_unit_test(test_not_a_plist),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
