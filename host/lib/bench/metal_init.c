/* What llama.cpp's Metal backend selected, from the lines ggml_metal_device_init prints on stderr
 * (ggml/src/ggml-metal/ggml-metal-device.m; docs/bench.md): the highest family of each kind,
 * "GPU family: MTLGPUFamilyApple5  (1005)", and the booleans "simdgroup reduction   = true". The
 * lines print even without -v; their prefix changed between versions (ggml_metal_init: before),
 * so only what follows it is matched. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_internal.h"
#include "text.h"

static const struct {
	const char *label;
	size_t offset;
} flags[] = {
	{"simdgroup reduction", offsetof(lm_bench_metal, simdgroup_reduction)},
	{"simdgroup matrix mul.", offsetof(lm_bench_metal, simdgroup_mm)},
	{"has bfloat", offsetof(lm_bench_metal, bfloat)},
	{"has unified memory", offsetof(lm_bench_metal, unified_memory)},
};

/* "... (1005)" -> 1005 in [lo, hi], else -1. */
static int family_value(const char *line, size_t n, int lo, int hi)
{
	const char *open = memchr(line, '(', n);
	uint64_t v;
	size_t k;

	if (open == NULL)
		return -1;
	open++;
	for (k = 0; open + k < line + n && open[k] >= '0' && open[k] <= '9'; k++)
		;
	if (k == 0 || open + k >= line + n || open[k] != ')' || lm_text_parse_u64(open, k, 9999, &v) < 0 ||
	    (int)v < lo || (int)v > hi)
		return -1;
	return (int)v;
}

static const char *find(const char *line, size_t n, const char *what)
{
	size_t w = strlen(what), i;

	for (i = 0; i + w <= n; i++)
		if (memcmp(line + i, what, w) == 0)
			return line + i;
	return NULL;
}

static void read_line(const char *line, size_t n, lm_bench_metal *m)
{
	const char *at, *eq, *end = line + n;
	size_t i;

	if ((at = find(line, n, "GPU family: MTLGPUFamily")) != NULL) {
		size_t left = (size_t)(end - at);
		m->found = 1;
		if (find(at, left, "MTLGPUFamilyApple") == at + 12)
			m->apple = family_value(at, left, 1001, 1999);
		else if (find(at, left, "MTLGPUFamilyCommon") == at + 12)
			m->common = family_value(at, left, 3001, 3999);
		else if (find(at, left, "MTLGPUFamilyMetal") == at + 12)
			m->metal = family_value(at, left, 5001, 5999);
		return;
	}
	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		if ((at = find(line, n, flags[i].label)) == NULL || (eq = memchr(at, '=', (size_t)(end - at))) == NULL)
			continue;
		for (eq++; eq < end && *eq == ' '; eq++)
			;
		int *field = (int *)(void *)((char *)m + flags[i].offset);
		if ((size_t)(end - eq) >= 4 && memcmp(eq, "true", 4) == 0)
			*field = 1;
		else if ((size_t)(end - eq) >= 5 && memcmp(eq, "false", 5) == 0)
			*field = 0;
		m->found = 1;
		return;
	}
}

void lm_bench_metal_parse(const char *text, lm_bench_metal *m)
{
	lm_scan s;
	const char *line;
	size_t n;

	m->apple = m->common = m->metal = -1;
	m->simdgroup_reduction = m->simdgroup_mm = m->bfloat = m->unified_memory = -1;
	m->found = 0;
	if (text == NULL)
		return;
	lm_scan_init(&s, text, strlen(text));
	while (lm_scan_line(&s, &line, &n) != 0)
		read_line(line, n, m);
	/* The Metal line is absent when Metal3 is not supported. */
	if (m->apple > 0 && m->metal < 0)
		m->metal = 0;
}

void lm_bench_metal_family(const lm_bench_metal *m, char *buf, size_t len)
{
	lm_buf b;

	lm_buf_init(&b, LM_BUF_TEXT_MAX);
	if (m->apple > 0)
		lm_buf_addf(&b, "Apple%d (%d)", m->apple - 1000, m->apple);
	if (m->common > 0)
		lm_buf_addf(&b, "%sCommon%d (%d)", lm_buf_len(&b) ? " " : "", m->common - 3000, m->common);
	if (m->metal > 0)
		lm_buf_addf(&b, "%sMetal%d (%d)", lm_buf_len(&b) ? " " : "", m->metal - 5000 + 2, m->metal);
	lm_text_format_cut(buf, len, "%s", lm_buf_len(&b) ? lm_buf_ptr(&b) : "not printed");
	lm_buf_dispose(&b);
}

int lm_bench_metal_differs(const lm_bench_metal *a, const lm_bench_metal *b)
{
	return a->simdgroup_reduction != b->simdgroup_reduction || a->simdgroup_mm != b->simdgroup_mm ||
	    a->bfloat != b->bfloat;
}

const char *lm_bench_flag(int v)
{
	return v < 0 ? "" : v ? "true" : "false";
}
