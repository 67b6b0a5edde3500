/* run like `tart exec` (issue 26, item 1), the parts without a guest: the exit status after a
 * signal (host/lib/ssh/exec_interactive.c), which of stdin and a pseudo-terminal the workload gets
 * and -i/-t (host/cli/terminal.c, options.c), the versioned workload options and the wrapper that
 * records the workload's process group (host/lib/guestops/workload_session.c). The behaviour
 * against guests is tests/e2e/run_exec.sh's. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "guest_workload.h"
#include "lm_test.h"
#include "ssh_session.h"

/* As a shell reports a signal's death: 128 + N, with this system's numbers; unknown names 255
 * (before: every signal was 255). */
static void test_signal_status(void **state)
{
	(void)state;
	assert_int_equal(lm_ssh_signal_status("INT"), 128 + SIGINT);
	assert_int_equal(lm_ssh_signal_status("TERM"), 143);
	assert_int_equal(lm_ssh_signal_status("HUP"), 129);
	assert_int_equal(lm_ssh_signal_status("KILL"), 137);
	assert_int_equal(lm_ssh_signal_status("SEGV"), 128 + SIGSEGV);
	assert_int_equal(lm_ssh_signal_status("USR1"), 128 + SIGUSR1);
	assert_int_equal(lm_ssh_signal_status("SIGINT"), 255);
	assert_int_equal(lm_ssh_signal_status("WINCH@openssh.com"), 255);
	assert_int_equal(lm_ssh_signal_status(""), 255);
	assert_int_equal(lm_ssh_signal_status(NULL), 255);
}

/* The table: stdin forwarded unless a terminal nobody asked for; a pseudo-terminal with -t, or
 * with -i at a terminal; raw mode only for a local terminal. */
static void test_terminal_table(void **state)
{
	static const struct {
		int i, t, in_tty, out_tty, forward, pty, raw;
	} cases[] = {
		{0, 0, 0, 0, 1, 0, 0}, /* echo x | run: forwarded, to its end */
		{0, 0, 0, 1, 1, 0, 0},
		{0, 0, 1, 1, 0, 0, 0}, /* a terminal, no flag: tart exec without -i */
		{0, 0, 1, 0, 0, 0, 0},
		{1, 0, 1, 1, 1, 1, 1}, /* -i at a terminal: a pseudo-terminal too */
		{1, 0, 1, 0, 1, 0, 0}, /* ... but not into a file */
		{1, 0, 0, 0, 1, 0, 0},
		{0, 1, 1, 1, 1, 1, 1}, /* -t */
		{0, 1, 0, 0, 1, 1, 0}, /* -t from a pipe: no local raw mode */
		{1, 1, 1, 0, 1, 1, 1},
	};
	lm_cli_run_io io;
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		lm_cli_run_terminal(cases[k].i, cases[k].t, cases[k].in_tty, cases[k].out_tty, &io);
		if (io.forward != cases[k].forward || io.pty != cases[k].pty || io.raw != cases[k].raw)
			fail_msg("case %zu: forward %d pty %d raw %d, expected %d %d %d", k, io.forward, io.pty, io.raw,
			    cases[k].forward, cases[k].pty, cases[k].raw);
	}
}

/* argv outlives the call: the parsed cli points into it. */
static int parse(lm_cli *cli, const char *const *args, int n)
{
	static char *argv[16];
	int i;

	for (i = 0; i < n; i++)
		argv[i] = (char *)args[i];
	argv[n] = NULL;
	return lm_cli_parse(cli, n, argv);
}

/* -i and -t (together too), their long names, for run only; a guest command's own -t is its own. */
static void test_parse_flags(void **state)
{
	static const char *const it[] = {"lume-metal", "run", "-it", "vm1", "--", "top", "-t"};
	static const char *const tty[] = {"lume-metal", "run", "--tty", "vm1", "--", "top"};
	static const char *const in[] = {"lume-metal", "run", "vm1", "--interactive", "--", "cat"};
	static const char *const none[] = {"lume-metal", "run", "vm1", "--", "sh", "-i"};
	static const char *const enable[] = {"lume-metal", "enable", "-t", "vm1"};
	lm_cli cli;

	(void)state;
	assert_int_equal(parse(&cli, it, 7), 0);
	assert_true(cli.interactive && cli.tty);
	assert_int_equal(cli.cmd_argc, 2);
	assert_string_equal(cli.cmd_argv[1], "-t");
	assert_int_equal(parse(&cli, tty, 6), 0);
	assert_true(!cli.interactive && cli.tty);
	assert_int_equal(parse(&cli, in, 6), 0);
	assert_true(cli.interactive && !cli.tty);
	assert_int_equal(parse(&cli, none, 6), 0);
	assert_true(!cli.interactive && !cli.tty);
	assert_int_equal(parse(&cli, enable, 4), LM_EXIT_USAGE);
}

/* Version 1's struct is shorter: its init writes only its own fields; a copy gives version 2's
 * fields their defaults; bad versions and values are refused. */
static void test_workload_options(void **state)
{
	lm_workload_options wo, copy;
	unsigned char *bytes = (unsigned char *)&wo;
	size_t k, v1 = offsetof(lm_workload_options, input);

	(void)state;
	memset(&wo, 0xAA, sizeof(wo));
	lm_assert_ok(lm_workload_options_init(&wo, 1));
	for (k = v1; k < sizeof(wo); k++)
		if (bytes[k] != 0xAA)
			fail_msg("lm_workload_options_init(1) wrote byte %zu, past version 1's end (%zu)", k, v1);
	wo.require_shim = 1;
	lm_assert_ok(lm_workload_options_copy(&copy, &wo));
	assert_true(copy.require_shim && !copy.input && !copy.tty && copy.pending_signal == NULL && copy.stop_grace == 0);
	lm_assert_ok(lm_workload_options_copy(&copy, NULL));
	assert_int_equal(copy.version, LM_WORKLOAD_OPTIONS_VERSION);
	lm_assert_ok(lm_workload_options_init(&wo, LM_WORKLOAD_OPTIONS_VERSION));
	wo.input = 1;
	wo.input_fd = -1;
	lm_assert_fails(lm_workload_options_copy(&copy, &wo), LM_EINVALID);
	lm_assert_error_has("input_fd");
	wo.input = 0;
	wo.stop_grace = -1;
	lm_assert_fails(lm_workload_options_copy(&copy, &wo), LM_EINVALID);
	wo.stop_grace = 0;
	wo.version = LM_WORKLOAD_OPTIONS_VERSION + 1;
	lm_assert_fails(lm_workload_options_copy(&copy, &wo), LM_EINVALID);
	lm_assert_fails(lm_workload_options_init(&wo, 0), LM_EINVALID);
}

/* The wrapper says the kill target of its process group ("-$$" when the shell leads one, as sshd's
 * setsid makes it) on the channel (the mark the host cuts out of the output) and in the record
 * directory, quoted, and only then execs the workload. */
static void test_group_command(void **state)
{
	char *out = NULL;

	(void)state;
	lm_assert_ok(lm_workload_group_command("/Users/lume/x y/run-1", "env A=1 llama-bench", &out));
	assert_string_equal(out, "if kill -s 0 -- -$$ 2>/dev/null; then t=-$$; else t=$$; fi; "
	    "printf '\\033]lume-metal-group;%s\\007' \"$t\" && printf '%s\\n' \"$t\" "
	    ">'/Users/lume/x y/run-1/process-group' && exec env A=1 llama-bench");
	free(out);
}

/* The stop's grace on the guest's clock (issue 49 item 8): a workload that ignores SIGTERM, the
 * stop script run as the guest runs it, `date` first in its PATH. With a clock that moves a second
 * at each reading (a guest so loaded that every turn takes a second), SIGKILL comes after the
 * clock's ceil(grace) + 1 s, a few turns, not after the grace's 50 turns of 0.1 s; with a `date`
 * that fails, the turns decide as before. Counted in readings of the clock, never timed. */
static void stop_with_clock(const char *date_script, int tenths, int *readings, int *exit_status)
{
	char *t = lm_test_tmpdir("stop"), *bin = lm_test_join(t, "bin"), *date = lm_test_join(bin, "date");
	char *clock = lm_test_join(t, "clock"), *group = lm_test_join(t, "process-group"), *out = lm_test_join(t, "out");
	char *text, n[16], pidtext[16], target[24];
	char path[2048], *envp[] = {path, NULL};
	char *const workload[] = {"/bin/sh", "-c", "trap '' TERM; exec sleep 1000", NULL};
	posix_spawnattr_t attr;
	posix_spawn_file_actions_t fa;
	pid_t pid, stopper;
	int status;

	assert_int_equal(mkdir(bin, 0755), 0);
	lm_test_write_text(date, date_script);
	assert_int_equal(chmod(date, 0755), 0);
	lm_test_write_text(clock, "0\n");
	snprintf(path, sizeof(path), "PATH=%s:/usr/bin:/bin", bin);
	/* The workload leads a process group of its own, as the wrapper's exec leaves it. */
	assert_int_equal(posix_spawnattr_init(&attr), 0);
	assert_int_equal(posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP), 0);
	assert_int_equal(posix_spawnattr_setpgroup(&attr, 0), 0);
	assert_int_equal(posix_spawn(&pid, "/bin/sh", NULL, &attr, workload, envp), 0);
	posix_spawnattr_destroy(&attr);
	snprintf(target, sizeof(target), "-%d\n", (int)pid);
	lm_test_write_text(group, target);
	snprintf(n, sizeof(n), "%d", tenths);
	snprintf(pidtext, sizeof(pidtext), "%d", (int)pid);
	{
		char *const argv[] = {"/bin/sh", "-c", (char *)lm_workload_stop_script, "lume-metal-stop", group, "TERM", n, "",
		    pidtext, "-", NULL};

		assert_int_equal(posix_spawn_file_actions_init(&fa), 0);
		assert_int_equal(posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0600), 0);
		/* Its parent is the workload's, as sshd's session process is both's in the guest. */
		assert_int_equal(posix_spawn(&stopper, "/bin/sh", &fa, NULL, argv, envp), 0);
		posix_spawn_file_actions_destroy(&fa);
	}
	assert_int_equal(waitpid(stopper, &status, 0), stopper);
	assert_true(WIFEXITED(status));
	*exit_status = WEXITSTATUS(status);
	/* The workload ended by SIGKILL, the stop's second signal. */
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);
	text = lm_test_slurp(clock, NULL);
	*readings = atoi(text);
	free(text);
	text = lm_test_slurp(out, NULL);
	lm_assert_contains(text, "file -");
	free(text);
	lm_test_rmtree(t);
	free(t), free(bin), free(date), free(clock), free(group), free(out);
}

static void test_stop_grace_on_the_clock(void **state)
{
	/* Each reading a second later than the one before (the count kept in T/clock; this is T/bin/date). */
	static const char moving[] = "#!/bin/sh\nf=${0%/bin/date}/clock; read -r c <\"$f\"; echo $((c + 1)) >\"$f\"; "
	    "echo $((1700000000 + c))\n";
	/* Counts its readings but cannot tell the time. */
	static const char failing[] = "#!/bin/sh\nf=${0%/bin/date}/clock; read -r c <\"$f\"; echo $((c + 1)) >\"$f\"; exit 1\n";
	int readings, rc;

	(void)state;
	/* The default grace, 5 s: SIGKILL once the clock says 6 s, the seventh reading or so. */
	stop_with_clock(moving, 50, &readings, &rc);
	assert_int_equal(rc, 1);
	assert_true(readings >= 7);
	assert_true(readings <= 10);
	/* No clock: the turns decide (0.5 s grace: five turns, then SIGKILL). */
	stop_with_clock(failing, 5, &readings, &rc);
	assert_int_equal(rc, 1);
	assert_true(readings >= 6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_signal_status),
		cmocka_unit_test(test_terminal_table),
		cmocka_unit_test(test_parse_flags),
		cmocka_unit_test(test_workload_options),
		cmocka_unit_test(test_group_command),
		cmocka_unit_test(test_stop_grace_on_the_clock),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
