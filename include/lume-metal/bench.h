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

/* What llama.cpp's Metal backend selected, from its init lines on stderr (-1: not printed). */
typedef struct {
	int apple;                 /* highest MTLGPUFamilyAppleN: 1000 + N, e.g. 1005 */
	int common;                /* 3000 + N */
	int metal;                 /* 5000 + N; 0 when the line is absent (no Metal3) */
	int simdgroup_reduction, simdgroup_mm, bfloat, unified_memory;
	int found;                 /* any init line was read */
} lm_bench_metal;

/* One llama-bench test (pp512, tg128, pp512+tg128, with "@dN" for a depth), both arms. */
typedef struct {
	char name[48];
	unsigned long long n_prompt, n_gen, n_depth;
	double stock_median, shimmed_median; /* tokens/s; 0 when the arm has no sample */
	double ratio;              /* shimmed / stock; 0 when either is missing */
	size_t stock_samples, shimmed_samples;
} lm_bench_test;

typedef struct {
	char *dir;                 /* the evidence folder (absolute) */
	char vm[128];
	int rounds;
	lm_bench_parser parser;
	size_t ntests;
	lm_bench_test *tests;
	lm_bench_metal stock_metal, shimmed_metal;
	int kernel_choice_changed; /* the shimmed arm selected other kernels than the stock one */
	double *stock_seconds, *shimmed_seconds; /* wall clock per round (rounds entries each) */
	int *stock_exit, *shimmed_exit;          /* exit status per round */
	double seconds;            /* the whole run */
	int bare_metal;            /* a run on the host itself: the "stock" fields hold the host arm */
} lm_bench_result;

/* Run the benchmark. Returns 0 when every run exited 0 and, with the llama-bench parser, its
 * output parsed; *result is filled (zeroed first) even on failure, as far as it got, and the
 * folder then holds what was recorded (with SHA256SUMS) or nothing when no run was made. */
LM_EXTERN(int) lm_bench_run(lm_context *ctx, const lm_bench_options *opts, lm_bench_result *result);
LM_EXTERN(void) lm_bench_result_dispose(lm_bench_result *result);

/* bench compare: the folders (each read back from its metadata.json and raw files, checked
 * against its SHA256SUMS) side by side, then the published figures with their provenance, as
 * text (*text) and as a JSON array of rows (*json, may be NULL). Free both with lm_free(). */
LM_EXTERN(int) lm_bench_compare(const char *const *dirs, size_t n, char **text, char **json);

#ifdef __cplusplus
}
#endif
#endif
