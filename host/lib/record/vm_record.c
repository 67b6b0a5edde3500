/* One VM's record in the journal (docs/state-format.md, "vms"): every key in one table, decoded
 * and encoded side by side (the model: Tart's VMConfig with its CodingKeys), the rules in the
 * setters. A setter marks the part it changed; lm_vm_record_put() writes only those parts, each
 * as a whole (a nested object is replaced), so that keys this version does not know stay. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "str.h"
#include "text.h"

/* The parts a setter changes, each written as a whole. */
enum {
	PART_STATUS = 1u << 0,
	PART_PROFILE = 1u << 1,
	PART_MARK = 1u << 2,
	PART_MANAGER = 1u << 3,
	PART_ENABLED_AT = 1u << 4,
	PART_ADDRESS = 1u << 5,
	PART_STARTED_AT = 1u << 6,
	PART_GUEST = 1u << 7,
	PART_BUNDLE = 1u << 8,
	PART_PROBE = 1u << 9,
	PART_AGENTS = 1u << 10,
	PART_HOST_PREFERENCE = 1u << 11
};

typedef enum {
	K_STRING,       /* a fixed field; "" when absent; written even when empty */
	K_STRING_SET,   /* the same, written only when not empty (absent means unknown) */
	K_MARK,         /* the same, and removed when empty */
	K_NUMBER,       /* 0 when absent */
	K_STATUS,       /* "enabling" / "enabled" / "rolling-back" */
	K_PROFILE_JSON, /* the profile, as its JSON text */
	K_BOOT_TIME,    /* epoch seconds; out of range reads as unknown (0) */
	K_SIP,          /* "enabled", "disabled", "custom"; anything else reads as not reported */
	K_REPORT,       /* a capability report as a JSON object (lm_report **); one that no longer
	                   parses reads as absent */
	K_AGENTS,       /* the agents array (agent_keys below) */
	K_PREF_MODE,    /* "always", "auto", "never" (lm_host_pref_mode); absent or unknown: always */
	K_PREF_NEEDED   /* true, false (lm_pref_needed); absent: unknown */
} key_kind;

#define F(field) offsetof(lm_vm_record, field), sizeof(((lm_vm_record *)0)->field)
static const struct key {
	unsigned part;
	const char *object; /* NULL: the VM's record itself; else the nested object it is in */
	const char *name;
	key_kind kind;
	size_t offset, size;
} keys[] = {
	{ PART_STATUS, NULL, "status", K_STATUS, F(status) },
	{ PART_PROFILE, NULL, "profile", K_STRING, F(profile_name) },
	{ PART_PROFILE, NULL, "profile_json", K_PROFILE_JSON, F(profile) },
	{ PART_MARK, NULL, "enable_run", K_MARK, F(enable_run) },
	{ PART_MANAGER, NULL, "manager", K_STRING_SET, F(manager) },
	{ PART_ENABLED_AT, NULL, "enabled_at", K_NUMBER, F(enabled_at) },
	{ PART_ADDRESS, NULL, "address", K_STRING, F(address) },
	{ PART_STARTED_AT, NULL, "vm_started_at", K_NUMBER, F(vm_started_at) },
	{ PART_GUEST, "guest", "os", K_STRING, F(guest.os) },
	{ PART_GUEST, "guest", "arch", K_STRING, F(guest.arch) },
	{ PART_GUEST, "guest", "os_version", K_STRING, F(guest.os_version) },
	{ PART_GUEST, "guest", "boot_time", K_BOOT_TIME, F(guest.boot_time) },
	{ PART_GUEST, "guest", "home", K_STRING, F(guest.home) },
	{ PART_GUEST, "guest", "sip", K_SIP, F(guest.sip) },
	{ PART_BUNDLE, "bundle", "id", K_STRING, F(bundle.id) },
	{ PART_BUNDLE, "bundle", "platform", K_STRING, F(bundle.platform) },
	{ PART_BUNDLE, "bundle", "injection_variable", K_STRING, F(bundle.injection) },
	{ PART_BUNDLE, "bundle", "shim", K_STRING, F(bundle.shim) },
	{ PART_BUNDLE, "bundle", "probe", K_STRING, F(bundle.probe) },
	{ PART_PROBE, "last_probe", "at", K_NUMBER, F(probed_at) },
	{ PART_PROBE, "last_probe", "stock", K_REPORT, F(stock) },
	{ PART_PROBE, "last_probe", "shimmed", K_REPORT, F(shimmed) },
	{ PART_PROBE, "last_probe", "exercised", K_REPORT, F(exercised) },
	{ PART_AGENTS, NULL, "agents", K_AGENTS, F(agents) },
	{ PART_HOST_PREFERENCE, "host_preference", "mode", K_PREF_MODE, F(pref_mode) },
	{ PART_HOST_PREFERENCE, "host_preference", "needed", K_PREF_NEEDED, F(pref_needed) },
};
#undef F

/* An agent's keys ("agents": [{...}]). */
#define A(field) offsetof(lm_vm_record_agent, field), sizeof(((lm_vm_record_agent *)0)->field)
typedef enum { A_STRING, A_ARGV, A_BOOL, A_NUMBER } agent_kind;
static const struct agent_key {
	const char *name;
	agent_kind kind;
	size_t offset, size;
} agent_keys[] = {
	{ "label", A_STRING, A(label) },
	{ "plist", A_STRING, A(plist) },
	{ "program", A_STRING, A(program) },
	{ "argv", A_ARGV, A(argv) },
	{ "keep_alive", A_BOOL, A(keep_alive) },
	{ "run_at_load", A_BOOL, A(run_at_load) },
	{ "installed_at", A_NUMBER, A(installed_at) },
};
#undef A

static const char *const status_names[] = {
	[LM_VM_STATUS_ENABLING] = "enabling",
	[LM_VM_STATUS_ENABLED] = "enabled",
	[LM_VM_STATUS_ROLLING_BACK] = "rolling-back",
};

static const char *const sip_states[] = {"enabled", "disabled", "custom"};

#define FIELD(base, k) ((char *)(base) + (k)->offset)

/* ---- decoding ---- */

static int copy_string(const cJSON *obj, const char *key, const char *object, char *out, size_t len)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	const char *s = cJSON_IsString(v) ? v->valuestring : "";

	if (lm_text_format(out, len, "%s", s) < 0)
		return lm_error_set(LM_ECORRUPT, "state journal: \"%s%s%s\" is longer than %zu bytes (the limit); the "
		    "journal was changed by hand or is damaged (docs/state-format.md)", object ? object : "",
		    object ? "." : "", key, len - 1);
	return 0;
}

static double number(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static int decode_agent(const cJSON *j, lm_vm_record_agent *a)
{
	const struct agent_key *k;
	const cJSON *v, *arg;
	size_t n = 0;
	int rc;

	memset(a, 0, sizeof(*a));
	for (k = agent_keys; k < agent_keys + sizeof(agent_keys) / sizeof(agent_keys[0]); k++) {
		v = cJSON_GetObjectItemCaseSensitive(j, k->name);
		switch (k->kind) {
		case A_STRING:
			if ((rc = copy_string(j, k->name, "agents[]", FIELD(a, k), k->size)) < 0)
				return rc;
			break;
		case A_ARGV:
			if ((a->argv = calloc((size_t)cJSON_GetArraySize(v) + 1, sizeof(char *))) == NULL)
				return lm_error_nomem();
			for (arg = cJSON_IsArray(v) ? v->child : NULL; arg != NULL; arg = arg->next) {
				if (!cJSON_IsString(arg))
					return lm_error_set(LM_ECORRUPT, "state journal: agent %s's \"argv\" holds something "
					    "other than strings (docs/state-format.md)", a->label);
				if ((a->argv[n++] = strdup(arg->valuestring)) == NULL)
					return lm_error_nomem();
			}
			break;
		case A_BOOL:
			*(int *)(void *)FIELD(a, k) = cJSON_IsTrue(v);
			break;
		case A_NUMBER:
			*(double *)(void *)FIELD(a, k) = cJSON_IsNumber(v) ? v->valuedouble : 0;
			break;
		}
	}
	if (lm_agent_label_check(a->label) < 0)
		return lm_error_set(LM_ECORRUPT, "state journal: an agent's label is not valid: %s", lm_error_last()->message);
	return 0;
}

static int decode_report(const cJSON *item, lm_report **out)
{
	char *json;
	int rc;

	*out = NULL;
	if (!cJSON_IsObject(item))
		return 0;
	if ((json = cJSON_PrintUnformatted(item)) == NULL)
		return lm_error_nomem();
	/* A report an older or newer probe wrote that no longer parses is as good as none; one that
	 * could not be held for want of memory is an error. */
	rc = lm_report_from_json(out, json, strlen(json));
	free(json);
	if (rc == LM_ENOMEM)
		return rc;
	if (rc < 0) {
		*out = NULL;
		lm_error_clear();
	}
	return 0;
}

static int decode_key(const struct key *k, const cJSON *obj, lm_vm_record *r)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, k->name);
	void *field = FIELD(r, k);
	size_t i;
	int rc;

	switch (k->kind) {
	case K_STRING:
	case K_STRING_SET:
	case K_MARK:
		return copy_string(obj, k->name, k->object, field, k->size);
	case K_NUMBER:
		*(double *)field = number(obj, k->name);
		return 0;
	case K_STATUS:
		for (i = 1; i < sizeof(status_names) / sizeof(status_names[0]); i++)
			if (cJSON_IsString(v) && strcmp(v->valuestring, status_names[i]) == 0)
				*(lm_vm_status *)field = (lm_vm_status)i;
		return 0;
	case K_PROFILE_JSON:
		if (!cJSON_IsString(v))
			return 0;
		return lm_profile_parse((lm_profile **)field, v->valuestring, strlen(v->valuestring), "state journal");
	case K_BOOT_TIME:
		/* A boot time outside what an epoch second can be reads as unknown, as a missing one. */
		if (cJSON_IsNumber(v) && v->valuedouble > 0 && v->valuedouble < 1e11)
			*(double *)field = v->valuedouble;
		return 0;
	case K_SIP:
		for (i = 0; i < sizeof(sip_states) / sizeof(sip_states[0]); i++)
			if (cJSON_IsString(v) && strcmp(v->valuestring, sip_states[i]) == 0)
				snprintf(field, k->size, "%s", sip_states[i]);
		return 0;
	case K_REPORT:
		return decode_report(v, (lm_report **)field);
	case K_AGENTS:
		if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0)
			return 0;
		if ((r->agents = calloc((size_t)cJSON_GetArraySize(v), sizeof(*r->agents))) == NULL)
			return lm_error_nomem();
		for (v = v->child; v != NULL; v = v->next) {
			rc = decode_agent(v, &r->agents[r->nagents]);
			r->nagents++; /* disposed whole, even when half decoded */
			if (rc < 0)
				return rc;
		}
		return 0;
	case K_PREF_MODE:
		if (cJSON_IsString(v) && lm_host_pref_mode_parse(v->valuestring, (lm_host_pref_mode *)field) < 0)
			lm_error_clear(); /* a mode this version does not know: the default's rules, the safe ones */
		return 0;
	case K_PREF_NEEDED:
		*(lm_pref_needed *)field = cJSON_IsTrue(v) ? LM_PREF_NEEDED_YES : cJSON_IsFalse(v) ? LM_PREF_NEEDED_NO :
		    LM_PREF_NEEDED_UNKNOWN;
		return 0;
	}
	return 0;
}

const char *lm_vm_record_status_name(lm_vm_status status)
{
	return status > LM_VM_STATUS_NONE && status <= LM_VM_STATUS_ROLLING_BACK ? status_names[status] : "";
}

lm_vm_status lm_vm_record_status_of(const cJSON *entry)
{
	lm_vm_record r;

	memset(&r, 0, sizeof(r));
	(void)decode_key(&keys[0], entry, &r);
	return r.status;
}

void lm_vm_record_manager_of(const cJSON *entry, char *buf, size_t size)
{
	lm_vm_record r;
	const struct key *k;

	memset(&r, 0, sizeof(r));
	for (k = keys; k < keys + sizeof(keys) / sizeof(keys[0]); k++)
		if (k->part == PART_MANAGER && decode_key(k, entry, &r) < 0)
			lm_error_clear();
	snprintf(buf, size, "%s", r.manager);
}

int lm_vm_record_decode(const cJSON *entry, const char *name, lm_vm_record *r)
{
	const struct key *k;
	int rc;

	memset(r, 0, sizeof(*r));
	if (lm_text_format(r->name, sizeof(r->name), "%s", name) < 0)
		return lm_error_set(LM_ECORRUPT, "state journal: a VM's name is longer than %d bytes", LM_VM_NAME_MAX - 1);
	if (entry == NULL)
		return 0;
	if (!cJSON_IsObject(entry))
		return lm_error_set(LM_ECORRUPT, "state journal: the record of %s is not an object", r->name);
	r->known = 1;
	for (k = keys; k < keys + sizeof(keys) / sizeof(keys[0]); k++) {
		const cJSON *obj = k->object != NULL ? cJSON_GetObjectItemCaseSensitive(entry, k->object) : entry;
		if (k->object != NULL && !cJSON_IsObject(obj))
			continue;
		if ((rc = decode_key(k, obj, r)) < 0) {
			lm_vm_record_dispose(r);
			return rc;
		}
	}
	return 0;
}

/* ---- encoding ---- */

static cJSON *encode_agent(const lm_vm_record_agent *a)
{
	const struct agent_key *k;
	cJSON *j = cJSON_CreateObject(), *argv;
	size_t i;

	for (k = agent_keys; j != NULL && k < agent_keys + sizeof(agent_keys) / sizeof(agent_keys[0]); k++) {
		const void *field = (const char *)a + k->offset;
		cJSON *item = NULL;
		switch (k->kind) {
		case A_STRING:
			item = cJSON_CreateString(field);
			break;
		case A_ARGV:
			item = argv = cJSON_CreateArray();
			for (i = 0; argv != NULL && a->argv != NULL && a->argv[i] != NULL; i++)
				if (!cJSON_AddItemToArray(argv, cJSON_CreateString(a->argv[i]))) {
					cJSON_Delete(argv);
					item = NULL;
					break;
				}
			break;
		case A_BOOL:
			item = cJSON_CreateBool(*(const int *)field != 0);
			break;
		case A_NUMBER:
			item = cJSON_CreateNumber(*(const double *)field);
			break;
		}
		if (item == NULL || !cJSON_AddItemToObject(j, k->name, item)) {
			cJSON_Delete(item);
			cJSON_Delete(j);
			j = NULL;
		}
	}
	return j;
}

static cJSON *encode_report(const lm_report *report)
{
	char *json = NULL;
	cJSON *parsed;

	if (lm_report_to_json(report, &json) < 0)
		return NULL;
	parsed = cJSON_Parse(json);
	lm_free(json);
	return parsed;
}

/* The key's value as a new item; *skip when it is written as absent. NULL: out of memory. */
static cJSON *encode_key(const struct key *k, const lm_vm_record *r, int *skip)
{
	const void *field = (const char *)r + k->offset;
	char *json = NULL;
	cJSON *item;
	size_t i;

	*skip = 0;
	switch (k->kind) {
	case K_STRING:
		return cJSON_CreateString(field);
	case K_STRING_SET:
	case K_MARK:
	case K_SIP:
		if ((*skip = ((const char *)field)[0] == '\0'))
			return NULL;
		return cJSON_CreateString(field);
	case K_NUMBER:
	case K_BOOT_TIME:
		return cJSON_CreateNumber(*(const double *)field);
	case K_STATUS:
		if ((*skip = r->status == LM_VM_STATUS_NONE))
			return NULL;
		return cJSON_CreateString(status_names[r->status]);
	case K_PROFILE_JSON:
		if ((*skip = r->profile == NULL))
			return NULL;
		if (lm_profile_to_json(r->profile, &json) < 0)
			return NULL;
		item = cJSON_CreateString(json);
		lm_free(json);
		return item;
	case K_REPORT:
		if ((*skip = *(lm_report *const *)field == NULL))
			return NULL;
		return encode_report(*(lm_report *const *)field);
	case K_AGENTS:
		if ((*skip = r->nagents == 0))
			return NULL;
		if ((item = cJSON_CreateArray()) == NULL)
			return NULL;
		for (i = 0; i < r->nagents; i++)
			if (!cJSON_AddItemToArray(item, encode_agent(&r->agents[i]))) {
				cJSON_Delete(item);
				return NULL;
			}
		return item;
	case K_PREF_MODE:
		return cJSON_CreateString(lm_host_pref_mode_name(*(const lm_host_pref_mode *)field));
	case K_PREF_NEEDED:
		if ((*skip = *(const lm_pref_needed *)field == LM_PREF_NEEDED_UNKNOWN))
			return NULL;
		return cJSON_CreateBool(*(const lm_pref_needed *)field == LM_PREF_NEEDED_YES);
	}
	return NULL;
}

int lm_vm_record_encode(const lm_vm_record *r, cJSON *entry)
{
	const struct key *k;
	cJSON *obj, *item;
	int skip;

	/* A nested object of a changed part is written anew, whole. Every key keeps its place in the
	 * entry (replaced where it is, not moved to the end), so that a record put back unchanged is
	 * the same text (lm_state_save writes nothing then). */
	for (k = keys; k < keys + sizeof(keys) / sizeof(keys[0]); k++)
		if ((r->changed & k->part) && k->object != NULL &&
		    (obj = cJSON_GetObjectItemCaseSensitive(entry, k->object)) != NULL)
			while (obj->child != NULL)
				cJSON_Delete(cJSON_DetachItemViaPointer(obj, obj->child));
	for (k = keys; k < keys + sizeof(keys) / sizeof(keys[0]); k++) {
		if (!(r->changed & k->part))
			continue;
		obj = entry;
		if (k->object != NULL && (obj = cJSON_GetObjectItemCaseSensitive(entry, k->object)) == NULL &&
		    (obj = cJSON_AddObjectToObject(entry, k->object)) == NULL)
			return lm_error_nomem();
		item = encode_key(k, r, &skip);
		if (skip) {
			cJSON_DeleteItemFromObjectCaseSensitive(obj, k->name);
			continue;
		}
		if (item == NULL)
			return lm_error_nomem();
		if (cJSON_GetObjectItemCaseSensitive(obj, k->name) != NULL ?
		    !cJSON_ReplaceItemInObjectCaseSensitive(obj, k->name, item) : !cJSON_AddItemToObject(obj, k->name, item)) {
			cJSON_Delete(item);
			return lm_error_nomem();
		}
	}
	return 0;
}

/* ---- in the journal ---- */

int lm_vm_record_get(lm_state *st, const char *name, lm_vm_record *r)
{
	const cJSON *vms = cJSON_GetObjectItemCaseSensitive(lm_state_doc(st), "vms");

	return lm_vm_record_decode(cJSON_GetObjectItemCaseSensitive(vms, name), name, r);
}

int lm_vm_record_put(lm_state *st, const lm_vm_record *r)
{
	cJSON *doc = lm_state_doc(st), *vms, *entry;

	if ((vms = cJSON_GetObjectItemCaseSensitive(doc, "vms")) == NULL &&
	    (vms = cJSON_AddObjectToObject(doc, "vms")) == NULL)
		return lm_error_nomem();
	if ((entry = cJSON_GetObjectItemCaseSensitive(vms, r->name)) == NULL &&
	    (entry = cJSON_AddObjectToObject(vms, r->name)) == NULL)
		return lm_error_nomem();
	return lm_vm_record_encode(r, entry);
}

int lm_vm_record_load(lm_context *ctx, const char *name, lm_vm_record *r)
{
	lm_state *st = NULL;
	int rc;

	memset(r, 0, sizeof(*r));
	if ((rc = lm_journal_open(&st, ctx, LM_STATE_READONLY, 10)) < 0)
		return rc;
	rc = lm_vm_record_get(st, name, r);
	lm_state_close(st);
	return rc;
}

static void agent_dispose(lm_vm_record_agent *a)
{
	lm_strv_free(a->argv);
	a->argv = NULL;
}

void lm_vm_record_dispose(lm_vm_record *r)
{
	size_t i;

	if (r == NULL)
		return;
	lm_profile_free(r->profile);
	lm_report_free(r->stock);
	lm_report_free(r->shimmed);
	lm_report_free(r->exercised);
	for (i = 0; i < r->nagents; i++)
		agent_dispose(&r->agents[i]);
	free(r->agents);
	memset(r, 0, sizeof(*r));
}

int lm_vm_record_uses_preference(const lm_vm_record *r)
{
	return r->pref_needed != LM_PREF_NEEDED_NO;
}

static int uses_preference_of(const cJSON *entry)
{
	const cJSON *hp = cJSON_GetObjectItemCaseSensitive(entry, "host_preference");

	return !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(hp, "needed"));
}

int lm_vm_record_live(lm_state *st, const char *except, char *names, size_t len)
{
	const cJSON *vm;
	size_t used = 0;
	int n = 0;

	if (names != NULL && len > 0)
		names[0] = '\0';
	cJSON_ArrayForEach(vm, cJSON_GetObjectItemCaseSensitive(lm_state_doc(st), "vms")) {
		if (except != NULL && strcmp(vm->string, except) == 0)
			continue;
		/* Only the status and the preference's need are read: a record damaged elsewhere still
		 * counts by them. A VM proven without the preference does not keep it. */
		if (lm_vm_record_status_of(vm) == LM_VM_STATUS_NONE || !uses_preference_of(vm))
			continue;
		if (names != NULL && used < len) {
			int w = snprintf(names + used, len - used, "%s%s", n > 0 ? ", " : "", vm->string);
			lm_text_mark_cut(names + used, len - used, w); /* a long list ends in "..." */
			used += w > 0 ? (size_t)w : 0;
		}
		n++;
	}
	return n;
}

static int by_key(const void *a, const void *b)
{
	return strcmp((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

int lm_vm_record_managers(lm_state *st, char ***names, char ***managers)
{
	const cJSON *vm, **vms;
	size_t n = 0, i, count = (size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(lm_state_doc(st), "vms"));
	char manager[32];

	*names = *managers = NULL;
	if ((vms = calloc(count + 1, sizeof(*vms))) == NULL)
		return lm_error_nomem();
	cJSON_ArrayForEach(vm, cJSON_GetObjectItemCaseSensitive(lm_state_doc(st), "vms"))
		vms[n++] = vm;
	qsort(vms, n, sizeof(*vms), by_key);
	if ((*names = calloc(n + 1, sizeof(**names))) == NULL || (*managers = calloc(n + 1, sizeof(**managers))) == NULL)
		goto nomem;
	for (i = 0; i < n; i++) {
		lm_vm_record_manager_of(vms[i], manager, sizeof(manager));
		if (((*managers)[i] = strdup(manager)) == NULL || ((*names)[i] = strdup(vms[i]->string)) == NULL)
			goto nomem;
	}
	free(vms);
	return 0;
nomem:
	free(vms);
	lm_strv_free(*names);
	lm_strv_free(*managers);
	*names = *managers = NULL;
	return lm_error_nomem();
}

/* ---- setters ---- */

/* A string into its fixed field, whole or not at all. */
static int set_string(char *field, size_t size, const char *value, const char *what)
{
	if (lm_text_format(field, size, "%s", value != NULL ? value : "") < 0)
		return lm_error_set(LM_EINVALID, "%s is longer than %zu bytes, more than the state journal keeps", what,
		    size - 1);
	return 0;
}

void lm_vm_record_set_status(lm_vm_record *r, lm_vm_status status)
{
	r->status = status;
	r->changed |= PART_STATUS;
}

int lm_vm_record_set_profile(lm_vm_record *r, const lm_profile *profile)
{
	char *json = NULL;
	lm_profile *copy = NULL;
	int rc;

	if ((rc = set_string(r->profile_name, sizeof(r->profile_name), lm_profile_name(profile), "the profile's name")) < 0)
		return rc;
	/* A copy through its JSON: what is recorded is what a later command will read back. */
	if ((rc = lm_profile_to_json(profile, &json)) < 0 ||
	    (rc = lm_profile_parse(&copy, json, strlen(json), "the profile")) < 0) {
		lm_free(json);
		return rc;
	}
	lm_free(json);
	lm_profile_free(r->profile);
	r->profile = copy;
	r->changed |= PART_PROFILE;
	return 0;
}

int lm_vm_record_set_mark(lm_vm_record *r, const char *mark)
{
	int rc;

	if ((rc = set_string(r->enable_run, sizeof(r->enable_run), mark, "an enable's mark")) < 0)
		return rc;
	r->changed |= PART_MARK;
	return 0;
}

int lm_vm_record_marked(const lm_vm_record *r, const char *mark)
{
	return r->known && r->enable_run[0] != '\0' && strcmp(r->enable_run, mark) == 0;
}

int lm_vm_record_set_manager(lm_vm_record *r, const char *manager)
{
	int rc;

	if (manager == NULL || manager[0] == '\0')
		return 0;
	if ((rc = set_string(r->manager, sizeof(r->manager), manager, "the VM manager's name")) < 0)
		return rc;
	r->changed |= PART_MANAGER;
	return 0;
}

void lm_vm_record_set_enabled_at(lm_vm_record *r, double when)
{
	if (r->enabled_at != 0)
		return;
	r->enabled_at = when;
	r->changed |= PART_ENABLED_AT;
}

int lm_vm_record_set_address(lm_vm_record *r, const char *address)
{
	int rc;

	if ((rc = set_string(r->address, sizeof(r->address), address, "the VM's address")) < 0)
		return rc;
	r->changed |= PART_ADDRESS;
	return 0;
}

void lm_vm_record_set_started_at(lm_vm_record *r, double when)
{
	r->vm_started_at = when;
	r->changed |= PART_STARTED_AT;
}

void lm_vm_record_set_host_preference(lm_vm_record *r, lm_host_pref_mode mode, lm_pref_needed needed)
{
	r->pref_mode = mode;
	r->pref_needed = needed;
	r->changed |= PART_HOST_PREFERENCE;
}

void lm_vm_record_set_guest(lm_vm_record *r, const lm_guest_facts *guest)
{
	size_t i;

	r->guest = *guest;
	/* Only a state csrutil can report is recorded. */
	for (i = 0; i < sizeof(sip_states) / sizeof(sip_states[0]); i++)
		if (strcmp(r->guest.sip, sip_states[i]) == 0)
			break;
	if (i == sizeof(sip_states) / sizeof(sip_states[0]))
		r->guest.sip[0] = '\0';
	r->changed |= PART_GUEST;
}

int lm_vm_record_set_bundle(lm_vm_record *r, const char *id, const char *platform, const char *injection,
    const char *shim, const char *probe)
{
	int rc;

	if ((rc = set_string(r->bundle.id, sizeof(r->bundle.id), id, "the bundle's id")) < 0 ||
	    (rc = set_string(r->bundle.platform, sizeof(r->bundle.platform), platform, "the bundle's platform")) < 0 ||
	    (rc = set_string(r->bundle.injection, sizeof(r->bundle.injection), injection, "the injection variable")) < 0 ||
	    (rc = set_string(r->bundle.shim, sizeof(r->bundle.shim), shim, "the shim's name")) < 0 ||
	    (rc = set_string(r->bundle.probe, sizeof(r->bundle.probe), probe, "the probe's name")) < 0)
		return rc;
	r->changed |= PART_BUNDLE;
	return 0;
}

static int report_copy(const lm_report *from, lm_report **to)
{
	char *json = NULL;
	int rc;

	*to = NULL;
	if (from == NULL)
		return 0;
	if ((rc = lm_report_to_json(from, &json)) < 0)
		return rc;
	rc = lm_report_from_json(to, json, strlen(json));
	lm_free(json);
	return rc;
}

int lm_vm_record_set_probe(lm_vm_record *r, double at, const lm_report *stock, const lm_report *shimmed,
    const lm_report *exercised)
{
	lm_report *s = NULL, *m = NULL, *e = NULL;
	int rc;

	if ((rc = report_copy(stock, &s)) < 0 || (rc = report_copy(shimmed, &m)) < 0 ||
	    (rc = report_copy(exercised, &e)) < 0) {
		lm_report_free(s);
		lm_report_free(m);
		return rc;
	}
	lm_report_free(r->stock);
	lm_report_free(r->shimmed);
	lm_report_free(r->exercised);
	r->stock = s;
	r->shimmed = m;
	r->exercised = e;
	r->probed_at = at;
	r->changed |= PART_PROBE;
	return 0;
}

int lm_vm_record_add_agent(lm_vm_record *r, const lm_agent_spec *spec, const lm_agent_info *info)
{
	lm_vm_record_agent a, *grown;
	size_t i;
	int rc;

	memset(&a, 0, sizeof(a));
	if ((rc = lm_agent_label_check(info->label)) < 0 ||
	    (rc = set_string(a.label, sizeof(a.label), info->label, "the agent's label")) < 0 ||
	    (rc = set_string(a.plist, sizeof(a.plist), info->plist, "the agent's plist path")) < 0 ||
	    (rc = set_string(a.program, sizeof(a.program), info->program, "the agent's program")) < 0)
		return rc;
	/* The program is recorded resolved (info->program); argv keeps what follows it. */
	if ((a.argv = calloc(spec->argc + 1, sizeof(*a.argv))) == NULL)
		return lm_error_nomem();
	for (i = 1; i < spec->argc; i++)
		if ((a.argv[i - 1] = strdup(spec->argv[i])) == NULL) {
			agent_dispose(&a);
			return lm_error_nomem();
		}
	a.keep_alive = spec->keep_alive != 0;
	a.run_at_load = spec->run_at_load != 0;
	a.installed_at = info->installed_at;
	/* The same label again: the new one takes the old one's place in the list's end. */
	lm_vm_record_remove_agent(r, a.label);
	if ((grown = realloc(r->agents, (r->nagents + 1) * sizeof(*grown))) == NULL) {
		agent_dispose(&a);
		return lm_error_nomem();
	}
	r->agents = grown;
	r->agents[r->nagents++] = a;
	r->changed |= PART_AGENTS;
	return 0;
}

int lm_vm_record_remove_agent(lm_vm_record *r, const char *label)
{
	size_t i;

	for (i = 0; i < r->nagents; i++) {
		if (strcmp(r->agents[i].label, label) != 0)
			continue;
		agent_dispose(&r->agents[i]);
		memmove(&r->agents[i], &r->agents[i + 1], (r->nagents - i - 1) * sizeof(*r->agents));
		r->nagents--;
		r->changed |= PART_AGENTS;
		return 1;
	}
	return 0;
}

const lm_vm_record_agent *lm_vm_record_find_agent(const lm_vm_record *r, const char *label)
{
	size_t i;

	for (i = 0; i < r->nagents; i++)
		if (strcmp(r->agents[i].label, label) == 0)
			return &r->agents[i];
	return NULL;
}

void lm_vm_record_agent_info(const lm_vm_record_agent *a, lm_agent_info *info)
{
	memset(info, 0, sizeof(*info));
	memcpy(info->label, a->label, sizeof(info->label));
	memcpy(info->plist, a->plist, sizeof(info->plist));
	memcpy(info->program, a->program, sizeof(info->program));
	info->installed_at = a->installed_at;
	snprintf(info->state, sizeof(info->state), "unknown");
	info->shim_loaded = -1;
	info->shim_widened = -1;
}
