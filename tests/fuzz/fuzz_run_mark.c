/* run's output mark (host/lib/guestops/workload_mark.c): a workload's stdout in pieces, the
 * wrapper's mark (ESC ] lume-metal-group ; TARGET BEL) looked for in the first
 * LM_WORKLOAD_MARK_HOLD bytes. Whatever the bytes and however they are cut, what comes out is the
 * input with exactly the first whole mark taken out (none when there is none in reach), in order;
 * the launcher taken from it is a PID or nothing. The first byte of the input chooses the pieces'
 * sizes; the rest is the stdout. */
#include <stdlib.h>
#include <string.h>

#include "guest_workload.h"
#include "fuzz_support.h"

#define PREFIX "\033]" LM_WORKLOAD_MARK_WORD ";"

typedef struct {
	char *out;
	size_t len;
} collected;

static void collect(void *data, const char *bytes, size_t len)
{
	collected *c = data;

	LM_FUZZ_CHECK(len > 0);
	memcpy(c->out + c->len, bytes, len);
	c->len += len;
}

/* The same answer worked out in one piece: the first prefix whose end is within reach, then the
 * first BEL after it, also within reach. */
static int expected_mark(const char *s, size_t len, size_t *at, size_t *bel)
{
	const size_t plen = sizeof(PREFIX) - 1, reach = len < LM_WORKLOAD_MARK_HOLD ? len : LM_WORKLOAD_MARK_HOLD;
	size_t i;

	for (*at = 0; *at + plen <= reach; (*at)++)
		if (memcmp(s + *at, PREFIX, plen) == 0) {
			for (i = *at + plen; i < reach; i++)
				if (s[i] == '\007') {
					*bel = i;
					return 1;
				}
			return 0;
		}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	lm_workload_mark m;
	collected c = {NULL, 0};
	const char *in = (const char *)data + 1;
	size_t len, off = 0, piece, at = 0, bel = 0, n;
	unsigned int seed;
	int found;

	if (size == 0)
		return 0;
	seed = data[0];
	len = size - 1;
	if ((c.out = malloc(len + 1)) == NULL)
		abort();
	lm_workload_mark_init(&m);
	while (off < len) {
		seed = seed * 1103515245u + 12345u;
		piece = 1 + (seed >> 16) % (data[0] & 1 ? 7 : 1500); /* byte-sized pieces, or large ones */
		if (piece > len - off)
			piece = len - off;
		lm_workload_mark_feed(&m, in + off, piece, collect, &c);
		off += piece;
	}
	lm_workload_mark_end(&m, collect, &c);
	LM_FUZZ_CHECK(m.state != LM_WORKLOAD_MARK_LOOKING && m.held == 0);

	found = expected_mark(in, len, &at, &bel);
	LM_FUZZ_CHECK(found == (m.state == LM_WORKLOAD_MARK_FOUND));
	if (found) {
		LM_FUZZ_CHECK(c.len == len - (bel + 1 - at));
		LM_FUZZ_CHECK(memcmp(c.out, in, at) == 0);
		LM_FUZZ_CHECK(memcmp(c.out + at, in + bel + 1, len - bel - 1) == 0);
	} else {
		LM_FUZZ_CHECK(c.len == len && memcmp(c.out, in, len) == 0);
	}
	/* The launcher: "" or a PID (digits, no leading 0), "-" only with one. */
	n = strnlen(m.launcher, sizeof(m.launcher));
	LM_FUZZ_CHECK(n < sizeof(m.launcher));
	LM_FUZZ_CHECK(strspn(m.launcher, "0123456789") == n && (n == 0 || m.launcher[0] != '0'));
	LM_FUZZ_CHECK(n > 0 || m.launcher_leads == 0);
	LM_FUZZ_CHECK(n == 0 || found);
	free(c.out);
	return 0;
}
