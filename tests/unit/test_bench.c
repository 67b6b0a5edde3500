/* bench (host/lib/bench): llama-bench's output in every variant docs/bench.md lists, llama.cpp's
 * Metal init lines, medians and ratios, the evidence folder's SHA256SUMS, compare's rows, and the
 * JSON documents.
 * The whole command runs in tests/e2e/bench.sh. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "bench_internal.h"
#include "lume-metal/output.h"
#include "lm_test.h"

/* llama-bench -o json at 0104b151 (b10167 / b10359): the published evidence's field set. */
static const char current_json[] =
    "[\n"
    "  {\n"
    "    \"build_commit\": \"ee3d1b54c\",\n    \"build_number\": 10167,\n"
    "    \"cpu_info\": \"Accelerate, Apple M1 Ultra (Virtual)\",\n    \"gpu_info\": \"Apple Paravirtual device\",\n"
    "    \"backends\": \"MTL,BLAS\",\n    \"model_filename\": \"tinyllama-1.1b-chat-v1.0.Q4_K_M.gguf\",\n"
    "    \"model_type\": \"llama 1B Q4_K - Medium\",\n    \"model_size\": 667815936,\n"
    "    \"model_n_params\": 1100048384,\n    \"n_batch\": 2048,\n    \"n_ubatch\": 512,\n    \"n_threads\": 8,\n"
    "    \"cpu_mask\": \"0x0\",\n    \"cpu_strict\": false,\n    \"poll\": 50,\n    \"type_k\": \"f16\",\n"
    "    \"type_v\": \"f16\",\n    \"n_gpu_layers\": -1,\n    \"n_cpu_moe\": 0,\n    \"split_mode\": \"layer\",\n"
    "    \"main_gpu\": 0,\n    \"no_kv_offload\": false,\n    \"flash_attn\": -1,\n    \"devices\": \"auto\",\n"
    "    \"tensor_split\": \"0.00\",\n    \"tensor_buft_overrides\": \"none\",\n    \"load_mode\": \"mmap\",\n"
    "    \"embeddings\": false,\n    \"no_op_offload\": 0,\n    \"no_host\": false,\n    \"fit_target\": 0,\n"
    "    \"fit_min_ctx\": 0,\n    \"n_prompt\": 512,\n    \"n_gen\": 0,\n    \"n_depth\": 0,\n"
    "    \"test_time\": \"2026-08-09T10:00:00Z\",\n    \"avg_ns\": 106953125,\n    \"stddev_ns\": 12000,\n"
    "    \"avg_ts\": 4786.700000,\n    \"stddev_ts\": 0.700000,\n"
    "    \"samples_ns\": [ 106975000, 106950000, 106930000 ],\n"
    "    \"samples_ts\": [ 4786, 4787.4, 4786.7 ]\n"
    "  },\n"
    "  {\n"
    "    \"build_commit\": \"ee3d1b54c\",\n    \"n_prompt\": 0,\n    \"n_gen\": 128,\n    \"n_depth\": 0,\n"
    "    \"flash_attn\": 1,\n    \"load_mode\": \"mmap\",\n"
    "    \"samples_ns\": [ 619554000, 620000000 ],\n    \"samples_ts\": [ 206.6, 206.45 ]\n"
    "  }\n"
    "]\n";

/* The older schema (050fc7f): use_mmap instead of load_mode, flash_attn a bool, no fit_*. */
static const char old_json[] =
    "[\n  {\n    \"build_commit\": \"050fc7f\",\n    \"gpu_info\": \"Apple Paravirtual device\",\n"
    "    \"flash_attn\": true,\n    \"use_mmap\": false,\n    \"n_prompt\": 512,\n    \"n_gen\": 0,\n"
    "    \"n_depth\": 0,\n    \"samples_ns\": [ 1185000000 ],\n    \"samples_ts\": [ 431.86 ]\n  }\n]\n";

/* -o jsonl: one object per line; the second also without n_depth and samples_ts (from samples_ns). */
static const char jsonl[] =
    "{\"build_commit\": \"ee3d1b54c\", \"flash_attn\": 0, \"n_prompt\": 512, \"n_gen\": 0, \"n_depth\": 512, "
    "\"samples_ns\": [ 100000000 ],\"samples_ts\": [ 5120 ]}\n"
    "\n"
    "{\"n_prompt\": 0, \"n_gen\": 128, \"samples_ns\": [ 1000000000, 500000000 ]}\n";

/* Only avg_ts (a build that printed no samples), and a pp+tg test. */
static const char avg_only[] = "[{\"n_prompt\": 512, \"n_gen\": 128, \"avg_ts\": 99.5, \"unknown_key\": {\"x\": 1}}]";

static void test_llama_current(void **state)
{
	lm_llama_output o;
	char name[48];

	(void)state;
	lm_assert_ok(lm_llama_parse(current_json, strlen(current_json), &o));
	assert_int_equal(o.count, 2);
	assert_int_equal(o.records[0].n_prompt, 512);
	assert_int_equal(o.records[0].nsamples, 3);
	assert_true(o.records[0].samples_ts[1] == 4787.4);
	assert_int_equal(o.records[0].flash_attn, -1);
	assert_string_equal(o.records[0].load_mode, "mmap");
	assert_string_equal(o.records[0].gpu_info, "Apple Paravirtual device");
	assert_string_equal(o.records[0].backends, "MTL,BLAS");
	assert_int_equal(o.records[1].n_gen, 128);
	assert_int_equal(o.records[1].flash_attn, 1);
	lm_llama_record_name(&o.records[1], name, sizeof(name));
	assert_string_equal(name, "tg128");
	lm_llama_output_dispose(&o);
}

static void test_llama_old_schema(void **state)
{
	lm_llama_output o;

	(void)state;
	lm_assert_ok(lm_llama_parse(old_json, strlen(old_json), &o));
	assert_int_equal(o.count, 1);
	assert_int_equal(o.records[0].flash_attn, 1);
	assert_string_equal(o.records[0].load_mode, "none");
	assert_true(o.records[0].samples_ts[0] == 431.86);
	lm_llama_output_dispose(&o);
}

static void test_llama_jsonl_and_missing(void **state)
{
	lm_llama_output o;
	char name[48];

	(void)state;
	lm_assert_ok(lm_llama_parse(jsonl, strlen(jsonl), &o));
	assert_int_equal(o.count, 2);
	assert_int_equal(o.records[0].flash_attn, 0);
	lm_llama_record_name(&o.records[0], name, sizeof(name));
	assert_string_equal(name, "pp512@d512");
	assert_string_equal(o.records[1].load_mode, "");
	assert_int_equal(o.records[1].n_depth, 0);
	assert_int_equal(o.records[1].nsamples, 2);
	assert_true(o.records[1].samples_ts[0] == 128.0 && o.records[1].samples_ts[1] == 256.0);
	lm_llama_output_dispose(&o);

	lm_assert_ok(lm_llama_parse(avg_only, strlen(avg_only), &o));
	assert_int_equal(o.records[0].nsamples, 1);
	assert_true(o.records[0].samples_ts[0] == 99.5);
	lm_llama_record_name(&o.records[0], name, sizeof(name));
	assert_string_equal(name, "pp512+tg128");
	lm_llama_output_dispose(&o);
}

static void test_llama_refused(void **state)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{"", "empty"},
		{"| model | test | t/s |\n", "not a JSON object"},
		{"[\n  {\n    \"n_prompt\": 512,\n", "not a JSON array"},
		{"[{\"n_gen\": 128}]", "no \"n_prompt\""},
		{"[{\"n_prompt\": -1, \"n_gen\": 0}]", "n_prompt"},
		{"[{\"n_prompt\": 1, \"n_gen\": 0, \"samples_ts\": [ 1, \"x\" ]}]", "samples_ts[1]"},
		{"[{\"n_prompt\": 1, \"n_gen\": 0, \"samples_ts\": [ 0 ]}]", "positive"},
		{"[]", "no test records"},
		{"[1]", "expected an object"},
		{"{\"n_prompt\": 1, \"n_gen\": 0}\nnot json\n", "line 2"},
	};
	lm_llama_output o;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (lm_llama_parse(cases[i].text, strlen(cases[i].text), &o) != LM_EINVALID)
			fail_msg("case %zu accepted", i);
		if (strstr(lm_error_last()->message, cases[i].want) == NULL)
			fail_msg("case %zu: '%s' lacks '%s'", i, lm_error_last()->message, cases[i].want);
		assert_null(o.records);
	}
}

/* ggml_metal_device_init's lines as the published evidence's *.stderr show them. */
static const char stock_err[] =
    "ggml_metal_device_init: GPU name:   MTL0\n"
    "ggml_metal_device_init: GPU family: MTLGPUFamilyApple5  (1005)\n"
    "ggml_metal_device_init: GPU family: MTLGPUFamilyCommon3 (3003)\n"
    "ggml_metal_device_init: simdgroup reduction   = false\n"
    "ggml_metal_device_init: simdgroup matrix mul. = false\n"
    "ggml_metal_device_init: has unified memory    = true\n"
    "ggml_metal_device_init: has bfloat            = false\n"
    "ggml_metal_device_init: has tensor            = false\n"
    "ggml_metal_device_init: recommendedMaxWorkingSetSize  = 10922.67 MB\n";
static const char shimmed_err[] =
    "[LumeMetalCapabilities] Enabled for llama-bench (appleFamilyMax=1009 maxThreadgroupMemory=65536)\n"
    "ggml_metal_device_init: GPU name:   MTL0 (Apple Paravirtual device)\n"
    "ggml_metal_device_init: GPU family: MTLGPUFamilyApple9  (1009)\n"
    "ggml_metal_device_init: GPU family: MTLGPUFamilyCommon3 (3003)\n"
    "ggml_metal_device_init: simdgroup reduction   = true\n"
    "ggml_metal_device_init: simdgroup matrix mul. = true\n"
    "ggml_metal_device_init: has bfloat            = true\n";
static const char host_err[] =
    "ggml_metal_init: GPU family: MTLGPUFamilyApple7  (1007)\n"
    "ggml_metal_init: GPU family: MTLGPUFamilyCommon3 (3003)\n"
    "ggml_metal_init: GPU family: MTLGPUFamilyMetal4  (5002)\n"
    "ggml_metal_init: simdgroup reduction   = true\n"
    "ggml_metal_init: simdgroup matrix mul. = true\n"
    "ggml_metal_init: has bfloat            = true\n";

static void test_metal_init_lines(void **state)
{
	lm_bench_metal s, h, b, none;
	char fam[96];

	(void)state;
	lm_bench_metal_parse(stock_err, &s);
	lm_bench_metal_parse(shimmed_err, &h);
	lm_bench_metal_parse(host_err, &b);
	lm_bench_metal_parse("warming up\nno metal here\n", &none);
	assert_true(s.found && s.apple == 1005 && s.common == 3003 && s.metal == 0);
	assert_true(s.simdgroup_reduction == 0 && s.simdgroup_mm == 0 && s.bfloat == 0 && s.unified_memory == 1);
	assert_true(h.apple == 1009 && h.simdgroup_reduction == 1 && h.simdgroup_mm == 1 && h.bfloat == 1);
	assert_int_equal(h.unified_memory, -1);
	assert_true(b.apple == 1007 && b.metal == 5002);
	assert_false(none.found);
	assert_int_equal(none.apple, -1);
	lm_bench_metal_family(&s, fam, sizeof(fam));
	assert_string_equal(fam, "Apple5 (1005) Common3 (3003)");
	lm_bench_metal_family(&b, fam, sizeof(fam));
	assert_string_equal(fam, "Apple7 (1007) Common3 (3003) Metal4 (5002)");
	lm_bench_metal_family(&none, fam, sizeof(fam));
	assert_string_equal(fam, "not printed");
	assert_true(lm_bench_metal_differs(&s, &h));
	assert_false(lm_bench_metal_differs(&h, &b));
	assert_string_equal(lm_bench_flag(-1), "");
	assert_string_equal(lm_bench_flag(1), "true");
}

static void test_median_ratio(void **state)
{
	double odd[] = {3, 1, 2}, even[] = {4, 1, 3, 2}, one[] = {7};

	(void)state;
	assert_true(lm_bench_median(odd, 3) == 2);
	assert_true(lm_bench_median(even, 4) == 2.5);
	assert_true(lm_bench_median(one, 1) == 7);
	assert_true(lm_bench_median(NULL, 0) == 0);
	assert_true(lm_bench_ratio(4786.7, 431.86) > 11.08 && lm_bench_ratio(4786.7, 431.86) < 11.09);
	assert_true(lm_bench_ratio(1, 0) == 0 && lm_bench_ratio(0, 1) == 0);
}

/* Two rounds per arm: medians over every sample of every round; tests in the order printed. */
static void test_collect(void **state)
{
	char *stock[2] = {(char *)old_json, (char *)current_json};
	char *shimmed[2] = {(char *)current_json, (char *)current_json};
	char *errs_s[2] = {NULL, (char *)stock_err}, *errs_h[2] = {(char *)shimmed_err, NULL};
	lm_bench_result *r = NULL;

	(void)state;
	lm_assert_ok(lm_bench_result_new(&r));
	assert_true(r->size == sizeof(*r) && r->stock_metal->size == sizeof(lm_bench_metal));
	lm_assert_ok(lm_bench_collect(r, stock, shimmed, 2));
	assert_int_equal(r->ntests, 2);
	assert_int_equal(r->tests[0]->size, sizeof(lm_bench_test));
	assert_string_equal(r->tests[0]->name, "pp512");
	assert_string_equal(r->tests[1]->name, "tg128");
	assert_int_equal(r->tests[0]->stock_samples, 4);   /* 431.86, 4786, 4787.4, 4786.7 */
	assert_true(r->tests[0]->stock_median == (4786 + 4786.7) / 2);
	assert_int_equal(r->tests[0]->shimmed_samples, 6);
	assert_true(r->tests[1]->stock_samples == 2 && r->tests[1]->shimmed_samples == 4);
	assert_true(r->tests[1]->ratio > 0.99 && r->tests[1]->ratio < 1.01);
	assert_true(LM_HAS_FIELD(r->tests[1], lm_bench_test, shimmed_samples));
	lm_bench_collect_metal(r, errs_s, errs_h, 2);
	assert_int_equal(r->stock_metal->apple, 1005);
	assert_int_equal(r->shimmed_metal->apple, 1009);
	assert_true(r->kernel_choice_changed);
	lm_bench_result_free(r);
}

static void test_sums(void **state)
{
	char dir[] = "/tmp/lm-test-bench.XXXXXX", path[256], line[256];
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	lm_assert_ok(lm_bench_write_file(dir, "stock-1.json", current_json, strlen(current_json)));
	lm_assert_ok(lm_bench_write_file(dir, "b.txt", "abc", 3));
	lm_assert_ok(lm_bench_write_sums(dir));
	snprintf(path, sizeof(path), "%s/SHA256SUMS", dir);
	assert_non_null(f = fopen(path, "r"));
	assert_non_null(fgets(line, sizeof(line), f));
	/* sha256sum -c's format: hash, two spaces, name; sorted; SHA256SUMS itself not listed */
	assert_string_equal(line, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  b.txt\n");
	assert_non_null(fgets(line, sizeof(line), f));
	assert_null(fgets(line, sizeof(line), f));
	fclose(f);
	lm_assert_ok(lm_bench_verify_sums(dir));
	lm_assert_ok(lm_bench_write_file(dir, "b.txt", "abd", 3));
	lm_assert_fails(lm_bench_verify_sums(dir), LM_ECORRUPT);
	lm_assert_error_has("b.txt: SHA-256 differs");
	snprintf(path, sizeof(path), "%s/b.txt", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/stock-1.json", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/SHA256SUMS", dir);
	unlink(path);
	rmdir(dir);
}

/* The document: every test, both arms' selection, and null where nothing was printed. */
static void test_json_document(void **state)
{
	lm_bench_test t = {sizeof(t), "pp512", 512, 0, 0, 431.86, 4786.7, 11.08, 10, 10}, *tp = &t;
	lm_bench_metal sm = {sizeof(sm), 0, 0, 0, 0, 0, 0, 0, 0}, hm = sm;
	double ss[2] = {1.5, 1.6}, hs[2] = {0.2, 0.3};
	int se[2] = {0, 0}, he[2] = {0, 1};
	lm_bench_result r;
	lm_json_envelope env = {"bench", 0, 0, 0, NULL, NULL};
	char *doc = NULL;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	snprintf(r.vm, sizeof(r.vm), "vm1");
	r.rounds = 2;
	r.ntests = 1;
	r.tests = &tp;
	r.stock_seconds = ss;
	r.shimmed_seconds = hs;
	r.stock_exit = se;
	r.shimmed_exit = he;
	r.stock_metal = &sm;
	r.shimmed_metal = &hm;
	lm_bench_metal_parse(stock_err, r.stock_metal);
	lm_bench_metal_parse(NULL, r.shimmed_metal);
	lm_assert_ok(lm_bench_result_to_json(&r, &env, &doc));
	lm_assert_contains(doc, "\"command\":\t\"bench\"");
	lm_assert_contains(doc, "\"folder\":\tnull");
	lm_assert_contains(doc, "\"ratio\":\t11.08");
	lm_assert_contains(doc, "\"apple\":\t1005");
	lm_assert_contains(doc, "\"shimmed_metal\":\tnull");
	lm_assert_contains(doc, "\"metal\":\tnull");
	lm_free(doc);
}

/* A flat folder and its files. */
static void remove_folder(const char *dir)
{
	char path[512];
	struct dirent *e;
	DIR *d = opendir(dir);

	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		assert_int_equal(unlink(path), 0);
	}
	closedir(d);
	assert_int_equal(rmdir(dir), 0);
}

/* The shimmed run's activation record: llama-bench asked Apple9 and got it (docs/activation-format.md). */
static const char activation_record[] =
    "{\"format\": \"lume-metal-activation/1\", \"pid\": 4242, \"ppid\": 4200, \"exe\": \"/usr/local/bin/llama-bench\", "
    "\"arch\": \"arm64\", \"shim_version\": \"0.1.0\", \"written\": \"exit\", \"sequence\": 3, \"incomplete\": false, "
    "\"profile\": {\"active\": true, \"why_stock\": null, \"apple_family_max\": 1009, \"max_threadgroup_memory\": 65536, "
    "\"recommended_working_set_size\": null}, \"hooks\": {\"init_gpu_family_support\": {\"installed\": true, "
    "\"why_not\": null}, \"device_classes\": [{\"class\": \"AGXG13GDevice\", \"installed\": true, \"why_not\": null, "
    "\"device\": \"Apple Paravirtual device\"}]}, \"questions\": [{\"device_class\": 0, \"family\": 1009, "
    "\"stock\": false, \"given\": true}], \"threadgroup_memory_reads\": [], \"children\": {\"inherit\": false, "
    "\"variable\": \"DYLD_INSERT_LIBRARIES\", \"setting\": null, \"why\": \"LUME_METAL_INHERIT not set\", "
    "\"host_reason\": null}}\n";

/* An evidence folder of one round: metadata.json, the raw outputs, a VM folder's activation
 * records (shimmed: `shimmed_records`, the one above or none), SHA256SUMS. */
static void write_folder_records(const char *dir, const char *kind, const char *stock_out, const char *shimmed_out,
    const char *shimmed_records)
{
	char meta[2048], run[512] = "";
	const int vm = shimmed_out != NULL;

	if (vm)
		snprintf(run, sizeof(run), ", {\"arm\": \"shimmed\", \"round\": 1, \"seconds\": 0.5, \"stdout\": "
		    "\"shimmed-1.json\", \"stderr\": \"shimmed-1.stderr\", \"activation\": {\"records\": [%s], \"took\": 1}}",
		    shimmed_records);
	snprintf(meta, sizeof(meta), "{\"record\": \"lume-metal bench 1\", %s\"vm\": {\"name\": \"vm1\"}, "
	    "\"host\": {\"model\": \"Mac14,13\", \"chip\": \"Apple M2 Max\"}, \"workload\": {\"parser\": "
	    "\"llama-bench\"}, %s\"protocol\": {\"rounds\": 1}, \"runs\": [{\"arm\": \"stock\", \"round\": 1, "
	    "\"seconds\": 1.5, \"stdout\": \"stock-1.json\", \"stderr\": \"stock-1.stderr\"%s}%s]}\n",
	    kind, vm ? "\"activation\": {\"format\": \"lume-metal-activation/1\"}, " : "",
	    vm ? ", \"activation\": {\"records\": [], \"took\": 0}" : "", run);
	lm_assert_ok(lm_bench_write_file(dir, "metadata.json", meta, strlen(meta)));
	if (vm && shimmed_records[0] != '\0')
		lm_assert_ok(lm_bench_write_file(dir, "shimmed-1.activation.4242.json", activation_record,
		    strlen(activation_record)));
	lm_assert_ok(lm_bench_write_file(dir, "stock-1.json", stock_out, strlen(stock_out)));
	lm_assert_ok(lm_bench_write_file(dir, "stock-1.stderr", stock_err, strlen(stock_err)));
	if (shimmed_out != NULL) {
		lm_assert_ok(lm_bench_write_file(dir, "shimmed-1.json", shimmed_out, strlen(shimmed_out)));
		lm_assert_ok(lm_bench_write_file(dir, "shimmed-1.stderr", shimmed_err, strlen(shimmed_err)));
	}
	lm_assert_ok(lm_bench_write_sums(dir));
}

static void write_folder(const char *dir, const char *kind, const char *stock_out, const char *shimmed_out)
{
	write_folder_records(dir, kind, stock_out, shimmed_out, "\"shimmed-1.activation.4242.json\"");
}

/* compare's typed rows: each folder's tests, set against the bare-metal folder, then the published
 * figures with their provenance; the document has null where a row has no figure. */
static void test_compare_rows(void **state)
{
	char vm_dir[] = "/tmp/lm-test-compare-vm.XXXXXX", bare_dir[] = "/tmp/lm-test-compare-bare.XXXXXX";
	const char *dirs[] = {vm_dir, bare_dir};
	lm_json_envelope env = {"bench compare", 0, 0, 0, NULL, NULL};
	lm_bench_comparison *c = NULL, before;
	const lm_bench_comparison_row *r;
	char *doc = NULL, *at;
	size_t i, provenances = 0;

	(void)state;
	assert_non_null(mkdtemp(vm_dir));
	assert_non_null(mkdtemp(bare_dir));
	write_folder(vm_dir, "", old_json, current_json);
	write_folder(bare_dir, "\"kind\": \"bare-metal\", ", current_json, NULL);
	lm_assert_ok(lm_bench_compare(dirs, 2, &c));
	assert_true(c->size == sizeof(*c) && c->count == 8);
	for (i = 0; i < c->count; i++)
		assert_int_equal(c->rows[i]->size, sizeof(lm_bench_comparison_row));
	r = c->rows[0]; /* pp512: stock 431.86 here, unlocked 4786.7, bare metal 4786.7 */
	assert_int_equal(r->kind, LM_BENCH_ROW_VM);
	assert_string_equal(r->source, vm_dir);
	assert_string_equal(r->host, "Mac14,13 Apple M2 Max");
	assert_true(strcmp(r->test, "pp512") == 0 && strcmp(r->unit, "t/s") == 0 && r->provenance == NULL);
	assert_true(r->stock == 431.86 && r->unlocked == 4786.7 && r->bare_metal == 4786.7);
	assert_true(r->unlocked_over_stock > 11.08 && r->unlocked_over_stock < 11.09 && r->unlocked_over_bare_metal == 1);
	r = c->rows[1]; /* tg128: no stock sample */
	assert_true(strcmp(r->test, "tg128") == 0 && r->stock == 0 && r->unlocked_over_stock == 0);
	assert_true(r->unlocked == (206.6 + 206.45) / 2 && r->bare_metal == r->unlocked);
	r = c->rows[2];
	assert_true(r->kind == LM_BENCH_ROW_BARE_METAL && strcmp(r->source, bare_dir) == 0);
	/* A bare-metal row: "bare metal", not an unknown VM, its figure under bare metal, not stock. */
	assert_true(r->stock == 0 && r->unlocked == 0 && r->bare_metal == 4786.7);
	assert_string_equal(r->vm, "bare metal");
	assert_string_equal(c->rows[4]->model, "TinyLlama Q4_K_M");
	for (i = 4; i < 8; i++) {
		assert_int_equal(c->rows[i]->kind, LM_BENCH_ROW_PUBLISHED);
		assert_string_equal(c->rows[i]->source, "published");
		assert_non_null(strstr(c->rows[i]->provenance, "trycua/cua evidence/"));
	}
	/* Complete: Gemma 4 beside TinyLlama, the bare-metal figures, the build, what proves them. */
	assert_true(c->rows[4]->stock == 431.86 && c->rows[4]->bare_metal == 4871.99);
	assert_true(c->rows[6]->stock == 71.66 && c->rows[6]->unlocked == 515.76 && c->rows[6]->unlocked_over_stock == 7.20);
	assert_true(c->rows[7]->stock == 3.41 && c->rows[7]->unlocked == 49.67 && c->rows[7]->bare_metal == 52.38);
	assert_true(c->rows[7]->unlocked_over_bare_metal > 0.948 && c->rows[7]->unlocked_over_bare_metal < 0.949);
	assert_true(c->rows[7]->proven == 0 && strcmp(c->rows[7]->llama_build, "b10167") == 0);
	assert_non_null(strstr(c->rows[7]->note, "not proven by activation records"));
	assert_true(c->rows[0]->proven == 1 && c->rows[0]->note == NULL && c->rows[2]->proven == -1);
	assert_true(LM_HAS_FIELD(c->rows[7], lm_bench_comparison_row, provenance));

	lm_assert_ok(lm_bench_compare_to_json(c, &env, &doc));
	for (at = doc; (at = strstr(at, "\"provenance\":")) != NULL; at++)
		provenances++;
	assert_int_equal(provenances, 4);
	assert_non_null(strstr(doc, "\"unlocked\":\tnull"));
	assert_non_null(strstr(doc, "\"unlocked_over_bare_metal\":\t1,\n"));
	assert_non_null(strstr(doc, "\"proven_by_activation_records\":\tfalse,\n\t\t\t\"llama_build\":\t\"b10167\""));
	lm_free(doc);
	lm_bench_comparison_free(c);

	/* A VM folder whose shimmed run has no activation record: refused, naming the run. */
	remove_folder(vm_dir);
	assert_int_equal(mkdir(vm_dir, 0700), 0);
	write_folder_records(vm_dir, "", old_json, current_json, "");
	c = &before;
	lm_assert_fails(lm_bench_compare(dirs, 2, &c), LM_EINVALID);
	lm_assert_error_has("the shimmed run of round 1 has no activation: no process of the workload loaded the shim");
	assert_null(c);

	/* The shim took but widened nothing (asked Apple9, the device said yes itself): refused too. */
	remove_folder(vm_dir);
	assert_int_equal(mkdir(vm_dir, 0700), 0);
	write_folder_records(vm_dir, "", old_json, current_json, "\"shimmed-1.activation.4242.json\"");
	{
		char *text = strdup(activation_record), *hit = strstr(text, "\"stock\": false, \"given\": true");
		assert_non_null(hit);
		memcpy(hit, "\"stock\": true,  \"given\": true", strlen("\"stock\": true,  \"given\": true"));
		lm_assert_ok(lm_bench_write_file(vm_dir, "shimmed-1.activation.4242.json", text, strlen(text)));
		lm_assert_ok(lm_bench_write_sums(vm_dir));
		free(text);
	}
	c = &before;
	lm_assert_fails(lm_bench_compare(dirs, 2, &c), LM_EINVALID);
	lm_assert_error_has("processes loaded the shim but none had an answer widened");

	/* A folder from before activation records (as Cua's runs): shown, not proven by them. */
	remove_folder(vm_dir);
	assert_int_equal(mkdir(vm_dir, 0700), 0);
	write_folder(vm_dir, "", old_json, current_json);
	{
		char meta[1024];
		snprintf(meta, sizeof(meta), "{\"record\": \"lume-metal bench 1\", \"vm\": {\"name\": \"vm1\"}, \"workload\": "
		    "{\"parser\": \"llama-bench\"}, \"protocol\": {\"rounds\": 1}, \"runs\": [{\"arm\": \"stock\", \"round\": 1, "
		    "\"stdout\": \"stock-1.json\", \"stderr\": \"stock-1.stderr\"}, {\"arm\": \"shimmed\", \"round\": 1, "
		    "\"stdout\": \"shimmed-1.json\", \"stderr\": \"shimmed-1.stderr\"}]}\n");
		lm_assert_ok(lm_bench_write_file(vm_dir, "metadata.json", meta, strlen(meta)));
		lm_assert_ok(lm_bench_write_sums(vm_dir));
	}
	lm_assert_ok(lm_bench_compare(dirs, 1, &c));
	assert_true(c->rows[0]->proven == 0 && strcmp(c->rows[0]->note, "not proven by activation records") == 0);
	assert_true(c->rows[0]->unlocked == 4786.7);
	lm_bench_comparison_free(c);

	/* A folder that is not one: an error, no result. */
	c = &before;
	dirs[1] = "/nonexistent";
	assert_true(lm_bench_compare(dirs, 2, &c) < 0);
	assert_null(c);
	assert_int_equal(lm_bench_compare(dirs, 0, &c), LM_EINVALID);
	remove_folder(vm_dir);
	remove_folder(bare_dir);
}

/* The charts: a Mermaid block per test with the bars there are, the value axis from 0, each arm a
 * series of its own in its colour, the figures and the speed-up written; the SVG a grid with an
 * axis from 0, one scale per metric, its text escaped. */
static void test_charts(void **state)
{
	const lm_bench_chart c[4] = {
		{"pp512", "t/s", {"stock", "shimmed", "bare metal"}, {431.86, 4786.7, 0}, NULL},
		{"a \"<&>\" b", "s", {"stock", "shimmed", "bare metal"}, {2, 1, 3}, NULL},
		{"other pp512", "t/s", {"stock", "unlocked", "bare metal"}, {71.66, 515.76, 517.88}, "pp512"},
		{"host pp512", "t/s", {"stock", "unlocked", "bare metal"}, {0, 0, 4871.99}, "pp512"},
	};
	char *text = NULL, *svg = NULL;
	double step;
	lm_buf b;

	(void)state;
	lm_buf_init(&b, 1 << 20);
	lm_bench_chart_mermaid(&b, "vm1", c, 4);
	lm_assert_ok(lm_buf_take(&b, &text, NULL));
	assert_non_null(strstr(text, "```mermaid\n%%{init: {\"xyChart\": {\"width\": 800, \"titleFontSize\": 16}, "
	    "\"themeVariables\": {\"xyChart\": {\"plotColorPalette\": \"#9e9e9e, #2e7d32\"}}}}%%\nxychart-beta\n"
	    "    title \"vm1 pp512: 11.08× unlocked / stock\"\n"
	    "    x-axis [\"stock 431.86\", \"shimmed 4786.70\"]\n"
	    "    y-axis \"t/s, higher is faster\" 0 --> 6000\n"
	    "    bar [431.86, -6000]\n    bar [-6000, 4786.70]\n```\n"));
	/* Seconds: lower is faster, the speed-up is stock / shimmed. */
	assert_non_null(strstr(text, "title \"vm1 a '<&>' b: 2.00× unlocked / stock\"\n"));
	assert_non_null(strstr(text, "    y-axis \"s, lower is faster\" 0 --> 4\n"
	    "    bar [2.00, -4, -4]\n    bar [-4, 1.00, -4]\n    bar [-4, -4, 3.00]\n"));
	/* A bare-metal bar alone keeps bare metal's colour. */
	assert_non_null(strstr(text, "\"plotColorPalette\": \"#1565c0\"}}}}%%\nxychart-beta\n    title \"vm1 host pp512\"\n"
	    "    x-axis [\"bare metal 4871.99\"]\n    y-axis \"t/s, higher is faster\" 0 --> 6000\n    bar [4871.99]\n"));
	free(text);
	/* The axis: 0 to a round figure above the tallest bar, at most 5 steps. */
	assert_true(lm_bench_chart_axis_max(4786.7, &step) == 6000 && step == 2000);
	assert_true(lm_bench_chart_axis_max(517.88, &step) == 600 && step == 200);
	assert_true(lm_bench_chart_axis_max(52.38, &step) == 60 && step == 20);
	assert_true(lm_bench_chart_axis_max(3, &step) == 4 && step == 1);
	assert_true(lm_bench_chart_axis_max(0.5, &step) > 0.599 && lm_bench_chart_axis_max(0.5, &step) < 0.601 &&
	    step > 0.199 && step < 0.201);
	/* Figures no benchmark makes, from a hostile folder: still an axis, no endless loop. */
	assert_true(lm_bench_chart_axis_max(1e308, &step) >= 1e300 && step > 0);
	assert_true(lm_bench_chart_axis_max(1e-300, &step) > 0 && step > 0);
	assert_true(lm_bench_chart_axis_max(-5, &step) > 0 && step > 0);
	lm_assert_ok(lm_bench_chart_svg("x & y", c, 4, &svg));
	assert_non_null(strstr(svg, "<title>x &amp; y</title>"));
	assert_non_null(strstr(svg, "data-test=\"a &quot;&lt;&amp;&gt;&quot; b\""));
	assert_null(strstr(svg, "<&"));
	assert_non_null(strstr(svg, "data-label=\"shimmed\" data-value=\"4786.70\""));
	assert_null(strstr(svg, "data-value=\"0.00\""));
	/* Two rows of at most 3 panels: 980 px wide; pp512's three charts on one scale. */
	assert_non_null(strstr(svg, "width=\"980\" height=\"664\""));
	assert_non_null(strstr(svg, "data-test=\"pp512\" data-axis-max=\"6000\""));
	assert_non_null(strstr(svg, "data-test=\"other pp512\" data-axis-max=\"6000\""));
	assert_non_null(strstr(svg, "data-test=\"host pp512\" data-axis-max=\"6000\""));
	assert_non_null(strstr(svg, "class=\"tick-label\" data-value=\"0\""));
	assert_non_null(strstr(svg, ">11.08× unlocked / stock (higher is faster)</text>"));
	free(svg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_llama_current),
		cmocka_unit_test(test_llama_old_schema),
		cmocka_unit_test(test_llama_jsonl_and_missing),
		cmocka_unit_test(test_llama_refused),
		cmocka_unit_test(test_metal_init_lines),
		cmocka_unit_test(test_median_ratio),
		cmocka_unit_test(test_collect),
		cmocka_unit_test(test_sums),
		cmocka_unit_test(test_json_document),
		cmocka_unit_test(test_compare_rows),
		cmocka_unit_test(test_charts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
