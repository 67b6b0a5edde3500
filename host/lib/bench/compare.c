/* bench compare: evidence folders side by side, each read back from what it holds (metadata.json,
 * the raw outputs — checked against SHA256SUMS first — with the medians recomputed), then the
 * published figures with where they come from. A folder whose metadata.json says
 * "kind": "bare-metal" is a run on the host itself: its stock arm is the bare-metal figure the
 * other folders' shimmed arm is set against. A VM folder must prove its arms with the shim's
 * activation records: the unlock in every shimmed run, no shim in any stock run. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_internal.h"
#include "error_internal.h"
#include "guestops.h"
#include "path.h"
#include "str.h"
#include "file.h"

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
	lm_bench_result *r;
} folder;

static const char *str_in(const cJSON *obj, const char *a, const char *b)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, a), b);

	return cJSON_IsString(v) ? v->valuestring : "unknown";
}

/* A file of the folder (NULL name: none, *out NULL); *len (may be NULL) its size. */
static int read_raw(const char *dir, const char *name, char **out, size_t *len)
{
	char *path;
	size_t n;
	int rc;

	*out = NULL;
	if (name == NULL)
		return 0;
	if ((rc = lm_path_join(&path, dir, name, NULL)) < 0)
		return rc;
	rc = lm_fs_read_file(path, 64u << 20, out, len != NULL ? len : &n);
	free(path);
	return rc;
}

/* The records of a VM folder's runs (runs[].activation, docs/activation-format.md): every shimmed
 * run has one in which the shim took, no stock run has any. Otherwise the folder's figures are not
 * what they say -- the unlock was not in the shimmed arm, or the stock arm was not stock -- and it
 * is refused. The files are read back through the same reader as the guest's. */
static int check_run_activation(const folder *f, const cJSON *run, const char *arm, int round)
{
	const cJSON *records = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(run, "activation"),
	    "records"), *r;
	lm_activation_list list = { 0 };
	char *text = NULL, *source = NULL, first[64] = "";
	size_t i, took = 0, len;
	int rc = 0;

	if (!cJSON_IsArray(records))
		return lm_error_set(LM_ECORRUPT, "%s/metadata.json: the %s run of round %d lists no activation records",
		    f->dir, arm, round);
	cJSON_ArrayForEach(r, records) {
		const char *name = cJSON_GetStringValue(r), *pid = name != NULL ? strstr(name, ".activation.") : NULL;

		if (pid == NULL) {
			rc = lm_error_set(LM_ECORRUPT, "%s/metadata.json: the %s run of round %d lists a record that is not "
			    "a file name", f->dir, arm, round);
			break;
		}
		free(source);
		if ((source = lm_format("%s/%s", f->dir, name)) == NULL) {
			rc = lm_error_nomem();
			break;
		}
		if ((rc = read_raw(f->dir, name, &text, &len)) < 0 ||
		    (rc = lm_activation_list_add(&list, source, pid + strlen(".activation."), text, len)) < 0)
			break;
		free(text);
		text = NULL;
	}
	for (i = 0; rc == 0 && i < list.count; i++)
		took += (size_t)lm_activation_took(&list.items[i]);
	if (rc == 0 && list.count > 0)
		snprintf(first, sizeof(first), "%s", list.items[0].file);
	if (rc == 0 && strcmp(arm, "shimmed") == 0 && took == 0)
		rc = lm_error_set(LM_EINVALID, "%s: the shimmed run of round %d has no activation: %s, so its figures "
		    "are not the unlock's", f->dir, round, list.count == 0 ? "no process of the workload loaded the shim"
		    : "processes loaded the shim but none had an answer widened (asked no Metal question, or was given "
		    "stock's answers)");
	else if (rc == 0 && strcmp(arm, "stock") == 0 && list.count > 0)
		rc = lm_error_set(LM_EINVALID, "%s: the stock run of round %d has an activation (%zu process%s loaded the "
		    "shim, first pid %.*s): the stock arm was not stock", f->dir, round, list.count,
		    list.count == 1 ? "" : "es", (int)strcspn(first, "."), first);
	free(text);
	free(source);
	lm_activation_list_dispose(&list);
	return rc;
}

static int check_activation(const folder *f, const cJSON *meta, const cJSON *runs)
{
	const cJSON *run;
	int rc = 0;

	if (f->r->bare_metal)
		return 0; /* the host arm: no shim, no records */
	if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(meta, "activation")))
		return lm_error_set(LM_EINVALID, "%s: recorded without activation records (by a lume-metal before them): "
		    "nothing shows that the shimmed arm got the unlock; record it again", f->dir);
	cJSON_ArrayForEach(run, runs) {
		const char *arm = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(run, "arm"));
		int round = (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(run, "round"));

		if (arm != NULL && (rc = check_run_activation(f, run, arm, round)) < 0)
			break;
	}
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

	if ((rc = lm_bench_result_new(&f->r)) < 0 || (rc = lm_bench_verify_sums(f->dir)) < 0)
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
	f->r->bare_metal = strcmp(f->kind, "bare-metal") == 0;
	if ((rc = check_activation(f, meta, runs)) < 0) {
		cJSON_Delete(meta);
		return rc;
	}
	f->r->rounds = rounds;
	f->r->parser = strcmp(str_in(meta, "workload", "parser"), "none") == 0 ? LM_BENCH_PARSER_NONE
	                                                                        : LM_BENCH_PARSER_LLAMA_BENCH;
	snprintf(f->r->vm, sizeof(f->r->vm), "%s", f->vm);
	for (a = 0; a < 2; a++)
		if ((outs[a] = calloc((size_t)rounds, sizeof(char *))) == NULL ||
		    (errs[a] = calloc((size_t)rounds, sizeof(char *))) == NULL) {
			rc = lm_error_nomem();
			goto out;
		}
	if ((f->r->stock_seconds = calloc((size_t)rounds, sizeof(double))) == NULL ||
	    (f->r->shimmed_seconds = calloc((size_t)rounds, sizeof(double))) == NULL) {
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
		(a ? f->r->shimmed_seconds : f->r->stock_seconds)[k] =
		    cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(run, "seconds"));
		if ((rc = read_raw(f->dir, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(run, "stdout")),
		    &outs[a][k], NULL)) < 0 ||
		    (rc = read_raw(f->dir, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(run, "stderr")),
		    &errs[a][k], NULL)) < 0)
			goto out;
	}
	if (f->r->parser == LM_BENCH_PARSER_LLAMA_BENCH) {
		rc = lm_bench_collect(f->r, outs[0], outs[1], rounds);
	} else {
		double v[2][LM_BENCH_ROUNDS_MAX];
		lm_bench_test *t;
		memcpy(v[0], f->r->stock_seconds, (size_t)rounds * sizeof(double));
		memcpy(v[1], f->r->shimmed_seconds, (size_t)rounds * sizeof(double));
		if ((t = lm_bench_add_test(f->r, "wall")) == NULL) {
			rc = lm_error_nomem();
			goto out;
		}
		t->stock_median = lm_bench_median(v[0], (size_t)rounds);
		t->shimmed_median = lm_bench_median(v[1], (size_t)rounds);
		t->ratio = lm_bench_ratio(t->stock_median, t->shimmed_median);
	}
	lm_bench_collect_metal(f->r, errs[0], errs[1], rounds);
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
		for (j = 0; j < fs[i].r->ntests; j++)
			if (strcmp(fs[i].r->tests[j]->name, test) == 0)
				return fs[i].r->tests[j]->stock_median;
	}
	return 0;
}

/* A row's strings, copied into the row's own allocation. */
static const size_t row_strings[] = {
	offsetof(lm_bench_comparison_row, source), offsetof(lm_bench_comparison_row, vm),
	offsetof(lm_bench_comparison_row, host), offsetof(lm_bench_comparison_row, test),
	offsetof(lm_bench_comparison_row, unit), offsetof(lm_bench_comparison_row, provenance),
};

static const char **row_string(lm_bench_comparison_row *row, size_t k)
{
	return (const char **)(void *)((char *)row + row_strings[k]);
}

/* A copy of *in at the end of c->rows, its strings in the same allocation (freed with it). */
static int add_row(lm_bench_comparison *c, lm_bench_comparison_row *in)
{
	const size_t nstrings = sizeof(row_strings) / sizeof(row_strings[0]);
	lm_bench_comparison_row *row, **grown;
	size_t len[sizeof(row_strings) / sizeof(row_strings[0])], total = sizeof(*row), k;
	const char *from;
	char *at;

	for (k = 0; k < nstrings; k++)
		total += len[k] = (from = *row_string(in, k)) != NULL ? strlen(from) + 1 : 0;
	if ((row = malloc(total)) == NULL)
		return lm_error_nomem();
	if ((grown = realloc(c->rows, (c->count + 1) * sizeof(*grown))) == NULL) {
		free(row);
		return lm_error_nomem();
	}
	c->rows = grown;
	*row = *in;
	row->size = sizeof(*row);
	at = (char *)(row + 1);
	for (k = 0; k < nstrings; k++) {
		if ((from = *row_string(in, k)) == NULL)
			continue;
		*row_string(row, k) = memcpy(at, from, len[k]);
		at += len[k];
	}
	c->rows[c->count++] = row;
	return 0;
}

/* The rows of one folder: each of its tests, set against the set's bare-metal folder. */
static int folder_rows(lm_bench_comparison *c, const folder *fs, size_t n, size_t i)
{
	const int bare = strcmp(fs[i].kind, "bare-metal") == 0;
	lm_bench_comparison_row row;
	size_t j;
	int rc = 0;

	for (j = 0; j < fs[i].r->ntests && rc == 0; j++) {
		const lm_bench_test *t = fs[i].r->tests[j];
		memset(&row, 0, sizeof(row));
		row.kind = bare ? LM_BENCH_ROW_BARE_METAL : LM_BENCH_ROW_VM;
		row.source = fs[i].dir;
		row.vm = fs[i].vm;
		row.host = fs[i].host;
		row.test = t->name;
		row.unit = fs[i].r->parser == LM_BENCH_PARSER_NONE ? "s" : "t/s";
		row.stock = t->stock_median;
		row.unlocked = t->shimmed_median;
		row.unlocked_over_stock = t->ratio;
		row.bare_metal = bare ? 0 : bare_metal(fs, n, t->name);
		row.unlocked_over_bare_metal = lm_bench_ratio(row.unlocked, row.bare_metal);
		rc = add_row(c, &row);
	}
	return rc;
}

static int published_rows(lm_bench_comparison *c)
{
	lm_bench_comparison_row row;
	size_t i;
	int rc = 0;

	for (i = 0; i < sizeof(published) / sizeof(published[0]) && rc == 0; i++) {
		memset(&row, 0, sizeof(row));
		row.kind = LM_BENCH_ROW_PUBLISHED;
		row.source = "published";
		row.vm = published[i].workload;
		row.host = "Mac13,2 Apple M1 Ultra";
		row.test = published[i].test;
		row.unit = "t/s";
		row.stock = published[i].stock;
		row.unlocked = published[i].unlocked;
		row.unlocked_over_stock = published[i].ratio;
		row.provenance = published[i].provenance;
		rc = add_row(c, &row);
	}
	return rc;
}

int lm_bench_compare(const char *const *dirs, size_t n, lm_bench_comparison **out)
{
	lm_bench_comparison *c;
	folder *fs;
	size_t i;
	int rc = 0;

	*out = NULL;
	if (n == 0 || dirs == NULL)
		return lm_error_set(LM_EINVALID, "bench compare: no evidence folder given");
	if ((fs = calloc(n, sizeof(*fs))) == NULL || (c = calloc(1, sizeof(*c))) == NULL) {
		free(fs);
		return lm_error_nomem();
	}
	c->size = sizeof(*c);
	for (i = 0; i < n && rc == 0; i++) {
		fs[i].dir = dirs[i];
		rc = load(&fs[i]);
	}
	for (i = 0; i < n && rc == 0; i++)
		rc = folder_rows(c, fs, n, i);
	if (rc == 0)
		rc = published_rows(c);
	for (i = 0; i < n; i++)
		lm_bench_result_free(fs[i].r);
	free(fs);
	if (rc < 0) {
		lm_bench_comparison_free(c);
		return rc;
	}
	*out = c;
	return 0;
}

void lm_bench_comparison_free(lm_bench_comparison *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < c->count; i++)
		free(c->rows[i]);
	free(c->rows);
	free(c);
}
