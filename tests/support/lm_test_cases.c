/* lm_test_cases: one test program's cases, all of them or those LM_TEST_CASE names.
 *
 * cmocka (1.1.5 on Debian 12) reads no variable that picks a case: cmocka_set_test_filter() needs
 * a line in each program's main, and a pattern that matches no case runs none and passes ("0
 * test(s) run"), so a misspelt name would look like a pass. Every program's main reaches cmocka
 * through _cmocka_run_group_tests (cmocka_run_group_tests is a macro for it), and the programs are
 * linked with --wrap=_cmocka_run_group_tests (tests/support/CMakeLists.txt: cmocka's own way of
 * standing in for a function), so this wrapper sees each program's whole list of cases with no
 * line in any test: it keeps the cases whose name matches the pattern (fnmatch(3), as a shell
 * matches file names) and fails, listing the names, when none does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>

int __real__cmocka_run_group_tests(const char *group, const struct CMUnitTest *const tests, const size_t n,
    CMFixtureFunction setup, CMFixtureFunction teardown);
int __wrap__cmocka_run_group_tests(const char *group, const struct CMUnitTest *const tests, const size_t n,
    CMFixtureFunction setup, CMFixtureFunction teardown);

int __wrap__cmocka_run_group_tests(const char *group, const struct CMUnitTest *const tests, const size_t n,
    CMFixtureFunction setup, CMFixtureFunction teardown)
{
	const char *pattern = getenv("LM_TEST_CASE");
	struct CMUnitTest *chosen;
	size_t i, k = 0;
	int rc;

	if (pattern == NULL || pattern[0] == '\0')
		return __real__cmocka_run_group_tests(group, tests, n, setup, teardown);
	if ((chosen = calloc(n + 1, sizeof(*chosen))) == NULL) {
		fprintf(stderr, "lm_test: out of memory choosing the cases LM_TEST_CASE names\n");
		abort();
	}
	for (i = 0; i < n; i++)
		if (tests[i].name != NULL && fnmatch(pattern, tests[i].name, 0) == 0)
			chosen[k++] = tests[i];
	if (k == 0) {
		fprintf(stderr, "lm_test: LM_TEST_CASE='%s' matches none of this program's %zu cases:\n", pattern, n);
		for (i = 0; i < n; i++)
			fprintf(stderr, "  %s\n", tests[i].name != NULL ? tests[i].name : "(unnamed)");
		free(chosen);
		return 1;
	}
	fprintf(stderr, "lm_test: LM_TEST_CASE='%s': %zu of this program's %zu cases\n", pattern, k, n);
	rc = __real__cmocka_run_group_tests(group, chosen, k, setup, teardown);
	free(chosen);
	return rc;
}
