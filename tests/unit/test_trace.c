/* The timing trace (host/lib/core/trace.c): off without LUME_METAL_TRACE, one whole line per event
 * with it, and a file that cannot be opened is a clear error from lm_context_new, not a command
 * that silently runs untraced. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "lume-metal/context.h"
#include "lume-metal/error.h"
#include "clock.h"
#include "trace.h"

static char dir[] = "/tmp/lm-test-trace-XXXXXX";
static char file[sizeof(dir) + 16];

static int setup(void **state)
{
	(void)state;
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(file, sizeof(file), "%s/trace", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(file);
	rmdir(dir);
	return 0;
}

static lm_context *context(int expect_rc)
{
	lm_options opts;
	lm_context *ctx = NULL;

	assert_int_equal(lm_options_init(&opts, LM_OPTIONS_VERSION), 0);
	opts.state_dir = dir;
	assert_int_equal(lm_context_new(&ctx, &opts), expect_rc);
	return ctx;
}

static void test_off_without_the_variable(void **state)
{
	lm_context *ctx;
	struct stat sb;

	(void)state;
	unsetenv(LM_TRACE_ENV);
	ctx = context(0);
	lm_trace(ctx, "vm1", "ssh-auth", lm_clock_monotonic());
	lm_context_free(ctx);
	assert_int_not_equal(stat(file, &sb), 0);
	/* An empty value is no trace either (a variable cleared in a script). */
	setenv(LM_TRACE_ENV, "", 1);
	ctx = context(0);
	lm_trace(ctx, "vm1", "ssh-auth", lm_clock_monotonic());
	lm_context_free(ctx);
	assert_int_not_equal(stat(file, &sb), 0);
	unsetenv(LM_TRACE_ENV);
}

static void test_one_line_per_event(void **state)
{
	char line[600], vm[64], what[64], longname[700];
	double start, seconds, t0;
	long pid;
	int lines = 0, events = 0, contexts = 0, clocks = 0, requests = 0;
	lm_context *ctx;
	FILE *f;

	(void)state;
	setenv(LM_TRACE_ENV, file, 1);
	ctx = context(0);
	t0 = lm_clock_monotonic();
	lm_trace(ctx, "vm1", "journal-save", t0);
	lm_trace(ctx, NULL, "journal-lock-wait", t0);
	lm_trace_request(ctx, "vm-request", "GET", "/lume/vms/vm1", t0);
	/* A name longer than a line's room: cut, still one line ending in a newline. */
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	lm_trace(ctx, "vm1", longname, t0);
	lm_context_free(ctx);
	unsetenv(LM_TRACE_ENV);
	assert_non_null(f = fopen(file, "r"));
	while (fgets(line, sizeof(line), f) != NULL) {
		assert_non_null(strchr(line, '\n'));
		assert_int_equal(sscanf(line, "%lf %lf %ld %63s %63s", &start, &seconds, &pid, vm, what), 5);
		assert_int_equal(pid, (long)getpid());
		assert_true(seconds >= 0);
		if (strcmp(what, "clock") == 0) {
			/* the context's first line: the wall clock of its monotonic START */
			double epoch = 0;
			clocks++;
			assert_int_equal(lines, 0);
			assert_int_equal(sscanf(line, "%*f %*f %*d %*s clock %lf", &epoch), 1);
			assert_true(epoch > 1577836800.0); /* a wall clock: after 2020-01-01 */
			assert_true(start <= t0);
		} else if (strcmp(what, "context") == 0) {
			contexts++;
			assert_string_equal(vm, "-");
			assert_true(start <= t0 + 1e-6);
		} else {
			events++;
			requests += strstr(line, " vm-request GET /lume/vms/vm1\n") != NULL;
			assert_true(start == t0 || (start > t0 - 1e-6 && start < t0 + 1e-6));
		}
		lines++;
	}
	fclose(f);
	assert_int_equal(lines, 6);
	assert_int_equal(events, 4);
	assert_int_equal(requests, 1);
	assert_int_equal(clocks, 1);
	assert_int_equal(contexts, 1);
}

static void test_unwritable_file_is_an_error(void **state)
{
	(void)state;
	/* A directory cannot be opened for writing. */
	setenv(LM_TRACE_ENV, dir, 1);
	assert_null(context(LM_EIO));
	assert_non_null(strstr(lm_error_last()->message, "LUME_METAL_TRACE="));
	assert_non_null(strstr(lm_error_last()->message, "cannot open the trace file"));
	unsetenv(LM_TRACE_ENV);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_off_without_the_variable),
		cmocka_unit_test(test_one_line_per_event),
		cmocka_unit_test(test_unwritable_file_is_an_error),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
