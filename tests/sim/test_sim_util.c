/* The simulator's own helpers: a child run to its end with its output (sim_spawn_wait), also when
 * it leaves a daemon behind that keeps the pipes open, as the guest fixture's `start` leaves sshd. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim.h"
#include "lm_test.h"

static void test_spawn_output_and_status(void **state)
{
	char *const argv[] = {"/bin/sh", "-c", "echo out; echo err >&2; exit 3", NULL};
	char out[64], err[64];

	(void)state;
	assert_int_equal(sim_spawn_wait(argv, 60, out, sizeof(out), err, sizeof(err)), 3);
	assert_string_equal(out, "out\n");
	assert_string_equal(err, "err\n");
}

/* The child exits and its daemon keeps stdout and stderr: the wait ends with what the child wrote
 * and the daemon still running (it used to read on until the daemon closed the pipes, spinning on
 * EAGAIN all that time, and here the daemon never does until it is killed). */
static void test_spawn_daemon_keeps_pipes(void **state)
{
	char *dir = lm_test_tmpdir("sim-util"), *pidfile = lm_test_join(dir, "daemon.pid"), *pidtext;
	char script[600], out[64], err[64];
	char *argv[] = {"/bin/sh", "-c", script, NULL};
	long pid;

	(void)state;
	assert_non_null(dir);
	snprintf(script, sizeof(script), "sleep 100000 & echo $! >'%s'; echo started", pidfile);
	assert_int_equal(sim_spawn_wait(argv, 60, out, sizeof(out), err, sizeof(err)), 0);
	assert_string_equal(out, "started\n");
	assert_non_null(pidtext = lm_test_slurp(pidfile, NULL));
	pid = strtol(pidtext, NULL, 10);
	assert_true(pid > 0);
	assert_int_equal(kill((pid_t)pid, 0), 0); /* the daemon outlived the wait */
	kill((pid_t)pid, SIGKILL);
	free(pidtext);
	lm_test_rmtree(dir);
	free(pidfile);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spawn_output_and_status),
		cmocka_unit_test(test_spawn_daemon_keeps_pipes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
