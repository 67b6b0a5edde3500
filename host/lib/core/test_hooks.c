/* Test hooks (test_hooks.h): nothing at all outside test builds. */
#include "test_hooks.h"

#ifdef LM_TEST_HOOKS
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Process-wide by nature: a process stops itself once. */
static atomic_int test_stopped;

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
#else
/* ISO C wants a translation unit to declare something. */
typedef int lm_test_hooks_unused;
#endif
