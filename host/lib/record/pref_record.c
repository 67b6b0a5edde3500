/* The host preference's record in the journal (docs/state-format.md, "preference"): what
 * lume-metal changed and exactly what was there before. Decoded and encoded side by side; a
 * record that breaks a rule is a damaged journal (the original value is kept nowhere else). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "json.h"
#include "str.h"
#include "text.h"

#define PREF "preference"

/* "original.state" */
static const char *const original_states[] = {
	[LM_PREF_ORIGINAL_ABSENT_FILE] = "absent-file",
	[LM_PREF_ORIGINAL_ABSENT_KEY] = "absent-key",
	[LM_PREF_ORIGINAL_VALUE] = "value",
};

/* A value's keys: { "type", "display", "plist" }. */
static const struct {
	const char *name;
	size_t offset;
} value_keys[] = {
	{ "type", offsetof(lm_pref_record_value, type) },
	{ "display", offsetof(lm_pref_record_value, display) },
	{ "plist", offsetof(lm_pref_record_value, plist) },
};
#define VALUE_KEY(v, i) ((char **)(void *)((char *)(v) + value_keys[i].offset))

static const char *text_of(const cJSON *obj, const char *name)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, name);

	return cJSON_IsString(item) && item->valuestring[0] != '\0' ? item->valuestring : NULL;
}

static void value_dispose(lm_pref_record_value *v)
{
	size_t i;

	for (i = 0; i < sizeof(value_keys) / sizeof(value_keys[0]); i++) {
		free(*VALUE_KEY(v, i));
		*VALUE_KEY(v, i) = NULL;
	}
}

void lm_pref_record_dispose(lm_pref_record *rec)
{
	free(rec->store);
	free(rec->domain);
	free(rec->key);
	value_dispose(&rec->original);
	value_dispose(&rec->written);
	lm_strv_free(rec->created_dirs);
	memset(rec, 0, sizeof(*rec));
}

/* 1: decoded; 0: no "plist" in it (the caller names the rule); < 0: out of memory. */
static int value_decode(const cJSON *obj, lm_pref_record_value *v)
{
	size_t i;

	if (!cJSON_IsObject(obj) || text_of(obj, "plist") == NULL)
		return 0;
	for (i = 0; i < sizeof(value_keys) / sizeof(value_keys[0]); i++) {
		const char *s = text_of(obj, value_keys[i].name);
		if ((*VALUE_KEY(v, i) = strdup(s != NULL ? s : "")) == NULL)
			return lm_error_nomem();
	}
	return 1;
}

static cJSON *value_encode(const lm_pref_record_value *v)
{
	cJSON *obj = cJSON_CreateObject();
	size_t i;

	for (i = 0; obj != NULL && i < sizeof(value_keys) / sizeof(value_keys[0]); i++) {
		const char *s = *VALUE_KEY(v, i);
		if (cJSON_AddStringToObject(obj, value_keys[i].name, s != NULL ? s : "") == NULL) {
			cJSON_Delete(obj);
			obj = NULL;
		}
	}
	return obj;
}

int lm_pref_record_present(lm_state *st)
{
	const cJSON *pref = cJSON_GetObjectItemCaseSensitive(lm_state_doc(st), PREF);

	return pref != NULL && !cJSON_IsNull(pref);
}

int lm_pref_record_get(lm_state *st, lm_pref_record *rec, int *have)
{
	const cJSON *pref = cJSON_GetObjectItemCaseSensitive(lm_state_doc(st), PREF);
	const cJSON *orig, *changed, *dirs, *d, *kept;
	const char *state, *why = NULL;
	size_t i, n = 0;
	int rc;

	memset(rec, 0, sizeof(*rec));
	*have = 0;
	if (pref == NULL || cJSON_IsNull(pref))
		return 0;
	if (!cJSON_IsObject(pref)) {
		why = "\"preference\" is not an object";
		goto bad;
	}
	if (text_of(pref, "store") == NULL || text_of(pref, "domain") == NULL || text_of(pref, "key") == NULL) {
		why = "\"preference\" lacks \"store\", \"domain\" or \"key\"";
		goto bad;
	}
	if ((rec->store = strdup(text_of(pref, "store"))) == NULL ||
	    (rec->domain = strdup(text_of(pref, "domain"))) == NULL ||
	    (rec->key = strdup(text_of(pref, "key"))) == NULL)
		goto nomem;
	orig = cJSON_GetObjectItemCaseSensitive(pref, "original");
	state = text_of(orig, "state");
	for (i = 0; i < sizeof(original_states) / sizeof(original_states[0]); i++)
		if (state != NULL && strcmp(state, original_states[i]) == 0)
			break;
	if (i == sizeof(original_states) / sizeof(original_states[0])) {
		why = "\"preference.original.state\" is not absent-file, absent-key or value";
		goto bad;
	}
	rec->original_state = (lm_pref_original)i;
	if (rec->original_state == LM_PREF_ORIGINAL_VALUE && (rc = value_decode(orig, &rec->original)) <= 0) {
		if (rc < 0)
			goto nomem;
		why = "\"preference.original.plist\" is not a base64 one-value binary plist";
		goto bad;
	}
	if ((rc = value_decode(cJSON_GetObjectItemCaseSensitive(pref, "written"), &rec->written)) <= 0) {
		if (rc < 0)
			goto nomem;
		why = "\"preference.written.plist\" is not a base64 one-value binary plist";
		goto bad;
	}
	changed = cJSON_GetObjectItemCaseSensitive(pref, "changed_at");
	/* Bounded here, so that turning it into a time_t later (for display) is always defined. */
	if (!cJSON_IsNumber(changed) || !(changed->valuedouble >= 0 && changed->valuedouble <= (double)LM_JSON_INT_MAX)) {
		why = "\"preference.changed_at\" is not a number of seconds since 1970";
		goto bad;
	}
	rec->changed_at = changed->valuedouble;
	/* Absent in journals written before the mode existed: per VM, as they were. */
	kept = cJSON_GetObjectItemCaseSensitive(pref, "kept");
	if (kept != NULL && !cJSON_IsBool(kept)) {
		why = "\"preference.kept\" is not true or false";
		goto bad;
	}
	rec->kept = cJSON_IsTrue(kept);
	dirs = cJSON_GetObjectItemCaseSensitive(pref, "created_dirs");
	if (dirs != NULL) {
		if (!cJSON_IsArray(dirs)) {
			why = "\"preference.created_dirs\" is not an array";
			goto bad;
		}
		cJSON_ArrayForEach(d, dirs) {
			if (!cJSON_IsString(d) || d->valuestring[0] != '/') {
				why = "\"preference.created_dirs\" holds something other than absolute paths";
				goto bad;
			}
		}
		if ((rec->created_dirs = calloc((size_t)cJSON_GetArraySize(dirs) + 1, sizeof(char *))) == NULL)
			goto nomem;
		cJSON_ArrayForEach(d, dirs)
			if ((rec->created_dirs[n++] = strdup(d->valuestring)) == NULL)
				goto nomem;
	}
	*have = 1;
	return 0;
nomem:
	lm_pref_record_dispose(rec);
	return lm_error_nomem();
bad:
	lm_pref_record_dispose(rec);
	return lm_state_corrupt(st, why);
}

int lm_pref_record_put(lm_state *st, const lm_pref_record *rec)
{
	cJSON *pref = cJSON_CreateObject(), *orig, *w, *dirs;
	size_t i;

	if (pref == NULL)
		return lm_error_nomem();
	if (cJSON_AddStringToObject(pref, "store", rec->store) == NULL ||
	    cJSON_AddStringToObject(pref, "domain", rec->domain) == NULL ||
	    cJSON_AddStringToObject(pref, "key", rec->key) == NULL)
		goto nomem;
	if (rec->original_state == LM_PREF_ORIGINAL_VALUE) {
		if ((orig = value_encode(&rec->original)) == NULL)
			goto nomem;
		if (!cJSON_AddItemToObject(pref, "original", orig)) {
			cJSON_Delete(orig);
			goto nomem;
		}
	} else if ((orig = cJSON_AddObjectToObject(pref, "original")) == NULL) {
		goto nomem;
	}
	if (cJSON_AddStringToObject(orig, "state", original_states[rec->original_state]) == NULL)
		goto nomem;
	if ((w = value_encode(&rec->written)) == NULL)
		goto nomem;
	if (!cJSON_AddItemToObject(pref, "written", w)) {
		cJSON_Delete(w);
		goto nomem;
	}
	if (rec->created_dirs != NULL) {
		if ((dirs = cJSON_AddArrayToObject(pref, "created_dirs")) == NULL)
			goto nomem;
		for (i = 0; rec->created_dirs[i] != NULL; i++)
			if (!cJSON_AddItemToArray(dirs, cJSON_CreateString(rec->created_dirs[i])))
				goto nomem;
	}
	if (cJSON_AddNumberToObject(pref, "changed_at", rec->changed_at) == NULL ||
	    (rec->kept && cJSON_AddTrueToObject(pref, "kept") == NULL))
		goto nomem;
	/* Adding copies the key: it can fail, and then the caller must not save a journal that lost
	 * the record (the sweep of enable found it saved without it, the original forgotten). */
	cJSON_DeleteItemFromObjectCaseSensitive(lm_state_doc(st), PREF);
	if (!cJSON_AddItemToObject(lm_state_doc(st), PREF, pref))
		goto nomem;
	return 0;
nomem:
	cJSON_Delete(pref);
	return lm_error_nomem();
}

int lm_pref_record_set_written(lm_state *st, const lm_pref_record_value *written)
{
	cJSON *pref = cJSON_GetObjectItemCaseSensitive(lm_state_doc(st), PREF);
	cJSON *w = value_encode(written);

	if (w == NULL)
		return lm_error_nomem();
	if (!cJSON_ReplaceItemInObjectCaseSensitive(pref, "written", w)) {
		cJSON_Delete(w);
		return lm_error_nomem();
	}
	return 0;
}

int lm_pref_record_set_kept(lm_state *st)
{
	cJSON *pref = cJSON_GetObjectItemCaseSensitive(lm_state_doc(st), PREF);

	cJSON_DeleteItemFromObjectCaseSensitive(pref, "kept");
	return cJSON_AddTrueToObject(pref, "kept") != NULL ? 0 : lm_error_nomem();
}

void lm_pref_record_remove(lm_state *st)
{
	cJSON_DeleteItemFromObjectCaseSensitive(lm_state_doc(st), PREF);
}
