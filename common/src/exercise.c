/* The probe's exercise results: their lines and JSON in the capability report, and the profile's
 * `expectations.exercise` (docs/report-format.md, docs/profile-format.md). One owner for both. */
#include "exercise_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error_internal.h"
#include "json.h"
#include "lume-metal/exercise_list.h"
#include "profile_internal.h"
#include "report_internal.h"
#include "text.h"

static const char *const names[LM_EXERCISE_COUNT] = {
#define LM_EX_NAME(name) #name,
	LM_EXERCISE_LIST(LM_EX_NAME)
#define LM_EX_TG_NAME(bytes) "threadgroup_memory." #bytes,
	LM_EXERCISE_TG_LIST(LM_EX_TG_NAME)
#undef LM_EX_TG_NAME
	LM_EXERCISE_DEFECT_LIST(LM_EX_NAME)
#undef LM_EX_NAME
};
static const uint64_t tg_bytes[LM_EXERCISE_COUNT] = {0, 0, 0, 16384, 32768, 65536, 0, 0};
static const char *const features[LM_EXERCISE_FEATURES] = {"simdgroup_reduction", "simdgroup_matrix", "bfloat16",
	"threadgroup_memory"};
static const char *const result_names[] = {"not run", "pass", "fail", "error"};

_Static_assert(sizeof(names) / sizeof(names[0]) == LM_EXERCISE_COUNT, "exercise_list.h and lm_exercise agree");

const char *lm_exercise_name(lm_exercise e)
{
	return (unsigned)e < LM_EXERCISE_COUNT ? names[e] : NULL;
}

int lm_exercise_is_defect(lm_exercise e)
{
	return e == LM_EXERCISE_NOCOPY_BUFFER || e == LM_EXERCISE_INDIRECT_COMMAND_BUFFER;
}

const char *lm_exercise_result_name(lm_exercise_result r)
{
	return (unsigned)r <= LM_EXERCISE_ERROR ? result_names[r] : "unknown";
}

const char *lm_exercise_feature_name(int feature)
{
	return feature >= 0 && feature < LM_EXERCISE_FEATURES ? features[feature] : NULL;
}

int lm_exercise_index(const char *name, size_t len)
{
	int i;

	for (i = 0; i < LM_EXERCISE_COUNT; i++)
		if (strlen(names[i]) == len && memcmp(names[i], name, len) == 0)
			return i;
	return -1;
}

/* ---- the report's lines ------------------------------------------------------------------ */

int lm_exercise_parse_value(const char *v, size_t n, lm_exercise_result *result, size_t *message_at)
{
	*message_at = n;
	if (n == 4 && memcmp(v, "pass", 4) == 0) {
		*result = LM_EXERCISE_PASS;
		return 0;
	}
	if (n == 4 && memcmp(v, "fail", 4) == 0) {
		*result = LM_EXERCISE_FAIL;
		return 0;
	}
	if (n >= 6 && memcmp(v, "fail: ", 6) == 0) {
		*result = LM_EXERCISE_FAIL;
		*message_at = 6;
		return 0;
	}
	if (n >= 7 && memcmp(v, "error: ", 7) == 0) {
		*result = LM_EXERCISE_ERROR;
		*message_at = 7;
		return 0;
	}
	return -1;
}

int lm_report_has_exercise(const lm_report *report)
{
	int i;

	for (i = 0; i < LM_EXERCISE_COUNT; i++)
		if (report->exercise[i] != LM_EXERCISE_NOT_RUN)
			return 1;
	return 0;
}

lm_exercise_result lm_report_exercise(const lm_report *report, lm_exercise e, const char **message)
{
	if (message != NULL)
		*message = "";
	if ((unsigned)e >= LM_EXERCISE_COUNT)
		return LM_EXERCISE_NOT_RUN;
	if (message != NULL && report->exercise_message[e] != NULL)
		*message = report->exercise_message[e];
	return (lm_exercise_result)report->exercise[e];
}

double lm_report_exercise_seconds(const lm_report *report)
{
	return report != NULL && report->has_exercise_us ? (double)report->exercise_us / 1e6 : -1;
}

uint64_t lm_report_threadgroup_memory_exercised(const lm_report *report)
{
	uint64_t best = 0;
	int i;

	for (i = 0; i < LM_EXERCISE_COUNT; i++)
		if (tg_bytes[i] != 0 && report->exercise[i] == LM_EXERCISE_PASS && tg_bytes[i] > best)
			best = tg_bytes[i];
	return best;
}

void lm_exercise_free(lm_report *report)
{
	int i;

	for (i = 0; i < LM_EXERCISE_COUNT; i++) {
		free(report->exercise_message[i]);
		report->exercise_message[i] = NULL;
	}
}

/* "pass", "fail", "fail: MESSAGE", "error: MESSAGE"; the word and the message through escape()
 * (": " needs no escaping). */
void lm_exercise_lines(lm_buf *b, const lm_report *r, void (*escape)(lm_buf *, const char *))
{
	const char *m;
	int i;

	for (i = 0; i < LM_EXERCISE_COUNT; i++) {
		if (r->exercise[i] == LM_EXERCISE_NOT_RUN)
			continue;
		m = r->exercise_message[i] != NULL ? r->exercise_message[i] : "";
		lm_buf_addf(b, "exercise.%s=", names[i]);
		escape(b, r->exercise[i] == LM_EXERCISE_PASS ? "pass" : r->exercise[i] == LM_EXERCISE_FAIL ? "fail" : "error");
		if (r->exercise[i] == LM_EXERCISE_ERROR || (r->exercise[i] == LM_EXERCISE_FAIL && m[0])) {
			lm_buf_adds(b, ": ");
			escape(b, m);
		}
		lm_buf_adds(b, "\n");
	}
}

/* ---- the report's JSON form -------------------------------------------------------------- */

static cJSON *result_json(const lm_report *r, int i)
{
	cJSON *o = cJSON_CreateObject();

	if (o == NULL || !cJSON_AddStringToObject(o, "result", result_names[r->exercise[i]]) ||
	    (r->exercise[i] != LM_EXERCISE_PASS && r->exercise_message[i] != NULL && r->exercise_message[i][0] &&
	     !cJSON_AddStringToObject(o, "message", r->exercise_message[i]))) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

cJSON *lm_exercise_json(const lm_report *r)
{
	cJSON *o, *tg, *sizes, *item;
	uint64_t largest = lm_report_threadgroup_memory_exercised(r);
	int i, ok;

	if (!lm_report_has_exercise(r))
		return NULL;
	ok = (o = cJSON_CreateObject()) != NULL;
	for (i = 0; ok && i < LM_EXERCISE_COUNT; i++) {
		if (tg_bytes[i] != 0 || lm_exercise_is_defect((lm_exercise)i) || r->exercise[i] == LM_EXERCISE_NOT_RUN)
			continue;
		ok = (item = result_json(r, i)) != NULL && cJSON_AddItemToObject(o, names[i], item);
	}
	ok = ok && (tg = cJSON_AddObjectToObject(o, "threadgroup_memory")) != NULL &&
	    (largest != 0 ? cJSON_AddNumberToObject(tg, "largest", (double)largest) != NULL
	                  : cJSON_AddNullToObject(tg, "largest") != NULL) &&
	    (sizes = cJSON_AddObjectToObject(tg, "sizes")) != NULL;
	for (i = 0; ok && i < LM_EXERCISE_COUNT; i++) {
		char key[24];
		if (tg_bytes[i] == 0 || r->exercise[i] == LM_EXERCISE_NOT_RUN)
			continue;
		snprintf(key, sizeof(key), "%llu", (unsigned long long)tg_bytes[i]);
		ok = (item = result_json(r, i)) != NULL && cJSON_AddItemToObject(sizes, key, item);
	}
	/* The known defects last, as the probe prints them. */
	for (i = 0; ok && i < LM_EXERCISE_COUNT; i++) {
		if (!lm_exercise_is_defect((lm_exercise)i) || r->exercise[i] == LM_EXERCISE_NOT_RUN)
			continue;
		ok = (item = result_json(r, i)) != NULL && cJSON_AddItemToObject(o, names[i], item);
	}
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static int read_result(lm_report *r, int i, const cJSON *obj, const lm_json_path *path)
{
	lm_json_path pr = LM_JSON_PATH_KEY(path, "result");
	lm_json_path pm = LM_JSON_PATH_KEY(path, "message");
	const cJSON *res, *msg;
	char found[96];
	int k;

	if (!cJSON_IsObject(obj))
		return lm_json_fail("report", path, "expected an object, found %s", lm_json_describe(obj, found, sizeof(found)));
	res = cJSON_GetObjectItemCaseSensitive(obj, "result");
	for (k = LM_EXERCISE_PASS; res != NULL && cJSON_IsString(res) && k <= LM_EXERCISE_ERROR; k++)
		if (strcmp(res->valuestring, result_names[k]) == 0)
			break;
	if (res == NULL || !cJSON_IsString(res) || k > LM_EXERCISE_ERROR)
		return lm_json_fail("report", &pr, "expected \"pass\", \"fail\" or \"error\", found %s",
		    res != NULL ? lm_json_describe(res, found, sizeof(found)) : "nothing");
	r->exercise[i] = (signed char)k;
	if ((msg = cJSON_GetObjectItemCaseSensitive(obj, "message")) != NULL) {
		if (!cJSON_IsString(msg))
			return lm_json_fail("report", &pm, "expected a string, found %s",
			    lm_json_describe(msg, found, sizeof(found)));
		free(r->exercise_message[i]);
		if ((r->exercise_message[i] = lm_text_dup(msg->valuestring)) == NULL)
			return lm_error_nomem();
	}
	return 0;
}

int lm_exercise_from_json(lm_report *r, const cJSON *doc)
{
	lm_json_path pe = LM_JSON_PATH_KEY(NULL, "exercise");
	lm_json_path pt = LM_JSON_PATH_KEY(&pe, "threadgroup_memory");
	lm_json_path ps = LM_JSON_PATH_KEY(&pt, "sizes");
	const cJSON *ex = cJSON_GetObjectItemCaseSensitive(doc, "exercise"), *item, *tg, *sizes;
	char found[96], key[24];
	int i, rc;

	if (ex == NULL || cJSON_IsNull(ex))
		return 0; /* a report stored before exercises, or made without --exercise */
	if (!cJSON_IsObject(ex))
		return lm_json_fail("report", &pe, "expected an object, found %s", lm_json_describe(ex, found, sizeof(found)));
	tg = cJSON_GetObjectItemCaseSensitive(ex, "threadgroup_memory");
	sizes = tg != NULL && cJSON_IsObject(tg) ? cJSON_GetObjectItemCaseSensitive(tg, "sizes") : NULL;
	for (i = 0; i < LM_EXERCISE_COUNT; i++) {
		if (tg_bytes[i] == 0) {
			lm_json_path pi = LM_JSON_PATH_KEY(&pe, names[i]);
			if ((item = cJSON_GetObjectItemCaseSensitive(ex, names[i])) != NULL &&
			    (rc = read_result(r, i, item, &pi)) != 0)
				return rc;
			continue;
		}
		snprintf(key, sizeof(key), "%llu", (unsigned long long)tg_bytes[i]);
		{
			lm_json_path pi = LM_JSON_PATH_KEY(&ps, key);
			if (sizes != NULL && (item = cJSON_GetObjectItemCaseSensitive(sizes, key)) != NULL &&
			    (rc = read_result(r, i, item, &pi)) != 0)
				return rc;
		}
	}
	return 0;
}

/* ---- the profile's expectations ---------------------------------------------------------- */

int lm_exercise_parse_expectations(signed char expect[LM_EXERCISE_FEATURES], const cJSON *obj, const char *src,
    const lm_json_path *path)
{
	const cJSON *item;
	char found[96];
	int f, rc;

	if (!cJSON_IsObject(obj))
		return lm_json_fail(src, path, "expected an object, found %s", lm_json_describe(obj, found, sizeof(found)));
	if ((rc = lm_json_check_members(obj, src, path, (const char *const[]){"simdgroup_reduction",
	    "simdgroup_matrix", "bfloat16", "threadgroup_memory", NULL})) != 0)
		return rc;
	for (f = 0; f < LM_EXERCISE_FEATURES; f++) {
		lm_json_path pf = LM_JSON_PATH_KEY(path, features[f]);
		if ((item = cJSON_GetObjectItemCaseSensitive(obj, features[f])) == NULL)
			continue;
		if (cJSON_IsString(item) && strcmp(item->valuestring, "pass") == 0)
			expect[f] = LM_EXERCISE_EXPECT_PASS;
		else if (cJSON_IsString(item) && strcmp(item->valuestring, "report") == 0)
			expect[f] = LM_EXERCISE_EXPECT_REPORT;
		else
			return lm_json_fail(src, &pf, "expected \"pass\" or \"report\", found %s",
			    lm_json_describe(item, found, sizeof(found)));
	}
	return 0;
}

void lm_exercise_default_expectations(signed char expect[LM_EXERCISE_FEATURES], int apple_family_max)
{
	/* What llama.cpp turns on with these answers must run (reference/metal.md): reduction and
	 * matrix from Apple7, bfloat16 from Apple6; threadgroup memory is reported. */
	expect[0] = apple_family_max >= 1007 ? LM_EXERCISE_EXPECT_PASS : LM_EXERCISE_EXPECT_REPORT;
	expect[1] = apple_family_max >= 1007 ? LM_EXERCISE_EXPECT_PASS : LM_EXERCISE_EXPECT_REPORT;
	expect[2] = apple_family_max >= 1006 ? LM_EXERCISE_EXPECT_PASS : LM_EXERCISE_EXPECT_REPORT;
	expect[3] = LM_EXERCISE_EXPECT_REPORT;
}

int lm_exercise_expectations_json(const signed char expect[LM_EXERCISE_FEATURES], cJSON *parent)
{
	cJSON *o = NULL;
	int f;

	for (f = 0; f < LM_EXERCISE_FEATURES; f++) {
		if (expect[f] == LM_EXERCISE_EXPECT_NONE)
			continue;
		if (o == NULL && (o = cJSON_AddObjectToObject(parent, "exercise")) == NULL)
			return -1;
		if (cJSON_AddStringToObject(o, features[f], expect[f] == LM_EXERCISE_EXPECT_PASS ? "pass" : "report") == NULL)
			return -1;
	}
	return 0;
}

lm_exercise_expect lm_profile_exercise_expect(const lm_profile *profile, int feature)
{
	if (feature < 0 || feature >= LM_EXERCISE_FEATURES)
		return LM_EXERCISE_EXPECT_NONE;
	return (lm_exercise_expect)profile->exercise_expect[feature];
}

/* One result for the message: "pass", "fail (element 3 is 2, expected 1)", "error: ...". */
static void describe(lm_buf *b, const lm_report *r, int i)
{
	const char *m = r->exercise_message[i] != NULL ? r->exercise_message[i] : "";

	switch (r->exercise[i]) {
	case LM_EXERCISE_PASS: lm_buf_addf(b, "%s passed", names[i]); break;
	case LM_EXERCISE_FAIL: lm_buf_addf(b, "%s ran and gave a wrong result%s%s", names[i], m[0] ? ": " : "", m); break;
	case LM_EXERCISE_ERROR: lm_buf_addf(b, "%s: error: %s", names[i], m); break;
	default: lm_buf_addf(b, "%s was not run", names[i]); break;
	}
}

int lm_profile_check_exercise(const lm_profile *profile, const lm_report *r)
{
	return lm_profile_check_exercise_waived(profile, r, 0);
}

int lm_profile_check_exercise_waived(const lm_profile *profile, const lm_report *r, unsigned waived)
{
	lm_buf proven, unproven;
	char *p, *u;
	int f, i, rc;

	lm_buf_init(&proven, LM_BUF_TEXT_MAX);
	lm_buf_init(&unproven, LM_BUF_TEXT_MAX);
	for (f = 0; f < LM_EXERCISE_FEATURES; f++) {
		if (profile->exercise_expect[f] != LM_EXERCISE_EXPECT_PASS || (waived & (1u << f)) != 0)
			continue;
		for (i = 0; i < LM_EXERCISE_COUNT; i++) {
			int is_feature = f < 3 ? i == f : tg_bytes[i] != 0 && tg_bytes[i] <= profile->caps.max_threadgroup_memory;
			lm_buf *b;
			if (!is_feature)
				continue;
			b = r->exercise[i] == LM_EXERCISE_PASS ? &proven : &unproven;
			if (lm_buf_len(b))
				lm_buf_adds(b, "; ");
			describe(b, r, i);
		}
	}
	if ((rc = lm_buf_take(&proven, &p, NULL)) < 0) {
		lm_buf_dispose(&unproven);
		return rc;
	}
	if ((rc = lm_buf_take(&unproven, &u, NULL)) < 0 || u[0] == '\0') {
		free(p);
		free(u);
		return rc;
	}
	/* What the exercise proves is that these kernels compile and compute correctly on this device;
	 * it says nothing of the host's feature level (reference/metal.md, 2026-12-02: stock devices
	 * that run them, and one that wrote zeros, are both reported). */
	rc = lm_error_set(LM_ENOTPROVEN, "profile '%s': the kernels the profile needs do not compile and compute "
	    "correctly on this device. Proven: the shim's answers%s%s. Not proven: %s. The answers come from the "
	    "shim; only the kernels show what the device runs. Whether the host preference makes them run "
	    "depends on the host and guest versions. Likely causes: the VM was started before the host "
	    "preference changed (a VM keeps the GPU level it started with), the preference was written to "
	    "another user's domain than the one the VM manager runs as, or this device does not run them at "
	    "either level", profile->name, p[0] ? ", and " : "", p, u);
	free(p);
	free(u);
	return rc;
}
