/* llama-bench, the tests' stand-in: a Metal client on the fake Metal that asks the device what
 * llama.cpp's ggml_metal_device_init asks (the highest Apple, Common and Metal families, unified
 * memory, the working set), prints the same init lines on stderr, chooses its kernels by the same
 * rules (simdgroup reduction = Apple7 || Metal3, simdgroup mm = Apple7, bfloat = Metal3 || Apple6)
 * and prints llama-bench's -o json / -o jsonl output on stdout (docs/bench.md; field order of
 * llama-bench at 0104b151).
 *
 * Its speed is real, and depends on the answers as llama.cpp's does: with SIMD-group reduction it
 * builds the reduction pipeline on the device (the probe's exercise kernel, which the fake Metal
 * runs only at the unlocked host level — and a pipeline that does not build stops it, as it stops
 * llama.cpp) and dispatches it once per repetition; the CPU work per token is then a twelfth (pp)
 * or a sixteenth (tg) of the stock path's (Cua's published ratios: 11.08x and 16.36x). Without
 * reduction it does all the work on the CPU.
 *
 *   llama-bench -m MODEL [-p N[,N...]] [-n N[,N...]] [-pg PP,TG] [-r N] [-o json|jsonl|md]
 *               [--no-warmup] [any other llama-bench option with its value: accepted, recorded]
 *
 * The model file must exist (its size is model_size); exit 1 with llama-bench's message otherwise.
 */
#include "../../../guest/guest_runtime.h"
#include "../../../guest/probe/exercise.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define MAX_TESTS 16
#define MAX_REPS 100
/* CPU work per token on the stock path; a unit is one multiply-add of a small recurrence. */
#define UNITS_PER_PROMPT_TOKEN 24000u
#define UNITS_PER_GEN_TOKEN 240000u
#define FAST_PP_DIVISOR 12u
#define FAST_TG_DIVISOR 16u

typedef struct {
	unsigned n_prompt, n_gen;
} test_spec;

typedef struct {
	int apple, common, metal; /* highest supported, 0 none */
	int reduction, mm, bfloat, unified;
	unsigned long long working_set;
} device_answers;

static IMP imp_of(id obj, const char *name, SEL *sel)
{
	*sel = sel_registerName(name);
	return class_respondsToSelector(object_getClass(obj), *sel) ? class_getMethodImplementation(object_getClass(obj), *sel) : 0;
}

static int supports(id dev, long family)
{
	SEL sel;
	IMP imp = imp_of(dev, "supportsFamily:", &sel);

	return imp != 0 && ((unsigned char (*)(id, SEL, long))imp)(dev, sel, family);
}

static unsigned long long ask_u64(id dev, const char *name)
{
	SEL sel;
	IMP imp = imp_of(dev, name, &sel);

	return imp != 0 ? ((unsigned long long (*)(id, SEL))imp)(dev, sel) : 0;
}

/* ggml_metal_device_init: the same questions, the same lines. */
static void device_init(id dev, device_answers *a)
{
	int i;

	memset(a, 0, sizeof(*a));
	for (i = 1010; i >= 1001 && a->apple == 0; i--)
		if (supports(dev, i))
			a->apple = i;
	for (i = 3003; i >= 3001 && a->common == 0; i--)
		if (supports(dev, i))
			a->common = i;
	for (i = 5002; i >= 5001 && a->metal == 0; i--)
		if (supports(dev, i))
			a->metal = i;
	a->reduction = a->apple >= 1007 || a->metal >= 5001;
	a->mm = a->apple >= 1007;
	a->bfloat = a->metal >= 5001 || a->apple >= 1006;
	a->unified = ask_u64(dev, "hasUnifiedMemory") & 1;
	a->working_set = ask_u64(dev, "recommendedMaxWorkingSetSize");
	fprintf(stderr, "ggml_metal_device_init: GPU name:   MTL0\n");
	if (a->apple)
		fprintf(stderr, "ggml_metal_device_init: GPU family: MTLGPUFamilyApple%d  (%d)\n", a->apple - 1000, a->apple);
	if (a->common)
		fprintf(stderr, "ggml_metal_device_init: GPU family: MTLGPUFamilyCommon%d (%d)\n", a->common - 3000, a->common);
	if (a->metal)
		fprintf(stderr, "ggml_metal_device_init: GPU family: MTLGPUFamilyMetal%d  (%d)\n", a->metal - 5001 + 3, a->metal);
	fprintf(stderr, "ggml_metal_device_init: simdgroup reduction   = %s\n", a->reduction ? "true" : "false");
	fprintf(stderr, "ggml_metal_device_init: simdgroup matrix mul. = %s\n", a->mm ? "true" : "false");
	fprintf(stderr, "ggml_metal_device_init: has unified memory    = %s\n", a->unified ? "true" : "false");
	fprintf(stderr, "ggml_metal_device_init: has bfloat            = %s\n", a->bfloat ? "true" : "false");
	fprintf(stderr, "ggml_metal_device_init: has tensor            = false\n");
	fprintf(stderr, "ggml_metal_device_init: use residency sets    = false\n");
	fprintf(stderr, "ggml_metal_device_init: use shared buffers    = true\n");
	fprintf(stderr, "ggml_metal_device_init: recommendedMaxWorkingSetSize  = %8.2f MB\n",
	    (double)a->working_set / 1024.0 / 1024.0);
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

/* The CPU's share of the work: a recurrence the compiler cannot drop (volatile: every step is
 * done, none folded away). */
static void cpu_work(unsigned long long units)
{
	volatile float x = 1.0f;
	unsigned long long i;

	for (i = 0; i < units; i++)
		x = x * 0.999999f + 0.000001f;
}

/* One repetition of a test: its samples_ns. */
static int repetition(id dev, const device_answers *a, const test_spec *t, unsigned long long *ns)
{
	unsigned long long units = (unsigned long long)t->n_prompt * UNITS_PER_PROMPT_TOKEN /
	    (a->reduction ? FAST_PP_DIVISOR : 1) +
	    (unsigned long long)t->n_gen * UNITS_PER_GEN_TOKEN / (a->reduction ? FAST_TG_DIVISOR : 1);
	unsigned long long start = now_ns();
	lm_ex_outcome o;

	if (a->reduction) {
		lm_exercise_run(dev, "simdgroup_reduction", 5000, &o);
		if (o.result != LM_EX_PASS) {
			fprintf(stderr, "ggml_metal_op_encode: error: the reduction kernel failed: %s\n", o.message);
			return -1;
		}
	}
	cpu_work(units);
	*ns = now_ns() - start;
	if (*ns == 0)
		*ns = 1;
	return 0;
}

/* "512,1024" -> values; 0 on a bad list. */
static int parse_list(const char *s, unsigned *out, int max)
{
	int n = 0;
	char *end;

	while (*s != '\0' && n < max) {
		unsigned long v = strtoul(s, &end, 10);
		if (end == s || v > 1000000)
			return 0;
		out[n++] = (unsigned)v;
		s = *end == ',' ? end + 1 : end;
		if (*end != ',' && *end != '\0')
			return 0;
	}
	return n;
}

static void print_ts(FILE *f, double v)
{
	/* samples_ts through ostream: default precision, 6 significant digits */
	fprintf(f, "%.6g", v);
}

typedef struct {
	const char *model;
	long long model_size;
	const char *fmt;
	int reps, threads;
	int first;
} output;

static void print_record(output *out, const device_answers *a, const test_spec *t, const unsigned long long *ns,
    int reps)
{
	const int jsonl = strcmp(out->fmt, "jsonl") == 0;
	const char *sep = jsonl ? ", " : ",\n    ", *open = jsonl ? "{" : "  {\n    ";
	double ts[MAX_REPS], avg_ts = 0, sd_ts = 0, avg_ns = 0, sd_ns = 0;
	char when[32];
	time_t tt = time(NULL);
	struct tm tm;
	int i;

	for (i = 0; i < reps; i++) {
		ts[i] = (double)(t->n_prompt + t->n_gen) * 1e9 / (double)ns[i];
		avg_ts += ts[i] / reps;
		avg_ns += (double)ns[i] / reps;
	}
	for (i = 0; i < reps && reps > 1; i++) {
		sd_ts += (ts[i] - avg_ts) * (ts[i] - avg_ts) / (reps - 1);
		sd_ns += ((double)ns[i] - avg_ns) * ((double)ns[i] - avg_ns) / (reps - 1);
	}
	sd_ts = sqrt(sd_ts);
	sd_ns = sqrt(sd_ns);
	gmtime_r(&tt, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (!jsonl && !out->first)
		printf(",\n");
	out->first = 0;
	printf("%s\"build_commit\": \"0000000\"%s\"build_number\": 0%s", open, sep, sep);
	printf("\"cpu_info\": \"Accelerate, lume-metal stand-in (Virtual)\"%s\"gpu_info\": \"Apple Paravirtual device\"%s",
	    sep, sep);
	printf("\"backends\": \"MTL,BLAS\"%s\"model_filename\": \"%s\"%s\"model_type\": \"stand-in 1B Q4_K - Medium\"%s",
	    sep, out->model, sep, sep);
	printf("\"model_size\": %lld%s\"model_n_params\": 1100048384%s\"n_batch\": 2048%s\"n_ubatch\": 512%s",
	    out->model_size, sep, sep, sep, sep);
	printf("\"n_threads\": %d%s\"cpu_mask\": \"0x0\"%s\"cpu_strict\": false%s\"poll\": 50%s", out->threads, sep,
	    sep, sep, sep);
	printf("\"type_k\": \"f16\"%s\"type_v\": \"f16\"%s\"n_gpu_layers\": -1%s\"n_cpu_moe\": 0%s", sep, sep, sep, sep);
	printf("\"split_mode\": \"layer\"%s\"main_gpu\": 0%s\"no_kv_offload\": false%s\"flash_attn\": %d%s", sep, sep,
	    sep, a->mm ? -1 : 0, sep);
	printf("\"devices\": \"auto\"%s\"tensor_split\": \"0.00\"%s\"tensor_buft_overrides\": \"none\"%s", sep, sep, sep);
	printf("\"load_mode\": \"mmap\"%s\"embeddings\": false%s\"no_op_offload\": 0%s\"no_host\": false%s", sep, sep,
	    sep, sep);
	printf("\"fit_target\": 0%s\"fit_min_ctx\": 0%s", sep, sep);
	printf("\"n_prompt\": %u%s\"n_gen\": %u%s\"n_depth\": 0%s\"test_time\": \"%s\"%s", t->n_prompt, sep, t->n_gen,
	    sep, sep, when, sep);
	printf("\"avg_ns\": %llu%s\"stddev_ns\": %llu%s\"avg_ts\": %f%s\"stddev_ts\": %f%s",
	    (unsigned long long)avg_ns, sep, (unsigned long long)sd_ns, sep, avg_ts, sep, sd_ts, sep);
	printf("\"samples_ns\": [ ");
	for (i = 0; i < reps; i++)
		printf("%s%llu", i ? ", " : "", ns[i]);
	printf(" ],%s\"samples_ts\": [ ", jsonl ? "" : "\n    ");
	for (i = 0; i < reps; i++) {
		if (i)
			printf(", ");
		print_ts(stdout, ts[i]);
	}
	printf(" ]%s", jsonl ? "}\n" : "\n  }");
	fflush(stdout);
}

int main(int argc, char **argv)
{
	unsigned pp[MAX_TESTS] = {512}, tg[MAX_TESTS] = {128}, pg[2];
	int npp = 1, ntg = 1, npg = 0, warmup = 1, i, k, r;
	test_spec tests[3 * MAX_TESTS];
	int ntests = 0;
	output out = {NULL, 0, "md", 5, 8, 1};
	device_answers a;
	struct stat st;
	id dev;

	for (i = 1; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(o, "--no-warmup") == 0) {
			warmup = 0;
			continue;
		}
		if (v == NULL) {
			fprintf(stderr, "error: missing value for %s\n", o);
			return 1;
		}
		i++;
		if (strcmp(o, "-m") == 0 || strcmp(o, "--model") == 0)
			out.model = v;
		else if (strcmp(o, "-p") == 0 || strcmp(o, "--n-prompt") == 0)
			npp = parse_list(v, pp, MAX_TESTS);
		else if (strcmp(o, "-n") == 0 || strcmp(o, "--n-gen") == 0)
			ntg = parse_list(v, tg, MAX_TESTS);
		else if (strcmp(o, "-pg") == 0)
			npg = parse_list(v, pg, 2) == 2 ? 1 : -1;
		else if (strcmp(o, "-r") == 0 || strcmp(o, "--repetitions") == 0)
			out.reps = atoi(v);
		else if (strcmp(o, "-t") == 0 || strcmp(o, "--threads") == 0)
			out.threads = atoi(v);
		else if (strcmp(o, "-o") == 0 || strcmp(o, "--output") == 0)
			out.fmt = v;
		/* every other option of llama-bench takes a value and changes nothing here */
	}
	if (out.reps < 1 || out.reps > MAX_REPS || npg < 0 || (strcmp(out.fmt, "json") != 0 &&
	    strcmp(out.fmt, "jsonl") != 0 && strcmp(out.fmt, "md") != 0)) {
		fprintf(stderr, "error: invalid parameter (this stand-in prints -o json, jsonl or md)\n");
		return 1;
	}
	if (out.model == NULL)
		out.model = "models/7B/ggml-model-q4_0.gguf";
	for (k = 0; k < npp; k++)
		if (pp[k] != 0)
			tests[ntests++] = (test_spec){pp[k], 0};
	for (k = 0; k < ntg; k++)
		if (tg[k] != 0)
			tests[ntests++] = (test_spec){0, tg[k]};
	if (npg == 1)
		tests[ntests++] = (test_spec){pg[0], pg[1]};
	if ((dev = MTLCreateSystemDefaultDevice()) == 0) {
		fprintf(stderr, "ggml_metal_device_init: error: no Metal device\n");
		return 1;
	}
	device_init(dev, &a);
	if (stat(out.model, &st) != 0 || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "main: error: failed to load model '%s'\n", out.model);
		return 1;
	}
	out.model_size = (long long)st.st_size;
	if (strcmp(out.fmt, "json") == 0)
		printf("[\n");
	else if (strcmp(out.fmt, "md") == 0)
		printf("| model | test | t/s |\n| --- | ---: | ---: |\n");
	for (k = 0; k < ntests; k++) {
		unsigned long long ns[MAX_REPS];
		if (warmup && repetition(dev, &a, &tests[k], &ns[0]) < 0)
			return 1;
		for (r = 0; r < out.reps; r++)
			if (repetition(dev, &a, &tests[k], &ns[r]) < 0)
				return 1;
		if (strcmp(out.fmt, "md") == 0) {
			double total = 0;
			for (r = 0; r < out.reps; r++)
				total += (double)(tests[k].n_prompt + tests[k].n_gen) * 1e9 / (double)ns[r] / out.reps;
			printf("| stand-in | %s%u | %.2f |\n", tests[k].n_gen ? "tg" : "pp",
			    tests[k].n_gen ? tests[k].n_gen : tests[k].n_prompt, total);
		} else {
			print_record(&out, &a, &tests[k], ns, out.reps);
		}
	}
	if (strcmp(out.fmt, "json") == 0)
		printf("\n]\n");
	return 0;
}
