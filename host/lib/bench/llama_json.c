/* llama-bench's machine-readable output (tools/llama-bench/llama-bench.cpp), as docs/bench.md lists
 * its variants: -o json (an array of objects, flushed per test) or -o jsonl (an object per line);
 * keys read by name, unknown ones ignored; flash_attn an int (-1 auto, 0, 1) or, in older builds,
 * a bool; load_mode ("mmap", ...) or, older, use_mmap (a bool); fields missing in one build or
 * another (n_depth, samples_ts) taken from what is there. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_internal.h"
#include "error_internal.h"
#include "json.h"
#include "text.h"

/* A test's token counts and samples stay far below these; a bigger value is a broken file. */
#define TOKENS_MAX 100000000ULL
#define SAMPLES_MAX 100000

void lm_llama_test_name(unsigned long long n_prompt, unsigned long long n_gen, unsigned long long n_depth,
    char *buf, size_t len)
{
	char depth[32] = "";

	if (n_depth != 0)
		snprintf(depth, sizeof(depth), "@d%llu", n_depth);
	if (n_prompt != 0 && n_gen != 0)
		snprintf(buf, len, "pp%llu+tg%llu%s", n_prompt, n_gen, depth);
	else if (n_gen != 0)
		snprintf(buf, len, "tg%llu%s", n_gen, depth);
	else
		snprintf(buf, len, "pp%llu%s", n_prompt, depth);
}

void lm_llama_record_name(const lm_llama_record *r, char *buf, size_t len)
{
	lm_llama_test_name(r->n_prompt, r->n_gen, r->n_depth, buf, len);
}

static void copy_string(const cJSON *obj, const char *key, char *out, size_t len)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	out[0] = '\0';
	if (cJSON_IsString(v))
		lm_text_format_cut(out, len, "%s", v->valuestring);
}

static int get_count(const cJSON *obj, const char *key, int required, const char *source,
    const lm_json_path *path, unsigned long long *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	lm_json_path p = LM_JSON_PATH_KEY(path, key);
	uint64_t u;
	int rc;
	char where[64];

	*out = 0;
	if (v == NULL) {
		if (!required)
			return 0;
		lm_json_path_format(path, where, sizeof(where));
		return lm_error_set(LM_EINVALID, "%s: %s: no \"%s\" (is this llama-bench's -o json output?)", source,
		    where, key);
	}
	if ((rc = lm_json_get_uint(v, source, &p, 0, TOKENS_MAX, &u)) < 0)
		return rc;
	*out = u;
	return 0;
}

/* samples_ts, else tokens / samples_ns, else avg_ts as one sample. */
static int read_samples(const cJSON *obj, lm_llama_record *r, const char *source, const lm_json_path *path)
{
	const cJSON *ts = cJSON_GetObjectItemCaseSensitive(obj, "samples_ts");
	const cJSON *ns = cJSON_GetObjectItemCaseSensitive(obj, "samples_ns");
	const cJSON *avg = cJSON_GetObjectItemCaseSensitive(obj, "avg_ts");
	const cJSON *arr = cJSON_IsArray(ts) ? ts : cJSON_IsArray(ns) ? ns : NULL;
	const char *key = arr == ts ? "samples_ts" : "samples_ns";
	const cJSON *e;
	double tokens = (double)(r->n_prompt + r->n_gen);
	size_t n = 0, i = 0;
	char where[96];

	if (arr == NULL) {
		if (!cJSON_IsNumber(avg) || !(avg->valuedouble > 0))
			return 0; /* a record without samples: reported as such */
		if ((r->samples_ts = malloc(sizeof(double))) == NULL)
			return lm_error_nomem();
		r->samples_ts[0] = avg->valuedouble;
		r->nsamples = 1;
		return 0;
	}
	n = (size_t)cJSON_GetArraySize(arr);
	if (n > SAMPLES_MAX) {
		lm_json_path_format(path, where, sizeof(where));
		return lm_error_set(LM_EINVALID, "%s: %s.%s: %zu samples (more than %d)", source, where, key, n, SAMPLES_MAX);
	}
	if (n == 0)
		return 0;
	if ((r->samples_ts = calloc(n, sizeof(double))) == NULL)
		return lm_error_nomem();
	cJSON_ArrayForEach(e, arr) {
		if (!cJSON_IsNumber(e) || !(e->valuedouble > 0) || e->valuedouble > 1e300) {
			lm_json_path_format(path, where, sizeof(where));
			return lm_error_set(LM_EINVALID, "%s: %s.%s[%zu]: expected a positive number", source, where, key, i);
		}
		r->samples_ts[i++] = arr == ts ? e->valuedouble : tokens * 1e9 / e->valuedouble;
	}
	r->nsamples = n;
	return 0;
}

static int read_record(const cJSON *obj, lm_llama_record *r, const char *source, const lm_json_path *path)
{
	const cJSON *fa = cJSON_GetObjectItemCaseSensitive(obj, "flash_attn");
	const cJSON *mmap = cJSON_GetObjectItemCaseSensitive(obj, "use_mmap");
	int rc;

	memset(r, 0, sizeof(*r));
	r->flash_attn = -1;
	if (!cJSON_IsObject(obj)) {
		char where[64];
		lm_json_path_format(path, where, sizeof(where));
		return lm_error_set(LM_EINVALID, "%s: %s: expected an object (a llama-bench record)", source, where);
	}
	if ((rc = get_count(obj, "n_prompt", 1, source, path, &r->n_prompt)) < 0 ||
	    (rc = get_count(obj, "n_gen", 1, source, path, &r->n_gen)) < 0 ||
	    (rc = get_count(obj, "n_depth", 0, source, path, &r->n_depth)) < 0 ||
	    (rc = read_samples(obj, r, source, path)) < 0)
		return rc;
	copy_string(obj, "model_filename", r->model_filename, sizeof(r->model_filename));
	copy_string(obj, "model_type", r->model_type, sizeof(r->model_type));
	copy_string(obj, "build_commit", r->build_commit, sizeof(r->build_commit));
	{
		const cJSON *bn = cJSON_GetObjectItemCaseSensitive(obj, "build_number");
		if (cJSON_IsNumber(bn) && bn->valuedouble >= 1 && bn->valuedouble < 1e12)
			r->build_number = (long long)bn->valuedouble;
	}
	copy_string(obj, "backends", r->backends, sizeof(r->backends));
	copy_string(obj, "gpu_info", r->gpu_info, sizeof(r->gpu_info));
	copy_string(obj, "load_mode", r->load_mode, sizeof(r->load_mode));
	if (r->load_mode[0] == '\0' && cJSON_IsBool(mmap))
		snprintf(r->load_mode, sizeof(r->load_mode), "%s", cJSON_IsTrue(mmap) ? "mmap" : "none");
	if (cJSON_IsBool(fa))
		r->flash_attn = cJSON_IsTrue(fa) ? 1 : 0;
	else if (cJSON_IsNumber(fa) && (fa->valuedouble == 0 || fa->valuedouble == 1))
		r->flash_attn = (int)fa->valuedouble;
	return 0;
}

static int append(lm_llama_output *out, const cJSON *obj, const char *source, const lm_json_path *path)
{
	lm_llama_record *grown;
	int rc;

	if ((grown = realloc(out->records, (out->count + 1) * sizeof(*grown))) == NULL)
		return lm_error_nomem();
	out->records = grown;
	if ((rc = read_record(obj, &out->records[out->count], source, path)) < 0) {
		free(out->records[out->count].samples_ts);
		return rc;
	}
	out->count++;
	return 0;
}

static int parse_array(const char *text, size_t len, lm_llama_output *out)
{
	cJSON *doc = NULL;
	const cJSON *e;
	int i = 0, rc;

	/* Out of memory is that, not output that is no array. */
	if ((rc = lm_json_parse(&doc, text, len, NULL, 0)) == LM_ENOMEM)
		return rc;
	rc = 0;
	if (!cJSON_IsArray(doc)) {
		cJSON_Delete(doc);
		return lm_error_set(LM_EINVALID, "llama-bench output: not a JSON array (an unfinished run, or not -o json)");
	}
	cJSON_ArrayForEach(e, doc) {
		lm_json_path p = LM_JSON_PATH_INDEX(NULL, i);
		if ((rc = append(out, e, "llama-bench output", &p)) < 0)
			break;
		i++;
	}
	cJSON_Delete(doc);
	return rc;
}

static int parse_lines(const char *text, size_t len, lm_llama_output *out)
{
	lm_scan s;
	const char *line;
	size_t n, k;
	char source[48];
	int lineno = 0, rc;

	lm_scan_init(&s, text, len);
	while (lm_scan_line(&s, &line, &n) != 0) {
		cJSON *obj;
		lineno++;
		for (k = 0; k < n && (line[k] == ' ' || line[k] == '\t' || line[k] == '\r'); k++)
			;
		if (k == n)
			continue;
		snprintf(source, sizeof(source), "llama-bench output line %d", lineno);
		if ((rc = lm_json_parse(&obj, line, n, NULL, 0)) == LM_ENOMEM)
			return rc;
		if (obj == NULL)
			return lm_error_set(LM_EINVALID, "%s: not a JSON object (-o jsonl prints one per line)", source);
		rc = append(out, obj, source, NULL);
		cJSON_Delete(obj);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int lm_llama_parse(const char *text, size_t len, lm_llama_output *out)
{
	size_t i = 0, bad;
	int rc;

	memset(out, 0, sizeof(*out));
	if (text == NULL)
		len = 0;
	if (len > 0 && lm_utf8_check(text, len, &bad) < 0)
		return lm_error_set(LM_EINVALID, "llama-bench output: not UTF-8 at byte %zu", bad);
	while (i < len && (text[i] == ' ' || text[i] == '\n' || text[i] == '\r' || text[i] == '\t'))
		i++;
	if (i == len)
		return lm_error_set(LM_EINVALID, "llama-bench output: empty (did it run with -o json?)");
	rc = text[i] == '[' ? parse_array(text + i, len - i, out) : parse_lines(text + i, len - i, out);
	if (rc < 0)
		lm_llama_output_dispose(out);
	else if (out->count == 0)
		rc = lm_error_set(LM_EINVALID, "llama-bench output: no test records");
	return rc;
}

void lm_llama_output_dispose(lm_llama_output *out)
{
	size_t i;

	for (i = 0; i < out->count; i++)
		free(out->records[i].samples_ts);
	free(out->records);
	memset(out, 0, sizeof(*out));
}

/* llama.cpp names its releases b<build_number> (github.com/ggml-org/llama.cpp/releases); the
 * commit is build_commit (reference/vm-managers-and-bench.md section 3). */
void lm_llama_build_name(const lm_llama_record *r, char *buf, size_t len)
{
	if (r->build_number > 0 && r->build_commit[0] != '\0')
		snprintf(buf, len, "b%lld (%s)", r->build_number, r->build_commit);
	else if (r->build_number > 0)
		snprintf(buf, len, "b%lld", r->build_number);
	else if (r->build_commit[0] != '\0')
		snprintf(buf, len, "build %s", r->build_commit);
	else if (len > 0)
		buf[0] = '\0';
}
