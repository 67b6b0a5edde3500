/* bench compare's renderings besides text and JSON: Markdown with the charts (the Action's job
 * summary embeds it), the same charts as SVG, and the compatibility matrix. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_internal.h"
#include "error_internal.h"
#include "fs.h"
#include "str.h"
#include "text.h"

static void cell(lm_buf *b, double v, int ratio)
{
	if (!(v > 0))
		lm_buf_adds(b, " – |");
	else if (ratio)
		lm_buf_addf(b, " %.2f× |", v);
	else
		lm_buf_addf(b, " %.2f |", v);
}

/* Markdown cell text: a pipe would end the cell. */
static void md_text(lm_buf *b, const char *s)
{
	for (; s != NULL && *s != '\0'; s++)
		lm_buf_add(b, *s == '|' ? "/" : s, 1);
}

/* The model's name as a title shows it: without the file's ".gguf". */
static size_t model_len(const lm_bench_comparison_row *row)
{
	const char *m = row->model ? row->model : row->vm;
	size_t n = strlen(m);

	return n > 5 && strcmp(m + n - 5, ".gguf") == 0 ? n - 5 : n;
}

/* Whose run a chart shows, in its title: who published it ("Cua", from "published by Cua
 * (trycua/cua); ..."), or the VM. */
static const char *whose(const lm_bench_comparison_row *row)
{
	static const char by[] = "published by ";

	if (row->note != NULL && strncmp(row->note, by, sizeof(by) - 1) == 0)
		return row->note + sizeof(by) - 1;
	return row->vm;
}

static size_t whose_len(const lm_bench_comparison_row *row)
{
	const char *w = whose(row);

	return w == row->vm ? strlen(w) : strcspn(w, " (;");
}

/* A chart per row that has an unlocked figure: stock / unlocked / bare metal. */
static int charts_of(const lm_bench_comparison *c, lm_bench_chart **out, char ***titles, size_t *n)
{
	size_t i, k = 0;

	*out = calloc(c->count + 1, sizeof(**out));
	*titles = calloc(c->count + 1, sizeof(char *));
	if (*out == NULL || *titles == NULL)
		return lm_error_nomem();
	for (i = 0; i < c->count; i++) {
		const lm_bench_comparison_row *row = c->rows[i];
		if (row->kind == LM_BENCH_ROW_BARE_METAL || !(row->unlocked > 0))
			continue;
		/* A short title: the model and the test, and whose run (the VM, or who published it); the
		 * folder, the build and the rest are in the table above the charts. */
		if (((*titles)[k] = lm_format("%.*s %s, %.*s", (int)model_len(row), row->model ? row->model : row->vm,
		    row->test, (int)whose_len(row), whose(row))) == NULL)
			return lm_error_nomem();
		(*out)[k].title = (*titles)[k];
		(*out)[k].metric = row->test;
		(*out)[k].unit = row->unit;
		(*out)[k].labels[0] = "stock";
		(*out)[k].labels[1] = "unlocked";
		(*out)[k].labels[2] = "bare metal";
		(*out)[k].values[0] = row->stock;
		(*out)[k].values[1] = row->unlocked;
		(*out)[k].values[2] = row->bare_metal;
		k++;
	}
	*n = k;
	return 0;
}

int lm_bench_compare_markdown(const lm_bench_comparison *c, char **out)
{
	lm_bench_chart *charts = NULL;
	char **titles = NULL;
	size_t i, n = 0;
	lm_buf b;
	int rc;

	*out = NULL;
	if ((rc = charts_of(c, &charts, &titles, &n)) < 0)
		goto done;
	lm_buf_init(&b, LM_BUF_TEXT_MAX);
	lm_buf_adds(&b, "| source | vm / workload | llama.cpp | test | stock | unlocked | unlocked / stock | bare metal "
	    "| unlocked / bare metal | note |\n|---|---|---|---|---:|---:|---:|---:|---:|---|\n");
	for (i = 0; i < c->count; i++) {
		const lm_bench_comparison_row *row = c->rows[i];
		lm_buf_adds(&b, "| ");
		md_text(&b, row->source);
		lm_buf_adds(&b, " | ");
		md_text(&b, row->vm);
		lm_buf_adds(&b, " | ");
		md_text(&b, row->llama_build ? row->llama_build : "not recorded");
		lm_buf_adds(&b, " | ");
		md_text(&b, row->test);
		lm_buf_adds(&b, " |");
		cell(&b, row->stock, 0);
		cell(&b, row->unlocked, 0);
		cell(&b, row->unlocked_over_stock, 1);
		cell(&b, row->bare_metal, 0);
		cell(&b, row->unlocked_over_bare_metal, 1);
		lm_buf_adds(&b, " ");
		md_text(&b, row->note ? row->note : "");
		lm_buf_adds(&b, " |\n");
	}
	lm_buf_adds(&b, "\n");
	lm_bench_chart_mermaid(&b, NULL, charts, n);
	rc = lm_buf_take(&b, out, NULL);
done:
	for (i = 0; titles != NULL && titles[i] != NULL; i++)
		free(titles[i]);
	free(titles);
	free(charts);
	return rc;
}

int lm_bench_compare_svg(const lm_bench_comparison *c, const char *file)
{
	lm_bench_chart *charts = NULL;
	char **titles = NULL, *svg = NULL;
	size_t i, n = 0;
	int rc;

	if (file == NULL || file[0] == '\0')
		return lm_error_set(LM_EINVALID, "lm_bench_compare_svg: no file given");
	if ((rc = charts_of(c, &charts, &titles, &n)) == 0 &&
	    (rc = lm_bench_chart_svg("lume-metal bench compare: t/s per test", charts, n,
	        &svg)) == 0)
		rc = lm_fs_write_atomic(file, svg, strlen(svg), 0644);
	free(svg);
	for (i = 0; titles != NULL && titles[i] != NULL; i++)
		free(titles[i]);
	free(titles);
	free(charts);
	return rc;
}

/* ---- the compatibility matrix ---- */

/* "26.6.1 (25G90)"; with a manager, "lume 0.5.1". */
static void version_cell(lm_buf *b, const cJSON *meta, const char *version, const char *build, int paren)
{
	const char *v = lm_bench_meta_str(meta, version), *bd = lm_bench_meta_str(meta, build);

	if (v == NULL)
		lm_buf_adds(b, " not recorded |");
	else if (bd == NULL)
		lm_buf_addf(b, " %s |", v);
	else
		lm_buf_addf(b, paren ? " %s (%s) |" : " %s %s |", v, bd);
}

/* The speed-up of the first test of a kind: prompt processing (pp: n_gen 0) or generation (tg). */
static void speedup_cell(lm_buf *b, const lm_bench_result *r, int gen)
{
	size_t i;

	for (i = 0; i < r->ntests; i++) {
		const lm_bench_test *t = r->tests[i];
		if ((gen ? t->n_gen > 0 && t->n_prompt == 0 : t->n_prompt > 0 && t->n_gen == 0) && t->ratio > 0) {
			lm_buf_addf(b, " %.2f× (%s) |", t->ratio, t->name);
			return;
		}
	}
	lm_buf_adds(b, " not recorded |");
}

static int all_exited_zero(const lm_bench_result *r)
{
	int k;

	for (k = 0; r->shimmed_exit != NULL && k < r->rounds; k++)
		if (r->shimmed_exit[k] != 0)
			return 0;
	return 1;
}

/* Whether llama.cpp's unlocked kernels ran in the shimmed arm: it selected other kernels than the
 * stock arm and every shimmed run exited 0. */
static const char *kernels_ran(const lm_bench_folder *f)
{
	if (!f->r->stock_metal->found && !f->r->shimmed_metal->found)
		return "not recorded";
	if (!f->r->kernel_choice_changed)
		return "no: the kernel choice did not change";
	if (!all_exited_zero(f->r))
		return "no: the shimmed runs failed";
	return "yes";
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int matrix_row(lm_buf *b, const char *dir)
{
	lm_bench_folder f, arm;
	const lm_bench_folder *figures = &f;
	const char *by;
	int rc;

	memset(&arm, 0, sizeof(arm));
	if ((rc = lm_bench_folder_load(&f, dir)) < 0)
		goto out;
	if (f.kind == LM_BENCH_FOLDER_BARE_METAL)
		goto out; /* no VM: nothing to set in the matrix */
	if (f.kind == LM_BENCH_FOLDER_ABLATION) {
		char *sub = lm_format("%s/%s", dir, LM_BENCH_ABLATION_ON);
		rc = sub == NULL ? lm_error_nomem() : lm_bench_folder_load(&arm, sub);
		free(sub);
		if (rc < 0)
			goto out;
		figures = &arm;
	}
	lm_buf_addf(b, "| %s |", lm_bench_meta_str(f.meta, "host.chip") ? lm_bench_meta_str(f.meta, "host.chip")
	    : "not recorded");
	version_cell(b, f.meta, "host.os_version", "host.os_build", 1);
	version_cell(b, f.meta, "guest.os_version", "guest.os_build", 1);
	version_cell(b, f.meta, "vm.manager", "vm.manager_version", 0);
	lm_buf_addf(b, " %s |", figures->llama_build[0] ? figures->llama_build : "not recorded");
	lm_buf_addf(b, " %s |", kernels_ran(figures));
	speedup_cell(b, figures->r, 0);
	speedup_cell(b, figures->r, 1);
	if (f.kind == LM_BENCH_FOLDER_ABLATION)
		lm_buf_addf(b, " %s |", f.r->preference_needed > 0 ? "yes" : f.r->preference_needed == 0 ? "no"
		    : "not told (an arm failed)");
	else
		lm_buf_adds(b, " not measured |");
	by = lm_bench_meta_str(f.meta, "published.by");
	/* The link from docs/compatibility.md, which lives in docs/. */
	lm_buf_addf(b, " [%s](%s)%s%s%s |\n", dir, strncmp(dir, "docs/", 5) == 0 ? dir + 5 : dir, by ? ", published by " : "",
	    by ? by : "",
	    figures->proven == 0 && !by ? ", not proven by activation records" : "");
out:
	lm_bench_folder_dispose(&f);
	lm_bench_folder_dispose(&arm);
	return rc;
}

int lm_bench_matrix_markdown(const char *const *dirs, size_t n, char **out)
{
	const char **sorted;
	size_t i;
	lm_buf b;
	int rc = 0, repository;

	*out = NULL;
	if (n == 0 || dirs == NULL)
		return lm_error_set(LM_EINVALID, "lm_bench_matrix_markdown: no evidence folder given");
	if ((sorted = calloc(n, sizeof(*sorted))) == NULL)
		return lm_error_nomem();
	memcpy(sorted, dirs, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_str);
	/* The repository's page (docs/compatibility.md: how it is made, how to add a row) only when
	 * the folders are the repository's evidence; a user's own folders get the matrix alone. */
	for (i = 0, repository = 1; i < n; i++)
		if (strncmp(sorted[i], "docs/evidence/", 14) != 0)
			repository = 0;
	lm_buf_init(&b, LM_BUF_TEXT_MAX);
	lm_buf_adds(&b, "# Compatibility matrix\n\n"
	    "Which host chip, host macOS, guest macOS and VM manager the unlock was measured on, whether "
	    "llama.cpp's unlocked kernels ran, the prompt-processing (pp) and generation (tg) speed-ups of the "
	    "shimmed arm over the stock one, and whether the host preference was needed (measured only by "
	    "`lume-metal bench --ablate-host-preference`: the kernels failed with it off and ran with it on).\n\n");
	if (repository)
		lm_buf_adds(&b, "Generated by `lume-metal bench compare --matrix` from the evidence folders kept in "
		    "[docs/evidence/](evidence/); do not edit it by hand. From the top of the repository:\n\n"
		    "```sh\nlume-metal bench compare --matrix docs/evidence/* > docs/compatibility.md\n```\n\n");
	lm_buf_adds(&b, "| host chip | host macOS | guest macOS | VM manager | llama.cpp | kernels ran | pp speed-up | "
	    "tg speed-up | preference needed | evidence |\n|---|---|---|---|---|---|---:|---:|---|---|\n");
	for (i = 0; i < n && rc == 0; i++)
		rc = matrix_row(&b, sorted[i]);
	free(sorted);
	if (rc < 0) {
		lm_buf_dispose(&b);
		return rc;
	}
	if (!repository)
		return lm_buf_take(&b, out, NULL);
	lm_buf_adds(&b, "\n## Add a row\n\n"
	    "1. Record the ablation on your Mac: `lume-metal bench VM --ablate-host-preference --out my-run -- "
	    "llama-bench -m MODEL.gguf -p 512 -n 128 -r 10 -t 8 -ngl -1` (or a plain `lume-metal bench VM` when "
	    "you may not change the host preference: the row then says \"not measured\").\n"
	    "2. Check it (`cd my-run && shasum -a 256 -c SHA256SUMS`) and copy the folder to "
	    "`docs/evidence/<YYYY-MM-DD>-<chip>-<model>/`.\n"
	    "3. Regenerate this file with the command above and send both in one pull request; "
	    "`lume-metal report docs/evidence/<folder>` is the text for the pull request or the issue.\n\n"
	    "A folder someone else published (no raw runs, no activation records) is kept in the same layout "
	    "with `\"kind\": \"published\"` in its metadata.json, its figures in `tests[]`, and who published it "
	    "in `published`; its rows say so.\n");
	return lm_buf_take(&b, out, NULL);
}
