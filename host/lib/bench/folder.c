/* An evidence folder read back from what it holds (docs/bench.md): SHA256SUMS checked first, then
 * metadata.json and the raw outputs, the medians recomputed. bench compare, report and the
 * compatibility matrix all read folders through here.
 *
 * Four kinds: a run in a VM (stock and shimmed), one on the host itself ("kind": "bare-metal"),
 * figures someone published ("kind": "published": their medians in metadata.json's tests[], no
 * raw runs and no activation records: Cua's runs predate them), and the host-preference ablation
 * ("kind": "ablation": two VM records in preference-off/ and preference-on/).
 *
 * A VM folder's activation records prove its arms: every shimmed run that collected records shows
 * a widened answer (lm_activation_took, the one rule of guestops), no stock run has any record. A folder without
 * records is read, marked "not proven by activation records" (proven 0). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>

#include "bench_internal.h"
#include "json.h"
#include "error_internal.h"
#include "file.h"
#include "lume-metal/family.h"
#include "path.h"
#include "sha256.h"
#include "str.h"
#include "text.h"
#include "guest_activation.h"

/* An integer member, or DFLT when it is absent, not a number or out of int's range (a cast of
 * cJSON's NaN for "absent" would be undefined). */
static int member_int(const cJSON *obj, const char *key, int dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsNumber(v) && v->valuedouble >= INT_MIN && v->valuedouble <= INT_MAX ? (int)v->valuedouble : dflt;
}

const char *lm_bench_meta_str(const cJSON *meta, const char *path)
{
	char key[64];
	const char *dot;
	const cJSON *v = meta;

	while (v != NULL && path[0] != '\0') {
		dot = strchr(path, '.');
		snprintf(key, sizeof(key), "%.*s", dot ? (int)(dot - path) : (int)strlen(path), path);
		v = cJSON_GetObjectItemCaseSensitive(v, key);
		path = dot ? dot + 1 : "";
	}
	return cJSON_IsString(v) && v->valuestring[0] != '\0' ? v->valuestring : NULL;
}

static const char *or_unknown(const char *s)
{
	return s != NULL ? s : "unknown";
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

/* One widened answer as a line, once. */
static void add_widened(lm_bench_folder *f, const char *line)
{
	size_t i;

	for (i = 0; i < f->nwidened; i++)
		if (strcmp(f->widened[i], line) == 0)
			return;
	if (f->nwidened == LM_BENCH_WIDENED_MAX) {
		f->widened_more = 1;
		return;
	}
	snprintf(f->widened[f->nwidened++], sizeof(f->widened[0]), "%s", line);
}

static void collect_widened(lm_bench_folder *f, const lm_activation *a)
{
	char line[96];
	size_t i;

	for (i = 0; i < a->nquestions; i++) {
		const lm_activation_question *q = &a->questions[i];
		const char *name = q->family >= 0 && q->family <= 0x7fffffff ? lm_family_name((int)q->family) : NULL;
		if (q->stock || !q->given)
			continue;
		snprintf(line, sizeof(line), "supportsFamily: %s (%lld): stock false, given true", name != NULL ? name :
		    "unknown family", (long long)q->family);
		add_widened(f, line);
	}
	for (i = 0; i < a->ntg; i++)
		if (a->tg[i].given > a->tg[i].stock) {
			snprintf(line, sizeof(line), "maxThreadgroupMemoryLength: stock %llu, given %llu",
			    (unsigned long long)a->tg[i].stock, (unsigned long long)a->tg[i].given);
			add_widened(f, line);
		}
}

/* One run's records (runs[].activation, docs/activation-format.md), read back through the same
 * reader as the guest's: a shimmed run must show a widened answer, a stock run no record. */
static int check_run_activation(lm_bench_folder *f, const cJSON *run, const char *arm, int round)
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
	for (i = 0; rc == 0 && i < list.count; i++) {
		took += (size_t)lm_activation_took(&list.items[i]);
		if (strcmp(arm, "shimmed") == 0)
			collect_widened(f, &list.items[i]);
	}
	if (rc == 0 && list.count > 0)
		snprintf(first, sizeof(first), "%s", list.items[0].file);
	if (rc == 0 && strcmp(arm, "shimmed") == 0 && took == 0)
		rc = lm_error_set(LM_EINVALID, "%s: the shimmed run of round %d has no activation: %s, so its figures "
		    "are not the unlock's", f->dir, round, list.count == 0 ? "no process of the workload loaded the shim"
		    : "processes loaded the shim but none had an answer widened (no supportsFamily: question answered "
		    "true over a stock false, no threadgroup memory raised)");
	else if (rc == 0 && strcmp(arm, "stock") == 0 && list.count > 0)
		rc = lm_error_set(LM_EINVALID, "%s: the stock run of round %d has an activation (%zu process%s loaded the "
		    "shim, first pid %.*s): the stock arm was not stock", f->dir, round, list.count,
		    list.count == 1 ? "" : "es", (int)strcspn(first, "."), first);
	free(text);
	free(source);
	lm_activation_list_dispose(&list);
	return rc;
}

static int check_activation(lm_bench_folder *f, const cJSON *runs)
{
	const cJSON *run;
	int rc = 0;

	if (f->kind == LM_BENCH_FOLDER_BARE_METAL) {
		f->proven = -1; /* the host arm: no shim, no records */
		return 0;
	}
	/* Recorded before activation records (by an older lume-metal, or by hand): read, and said. */
	if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(f->meta, "activation"))) {
		f->proven = 0;
		return 0;
	}
	f->proven = 1;
	cJSON_ArrayForEach(run, runs) {
		const char *arm = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(run, "arm"));
		int round = member_int(run, "round", 0);

		if (arm != NULL && (rc = check_run_activation(f, run, arm, round)) < 0)
			break;
	}
	return rc;
}

static double num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsNumber(v) && v->valuedouble > 0 ? v->valuedouble : 0;
}

/* A published folder: its tests as published (tests[]: test, n_prompt, n_gen, n_depth, stock,
 * shimmed, bare_metal, samples), what llama.cpp selected (selected.stock / .shimmed). */
static int load_published(lm_bench_folder *f)
{
	const cJSON *tests = cJSON_GetObjectItemCaseSensitive(f->meta, "tests"), *t;
	const cJSON *sel = cJSON_GetObjectItemCaseSensitive(f->meta, "selected");
	const char *build = lm_bench_meta_str(f->meta, "workload.llama_cpp.build");
	const char *commit = lm_bench_meta_str(f->meta, "workload.llama_cpp.commit");
	size_t n = 0;
	lm_bench_metal *arms[2] = {f->r->stock_metal, f->r->shimmed_metal};
	int a;

	if (!cJSON_IsArray(tests) || cJSON_GetArraySize(tests) == 0)
		return lm_error_set(LM_ECORRUPT, "%s/metadata.json: a published folder without tests[]", f->dir);
	if ((f->bare_metal = calloc((size_t)cJSON_GetArraySize(tests), sizeof(double))) == NULL ||
	    (f->percent = calloc((size_t)cJSON_GetArraySize(tests), sizeof(double))) == NULL)
		return lm_error_nomem();
	cJSON_ArrayForEach(t, tests) {
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(t, "test"));
		lm_bench_test *bt;
		if (name == NULL || (bt = lm_bench_add_test(f->r, name)) == NULL)
			return name == NULL ? lm_error_set(LM_ECORRUPT, "%s/metadata.json: tests[%zu] has no name", f->dir, n)
			                    : lm_error_nomem();
		bt->n_prompt = (unsigned long long)num(t, "n_prompt");
		bt->n_gen = (unsigned long long)num(t, "n_gen");
		bt->n_depth = (unsigned long long)num(t, "n_depth");
		bt->stock_median = num(t, "stock");
		bt->shimmed_median = num(t, "shimmed");
		/* The ratio as published when it is (of the unrounded medians), else of the medians. */
		bt->ratio = num(t, "ratio") > 0 ? num(t, "ratio") : lm_bench_ratio(bt->shimmed_median, bt->stock_median);
		bt->stock_samples = bt->shimmed_samples = (size_t)num(t, "samples");
		f->bare_metal[n] = num(t, "bare_metal");
		f->percent[n++] = num(t, "percent_of_bare_metal");
	}
	for (a = 0; a < 2; a++) {
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(sel, a ? "shimmed" : "stock");
		const cJSON *v;
		if (!cJSON_IsObject(m))
			continue;
		arms[a]->found = 1;
		arms[a]->apple = (int)num(m, "apple");
		arms[a]->common = (int)num(m, "common");
		arms[a]->metal = (int)num(m, "metal");
		v = cJSON_GetObjectItemCaseSensitive(m, "simdgroup_reduction");
		arms[a]->simdgroup_reduction = cJSON_IsBool(v) ? cJSON_IsTrue(v) : -1;
		v = cJSON_GetObjectItemCaseSensitive(m, "simdgroup_mm");
		arms[a]->simdgroup_mm = cJSON_IsBool(v) ? cJSON_IsTrue(v) : -1;
		v = cJSON_GetObjectItemCaseSensitive(m, "bfloat16");
		arms[a]->bfloat = cJSON_IsBool(v) ? cJSON_IsTrue(v) : -1;
	}
	f->r->kernel_choice_changed = lm_bench_metal_differs(f->r->stock_metal, f->r->shimmed_metal);
	f->r->rounds = 1;
	if (build != NULL)
		snprintf(f->llama_build, sizeof(f->llama_build), "%s%s%s%s", build, commit ? " (" : "", commit ? commit : "",
		    commit ? ")" : "");
	f->proven = 0;
	return 0;
}

/* A VM or bare-metal folder: the runs' raw files, the medians recomputed. */
static int load_runs(lm_bench_folder *f)
{
	char **outs[2] = {NULL, NULL}, **errs[2] = {NULL, NULL};
	const cJSON *runs = cJSON_GetObjectItemCaseSensitive(f->meta, "runs"), *run;
	int rounds = member_int(cJSON_GetObjectItemCaseSensitive(f->meta, "protocol"), "rounds", 0);
	int rc, a, k;

	if (!cJSON_IsArray(runs) || rounds < 1 || rounds > LM_BENCH_ROUNDS_MAX)
		return lm_error_set(LM_ECORRUPT, "%s/metadata.json: no runs or rounds (not a lume-metal bench record)", f->dir);
	if ((rc = check_activation(f, runs)) < 0)
		return rc;
	f->r->rounds = rounds;
	f->r->parser = strcmp(or_unknown(lm_bench_meta_str(f->meta, "workload.parser")), "none") == 0 ?
	    LM_BENCH_PARSER_NONE : LM_BENCH_PARSER_LLAMA_BENCH;
	for (a = 0; a < 2; a++)
		if ((outs[a] = calloc((size_t)rounds, sizeof(char *))) == NULL ||
		    (errs[a] = calloc((size_t)rounds, sizeof(char *))) == NULL) {
			rc = lm_error_nomem();
			goto out;
		}
	if ((f->r->stock_seconds = calloc((size_t)rounds, sizeof(double))) == NULL ||
	    (f->r->shimmed_seconds = calloc((size_t)rounds, sizeof(double))) == NULL ||
	    (f->r->stock_exit = calloc((size_t)rounds, sizeof(int))) == NULL ||
	    (f->r->shimmed_exit = calloc((size_t)rounds, sizeof(int))) == NULL) {
		rc = lm_error_nomem();
		goto out;
	}
	cJSON_ArrayForEach(run, runs) {
		const char *arm = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(run, "arm"));
		int round = member_int(run, "round", 0);
		a = arm != NULL && strcmp(arm, "shimmed") == 0 ? 1 : 0;
		if (arm == NULL || round < 1 || round > rounds)
			continue;
		k = round - 1;
		(a ? f->r->shimmed_seconds : f->r->stock_seconds)[k] =
		    cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(run, "seconds"));
		(a ? f->r->shimmed_exit : f->r->stock_exit)[k] = member_int(run, "exit_status", 0);
		if ((rc = read_raw(f->dir, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(run, "stdout")),
		    &outs[a][k], NULL)) < 0 ||
		    (rc = read_raw(f->dir, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(run, "stderr")),
		    &errs[a][k], NULL)) < 0)
			goto out;
	}
	if (f->r->parser == LM_BENCH_PARSER_LLAMA_BENCH) {
		rc = lm_bench_collect(f->r, outs[0], outs[1], rounds);
		/* A failed record's runs may have printed nothing to parse: its figures are what the others made. */
		if (rc == LM_EINVALID && lm_bench_meta_str(f->meta, "failure") != NULL) {
			lm_error_clear();
			rc = 0;
		}
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
	snprintf(f->llama_build, sizeof(f->llama_build), "%s", f->r->llama_build);
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
	return rc;
}

static int sums_digest(lm_bench_folder *f)
{
	uint8_t digest[32];
	char *path;
	int rc;

	if ((rc = lm_path_join(&path, f->dir, "SHA256SUMS", NULL)) < 0)
		return rc;
	rc = lm_sha256_file(path, digest);
	free(path);
	if (rc == 0)
		lm_sha256_hex(digest, f->sums_sha256);
	return rc;
}

int lm_bench_folder_load(lm_bench_folder *f, const char *dir)
{
	const char *kind;
	char *path = NULL, *data = NULL;
	size_t len;
	int rc;

	memset(f, 0, sizeof(*f));
	if ((f->dir = lm_text_dup(dir)) == NULL)
		return lm_error_nomem();
	if ((rc = lm_bench_result_new(&f->r)) < 0 || (rc = lm_bench_verify_sums(dir)) < 0 || (rc = sums_digest(f)) < 0)
		return rc;
	if ((rc = lm_path_join(&path, dir, "metadata.json", NULL)) < 0)
		return rc;
	rc = lm_fs_read_file(path, 16u << 20, &data, &len);
	free(path);
	if (rc < 0)
		return rc;
	rc = lm_json_parse(&f->meta, data, len, NULL, 0);
	free(data);
	if (rc == LM_ENOMEM) /* not a damaged record */
		return rc;
	if (!cJSON_IsObject(f->meta))
		return lm_error_set(LM_ECORRUPT, "%s/metadata.json: not a JSON object (not a lume-metal bench record)", dir);
	kind = or_unknown(lm_bench_meta_str(f->meta, "kind"));
	f->kind = strcmp(kind, "bare-metal") == 0 ? LM_BENCH_FOLDER_BARE_METAL :
	          strcmp(kind, "published") == 0 ? LM_BENCH_FOLDER_PUBLISHED :
	          strcmp(kind, "ablation") == 0 ? LM_BENCH_FOLDER_ABLATION : LM_BENCH_FOLDER_VM;
	/* A published folder names its workload where no VM name was published. */
	snprintf(f->vm, sizeof(f->vm), "%s", lm_bench_meta_str(f->meta, "vm.name") ? lm_bench_meta_str(f->meta, "vm.name") :
	    or_unknown(lm_bench_meta_str(f->meta, "workload.model")));
	snprintf(f->host, sizeof(f->host), "%s %s", or_unknown(lm_bench_meta_str(f->meta, "host.model")),
	    or_unknown(lm_bench_meta_str(f->meta, "host.chip")));
	f->r->bare_metal = f->kind == LM_BENCH_FOLDER_BARE_METAL;
	snprintf(f->r->vm, sizeof(f->r->vm), "%s", f->vm);
	if (f->kind == LM_BENCH_FOLDER_PUBLISHED)
		return load_published(f);
	if (f->kind == LM_BENCH_FOLDER_ABLATION) {
		const cJSON *pn = cJSON_GetObjectItemCaseSensitive(f->meta, "preference_needed");
		f->r->ablation = 1;
		f->r->preference_needed = cJSON_IsBool(pn) ? cJSON_IsTrue(pn) : -1;
		f->proven = 1;
		return 0;
	}
	return load_runs(f);
}

void lm_bench_folder_dispose(lm_bench_folder *f)
{
	free(f->dir);
	cJSON_Delete(f->meta);
	lm_bench_result_free(f->r);
	free(f->bare_metal);
	free(f->percent);
	memset(f, 0, sizeof(*f));
}
