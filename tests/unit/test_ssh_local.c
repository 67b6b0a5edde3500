/* The local transport (host/lib/ssh/local.c, ssh_local.h): the same calls as an SSH session, served
 * on this machine -- commands as sshd runs them (the login shell, in $HOME, the shim's variables
 * and the guest password not passed on), their exit status, the command timeout ending the whole
 * group, and the file operations with the SFTP calls' contracts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lume-metal.h"
#include "lm_test.h"
#include "sha256.h"
#include "ssh_files.h"
#include "ssh_local.h"
#include "str.h"

typedef struct {
	char *dir;
	char *old_home;
	lm_context *ctx;
	lm_ssh *ssh;
} fixture;

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));
	lm_options o;

	f->dir = lm_test_tmpdir("ssh-local");
	f->old_home = getenv("HOME") != NULL ? strdup(getenv("HOME")) : NULL;
	setenv("HOME", f->dir, 1);
	lm_assert_ok(lm_options_init(&o, LM_OPTIONS_VERSION));
	o.command_timeout = 30;
	lm_assert_ok(lm_context_new(&f->ctx, &o));
	lm_assert_ok(lm_ssh_open_local(&f->ssh, f->ctx));
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;

	lm_ssh_free(f->ssh);
	lm_context_free(f->ctx);
	if (f->old_home != NULL)
		setenv("HOME", f->old_home, 1);
	lm_test_rmtree(f->dir);
	free(f->old_home);
	free(f->dir);
	free(f);
	return 0;
}

/* stdout and stderr apart, the exit status as the command's, the start in $HOME. */
static void test_exec(void **state)
{
	fixture *f = *state;
	char *out = NULL, *err = NULL, want[4200];
	int status = -1;

	lm_assert_ok(lm_ssh_exec_capture(f->ssh, "pwd -P; echo oops >&2; exit 3", 4096, &out, &err, &status));
	assert_int_equal(status, 3);
	snprintf(want, sizeof(want), "%s\n", f->dir);
	assert_string_equal(out, want);
	assert_string_equal(err, "oops\n");
	lm_free(out);
	lm_free(err);
	/* A command killed by a signal: 255, as over SSH. */
	lm_assert_ok(lm_ssh_exec_capture(f->ssh, "kill -KILL $$", 4096, &out, NULL, &status));
	assert_int_equal(status, 255);
	lm_free(out);
	/* More than the limit: an error, never a cut result. */
	lm_assert_fails(lm_ssh_exec_capture(f->ssh, "head -c 10000 /dev/zero", 100, &out, NULL, &status), LM_ETOOLARGE);
	assert_null(out);
}

/* The shim's variables and the guest password never reach a command; the rest of ours does. */
static void test_environment(void **state)
{
	fixture *f = *state;
	lm_ssh *ssh = NULL;
	char *out = NULL;
	int status;

	setenv("LD_PRELOAD", "/nonexistent/shim.so", 1);
	setenv("DYLD_INSERT_LIBRARIES", "/nonexistent/shim.dylib", 1);
	setenv("LUME_METAL_APPLE_FAMILY_MAX", "1009", 1);
	setenv("LUME_METAL_SSH_PASSWORD", "secret", 1);
	setenv("LM_TEST_KEPT", "kept", 1);
	lm_assert_ok(lm_ssh_open_local(&ssh, f->ctx));
	unsetenv("LD_PRELOAD");
	unsetenv("DYLD_INSERT_LIBRARIES");
	unsetenv("LUME_METAL_APPLE_FAMILY_MAX");
	unsetenv("LUME_METAL_SSH_PASSWORD");
	lm_assert_ok(lm_ssh_exec_capture(ssh, "env", 65536, &out, NULL, &status));
	assert_int_equal(status, 0);
	lm_assert_not_contains(out, "LD_PRELOAD=");
	lm_assert_not_contains(out, "DYLD_INSERT_LIBRARIES=");
	lm_assert_not_contains(out, "LUME_METAL_");
	lm_assert_not_contains(out, "secret");
	lm_assert_contains(out, "LM_TEST_KEPT=kept");
	lm_free(out);
	lm_ssh_free(ssh);
	unsetenv("LM_TEST_KEPT");
}

/* pid ends within LM_TEST_RUN_LIMIT seconds: no such process, or a zombie. */
static int gone_or_zombie(pid_t pid)
{
	struct timespec tick = {0, 10 * 1000 * 1000};
	char stat_path[64], *st;
	int i, done;

	snprintf(stat_path, sizeof(stat_path), "/proc/%ld/stat", (long)pid);
	for (i = 0; i < LM_TEST_RUN_LIMIT * 100; i++) {
		st = lm_test_slurp(stat_path, NULL);
		done = st == NULL || strstr(st, ") Z ") != NULL;
		free(st);
		if (done)
			return 1;
		nanosleep(&tick, NULL);
	}
	return 0;
}

/* The command timeout ends the command and what it started (its process group). */
static void test_timeout(void **state)
{
	fixture *f = *state;
	char *pidfile = lm_test_join(f->dir, "child.pid"), *cmd, *pid;
	int status;

	cmd = lm_format("sleep 300 & echo $! >%s; wait", pidfile);
	lm_assert_ok(lm_ssh_set_command_timeout(f->ssh, 0.5));
	lm_assert_fails(lm_ssh_exec(f->ssh, cmd, NULL, NULL, &status), LM_ETIMEOUT);
	pid = lm_test_slurp(pidfile, NULL);
	assert_non_null(pid);
	/* SIGKILL to the group was sent before the call returned; the child's end follows it. Wait for
	 * that (gone, or a zombie init has not reaped yet), bounded only against a hang. */
	assert_true(gone_or_zombie((pid_t)atol(pid)));
	free(pid);
	free(cmd);
	free(pidfile);
}

/* upload, sha256, stat, listing, reading and removing, with the SFTP calls' contracts. */
static void test_files(void **state)
{
	fixture *f = *state;
	char *path = lm_test_join(f->dir, "a.txt"), *sub = lm_test_join(f->dir, "d"), *link = lm_test_join(f->dir, "l");
	char **names = NULL, *data = NULL, *back;
	uint8_t digest[32], want[32];
	lm_ssh_stat_info st;
	size_t len;

	lm_assert_ok(lm_ssh_upload(f->ssh, "hello\n", 6, path, 0640));
	back = lm_test_slurp(path, NULL);
	assert_string_equal(back, "hello\n");
	free(back);
	lm_assert_ok(lm_ssh_stat(f->ssh, path, &st));
	assert_true(st.exists && !st.is_dir && st.size == 6 && st.mode == 0640);
	lm_assert_ok(lm_ssh_sha256(f->ssh, path, digest));
	lm_sha256("hello\n", 6, want);
	assert_memory_equal(digest, want, 32);
	lm_assert_ok(lm_ssh_read_file(f->ssh, path, 6, &data, &len));
	assert_int_equal(len, 6);
	free(data);
	lm_assert_fails(lm_ssh_read_file(f->ssh, path, 5, &data, &len), LM_ETOOLARGE);
	assert_int_equal(symlink(path, link), 0);
	lm_assert_fails(lm_ssh_read_file(f->ssh, link, 100, &data, &len), LM_EREMOTE); /* not followed */
	lm_assert_ok(lm_ssh_stat(f->ssh, link, &st));
	assert_true(st.exists && st.is_link);
	assert_int_equal(mkdir(sub, 0700), 0);
	lm_assert_ok(lm_ssh_list_dir(f->ssh, f->dir, 10, &names));
	assert_non_null(names);
	assert_non_null(names[0]);
	assert_non_null(names[1]);
	assert_non_null(names[2]);
	assert_null(names[3]);
	lm_strv_free(names);
	lm_assert_fails(lm_ssh_list_dir(f->ssh, f->dir, 2, &names), LM_ETOOLARGE);
	lm_assert_ok(lm_ssh_remove(f->ssh, sub));
	lm_assert_ok(lm_ssh_remove(f->ssh, path));
	lm_assert_ok(lm_ssh_remove(f->ssh, path)); /* absent is fine */
	lm_assert_ok(lm_ssh_stat(f->ssh, path, &st));
	assert_false(st.exists);
	lm_assert_fails(lm_ssh_sha256(f->ssh, path, digest), LM_ENOTFOUND);
	lm_assert_fails(lm_ssh_read_file(f->ssh, path, 100, &data, &len), LM_ENOTFOUND);
	free(path);
	free(sub);
	free(link);
}

/* As over SFTP: only a regular file is hashed -- a FIFO would block the read, a link is not
 * followed. */
static void test_sha256_regular_only(void **state)
{
	fixture *f = *state;
	char fifo[PATH_MAX], link[PATH_MAX], file[PATH_MAX];
	uint8_t digest[32];

	snprintf(file, sizeof(file), "%s/file", f->dir);
	snprintf(fifo, sizeof(fifo), "%s/fifo", f->dir);
	snprintf(link, sizeof(link), "%s/link", f->dir);
	lm_test_write(file, "x", 1);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(symlink(file, link), 0);
	lm_assert_fails(lm_ssh_sha256(f->ssh, fifo, digest), LM_EREMOTE);
	lm_assert_error_has("is not a regular file");
	lm_assert_fails(lm_ssh_sha256(f->ssh, link, digest), LM_EREMOTE);
	lm_assert_ok(lm_ssh_sha256(f->ssh, file, digest));
}

/* Without a context (`local env` verifying its installed bundle): the file calls, and no command. */
static void test_files_only_session(void **state)
{
	fixture *f = *state;
	lm_ssh_stat_info st;
	lm_ssh *files = NULL;
	char path[PATH_MAX], *out = NULL, *err = NULL;
	int status = 0;

	snprintf(path, sizeof(path), "%s/f", f->dir);
	lm_test_write(path, "x", 1);
	lm_assert_ok(lm_ssh_open_local(&files, NULL));
	lm_assert_ok(lm_ssh_stat(files, path, &st));
	assert_true(st.exists);
	lm_assert_fails(lm_ssh_exec_capture(files, "true", 1024, &out, &err, &status), LM_EINVALID);
	lm_assert_error_has("serves files only");
	assert_null(out);
	lm_ssh_free(files);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_exec, setup, teardown),
		cmocka_unit_test_setup_teardown(test_environment, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sha256_regular_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_files_only_session, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
