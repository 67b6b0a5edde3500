/* The family table and the workload rules (reference/metal.md) against published answers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "lume-metal/error.h"
#include "lume-metal/family.h"
#include "lume-metal/family_list.h"
#include "lume-metal/report.h"
#include "lume-metal/workload.h"
#include "lm_test.h"

static void test_family_table(void **state)
{
	static const char *const order[] = {"Apple1", "Apple2", "Apple3", "Apple4", "Apple5", "Apple6", "Apple7",
		"Apple8", "Apple9", "Apple10", "Mac1", "Mac2", "Common1", "Common2", "Common3", "Metal3", "Metal4"};
	static const int values[] = {1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009, 1010, 2001, 2002,
		3001, 3002, 3003, 5001, 5002};
	size_t n = 0, i;
	const lm_family *t = lm_family_table(&n);
	int v = 0;

	(void)state;
	assert_int_equal(n, 17);
	for (i = 0; i < n; i++) {
		assert_string_equal(t[i].name, order[i]);
		assert_int_equal(t[i].value, values[i]);
		assert_string_equal(lm_family_name(values[i]), order[i]);
		lm_assert_ok(lm_family_value(order[i], &v));
		assert_int_equal(v, values[i]);
	}
	assert_non_null(lm_family_table(NULL));
	assert_null(lm_family_name(1011));
	assert_null(lm_family_name(0));
	lm_assert_fails(lm_family_value("apple9", &v), LM_ENOTFOUND); /* case-sensitive */
	assert_string_equal(lm_error_last()->message, "unknown GPU family 'apple9'; did you mean 'Apple9'? (known: "
	    "Apple1, Apple2, Apple3, Apple4, Apple5, Apple6, Apple7, Apple8, Apple9, Apple10, Mac1, Mac2, Common1, "
	    "Common2, Common3, Metal3, Metal4)");
	lm_assert_fails(lm_family_value("Vulkan1", &v), LM_ENOTFOUND);
	lm_assert_not_contains(lm_error_last()->message, "did you mean");
	lm_assert_fails(lm_family_value(NULL, &v), LM_ENOTFOUND);
	assert_int_equal(LM_FAMILY_APPLE_FIRST, 1001);
	assert_int_equal(LM_FAMILY_APPLE_LAST_VALID, 1999);
}

/* A report with the Apple families up to apple_max and the given Metal answers. */
static lm_report *answers(const char *device, int apple_max, int metal3, int metal4)
{
	size_t n, i;
	const lm_family *t = lm_family_table(&n);
	char text[2048];
	size_t o;
	lm_report *r;

	o = (size_t)snprintf(text, sizeof(text), "format=lume-metal-report/1\ndevice=%s\n", device);
	for (i = 0; i < n; i++) {
		int yes = (t[i].value >= 1001 && t[i].value <= apple_max) || (t[i].value == 5001 && metal3) ||
		    (t[i].value == 5002 && metal4);
		o += (size_t)snprintf(text + o, sizeof(text) - o, "family.%s=%d\n", t[i].name, yes);
	}
	o += (size_t)snprintf(text + o, sizeof(text) - o, "max_threadgroup_memory=32768\n"
	    "recommended_max_working_set_size=0\nhas_unified_memory=1\nshim_active=0\nend=1\n");
	lm_assert_ok(lm_report_parse_lines(&r, text, o));
	return r;
}

static void expect_flags(lm_report *r, int red, int mm, int bf16, int tensor, int mlx)
{
	lm_workload_flags f;

	memset(&f, 0x5a, sizeof(f));
	lm_workload_derive(r, &f);
	assert_int_equal(f.llama_simdgroup_reduction, red);
	assert_int_equal(f.llama_simdgroup_mm, mm);
	assert_int_equal(f.llama_bfloat16, bf16);
	assert_int_equal(f.llama_tensor, tensor);
	assert_int_equal(f.mlx_residency_risk, mlx);
	lm_report_free(r);
}

static void test_workload_rules(void **state)
{
	const char *pv = "Apple Paravirtual device";

	(void)state;
	/* Stock paravirtual (Apple5): every llama.cpp fast path off. */
	expect_flags(answers(pv, 1005, 0, 0), 0, 0, 0, 0, 0);
	/* The published unlock (Apple9, Metal3 false): reduction, matrix multiply and bfloat16 on. */
	expect_flags(answers(pv, 1009, 0, 0), 1, 1, 1, 0, 0);
	/* Apple6 alone: bfloat16 only. Apple7: everything but the tensor API. */
	expect_flags(answers(pv, 1006, 0, 0), 0, 0, 1, 0, 0);
	expect_flags(answers(pv, 1007, 0, 0), 1, 1, 1, 0, 0);
	/* Metal3 without Apple7: reduction and bfloat16, not matrix multiply; MLX at risk on the
	 * paravirtual device but not on a real one. */
	expect_flags(answers(pv, 1005, 1, 0), 1, 0, 1, 0, 1);
	expect_flags(answers("Apple M2 Max", 1005, 1, 0), 1, 0, 1, 0, 0);
	/* Tensor API: Metal4 and an M5/M6/A19/A20 name. */
	expect_flags(answers("Apple M5 Max", 1010, 1, 1), 1, 1, 1, 1, 0);
	expect_flags(answers("Apple A19 Pro", 1010, 1, 1), 1, 1, 1, 1, 0);
	expect_flags(answers("Apple M4 Max", 1009, 1, 1), 1, 1, 1, 0, 0);
	expect_flags(answers(pv, 1009, 0, 1), 1, 1, 1, 0, 0);
	expect_flags(answers("Apple M6", 1005, 0, 0), 0, 0, 0, 0, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_family_table),
		cmocka_unit_test(test_workload_rules),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
