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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_signal_status),
		cmocka_unit_test(test_terminal_table),
		cmocka_unit_test(test_parse_flags),
		cmocka_unit_test(test_workload_options),
		cmocka_unit_test(test_group_command),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
