/* Test hooks (test_hooks.h): nothing at all outside test builds. */
#include "test_hooks.h"

#ifdef LM_TEST_HOOKS
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Process-wide by nature: a process stops itself once; its journal writes are counted once. */
static atomic_int test_stopped;
static atomic_ulong journal_writes;

void lm_test_kill_point(const char *step)
{
	const char *at = getenv("LUME_METAL_TEST_KILL_AT");

	if (at != NULL && strcmp(at, step) == 0)
		kill(getpid(), SIGKILL);
	/* Once: a step reached again (every uploaded file) runs on after the first stop. */
	at = getenv("LUME_METAL_TEST_STOP_AT");
	if (at != NULL && strcmp(at, step) == 0 && atomic_exchange(&test_stopped, 1) == 0)
		kill(getpid(), SIGSTOP);
}

double lm_test_launchd_wait(double seconds)
{
	const char *v = getenv("LUME_METAL_TEST_LAUNCHD_WAIT");
	char *end;
	double d;

	if (v == NULL)
		return seconds;
	d = strtod(v, &end);
	if (end == v || *end != '\0' || !(d > 0 && d < 3600)) {
		fprintf(stderr, "LUME_METAL_TEST_LAUNCHD_WAIT=%s: not seconds between 0 and 3600\n", v);
		exit(125);
	}
	return d;
}
int lm_test_journal_full(void)
{
	const char *v = getenv("LUME_METAL_TEST_JOURNAL_FULL_AT");
	unsigned long at, n;
	char *end;

	if (v == NULL)
		return 0;
	errno = 0;
	at = strtoul(v, &end, 10);
	if (end == v || *end != '\0' || errno != 0 || at == 0 || v[0] == '-') {
		fprintf(stderr, "LUME_METAL_TEST_JOURNAL_FULL_AT=%s: not a write's ordinal (1, 2, ...)\n", v);
		exit(125);
	}
	n = atomic_fetch_add(&journal_writes, 1) + 1;
	return n >= at;
}
#else
/* ISO C wants a translation unit to declare something. */
typedef int lm_test_hooks_unused;
#endif
