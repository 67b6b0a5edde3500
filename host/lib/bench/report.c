/* lume-metal report: an evidence folder as the block testers are asked to post (Cua's shim README
 * and release post: host chip, host and guest versions, the exact workload, stock and unlocked
 * results; reference/vm-managers-and-bench.md, corrections of 2026-12-02), in Markdown for an
 * issue or as the results document (lume-metal-results/1, docs/results-report.schema.json). Every
 * field comes from the folder; one it lacks is "not recorded" (JSON null), never made up. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <errno.h>
#include <unistd.h>

#include "bench_internal.h"
#include "error_internal.h"
#include "file.h"
#include "fs.h"
#include "path.h"
#include "proc.h"
#include "random.h"
#include "str.h"
#include "text.h"

#define RESULTS_FORMAT "lume-metal-results/1"
#define NR "not recorded"

static cJSON *str_or_null(const char *s)
{
	return s != NULL ? cJSON_CreateString(s) : cJSON_CreateNull();
}

static cJSON *num_or_null(double v)
{
	return v > 0 ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

/* llama.cpp's build number and commit: as llama-bench printed them in the folder's first run, or
 * as a published folder names them. */
static void llama_build(const lm_bench_folder *f, long long *number, char *commit, size_t len)
{
	const cJSON *run = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(f->meta, "runs"), 0);
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(run, "stdout"));
	const char *b = lm_bench_meta_str(f->meta, "workload.llama_cpp.build");
	const char *c = lm_bench_meta_str(f->meta, "workload.llama_cpp.commit");
	lm_llama_output lo;
	char *path = NULL, *text = NULL;
	size_t n;

	*number = 0;
	commit[0] = '\0';
	if (b != NULL && b[0] == 'b')
		*number = strtoll(b + 1, NULL, 10);
	if (c != NULL)
		snprintf(commit, len, "%s", c);
	if (name == NULL || lm_path_join(&path, f->dir, name, NULL) < 0 || lm_fs_read_file(path, 64u << 20, &text, &n) < 0 ||
	    lm_llama_parse(text, n, &lo) < 0) {
		lm_error_clear();
		free(path);
		free(text);
		return;
	}
	if (lo.count > 0) {
		*number = lo.records[0].build_number;
		snprintf(commit, len, "%s", lo.records[0].build_commit);
	}
	lm_llama_output_dispose(&lo);
	free(path);
	free(text);
}

/* The bare-metal folders among those reported: the figures the others' shimmed arms are set
 * against, for the tests of the same name (as bench compare does). */
typedef struct {
	lm_bench_folder *f;
	size_t n;
} bare_set;

static double bare_figure(const bare_set *bs, const char *test)
{
	size_t i, j;

	for (i = 0; bs != NULL && i < bs->n; i++)
		for (j = 0; j < bs->f[i].r->ntests; j++)
			if (strcmp(bs->f[i].r->tests[j]->name, test) == 0)
				return bs->f[i].r->tests[j]->stock_median;
	return 0;
}

/* One arm: a bench record's tests, set against a published folder's own bare-metal figures or
 * the set's bare-metal folder. */
static cJSON *arm_json(const lm_bench_folder *f, const char *name, const cJSON *ablation_arm, const bare_set *bs)
{
	cJSON *arm = cJSON_CreateObject(), *tests = cJSON_CreateArray(), *w = cJSON_CreateArray();
	const cJSON *ex = cJSON_GetObjectItemCaseSensitive(ablation_arm, "exercise");
	size_t i;

	cJSON_AddStringToObject(arm, "name", name);
	cJSON_AddItemToObject(arm, "preference", str_or_null(lm_bench_meta_str(ablation_arm, "preference")));
	for (i = 0; i < f->r->ntests; i++) {
		const lm_bench_test *t = f->r->tests[i];
		const double bare = f->bare_metal != NULL ? f->bare_metal[i] : f->kind == LM_BENCH_FOLDER_BARE_METAL ? 0 :
		    bare_figure(bs, t->name);
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "test", t->name);
		cJSON_AddStringToObject(o, "unit", f->r->parser == LM_BENCH_PARSER_NONE ? "s" : "t/s");
		cJSON_AddItemToObject(o, "stock", num_or_null(t->stock_median));
		cJSON_AddItemToObject(o, "shimmed", num_or_null(f->kind == LM_BENCH_FOLDER_BARE_METAL ? 0 : t->shimmed_median));
		cJSON_AddItemToObject(o, "ratio", num_or_null(f->kind == LM_BENCH_FOLDER_BARE_METAL ? 0 : t->ratio));
		cJSON_AddItemToObject(o, "bare_metal", num_or_null(bare));
		/* As published when it is (of the unrounded medians), else of the medians. */
		cJSON_AddItemToObject(o, "percent_of_bare_metal", num_or_null(f->percent != NULL && f->percent[i] > 0 ?
		    f->percent[i] : bare > 0 ? 100.0 * t->shimmed_median / bare : 0));
		cJSON_AddNumberToObject(o, "samples", (double)t->shimmed_samples);
		cJSON_AddItemToArray(tests, o);
	}
	cJSON_AddItemToObject(arm, "tests", tests);
	cJSON_AddItemToObject(arm, "kernel_choice_changed", f->r->stock_metal->found || f->r->shimmed_metal->found ?
	    cJSON_CreateBool(f->r->kernel_choice_changed) : cJSON_CreateNull());
	cJSON_AddItemToObject(arm, "proven_by_activation_records", f->proven < 0 ? cJSON_CreateNull() :
	    cJSON_CreateBool(f->proven));
	for (i = 0; i < f->nwidened; i++)
		cJSON_AddItemToArray(w, cJSON_CreateString(f->widened[i]));
	cJSON_AddItemToObject(arm, "widened", w);
	cJSON_AddItemToObject(arm, "exercise", ex != NULL ? cJSON_Duplicate(ex, 1) : cJSON_CreateNull());
	return arm;
}

/* The kernel verdict of one record: the exercise's when it ran, else what llama.cpp selected and
 * whether its shimmed runs all exited 0. */
static const char *kernel_verdict(const lm_bench_folder *f, const cJSON *ablation_arm)
{
	const char *v = lm_bench_meta_str(ablation_arm, "exercise.verdict");
	int k;

	if (v != NULL)
		return strcmp(v, "passed") == 0 ? "the exercise passed: the kernels the profile needs compile and compute "
		    "correctly on this device" : "the exercise failed: the kernels the profile needs did not compute "
		    "correctly on this device";
	if (f->kind == LM_BENCH_FOLDER_BARE_METAL)
		return "bare metal: no shim";
	if (!f->r->stock_metal->found && !f->r->shimmed_metal->found)
		return NR;
	for (k = 0; f->r->shimmed_exit != NULL && k < f->r->rounds; k++)
		if (f->r->shimmed_exit[k] != 0)
			return "llama.cpp's shimmed runs failed";
	return f->r->kernel_choice_changed ? "llama.cpp selected the unlocked kernels and every shimmed run completed"
	                                   : "llama.cpp selected the same kernels in both arms";
}

static void add_meta_str(cJSON *o, const char *name, const cJSON *meta, const char *path)
{
	cJSON_AddItemToObject(o, name, str_or_null(lm_bench_meta_str(meta, path)));
}

/* The models: {path, size, sha256}, null where not recorded. */
static cJSON *models_json(const cJSON *meta)
{
	const cJSON *models = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(meta, "workload"), "models");
	const cJSON *m;
	cJSON *arr = cJSON_CreateArray();

	cJSON_ArrayForEach(m, models) {
		const cJSON *size = cJSON_GetObjectItemCaseSensitive(m, "size");
		cJSON *o = cJSON_CreateObject();
		add_meta_str(o, "path", m, "path");
		cJSON_AddItemToObject(o, "size", cJSON_IsNumber(size) ? cJSON_CreateNumber(size->valuedouble) : cJSON_CreateNull());
		add_meta_str(o, "sha256", m, "sha256");
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

static const char *kind_name(lm_bench_folder_kind k)
{
	return k == LM_BENCH_FOLDER_BARE_METAL ? "bare-metal" : k == LM_BENCH_FOLDER_PUBLISHED ? "published" :
	       k == LM_BENCH_FOLDER_ABLATION ? "ablation" : "vm";
}

/* One folder's report as JSON (the Markdown is rendered from it). */
static int folder_report(const char *dir, const bare_set *bs, cJSON **out)
{
	lm_bench_folder f, sub[2];
	const lm_bench_folder *first;
	cJSON *rep = cJSON_CreateObject(), *o, *arms, *defects;
	const cJSON *aarms, *needed, *a, *d;
	char commit[32];
	long long number;
	int k, rc;

	memset(sub, 0, sizeof(sub));
	*out = NULL;
	if (rep == NULL)
		return lm_error_nomem();
	if ((rc = lm_bench_folder_load(&f, dir)) < 0)
		goto out;
	first = &f;
	aarms = cJSON_GetObjectItemCaseSensitive(f.meta, "arms");
	if (f.kind == LM_BENCH_FOLDER_ABLATION)
		for (k = 0; k < 2 && k < cJSON_GetArraySize(aarms); k++) {
			const char *folder = lm_bench_meta_str(cJSON_GetArrayItem(aarms, k), "folder");
			char *path;
			/* A failed arm's record too: its figures are what was made, its README says it failed. */
			if (folder == NULL || !cJSON_IsObject(cJSON_GetArrayItem(aarms, k)) ||
			    cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(aarms, k), "failure") == NULL)
				continue;
			if ((path = lm_format("%s/%s", dir, folder)) == NULL) {
				rc = lm_error_nomem();
				goto out;
			}
			rc = lm_bench_folder_load(&sub[k], path);
			free(path);
			if (rc < 0)
				goto out;
			if (k == 0 || first == &f)
				first = &sub[k];
		}
	cJSON_AddStringToObject(rep, "folder", dir);
	cJSON_AddStringToObject(rep, "kind", kind_name(f.kind));
	add_meta_str(rep, "failure", f.meta, "failure");
	add_meta_str(rep, "published_by", f.meta, "published.by");
	add_meta_str(rep, "published_source", f.meta, "published.source");
	o = cJSON_AddObjectToObject(rep, "host");
	add_meta_str(o, "chip", f.meta, "host.chip");
	add_meta_str(o, "model", f.meta, "host.model");
	add_meta_str(o, "os_version", f.meta, "host.os_version");
	add_meta_str(o, "os_build", f.meta, "host.os_build");
	o = cJSON_AddObjectToObject(rep, "guest");
	add_meta_str(o, "os_version", f.meta, "guest.os_version");
	add_meta_str(o, "os_build", f.meta, "guest.os_build");
	o = cJSON_AddObjectToObject(rep, "vm_manager");
	add_meta_str(o, "name", f.meta, "vm.manager");
	add_meta_str(o, "version", f.meta, "vm.manager_version");
	add_meta_str(rep, "lume_metal_version", f.meta, "lume_metal.version");
	llama_build(first, &number, commit, sizeof(commit));
	o = cJSON_AddObjectToObject(rep, "llama_cpp");
	cJSON_AddItemToObject(o, "build_number", number > 0 ? cJSON_CreateNumber((double)number) : cJSON_CreateNull());
	cJSON_AddItemToObject(o, "commit", str_or_null(commit[0] ? commit : NULL));
	cJSON_AddItemToObject(rep, "command", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(f.meta, "workload"), "argv"), 1));
	if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(rep, "command"))) {
		cJSON_DeleteItemFromObjectCaseSensitive(rep, "command");
		cJSON_AddNullToObject(rep, "command");
	}
	cJSON_AddItemToObject(rep, "models", models_json(f.meta));
	arms = cJSON_AddArrayToObject(rep, "arms");
	defects = cJSON_AddArrayToObject(rep, "known_defects");
	if (f.kind == LM_BENCH_FOLDER_ABLATION) {
		for (k = 0; k < 2; k++) {
			a = cJSON_GetArrayItem(aarms, k);
			if (sub[k].r == NULL)
				continue;
			cJSON_AddItemToArray(arms, arm_json(&sub[k], cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a, "restarted")) &&
			    strcmp(lm_bench_meta_str(a, "preference") ? lm_bench_meta_str(a, "preference") : "", "on") == 0 ?
			    "preference on" : "preference off", a, bs));
			cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(a, "exercise"),
			    "defects"))
				cJSON_AddItemToArray(defects, cJSON_Duplicate(d, 0));
		}
		/* The verdict is the arm with the preference as found (the last). */
		a = cJSON_GetArrayItem(aarms, 1);
		cJSON_AddStringToObject(rep, "kernel_verdict", sub[1].r != NULL ? kernel_verdict(&sub[1], a) : NR);
		needed = cJSON_GetObjectItemCaseSensitive(f.meta, "preference_needed");
		cJSON_AddItemToObject(rep, "preference_needed", cJSON_IsBool(needed) ? cJSON_CreateBool(cJSON_IsTrue(needed))
		                                                                     : cJSON_CreateNull());
	} else {
		cJSON_AddItemToArray(arms, arm_json(&f, f.kind == LM_BENCH_FOLDER_BARE_METAL ? "bare metal" : "run", NULL, bs));
		cJSON_AddStringToObject(rep, "kernel_verdict", kernel_verdict(&f, NULL));
		cJSON_AddNullToObject(rep, "preference_needed");
	}
	cJSON_AddStringToObject(rep, "sha256sums_sha256", f.sums_sha256);
out:
	lm_bench_folder_dispose(&f);
	lm_bench_folder_dispose(&sub[0]);
	lm_bench_folder_dispose(&sub[1]);
	if (rc < 0) {
		cJSON_Delete(rep);
		return rc;
	}
	*out = rep;
	return 0;
}

/* ---- Markdown ---- */

static const char *s_or(const cJSON *o, const char *path)
{
	const char *s = lm_bench_meta_str(o, path);

	return s != NULL ? s : NR;
}

static void versions(lm_buf *b, const char *label, const cJSON *o, const char *v, const char *bd)
{
	const char *ver = lm_bench_meta_str(o, v), *build = lm_bench_meta_str(o, bd);

	lm_buf_addf(b, "| %s | %s%s%s%s |\n", label, ver != NULL ? ver : NR, build != NULL ? " (" : "",
	    build != NULL ? build : "", build != NULL ? ")" : ver != NULL ? ", build not recorded" : "");
}

/* A figure's cell: " 12.34<suffix> |", or a dash when there is none. */
static void md_number(lm_buf *b, const cJSON *v, const char *suffix)
{
	if (cJSON_IsNumber(v))
		lm_buf_addf(b, " %.2f%s |", v->valuedouble, suffix);
	else
		lm_buf_adds(b, " – |");
}

static void report_markdown(lm_buf *b, const cJSON *rep)
{
	const cJSON *arms = cJSON_GetObjectItemCaseSensitive(rep, "arms"), *arm, *t, *m, *needed, *v;
	const cJSON *models = cJSON_GetObjectItemCaseSensitive(rep, "models"), *cmd = cJSON_GetObjectItemCaseSensitive(rep,
	    "command");

	lm_buf_addf(b, "### lume-metal results: %s\n\n", s_or(rep, "folder"));
	if (lm_bench_meta_str(rep, "failure") != NULL)
		lm_buf_addf(b, "**This record FAILED**: %s\n\n", lm_bench_meta_str(rep, "failure"));
	if (lm_bench_meta_str(rep, "published_by") != NULL)
		lm_buf_addf(b, "Published by %s (%s): no raw runs and no activation records here.\n\n",
		    lm_bench_meta_str(rep, "published_by"), s_or(rep, "published_source"));
	lm_buf_adds(b, "| | |\n|---|---|\n");
	lm_buf_addf(b, "| host chip | %s (%s) |\n", s_or(rep, "host.chip"), s_or(rep, "host.model"));
	versions(b, "host macOS", rep, "host.os_version", "host.os_build");
	versions(b, "guest macOS", rep, "guest.os_version", "guest.os_build");
	lm_buf_addf(b, "| VM manager | %s %s |\n", s_or(rep, "vm_manager.name"), s_or(rep, "vm_manager.version"));
	lm_buf_addf(b, "| lume-metal | %s |\n", s_or(rep, "lume_metal_version"));
	v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rep, "llama_cpp"), "build_number");
	if (cJSON_IsNumber(v))
		lm_buf_addf(b, "| llama.cpp | b%.0f, commit %s |\n", v->valuedouble, s_or(rep, "llama_cpp.commit"));
	else
		lm_buf_addf(b, "| llama.cpp | build %s, commit %s |\n", NR, s_or(rep, "llama_cpp.commit"));
	if (cJSON_IsArray(cmd)) {
		lm_buf_adds(b, "| command |");
		cJSON_ArrayForEach(m, cmd)
			lm_buf_addf(b, " %s", cJSON_GetStringValue(m) ? cJSON_GetStringValue(m) : "");
		lm_buf_adds(b, " |\n");
	} else {
		lm_buf_addf(b, "| command | %s |\n", NR);
	}
	if (cJSON_GetArraySize(models) == 0)
		lm_buf_addf(b, "| model | %s |\n", NR);
	cJSON_ArrayForEach(m, models) {
		const cJSON *size = cJSON_GetObjectItemCaseSensitive(m, "size");
		lm_buf_addf(b, "| model | %s, ", s_or(m, "path"));
		if (cJSON_IsNumber(size))
			lm_buf_addf(b, "%.0f bytes", size->valuedouble);
		else
			lm_buf_addf(b, "size %s", NR);
		lm_buf_addf(b, ", SHA-256 %s |\n", s_or(m, "sha256"));
	}
	lm_buf_addf(b, "| kernel verdict | %s |\n", s_or(rep, "kernel_verdict"));
	needed = cJSON_GetObjectItemCaseSensitive(rep, "preference_needed");
	lm_buf_addf(b, "| host preference needed | %s |\n", cJSON_IsTrue(needed) ? "yes (the kernels failed with it off "
	    "and ran with it on)" : cJSON_IsFalse(needed) ? "no (the kernels ran with it off)" :
	    strcmp(s_or(rep, "kind"), "ablation") == 0 ? "not told (an arm failed)" : "not measured (no ablation)");
	lm_buf_adds(b, "| known defects |");
	if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(rep, "known_defects")) == 0)
		lm_buf_addf(b, " %s |\n", strcmp(s_or(rep, "kind"), "ablation") == 0 ? "none seen by the exercise" :
		    NR " (the exercise runs in an ablation)");
	else {
		cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(rep, "known_defects"))
			lm_buf_addf(b, " %s;", cJSON_GetStringValue(m) ? cJSON_GetStringValue(m) : "");
		lm_buf_adds(b, " |\n");
	}
	lm_buf_addf(b, "| SHA256SUMS | sha256 %s |\n\n", s_or(rep, "sha256sums_sha256"));
	cJSON_ArrayForEach(arm, arms) {
		const cJSON *w = cJSON_GetObjectItemCaseSensitive(arm, "widened"), *proven;
		lm_buf_addf(b, "**%s**", s_or(arm, "name"));
		if (lm_bench_meta_str(arm, "exercise.verdict") != NULL)
			lm_buf_addf(b, " — exercise %s", lm_bench_meta_str(arm, "exercise.verdict"));
		lm_buf_adds(b, "\n\n| test | stock | shimmed | shimmed / stock | bare metal | % of bare metal |\n"
		    "|---|---:|---:|---:|---:|---:|\n");
		cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(arm, "tests")) {
			lm_buf_addf(b, "| %s %s |", s_or(t, "test"), s_or(t, "unit"));
			md_number(b, cJSON_GetObjectItemCaseSensitive(t, "stock"), "");
			md_number(b, cJSON_GetObjectItemCaseSensitive(t, "shimmed"), "");
			md_number(b, cJSON_GetObjectItemCaseSensitive(t, "ratio"), "×");
			md_number(b, cJSON_GetObjectItemCaseSensitive(t, "bare_metal"), "");
			md_number(b, cJSON_GetObjectItemCaseSensitive(t, "percent_of_bare_metal"), "%");
			lm_buf_adds(b, "\n");
		}
		proven = cJSON_GetObjectItemCaseSensitive(arm, "proven_by_activation_records");
		lm_buf_addf(b, "\nActivation records: %s.", cJSON_IsTrue(proven) ? "the shimmed arm's workload got widened "
		    "answers, no stock run loaded the shim" : cJSON_IsFalse(proven) ? "none: not proven by activation records"
		    : "none (bare metal: no shim)");
		if (cJSON_GetArraySize(w) > 0) {
			lm_buf_adds(b, " Widened answers:");
			cJSON_ArrayForEach(m, w)
				lm_buf_addf(b, "\n- %s", cJSON_GetStringValue(m) ? cJSON_GetStringValue(m) : "");
		}
		lm_buf_adds(b, "\n\n");
	}
}

int lm_bench_report(const char *const *dirs, size_t n, lm_bench_report_format format, char **out)
{
	cJSON *doc, *reports, *rep;
	bare_set bs = {NULL, 0};
	size_t i;
	int rc = 0;

	*out = NULL;
	if (dirs == NULL || n == 0)
		return lm_error_set(LM_EINVALID, "report: no evidence folder given");
	if ((doc = cJSON_CreateObject()) == NULL || (bs.f = calloc(n, sizeof(*bs.f))) == NULL) {
		cJSON_Delete(doc);
		return lm_error_nomem();
	}
	for (i = 0; i < n && rc == 0; i++) {
		if ((rc = lm_bench_folder_load(&bs.f[bs.n], dirs[i])) == 0 && bs.f[bs.n].kind == LM_BENCH_FOLDER_BARE_METAL)
			bs.n++;
		else
			lm_bench_folder_dispose(&bs.f[bs.n]);
	}
	cJSON_AddStringToObject(doc, "format", RESULTS_FORMAT);
	reports = cJSON_AddArrayToObject(doc, "reports");
	for (i = 0; i < n && rc == 0; i++)
		if ((rc = folder_report(dirs[i], &bs, &rep)) == 0)
			cJSON_AddItemToArray(reports, rep);
	for (i = 0; i < bs.n; i++)
		lm_bench_folder_dispose(&bs.f[i]);
	free(bs.f);
	if (rc == 0 && format == LM_BENCH_REPORT_JSON) {
		if ((*out = cJSON_Print(doc)) == NULL)
			rc = lm_error_nomem();
	} else if (rc == 0) {
		lm_buf b;
		lm_buf_init(&b, LM_BUF_TEXT_MAX);
		cJSON_ArrayForEach(rep, reports)
			report_markdown(&b, rep);
		lm_buf_adds(&b, "<sub>Made by `lume-metal report`; every figure is read back from the folder, whose "
		    "SHA256SUMS was checked first.</sub>\n");
		rc = lm_buf_take(&b, out, NULL);
	}
	cJSON_Delete(doc);
	return rc;
}

/* ---- the archive ---- */

/* tar (POSIX pax/ustar, every platform has one: bsdtar on macOS) run as a child, never through a
 * shell: the folder's parent as its directory, the folder's own name as the one member. Written
 * to a temporary name beside the file, then renamed over it: never a partial archive. */
int lm_bench_archive(const char *dir, const char *file, int overwrite)
{
	const lm_proc_options po = {.timeout = 600};
	lm_proc_result res;
	struct stat st;
	char *real = NULL, *parent = NULL, *base, *member = NULL, *tmp = NULL, *tar = NULL, hex[17];
	int rc;

	if (dir == NULL || file == NULL || file[0] == '\0')
		return lm_error_set(LM_EINVALID, "lm_bench_archive: no file given");
	if (!overwrite && lstat(file, &st) == 0)
		return lm_error_set(LM_EINVALID, "%s exists: an archive is never written over a file unless asked (force)",
		    file);
	if ((rc = lm_bench_verify_sums(dir)) < 0)
		return rc;
	if ((real = realpath(dir, NULL)) == NULL)
		return lm_error_set(LM_EIO, "cannot resolve %s", dir);
	if ((parent = lm_text_dup(real)) == NULL) {
		rc = lm_error_nomem();
		goto out;
	}
	base = strrchr(parent, '/');
	*base++ = '\0';
	/* "./NAME": a member that never reads as an option, whatever the folder is called. */
	if ((rc = lm_random_hex(hex, 8)) < 0 || (tmp = lm_format("%s.%s.tmp", file, hex)) == NULL ||
	    (member = lm_format("./%s", base)) == NULL ||
	    (rc = lm_proc_find_program("tar", &tar)) < 0) {
		rc = rc < 0 ? rc : lm_error_nomem();
		goto out;
	}
	{
		const char *args[] = {"-czf", tmp, "-C", parent[0] ? parent : "/", member, NULL};
		if ((rc = lm_proc_run(tar, args, &po, &res)) < 0)
			goto out;
	}
	if (res.exit_code != 0 || res.timed_out)
		rc = lm_error_set(LM_ERROR, "%s exited %d packing %s: %.*s", tar, res.exit_code, real,
		    (int)strcspn(res.err, "\n"), res.err);
	else if (overwrite ? rename(tmp, file) != 0 : link(tmp, file) != 0)
		/* link: no other file appeared under that name meanwhile (it fails rather than replaces) */
		rc = errno == EEXIST ? lm_error_set(LM_EINVALID, "%s exists: an archive is never written over a file "
		    "unless asked (force)", file) : lm_error_set(LM_EIO, "cannot move %s to %s: %s", tmp, file, strerror(errno));
	else
		rc = lm_fs_sync_parent(file);
	if (rc == 0 && !overwrite)
		(void)unlink(tmp);
	lm_free(res.out);
	lm_free(res.err);
out:
	if (rc < 0 && tmp != NULL)
		(void)unlink(tmp);
	free(tmp);
	free(member);
	free(tar);
	free(parent);
	free(real);
	return rc;
}
