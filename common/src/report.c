/* The capability report: the probe's line format (docs/report-format.md) and its JSON form.
 *
 * The line parser reads untrusted guest output: it walks the text with a bounded cursor, checks
 * every line before it looks at it, and builds nothing the caller sees until the whole report,
 * up to its end=1 line, has been accepted. */
#include "report_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error_internal.h"
#include "exercise_internal.h"
#include "json.h"
#include "lume-metal/exercise_list.h"
#include "lume-metal/workload.h"
#include "text.h"

#define FORMAT_NAME "lume-metal-report"
#define FORMAT_VERSION 1

lm_report *lm_report_alloc(void)
{
	lm_report *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return NULL;
	memset(r->family, -1, sizeof(r->family));
	if ((r->device = lm_text_dup("")) == NULL) {
		free(r);
		return NULL;
	}
	return r;
}

void lm_report_free(lm_report *report)
{
	if (report == NULL)
		return;
	free(report->device);
	free(report->probe_version);
	free(report->shim_version);
	lm_exercise_free(report);
	free(report);
}

/* ---- line format ------------------------------------------------------------------------ */

enum { K_DEVICE, K_MAXTG, K_WS, K_UNIFIED, K_SHIM, K_PROBE_VERSION, K_SHIM_VERSION, K_EXERCISE_US, K_COUNT };
static const char *const scalar_keys[K_COUNT] = {
	"device", "max_threadgroup_memory", "recommended_max_working_set_size", "has_unified_memory",
	"shim_active", "probe_version", "shim_version", "exercise_us",
};
static const int scalar_required[K_COUNT] = {1, 1, 1, 1, 1, 0, 0, 0};

typedef struct {
	size_t line_no;
	lm_report *r;
	size_t seen_line[K_COUNT];             /* line where each scalar key was seen; 0 = not yet */
	size_t family_line[LM_FAMILY_COUNT];
	size_t exercise_line[LM_EXERCISE_COUNT];
	struct { const char *key; size_t n; } unknown[LM_REPORT_MAX_UNKNOWN];
	size_t n_unknown;
	char value[LM_REPORT_MAX_LINE + 1];    /* the decoded value of the current line */
	size_t value_len;
} line_parser;

static int line_fail(const line_parser *p, const char *fmt, ...) LM_PRINTF(2, 3);

static int line_fail(const line_parser *p, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	lm_text_mark_cut(msg, sizeof(msg), n);
	return lm_error_set(LM_EINVALID, "report: line %zu: %s", p->line_no, msg);
}

static int valid_key(const char *k, size_t n)
{
	size_t i;

	if (n == 0)
		return 0;
	for (i = 0; i < n; i++)
		if (!((k[i] >= 'A' && k[i] <= 'Z') || (k[i] >= 'a' && k[i] <= 'z') ||
		    (k[i] >= '0' && k[i] <= '9') || k[i] == '_' || k[i] == '.'))
			return 0;
	return 1;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decode an escaped value into p->value. */
static int decode_value(line_parser *p, const char *key, const char *v, size_t n)
{
	size_t i, o = 0;
	char shown[16];
	int hi, lo;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)v[i];
		if (c < 0x20 || c == 0x7f) {
			snprintf(shown, sizeof(shown), "0x%02x", c);
			return line_fail(p, "unescaped control byte %s in the value of '%s'; write it as \\xHH",
			    shown, key);
		}
		if (c != '\\') {
			p->value[o++] = (char)c;
			continue;
		}
		if (i + 1 >= n)
			return line_fail(p, "the value of '%s' ends with a lone backslash; write it as \\\\", key);
		c = (unsigned char)v[++i];
		if (c == '\\')
			p->value[o++] = '\\';
		else if (c == 'n')
			p->value[o++] = '\n';
		else if (c == 'r')
			p->value[o++] = '\r';
		else if (c == 't')
			p->value[o++] = '\t';
		else if (c == 'x') {
			if (i + 2 >= n || (hi = hexval(v[i + 1])) < 0 || (lo = hexval(v[i + 2])) < 0)
				return line_fail(p, "bad escape in the value of '%s': \\x needs two hex digits", key);
			if (hi == 0 && lo == 0)
				return line_fail(p, "the value of '%s' contains \\x00; NUL is not allowed", key);
			p->value[o++] = (char)(hi * 16 + lo);
			i += 2;
		} else {
			lm_text_quote(shown, sizeof(shown), (const char *)&v[i], 1, 1);
			return line_fail(p, "bad escape '\\%s' in the value of '%s' (allowed: \\\\, \\n, \\r, \\t, \\xHH)",
			    shown, key);
		}
	}
	p->value[o] = '\0';
	p->value_len = o;
	return 0;
}

static int parse_bool(line_parser *p, const char *key, const char *v, size_t n, int *out)
{
	char shown[96];

	if (n == 1 && (v[0] == '0' || v[0] == '1')) {
		*out = v[0] - '0';
		return 0;
	}
	lm_text_quote(shown, sizeof(shown), v, n, 40);
	return line_fail(p, "the value of '%s' must be 0 or 1, found '%s'", key, shown);
}

static int parse_number(line_parser *p, const char *key, const char *v, size_t n, uint64_t *out)
{
	char shown[96];

	if (lm_text_parse_u64(v, n, LM_JSON_INT_MAX, out) == 0)
		return 0;
	lm_text_quote(shown, sizeof(shown), v, n, 40);
	return line_fail(p, "the value of '%s' must be a decimal number in 0..9007199254740991, found '%s'",
	    key, shown);
}

static int store_string(line_parser *p, const char *key, char **dst)
{
	size_t bad;
	char where[32];
	char *copy;

	if (lm_utf8_check(p->value, p->value_len, &bad) != 0) {
		snprintf(where, sizeof(where), "%zu", bad);
		return line_fail(p, "the value of '%s' is not valid UTF-8 (decoded byte %s)", key, where);
	}
	if ((copy = lm_text_dup(p->value)) == NULL)
		return lm_error_nomem();
	free(*dst);
	*dst = copy;
	return 0;
}

static int check_format_line(line_parser *p, const char *v, size_t vn)
{
	const char *prefix = FORMAT_NAME "/";
	size_t pl = strlen(prefix), i, dot;
	uint64_t major, minor;
	char shown[96];

	lm_text_quote(shown, sizeof(shown), v, vn, 60);
	if (vn <= pl || memcmp(v, prefix, pl) != 0)
		return line_fail(p, "expected format=" FORMAT_NAME "/1, found format=%s", shown);
	/* MAJOR or MAJOR.MINOR: a minor version only adds keys, which this parser ignores. */
	for (dot = pl; dot < vn && v[dot] != '.'; dot++)
		;
	if (lm_text_parse_u64(v + pl, dot - pl, 1000000, &major) != 0 ||
	    (dot < vn && lm_text_parse_u64(v + dot + 1, vn - dot - 1, 1000000, &minor) != 0))
		return line_fail(p, "expected format=" FORMAT_NAME "/1, found format=%s", shown);
	if (major != FORMAT_VERSION) {
		for (i = 0; i < sizeof(shown) - 1 && pl + i < dot; i++)
			shown[i] = v[pl + i];
		shown[i] = '\0';
		return line_fail(p, "report format version %s is not supported (this lume-metal reads "
		    "version 1); use a probe and a lume-metal from the same release", shown);
	}
	return 0;
}

static int handle_line(line_parser *p, const char *line, size_t n, int *ended)
{
	const char *eq = memchr(line, '=', n), *v;
	char key[LM_REPORT_MAX_LINE + 1], shown[96];
	size_t kn, vn, i;
	int idx, b = 0, rc;

	if (n > 0 && line[n - 1] == '\r')
		return line_fail(p, "ends with a carriage return; report lines end with \\n only");
	if (p->line_no == 1 && (eq == NULL || (size_t)(eq - line) != 6 || memcmp(line, "format", 6) != 0)) {
		lm_text_quote(shown, sizeof(shown), line, n, 60);
		return line_fail(p, "missing version line: expected format=" FORMAT_NAME "/1 first, found '%s'", shown);
	}
	if (eq == NULL) {
		lm_text_quote(shown, sizeof(shown), line, n, 40);
		return line_fail(p, "expected KEY=VALUE, found '%s'", shown);
	}
	kn = (size_t)(eq - line);
	v = eq + 1;
	vn = n - kn - 1;
	if (!valid_key(line, kn)) {
		lm_text_quote(shown, sizeof(shown), line, kn, 40);
		return line_fail(p, "invalid key '%s' (keys are letters, digits, '_' and '.')", shown);
	}
	if (p->line_no == 1)
		return check_format_line(p, v, vn);
	memcpy(key, line, kn);
	key[kn] = '\0';
	if ((rc = decode_value(p, key, v, vn)) != 0)
		return rc;
	if (strcmp(key, "format") == 0)
		return line_fail(p, "duplicate key '%s'", key);
	if (strcmp(key, "end") == 0) {
		if (vn != 1 || v[0] != '1') {
			lm_text_quote(shown, sizeof(shown), v, vn, 40);
			return line_fail(p, "the value of 'end' must be 1, found '%s'", shown);
		}
		*ended = 1;
		return 0;
	}
	if (kn > 7 && memcmp(key, "family.", 7) == 0 && (idx = lm_family_index_by_name(key + 7, kn - 7)) >= 0) {
		if (p->family_line[idx] != 0)
			return line_fail(p, "duplicate key '%s'", key);
		p->family_line[idx] = p->line_no;
		if ((rc = parse_bool(p, key, v, vn, &b)) != 0)
			return rc;
		p->r->family[idx] = (signed char)b;
		return 0;
	}
	if (kn > 9 && memcmp(key, "exercise.", 9) == 0 && (idx = lm_exercise_index(key + 9, kn - 9)) >= 0) {
		lm_exercise_result res;
		size_t at;
		char **msg = &p->r->exercise_message[idx];
		if (p->exercise_line[idx] != 0)
			return line_fail(p, "duplicate key '%s'", key);
		p->exercise_line[idx] = p->line_no;
		if (lm_exercise_parse_value(p->value, p->value_len, &res, &at) != 0) {
			lm_text_quote(shown, sizeof(shown), v, vn, 40);
			return line_fail(p, "the value of '%s' must be pass, fail, fail: MESSAGE or error: MESSAGE, "
			    "found '%s'", key, shown);
		}
		p->r->exercise[idx] = (signed char)res;
		if (at < p->value_len) {
			memmove(p->value, p->value + at, p->value_len - at + 1);
			p->value_len -= at;
			return store_string(p, key, msg);
		}
		return 0;
	}
	for (i = 0; i < K_COUNT; i++)
		if (strcmp(key, scalar_keys[i]) == 0)
			break;
	if (i == K_COUNT) {
		/* Unknown key: ignored (a newer probe), but still checked for duplicates. */
		for (i = 0; i < p->n_unknown; i++)
			if (p->unknown[i].n == kn && memcmp(p->unknown[i].key, line, kn) == 0)
				return line_fail(p, "duplicate key '%s'", key);
		if (p->n_unknown == LM_REPORT_MAX_UNKNOWN)
			return line_fail(p, "more than %d unknown keys; this is not a capability report",
			    LM_REPORT_MAX_UNKNOWN);
		p->unknown[p->n_unknown].key = line;
		p->unknown[p->n_unknown].n = kn;
		p->n_unknown++;
		return 0;
	}
	if (p->seen_line[i] != 0)
		return line_fail(p, "duplicate key '%s'", key);
	p->seen_line[i] = p->line_no;
	switch (i) {
	case K_DEVICE: return store_string(p, key, &p->r->device);
	case K_PROBE_VERSION: return store_string(p, key, &p->r->probe_version);
	case K_SHIM_VERSION: return store_string(p, key, &p->r->shim_version);
	case K_MAXTG: return parse_number(p, key, v, vn, &p->r->max_threadgroup_memory);
	case K_WS: return parse_number(p, key, v, vn, &p->r->recommended_max_working_set_size);
	case K_EXERCISE_US:
		p->r->has_exercise_us = 1;
		return parse_number(p, key, v, vn, &p->r->exercise_us);
	case K_UNIFIED: return parse_bool(p, key, v, vn, &p->r->has_unified_memory);
	default: return parse_bool(p, key, v, vn, &p->r->shim_active);
	}
}

static int parse_lines(line_parser *p, const char *text, size_t len)
{
	const lm_family *families = lm_family_table(NULL);
	const char *line;
	lm_scan s;
	size_t n, i;
	char key[64];
	int r, ended = 0, rc;

	if (len > LM_REPORT_MAX_BYTES)
		return lm_error_set(LM_EINVALID, "report: %zu bytes; a capability report is at most %d bytes",
		    len, LM_REPORT_MAX_BYTES);
	lm_scan_init(&s, text, len);
	while (!ended && (r = lm_scan_line(&s, &line, &n)) != 0) {
		p->line_no++;
		if (n > LM_REPORT_MAX_LINE)
			return line_fail(p, "longer than %d bytes", LM_REPORT_MAX_LINE);
		if (memchr(line, '\0', n) != NULL)
			return line_fail(p, "NUL byte; a report is text");
		if (r == 2)
			return line_fail(p, "truncated report: the last line has no newline");
		if ((rc = handle_line(p, line, n, &ended)) != 0)
			return rc;
	}
	if (p->line_no == 0)
		return lm_error_set(LM_EINVALID, "report: empty; expected format=" FORMAT_NAME "/1 on line 1");
	if (!ended)
		return lm_error_set(LM_EINVALID, "report: truncated report: no end=1 line after line %zu", p->line_no);
	if (lm_scan_left(&s) != 0) {
		p->line_no++;
		return line_fail(p, "data after end=1");
	}
	for (i = 0; i < K_COUNT; i++)
		if (scalar_required[i] && p->seen_line[i] == 0)
			return line_fail(p, "report ended without required key '%s'", scalar_keys[i]);
	for (i = 0; i < LM_FAMILY_COUNT; i++) {
		if (p->family_line[i] == 0) {
			snprintf(key, sizeof(key), "family.%s", families[i].name);
			return line_fail(p, "report ended without required key '%s'", key);
		}
	}
	return 0;
}

int lm_report_parse_lines(lm_report **out, const char *text, size_t len)
{
	line_parser *p;
	int rc;

	*out = NULL;
	if (text == NULL)
		len = 0;
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return lm_error_nomem();
	if ((p->r = lm_report_alloc()) == NULL) {
		free(p);
		return lm_error_nomem();
	}
	rc = parse_lines(p, text, len);
	if (rc == 0)
		*out = p->r;
	else
		lm_report_free(p->r);
	free(p);
	return rc;
}

static void put_escaped(lm_buf *b, const char *s)
{
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '\\')
			lm_buf_adds(b, "\\\\");
		else if (c == '\n')
			lm_buf_adds(b, "\\n");
		else if (c == '\r')
			lm_buf_adds(b, "\\r");
		else if (c == '\t')
			lm_buf_adds(b, "\\t");
		else if (c < 0x20 || c == 0x7f)
			lm_buf_addf(b, "\\x%02x", c);
		else
			lm_buf_add(b, &c, 1);
	}
}

int lm_report_to_lines(const lm_report *report, char **out)
{
	const lm_family *families = lm_family_table(NULL);
	lm_buf b;
	int i;

	*out = NULL;
	lm_buf_init(&b, LM_BUF_TEXT_MAX);
	/* Exercise lines make it the probe's minor version: readers of 1 ignore them. */
	lm_buf_adds(&b, lm_report_has_exercise(report) ? "format=" LM_EXERCISE_REPORT_FORMAT "\ndevice=" :
	    "format=" FORMAT_NAME "/1\ndevice=");
	put_escaped(&b, report->device);
	lm_buf_adds(&b, "\n");
	for (i = 0; i < LM_FAMILY_COUNT; i++)
		if (report->family[i] >= 0)
			lm_buf_addf(&b, "family.%s=%d\n", families[i].name, report->family[i]);
	lm_buf_addf(&b, "max_threadgroup_memory=%llu\n", (unsigned long long)report->max_threadgroup_memory);
	lm_buf_addf(&b, "recommended_max_working_set_size=%llu\n",
	    (unsigned long long)report->recommended_max_working_set_size);
	lm_buf_addf(&b, "has_unified_memory=%d\nshim_active=%d\n", report->has_unified_memory, report->shim_active);
	if (report->probe_version != NULL) {
		lm_buf_adds(&b, "probe_version=");
		put_escaped(&b, report->probe_version);
		lm_buf_adds(&b, "\n");
	}
	if (report->shim_version != NULL) {
		lm_buf_adds(&b, "shim_version=");
		put_escaped(&b, report->shim_version);
		lm_buf_adds(&b, "\n");
	}
	lm_exercise_lines(&b, report, put_escaped);
	if (report->has_exercise_us)
		lm_buf_addf(&b, "exercise_us=%llu\n", (unsigned long long)report->exercise_us);
	lm_buf_adds(&b, "end=1\n");
	return lm_buf_take(&b, out, NULL);
}

/* ---- JSON form --------------------------------------------------------------------------- */

static int add_flags(cJSON *doc, const lm_report *report)
{
	lm_workload_flags f;
	cJSON *w = cJSON_AddObjectToObject(doc, "workloads");

	lm_workload_derive(report, &f);
	return w != NULL && cJSON_AddBoolToObject(w, "llama_simdgroup_reduction", f.llama_simdgroup_reduction) &&
	    cJSON_AddBoolToObject(w, "llama_simdgroup_mm", f.llama_simdgroup_mm) &&
	    cJSON_AddBoolToObject(w, "llama_bfloat16", f.llama_bfloat16) &&
	    cJSON_AddBoolToObject(w, "llama_tensor", f.llama_tensor) &&
	    cJSON_AddBoolToObject(w, "mlx_residency_risk", f.mlx_residency_risk);
}

int lm_report_to_json(const lm_report *report, char **out)
{
	const lm_family *families = lm_family_table(NULL);
	const char *top;
	cJSON *doc = cJSON_CreateObject(), *fam;
	int i, ok;

	*out = NULL;
	top = lm_family_name(lm_report_apple_family(report));
	ok = doc != NULL && cJSON_AddStringToObject(doc, "format", FORMAT_NAME) &&
	    cJSON_AddNumberToObject(doc, "version", FORMAT_VERSION) &&
	    cJSON_AddStringToObject(doc, "device", report->device) &&
	    (fam = cJSON_AddObjectToObject(doc, "families")) != NULL;
	for (i = 0; ok && i < LM_FAMILY_COUNT; i++)
		if (report->family[i] >= 0)
			ok = cJSON_AddBoolToObject(fam, families[i].name, report->family[i]) != NULL;
	ok = ok && (top != NULL ? cJSON_AddStringToObject(doc, "highest_apple_family", top) != NULL
	                        : cJSON_AddNullToObject(doc, "highest_apple_family") != NULL) &&
	    cJSON_AddNumberToObject(doc, "max_threadgroup_memory", (double)report->max_threadgroup_memory) &&
	    cJSON_AddNumberToObject(doc, "recommended_max_working_set_size",
	        (double)report->recommended_max_working_set_size) &&
	    cJSON_AddBoolToObject(doc, "has_unified_memory", report->has_unified_memory) &&
	    cJSON_AddBoolToObject(doc, "shim_active", report->shim_active);
	if (ok && report->probe_version != NULL)
		ok = cJSON_AddStringToObject(doc, "probe_version", report->probe_version) != NULL;
	if (ok && report->shim_version != NULL)
		ok = cJSON_AddStringToObject(doc, "shim_version", report->shim_version) != NULL;
	ok = ok && add_flags(doc, report);
	if (ok && lm_report_has_exercise(report)) {
		cJSON *ex = lm_exercise_json(report);
		ok = ex != NULL && cJSON_AddItemToObject(doc, "exercise", ex);
	}
	/* Beside the exercise, not in it: readers walk the exercise's members as results. */
	if (ok && report->has_exercise_us)
		ok = cJSON_AddNumberToObject(doc, "exercise_seconds", (double)report->exercise_us / 1e6) != NULL;
	if (ok)
		*out = lm_json_print_canonical(doc);
	cJSON_Delete(doc);
	return *out == NULL ? lm_error_nomem() : 0;
}

static int json_string(const cJSON *doc, const char *key, int required, char **dst)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(doc, key);
	lm_json_path path = LM_JSON_PATH_KEY(NULL, key);
	char found[96];
	char *copy;

	if (item == NULL) {
		if (required)
			return lm_json_fail("report", NULL, "missing field \"%s\"", key);
		return 0;
	}
	if (!cJSON_IsString(item))
		return lm_json_fail("report", &path, "expected a string, found %s",
		    lm_json_describe(item, found, sizeof(found)));
	if ((copy = lm_text_dup(item->valuestring)) == NULL)
		return lm_error_nomem();
	free(*dst);
	*dst = copy;
	return 0;
}

static int json_required(const cJSON *doc, const char *key, const cJSON **item)
{
	if ((*item = cJSON_GetObjectItemCaseSensitive(doc, key)) == NULL)
		return lm_json_fail("report", NULL, "missing field \"%s\"", key);
	return 0;
}

static int from_json(lm_report *r, const cJSON *doc)
{
	const lm_family *families = lm_family_table(NULL);
	const cJSON *item, *fam;
	lm_json_path path_format = LM_JSON_PATH_KEY(NULL, "format");
	lm_json_path path_version = LM_JSON_PATH_KEY(NULL, "version");
	lm_json_path path_families = LM_JSON_PATH_KEY(NULL, "families");
	char found[96];
	uint64_t version;
	int i, b, rc;

	if ((rc = json_required(doc, "format", &item)) != 0)
		return rc;
	if (!cJSON_IsString(item) || strcmp(item->valuestring, FORMAT_NAME) != 0)
		return lm_json_fail("report", &path_format, "expected \"" FORMAT_NAME "\", found %s",
		    lm_json_describe(item, found, sizeof(found)));
	if ((rc = json_required(doc, "version", &item)) != 0 ||
	    (rc = lm_json_get_uint(item, "report", &path_version, 1, 1000000, &version)) != 0)
		return rc;
	if (version != FORMAT_VERSION)
		return lm_json_fail("report", &path_version, "expected 1, found %llu (a report from a newer "
		    "lume-metal; update this one)", (unsigned long long)version);
	if ((rc = json_string(doc, "device", 1, &r->device)) != 0 ||
	    (rc = json_string(doc, "probe_version", 0, &r->probe_version)) != 0 ||
	    (rc = json_string(doc, "shim_version", 0, &r->shim_version)) != 0)
		return rc;
	if ((rc = json_required(doc, "families", &fam)) != 0)
		return rc;
	if (!cJSON_IsObject(fam))
		return lm_json_fail("report", &path_families, "expected an object, found %s",
		    lm_json_describe(fam, found, sizeof(found)));
	/* Families this build does not know are ignored; missing ones are simply not carried. */
	for (i = 0; i < LM_FAMILY_COUNT; i++) {
		lm_json_path p = LM_JSON_PATH_KEY(&path_families, families[i].name);
		if ((item = cJSON_GetObjectItemCaseSensitive(fam, families[i].name)) == NULL)
			continue;
		if ((rc = lm_json_get_bool(item, "report", &p, &b)) != 0)
			return rc;
		r->family[i] = (signed char)b;
	}
	{
		lm_json_path p1 = LM_JSON_PATH_KEY(NULL, "max_threadgroup_memory");
		lm_json_path p2 = LM_JSON_PATH_KEY(NULL, "recommended_max_working_set_size");
		lm_json_path p3 = LM_JSON_PATH_KEY(NULL, "has_unified_memory");
		lm_json_path p4 = LM_JSON_PATH_KEY(NULL, "shim_active");
		if ((rc = json_required(doc, p1.key, &item)) != 0 ||
		    (rc = lm_json_get_uint(item, "report", &p1, 0, LM_JSON_INT_MAX, &r->max_threadgroup_memory)) != 0 ||
		    (rc = json_required(doc, p2.key, &item)) != 0 ||
		    (rc = lm_json_get_uint(item, "report", &p2, 0, LM_JSON_INT_MAX,
		        &r->recommended_max_working_set_size)) != 0 ||
		    (rc = json_required(doc, p3.key, &item)) != 0 ||
		    (rc = lm_json_get_bool(item, "report", &p3, &r->has_unified_memory)) != 0 ||
		    (rc = json_required(doc, p4.key, &item)) != 0 ||
		    (rc = lm_json_get_bool(item, "report", &p4, &r->shim_active)) != 0)
			return rc;
	}
	if ((item = cJSON_GetObjectItemCaseSensitive(doc, "exercise_seconds")) != NULL) {
		lm_json_path p = LM_JSON_PATH_KEY(NULL, "exercise_seconds");
		if (!cJSON_IsNumber(item) || item->valuedouble < 0 || item->valuedouble > 1e9)
			return lm_json_fail("report", &p, "expected seconds (a number, 0 or more), found %s",
			    lm_json_describe(item, found, sizeof(found)));
		r->exercise_us = (uint64_t)(item->valuedouble * 1e6 + 0.5);
		r->has_exercise_us = 1;
	}
	return lm_exercise_from_json(r, doc);
}

int lm_report_from_json(lm_report **out, const char *json, size_t len)
{
	lm_report *r;
	cJSON *doc;
	int rc;

	*out = NULL;
	if ((rc = lm_json_parse_object(&doc, json, len, "report", LM_REPORT_MAX_BYTES)) != 0)
		return rc;
	if ((r = lm_report_alloc()) == NULL) {
		cJSON_Delete(doc);
		return lm_error_nomem();
	}
	rc = from_json(r, doc);
	cJSON_Delete(doc);
	if (rc != 0) {
		lm_report_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

/* ---- accessors --------------------------------------------------------------------------- */

const char *lm_report_device(const lm_report *report)
{
	return report->device;
}

int lm_report_family(const lm_report *report, int family_value, int *supported)
{
	int i = lm_family_index(family_value);

	if (i < 0 || report->family[i] < 0)
		return lm_error_set(LM_ENOTFOUND, "the report does not carry GPU family %d", family_value);
	*supported = report->family[i];
	return 0;
}

int lm_report_apple_family(const lm_report *report)
{
	const lm_family *families = lm_family_table(NULL);
	int i, best = 0;

	for (i = 0; i < LM_FAMILY_COUNT; i++)
		if (families[i].value >= LM_FAMILY_APPLE_FIRST && families[i].value <= LM_FAMILY_APPLE_LAST_VALID &&
		    report->family[i] == 1 && families[i].value > best)
			best = families[i].value;
	return best;
}

uint64_t lm_report_max_threadgroup_memory(const lm_report *report)
{
	return report->max_threadgroup_memory;
}

uint64_t lm_report_recommended_working_set_size(const lm_report *report)
{
	return report->recommended_max_working_set_size;
}

int lm_report_unified_memory(const lm_report *report)
{
	return report->has_unified_memory;
}

int lm_report_shim_active(const lm_report *report)
{
	return report->shim_active;
}

const char *lm_report_probe_version(const lm_report *report)
{
	return report->probe_version;
}

const char *lm_report_shim_version(const lm_report *report)
{
	return report->shim_version;
}

int lm_report_stock_paravirtual(lm_report **out)
{
	const lm_family *families = lm_family_table(NULL);
	lm_report *r;
	char *dev;
	int i;

	*out = NULL;
	if ((r = lm_report_alloc()) == NULL || (dev = lm_text_dup("Apple Paravirtual device")) == NULL) {
		lm_report_free(r);
		return lm_error_nomem();
	}
	free(r->device);
	r->device = dev;
	for (i = 0; i < LM_FAMILY_COUNT; i++)
		r->family[i] = families[i].value >= 1001 && families[i].value <= 1005;
	r->max_threadgroup_memory = 32768;
	r->recommended_max_working_set_size = 0;
	r->has_unified_memory = 1;
	r->shim_active = 0;
	*out = r;
	return 0;
}
