/* The probe's report in its line format (docs/report-format.md), as read from the guest: what
 * parses converts to JSON and back, and prints as lines that parse to the same report. */
#include <string.h>

#include "fuzz_support.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	lm_report *r = NULL, *again = NULL;
	lm_workload_flags flags;
	char *lines = NULL, *lines2 = NULL, *json = NULL;
	int supported;

	if (lm_report_parse_lines(&r, (const char *)data, size) < 0) {
		LM_FUZZ_CHECK(r == NULL && lm_error_last()->message[0] != '\0');
		return 0;
	}
	LM_FUZZ_CHECK(lm_report_device(r) != NULL);
	(void)lm_report_family(r, 1009, &supported);
	(void)lm_report_apple_family(r);
	lm_workload_derive(r, &flags);
	LM_FUZZ_CHECK(lm_report_to_lines(r, &lines) == 0);
	LM_FUZZ_CHECK(lm_report_parse_lines(&again, lines, strlen(lines)) == 0);
	LM_FUZZ_CHECK(lm_report_to_lines(again, &lines2) == 0 && strcmp(lines, lines2) == 0);
	lm_report_free(again);
	again = NULL;
	LM_FUZZ_CHECK(lm_report_to_json(r, &json) == 0);
	LM_FUZZ_CHECK(lm_report_from_json(&again, json, strlen(json)) == 0);
	lm_free(lines2);
	lines2 = NULL;
	LM_FUZZ_CHECK(lm_report_to_lines(again, &lines2) == 0 && strcmp(lines, lines2) == 0);

	lm_free(lines);
	lm_free(lines2);
	lm_free(json);
	lm_report_free(again);
	lm_report_free(r);
	return 0;
}
