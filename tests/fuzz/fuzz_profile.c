/* Profiles (docs/profile-format.md): a user's --profile file, and the copy kept in the state
 * journal. Whatever parses also prints, renders, lints and applies, and its canonical JSON parses
 * back to the same text. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_support.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	lm_profile *p = NULL, *again = NULL;
	lm_report *stock = NULL, *shimmed = NULL;
	lm_profile_lint_result lint;
	lm_profile_expectation e;
	lm_profile_validation v;
	lm_env_entry env[LM_PROFILE_ENV_MAX];
	char *json = NULL, *json2 = NULL;
	size_t n, i;

	if (lm_profile_parse(&p, (const char *)data, size, "fuzz.json") < 0) {
		LM_FUZZ_CHECK(p == NULL && lm_error_last()->message[0] != '\0');
		return 0;
	}
	LM_FUZZ_CHECK(lm_profile_name(p) != NULL && lm_profile_caps(p) != NULL);
	LM_FUZZ_CHECK(lm_profile_render_env(p, env, &n) == 0 && n <= LM_PROFILE_ENV_MAX);
	for (i = 0; i < lm_profile_expectation_count(p); i++)
		LM_FUZZ_CHECK(lm_profile_expectation_get(p, i, &e) == 0);
	for (i = 0; i < lm_profile_validation_count(p); i++)
		LM_FUZZ_CHECK(lm_profile_validation_get(p, i, &v) == 0);
	LM_FUZZ_CHECK(lm_profile_lint(p, 1007, &lint) == 0 && lint.count <= LM_LINT_MAX);
	LM_FUZZ_CHECK(lm_report_stock_paravirtual(&stock) == 0);
	if (lm_profile_apply(p, stock, &shimmed) == 0)
		(void)lm_profile_check(p, stock, shimmed);

	LM_FUZZ_CHECK(lm_profile_to_json(p, &json) == 0);
	LM_FUZZ_CHECK(lm_profile_parse(&again, json, strlen(json), "canonical") == 0);
	LM_FUZZ_CHECK(lm_profile_to_json(again, &json2) == 0 && strcmp(json, json2) == 0);

	lm_free(json);
	lm_free(json2);
	lm_report_free(stock);
	lm_report_free(shimmed);
	lm_profile_free(again);
	lm_profile_free(p);
	return 0;
}
