/* bench compare: evidence folders side by side, each read back from what it holds (metadata.json,
 * the raw outputs — checked against SHA256SUMS first — with the medians recomputed), then the
 * published figures with where they come from. A folder whose metadata.json says
 * "kind": "bare-metal" is a run on the host itself: its stock arm is the bare-metal figure the
 * other folders' shimmed arm is set against. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_internal.h"
#include "error_internal.h"
#include "path.h"
#include "str.h"
#include "file.h"
#include "text.h"

/* The published figures (docs/bench.md): medians of samples_ts from Cua's evidence folders,
 * M1 Ultra host (Mac13,2), llama-bench -p 512 -n 128 -r 10 -t 8 -ngl -1 -o json. */
static const struct {
	const char *workload, *test;
	double stock, unlocked, ratio;
	const char *provenance;
} published[] = {
	{"TinyLlama Q4_K_M", "pp512", 431.86, 4786.70, 11.08,
	 "trycua/cua evidence/lume-metal-capability-shim/2026-08-09-m1-ultra/README.md"},
	{"TinyLlama Q4_K_M", "tg128", 12.63, 206.60, 16.36,
	 "trycua/cua evidence/lume-metal-capability-shim/2026-08-09-m1-ultra/README.md"},
	{"Gemma 4 12B Q4_0", "pp512", 0, 0, 7.20,
	 "trycua/cua evidence/lume-metal-capability-shim/2026-08-10-m1-ultra-gemma4/README.md"},
	{"Gemma 4 12B Q4_0", "tg128", 0, 0, 14.54,
	 "trycua/cua evidence/lume-metal-capability-shim/2026-08-10-m1-ultra-gemma4/README.md"},
};

typedef struct {
	const char *dir;
	char vm[128], host[256], kind[32];
	lm_bench_result r;
} folder;

static const char *str_in(const cJSON *obj, const char *a, const char *b)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, a), b);

	return cJSON_IsString(v) ? v->valuestring : "unknown";
}

static int read_raw(const char *dir, const char *name, char **out)
{
	char *path;
	size_t len;
	int rc;

	*out = NULL;
	if (name == NULL)
		return 0;
	if ((rc = lm_path_join(&path, dir, name, NULL)) < 0)
		return rc;
	rc = lm_fs_read_file(path, 64u << 20, out, &len);
	free(path);
	return rc;
}

/* One folder, its results recomputed from its raw files. */
static int load(folder *f)
{
	char *path = NULL, *data = NULL, **outs[2] = {NULL, NULL}, **errs[2] = {NULL, NULL};
	const cJSON *runs, *run, *w;
	cJSON *meta = NULL;
	size_t len;
	int rc, rounds, a, k;

	if ((rc = lm_bench_verify_sums(f->dir)) < 0)
		return rc;
	if ((rc = lm_path_join(&path, f->dir, "metadata.json", NULL)) < 0)
		return rc;
	rc = lm_fs_read_file(path, 16u << 20, &data, &len);
	free(path);
	if (rc < 0)
		return rc;
	meta = cJSON_ParseWithLength(data, len);
	free(data);
	runs = cJSON_GetObjectItemCaseSensitive(meta, "runs");
	rounds = (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(meta, "protocol"), "rounds"));
	if (!cJSON_IsArray(runs) || rounds < 1 || rounds > LM_BENCH_ROUNDS_MAX) {
		cJSON_Delete(meta);
		return lm_error_set(LM_ECORRUPT, "%s/metadata.json: no runs or rounds (not a lume-metal bench record)", f->dir);
	}
	snprintf(f->vm, sizeof(f->vm), "%s", str_in(meta, "vm", "name"));
	snprintf(f->host, sizeof(f->host), "%s %s", str_in(meta, "host", "model"), str_in(meta, "host", "chip"));
	w = cJSON_GetObjectItemCaseSensitive(meta, "kind");
	snprintf(f->kind, sizeof(f->kind), "%s", cJSON_IsString(w) ? w->valuestring : "vm");
	f->r.bare_metal = strcmp(f->kind, "bare-metal") == 0;
	f->r.rounds = rounds;
	f->r.parser = strcmp(str_in(meta, "workload", "parser"), "none") == 0 ? LM_BENCH_PARSER_NONE
	                                                                        : LM_BENCH_PARSER_LLAMA_BENCH;
	snprintf(f->r.vm, sizeof(f->r.vm), "%s", f->vm);
	for (a = 0; a < 2; a++)
		if ((outs[a] = calloc((size_t)rounds, sizeof(char *))) == NULL ||
		    (errs[a] = calloc((size_t)rounds, sizeof(char *))) == NULL) {
			rc = lm_error_nomem();
			goto out;
		}
	if ((f->r.stock_seconds = calloc((size_t)rounds, sizeof(double))) == NULL ||
	    (f->r.shimmed_seconds = calloc((size_t)rounds, sizeof(double))) == NULL) {
		rc = lm_error_nomem();
		goto out;
	}
	cJSON_ArrayForEach(run, runs) {
		const char *arm = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(run, "arm"));
		int round = (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(run, "round"));
		a = arm != NULL && strcmp(arm, "shimmed") == 0 ? 1 : 0;
		if (arm == NULL || round < 1 || round > rounds)
			continue;
		k = round - 1;
		(a ? f->r.shimmed_seconds : f->r.stock_seconds)[k] =
		    cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(run, "seconds"));
		if ((rc = read_raw(f->dir, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(run, "stdout")),
		    &outs[a][k])) < 0 ||
		    (rc = read_raw(f->dir, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(run, "stderr")),
		    &errs[a][k])) < 0)
			goto out;
	}
	if (f->r.parser == LM_BENCH_PARSER_LLAMA_BENCH) {
		rc = lm_bench_collect(&f->r, outs[0], outs[1], rounds);
	} else {
		double v[2][LM_BENCH_ROUNDS_MAX];
		memcpy(v[0], f->r.stock_seconds, (size_t)rounds * sizeof(double));
		memcpy(v[1], f->r.shimmed_seconds, (size_t)rounds * sizeof(double));
		if ((f->r.tests = calloc(1, sizeof(*f->r.tests))) == NULL) {
			rc = lm_error_nomem();
			goto out;
		}
		f->r.ntests = 1;
		snprintf(f->r.tests[0].name, sizeof(f->r.tests[0].name), "wall");
		f->r.tests[0].stock_median = lm_bench_median(v[0], (size_t)rounds);
		f->r.tests[0].shimmed_median = lm_bench_median(v[1], (size_t)rounds);
		f->r.tests[0].ratio = lm_bench_ratio(f->r.tests[0].stock_median, f->r.tests[0].shimmed_median);
	}
	lm_bench_collect_metal(&f->r, errs[0], errs[1], rounds);
	if (rc < 0)
		lm_error_prefix("%s: ", f->dir);
out:
	for (a = 0; a < 2; a++) {
		for (k = 0; k < rounds && outs[a] != NULL; k++)
			free(outs[a][k]);
		for (k = 0; k < rounds && errs[a] != NULL; k++)
			free(errs[a][k]);
		free(outs[a]);
		free(errs[a]);
	}
	cJSON_Delete(meta);
	return rc;
}

/* The bare-metal figure for a test: the stock median of a bare-metal folder of the set. */
static double bare_metal(const folder *fs, size_t n, const char *test)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		if (strcmp(fs[i].kind, "bare-metal") != 0)
			continue;
		for (j = 0; j < fs[i].r.ntests; j++)
			if (strcmp(fs[i].r.tests[j].name, test) == 0)
				return fs[i].r.tests[j].stock_median;
	}
	return 0;
}

static void add_row(cJSON *rows, const char *source, const char *vm, const char *host, const char *test,
    const char *unit, double stock, double shimmed, double ratio, double bare)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "source", source);
	cJSON_AddStringToObject(o, "vm", vm);
	cJSON_AddStringToObject(o, "host", host);
	cJSON_AddStringToObject(o, "test", test);
	cJSON_AddStringToObject(o, "unit", unit);
#define NUM_OR_NULL(k, v) ((v) > 0 ? (void)cJSON_AddNumberToObject(o, k, v) : (void)cJSON_AddNullToObject(o, k))
	NUM_OR_NULL("stock", stock);
	NUM_OR_NULL("unlocked", shimmed);
	NUM_OR_NULL("unlocked_over_stock", ratio);
	NUM_OR_NULL("bare_metal", bare);
	NUM_OR_NULL("unlocked_over_bare_metal", lm_bench_ratio(shimmed, bare));
#undef NUM_OR_NULL
	cJSON_AddItemToArray(rows, o);
}

static void text_row(lm_buf *b, const cJSON *row)
{
	const char *cols[] = {"stock", "unlocked", "unlocked_over_stock", "bare_metal", "unlocked_over_bare_metal"};
	size_t i;

	lm_buf_addf(b, "%-28s %-18s %-14s", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(row, "source")),
	    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(row, "vm")),
	    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(row, "test")));
	for (i = 0; i < 5; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(row, cols[i]);
		if (!cJSON_IsNumber(v))
			lm_buf_addf(b, " %12s", "-");
		else if (i == 2 || i == 4)
			lm_buf_addf(b, " %11.2fx", v->valuedouble);
		else
			lm_buf_addf(b, " %12.2f", v->valuedouble);
	}
	lm_buf_adds(b, "\n");
}

int lm_bench_compare(const char *const *dirs, size_t n, char **text, char **json)
{
	folder *fs;
	cJSON *rows = cJSON_CreateArray(), *row;
	lm_buf b;
	size_t i, j;
	int rc = 0;

	*text = NULL;
	lm_buf_init(&b, LM_BUF_TEXT_MAX);
	if (json != NULL)
		*json = NULL;
	if (n == 0) {
		cJSON_Delete(rows);
		return lm_error_set(LM_EINVALID, "bench compare: no evidence folder given");
	}
	if ((fs = calloc(n, sizeof(*fs))) == NULL || rows == NULL) {
		free(fs);
		cJSON_Delete(rows);
		return lm_error_nomem();
	}
	for (i = 0; i < n && rc == 0; i++) {
		fs[i].dir = dirs[i];
		rc = load(&fs[i]);
	}
	for (i = 0; i < n && rc == 0; i++) {
		const char *unit = fs[i].r.parser == LM_BENCH_PARSER_NONE ? "s" : "t/s";
		for (j = 0; j < fs[i].r.ntests; j++) {
			const lm_bench_test *t = &fs[i].r.tests[j];
			double bare = strcmp(fs[i].kind, "bare-metal") != 0 ? bare_metal(fs, n, t->name) : 0;
			add_row(rows, fs[i].dir, fs[i].vm, fs[i].host, t->name, unit, t->stock_median, t->shimmed_median,
			    t->ratio, bare);
		}
	}
	for (i = 0; i < sizeof(published) / sizeof(published[0]) && rc == 0; i++) {
		add_row(rows, "published", published[i].workload, "Mac13,2 Apple M1 Ultra", published[i].test, "t/s",
		    published[i].stock, published[i].unlocked, published[i].ratio, 0);
		cJSON_AddStringToObject(cJSON_GetArrayItem(rows, cJSON_GetArraySize(rows) - 1), "provenance",
		    published[i].provenance);
	}
	if (rc == 0) {
		lm_buf_addf(&b, "%-28s %-18s %-14s %12s %12s %12s %12s %12s\n", "source", "vm / workload", "test", "stock",
		    "unlocked", "unl./stock", "bare metal", "unl./bare");
		cJSON_ArrayForEach(row, rows)
			text_row(&b, row);
		lm_buf_adds(&b, "\npublished figures (medians of samples_ts, M1 Ultra host, macOS guest):\n");
		for (i = 0; i < sizeof(published) / sizeof(published[0]); i++)
			lm_buf_addf(&b, "  %s %s: %s\n", published[i].workload, published[i].test, published[i].provenance);
		rc = lm_buf_take(&b, text, NULL);
		if (rc == 0 && json != NULL && (*json = cJSON_Print(rows)) == NULL)
			rc = lm_error_nomem();
	} else {
		lm_buf_dispose(&b);
	}
	if (rc < 0) {
		free(*text);
		*text = NULL;
	}
	for (i = 0; i < n; i++)
		lm_bench_result_dispose(&fs[i].r);
	free(fs);
	cJSON_Delete(rows);
	return rc;
}
