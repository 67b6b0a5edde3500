/* Internal: the bench module's parts (and what its white-box tests reach).
 *
 *   llama_json.c   llama-bench's JSON and JSONL output (every variant in docs/bench.md)
 *   metal_init.c   llama.cpp's Metal init lines on stderr: what it selected
 *   stats.c        medians and ratios
 *   facts.c        the host's and the guest's environment for metadata
 *   record.c       the evidence folder's files and SHA256SUMS
 *   run.c          lm_bench_run: the interleaved rounds
 *   compare.c      lm_bench_compare and the published figures
 *   folder.c       an evidence folder read back (compare, report and the matrix share it)
 *   chart.c        the bar charts: Mermaid xychart-beta blocks and SVG
 *   report.c       lm_bench_report: issue-ready blocks, the results document, the archive
 *   matrix.c       the compatibility matrix (docs/compatibility.md)
 *   ablate.c       the host-preference ablation: the arms with the preference off and on
 *   selftest.c     lm_selftest_run: the simulator's assumptions measured in a guest
 */
#ifndef LM_BENCH_INTERNAL_H
#define LM_BENCH_INTERNAL_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "lume-metal/bench.h"
#include "buf.h"

/* ---- llama_json.c ---- */

/* One record of llama-bench's output: one test of one parameter combination. */
typedef struct {
	unsigned long long n_prompt, n_gen, n_depth;
	double *samples_ts;        /* tokens/s per repetition (from samples_ns when samples_ts is absent) */
	size_t nsamples;
	char model_filename[256];
	char model_type[128];
	char build_commit[32];
	char backends[64];
	char gpu_info[128];
	int flash_attn;            /* -1 auto, 0, 1 (a bool in older builds) */
	char load_mode[16];        /* "mmap", ...; older builds' use_mmap as "mmap" / "none"; "" absent */
	long long build_number;    /* llama.cpp's release number (b10167: 10167); 0 absent */
} lm_llama_record;

typedef struct {
	lm_llama_record *records;
	size_t count;
} lm_llama_output;

/* llama-bench's stdout with -o json (an array) or -o jsonl (an object per line). Keys are read by
 * name and unknown ones ignored; a record needs n_prompt and n_gen. LM_EINVALID naming the record
 * and key otherwise. */
int lm_llama_parse(const char *text, size_t len, lm_llama_output *out);
void lm_llama_output_dispose(lm_llama_output *out);
/* "pp512", "tg128", "pp512+tg128", with "@d<depth>" when n_depth is not 0. */
void lm_llama_test_name(unsigned long long n_prompt, unsigned long long n_gen, unsigned long long n_depth,
    char *buf, size_t len);
/* The same for a record. */
void lm_llama_record_name(const lm_llama_record *r, char *buf, size_t len);

/* ---- metal_init.c ---- */

/* Read ggml_metal_device_init's lines (any prefix); fields not printed stay -1 (metal: 0 when
 * families were printed without a Metal line). */
void lm_bench_metal_parse(const char *text, lm_bench_metal *m);
/* "Apple5 (1005)", "Apple9 (1009) Metal4 (5002)"... ; "not printed" when nothing was read. */
void lm_bench_metal_family(const lm_bench_metal *m, char *buf, size_t len);
/* 1 when the two arms selected different kernels (reduction, matrix, bfloat16). */
int lm_bench_metal_differs(const lm_bench_metal *a, const lm_bench_metal *b);
/* "true", "false", "" (not printed). */
const char *lm_bench_flag(int v);

/* ---- stats.c ---- */

/* Median of n values (0 when n == 0); v is sorted in place. */
double lm_bench_median(double *v, size_t n);
/* a / b, 0 when either is not positive. */
double lm_bench_ratio(double a, double b);

/* ---- facts.c ---- */

/* The host: model, chip, OS version and build, user. */
cJSON *lm_bench_host_facts(void);

/* ---- record.c ---- */

/* The folder's files, each written atomically; SHA256SUMS last, over every other file in it
 * (sorted, `sha256sum -c` format). */
/* The folder: created, or an existing empty one; never one that holds files (a record is never
 * mixed with another). *abs gets its absolute path (free()). */
int lm_bench_make_folder(const char *dir, char **abs);
int lm_bench_write_file(const char *dir, const char *name, const char *data, size_t len);
int lm_bench_write_sums(const char *dir);
/* Check a folder's SHA256SUMS (every listed file present and matching). */
int lm_bench_verify_sums(const char *dir);
/* results.csv, README.md and the tests' table from the result. */
char *lm_bench_results_csv(const lm_bench_result *r);
char *lm_bench_readme(const lm_bench_result *r, const cJSON *meta);
char *lm_bench_metadata_md(const cJSON *meta);

/* "b10167 (ee3d1b54c)", "b10167", "build ee3d1b54c" from a record; "" when neither is printed. */
void lm_llama_build_name(const lm_llama_record *r, char *buf, size_t len);

/* ---- run.c ---- */

/* The folder: created, or an existing empty one; never one that holds files. *abs: its absolute path. */
int lm_bench_make_folder(const char *dir, char **abs);
/* UTC, RFC 3339; "unknown" when t is not a time. */
void lm_bench_iso_time(double t, char *buf, size_t size);

/* ---- run.c / compare.c: a folder's results recomputed from its raw files ---- */

/* An empty result (its two Metal selections not printed), sizes set. */
int lm_bench_result_new(lm_bench_result **out);
/* A new test at the end of r->tests, named `name`, zeroed otherwise; NULL when out of memory. */
lm_bench_test *lm_bench_add_test(lm_bench_result *r, const char *name);

/* The tests of the raw llama-bench outputs `outs` (rounds of one arm each), medians per test. */
int lm_bench_collect(lm_bench_result *r, char *const *stock_out, char *const *shimmed_out, int rounds);
/* The Metal selection of each arm from its stderr files. */
void lm_bench_collect_metal(lm_bench_result *r, char *const *stock_err, char *const *shimmed_err, int rounds);

/* ---- folder.c: an evidence folder read back ---- */


/* What kind of folder: a run in a VM, on the host itself, figures someone published (no raw
 * runs, no activation records), or the host-preference ablation (two VM records inside). */
typedef enum {
	LM_BENCH_FOLDER_VM = 0,
	LM_BENCH_FOLDER_BARE_METAL,
	LM_BENCH_FOLDER_PUBLISHED,
	LM_BENCH_FOLDER_ABLATION
} lm_bench_folder_kind;

#define LM_BENCH_WIDENED_MAX 16

typedef struct {
	char *dir;                 /* as given */
	lm_bench_folder_kind kind;
	cJSON *meta;               /* metadata.json */
	lm_bench_result *r;        /* the tests recomputed from the raw files (published: as published) */
	double *bare_metal;        /* published: the bare-metal median per test (r->ntests; 0 none) */
	double *percent;           /* published: shimmed / bare metal in % as published (0: not published) */
	int proven;                /* 1: the activation records prove both arms; 0: the folder has none
	                              ("not proven by activation records"); -1: no shim to prove (bare metal) */
	char vm[128], host[256];
	char llama_build[96];      /* "b10167 (ee3d1b54c)"; "" when not recorded */
	size_t nwidened;           /* the shimmed arm's widened answers, distinct, as lines */
	char widened[LM_BENCH_WIDENED_MAX][96];
	int widened_more;          /* more than LM_BENCH_WIDENED_MAX */
	char sums_sha256[65];      /* SHA-256 of the folder's SHA256SUMS */
} lm_bench_folder;

/* Read dir: SHA256SUMS checked first, metadata.json, the raw files (the medians recomputed), the
 * activation records checked (a shimmed run that collected records with no widened answer, or a
 * stock run that loaded the shim, is LM_EINVALID). An ablation folder is read as its metadata;
 * its arms with lm_bench_folder_load of its sub-folders. Dispose whatever it returns. */
int lm_bench_folder_load(lm_bench_folder *f, const char *dir);
void lm_bench_folder_dispose(lm_bench_folder *f);
/* A string member at a dotted path of the metadata ("host.chip"); NULL when absent. */
const char *lm_bench_meta_str(const cJSON *meta, const char *path);
/* An ablation folder's arm sub-folders, in the order run ("preference-off", "preference-on"). */
#define LM_BENCH_ABLATION_OFF "preference-off"
#define LM_BENCH_ABLATION_ON "preference-on"

/* text as a Markdown fenced code block (its lines as they are), appended to b. */
void lm_bench_md_code_block(lm_buf *b, const char *text);

/* ---- chart.c ---- */

/* One chart: a test's bars (stock, shimmed, bare metal; a bar of 0 is left out). */
typedef struct {
	const char *title;         /* "pp512" */
	const char *unit;          /* "t/s" or "s" */
	const char *labels[3];
	double values[3];
	const char *metric;        /* charts of the same metric share the SVG's scale ("pp512"); NULL: title */
} lm_bench_chart;

/* The speed-up a chart writes on itself: shimmed over stock (stock over shimmed for seconds); 0
 * without both bars. */
double lm_bench_chart_speedup(const lm_bench_chart *c);
/* The top of a value axis from 0 holding max with room for the figures above the bars, a whole
 * number of *step (1, 2, 2.5 or 5 times a power of ten; at most 5 steps). */
double lm_bench_chart_axis_max(double max, double *step);

/* Mermaid xychart-beta blocks, one per chart, appended to b (GitHub renders them). */
void lm_bench_chart_mermaid(lm_buf *b, const char *heading, const lm_bench_chart *c, size_t n);
/* The same charts as one SVG document. */
int lm_bench_chart_svg(const char *heading, const lm_bench_chart *c, size_t n, char **out);

#endif
