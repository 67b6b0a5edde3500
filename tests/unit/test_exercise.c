/* The exercise results: their lines in the capability report (format 1.1), their JSON form, and
 * the profile's expectations.exercise checked against them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lume-metal/error.h"
#include "lume-metal/exercise.h"
#include "lume-metal/profile.h"
#include "lume-metal/report.h"
#include "lm_test.h"

#define HEAD \
    "device=Apple Paravirtual device\n" \
    "family.Apple1=1\nfamily.Apple2=1\nfamily.Apple3=1\nfamily.Apple4=1\nfamily.Apple5=1\n" \
    "family.Apple6=1\nfamily.Apple7=1\nfamily.Apple8=1\nfamily.Apple9=1\nfamily.Apple10=0\n" \
    "family.Mac1=0\nfamily.Mac2=0\nfamily.Common1=0\nfamily.Common2=0\nfamily.Common3=0\n" \
    "family.Metal3=0\nfamily.Metal4=0\n" \
    "max_threadgroup_memory=65536\nrecommended_max_working_set_size=17179869184\n" \
    "has_unified_memory=1\nshim_active=1\n"

/* What the probe prints on a VM that started at the restricted level, with the shim. */
static const char restricted[] =
    "format=lume-metal-report/1.2\n" HEAD
    "exercise.simdgroup_reduction=error: Encountered unlowered function call to air.simd_sum.f32\n"
    "exercise.simdgroup_matrix=fail: element 9 is 3, expected 2\n"
    "exercise.bfloat16=pass\n"
    "exercise.threadgroup_memory.16384=pass\n"
    "exercise.threadgroup_memory.32768=pass\n"
    "exercise.threadgroup_memory.65536=error: too big \\t tab\n"
    "exercise.nocopy_buffer=fail: word 0 reached the GPU as 1, expected 10001\n"
    "exercise.indirect_command_buffer=pass\n"
    "end=1\n";

static const char all_pass[] =
    "format=lume-metal-report/1.1\n" HEAD
    "exercise.simdgroup_reduction=pass\n"
    "exercise.simdgroup_matrix=pass\n"
    "exercise.bfloat16=pass\n"
    "exercise.threadgroup_memory.16384=pass\n"
    "exercise.threadgroup_memory.32768=fail\n"
    "end=1\n";

/* Every feature passes; both known defects show. */
static const char defects_shown[] =
    "format=lume-metal-report/1.2\n" HEAD
    "exercise.simdgroup_reduction=pass\n"
    "exercise.simdgroup_matrix=pass\n"
    "exercise.bfloat16=pass\n"
    "exercise.threadgroup_memory.16384=pass\n"
    "exercise.threadgroup_memory.32768=pass\n"
    "exercise.nocopy_buffer=fail: stale\n"
    "exercise.indirect_command_buffer=fail: did not run\n"
    "end=1\n";

static lm_report *parse(const char *text)
{
	lm_report *r = NULL;

	lm_assert_ok(lm_report_parse_lines(&r, text, strlen(text)));
	return r;
}

static void test_lines(void **state)
{
	lm_report *r = parse(restricted), *back;
	const char *m;
	char *lines, *json;

	(void)state;
	assert_true(lm_report_has_exercise(r));
	assert_int_equal(lm_report_exercise(r, LM_EXERCISE_SIMDGROUP_REDUCTION, &m), LM_EXERCISE_ERROR);
	assert_string_equal(m, "Encountered unlowered function call to air.simd_sum.f32");
	assert_int_equal(lm_report_exercise(r, LM_EXERCISE_SIMDGROUP_MATRIX, &m), LM_EXERCISE_FAIL);
	assert_string_equal(m, "element 9 is 3, expected 2");
	assert_int_equal(lm_report_exercise(r, LM_EXERCISE_BFLOAT16, &m), LM_EXERCISE_PASS);
	assert_string_equal(m, "");
	assert_int_equal(lm_report_exercise(r, LM_EXERCISE_THREADGROUP_64K, &m), LM_EXERCISE_ERROR);
	assert_string_equal(m, "too big \t tab");
	assert_int_equal(lm_report_threadgroup_memory_exercised(r), 32768);
	assert_string_equal(lm_exercise_name(LM_EXERCISE_THREADGROUP_16K), "threadgroup_memory.16384");
	assert_null(lm_exercise_name(LM_EXERCISE_COUNT));
	/* The known defects: read like the others, reported apart (a fail is the defect showing). */
	assert_int_equal(lm_report_exercise(r, LM_EXERCISE_NOCOPY_BUFFER, &m), LM_EXERCISE_FAIL);
	assert_string_equal(m, "word 0 reached the GPU as 1, expected 10001");
	assert_int_equal(lm_report_exercise(r, LM_EXERCISE_INDIRECT_COMMAND_BUFFER, NULL), LM_EXERCISE_PASS);
	assert_string_equal(lm_exercise_name(LM_EXERCISE_NOCOPY_BUFFER), "nocopy_buffer");
	assert_string_equal(lm_exercise_name(LM_EXERCISE_INDIRECT_COMMAND_BUFFER), "indirect_command_buffer");
	assert_true(lm_exercise_is_defect(LM_EXERCISE_NOCOPY_BUFFER));
	assert_true(lm_exercise_is_defect(LM_EXERCISE_INDIRECT_COMMAND_BUFFER));
	assert_false(lm_exercise_is_defect(LM_EXERCISE_SIMDGROUP_MATRIX));
	assert_false(lm_exercise_is_defect(LM_EXERCISE_THREADGROUP_64K));
	assert_false(lm_exercise_is_defect(LM_EXERCISE_COUNT));

	/* The line form again is what the probe printed (format 1.2, values escaped). */
	lm_assert_ok(lm_report_to_lines(r, &lines));
	assert_string_equal(lines, restricted);
	lm_free(lines);

	/* The JSON form carries it and reads back the same. */
	lm_assert_ok(lm_report_to_json(r, &json));
	assert_non_null(strstr(json,
	    "  \"exercise\": {\n"
	    "    \"simdgroup_reduction\": {\n"
	    "      \"result\": \"error\",\n"
	    "      \"message\": \"Encountered unlowered function call to air.simd_sum.f32\"\n"
	    "    },\n"
	    "    \"simdgroup_matrix\": {\n"
	    "      \"result\": \"fail\",\n"
	    "      \"message\": \"element 9 is 3, expected 2\"\n"
	    "    },\n"
	    "    \"bfloat16\": {\n"
	    "      \"result\": \"pass\"\n"
	    "    },\n"
	    "    \"threadgroup_memory\": {\n"
	    "      \"largest\": 32768,\n"
	    "      \"sizes\": {\n"
	    "        \"16384\": {\n"));
	assert_non_null(strstr(json,
	    "    },\n"
	    "    \"nocopy_buffer\": {\n"
	    "      \"result\": \"fail\",\n"
	    "      \"message\": \"word 0 reached the GPU as 1, expected 10001\"\n"
	    "    },\n"
	    "    \"indirect_command_buffer\": {\n"
	    "      \"result\": \"pass\"\n"
	    "    }\n"
	    "  }\n"));
	lm_assert_ok(lm_report_from_json(&back, json, strlen(json)));
	lm_assert_ok(lm_report_to_lines(back, &lines));
	assert_string_equal(lines, restricted);
	lm_free(lines);
	lm_free(json);
	lm_report_free(back);
	lm_report_free(r);
}

static void test_without_exercise(void **state)
{
	static const char v1[] = "format=lume-metal-report/1\n" HEAD "end=1\n";
	static const char newer[] = "format=lume-metal-report/1.1\n" HEAD
	    "exercise.raytracing_someday=pass\nexercise.threadgroup_memory.131072=pass\nexercise.bfloat16=pass\nend=1\n";
	lm_report *r = parse(v1);
	char *json;

	(void)state;
	/* A report of version 1 (an older probe, or no --exercise): nothing run, nothing in JSON. */
	assert_false(lm_report_has_exercise(r));
	assert_int_equal(lm_report_exercise(r, LM_EXERCISE_BFLOAT16, NULL), LM_EXERCISE_NOT_RUN);
	assert_int_equal(lm_report_threadgroup_memory_exercised(r), 0);
	lm_assert_ok(lm_report_to_json(r, &json));
	lm_assert_not_contains(json, "exercise");
	lm_free(json);
	lm_report_free(r);

	/* A 1.1 report (a probe older than the defect checks): the defects were not run. */
	r = parse(all_pass);
	assert_true(lm_report_has_exercise(r));
	assert_int_equal(lm_report_exercise(r, LM_EXERCISE_NOCOPY_BUFFER, NULL), LM_EXERCISE_NOT_RUN);
	assert_int_equal(lm_report_exercise(r, LM_EXERCISE_INDIRECT_COMMAND_BUFFER, NULL), LM_EXERCISE_NOT_RUN);
	lm_assert_ok(lm_report_to_json(r, &json));
	lm_assert_not_contains(json, "nocopy_buffer");
	lm_free(json);
	lm_report_free(r);

	/* Exercises this build does not know are unknown keys: ignored, as old readers ignore all. */
	r = parse(newer);
	assert_int_equal(lm_report_exercise(r, LM_EXERCISE_BFLOAT16, NULL), LM_EXERCISE_PASS);
	assert_int_equal(lm_report_exercise(r, LM_EXERCISE_SIMDGROUP_MATRIX, NULL), LM_EXERCISE_NOT_RUN);
	assert_int_equal(lm_report_threadgroup_memory_exercised(r), 0);
	lm_report_free(r);
}

static void test_bad_lines(void **state)
{
	static const struct {
		const char *line;
		const char *message;
	} bad[] = {
		{"exercise.bfloat16=ok\n", "report: line 24: the value of 'exercise.bfloat16' must be pass, fail, fail: "
		    "MESSAGE or error: MESSAGE, found 'ok'"},
		{"exercise.bfloat16=error:\n", "report: line 24: the value of 'exercise.bfloat16' must be pass, fail, "
		    "fail: MESSAGE or error: MESSAGE, found 'error:'"},
		{"exercise.bfloat16=pass\nexercise.bfloat16=pass\n", "report: line 25: duplicate key 'exercise.bfloat16'"},
		{"exercise.bfloat16=error: \\xff\n", "report: line 24: the value of 'exercise.bfloat16' is not valid UTF-8 "
		    "(decoded byte 0)"},
	};
	char text[4096];
	lm_report *r;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "format=lume-metal-report/1.1\n" HEAD "%send=1\n", bad[i].line);
		lm_assert_fails(lm_report_parse_lines(&r, text, strlen(text)), LM_EINVALID);
		assert_string_equal(lm_error_last()->message, bad[i].message);
	}
}

#define PROFILE(exercise) \
    "{\"format\":\"lume-metal-profile\",\"version\":1,\"name\":\"t\",\"description\":\"d\"," \
    "\"capabilities\":{\"apple_family_max\":1009,\"max_threadgroup_memory\":32768}," \
    "\"expectations\":{\"shimmed\":{\"shim_active\":true}" exercise "}}"

static lm_profile *profile(const char *json)
{
	lm_profile *p = NULL;

	lm_assert_ok(lm_profile_parse(&p, json, strlen(json), "t.json"));
	return p;
}

static void test_profile_expectations(void **state)
{
	lm_profile *p;
	lm_report *r;
	const char *msg;

	(void)state;
	/* The published profile: reduction, matrix and bfloat16 must pass; threadgroup memory is reported. */
	lm_assert_ok(lm_profile_builtin(&p, "published"));
	assert_int_equal(lm_profile_exercise_expect(p, 0), LM_EXERCISE_EXPECT_PASS);
	assert_int_equal(lm_profile_exercise_expect(p, 1), LM_EXERCISE_EXPECT_PASS);
	assert_int_equal(lm_profile_exercise_expect(p, 2), LM_EXERCISE_EXPECT_PASS);
	assert_int_equal(lm_profile_exercise_expect(p, 3), LM_EXERCISE_EXPECT_REPORT);
	assert_string_equal(lm_exercise_feature_name(3), "threadgroup_memory");
	r = parse(all_pass);
	lm_assert_ok(lm_profile_check_exercise(p, r));
	lm_report_free(r);
	r = parse(restricted);
	lm_assert_fails(lm_profile_check_exercise(p, r), LM_ENOTPROVEN);
	msg = lm_error_last()->message;
	assert_non_null(strstr(msg, "profile 'published': the kernels the profile needs do not compile and "
	    "compute correctly on this device. Proven: the shim's answers, and bfloat16 passed. Not proven: simdgroup_reduction: error: "
	    "Encountered unlowered function call to air.simd_sum.f32; simdgroup_matrix ran and gave a wrong result: "
	    "element 9 is 3, expected 2. "));
	lm_assert_contains(msg, "Likely causes: the VM was started before the host preference changed");
	lm_assert_not_contains(msg, "--");
	lm_assert_not_contains(msg, "nocopy_buffer"); /* a defect is never what is not proven */
	lm_report_free(r);
	/* Known defects that show are reported, never required: the profile's check passes. */
	r = parse(defects_shown);
	lm_assert_ok(lm_profile_check_exercise(p, r));
	lm_report_free(r);
	lm_profile_free(p);

	/* threadgroup_memory "pass": every size up to the profile's max_threadgroup_memory (32768). */
	p = profile(PROFILE(",\"exercise\":{\"threadgroup_memory\":\"pass\",\"bfloat16\":\"report\"}"));
	r = parse(all_pass);
	lm_assert_fails(lm_profile_check_exercise(p, r), LM_ENOTPROVEN);
	assert_non_null(strstr(lm_error_last()->message, "Proven: the shim's answers, and threadgroup_memory.16384 "
	    "passed. Not proven: threadgroup_memory.32768 ran and gave a wrong result. "));
	lm_report_free(r);
	r = parse(restricted);
	lm_assert_ok(lm_profile_check_exercise(p, r));
	lm_report_free(r);
	lm_profile_free(p);

	/* Expectations without "exercise": nothing required. */
	p = profile(PROFILE(""));
	r = parse(restricted);
	lm_assert_ok(lm_profile_check_exercise(p, r));
	lm_report_free(r);
	lm_profile_free(p);
}

static void test_profile_errors(void **state)
{
	static const struct {
		const char *json;
		const char *message;
	} bad[] = {
		{PROFILE(",\"exercise\":{\"bfloat16\":true}"),
		    "t.json: $.expectations.exercise.bfloat16: expected \"pass\" or \"report\", found true"},
		{PROFILE(",\"exercise\":{\"bfloat16\":\"fail\"}"),
		    "t.json: $.expectations.exercise.bfloat16: expected \"pass\" or \"report\", found \"fail\""},
		{PROFILE(",\"exercise\":[]"), "t.json: $.expectations.exercise: expected an object, found an empty array"},
	};
	lm_profile *p;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		lm_assert_fails(lm_profile_parse(&p, bad[i].json, strlen(bad[i].json), "t.json"), LM_EINVALID);
		assert_string_equal(lm_error_last()->message, bad[i].message);
	}
	/* An unknown feature is refused, with a suggestion. */
	{
		const char *j = PROFILE(",\"exercise\":{\"bfloat\":\"pass\"}");
		lm_assert_fails(lm_profile_parse(&p, j, strlen(j), "t.json"), LM_EINVALID);
		lm_assert_error_has("$.expectations.exercise");
		lm_assert_error_has("bfloat16");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_without_exercise),
		cmocka_unit_test(test_bad_lines),
		cmocka_unit_test(test_profile_expectations),
		cmocka_unit_test(test_profile_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
