/* The shim's activation records (docs/activation-format.md), as run, status, doctor and bench read
 * them from a guest the workload controls: parse, add to a list under its <pid>.json name, then
 * what people and --format json are shown of it. Whatever parses must survive every step, the
 * list must keep the record's bytes, and the summary and JSON must name the record's pid. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "guest_activation.h"
#include "fuzz_support.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	lm_activation_list list = { 0 };
	lm_activation a;
	const cJSON *pid;
	cJSON *json = NULL;
	char file[32], *line = NULL;

	if (lm_activation_parse("fuzz", (const char *)data, size, &a) != 0)
		return 0;
	LM_FUZZ_CHECK(a.pid >= 1 && a.text == NULL && memchr(a.exe, '\0', sizeof(a.exe)) != NULL);
	LM_FUZZ_CHECK(a.nclasses <= LM_ACTIVATION_CLASSES && a.nquestions <= LM_ACTIVATION_QUESTIONS &&
	    a.ntg <= LM_ACTIVATION_TG_READS);
	snprintf(file, sizeof(file), "%lld.json", (long long)a.pid);
	LM_FUZZ_CHECK(lm_activation_list_add(&list, "fuzz", file, (const char *)data, size) == 0);
	LM_FUZZ_CHECK(list.count == 1 && list.items[0].pid == a.pid && list.items[0].text_len == size &&
	    memcmp(list.items[0].text, data, size) == 0);
	/* Under another pid's name it is refused, and the list is unchanged. */
	snprintf(file, sizeof(file), "%lld.json", (long long)(a.pid == 1 ? 2 : a.pid - 1));
	LM_FUZZ_CHECK(lm_activation_list_add(&list, "fuzz", file, (const char *)data, size) != 0 && list.count == 1);
	LM_FUZZ_CHECK(lm_activation_summary(&list.items[0], &line) == 0 && line != NULL);
	snprintf(file, sizeof(file), "pid %lld ", (long long)a.pid);
	LM_FUZZ_CHECK(strncmp(line, file, strlen(file)) == 0);
	LM_FUZZ_CHECK(lm_activation_json(&list.items[0], &json) == 0 && json != NULL);
	pid = cJSON_GetObjectItemCaseSensitive(json, "pid");
	LM_FUZZ_CHECK(cJSON_IsNumber(pid) && (long long)pid->valuedouble == (long long)a.pid);
	LM_FUZZ_CHECK(lm_activation_took(&list.items[0]) == lm_activation_took(&a));
	free(line);
	cJSON_Delete(json);
	lm_activation_list_dispose(&list);
	return 0;
}
