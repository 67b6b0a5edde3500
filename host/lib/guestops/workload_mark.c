/* The wrapper's mark on a workload's stdout (lm_workload_group_command): found, its launcher PID
 * taken and the mark cut out, everything else passed on unchanged and in order. Apart from the
 * session so that a fuzz target can drive it (tests/fuzz/fuzz_run_mark.c): what comes before the
 * mark is the guest's and the workload's to shape. */
#include <string.h>

#include "guest_workload.h"

#define MARK_PREFIX "\033]" LM_WORKLOAD_MARK_WORD ";"

void lm_workload_mark_init(lm_workload_mark *m)
{
	memset(m, 0, sizeof(*m));
}

/* The mark in what is held: the launcher's PID taken, the mark cut out, the rest passed on. The
 * mark comes before anything the workload writes (the wrapper prints it before the exec); on a
 * pseudo-terminal the echo of input sent early may come first, so it is looked for, not expected
 * at the start. Found nowhere in the first LM_WORKLOAD_MARK_HOLD bytes (or by the end): the output
 * goes on as it is, and the stop finds the launcher by ancestry. */
static void look(lm_workload_mark *m, int end, lm_workload_mark_emit emit, void *data)
{
	const size_t plen = sizeof(MARK_PREFIX) - 1;
	char *at = NULL, *bel;
	size_t i, n;

	for (i = 0; i + plen <= m->held && at == NULL; i++)
		if (memcmp(m->hold + i, MARK_PREFIX, plen) == 0)
			at = m->hold + i;
	if (at != NULL && (bel = memchr(at + plen, '\007', m->held - (size_t)(at - m->hold) - plen)) != NULL) {
		const char *t = at + plen;
		size_t tlen = (size_t)(bel - t);
		int leads = tlen > 0 && t[0] == '-';

		n = tlen - (size_t)leads;
		if (n > 0 && n < sizeof(m->launcher) && strspn(t + leads, "0123456789") == n && t[leads] != '0') {
			memcpy(m->launcher, t + leads, n);
			m->launcher[n] = '\0';
			m->launcher_leads = leads;
		}
		m->state = LM_WORKLOAD_MARK_FOUND;
		if (at > m->hold)
			emit(data, m->hold, (size_t)(at - m->hold));
		if ((size_t)(bel + 1 - m->hold) < m->held)
			emit(data, bel + 1, m->held - (size_t)(bel + 1 - m->hold));
		m->held = 0;
	} else if (end || m->held == sizeof(m->hold)) {
		m->state = LM_WORKLOAD_MARK_ABSENT;
		if (m->held > 0)
			emit(data, m->hold, m->held);
		m->held = 0;
	}
}

void lm_workload_mark_feed(lm_workload_mark *m, const char *bytes, size_t len, lm_workload_mark_emit emit, void *data)
{
	size_t n;

	while (m->state == LM_WORKLOAD_MARK_LOOKING && len > 0) {
		n = sizeof(m->hold) - m->held < len ? sizeof(m->hold) - m->held : len;
		memcpy(m->hold + m->held, bytes, n);
		m->held += n;
		bytes += n;
		len -= n;
		look(m, 0, emit, data);
	}
	if (len > 0)
		emit(data, bytes, len);
}

void lm_workload_mark_end(lm_workload_mark *m, lm_workload_mark_emit emit, void *data)
{
	if (m->state == LM_WORKLOAD_MARK_LOOKING)
		look(m, 1, emit, data);
}
