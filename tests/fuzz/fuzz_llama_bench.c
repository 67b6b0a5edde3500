/* What a benchmark run prints in the guest (docs/bench.md): llama-bench's JSON or JSONL on stdout,
 * llama.cpp's Metal init lines on stderr. Whatever parses gives named tests with positive samples
 * and a median within them; the init-line reader accepts anything. */
#include <stdlib.h>
#include <string.h>

#include "bench_internal.h"
#include "fuzz_support.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	lm_llama_output o;
	lm_bench_metal m;
	char *text = malloc(size + 1), name[48], family[96];
	size_t i, k;

	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	lm_bench_metal_parse(text, &m);
	lm_bench_metal_family(&m, family, sizeof(family));
	LM_FUZZ_CHECK(family[0] != '\0');
	if (lm_llama_parse((const char *)data, size, &o) < 0) {
		LM_FUZZ_CHECK(o.records == NULL && o.count == 0 && lm_error_last()->message[0] != '\0');
		free(text);
		return 0;
	}
	LM_FUZZ_CHECK(o.count > 0);
	for (i = 0; i < o.count; i++) {
		double lo = 0, hi = 0, median;
		lm_llama_record_name(&o.records[i], name, sizeof(name));
		LM_FUZZ_CHECK(name[0] == 'p' || name[0] == 't');
		for (k = 0; k < o.records[i].nsamples; k++) {
			double v = o.records[i].samples_ts[k];
			LM_FUZZ_CHECK(v > 0);
			if (k == 0 || v < lo)
				lo = v;
			if (k == 0 || v > hi)
				hi = v;
		}
		median = lm_bench_median(o.records[i].samples_ts, o.records[i].nsamples);
		LM_FUZZ_CHECK(o.records[i].nsamples == 0 || (median >= lo && median <= hi));
	}
	lm_llama_output_dispose(&o);
	free(text);
	return 0;
}
