/* The one child runner (host/lib/proc/interface/proc.h), through its header alone: exit codes and
 * signals, both streams captured whole (NUL bytes included) up to the limit, the timeout, the
 * cancel, never a shell, a program that cannot start named, the secrets and (for a VM's owner) the
 * CI job-tracking variables kept from every child, stdin, signals, detached children in a session
 * of their own, and the PATH search. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lume-metal.h"
#include "proc.h"
#include "children.h"
#include "lm_test.h"

/* `sh -c SCRIPT` through lm_proc_run; its result in *res (the caller disposes of it). */
static void run_sh(const char *script, const lm_proc_options *o, lm_proc_result *res)
{
	const char *args[] = {"-c", script, NULL};

	lm_assert_ok(lm_proc_run("/bin/sh", args, o, res));
}

/* The exit code is the child's, and 128 + the signal that ended it; either way the run itself
 * succeeded. */
static void test_exit_codes(void **state)
{
	static const struct {
		const char *script;
		int exit_code;
	} cases[] = {
		{"exit 0", 0},
		{"exit 3", 3},
		{"exit 255", 255},
		{"kill -TERM $$", 128 + SIGTERM},
		{"kill -KILL $$", 128 + SIGKILL},
	};
	const lm_proc_options o = {.timeout = 60};
	lm_proc_result res;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		run_sh(cases[i].script, &o, &res);
		if (res.exit_code != cases[i].exit_code || res.timed_out != 0)
			fail_msg("'%s': exit code %d (timed out: %d), expected %d", cases[i].script, res.exit_code,
			    res.timed_out, cases[i].exit_code);
		lm_proc_result_dispose(&res);
	}
}

/* stdout and stderr apart, each whole with its length: text, NUL bytes, and far more than a pipe
 * holds; the variables the caller sets replace ours. */
static void test_output_captured(void **state)
{
	const char *const env[] = {"LUME_LOG_LEVEL=error", NULL};
	const lm_proc_options o = {.env = env, .timeout = 60};
	lm_proc_result res;
	size_t i;

	(void)state;
	setenv("LUME_LOG_LEVEL", "debug", 1);
	run_sh("echo out; echo err >&2; echo $LUME_LOG_LEVEL; exit 3", &o, &res);
	unsetenv("LUME_LOG_LEVEL");
	assert_string_equal(res.out, "out\nerror\n");
	assert_int_equal(res.out_len, 10);
	assert_string_equal(res.err, "err\n");
	assert_int_equal(res.err_len, 4);
	assert_int_equal(res.exit_code, 3);
	assert_int_equal(res.timed_out, 0);
	lm_proc_result_dispose(&res);

	run_sh("printf 'a\\000b'; printf '\\000' >&2", &o, &res);
	assert_int_equal(res.out_len, 3);
	assert_memory_equal(res.out, "a\0b", 4); /* and NUL-terminated after them */
	assert_int_equal(res.err_len, 1);
	assert_memory_equal(res.err, "\0", 2);
	lm_proc_result_dispose(&res);

	run_sh("head -c 1000000 /dev/zero | tr '\\000' x", &o, &res);
	assert_int_equal(res.out_len, 1000000);
	for (i = 0; i < res.out_len && res.out[i] == 'x'; i++)
		;
	assert_int_equal(i, 1000000);
	assert_int_equal(res.out[res.out_len], '\0');
	lm_proc_result_dispose(&res);
}

/* A child's stdin is /dev/null: nothing of ours (here a pipe, which a child that inherited it
 * would name), and no terminal to wait on. */
static void test_stdin_is_dev_null(void **state)
{
	const char *args[] = {"/proc/self/fd/0", NULL};
	const lm_proc_options o = {.timeout = 60};
	lm_proc_result res;
	int ours[2], saved, rc;

	(void)state;
	assert_int_equal(pipe(ours), 0);
	assert_true((saved = dup(0)) >= 0);
	assert_int_equal(dup2(ours[0], 0), 0);
	rc = lm_proc_run("/bin/readlink", args, &o, &res);
	dup2(saved, 0); /* before any assertion: the later cases run with ours */
	close(saved);
	close(ours[0]);
	close(ours[1]);
	assert_int_equal(rc, 0);
	assert_string_equal(res.out, "/dev/null\n");
	lm_proc_result_dispose(&res);
}

/* The hex mask on the line "NAME:\t..." of /proc/PID/status text. */
static unsigned long long status_mask(const char *status, const char *name)
{
	const char *line = strstr(status, name);

	if (line == NULL)
		fail_msg("no %s line in: %s", name, status);
	return strtoull(line + strlen(name), NULL, 16);
}

/* A child starts with no blocked signal and SIGPIPE at its default, whatever this process blocks
 * or ignores (the host application's, not the child's). */
static void test_child_signals(void **state)
{
	const char *args[] = {"/proc/self/status", NULL};
	const lm_proc_options o = {.timeout = 60};
	sigset_t block, was;
	void (*pipe_was)(int);
	lm_proc_result res;
	int rc;

	(void)state;
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, &was);
	pipe_was = signal(SIGPIPE, SIG_IGN);
	rc = lm_proc_run("/bin/cat", args, &o, &res);
	signal(SIGPIPE, pipe_was);
	sigprocmask(SIG_SETMASK, &was, NULL);
	assert_int_equal(rc, 0);
	assert_true(status_mask(res.out, "\nSigBlk:") == 0);
	assert_true((status_mask(res.out, "\nSigIgn:") & (1ULL << (SIGPIPE - 1))) == 0);
	lm_proc_result_dispose(&res);
}

/* timed_out says the limit ended the child (it would have run 600 s): killed, its exit code
 * SIGKILL's, and reaped. */
static void test_timeout(void **state)
{
	const char *sleeper[] = {"600", NULL};
	const lm_proc_options quick = {.timeout = 0.3};
	lm_proc_result res;

	(void)state;
	lm_assert_ok(lm_proc_run("/bin/sleep", sleeper, &quick, &res));
	assert_int_equal(res.timed_out, 1);
	assert_int_equal(res.exit_code, 128 + SIGKILL);
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1); /* no child left */
	assert_int_equal(errno, ECHILD);
	lm_proc_result_dispose(&res);
}

/* A child that leaves a process of its own holding its output (`lume run --detach` does) has
 * ended when it exits: its result is read then, not when that process lets go of the pipes. */
static void test_child_leaves_a_holder(void **state)
{
	children *c = *state;
	const lm_proc_options o = {.timeout = 600};
	lm_proc_result res;
	long holder;

	run_sh("sleep 600 & echo $!", &o, &res);
	assert_int_equal(sscanf(res.out, "%ld", &holder), 1);
	children_add_other(c, (pid_t)holder);
	assert_int_equal(res.exit_code, 0);
	assert_int_equal(res.timed_out, 0);
	assert_int_equal(kill((pid_t)holder, 0), 0); /* still there, holding them */
	lm_proc_result_dispose(&res);
}

/* Should_cancel: yes once the child has said it runs (its file exists). */
static int child_started(void *data)
{
	return access(data, F_OK) == 0;
}

/* Issue 25: a child is a wait like any other: once should_cancel asks, it is killed and reaped
 * and lm_proc_run says LM_ECANCELED (the child would have run 600 s). */
static void test_cancel(void **state)
{
	children *c = *state;
	char *mark = children_path(c, "started"), script[PATH_MAX + 32];
	const char *args[] = {"-c", script, NULL};
	lm_options opts;
	lm_context *ctx = NULL;
	lm_proc_result res;

	snprintf(script, sizeof(script), ": >'%s'; exec sleep 600", mark);
	lm_assert_ok(lm_options_init(&opts, LM_OPTIONS_VERSION));
	opts.should_cancel = child_started;
	opts.callback_data = mark;
	lm_assert_ok(lm_context_new(&ctx, &opts));
	{
		const lm_proc_options o = {.timeout = 600, .cancel = ctx};
		assert_int_equal(lm_proc_run("/bin/sh", args, &o, &res), LM_ECANCELED);
	}
	lm_assert_error_has("/bin/sh: canceled while waiting for it");
	assert_null(res.out);
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1); /* reaped: no child left */
	assert_int_equal(errno, ECHILD);
	lm_context_free(ctx);
	free(mark);
}

/* Never a shell: each argument reaches the program as it is written, and a program's name is
 * never split into words. */
static void test_never_a_shell(void **state)
{
	const char *args[] = {"$HOME", "a;b", "`id`", "*", "'q'", "x > y", NULL};
	const lm_proc_options o = {.timeout = 60};
	lm_proc_result res;

	(void)state;
	lm_assert_ok(lm_proc_run("/bin/echo", args, &o, &res));
	assert_string_equal(res.out, "$HOME a;b `id` * 'q' x > y\n");
	lm_proc_result_dispose(&res);
	lm_assert_fails(lm_proc_run("/bin/echo hello", NULL, &o, &res), LM_ENOTFOUND);
	assert_string_equal(lm_error_last()->message, "/bin/echo hello: cannot start: No such file or directory");
}

/* A program that cannot start is said by its path and why: missing (LM_ENOTFOUND), or not
 * executable (LM_ERROR); nothing is handed out; the same when started detached. */
static void test_cannot_start(void **state)
{
	children *c = *state;
	char *plain = children_path(c, "not-executable"), want[PATH_MAX + 64];
	const lm_proc_options o = {.timeout = 60};
	lm_proc_result res;
	pid_t pid = 0;

	lm_assert_fails(lm_proc_run("/nonexistent/lume", NULL, &o, &res), LM_ENOTFOUND);
	assert_string_equal(lm_error_last()->message, "/nonexistent/lume: cannot start: No such file or directory");
	assert_null(res.out);
	assert_null(res.err);
	lm_assert_fails(lm_proc_spawn_detached("/nonexistent/lume", NULL, &o, &pid), LM_ENOTFOUND);
	assert_string_equal(lm_error_last()->message, "/nonexistent/lume: cannot start: No such file or directory");

	lm_test_write_text(plain, "#!/bin/sh\necho never\n");
	assert_int_equal(chmod(plain, 0644), 0);
	lm_assert_fails(lm_proc_run(plain, NULL, &o, &res), LM_ERROR);
	snprintf(want, sizeof(want), "%s: cannot start: %s", plain, strerror(EACCES));
	assert_string_equal(lm_error_last()->message, want);
	assert_null(res.out);
	free(plain);
}

/* Issue 25: the secrets (proc.h) reach no child: the password and the SSH agent's socket, also
 * when a caller names one among the variables to set. */
static void test_secrets_dropped(void **state)
{
	const char *show[] = {"-c", "echo \"[${LUME_METAL_SSH_PASSWORD-unset}${SSH_AUTH_SOCK-unset}] $LUME_LOG_LEVEL "
	    "${LUME_TELEMETRY_ENABLED-unset}\"", NULL};
	const char *const env[] = {"LUME_LOG_LEVEL=error", "LUME_TELEMETRY_ENABLED=0", "SSH_AUTH_SOCK=/tmp/set", NULL};
	const lm_proc_options o = {.env = env, .timeout = 60};
	const lm_proc_options plain = {.timeout = 60};
	lm_proc_result res;

	(void)state;
	setenv("LUME_METAL_SSH_PASSWORD", "s3cret", 1);
	setenv("SSH_AUTH_SOCK", "/tmp/agent.sock", 1);
	setenv("LUME_LOG_LEVEL", "debug", 1);
	lm_assert_ok(lm_proc_run("/bin/sh", show, &o, &res));
	assert_string_equal(res.out, "[unsetunset] error 0\n"); /* ours replaced, the secrets left out */
	lm_proc_result_dispose(&res);
	/* Without a variable to set too (a manager's --version, bench's bare-metal workload). */
	lm_assert_ok(lm_proc_run("/bin/sh", show, &plain, &res));
	assert_string_equal(res.out, "[unsetunset] debug unset\n");
	lm_proc_result_dispose(&res);
	unsetenv("LUME_METAL_SSH_PASSWORD");
	unsetenv("SSH_AUTH_SOCK");
	unsetenv("LUME_LOG_LEVEL");
}

/* Issue 24: a CI runner kills every process of a job that carries its tracking variables when the
 * job ends; a VM's owner (detached, or left behind by `lume run --detach`: vm_owner) goes without
 * them -- each of proc.h's list, and nothing else (a variable that only starts with one name stays).
 * Any other child keeps them: it ends with lume-metal. */
static void test_vm_owner_env(void **state)
{
	children *c = *state;
	const char *show[] = {"-c", "echo \"${RUNNER_TRACKING_ID-unset} ${JENKINS_NODE_COOKIE-unset} ${BUILD_ID-unset} "
	    "$RUNNER_TRACKING_ID_X\"", NULL};
	lm_proc_options owner = {.timeout = 60, .vm_owner = 1};
	const lm_proc_options plain = {.timeout = 60};
	char *log = children_path(c, "owner.log"), *text;
	lm_proc_result res;
	pid_t pid;

	setenv("RUNNER_TRACKING_ID", "github_1", 1);
	setenv("JENKINS_NODE_COOKIE", "cookie", 1);
	setenv("BUILD_ID", "42", 1);
	setenv("RUNNER_TRACKING_ID_X", "kept", 1);
	lm_assert_ok(lm_proc_run("/bin/sh", show, &owner, &res));
	assert_string_equal(res.out, "unset unset unset kept\n");
	lm_proc_result_dispose(&res);
	lm_assert_ok(lm_proc_run("/bin/sh", show, &plain, &res));
	assert_string_equal(res.out, "github_1 cookie 42 kept\n");
	lm_proc_result_dispose(&res);
	owner.log = log;
	owner.vm_owner = 0; /* detached is a VM's owner whatever the field says */
	lm_assert_ok(lm_proc_spawn_detached("/bin/sh", show, &owner, &pid));
	children_add(c, pid);
	assert_int_equal(children_reap(c, pid), 0);
	text = lm_test_slurp(log, NULL);
	assert_string_equal(text, "unset unset unset kept\n");
	free(text);
	free(log);
	unsetenv("RUNNER_TRACKING_ID");
	unsetenv("JENKINS_NODE_COOKIE");
	unsetenv("BUILD_ID");
	unsetenv("RUNNER_TRACKING_ID_X");
}

/* Field 6 (the session) of /proc/PID/stat. */
static long session_of(pid_t pid)
{
	char path[64], *text, *p;
	long sid = -1;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	text = lm_test_slurp(path, NULL);
	assert_non_null(text);
	/* "PID (comm) state ppid pgrp session ...": comm may hold spaces; the last ')' ends it. */
	p = strrchr(text, ')');
	assert_non_null(p);
	assert_int_equal(sscanf(p + 1, " %*c %*d %*d %ld", &sid), 1);
	free(text);
	return sid;
}

/* A detached child leads a session of its own (a terminal's ^C or hang-up on ours must not stop
 * a VM); its output is appended to the log, which it creates private (0600). */
static void test_detached(void **state)
{
	children *c = *state;
	const char *sleeper[] = {"600", NULL};
	const char *hello[] = {"-c", "echo hello; echo there >&2", NULL};
	char *log = children_path(c, "detached.log"), *text;
	lm_proc_options o = {.timeout = 60};
	struct stat st;
	pid_t pid;

	lm_assert_ok(lm_proc_spawn_detached("/bin/sleep", sleeper, &o, &pid));
	children_add(c, pid);
	/* posix_spawn returns once the child runs its program: its session is already its own. */
	assert_int_equal(session_of(pid), (long)pid);
	assert_true(session_of(getpid()) != session_of(pid));
	children_stop(c, pid);

	o.log = log;
	lm_assert_ok(lm_proc_spawn_detached("/bin/sh", hello, &o, &pid));
	children_add(c, pid);
	assert_int_equal(children_reap(c, pid), 0);
	assert_int_equal(stat(log, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	lm_assert_ok(lm_proc_spawn_detached("/bin/sh", hello, &o, &pid));
	children_add(c, pid);
	assert_int_equal(children_reap(c, pid), 0);
	text = lm_test_slurp(log, NULL);
	assert_string_equal(text, "hello\nthere\nhello\nthere\n");
	free(text);
	free(log);
}

/* lm_proc_spawn, the one spawn beneath the runner and ssh/'s local transport (a login shell started
 * as sshd starts it): the directory it starts in, its streams on the caller's descriptors with
 * stdin /dev/null, a process group of its own, and with shell_signals the signals a shell's child
 * expects at their defaults (SIGINT here, which this process ignores while it spawns). */
static void test_spawn_spec(void **state)
{
	children *c = *state;
	char *argv[] = {"/bin/sh", "-c", "pwd; cat; grep '^SigIgn:' /proc/self/status >&2", NULL};
	char *env[] = {"PATH=/usr/bin:/bin", NULL};
	char *out_path = children_path(c, "spawn.out"), *err_path = children_path(c, "spawn.err"), *text;
	lm_proc_spawn_spec spec = {0};
	void (*int_was)(int);
	int out, err;
	pid_t pid;

	out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(out >= 0 && err >= 0);
	spec.argv = argv;
	spec.env = env;
	spec.dir = c->dir;
	spec.stdio = LM_PROC_STDIO_FDS;
	spec.out_fd = out;
	spec.err_fd = err;
	spec.own_group = 1;
	spec.shell_signals = 1;
	int_was = signal(SIGINT, SIG_IGN);
	lm_assert_ok(lm_proc_spawn(&spec, &pid));
	signal(SIGINT, int_was);
	children_add(c, pid);
	/* posix_spawn returns once the child runs its program: its group is already its own. */
	assert_int_equal(getpgid(pid), pid);
	assert_int_equal(children_reap(c, pid), 0);
	close(out);
	close(err);
	text = lm_test_slurp(out_path, NULL);
	assert_non_null(text);
	assert_true(strncmp(text, c->dir, strlen(c->dir)) == 0 && strcmp(text + strlen(c->dir), "\n") == 0);
	free(text);
	text = lm_test_slurp(err_path, NULL);
	assert_non_null(text);
	assert_true((status_mask(text, "SigIgn:") & (1ULL << (SIGINT - 1))) == 0);
	free(text);
	/* A program that is not there: the error names it, no child is left. */
	argv[0] = "/nonexistent/lume-metal-test";
	spec.stdio = LM_PROC_STDIO_NULL;
	assert_int_equal(lm_proc_spawn(&spec, &pid), LM_ENOTFOUND);
	assert_non_null(strstr(lm_error_last()->message, "/nonexistent/lume-metal-test: cannot start"));
	free(out_path);
	free(err_path);
}

/* Issue 22: the managers' runners kept at most 10 arguments and dropped the rest silently. Every
 * argument reaches the child, run or started detached. */
#define MANY_ARGS 50
static void test_every_argument(void **state)
{
	children *c = *state;
	char words[MANY_ARGS][16], expect[MANY_ARGS * 16 + 16], *log = children_path(c, "args.log"), *text;
	const char *args[MANY_ARGS + 4];
	lm_proc_options o = {.timeout = 60};
	lm_proc_result res;
	size_t n = 0, len, i;
	pid_t pid;

	args[n++] = "-c";
	args[n++] = "printf '%s\\n' \"$#\" \"$@\"";
	args[n++] = "sh";
	len = (size_t)snprintf(expect, sizeof(expect), "%d\n", MANY_ARGS);
	for (i = 0; i < MANY_ARGS; i++) {
		snprintf(words[i], sizeof(words[i]), "arg %zu", i + 1);
		args[n++] = words[i];
		len += (size_t)snprintf(expect + len, sizeof(expect) - len, "%s\n", words[i]);
	}
	args[n] = NULL;
	lm_assert_ok(lm_proc_run("/bin/sh", args, &o, &res));
	assert_string_equal(res.out, expect);
	lm_proc_result_dispose(&res);

	o.log = log;
	lm_assert_ok(lm_proc_spawn_detached("/bin/sh", args, &o, &pid));
	children_add(c, pid);
	assert_int_equal(children_reap(c, pid), 0);
	text = lm_test_slurp(log, NULL);
	assert_string_equal(text, expect);
	free(text);
	free(log);
}

/* Issue 22: output past the limit was cut silently (at 16 MiB). Up to the limit it is kept whole;
 * one byte more on either stream is LM_ETOOLARGE naming the limit, after the child ran to its end. */
static void test_output_limit(void **state)
{
	children *c = *state;
	char *marker = children_path(c, "reached-the-end"), script[PATH_MAX + 64];
	const lm_proc_options o = {.timeout = 60, .output_max = 10};
	lm_proc_result res;

	run_sh("printf 0123456789; printf abcdefghij >&2", &o, &res);
	assert_string_equal(res.out, "0123456789");
	assert_string_equal(res.err, "abcdefghij");
	lm_proc_result_dispose(&res);

	/* Far more than a pipe holds: the child is never blocked, and it reaches its last command. */
	snprintf(script, sizeof(script), "printf 01234567890; head -c 1000000 /dev/zero; : >'%s'", marker);
	{
		const char *args[] = {"-c", script, NULL};
		assert_int_equal(lm_proc_run("/bin/sh", args, &o, &res), LM_ETOOLARGE);
	}
	lm_assert_error_has("/bin/sh: more than 10 bytes (the limit) on its standard output");
	assert_null(res.out);
	assert_null(res.err);
	assert_true(lm_test_exists(marker));

	{
		const char *args[] = {"-c", "printf 0123456789a >&2", NULL};
		assert_int_equal(lm_proc_run("/bin/sh", args, &o, &res), LM_ETOOLARGE);
	}
	lm_assert_error_has("more than 10 bytes (the limit) on its standard error");
	free(marker);
}

/* A name is looked for on PATH, in its order; a path is checked; only executable files count. */
static void test_find_program(void **state)
{
	children *c = *state;
	char *first = children_path(c, "first"), *second = children_path(c, "second"), *p = NULL, *path_was, *want;
	char path[2 * PATH_MAX + 8];
	int rc;

	assert_int_equal(lm_test_mkdir_p(first, 0700), 0);
	assert_int_equal(lm_test_mkdir_p(second, 0700), 0);
	want = lm_test_join(second, "lm-tool");
	lm_test_write_text(want, "#!/bin/sh\n");
	assert_int_equal(chmod(want, 0755), 0);
	p = lm_test_join(first, "lm-tool"); /* earlier on PATH, but not executable */
	lm_test_write_text(p, "#!/bin/sh\n");
	assert_int_equal(chmod(p, 0644), 0);
	free(p);
	path_was = strdup(getenv("PATH") != NULL ? getenv("PATH") : "");
	snprintf(path, sizeof(path), "%s::%s", first, second);
	setenv("PATH", path, 1);
	rc = lm_proc_find_program("lm-tool", &p);
	setenv("PATH", path_was, 1); /* before any assertion: the later cases run with ours */
	assert_int_equal(rc, 0);
	assert_string_equal(p, want);
	free(p);

	lm_assert_ok(lm_proc_find_program("sh", &p));
	lm_assert_contains(p, "/sh");
	free(p);
	lm_assert_ok(lm_proc_find_program("/bin/sh", &p));
	assert_string_equal(p, "/bin/sh");
	free(p);
	lm_assert_fails(lm_proc_find_program("lume-metal-no-such-program", &p), LM_ENOTFOUND);
	lm_assert_error_has("lume-metal-no-such-program: not found on PATH");
	assert_null(p);
	lm_assert_fails(lm_proc_find_program("/etc", &p), LM_ENOTFOUND);
	lm_assert_error_has("/etc: no such executable file");
	lm_assert_fails(lm_proc_find_program("", &p), LM_EINVALID);
	free(path_was);
	free(want);
	free(first);
	free(second);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exit_codes),
		cmocka_unit_test(test_output_captured),
		cmocka_unit_test(test_stdin_is_dev_null),
		cmocka_unit_test(test_child_signals),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test_setup_teardown(test_child_leaves_a_holder, children_setup, children_teardown),
		cmocka_unit_test_setup_teardown(test_cancel, children_setup, children_teardown),
		cmocka_unit_test(test_never_a_shell),
		cmocka_unit_test_setup_teardown(test_cannot_start, children_setup, children_teardown),
		cmocka_unit_test(test_secrets_dropped),
		cmocka_unit_test_setup_teardown(test_vm_owner_env, children_setup, children_teardown),
		cmocka_unit_test_setup_teardown(test_detached, children_setup, children_teardown),
		cmocka_unit_test_setup_teardown(test_spawn_spec, children_setup, children_teardown),
		cmocka_unit_test_setup_teardown(test_every_argument, children_setup, children_teardown),
		cmocka_unit_test_setup_teardown(test_output_limit, children_setup, children_teardown),
		cmocka_unit_test_setup_teardown(test_find_program, children_setup, children_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
