/* bench compare: evidence folders side by side, each read back from what it holds (folder.c),
 * then the published figures with where they come from. A folder whose metadata.json says
 * "kind": "bare-metal" is a run on the host itself: its stock arm is the bare-metal figure the
 * other folders' shimmed arm is set against. A VM folder that collected activation records must
 * prove its arms with them; one without is shown, marked "not proven by activation records". */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_internal.h"
#include "error_internal.h"
#include "str.h"
#include "text.h"

/* The published figures: medians of samples_ts from Cua's evidence folders, M1 Ultra host
 * (Mac13,2, macOS 26.6.1), guest macOS 26.5.2 in Lume 0.5.1, llama.cpp b10167,
 * llama-bench -p 512 -n 128 -r 10 -t 8 -ngl -1 -o json; bare metal the same host without a VM
 * (reference/lume.md "Published figures", from the folders' results.csv host_baremetal column;
 * Cua's release post gives the same as 98.25%/72.06%/99.59%/94.82% of bare metal). */
static const struct {
	const char *workload, *test;
	double stock, unlocked, ratio, bare_metal;
	const char *provenance;
} published[] = {
	/* The ratios as published: Cua's are of the unrounded medians (49.67 / 3.41 rounds to 14.57). */
	{"TinyLlama Q4_K_M", "pp512", 431.86, 4786.70, 11.08, 4871.99,
	 "trycua/cua evidence/lume-metal-capability-shim/2026-08-09-m1-ultra/README.md"},
	{"TinyLlama Q4_K_M", "tg128", 12.63, 206.60, 16.36, 286.71,
	 "trycua/cua evidence/lume-metal-capability-shim/2026-08-09-m1-ultra/README.md"},
	{"Gemma 4 12B Q4_0", "pp512", 71.66, 515.76, 7.20, 517.88,
	 "trycua/cua evidence/lume-metal-capability-shim/2026-08-10-m1-ultra-gemma4/README.md"},
	{"Gemma 4 12B Q4_0", "tg128", 3.41, 49.67, 14.54, 52.38,
	 "trycua/cua evidence/lume-metal-capability-shim/2026-08-10-m1-ultra-gemma4/README.md"},
};

#define PUBLISHED_BUILD "b10167"

/* The bare-metal figure for a test: the stock median of a bare-metal folder of the set. */
static double bare_metal(const lm_bench_folder *fs, size_t n, const char *test)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		if (fs[i].kind != LM_BENCH_FOLDER_BARE_METAL)
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
	offsetof(lm_bench_comparison_row, llama_build), offsetof(lm_bench_comparison_row, note),
	offsetof(lm_bench_comparison_row, model),
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

/* The model of a folder: the model a published folder names (workload.model), or the file name
 * of its workload's first model (the path's last part). NULL when not recorded. */
static const char *model_of(const lm_bench_folder *f)
{
	const cJSON *models = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(f->meta, "workload"),
	    "models");
	const cJSON *path = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(models, 0), "path");
	const char *slash, *named = lm_bench_meta_str(f->meta, "workload.model");

	if (named != NULL && named[0] != '\0')
		return named; /* a published folder names its model */
	if (cJSON_IsString(path) && path->valuestring[0] != '\0') {
		slash = strrchr(path->valuestring, '/');
		return slash != NULL && slash[1] != '\0' ? slash + 1 : path->valuestring;
	}
	return NULL;
}

/* The rows of one folder: each of its tests, set against the set's bare-metal folder (a published
 * folder carries its own). */
static int folder_rows(lm_bench_comparison *c, const lm_bench_folder *fs, size_t n, size_t i)
{
	const lm_bench_folder *f = &fs[i];
	const int bare = f->kind == LM_BENCH_FOLDER_BARE_METAL;
	const char *by = lm_bench_meta_str(f->meta, "published.by");
	lm_bench_comparison_row row;
	char note[160];
	size_t j;
	int rc = 0;

	if (f->kind == LM_BENCH_FOLDER_PUBLISHED)
		snprintf(note, sizeof(note), "published by %s; not proven by activation records", by ? by : "someone else");
	else if (f->proven == 0)
		snprintf(note, sizeof(note), "not proven by activation records");
	else
		note[0] = '\0';
	for (j = 0; j < f->r->ntests && rc == 0; j++) {
		const lm_bench_test *t = f->r->tests[j];
		memset(&row, 0, sizeof(row));
		row.kind = bare ? LM_BENCH_ROW_BARE_METAL : LM_BENCH_ROW_VM;
		row.source = f->dir;
		/* A bare-metal folder has no VM: its row says so, its figure under bare metal. */
		row.vm = bare ? "bare metal" : f->vm;
		row.host = f->host;
		row.test = t->name;
		row.unit = f->r->parser == LM_BENCH_PARSER_NONE ? "s" : "t/s";
		row.model = model_of(f);
		row.stock = bare ? 0 : t->stock_median;
		row.unlocked = bare ? 0 : t->shimmed_median;
		row.unlocked_over_stock = bare ? 0 : t->ratio;
		row.bare_metal = bare ? t->stock_median : f->bare_metal != NULL ? f->bare_metal[j] : bare_metal(fs, n, t->name);
		row.unlocked_over_bare_metal = lm_bench_ratio(row.unlocked, row.bare_metal);
		row.proven = f->proven;
		row.llama_build = f->llama_build[0] ? f->llama_build : NULL;
		row.note = note[0] ? note : NULL;
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
		row.model = published[i].workload;
		row.host = "Mac13,2 Apple M1 Ultra";
		row.test = published[i].test;
		row.unit = "t/s";
		row.stock = published[i].stock;
		row.unlocked = published[i].unlocked;
		row.unlocked_over_stock = published[i].ratio;
		row.bare_metal = published[i].bare_metal;
		row.unlocked_over_bare_metal = lm_bench_ratio(published[i].unlocked, published[i].bare_metal);
		row.provenance = published[i].provenance;
		row.proven = 0;
		row.llama_build = PUBLISHED_BUILD;
		row.note = "published by Cua (trycua/cua); not proven by activation records";
		rc = add_row(c, &row);
	}
	return rc;
}

/* The folders to read: an ablation folder stands for its two records. */
static int expand(const char *const *dirs, size_t n, char ***out, size_t *count)
{
	char **list = calloc(2 * n + 1, sizeof(char *));
	size_t i, k = 0;
	int rc = 0;

	*out = NULL;
	if (list == NULL)
		return lm_error_nomem();
	for (i = 0; i < n && rc == 0; i++) {
		lm_bench_folder f;
		if ((rc = lm_bench_folder_load(&f, dirs[i])) == 0 && f.kind == LM_BENCH_FOLDER_ABLATION) {
			if ((list[k++] = lm_format("%s/%s", dirs[i], LM_BENCH_ABLATION_OFF)) == NULL ||
			    (list[k++] = lm_format("%s/%s", dirs[i], LM_BENCH_ABLATION_ON)) == NULL)
				rc = lm_error_nomem();
		} else if (rc == 0 && (list[k++] = lm_text_dup(dirs[i])) == NULL) {
			rc = lm_error_nomem();
		}
		lm_bench_folder_dispose(&f);
	}
	if (rc < 0) {
		lm_strv_free(list);
		return rc;
	}
	*out = list;
	*count = k;
	return 0;
}

int lm_bench_compare(const char *const *dirs, size_t n, lm_bench_comparison **out)
{
	lm_bench_comparison *c;
	lm_bench_folder *fs = NULL;
	char **list = NULL;
	size_t i, count = 0;
	int rc;

	*out = NULL;
	if (n == 0 || dirs == NULL)
		return lm_error_set(LM_EINVALID, "bench compare: no evidence folder given");
	if ((rc = expand(dirs, n, &list, &count)) < 0)
		return rc;
	if ((fs = calloc(count, sizeof(*fs))) == NULL || (c = calloc(1, sizeof(*c))) == NULL) {
		free(fs);
		lm_strv_free(list);
		return lm_error_nomem();
	}
	c->size = sizeof(*c);
	for (i = 0; i < count && rc == 0; i++)
		rc = lm_bench_folder_load(&fs[i], list[i]);
	for (i = 0; i < count && rc == 0; i++)
		rc = folder_rows(c, fs, count, i);
	if (rc == 0)
		rc = published_rows(c);
	for (i = 0; i < count; i++)
		lm_bench_folder_dispose(&fs[i]);
	free(fs);
	lm_strv_free(list);
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
