/* lume-metal: benchmarks as evidence records (docs/bench.md).
 *
 * lm_bench_run runs one workload in an enabled VM stock and shimmed, interleaved (stock, shimmed,
 * stock, ...) for a number of rounds, and writes an evidence folder: the environment
 * (metadata.md, metadata.json), every run's raw stdout and stderr, results.csv (the median of
 * llama-bench's samples_ts per test and arm, their ratio, and what llama.cpp's Metal backend
 * selected in each arm), README.md, and SHA256SUMS over all of it. lm_bench_compare reads such
 * folders back and sets them side by side with the published figures.
 */
#ifndef LUME_METAL_BENCH_H
#define LUME_METAL_BENCH_H

#include "common.h"

#include <stddef.h>

#include "context.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How the workload's stdout is read. */
typedef enum {
	LM_BENCH_PARSER_LLAMA_BENCH = 0, /* llama-bench -o json or -o jsonl: tests and samples_ts */
	LM_BENCH_PARSER_NONE             /* any program: wall-clock times and raw output only */
} lm_bench_parser;

#define LM_BENCH_ROUNDS_DEFAULT 3
#define LM_BENCH_ROUNDS_MAX 100

typedef struct {
	const char *vm;
	const char *const *argv;   /* the workload, as `run` takes it */
	size_t argc;
	int rounds;                /* 0: LM_BENCH_ROUNDS_DEFAULT */
	lm_bench_parser parser;
	const char *out_dir;       /* the evidence folder, created by the run (must not exist, or be
	                              empty); an absolute path or relative to the working directory */
	const char *profile;       /* the profile the caller asked for, to check against the VM's
	                              (NULL: whatever the VM was enabled with) */
	int bare_metal;            /* run the workload on this host itself, one arm ("host"), no VM
	                              (vm is ignored): the figure `bench compare` sets the unlocked
	                              runs against */
} lm_bench_options;

/* The results below follow the ABI rule of docs/embedding.md: allocated by the library and only
 * read by the caller, each starting with its size as the library was built (LM_HAS_FIELD), growing
 * only at its end, and reached through pointers (arrays of pointers), so that a field added later
 * never moves another. */

/* What llama.cpp's Metal backend selected, from its init lines on stderr (-1: not printed). */
typedef struct {
	size_t size;               /* sizeof(lm_bench_metal) in the library that filled it */
	int apple;                 /* highest MTLGPUFamilyAppleN: 1000 + N, e.g. 1005 */
	int common;                /* 3000 + N */
	int metal;                 /* 5000 + N; 0 when the line is absent (no Metal3) */
	int simdgroup_reduction, simdgroup_mm, bfloat, unified_memory;
	int found;                 /* any init line was read */
} lm_bench_metal;

/* One llama-bench test (pp512, tg128, pp512+tg128, with "@dN" for a depth), both arms. */
typedef struct {
	size_t size;               /* sizeof(lm_bench_test) in the library that filled it */
	char name[48];
	unsigned long long n_prompt, n_gen, n_depth;
	double stock_median, shimmed_median; /* tokens/s; 0 when the arm has no sample */
	double ratio;              /* shimmed / stock; 0 when either is missing */
	size_t stock_samples, shimmed_samples;
} lm_bench_test;

typedef struct {
	size_t size;               /* sizeof(lm_bench_result) in the library that filled it */
	char *dir;                 /* the evidence folder (absolute); NULL when none was made */
	char vm[128];
	int rounds;
	lm_bench_parser parser;
	size_t ntests;
	lm_bench_test **tests;     /* ntests pointers */
	lm_bench_metal *stock_metal, *shimmed_metal; /* never NULL */
	double *stock_seconds, *shimmed_seconds; /* wall clock per round (rounds entries each) */
	int *stock_exit, *shimmed_exit;          /* exit status per round */
	double seconds;            /* the whole run */
	char llama_build[96];      /* llama.cpp's build as llama-bench printed it: "b10167 (ee3d1b54c)";
	                              "" when not printed (or no llama-bench parser) */
	/* Four ints together: the struct ends without padding (cmake/LumeMetalAbi.cmake). */
	int kernel_choice_changed; /* the shimmed arm selected other kernels than the stock one */
	int bare_metal;            /* a run on the host itself: the "stock" fields hold the host arm */
	int ablation;              /* the run was the host-preference ablation: dir holds two records */
	int preference_needed;     /* ablation: 1 the kernels failed with the preference off and ran with
	                              it on, 0 they ran without it, -1 not told (an arm failed) */
} lm_bench_result;

/* Run the benchmark. Returns 0 when every run exited 0 and, with the llama-bench parser, its
 * output parsed. *out is set whether the run failed or not — as far as it got, and the folder then
 * holds what was recorded (with SHA256SUMS) or nothing when no run was made (dir NULL) —; it is
 * NULL only when the result itself could not be allocated. Free it with lm_bench_result_free(). */
LM_EXTERN(int) lm_bench_run(lm_context *ctx, const lm_bench_options *opts, lm_bench_result **out);
LM_EXTERN(void) lm_bench_result_free(lm_bench_result *result);

/* The host-preference ablation (docs/bench.md): the same run twice in one folder, with the host
 * preference off and on -- the VM restarted between them with the preference changed, the
 * exercise run in each -- and the preference put back exactly as it was at the end (also on
 * failure and when canceled), the VM then running at the level it had. The arm matching the
 * preference as found runs last, so that no restart is needed after it. opts as for
 * lm_bench_run (not bare_metal); the result is the last arm's, with ablation and
 * preference_needed set and dir the folder holding both (preference-off/, preference-on/). */
LM_EXTERN(int) lm_bench_run_ablation(lm_context *ctx, const lm_bench_options *opts, lm_bench_result **out);

/* bench compare: one row per test of each folder, then one per published figure. Numbers are 0
 * when there is none (the tool shows "-", JSON null). */
typedef enum {
	LM_BENCH_ROW_VM = 0,       /* a folder of a run in a VM, stock and shimmed */
	LM_BENCH_ROW_BARE_METAL,   /* a folder of a run on the host itself: its one arm is "stock" */
	LM_BENCH_ROW_PUBLISHED     /* a published figure, with its provenance */
} lm_bench_row_kind;

typedef struct {
	size_t size;               /* sizeof(lm_bench_comparison_row) in the library that filled it */
	lm_bench_row_kind kind;
	const char *source;        /* the folder as given, or "published" */
	const char *vm;            /* the folder's VM ("unknown" when not recorded), "bare metal" for a
	                              bare-metal folder, or the published workload */
	const char *host;          /* the host's model and chip as recorded */
	const char *test;          /* "pp512", "tg128", ... ; "wall" for a folder without a parser */
	const char *unit;          /* "t/s", or "s" (wall-clock seconds) */
	double stock;              /* the stock median (0 for a bare-metal row) */
	double unlocked;           /* the shimmed median */
	double unlocked_over_stock;
	double bare_metal;         /* the host arm's median: a bare-metal row's own, or, for another
	                              row, the set's bare-metal folder's for the same test */
	double unlocked_over_bare_metal;
	const char *provenance;    /* a published figure: where it is from; NULL for a folder */
	int proven;                /* 1: the folder's activation records prove both arms; 0: it has none
	                              (recorded before them, or published): "not proven by activation
	                              records"; -1: nothing to prove (bare metal) */
	const char *llama_build;   /* llama.cpp's build ("b10167 (ee3d1b54c)"); NULL when not recorded */
	const char *note;          /* what qualifies the row ("not proven by activation records",
	                              "published by Cua (trycua/cua)"); NULL when nothing does */
	const char *model;         /* the model: the file name of the workload's first -m (a folder),
	                              the published workload ("TinyLlama Q4_K_M"); NULL when not recorded */
} lm_bench_comparison_row;

typedef struct {
	size_t size;               /* sizeof(lm_bench_comparison) in the library that filled it */
	size_t count;
	lm_bench_comparison_row **rows; /* count pointers: each folder's tests in the order given, then
	                                   the published figures */
} lm_bench_comparison;

/* The folders (each read back from its metadata.json and raw files, checked against its
 * SHA256SUMS first) side by side, and the published figures. Free *out with
 * lm_bench_comparison_free(); NULL on failure. Text and JSON are the caller's to render
 * (lm_bench_compare_to_json). */
LM_EXTERN(int) lm_bench_compare(const char *const *dirs, size_t n, lm_bench_comparison **out);
LM_EXTERN(void) lm_bench_comparison_free(lm_bench_comparison *comparison);

/* The comparison as Markdown (bench compare --markdown; the Action's job summary embeds it): the
 * table, then per folder and test a bar chart of stock / unlocked / bare metal as a Mermaid
 * xychart-beta block. *out is the caller's to free(). */
LM_EXTERN(int) lm_bench_compare_markdown(const lm_bench_comparison *c, char **out);
/* The same charts as one SVG document, made here (bench compare --svg FILE), written to file
 * atomically (replacing it). */
LM_EXTERN(int) lm_bench_compare_svg(const lm_bench_comparison *c, const char *file);

/* The compatibility matrix (bench compare --matrix, docs/compatibility.md): one row per folder --
 * host chip, host macOS, guest macOS, VM manager -> whether the kernels ran, the pp and tg
 * speed-ups, whether the host preference was needed -- as a Markdown document. The folders are
 * named in it as given; when every one is under docs/evidence/ (the repository's own evidence),
 * the document is the repository's page: how it is generated and how to add a row. */
LM_EXTERN(int) lm_bench_matrix_markdown(const char *const *dirs, size_t n, char **out);

/* lume-metal report: one issue-ready block per evidence folder (docs/results-report.md). */
typedef enum {
	LM_BENCH_REPORT_MARKDOWN = 0,
	LM_BENCH_REPORT_JSON        /* the results document, lume-metal-results/1
	                               (docs/results-report.schema.json) */
} lm_bench_report_format;
LM_EXTERN(int) lm_bench_report(const char *const *dirs, size_t n, lm_bench_report_format format, char **out);
/* Pack an evidence folder as a gzip'd tar (GitHub attaches files, not folders), written atomically
 * to file; an existing file is refused (LM_EINVALID) unless overwrite. */
LM_EXTERN(int) lm_bench_archive(const char *dir, const char *file, int overwrite);

#ifdef __cplusplus
}
#endif
#endif
