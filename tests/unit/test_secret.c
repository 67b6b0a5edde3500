/* A guest password from the environment (host/lib/core/secret.c, issue 49 item 11): lm_context_new
 * reads it once and removes it, its bytes in the environment overwritten, and a process holding a
 * password writes no core dump. Each case runs in a child started with the variable in its first
 * environment (on its stack, where /proc/PID/environ and a core file read it), since the process's
 * core-dump settings cannot be put back once lowered. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lume-metal/context.h"
#include "lm_test.h"

#define SECRET "Pw-in-the-Environment-7"

extern char **environ;

static char *self;

/* The child: makes a context as `how` says, then prints what the process shows. */
static int child(const char *how)
{
	lm_options opts;
	lm_context *ctx = NULL;
	struct rlimit rl;
	char env[65536], *p;
	ssize_t n;
	int fd, rc;

	if (lm_options_init(&opts, LM_OPTIONS_VERSION) < 0)
		return 10;
	opts.state_dir = getenv("LM_TEST_STATE");
	if (strcmp(how, "file") == 0)
		opts.ssh_password_file = "/nonexistent/password";
	if (strcmp(how, "bad") == 0)
		opts.state_dir = "relative/state";
	rc = lm_context_new(&ctx, &opts);
	printf("context %s\n", rc == 0 ? "made" : "refused");
	printf("getenv %s\n", getenv("LUME_METAL_SSH_PASSWORD") ? getenv("LUME_METAL_SSH_PASSWORD") : "(unset)");
	/* The first environment's bytes, as the kernel shows them to another process. */
	if ((fd = open("/proc/self/environ", O_RDONLY)) < 0)
		return 11;
	n = read(fd, env, sizeof(env) - 1);
	close(fd);
	if (n < 0)
		return 12;
	for (p = env; p < env + n; p++)
		if (*p == '\0')
			*p = '\n';
	env[n] = '\0';
	printf("environ-has-secret %s\n", strstr(env, SECRET) ? "yes" : "no");
	if (getrlimit(RLIMIT_CORE, &rl) != 0)
		return 13;
	printf("core-limit %s\n", rl.rlim_cur == 0 && rl.rlim_max == 0 ? "0" : "kept");
	printf("dumpable %d\n", prctl(PR_GET_DUMPABLE, 0, 0, 0, 0));
	lm_context_free(ctx);
	return 0;
}

/* Run the child with `how` and the variable set (or not); its output. */
static char *run_child(const char *how, int with_secret)
{
	char *argv[] = {self, "--child", (char *)how, NULL};
	char state[1024], *envp[4];
	char *tmp = lm_test_tmpdir("secret");
	char out_path[1100];
	char *text = calloc(1, 4096);
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int status, fd;

	snprintf(state, sizeof(state), "LM_TEST_STATE=%s/state", tmp);
	snprintf(out_path, sizeof(out_path), "%s/out", tmp);
	envp[0] = state;
	envp[1] = with_secret ? "LUME_METAL_SSH_PASSWORD=" SECRET : "LM_TEST_NOTHING=1";
	envp[2] = "HOME=/nonexistent";
	envp[3] = NULL;
	assert_int_equal(posix_spawn_file_actions_init(&fa), 0);
	assert_int_equal(posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600), 0);
	assert_int_equal(posix_spawn(&pid, self, &fa, NULL, argv, envp), 0);
	posix_spawn_file_actions_destroy(&fa);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	fd = open(out_path, O_RDONLY);
	assert_true(fd >= 0);
	assert_true(read(fd, text, 4095) > 0);
	close(fd);
	lm_test_rmtree(tmp);
	free(tmp);
	return text;
}

static void test_password_taken_once(void **state)
{
	char *out = run_child("plain", 1);

	(void)state;
	lm_assert_contains(out, "context made\n");
	lm_assert_contains(out, "getenv (unset)\n");
	lm_assert_contains(out, "environ-has-secret no\n");
	lm_assert_contains(out, "core-limit 0\n");
	lm_assert_contains(out, "dumpable 0\n");
	free(out);
}

static void test_password_file_protects_too(void **state)
{
	char *out = run_child("file", 0);

	(void)state;
	lm_assert_contains(out, "context made\n");
	lm_assert_contains(out, "core-limit 0\n");
	lm_assert_contains(out, "dumpable 0\n");
	free(out);
}

static void test_no_password_changes_nothing(void **state)
{
	char *out = run_child("plain", 0);

	(void)state;
	lm_assert_contains(out, "context made\n");
	lm_assert_contains(out, "dumpable 1\n");
	free(out);
}

/* A context that cannot be made takes nothing: the caller can fix its options and try again. */
static void test_refused_context_leaves_it(void **state)
{
	char *out = run_child("bad", 1);

	(void)state;
	lm_assert_contains(out, "context refused\n");
	lm_assert_contains(out, "getenv " SECRET "\n");
	lm_assert_contains(out, "dumpable 1\n");
	free(out);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_password_taken_once),
		cmocka_unit_test(test_password_file_protects_too),
		cmocka_unit_test(test_no_password_changes_nothing),
		cmocka_unit_test(test_refused_context_leaves_it),
	};

	if (argc == 3 && strcmp(argv[1], "--child") == 0)
		return child(argv[2]);
	self = realpath("/proc/self/exe", NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
