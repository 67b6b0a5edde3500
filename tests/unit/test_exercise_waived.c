/* Which kernels a guest's macOS can run at all (host/lib/guestops/exercise.c, lm_exercise_waived):
 * bfloat16 needs the Metal Shading Language 3.1, macOS 14; below it the published profile does
 * not require it, and says why (lm_profile_check_exercise_waived). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lume-metal/exercise.h"
#include "lume-metal/profile.h"
#include "lume-metal/report.h"
#include "lm_test.h"

/* A macOS 13 guest with the shim: every kernel runs but bfloat16, which cannot compile there. */
static const char macos13[] =
    "format=lume-metal-report/1.1\n"
    "device=Apple Paravirtual device\n"
    "family.Apple1=1\nfamily.Apple2=1\nfamily.Apple3=1\nfamily.Apple4=1\nfamily.Apple5=1\n"
    "family.Apple6=1\nfamily.Apple7=1\nfamily.Apple8=1\nfamily.Apple9=1\nfamily.Apple10=0\n"
    "family.Mac1=0\nfamily.Mac2=0\nfamily.Common1=0\nfamily.Common2=0\nfamily.Common3=0\n"
    "family.Metal3=0\nfamily.Metal4=0\n"
    "max_threadgroup_memory=65536\nrecommended_max_working_set_size=17179869184\n"
    "has_unified_memory=1\nshim_active=1\n"
    "exercise.simdgroup_reduction=pass\n"
    "exercise.simdgroup_matrix=pass\n"
    "exercise.bfloat16=error: Metal Shading Language 3.1 is not available before macOS 14\n"
    "exercise.threadgroup_memory.16384=pass\n"
    "exercise.threadgroup_memory.32768=pass\n"
    "end=1\n";

static void test_versions(void **state)
{
	char why[200];

	(void)state;
	assert_int_equal(lm_exercise_waived("13.6.7", why, sizeof(why)), 1u << LM_EXERCISE_BFLOAT16);
	assert_string_equal(why, "bfloat16 not required of a macOS 13.6.7 guest: it needs the Metal Shading Language "
	    "3.1 (macOS 14), and llama.cpp turns it off below");
	assert_int_equal(lm_exercise_waived("12", NULL, 0), 1u << LM_EXERCISE_BFLOAT16);
	/* From macOS 14 everything is required; an unknown version waives nothing. */
	assert_int_equal(lm_exercise_waived("14.0", why, sizeof(why)), 0);
	assert_string_equal(why, "");
	assert_int_equal(lm_exercise_waived("26.5.2", why, sizeof(why)), 0);
	assert_int_equal(lm_exercise_waived("", why, sizeof(why)), 0);
	assert_int_equal(lm_exercise_waived("unknown", why, sizeof(why)), 0);
	assert_int_equal(lm_exercise_waived(NULL, why, sizeof(why)), 0);
}

static void test_published_profile_on_macos13(void **state)
{
	lm_profile *p = NULL;
	lm_report *r = NULL;

	(void)state;
	lm_assert_ok(lm_profile_builtin(&p, "published"));
	lm_assert_ok(lm_report_parse_lines(&r, macos13, strlen(macos13)));
	/* Required as the profile says, it fails on bfloat16 alone ... */
	lm_assert_fails(lm_profile_check_exercise(p, r), LM_ENOTPROVEN);
	lm_assert_error_has("Not proven: bfloat16: error: Metal Shading Language 3.1 is not available before macOS 14.");
	/* ... and passes when the guest's version waives it. */
	lm_assert_ok(lm_profile_check_exercise_waived(p, r, lm_exercise_waived("13.6.7", NULL, 0)));
	lm_assert_fails(lm_profile_check_exercise_waived(p, r, lm_exercise_waived("14.1", NULL, 0)), LM_ENOTPROVEN);
	lm_report_free(r);
	lm_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_versions),
		cmocka_unit_test(test_published_profile_on_macos13),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
