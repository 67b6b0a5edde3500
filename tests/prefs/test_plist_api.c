/* libplist's API across its versions (common/deps/lm_plist_api.h): each switch decided at
 * configure time must do what the version's real functions do. The oracle is libplist's XML form,
 * which no switch touches: a date written as text must read as the right Unix time, and a date
 * made through the switch must write as the right text. A wrong switch fails here (wrong epoch) or
 * fails to compile (a function the headers do not declare; -Werror for a deprecated one). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "lm_plist_api.h"

#define XML_HEAD "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\">"

static plist_t from_xml(const char *xml)
{
	plist_t p = NULL;

	plist_from_xml(xml, (uint32_t)strlen(xml), &p);
	assert_non_null(p);
	return p;
}

/* 2024-02-29T12:34:56Z is 1709210096 s after the Unix epoch; 1999-12-31T23:59:59Z is before
 * Apple's epoch (a negative count in libplist's own form). */
static void test_date_reads_as_unix_time(void **state)
{
	plist_t p;

	(void)state;
	p = from_xml(XML_HEAD "<date>2024-02-29T12:34:56Z</date></plist>");
	assert_int_equal(plist_get_node_type(p), PLIST_DATE);
	assert_int_equal(lm_plist_date_unix(p), 1709210096);
	plist_free(p);
	p = from_xml(XML_HEAD "<date>1999-12-31T23:59:59Z</date></plist>");
	assert_int_equal(lm_plist_date_unix(p), 946684799);
	plist_free(p);
}

static void test_new_date_writes_its_text(void **state)
{
	plist_t p = lm_plist_new_date_unix(1709210096);
	char *xml = NULL;
	uint32_t len = 0;

	(void)state;
	assert_non_null(p);
	plist_to_xml(p, &xml, &len);
	assert_non_null(xml);
	assert_non_null(strstr(xml, "<date>2024-02-29T12:34:56Z</date>"));
	lm_plist_mem_free(xml);
	plist_free(p);
}

/* XML and binary are both read; anything else gives NULL, never a partial tree. */
static void test_from_memory_both_forms(void **state)
{
	static const char xml[] = XML_HEAD "<dict><key>k</key><integer>7</integer></dict></plist>";
	static const char junk[] = "neither XML nor bplist";
	plist_t p = NULL, q = NULL;
	char *bin = NULL;
	uint32_t len = 0;
	uint64_t v = 0;

	(void)state;
	lm_plist_from_memory(xml, (uint32_t)strlen(xml), &p);
	assert_non_null(p);
	plist_to_bin(p, &bin, &len);
	assert_non_null(bin);
	assert_memory_equal(bin, "bplist00", 8);
	lm_plist_from_memory(bin, len, &q);
	lm_plist_mem_free(bin);
	assert_non_null(q);
	plist_get_uint_val(plist_dict_get_item(q, "k"), &v);
	assert_int_equal(v, 7);
	plist_free(q);
	plist_free(p);
	p = (plist_t)1; /* the wrapper must clear it */
	lm_plist_from_memory(junk, (uint32_t)strlen(junk), &p);
	assert_null(p);
	lm_plist_mem_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_date_reads_as_unix_time),
		cmocka_unit_test(test_new_date_writes_its_text),
		cmocka_unit_test(test_from_memory_both_forms),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
