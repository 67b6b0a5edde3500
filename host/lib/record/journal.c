/* The journal document's layout (docs/state-format.md, "Schema 1"): "schema", "preference",
 * "vms". The state module keeps the document locked and writes it atomically; what it holds is
 * known here only. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "json.h"
#include "str.h"
#include "vm_name.h"

#define JOURNAL_SCHEMA 1

/* A new journal, or the layout of an existing one checked. */
static int check_layout(lm_state *st)
{
	cJSON *doc = lm_state_doc(st);
	const cJSON *vms, *pref, *vm;
	char why[LM_VM_NAME_MAX + 160];
	int64_t version;

	if (doc->child == NULL) {
		/* Nothing recorded yet: the empty document, saved with the first change. */
		if (cJSON_AddNumberToObject(doc, "schema", JOURNAL_SCHEMA) == NULL ||
		    cJSON_AddObjectToObject(doc, "vms") == NULL)
			return lm_error_nomem();
		return 0;
	}
	if (lm_json_int(cJSON_GetObjectItemCaseSensitive(doc, "schema"), 1, INT_MAX, &version) != 0)
		return lm_state_corrupt(st, "not a lume-metal state document: no \"schema\" number (a whole number "
		    "from 1)");
	if (version > JOURNAL_SCHEMA)
		return lm_error_set(LM_ENEWER, "%s: written by a newer lume-metal (schema %lld, this one knows %d); "
		    "nothing was changed", lm_state_file(st), (long long)version, JOURNAL_SCHEMA);
	vms = cJSON_GetObjectItemCaseSensitive(doc, "vms");
	pref = cJSON_GetObjectItemCaseSensitive(doc, "preference");
	if ((vms != NULL && !cJSON_IsObject(vms)) || (pref != NULL && !cJSON_IsObject(pref)))
		return lm_state_corrupt(st, "\"vms\" and \"preference\" must be objects");
	/* A name lume-metal would never have written is a damaged journal, not a usage error. */
	cJSON_ArrayForEach(vm, vms)
		if (lm_vm_name_check(vm->string, strlen(vm->string)) < 0) {
			snprintf(why, sizeof(why), "\"vms\" holds a name that is not a VM name: %s", lm_error_last()->message);
			return lm_state_corrupt(st, why);
		}
	return 0;
}

int lm_journal_open(lm_state **out, lm_context *ctx, unsigned flags, double lock_timeout)
{
	lm_state *st = NULL;
	int rc;

	*out = NULL;
	if ((rc = lm_state_open_ex(&st, ctx, flags, lock_timeout)) < 0)
		return rc;
	if ((rc = check_layout(st)) < 0) {
		lm_state_close(st);
		return rc;
	}
	*out = st;
	return 0;
}

int lm_journal_open_rw(lm_state **out, lm_context *ctx)
{
	return lm_journal_open(out, ctx, 0, 0);
}

static cJSON *vms_of(lm_state *st)
{
	return cJSON_GetObjectItemCaseSensitive(lm_state_doc(st), "vms");
}

int lm_journal_vm_names(lm_state *st, char ***out)
{
	const cJSON *vm;
	char **names;
	size_t n = 0;

	*out = NULL;
	if ((names = calloc((size_t)cJSON_GetArraySize(vms_of(st)) + 1, sizeof(*names))) == NULL)
		return lm_error_nomem();
	cJSON_ArrayForEach(vm, vms_of(st))
		if ((names[n++] = strdup(vm->string)) == NULL) {
			lm_strv_free(names);
			return lm_error_nomem();
		}
	*out = names;
	return 0;
}

int lm_journal_has_vm(lm_state *st, const char *name)
{
	return cJSON_GetObjectItemCaseSensitive(vms_of(st), name) != NULL;
}

void lm_journal_forget_vm(lm_state *st, const char *name)
{
	cJSON_DeleteItemFromObjectCaseSensitive(vms_of(st), name);
}

int lm_journal_vm_print(lm_state *st, const char *name, char **out)
{
	const cJSON *vm = cJSON_GetObjectItemCaseSensitive(vms_of(st), name);

	*out = vm != NULL ? cJSON_PrintUnformatted(vm) : strdup("");
	return *out != NULL ? 0 : lm_error_nomem();
}

size_t lm_journal_forget_vms(lm_state *st, char *const *sorted, size_t n, unsigned char *present)
{
	cJSON *vms = vms_of(st), *vm, *next;
	size_t dropped = 0, i;

	/* One walk over the records: a lookup per name would scan the object each time. */
	for (vm = vms != NULL ? vms->child : NULL; vm != NULL; vm = next) {
		next = vm->next;
		if ((i = lm_strv_find(sorted, n, vm->string)) == n)
			continue;
		cJSON_Delete(cJSON_DetachItemViaPointer(vms, vm));
		if (present != NULL)
			present[i] = 1;
		dropped++;
	}
	return dropped;
}
