/* Internal: the bench module's parts (and what its white-box tests reach).
 *
 *   llama_json.c   llama-bench's JSON and JSONL output (every variant in docs/bench.md)
 *   metal_init.c   llama.cpp's Metal init lines on stderr: what it selected
 *   stats.c        medians and ratios
 *   facts.c        the host's and the guest's environment for metadata
 *   record.c       the evidence folder's files and SHA256SUMS
 *   run.c          lm_bench_run: the interleaved rounds
 *   compare.c      lm_bench_compare and the published figures
 *   selftest.c     lm_selftest_run: the simulator's assumptions measured in a guest
 */
#ifndef LM_BENCH_INTERNAL_H
#define LM_BENCH_INTERNAL_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "lume-metal/bench.h"

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

/* ---- run.c / compare.c: a folder's results recomputed from its raw files ---- */

/* An empty result (its two Metal selections not printed), sizes set. */
int lm_bench_result_new(lm_bench_result **out);
/* A new test at the end of r->tests, named `name`, zeroed otherwise; NULL when out of memory. */
lm_bench_test *lm_bench_add_test(lm_bench_result *r, const char *name);

/* The tests of the raw llama-bench outputs `outs` (rounds of one arm each), medians per test. */
int lm_bench_collect(lm_bench_result *r, char *const *stock_out, char *const *shimmed_out, int rounds);
/* The Metal selection of each arm from its stderr files. */
void lm_bench_collect_metal(lm_bench_result *r, char *const *stock_err, char *const *shimmed_err, int rounds);

#endif
