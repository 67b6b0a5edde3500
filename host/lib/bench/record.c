/* The evidence folder's files (docs/bench.md): each written atomically, then SHA256SUMS over
 * every other file, in the format `sha256sum -c` and `shasum -a 256 -c` read. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench_internal.h"
#include "error_internal.h"
#include "fs.h"
#include "path.h"
#include "sha256.h"
#include "str.h"
#include "text.h"

#define SUMS "SHA256SUMS"
#define MAX_FILES 1024

int lm_bench_write_file(const char *dir, const char *name, const char *data, size_t len)
{
	char *path;
	int rc;

	if ((rc = lm_path_join(&path, dir, name, NULL)) < 0)
		return rc;
	rc = lm_fs_write_atomic(path, data != NULL ? data : "", data != NULL ? len : 0, 0644);
	free(path);
	return rc;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The folder's regular files but SHA256SUMS, sorted (NULL-terminated; lm_strv_free); with the
 * files of its sub-folders one level down as "SUB/NAME" (an ablation's two records), their own
 * SHA256SUMS included. */
static int list_dir(const char *dir, const char *sub, char **names, size_t *n)
{
	char *path = NULL;
	DIR *d;
	struct dirent *e;
	struct stat st;
	int rc = 0;

	if (sub != NULL && (rc = lm_path_join(&path, dir, sub, NULL)) < 0)
		return rc;
	if ((d = opendir(path != NULL ? path : dir)) == NULL) {
		rc = lm_error_set(LM_EIO, "cannot read the folder %s", path != NULL ? path : dir);
		free(path);
		return rc;
	}
	while (rc == 0 && (e = readdir(d)) != NULL) {
		char *full = NULL, *name;
		if (e->d_name[0] == '.' || (sub == NULL && strcmp(e->d_name, SUMS) == 0))
			continue;
		if ((rc = lm_path_join(&full, path != NULL ? path : dir, e->d_name, NULL)) < 0)
			break;
		rc = lstat(full, &st) == 0 ? 0 : lm_error_set(LM_EIO, "cannot read %s", full);
		free(full);
		if (rc < 0)
			break;
		if (S_ISDIR(st.st_mode) && sub == NULL) {
			rc = list_dir(dir, e->d_name, names, n);
			continue;
		}
		if (!S_ISREG(st.st_mode))
			continue;
		name = sub != NULL ? lm_format("%s/%s", sub, e->d_name) : lm_text_dup(e->d_name);
		if (*n == MAX_FILES || name == NULL) {
			free(name);
			rc = *n == MAX_FILES ? lm_error_set(LM_EINVALID, "%s holds more than %d files", dir, MAX_FILES)
			                     : lm_error_nomem();
			break;
		}
		names[(*n)++] = name;
	}
	closedir(d);
	free(path);
	return rc;
}

static int list_files(const char *dir, char ***out)
{
	char **names;
	size_t n = 0;
	int rc;

	*out = NULL;
	if ((names = calloc(MAX_FILES + 1, sizeof(*names))) == NULL)
		return lm_error_nomem();
	if ((rc = list_dir(dir, NULL, names, &n)) < 0) {
		lm_strv_free(names);
		return rc;
	}
	qsort(names, n, sizeof(*names), cmp_name);
	*out = names;
	return 0;
}

/* A name SHA256SUMS may list: a file of the folder, or of a sub-folder one level down. */
static int sums_name_ok(const char *name)
{
	const char *slash = strchr(name, '/');

	if (name[0] == '.' || name[0] == '\0')
		return 0;
	if (slash == NULL)
		return 1;
	return slash[1] != '.' && slash[1] != '\0' && strchr(slash + 1, '/') == NULL && slash != name;
}

static int file_hex(const char *dir, const char *name, char hex[65])
{
	uint8_t digest[32];
	char *path;
	int rc;

	if ((rc = lm_path_join(&path, dir, name, NULL)) < 0)
		return rc;
	rc = lm_sha256_file(path, digest);
	free(path);
	if (rc == 0)
		lm_sha256_hex(digest, hex);
	return rc;
}

int lm_bench_write_sums(const char *dir)
{
	char **names = NULL, hex[65], *text;
	size_t i, len;
	lm_buf b;
	int rc;

	if ((rc = list_files(dir, &names)) < 0)
		return rc;
	lm_buf_init(&b, LM_BUF_TEXT_MAX);
	for (i = 0; names[i] != NULL; i++) {
		if ((rc = file_hex(dir, names[i], hex)) < 0)
			break;
		lm_buf_addf(&b, "%s  %s\n", hex, names[i]);
	}
	lm_strv_free(names);
	if (rc < 0) {
		lm_buf_dispose(&b);
		return rc;
	}
	if ((rc = lm_buf_take(&b, &text, &len)) == 0)
		rc = lm_bench_write_file(dir, SUMS, text, len);
	free(text);
	return rc;
}

int lm_bench_verify_sums(const char *dir)
{
	char *path, *data = NULL, *name, hex[65];
	const char *line;
	size_t len, n;
	lm_scan lines;
	int rc, lineno = 0;

	if ((rc = lm_path_join(&path, dir, SUMS, NULL)) < 0)
		return lm_error_prefix("%s is not an evidence folder: ", dir);
	rc = lm_fs_read_file(path, 1 << 20, &data, &len);
	free(path);
	if (rc < 0)
		return lm_error_prefix("%s is not an evidence folder: ", dir);
	lm_scan_init(&lines, data, len);
	while (rc == 0 && lm_scan_line(&lines, &line, &n) != 0) {
		lineno++;
		if (n == 0)
			continue; /* an empty line lists nothing */
		if (n < 67 || line[64] != ' ' || (line[65] != ' ' && line[65] != '*') || memchr(line, '\0', n) != NULL) {
			rc = lm_error_set(LM_ECORRUPT, "%s/%s: line %d is not \"SHA256  NAME\"", dir, SUMS, lineno);
			break;
		}
		if ((name = lm_text_dupn(line + 66, n - 66)) == NULL) {
			rc = lm_error_nomem();
			break;
		}
		if (!sums_name_ok(name))
			rc = lm_error_set(LM_ECORRUPT, "%s/%s: line %d is not \"SHA256  NAME\"", dir, SUMS, lineno);
		else if ((rc = file_hex(dir, name, hex)) == 0 && memcmp(hex, line, 64) != 0)
			rc = lm_error_set(LM_ECORRUPT, "%s/%s: SHA-256 differs from %s", dir, name, SUMS);
		free(name);
	}
	free(data);
	return rc;
}

/* ---- results.csv ---- */

/* The text built in b, or NULL (the message set) when it could not be. */
static char *text_of(lm_buf *b)
{
	char *text;

	return lm_buf_take(b, &text, NULL) == 0 ? text : NULL;
}

char *lm_bench_results_csv(const lm_bench_result *r)
{
	char sf[96], hf[96];
	size_t i;
	lm_buf b;

	lm_buf_init(&b, LM_BUF_TEXT_MAX);
	lm_bench_metal_family(r->stock_metal, sf, sizeof(sf));
	lm_bench_metal_family(r->shimmed_metal, hf, sizeof(hf));
	lm_buf_adds(&b, "test,n_prompt,n_gen,n_depth,unit,stock_median,shimmed_median,ratio,stock_samples,"
	    "shimmed_samples,stock_gpu_family,shimmed_gpu_family,stock_simdgroup_reduction,"
	    "shimmed_simdgroup_reduction,stock_simdgroup_mm,shimmed_simdgroup_mm,stock_bfloat16,shimmed_bfloat16\n");
	for (i = 0; i < r->ntests; i++) {
		const lm_bench_test *t = r->tests[i];
		const int wall = r->parser == LM_BENCH_PARSER_NONE;
		lm_buf_addf(&b, "%s,%llu,%llu,%llu,%s,%.2f,%.2f,%.3f,%zu,%zu,%s,%s,%s,%s,%s,%s,%s,%s\n", t->name,
		    t->n_prompt, t->n_gen, t->n_depth, wall ? "s" : "t/s", t->stock_median, t->shimmed_median, t->ratio,
		    t->stock_samples, t->shimmed_samples, sf, hf, lm_bench_flag(r->stock_metal->simdgroup_reduction),
		    lm_bench_flag(r->shimmed_metal->simdgroup_reduction), lm_bench_flag(r->stock_metal->simdgroup_mm),
		    lm_bench_flag(r->shimmed_metal->simdgroup_mm), lm_bench_flag(r->stock_metal->bfloat),
		    lm_bench_flag(r->shimmed_metal->bfloat));
	}
	return text_of(&b);
}

/* ---- README.md and metadata.md ---- */

static const char *str_at(const cJSON *obj, const char *path)
{
	char key[64];
	const char *dot;
	const cJSON *v = obj;

	while (v != NULL && path[0] != '\0') {
		dot = strchr(path, '.');
		snprintf(key, sizeof(key), "%.*s", dot ? (int)(dot - path) : (int)strlen(path), path);
		v = cJSON_GetObjectItemCaseSensitive(v, key);
		path = dot ? dot + 1 : "";
	}
	if (cJSON_IsString(v))
		return v->valuestring;
	return "unknown";
}

static const char *yes_no(int v)
{
	return v < 0 ? "not printed" : v ? "yes" : "no";
}

void lm_bench_md_code_block(lm_buf *b, const char *text)
{
	size_t run = 0, longest = 0, len = strlen(text), k;
	const char *s;

	for (s = text; *s != '\0'; s++) {
		run = *s == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	/* A fence longer than any run of backticks in the text (CommonMark 0.31.2, 4.5 "Fenced code
	 * blocks": the closing fence is at least as long as the opening one). */
	for (k = 0; k < (longest < 3 ? 3 : longest + 1); k++)
		lm_buf_adds(b, "`");
	lm_buf_adds(b, "text\n");
	lm_buf_add(b, text, len);
	if (len == 0 || text[len - 1] != '\n')
		lm_buf_adds(b, "\n");
	for (k = 0; k < (longest < 3 ? 3 : longest + 1); k++)
		lm_buf_adds(b, "`");
	lm_buf_adds(b, "\n");
}

/* Per test, a bar each for the record's arms (bare metal: its one). */
static void readme_charts(lm_buf *b, const lm_bench_result *r)
{
	lm_bench_chart c[16];
	size_t i, n = 0;

	for (i = 0; i < r->ntests && n < sizeof(c) / sizeof(c[0]); i++, n++) {
		memset(&c[n], 0, sizeof(c[n]));
		c[n].title = r->tests[i]->name;
		c[n].unit = r->parser == LM_BENCH_PARSER_NONE ? "s" : "t/s";
		c[n].labels[0] = "stock";
		c[n].labels[1] = "shimmed";
		c[n].labels[2] = "bare metal";
		/* A bare-metal record's one arm is drawn as bare metal, in bare metal's colour. */
		c[n].values[r->bare_metal ? 2 : 0] = r->tests[i]->stock_median;
		c[n].values[1] = r->bare_metal ? 0 : r->tests[i]->shimmed_median;
	}
	if (n == 0)
		return;
	lm_buf_adds(b, "## Chart\n\n");
	lm_bench_chart_mermaid(b, r->vm, c, n);
}

char *lm_bench_readme(const lm_bench_result *r, const cJSON *meta)
{
	char sf[96], hf[96];
	size_t i;
	const int wall = r->parser == LM_BENCH_PARSER_NONE;
	const int failed = cJSON_IsString(cJSON_GetObjectItemCaseSensitive(meta, "failure"));
	lm_buf b;

	lm_buf_init(&b, LM_BUF_TEXT_MAX);
	lm_bench_metal_family(r->stock_metal, sf, sizeof(sf));
	lm_bench_metal_family(r->shimmed_metal, hf, sizeof(hf));
	lm_buf_addf(&b, "# lume-metal bench: %s, llama.cpp %s\n\n", r->vm,
	    r->llama_build[0] ? r->llama_build : wall ? "not run by the llama-bench parser" : "build not printed");
	/* A failed record says so before anything else, what failed quoted as it was printed (a run's
	 * stderr is many lines: a code block, not a sentence); its figures are what was made before. */
	if (failed) {
		lm_buf_adds(&b, "**This record FAILED.** The figures below are what the runs made before the failure; do "
		    "not post them as a result. What failed:\n\n");
		lm_bench_md_code_block(&b, cJSON_GetObjectItemCaseSensitive(meta, "failure")->valuestring);
		lm_buf_adds(&b, "\n");
	}
	if (r->bare_metal) {
		lm_buf_addf(&b, "Bare metal: the workload on the host itself, %s (%s), %d rounds. The `stock_*` columns "
		    "of results.csv hold this host arm; `bench compare` sets other records' unlocked runs against it.\n\n"
		    "| test | host (median) | samples |\n|---|---:|---:|\n", str_at(meta, "host.model"),
		    str_at(meta, "host.chip"), r->rounds);
		for (i = 0; i < r->ntests; i++)
			lm_buf_addf(&b, "| %s | %.2f | %zu |\n", r->tests[i]->name, r->tests[i]->stock_median,
			    r->tests[i]->stock_samples);
		lm_buf_addf(&b, "\nllama.cpp selected: GPU family %s, SIMD-group reduction %s, matrix %s, bfloat16 %s.\n\n",
		    sf, yes_no(r->stock_metal->simdgroup_reduction), yes_no(r->stock_metal->simdgroup_mm),
		    yes_no(r->stock_metal->bfloat));
		readme_charts(&b, r);
		return text_of(&b);
	}
	lm_buf_addf(&b, "Host %s (%s), guest macOS %s (%s), profile %s; %d rounds, stock and shimmed "
	    "interleaved. Recorded by lume-metal %s; see metadata.md for the environment and the exact commands, "
	    "SHA256SUMS to check the files (`sha256sum -c SHA256SUMS` or `shasum -a 256 -c SHA256SUMS`).\n\n",
	    str_at(meta, "host.model"), str_at(meta, "host.chip"), str_at(meta, "guest.os_version"),
	    str_at(meta, "guest.os_build"), str_at(meta, "profile.name"), r->rounds, str_at(meta, "lume_metal.version"));
	if (wall) {
		lm_buf_adds(&b, "| workload | unit | stock (median) | shimmed (median) | speed-up |\n|---|---|---:|---:|---:|\n");
		for (i = 0; i < r->ntests; i++)
			lm_buf_addf(&b, "| %s | s | %.3f | %.3f | %.2fx |\n", r->tests[i]->name, r->tests[i]->stock_median,
			    r->tests[i]->shimmed_median, r->tests[i]->ratio);
		lm_buf_adds(&b, "\nWall-clock seconds of the whole command per round (no workload parser); speed-up is "
		    "stock / shimmed.\n");
	} else {
		lm_buf_adds(&b, "| test | stock t/s (median) | shimmed t/s (median) | shimmed / stock | samples |\n"
		    "|---|---:|---:|---:|---:|\n");
		for (i = 0; i < r->ntests; i++) {
			const lm_bench_test *t = r->tests[i];
			lm_buf_addf(&b, "| %s | %.2f | %.2f | %.2fx | %zu / %zu |\n", t->name, t->stock_median,
			    t->shimmed_median, t->ratio, t->stock_samples, t->shimmed_samples);
		}
		lm_buf_adds(&b, "\nHeadline numbers are medians of llama-bench's `samples_ts` over every round, not its "
		    "`avg_ts`.\n");
	}
	lm_buf_adds(&b, "\n");
	readme_charts(&b, r);
	lm_buf_adds(&b, "## What llama.cpp selected\n\n| | stock | shimmed |\n|---|---|---|\n");
	lm_buf_addf(&b, "| GPU family | %s | %s |\n", sf, hf);
	lm_buf_addf(&b, "| SIMD-group reduction | %s | %s |\n", yes_no(r->stock_metal->simdgroup_reduction),
	    yes_no(r->shimmed_metal->simdgroup_reduction));
	lm_buf_addf(&b, "| SIMD-group matrix multiply | %s | %s |\n", yes_no(r->stock_metal->simdgroup_mm),
	    yes_no(r->shimmed_metal->simdgroup_mm));
	lm_buf_addf(&b, "| bfloat16 | %s | %s |\n\n", yes_no(r->stock_metal->bfloat), yes_no(r->shimmed_metal->bfloat));
	if (failed)
		lm_buf_adds(&b, "The record failed, so it does not show whether the unlock changed llama.cpp's kernel "
		    "choice: the selections above are what its runs printed before the failure.\n");
	else if (!r->stock_metal->found && !r->shimmed_metal->found)
		lm_buf_adds(&b, "The workload printed no Metal init lines: whether the unlock changed llama.cpp's kernel "
		    "choice is not recorded.\n");
	else if (r->kernel_choice_changed)
		lm_buf_adds(&b, "**The unlock changed llama.cpp's kernel choice**: the shimmed arm selected kernels the "
		    "stock arm did not.\n");
	else
		lm_buf_adds(&b, "The unlock did **not** change llama.cpp's kernel choice: both arms selected the same "
		    "kernels.\n");
	lm_buf_adds(&b, "\n## Files\n\n- `metadata.md`, `metadata.json`: host, VM, guest, lume-metal, profile, commands, "
	    "hashes, times\n- `<arm>-<round>.json` (`.stdout` without a parser) and `<arm>-<round>.stderr`: each "
	    "run's raw output\n- `results.csv`: per test, the median per arm, the ratio and what llama.cpp selected\n"
	    "- `SHA256SUMS`: every other file\n");
	return text_of(&b);
}

/* metadata.md: the JSON's sections as lists, in its order (one source for both files). */
static int md_object(lm_buf *b, const cJSON *obj, int depth)
{
	const cJSON *v;
	char *text;
	int rc = 0;

	cJSON_ArrayForEach(v, obj) {
		lm_buf_addf(b, "%*s- %s:", depth * 2, "", v->string != NULL ? v->string : "");
		if (cJSON_IsObject(v)) {
			lm_buf_adds(b, "\n");
			rc = md_object(b, v, depth + 1);
		} else if (cJSON_IsArray(v) && cJSON_GetArraySize(v) > 0 && cJSON_IsObject(cJSON_GetArrayItem(v, 0))) {
			const cJSON *e;
			lm_buf_adds(b, "\n");
			cJSON_ArrayForEach(e, v)
				if ((rc = md_object(b, e, depth + 1)) < 0)
					break;
		} else if (cJSON_IsString(v)) {
			lm_buf_addf(b, " `%s`\n", v->valuestring);
		} else if ((text = cJSON_PrintUnformatted(v)) != NULL) {
			lm_buf_addf(b, " %s\n", text);
			cJSON_free(text);
		} else {
			rc = lm_error_nomem(); /* a value left out would be a wrong record */
		}
		if (rc < 0)
			return rc;
	}
	return lm_buf_error(b);
}

char *lm_bench_metadata_md(const cJSON *meta)
{
	const cJSON *section;
	lm_buf b;

	lm_buf_init(&b, LM_BUF_TEXT_MAX);
	lm_buf_adds(&b, "# Environment and provenance\n\nWritten by lume-metal bench; the same facts as "
	    "metadata.json.\n");
	cJSON_ArrayForEach(section, meta) {
		lm_buf_addf(&b, "\n## %s\n\n", section->string);
		if (cJSON_IsObject(section) && md_object(&b, section, 0) < 0) {
			lm_buf_dispose(&b);
			return NULL;
		}
		if (cJSON_IsString(section))
			lm_buf_addf(&b, "`%s`\n", section->valuestring);
	}
	return text_of(&b);
}
