/* The report's JSON form (docs/report-format.md), as stored in the state journal and given to
 * `lume-metal`: what parses prints as JSON that parses to the same JSON. */
#include <string.h>

#include "fuzz_support.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	lm_report *r = NULL, *again = NULL;
	lm_workload_flags flags;
	char *json = NULL, *json2 = NULL, *lines = NULL;

	if (lm_report_from_json(&r, (const char *)data, size) < 0) {
		LM_FUZZ_CHECK(r == NULL && lm_error_last()->message[0] != '\0');
		return 0;
	}
	lm_workload_derive(r, &flags);
	LM_FUZZ_CHECK(lm_report_to_lines(r, &lines) == 0);
	LM_FUZZ_CHECK(lm_report_to_json(r, &json) == 0);
	LM_FUZZ_CHECK(lm_report_from_json(&again, json, strlen(json)) == 0);
	LM_FUZZ_CHECK(lm_report_to_json(again, &json2) == 0 && strcmp(json, json2) == 0);

	lm_free(json);
	lm_free(json2);
	lm_free(lines);
	lm_report_free(again);
	lm_report_free(r);
	return 0;
}
