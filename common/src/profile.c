/* Capability profiles: the JSON format (docs/profile-format.md), its canonical form, the shim's
 * environment and the check of a profile's expectations against probe reports. */
#include "profile_internal.h"
#include "exercise_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error_internal.h"
#include "json.h"
#include "pref_default.h"
#include "report_internal.h"
#include "text.h"

#define FORMAT_NAME "lume-metal-profile"
#define FORMAT_VERSION 1

#define TG_MIN 1024ULL
#define TG_MAX 1048576ULL
#define WS_MIN 1048576ULL
#define TEXT_MAX 1024
#define SHORT_TEXT_MAX 128
#define VALIDATIONS_MAX 64
#define WORKLOADS_MAX 32

static const char *const top_fields[] = {"format", "version", "name", "description", "capabilities",
	"host_preference", "expectations", "validated_on", NULL};
static const char *const caps_fields[] = {"apple_family_max", "max_threadgroup_memory",
	"recommended_working_set_size", NULL};
static const char *const pref_fields[] = {"domain", "key", "value", NULL};
static const char *const expect_fields[] = {"stock", "shimmed", "exercise", NULL};
static const char *const side_fields[] = {"families", "min_threadgroup_memory",
	"min_recommended_working_set_size", "shim_active", NULL};
static const char *const validation_fields[] = {"chip", "host_os", "guest_os", "workloads", "evidence", NULL};
static const char *const side_names[2] = {"stock", "shimmed"};

/* ---- parsing ----------------------------------------------------------------------------- */

static int missing(const char *src, const lm_json_path *path, const char *field, const char *what)
{
	return lm_json_fail(src, path, "missing required field \"%s\" (%s)", field, what);
}

static int expect_object(const cJSON *item, const char *src, const lm_json_path *path)
{
	char found[96];

	if (cJSON_IsObject(item))
		return 0;
	return lm_json_fail(src, path, "expected an object, found %s", lm_json_describe(item, found, sizeof(found)));
}

static int has_control(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 1;
	return 0;
}

static int set_string(char **dst, const char *s)
{
	char *copy = lm_text_dup(s);

	if (copy == NULL)
		return lm_error_nomem();
	free(*dst);
	*dst = copy;
	return 0;
}

static int get_text(const cJSON *item, const char *src, const lm_json_path *path, size_t max, char **out)
{
	char found[96];

	if (!cJSON_IsString(item) || item->valuestring[0] == '\0' || strlen(item->valuestring) > max ||
	    has_control(item->valuestring))
		return lm_json_fail(src, path, "expected a non-empty string of at most %zu bytes without control "
		    "characters, found %s", max, lm_json_describe(item, found, sizeof(found)));
	return set_string(out, item->valuestring);
}

static int is_name_char(char c, int upper)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-' ||
	    (upper && c >= 'A' && c <= 'Z');
}

static int valid_ident(const char *s, size_t max, int upper)
{
	size_t i;

	if (s[0] == '\0' || s[0] == '.' || s[0] == '_' || s[0] == '-')
		return 0;
	for (i = 0; s[i] != '\0'; i++)
		if (i >= max || !is_name_char(s[i], upper))
			return 0;
	return 1;
}

static int get_name(const cJSON *item, const char *src, const lm_json_path *path, char **out)
{
	char found[96];

	if (!cJSON_IsString(item) || !valid_ident(item->valuestring, 64, 0))
		return lm_json_fail(src, path, "expected a name of 1..64 characters from a-z, 0-9, '.', '_', '-' "
		    "starting with a letter or digit, found %s", lm_json_describe(item, found, sizeof(found)));
	return set_string(out, item->valuestring);
}

static int get_ident(const cJSON *item, const char *src, const lm_json_path *path, const char *what, char **out)
{
	char found[96];

	if (!cJSON_IsString(item) || !valid_ident(item->valuestring, 255, 1))
		return lm_json_fail(src, path, "expected a preference %s of 1..255 characters from A-Z, a-z, 0-9, "
		    "'.', '_', '-' starting with a letter or digit, found %s", what,
		    lm_json_describe(item, found, sizeof(found)));
	return set_string(out, item->valuestring);
}

static int parse_caps(lm_profile *p, const cJSON *obj, const char *src, const lm_json_path *path)
{
	lm_json_path pa = LM_JSON_PATH_KEY(path, "apple_family_max");
	lm_json_path pt = LM_JSON_PATH_KEY(path, "max_threadgroup_memory");
	lm_json_path pw = LM_JSON_PATH_KEY(path, "recommended_working_set_size");
	const cJSON *item;
	uint64_t v;
	int rc;

	if ((rc = expect_object(obj, src, path)) != 0 || (rc = lm_json_check_members(obj, src, path, caps_fields)) != 0)
		return rc;
	if ((item = cJSON_GetObjectItemCaseSensitive(obj, pa.key)) == NULL)
		return missing(src, path, pa.key, "an integer in 1001..1999");
	if ((rc = lm_json_get_uint(item, src, &pa, LM_FAMILY_APPLE_FIRST, LM_FAMILY_APPLE_LAST_VALID, &v)) != 0)
		return rc;
	p->caps.apple_family_max = (int)v;
	if ((item = cJSON_GetObjectItemCaseSensitive(obj, pt.key)) == NULL)
		return missing(src, path, pt.key, "an integer in 1024..1048576");
	if ((rc = lm_json_get_uint(item, src, &pt, TG_MIN, TG_MAX, &p->caps.max_threadgroup_memory)) != 0)
		return rc;
	if ((item = cJSON_GetObjectItemCaseSensitive(obj, pw.key)) != NULL) {
		if ((rc = lm_json_get_uint(item, src, &pw, WS_MIN, LM_JSON_INT_MAX,
		    &p->caps.recommended_working_set_size)) != 0)
			return rc;
		p->caps.has_recommended_working_set_size = 1;
	}
	return 0;
}

static int parse_pref(lm_profile *p, const cJSON *obj, const char *src, const lm_json_path *path)
{
	lm_json_path pd = LM_JSON_PATH_KEY(path, "domain");
	lm_json_path pk = LM_JSON_PATH_KEY(path, "key");
	lm_json_path pv = LM_JSON_PATH_KEY(path, "value");
	const cJSON *item;
	char found[96];
	int64_t i64;
	int rc;

	if (obj != NULL) {
		if ((rc = expect_object(obj, src, path)) != 0 ||
		    (rc = lm_json_check_members(obj, src, path, pref_fields)) != 0)
			return rc;
		if ((item = cJSON_GetObjectItemCaseSensitive(obj, pd.key)) != NULL &&
		    (rc = get_ident(item, src, &pd, "domain", &p->pref_domain)) != 0)
			return rc;
		if ((item = cJSON_GetObjectItemCaseSensitive(obj, pk.key)) != NULL &&
		    (rc = get_ident(item, src, &pk, "key", &p->pref_key)) != 0)
			return rc;
		if ((item = cJSON_GetObjectItemCaseSensitive(obj, pv.key)) != NULL) {
			if (cJSON_IsBool(item)) {
				p->pref.value.type = LM_PREF_BOOL;
				p->pref.value.boolean = cJSON_IsTrue(item) ? 1 : 0;
			} else if (lm_json_int(item, INT64_MIN, INT64_MAX, &i64) == 0) {
				p->pref.value.type = LM_PREF_INTEGER;
				p->pref.value.integer = (long long)i64;
			} else if (cJSON_IsString(item)) {
				if ((rc = get_text(item, src, &pv, TEXT_MAX, &p->pref_string)) != 0)
					return rc;
				p->pref.value.type = LM_PREF_STRING;
			} else {
				return lm_json_fail(src, &pv, "expected true, false, an integer or a string, found %s",
				    lm_json_describe(item, found, sizeof(found)));
			}
		}
	}
	if (p->pref_domain == NULL && (rc = set_string(&p->pref_domain, LM_PREF_DEFAULT_DOMAIN)) != 0)
		return rc;
	if (p->pref_key == NULL && (rc = set_string(&p->pref_key, LM_PREF_DEFAULT_KEY)) != 0)
		return rc;
	return 0;
}

static const char *family_list_text(char *buf, size_t size)
{
	size_t n, i, o = 0;
	const lm_family *t = lm_family_table(&n);

	buf[0] = '\0';
	for (i = 0; i < n && o < size; i++)
		o += (size_t)snprintf(buf + o, size - o, "%s%s", i ? ", " : "", t[i].name);
	return buf;
}

static int parse_side(lm_expect_side *side, const cJSON *obj, const char *src, const lm_json_path *path)
{
	lm_json_path pf = LM_JSON_PATH_KEY(path, "families");
	lm_json_path pt = LM_JSON_PATH_KEY(path, "min_threadgroup_memory");
	lm_json_path pw = LM_JSON_PATH_KEY(path, "min_recommended_working_set_size");
	lm_json_path ps = LM_JSON_PATH_KEY(path, "shim_active");
	const cJSON *item, *fam;
	const char *hint;
	char known[256];
	int rc, idx, b;

	if ((rc = expect_object(obj, src, path)) != 0 || (rc = lm_json_check_members(obj, src, path, side_fields)) != 0)
		return rc;
	side->present = 1;
	if ((item = cJSON_GetObjectItemCaseSensitive(obj, pf.key)) != NULL) {
		if ((rc = expect_object(item, src, &pf)) != 0)
			return rc;
		for (fam = item->child; fam != NULL; fam = fam->next) {
			lm_json_path pn = LM_JSON_PATH_KEY(&pf, fam->string);
			if ((idx = lm_family_index_by_name(fam->string, strlen(fam->string))) < 0) {
				if ((hint = lm_family_suggest(fam->string)) != NULL)
					return lm_json_fail(src, &pn, "unknown GPU family; did you mean \"%s\"?", hint);
				return lm_json_fail(src, &pn, "unknown GPU family (known: %s)",
				    family_list_text(known, sizeof(known)));
			}
			if ((rc = lm_json_get_bool(fam, src, &pn, &b)) != 0)
				return rc;
			side->family[idx] = (signed char)b;
		}
	}
	if ((item = cJSON_GetObjectItemCaseSensitive(obj, pt.key)) != NULL) {
		if ((rc = lm_json_get_uint(item, src, &pt, 1, LM_JSON_INT_MAX, &side->min_threadgroup_memory)) != 0)
			return rc;
		side->has_min_threadgroup_memory = 1;
	}
	if ((item = cJSON_GetObjectItemCaseSensitive(obj, pw.key)) != NULL) {
		if ((rc = lm_json_get_uint(item, src, &pw, 1, LM_JSON_INT_MAX, &side->min_working_set_size)) != 0)
			return rc;
		side->has_min_working_set_size = 1;
	}
	if ((item = cJSON_GetObjectItemCaseSensitive(obj, ps.key)) != NULL) {
		if ((rc = lm_json_get_bool(item, src, &ps, &b)) != 0)
			return rc;
		side->shim_active = b;
	}
	return 0;
}

/* No "expectations": what any profile implies. Stock: the shim is not active. Shimmed: the shim is
 * active, the ceiling family (or the newest known one below it) is answered, Metal3 stays false,
 * and the limits reach the profile's floors. */
static void default_expectations(lm_profile *p)
{
	size_t n, i;
	const lm_family *t = lm_family_table(&n);
	lm_expect_side *shim = &p->expect[1];
	int top = -1;

	p->expect[0].present = 1;
	p->expect[0].shim_active = 0;
	shim->present = 1;
	shim->shim_active = 1;
	for (i = 0; i < n; i++)
		if (t[i].value >= LM_FAMILY_APPLE_FIRST && t[i].value <= p->caps.apple_family_max &&
		    (top < 0 || t[i].value > t[top].value))
			top = (int)i;
	if (top >= 0)
		shim->family[top] = 1;
	shim->family[lm_family_index(5001)] = 0;
	shim->has_min_threadgroup_memory = 1;
	shim->min_threadgroup_memory = p->caps.max_threadgroup_memory;
	if (p->caps.has_recommended_working_set_size) {
		shim->has_min_working_set_size = 1;
		shim->min_working_set_size = p->caps.recommended_working_set_size;
	}
}

static int parse_expectations(lm_profile *p, const cJSON *obj, const char *src, const lm_json_path *path)
{
	const cJSON *item;
	int rc, i;

	if (obj == NULL) {
		default_expectations(p);
		lm_exercise_default_expectations(p->exercise_expect, p->caps.apple_family_max);
		return 0;
	}
	if ((rc = expect_object(obj, src, path)) != 0 || (rc = lm_json_check_members(obj, src, path, expect_fields)) != 0)
		return rc;
	if ((item = cJSON_GetObjectItemCaseSensitive(obj, "exercise")) != NULL) {
		lm_json_path pe = LM_JSON_PATH_KEY(path, "exercise");
		if ((rc = lm_exercise_parse_expectations(p->exercise_expect, item, src, &pe)) != 0)
			return rc;
	}
	for (i = 0; i < 2; i++) {
		lm_json_path ps = LM_JSON_PATH_KEY(path, side_names[i]);
		if ((item = cJSON_GetObjectItemCaseSensitive(obj, side_names[i])) != NULL &&
		    (rc = parse_side(&p->expect[i], item, src, &ps)) != 0)
			return rc;
	}
	return 0;
}

static int parse_validation(lm_validation *v, const cJSON *obj, const char *src, const lm_json_path *path)
{
	static const char *const text_fields[] = {"chip", "host_os", "guest_os"};
	char **text_out[] = {&v->chip, &v->host_os, &v->guest_os};
	lm_json_path pw = LM_JSON_PATH_KEY(path, "workloads");
	lm_json_path pe = LM_JSON_PATH_KEY(path, "evidence");
	const cJSON *item, *w;
	char found[96];
	size_t i;
	int rc, n;

	if ((rc = expect_object(obj, src, path)) != 0 ||
	    (rc = lm_json_check_members(obj, src, path, validation_fields)) != 0)
		return rc;
	for (i = 0; i < 3; i++) {
		lm_json_path pt = LM_JSON_PATH_KEY(path, text_fields[i]);
		if ((item = cJSON_GetObjectItemCaseSensitive(obj, text_fields[i])) == NULL)
			return missing(src, path, text_fields[i], "a string");
		if ((rc = get_text(item, src, &pt, SHORT_TEXT_MAX, text_out[i])) != 0)
			return rc;
	}
	if ((item = cJSON_GetObjectItemCaseSensitive(obj, pw.key)) == NULL)
		return missing(src, path, pw.key, "an array of strings");
	n = cJSON_IsArray(item) ? cJSON_GetArraySize(item) : 0;
	if (!cJSON_IsArray(item) || n < 1 || n > WORKLOADS_MAX)
		return lm_json_fail(src, &pw, "expected an array of 1..%d strings, found %s", WORKLOADS_MAX,
		    lm_json_describe(item, found, sizeof(found)));
	if ((v->workloads = calloc((size_t)n, sizeof(*v->workloads))) == NULL)
		return lm_error_nomem();
	for (i = 0, w = item->child; w != NULL; w = w->next, i++) {
		lm_json_path pi = LM_JSON_PATH_INDEX(&pw, (int)i);
		v->workload_count = i + 1;
		if ((rc = get_text(w, src, &pi, SHORT_TEXT_MAX, &v->workloads[i])) != 0)
			return rc;
	}
	if ((item = cJSON_GetObjectItemCaseSensitive(obj, pe.key)) == NULL)
		return missing(src, path, pe.key, "a string");
	return get_text(item, src, &pe, TEXT_MAX, &v->evidence);
}

static int parse_validated(lm_profile *p, const cJSON *arr, const char *src, const lm_json_path *path)
{
	const cJSON *item;
	char found[96];
	size_t i;
	int n, rc;

	if (arr == NULL)
		return 0;
	n = cJSON_IsArray(arr) ? cJSON_GetArraySize(arr) : -1;
	if (n < 0 || n > VALIDATIONS_MAX)
		return lm_json_fail(src, path, "expected an array of at most %d validations, found %s",
		    VALIDATIONS_MAX, lm_json_describe(arr, found, sizeof(found)));
	if (n == 0)
		return 0;
	if ((p->validated = calloc((size_t)n, sizeof(*p->validated))) == NULL)
		return lm_error_nomem();
	for (i = 0, item = arr->child; item != NULL; item = item->next, i++) {
		lm_json_path pi = LM_JSON_PATH_INDEX(path, (int)i);
		p->validated_count = i + 1;
		if ((rc = parse_validation(&p->validated[i], item, src, &pi)) != 0)
			return rc;
	}
	return 0;
}

static int parse_root(lm_profile *p, const cJSON *root, const char *src)
{
	lm_json_path pf = LM_JSON_PATH_KEY(NULL, "format");
	lm_json_path pv = LM_JSON_PATH_KEY(NULL, "version");
	lm_json_path pn = LM_JSON_PATH_KEY(NULL, "name");
	lm_json_path pd = LM_JSON_PATH_KEY(NULL, "description");
	lm_json_path pc = LM_JSON_PATH_KEY(NULL, "capabilities");
	lm_json_path ph = LM_JSON_PATH_KEY(NULL, "host_preference");
	lm_json_path pe = LM_JSON_PATH_KEY(NULL, "expectations");
	lm_json_path pval = LM_JSON_PATH_KEY(NULL, "validated_on");
	const cJSON *item;
	char found[96];
	uint64_t version;
	int rc;

	/* The format and version first: a newer format's fields are not "unknown fields". */
	if ((item = cJSON_GetObjectItemCaseSensitive(root, pf.key)) == NULL)
		return missing(src, NULL, pf.key, "\"" FORMAT_NAME "\"");
	if (!cJSON_IsString(item) || strcmp(item->valuestring, FORMAT_NAME) != 0)
		return lm_json_fail(src, &pf, "expected \"" FORMAT_NAME "\", found %s",
		    lm_json_describe(item, found, sizeof(found)));
	if ((item = cJSON_GetObjectItemCaseSensitive(root, pv.key)) == NULL)
		return missing(src, NULL, pv.key, "1");
	if ((rc = lm_json_get_uint(item, src, &pv, 1, 1000000, &version)) != 0)
		return rc;
	if (version != FORMAT_VERSION)
		return lm_json_fail(src, &pv, "expected 1, found %llu; this lume-metal reads profile format version 1, "
		    "a newer lume-metal is needed for this profile", (unsigned long long)version);
	if ((rc = lm_json_check_members(root, src, NULL, top_fields)) != 0)
		return rc;
	if ((item = cJSON_GetObjectItemCaseSensitive(root, pn.key)) == NULL)
		return missing(src, NULL, pn.key, "a name such as \"my-profile\"");
	if ((rc = get_name(item, src, &pn, &p->name)) != 0)
		return rc;
	if ((item = cJSON_GetObjectItemCaseSensitive(root, pd.key)) == NULL)
		return missing(src, NULL, pd.key, "a string");
	if ((rc = get_text(item, src, &pd, TEXT_MAX, &p->description)) != 0)
		return rc;
	if ((item = cJSON_GetObjectItemCaseSensitive(root, pc.key)) == NULL)
		return missing(src, NULL, pc.key, "an object with apple_family_max and max_threadgroup_memory");
	if ((rc = parse_caps(p, item, src, &pc)) != 0)
		return rc;
	if ((rc = parse_pref(p, cJSON_GetObjectItemCaseSensitive(root, ph.key), src, &ph)) != 0)
		return rc;
	if ((rc = parse_expectations(p, cJSON_GetObjectItemCaseSensitive(root, pe.key), src, &pe)) != 0)
		return rc;
	return parse_validated(p, cJSON_GetObjectItemCaseSensitive(root, pval.key), src, &pval);
}

static lm_profile *profile_alloc(void)
{
	lm_profile *p = calloc(1, sizeof(*p));
	int i;

	if (p == NULL)
		return NULL;
	for (i = 0; i < 2; i++) {
		memset(p->expect[i].family, -1, sizeof(p->expect[i].family));
		p->expect[i].shim_active = -1;
	}
	p->pref.value.type = LM_PREF_BOOL;
	p->pref.value.boolean = 1;
	return p;
}

int lm_profile_parse(lm_profile **out, const char *json, size_t len, const char *source)
{
	const char *src = source != NULL ? source : "profile";
	lm_profile *p;
	cJSON *root;
	int rc;

	*out = NULL;
	if ((rc = lm_json_parse_object(&root, json, len, src, LM_PROFILE_MAX_BYTES)) != 0)
		return rc;
	if ((p = profile_alloc()) == NULL) {
		cJSON_Delete(root);
		return lm_error_nomem();
	}
	rc = parse_root(p, root, src);
	cJSON_Delete(root);
	if (rc != 0) {
		lm_profile_free(p);
		return rc;
	}
	p->pref.domain = p->pref_domain;
	p->pref.key = p->pref_key;
	p->pref.value.string = p->pref.value.type == LM_PREF_STRING ? p->pref_string : NULL;
	*out = p;
	return 0;
}

void lm_profile_free(lm_profile *profile)
{
	size_t i, j;

	if (profile == NULL)
		return;
	for (i = 0; i < profile->validated_count; i++) {
		lm_validation *v = &profile->validated[i];
		free(v->chip);
		free(v->host_os);
		free(v->guest_os);
		free(v->evidence);
		for (j = 0; j < v->workload_count; j++)
			free(v->workloads[j]);
		free(v->workloads);
	}
	free(profile->validated);
	free(profile->name);
	free(profile->description);
	free(profile->pref_domain);
	free(profile->pref_key);
	free(profile->pref_string);
	free(profile);
}

/* ---- accessors --------------------------------------------------------------------------- */

const char *lm_profile_name(const lm_profile *profile)
{
	return profile->name;
}

const char *lm_profile_description(const lm_profile *profile)
{
	return profile->description;
}

int lm_profile_validated(const lm_profile *profile)
{
	return profile->validated_count > 0;
}

const lm_profile_capabilities *lm_profile_caps(const lm_profile *profile)
{
	return &profile->caps;
}

const lm_pref_setting *lm_profile_host_preference(const lm_profile *profile)
{
	return &profile->pref;
}

size_t lm_profile_validation_count(const lm_profile *profile)
{
	return profile->validated_count;
}

int lm_profile_validation_get(const lm_profile *profile, size_t index, lm_profile_validation *out)
{
	const lm_validation *v;

	if (index >= profile->validated_count)
		return lm_error_set(LM_ENOTFOUND, "profile '%s' has %zu validations; there is no #%zu",
		    profile->name, profile->validated_count, index);
	v = &profile->validated[index];
	out->chip = v->chip;
	out->host_os = v->host_os;
	out->guest_os = v->guest_os;
	out->workloads = (const char *const *)v->workloads;
	out->workload_count = v->workload_count;
	out->evidence = v->evidence;
	return 0;
}

/* Enumerate a side's expectations in canonical order; returns how many there are and fills *out
 * with the one at `want` when it exists. */
static size_t side_items(const lm_expect_side *s, int shimmed, size_t want, lm_profile_expectation *out)
{
	const lm_family *t = lm_family_table(NULL);
	lm_profile_expectation e;
	size_t n = 0;
	int i;

#define LM_EMIT(kind_, family_, value_) do { \
		e.shimmed = shimmed; e.kind = (kind_); e.family = (family_); e.value = (value_); \
		if (n == want && out != NULL) *out = e; \
		n++; \
	} while (0)
	for (i = 0; i < LM_FAMILY_COUNT; i++)
		if (s->family[i] >= 0)
			LM_EMIT(LM_EXPECT_FAMILY, t[i].value, (uint64_t)s->family[i]);
	if (s->has_min_threadgroup_memory)
		LM_EMIT(LM_EXPECT_MIN_THREADGROUP_MEMORY, 0, s->min_threadgroup_memory);
	if (s->has_min_working_set_size)
		LM_EMIT(LM_EXPECT_MIN_WORKING_SET_SIZE, 0, s->min_working_set_size);
	if (s->shim_active >= 0)
		LM_EMIT(LM_EXPECT_SHIM_ACTIVE, 0, (uint64_t)s->shim_active);
#undef LM_EMIT
	return n;
}

size_t lm_profile_expectation_count(const lm_profile *profile)
{
	return side_items(&profile->expect[0], 0, (size_t)-1, NULL) +
	    side_items(&profile->expect[1], 1, (size_t)-1, NULL);
}

int lm_profile_expectation_get(const lm_profile *profile, size_t index, lm_profile_expectation *out)
{
	size_t n0 = side_items(&profile->expect[0], 0, index, out);

	if (index < n0)
		return 0;
	if (index - n0 < side_items(&profile->expect[1], 1, index - n0, out))
		return 0;
	return lm_error_set(LM_ENOTFOUND, "profile '%s' has %zu expectations; there is no #%zu",
	    profile->name, lm_profile_expectation_count(profile), index);
}

/* ---- canonical JSON ---------------------------------------------------------------------- */

static cJSON *side_json(const lm_expect_side *s)
{
	const lm_family *t = lm_family_table(NULL);
	cJSON *o = cJSON_CreateObject(), *fam = NULL;
	int i, ok = o != NULL;

	for (i = 0; ok && i < LM_FAMILY_COUNT; i++) {
		if (s->family[i] < 0)
			continue;
		if (fam == NULL)
			ok = (fam = cJSON_AddObjectToObject(o, "families")) != NULL;
		ok = ok && cJSON_AddBoolToObject(fam, t[i].name, s->family[i]) != NULL;
	}
	if (ok && s->has_min_threadgroup_memory)
		ok = cJSON_AddNumberToObject(o, "min_threadgroup_memory", (double)s->min_threadgroup_memory) != NULL;
	if (ok && s->has_min_working_set_size)
		ok = cJSON_AddNumberToObject(o, "min_recommended_working_set_size",
		    (double)s->min_working_set_size) != NULL;
	if (ok && s->shim_active >= 0)
		ok = cJSON_AddBoolToObject(o, "shim_active", s->shim_active) != NULL;
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static cJSON *profile_json(const lm_profile *p)
{
	cJSON *doc = cJSON_CreateObject(), *caps, *pref, *exp, *arr, *v, *w, *side;
	size_t i, j;
	int ok, k;

	ok = doc != NULL && cJSON_AddStringToObject(doc, "format", FORMAT_NAME) &&
	    cJSON_AddNumberToObject(doc, "version", FORMAT_VERSION) &&
	    cJSON_AddStringToObject(doc, "name", p->name) &&
	    cJSON_AddStringToObject(doc, "description", p->description) &&
	    (caps = cJSON_AddObjectToObject(doc, "capabilities")) != NULL &&
	    cJSON_AddNumberToObject(caps, "apple_family_max", p->caps.apple_family_max) &&
	    cJSON_AddNumberToObject(caps, "max_threadgroup_memory", (double)p->caps.max_threadgroup_memory) &&
	    (!p->caps.has_recommended_working_set_size ||
	     cJSON_AddNumberToObject(caps, "recommended_working_set_size",
	         (double)p->caps.recommended_working_set_size)) &&
	    (pref = cJSON_AddObjectToObject(doc, "host_preference")) != NULL &&
	    cJSON_AddStringToObject(pref, "domain", p->pref.domain) &&
	    cJSON_AddStringToObject(pref, "key", p->pref.key);
	if (ok) {
		if (p->pref.value.type == LM_PREF_BOOL)
			ok = cJSON_AddBoolToObject(pref, "value", p->pref.value.boolean) != NULL;
		else if (p->pref.value.type == LM_PREF_INTEGER)
			ok = cJSON_AddNumberToObject(pref, "value", (double)p->pref.value.integer) != NULL;
		else
			ok = cJSON_AddStringToObject(pref, "value", p->pref.value.string) != NULL;
	}
	ok = ok && (exp = cJSON_AddObjectToObject(doc, "expectations")) != NULL;
	for (k = 0; ok && k < 2; k++) {
		if (!p->expect[k].present)
			continue;
		ok = (side = side_json(&p->expect[k])) != NULL;
		/* Adding copies the name and can fail: the side would be missing from the text. */
		if (ok && !(ok = cJSON_AddItemToObject(exp, side_names[k], side)))
			cJSON_Delete(side);
	}
	ok = ok && lm_exercise_expectations_json(p->exercise_expect, exp) == 0;
	ok = ok && (arr = cJSON_AddArrayToObject(doc, "validated_on")) != NULL;
	for (i = 0; ok && i < p->validated_count; i++) {
		const lm_validation *val = &p->validated[i];
		ok = (v = cJSON_CreateObject()) != NULL && cJSON_AddItemToArray(arr, v) &&
		    cJSON_AddStringToObject(v, "chip", val->chip) &&
		    cJSON_AddStringToObject(v, "host_os", val->host_os) &&
		    cJSON_AddStringToObject(v, "guest_os", val->guest_os) &&
		    (w = cJSON_AddArrayToObject(v, "workloads")) != NULL;
		for (j = 0; ok && j < val->workload_count; j++) {
			cJSON *s = cJSON_CreateString(val->workloads[j]);
			ok = s != NULL && cJSON_AddItemToArray(w, s);
		}
		ok = ok && cJSON_AddStringToObject(v, "evidence", val->evidence);
	}
	if (!ok) {
		cJSON_Delete(doc);
		return NULL;
	}
	return doc;
}

int lm_profile_to_json(const lm_profile *profile, char **out)
{
	cJSON *doc = profile_json(profile);

	*out = NULL;
	if (doc != NULL)
		*out = lm_json_print_canonical(doc);
	cJSON_Delete(doc);
	return *out == NULL ? lm_error_nomem() : 0;
}

/* ---- the shim's environment -------------------------------------------------------------- */

int lm_profile_render_env(const lm_profile *profile, lm_env_entry out[LM_PROFILE_ENV_MAX], size_t *count)
{
	size_t n = 0;

	memset(out, 0, sizeof(lm_env_entry) * LM_PROFILE_ENV_MAX);
	out[n].name = "LUME_METAL_APPLE_FAMILY_MAX";
	snprintf(out[n++].value, sizeof(out[0].value), "%d", profile->caps.apple_family_max);
	out[n].name = "LUME_METAL_MAX_THREADGROUP_MEMORY";
	snprintf(out[n++].value, sizeof(out[0].value), "%llu",
	    (unsigned long long)profile->caps.max_threadgroup_memory);
	if (profile->caps.has_recommended_working_set_size) {
		out[n].name = "LUME_METAL_RECOMMENDED_WORKING_SET_SIZE";
		snprintf(out[n++].value, sizeof(out[0].value), "%llu",
		    (unsigned long long)profile->caps.recommended_working_set_size);
	}
	*count = n;
	return 0;
}

/* ---- expectations against reports -------------------------------------------------------- */

static void check_one(lm_buf *fails, const lm_profile_expectation *e, const lm_report *r)
{
	const char *side = side_names[e->shimmed];
	const char *sep = lm_buf_len(fails) ? "; " : "";
	int idx;

	switch (e->kind) {
	case LM_EXPECT_FAMILY:
		idx = lm_family_index(e->family);
		if (r->family[idx] < 0)
			lm_buf_addf(fails, "%s%s: %s expected %s, not reported", sep, side, lm_family_name(e->family),
			    e->value ? "true" : "false");
		else if ((uint64_t)r->family[idx] != e->value)
			lm_buf_addf(fails, "%s%s: %s expected %s, found %s", sep, side, lm_family_name(e->family),
			    e->value ? "true" : "false", r->family[idx] ? "true" : "false");
		break;
	case LM_EXPECT_MIN_THREADGROUP_MEMORY:
		if (r->max_threadgroup_memory < e->value)
			lm_buf_addf(fails, "%s%s: max_threadgroup_memory expected at least %llu, found %llu", sep, side,
			    (unsigned long long)e->value, (unsigned long long)r->max_threadgroup_memory);
		break;
	case LM_EXPECT_MIN_WORKING_SET_SIZE:
		if (r->recommended_max_working_set_size < e->value)
			lm_buf_addf(fails, "%s%s: recommended_max_working_set_size expected at least %llu, found %llu",
			    sep, side, (unsigned long long)e->value,
			    (unsigned long long)r->recommended_max_working_set_size);
		break;
	case LM_EXPECT_SHIM_ACTIVE:
		if ((uint64_t)(r->shim_active != 0) != e->value)
			lm_buf_addf(fails, "%s%s: shim_active expected %s, found %s", sep, side,
			    e->value ? "true" : "false", r->shim_active ? "true" : "false");
		break;
	}
}

int lm_profile_check(const lm_profile *profile, const lm_report *stock, const lm_report *shimmed)
{
	lm_profile_expectation e;
	lm_buf fails;
	size_t i, n = lm_profile_expectation_count(profile);
	char *text;
	int rc;

	lm_buf_init(&fails, LM_BUF_TEXT_MAX);
	for (i = 0; i < n; i++) {
		const lm_report *r;
		lm_profile_expectation_get(profile, i, &e);
		if ((r = e.shimmed ? shimmed : stock) != NULL)
			check_one(&fails, &e, r);
	}
	if ((rc = lm_buf_take(&fails, &text, NULL)) < 0 || text[0] == '\0') {
		free(text);
		return rc;
	}
	rc = lm_error_set(LM_EUNSUPPORTED, "profile '%s': the probe did not confirm its expectations: %s",
	    profile->name, text);
	free(text);
	return rc;
}

/* ---- the shim's answers ------------------------------------------------------------------ */

int lm_profile_apply(const lm_profile *profile, const lm_report *stock, lm_report **out)
{
	const lm_family *t = lm_family_table(NULL);
	lm_report *r;
	int i;

	*out = NULL;
	if ((r = lm_report_alloc()) == NULL)
		return lm_error_nomem();
	free(r->device);
	r->device = lm_text_dup(stock->device);
	r->probe_version = stock->probe_version ? lm_text_dup(stock->probe_version) : NULL;
	r->shim_version = stock->shim_version ? lm_text_dup(stock->shim_version) : NULL;
	if (r->device == NULL || (stock->probe_version && !r->probe_version) ||
	    (stock->shim_version && !r->shim_version)) {
		lm_report_free(r);
		return lm_error_nomem();
	}
	memcpy(r->family, stock->family, sizeof(r->family));
	for (i = 0; i < LM_FAMILY_COUNT; i++)
		if (t[i].value >= LM_FAMILY_APPLE_FIRST && t[i].value <= profile->caps.apple_family_max)
			r->family[i] = 1;
	r->max_threadgroup_memory = stock->max_threadgroup_memory;
	if (r->max_threadgroup_memory < profile->caps.max_threadgroup_memory)
		r->max_threadgroup_memory = profile->caps.max_threadgroup_memory;
	r->recommended_max_working_set_size = stock->recommended_max_working_set_size;
	if (profile->caps.has_recommended_working_set_size &&
	    r->recommended_max_working_set_size < profile->caps.recommended_working_set_size)
		r->recommended_max_working_set_size = profile->caps.recommended_working_set_size;
	r->has_unified_memory = stock->has_unified_memory;
	r->shim_active = 1;
	*out = r;
	return 0;
}
