/* lm_shell_quote / lm_shell_quote_argv: exact output, and a round trip through a real local
 * /bin/sh (the remote round trip is in test_ssh_guest). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "lume-metal/sys/ssh.h"
#include "lm_test.h"

extern char **environ;

static void expect(const char *arg, const char *want)
{
	char *got = NULL;

	lm_assert_ok(lm_shell_quote(arg, &got));
	assert_string_equal(got, want);
	lm_free(got);
}

static void test_plain_words_stay(void **state)
{
	expect("abc", "abc");
	expect("/Users/lume/.local/share/lume/metal-capabilities", "/Users/lume/.local/share/lume/metal-capabilities");
	expect("-n", "-n");
	expect("a,b:c@d%e+f", "a,b:c@d%e+f");
}

static void test_special_words_quoted(void **state)
{
	expect("", "''");
	expect("a b", "'a b'");
	expect("$HOME", "'$HOME'");
	expect("`id`", "'`id`'");
	expect("$(id)", "'$(id)'");
	expect("it's", "'it'\\''s'");
	expect("'", "''\\'''");
	expect("a\nb", "'a\nb'");
	expect("x=1", "'x=1'");          /* never an assignment */
	expect("~", "'~'");              /* never a home directory */
	expect("#c", "'#c'");            /* never a comment */
	expect("*", "'*'");
	expect("a;b|c&d", "'a;b|c&d'");
	expect("\\", "'\\'");
	expect("\"", "'\"'");
	expect("caf\xc3\xa9", "'caf\xc3\xa9'"); /* non-ASCII bytes are quoted, kept as they are */
	expect("{a,b}", "'{a,b}'");
	expect("!x", "'!x'");
}

static void test_argv(void **state)
{
	const char *argv[] = {"printf", "%s\\n", "a b", "", "it's"};
	char *got = NULL;

	lm_assert_ok(lm_shell_quote_argv(argv, 5, &got));
	assert_string_equal(got, "printf '%s\\n' 'a b' '' 'it'\\''s'");
	lm_free(got);
	lm_assert_ok(lm_shell_quote_argv(argv, 0, &got));
	assert_string_equal(got, "");
	lm_free(got);
	argv[1] = NULL;
	lm_assert_fails(lm_shell_quote_argv(argv, 2, &got), LM_EINVALID);
	assert_null(got);
}

/* Run /bin/sh -c "printf '%s\n' <quoted>" locally and compare its output with the original. */
static void round_trip_local(const char *arg)
{
	const char *argv[] = {"printf", "%s\\n", arg};
	char *cmd = NULL, out[4096];
	const char *sh_argv[4];
	posix_spawn_file_actions_t fa;
	int pipefd[2], status;
	size_t used = 0;
	ssize_t n;
	pid_t pid;

	lm_assert_ok(lm_shell_quote_argv(argv, 3, &cmd));
	sh_argv[0] = "sh";
	sh_argv[1] = "-c";
	sh_argv[2] = cmd;
	sh_argv[3] = NULL;
	assert_int_equal(pipe(pipefd), 0);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
	posix_spawn_file_actions_addclose(&fa, pipefd[0]);
	assert_int_equal(posix_spawn(&pid, "/bin/sh", &fa, NULL, (char *const *)sh_argv, environ), 0);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	while ((n = read(pipefd[0], out + used, sizeof(out) - 1 - used)) > 0)
		used += (size_t)n;
	close(pipefd[0]);
	out[used] = '\0';
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(used, strlen(arg) + 1);
	assert_memory_equal(out, arg, strlen(arg));
	lm_free(cmd);
}

static void test_round_trip_local_sh(void **state)
{
	static const char *const cases[] = {
		"", "plain", "a b", "$HOME", "${PATH}", "`echo no`", "$(echo no)", "it's", "'", "''", "\"\\\"",
		"a\nb\n", "tab\there", "x=1", "~", "~root", "#c", "*", "?", "[a]", "a;b|c&d>e<f", "\\n",
		"caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac", "-n", "--", "!", "%s",
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		round_trip_local(cases[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_words_stay),
		cmocka_unit_test(test_special_words_quoted),
		cmocka_unit_test(test_argv),
		cmocka_unit_test(test_round_trip_local_sh),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
