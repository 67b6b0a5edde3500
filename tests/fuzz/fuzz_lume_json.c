/* Lume's JSON: the HTTP API's bodies (one VM, a list of VMs, an error's message) and the CLI's
 * stdout, where the JSON document sits among log lines. Both backends' paths: find the document,
 * read the VM objects, quote an excerpt of what did not parse. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_support.h"
#include "vm_internal.h"

static void check_info(const lm_vm_info *vm)
{
	LM_FUZZ_CHECK(memchr(vm->name, '\0', sizeof(vm->name)) != NULL);
	LM_FUZZ_CHECK(memchr(vm->status, '\0', sizeof(vm->status)) != NULL);
	LM_FUZZ_CHECK(memchr(vm->ip, '\0', sizeof(vm->ip)) != NULL);
}

static void read_vms(const cJSON *doc)
{
	lm_vm_info one, *list = NULL;
	size_t n = 0, i;

	if (cJSON_IsArray(doc) && lm_vm_info_array_from_json(doc, &list, &n, "fuzz") == 0) {
		for (i = 0; i < n; i++)
			check_info(&list[i]);
		free(list);
	}
	if (cJSON_IsObject(doc) && lm_vm_info_from_json(doc, &one, "fuzz") == 0)
		check_info(&one);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = lm_fuzz_strdup(data, size);
	char excerpt[120];
	cJSON *doc;

	/* lume-api: the whole body is the document. */
	doc = cJSON_Parse(text);
	read_vms(doc);
	cJSON_Delete(doc);
	/* lume-cli: the first line that starts a document of the wanted type. */
	if (lm_vm_json_find(text, cJSON_Array, &doc) == 0) {
		LM_FUZZ_CHECK(cJSON_IsArray(doc));
		read_vms(doc);
		if (cJSON_GetArraySize(doc) == 1)
			read_vms(cJSON_GetArrayItem(doc, 0));
		cJSON_Delete(doc);
	}
	if (lm_vm_json_find(text, cJSON_Object, &doc) == 0) {
		LM_FUZZ_CHECK(cJSON_IsObject(doc));
		read_vms(doc);
		cJSON_Delete(doc);
	}
	lm_vm_excerpt(text, excerpt, sizeof(excerpt));
	LM_FUZZ_CHECK(strlen(excerpt) < sizeof(excerpt));
	free(text);
	return 0;
}
