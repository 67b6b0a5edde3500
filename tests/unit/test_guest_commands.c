/* The shell commands lume-metal sends to a guest (host/lib/guestops/guest.c), run here under zsh with
 * its default options — the login shell of Cua's macOS images, where a glob that matches nothing
 * is an error — and under /bin/sh: each must do exactly the same under both. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guest_bundle.h"
#include "guest_machine.h"
#include "guest_shim.h"
#include "lm_test.h"

static const char *const shells[] = {LM_TEST_ZSH, "/bin/sh"};
#define NSHELLS (sizeof(shells) / sizeof(shells[0]))
#define SESSION_PATH "/usr/bin:/bin:/usr/sbin:/sbin" /* macOS sshd's default */

/* SHELL -c COMMAND as sshd runs it (HOME and sshd's PATH only, no rc files: ZDOTDIR is the
 * empty home), stdout into out. Returns the exit status. */
static int run_shell(const char *shell, const char *command, const char *home, char *out, size_t outcap)
{
	char env_home[PATH_MAX + 8], env_zdotdir[PATH_MAX + 12];
	char *argv[] = {(char *)shell, "-c", (char *)command, NULL};
	char *envp[] = {"PATH=" SESSION_PATH, env_home, env_zdotdir, NULL};
	static lm_test_result r;

	snprintf(env_home, sizeof(env_home), "HOME=%s", home);
	snprintf(env_zdotdir, sizeof(env_zdotdir), "ZDOTDIR=%s", home);
	lm_test_run(&r, argv, envp, NULL);
	fputs(r.err, stderr); /* the shell's own complaints, next to the check that fails */
	if (r.out_len >= outcap)
		fail_msg("%s -c '%s': %zu bytes of output, more than the test's %zu", shell, command, r.out_len, outcap - 1);
	memcpy(out, r.out, r.out_len + 1);
	return r.status;
}

typedef struct {
	char *home;
	lm_guest_facts facts;
	lm_install_place place; /* the guest's: facts' home */
	lm_bundle *bundle;
} fixture;

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));

	f->home = lm_test_tmpdir("guest-commands");
	snprintf(f->facts.os, sizeof(f->facts.os), "%s", "Linux"); /* the mv of this machine */
	snprintf(f->facts.home, sizeof(f->facts.home), "%s", f->home);
	f->bundle = calloc(1, sizeof(*f->bundle));
	snprintf(f->bundle->id, sizeof(f->bundle->id), "%s", "0.1.0-0123456789ab");
	if (lm_install_place_guest(&f->place, &f->facts) < 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;

	lm_test_rmtree(f->home);
	free(f->home);
	free(f->bundle);
	free(f);
	return 0;
}

static char *base_path(fixture *f, const char *rest)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s%s%s", f->home, LM_GUEST_BASE, rest[0] ? "/" : "", rest);
	return strdup(path);
}

static int exists(fixture *f, const char *rest)
{
	char *p = base_path(f, rest);
	int ok = lm_test_exists(p);

	free(p);
	return ok;
}

static void remove_base(fixture *f)
{
	char *p = base_path(f, "");

	lm_test_rmtree(p);
	free(p);
}

/* The base directory holds exactly these names (sorted, space separated). */
static void assert_entries(fixture *f, const char *shell, const char *want)
{
	char cmd[PATH_MAX + 64], out[1024], *base = base_path(f, "");

	snprintf(cmd, sizeof(cmd), "ls -A '%s' | sort | tr '\\n' ' '", base);
	free(base);
	assert_int_equal(run_shell(shell, cmd, f->home, out, sizeof(out)), 0);
	if (strcmp(out, want) != 0)
		fail_msg("%s: entries '%s', expected '%s'", shell, out, want);
}

/* A fresh guest: no staging directory to remove. This is where zsh's NOMATCH broke
 * `rm -rf .staging-*`. */
static void test_prepare_fresh_guest(void **state)
{
	fixture *f = *state;
	char *cmd = NULL, out[256];
	size_t i;

	lm_assert_ok(lm_guest_install_prepare_command(&f->place, ".staging-0.1.0-0123456789ab", &cmd));
	for (i = 0; i < NSHELLS; i++) {
		char *base = base_path(f, "");
		lm_test_rmtree(base);
		free(base);
		if (run_shell(shells[i], cmd, f->home, out, sizeof(out)) != 0)
			fail_msg("%s -c \"%s\" failed in a fresh guest", shells[i], cmd);
		assert_true(exists(f, ".staging-0.1.0-0123456789ab/profiles"));
	}
	free(cmd);
}

/* The prepare step removes nothing: what an interrupted install left goes by manifest after the
 * switch (guest_files.c), and nothing of the guest's is touched. */
static void test_prepare_removes_nothing(void **state)
{
	fixture *f = *state;
	char *cmd = NULL, out[256], *p;
	size_t i;

	lm_assert_ok(lm_guest_install_prepare_command(&f->place, ".staging-0.1.0-0123456789ab", &cmd));
	for (i = 0; i < NSHELLS; i++) {
		p = base_path(f, ".staging-0.0.9-old/profiles");
		assert_int_equal(lm_test_mkdir_p(p, 0755), 0);
		free(p);
		p = base_path(f, ".current.new");
		assert_int_equal(symlink("0.0.9-old", p), 0);
		free(p);
		p = base_path(f, "0.0.8-kept");
		assert_int_equal(lm_test_mkdir_p(p, 0755), 0);
		free(p);
		p = base_path(f, "notes.txt");
		lm_test_write(p, "mine", 4);
		free(p);
		p = base_path(f, ".staging-0.1.0-0123456789ab");
		lm_test_rmtree(p);
		free(p);
		assert_int_equal(run_shell(shells[i], cmd, f->home, out, sizeof(out)), 0);
		assert_entries(f, shells[i], ".current.new .staging-0.0.9-old .staging-0.1.0-0123456789ab 0.0.8-kept notes.txt ");
		remove_base(f);
	}
	free(cmd);
}

/* A place of the caller's (`local install`'s PREFIX/lib/lume-metal): only its own directory is
 * made, 0755 under any umask, and no note of parents is written (its parents are the caller's). */
static void test_prepare_other_place(void **state)
{
	fixture *f = *state;
	lm_install_place place;
	char dir[PATH_MAX], *cmd = NULL, out[256];
	struct stat st;
	size_t i;

	snprintf(dir, sizeof(dir), "%s/usr/lib/lume-metal", f->home);
	lm_assert_ok(lm_install_place_dir(&place, dir, "Linux", ".lock"));
	assert_string_equal(place.home, "");
	assert_string_equal(place.shown, dir);
	lm_assert_ok(lm_guest_install_prepare_command(&place, ".staging-0.1.0-0123456789ab", &cmd));
	for (i = 0; i < NSHELLS; i++) {
		char shell_cmd[PATH_MAX * 2];
		snprintf(dir, sizeof(dir), "%s/usr", f->home);
		lm_test_rmtree(dir);
		assert_int_equal(lm_test_mkdir_p(dir, 0755), 0);
		snprintf(dir, sizeof(dir), "%s/usr/lib", f->home);
		assert_int_equal(lm_test_mkdir_p(dir, 0755), 0);
		snprintf(shell_cmd, sizeof(shell_cmd), "umask 077; %s", cmd);
		if (run_shell(shells[i], shell_cmd, f->home, out, sizeof(out)) != 0)
			fail_msg("%s -c \"%s\" failed", shells[i], shell_cmd);
		snprintf(dir, sizeof(dir), "%s/usr/lib/lume-metal/.staging-0.1.0-0123456789ab/profiles", f->home);
		assert_int_equal(stat(dir, &st), 0);
		assert_int_equal(st.st_mode & 0777, 0755);
		snprintf(dir, sizeof(dir), "%s/usr/lib/lume-metal/" LM_GUEST_PARENTS_FILE, f->home);
		assert_false(lm_test_exists(dir));
		assert_false(exists(f, "")); /* nothing in the home's place */
	}
	free(cmd);
	lm_assert_fails(lm_install_place_dir(&place, "usr/lib/lume-metal", "Linux", NULL), LM_EINVALID);
	lm_assert_error_has("not an absolute path");
}

/* The staged bundle into place, `current` to it; older versions and leftovers are left to the
 * removal by manifest, and a file of the guest's stays. */
static void test_switch(void **state)
{
	fixture *f = *state;
	char *prepare = NULL, *sw = NULL, out[256], *p, link[64];
	size_t i;
	ssize_t n;

	lm_assert_ok(lm_guest_install_prepare_command(&f->place, ".staging-0.1.0-0123456789ab", &prepare));
	lm_assert_ok(lm_guest_install_switch_command(&f->place, f->bundle, ".staging-0.1.0-0123456789ab", &sw));
	for (i = 0; i < NSHELLS; i++) {
		p = base_path(f, "0.0.9-old");
		assert_int_equal(lm_test_mkdir_p(p, 0755), 0);
		free(p);
		p = base_path(f, "current");
		unlink(p);
		assert_int_equal(symlink("0.0.9-old", p), 0);
		free(p);
		assert_int_equal(run_shell(shells[i], prepare, f->home, out, sizeof(out)), 0);
		p = base_path(f, ".staging-other"); /* e.g. left by a concurrent, killed run */
		assert_int_equal(lm_test_mkdir_p(p, 0755), 0);
		free(p);
		p = base_path(f, ".staging-0.1.0-0123456789ab/manifest.json");
		lm_test_write(p, "{}", 2);
		free(p);
		p = base_path(f, "notes.txt");
		lm_test_write(p, "mine", 4);
		free(p);
		if (run_shell(shells[i], sw, f->home, out, sizeof(out)) != 0)
			fail_msg("%s -c \"%s\" failed", shells[i], sw);
		assert_entries(f, shells[i], ".staging-other 0.0.9-old 0.1.0-0123456789ab current notes.txt ");
		p = base_path(f, "current");
		n = readlink(p, link, sizeof(link) - 1);
		free(p);
		assert_true(n > 0);
		link[n] = '\0';
		assert_string_equal(link, "0.1.0-0123456789ab");
		assert_true(exists(f, "current/manifest.json"));
		remove_base(f);
	}
	free(prepare);
	free(sw);
}

/* A `current` that is not a link, or anything at the bundle's name, stops the switch: nothing of
 * the guest's is replaced or moved into. */
static void test_switch_refuses(void **state)
{
	fixture *f = *state;
	char *prepare = NULL, *sw = NULL, out[256], *p, local[PATH_MAX + 8];
	size_t i;

	lm_assert_ok(lm_guest_install_prepare_command(&f->place, ".staging-0.1.0-0123456789ab", &prepare));
	lm_assert_ok(lm_guest_install_switch_command(&f->place, f->bundle, ".staging-0.1.0-0123456789ab", &sw));
	for (i = 0; i < NSHELLS; i++) {
		assert_int_equal(run_shell(shells[i], prepare, f->home, out, sizeof(out)), 0);
		p = base_path(f, "current");
		lm_test_write(p, "mine", 4);
		free(p);
		assert_int_not_equal(run_shell(shells[i], sw, f->home, out, sizeof(out)), 0);
		/* A fresh home: the first install notes the parents it made, for rollback. */
		assert_entries(f, shells[i], ".parents-made .staging-0.1.0-0123456789ab current ");
		assert_int_equal(run_shell(shells[i], "cat \"$HOME/.local/share/lume-metal/.parents-made\"", f->home, out,
		    sizeof(out)), 0);
		assert_string_equal(out, " .local .local/share\n");
		p = base_path(f, "current");
		unlink(p);
		free(p);
		p = base_path(f, "0.1.0-0123456789ab/mine");
		assert_int_equal(lm_test_mkdir_p(p, 0755), 0);
		free(p);
		assert_int_not_equal(run_shell(shells[i], sw, f->home, out, sizeof(out)), 0);
		assert_entries(f, shells[i], ".parents-made .staging-0.1.0-0123456789ab 0.1.0-0123456789ab ");
		assert_false(exists(f, "0.1.0-0123456789ab/.staging-0.1.0-0123456789ab"));
		snprintf(local, sizeof(local), "%s/.local", f->home); /* the next shell's home fresh too */
		lm_test_rmtree(local);
	}
	free(prepare);
	free(sw);
}

/* The install path's components: a directory or nothing is fine; a link or anything else is
 * refused naming the path and what to do. */
static void test_base_refuse(void **state)
{
	static const lm_ssh_kind refused[] = {LM_SSH_KIND_LINK, LM_SSH_KIND_FILE, LM_SSH_KIND_FIFO, LM_SSH_KIND_CHAR,
		LM_SSH_KIND_BLOCK, LM_SSH_KIND_SOCKET, LM_SSH_KIND_UNKNOWN};
	size_t i;

	(void)state;
	lm_assert_ok(lm_guest_base_refuse("~/.local", LM_SSH_KIND_ABSENT));
	lm_assert_ok(lm_guest_base_refuse("~/.local", LM_SSH_KIND_DIR));
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		lm_assert_fails(lm_guest_base_refuse("~/.local/share", refused[i]), LM_EREMOTE);
		lm_assert_error_has("the guest's ~/.local/share is ");
		lm_assert_error_has(lm_ssh_kind_phrase(refused[i]));
		lm_assert_error_has("nothing was changed");
	}
	lm_assert_fails(lm_guest_base_refuse("~/.local/share/lume-metal", LM_SSH_KIND_LINK), LM_EREMOTE);
	lm_assert_error_has("follows no link");
	lm_assert_fails(lm_guest_base_refuse("~/.local", LM_SSH_KIND_FILE), LM_EREMOTE);
	lm_assert_error_has("is a regular file, not a directory");
	assert_string_equal(lm_ssh_kind_phrase(LM_SSH_KIND_FIFO), "a FIFO");
	assert_string_equal(lm_ssh_kind_phrase((lm_ssh_kind)99), lm_ssh_kind_phrase(LM_SSH_KIND_UNKNOWN));
}

/* Which entries of the install directory lume-metal may remove, and its upload's temporary names. */
static void test_entry_rules(void **state)
{
	lm_guest_removal r;
	char said[512];

	(void)state;
	assert_int_equal(lm_guest_entry_class("current", LM_SSH_KIND_LINK), 'l');
	assert_int_equal(lm_guest_entry_class(".current.new", LM_SSH_KIND_LINK), 'l');
	assert_int_equal(lm_guest_entry_class("current", LM_SSH_KIND_FILE), 0);
	assert_int_equal(lm_guest_entry_class("current", LM_SSH_KIND_DIR), 0);
	assert_int_equal(lm_guest_entry_class("0.1.0-0123456789ab", LM_SSH_KIND_DIR), 'd');
	assert_int_equal(lm_guest_entry_class(".staging-0.1.0-x-0011223344556677", LM_SSH_KIND_DIR), 'd');
	assert_int_equal(lm_guest_entry_class("notes.txt", LM_SSH_KIND_FILE), 0);
	assert_int_equal(lm_guest_entry_class("elsewhere", LM_SSH_KIND_LINK), 0);
	assert_int_equal(lm_guest_entry_class("pipe", LM_SSH_KIND_FIFO), 0);
	assert_int_equal(lm_guest_entry_class("activation", LM_SSH_KIND_DIR), 'a');
	assert_int_equal(lm_guest_entry_class("activation", LM_SSH_KIND_LINK), 0);
	assert_true(lm_guest_is_record("4242.json"));
	assert_true(lm_guest_is_record(".4242.tmp"));
	assert_false(lm_guest_is_record(".json"));
	assert_false(lm_guest_is_record("42x.json"));
	assert_false(lm_guest_is_record(".4242.json"));
	assert_false(lm_guest_is_record("notes.txt"));
	assert_true(lm_guest_is_upload_temp(".manifest.json.lm-0123456789abcdef", "manifest.json"));
	assert_false(lm_guest_is_upload_temp(".manifest.json.lm-0123456789abcde", "manifest.json"));
	assert_false(lm_guest_is_upload_temp(".manifest.json.lm-0123456789abcdeF", "manifest.json"));
	assert_false(lm_guest_is_upload_temp(".manifest.json.lm-0123456789abcdef0", "manifest.json"));
	assert_false(lm_guest_is_upload_temp("manifest.json.lm-0123456789abcdef", "manifest.json"));
	assert_false(lm_guest_is_upload_temp(".notes.lm-0123456789abcdef", "manifest.json"));
	/* The report: counts, then each entry left with why. */
	lm_guest_removal_init(&r);
	lm_guest_removal_describe(&r, said, sizeof(said));
	assert_string_equal(said, "removed nothing");
	r.files = 5;
	r.links = 1;
	r.dirs = 3;
	r.nleft = 1;
	lm_assert_ok(lm_buf_adds(&r.left, "~/x (not lume-metal's)"));
	lm_guest_removal_describe(&r, said, sizeof(said));
	assert_string_equal(said, "removed 5 files, 1 link and 3 directories of ~/.local/share/lume-metal; left: ~/x "
	    "(not lume-metal's)");
	lm_guest_removal_dispose(&r);
}

static void shim_env(fixture *f, lm_shim_env *se, const char *home)
{
	memset(se, 0, sizeof(*se));
	(void)f;
	snprintf(se->injection, sizeof(se->injection), "%s", "LM_TEST_INJECTED");
	snprintf(se->shim_path, sizeof(se->shim_path), "%s/%s/current/lib shim*.so", home, LM_GUEST_BASE);
	snprintf(se->probe_path, sizeof(se->probe_path), "%s/%s/current/metal-capabilities", home, LM_GUEST_BASE);
	se->nenv = 1;
	se->env[0].name = "LUME_METAL_APPLE_FAMILY_MAX";
	snprintf(se->env[0].value, sizeof(se->env[0].value), "%s", "1009");
}

/* run's PATH: the bundle's tools, Homebrew's directories, then the session's PATH. */
static void test_run_path(void **state)
{
	fixture *f = *state;
	const char *argv[] = {"printenv", "PATH"};
	const char *home = "/Users/a b";
	char *cmd = NULL, out[1024], want[1024];
	lm_shim_env se;
	size_t i;

	shim_env(f, &se, home);
	lm_assert_ok(lm_shim_command(&se, 1, argv, 2, &cmd));
	snprintf(want, sizeof(want), "%s/%s/current:/opt/homebrew/bin:/usr/local/bin:" SESSION_PATH "\n", home,
	    LM_GUEST_BASE);
	for (i = 0; i < NSHELLS; i++) {
		assert_int_equal(run_shell(shells[i], cmd, f->home, out, sizeof(out)), 0);
		if (strcmp(out, want) != 0)
			fail_msg("%s: PATH %s, expected %s", shells[i], out, want);
	}
	free(cmd);
}

/* Every argument and variable reaches the workload as it was given: no glob, expansion or
 * splitting by either shell. */
static void test_run_arguments_verbatim(void **state)
{
	fixture *f = *state;
	const char *argv[] = {"printf", "[%s]\\n", "a b", "*", "/nonexistent-*", ".staging-*", "$HOME", "~",
	    "~lume", "x=y", "it's", "", "{a,b}", "!", "#c", "`id`", "$(id)", ";", "&", "a\tb", "line\nbreak",
	    "=ls", "^x", "%1", "-"};
	const char *env_argv[] = {"printenv", "LM_TEST_INJECTED", "LUME_METAL_APPLE_FAMILY_MAX"};
	char *cmd = NULL, out[2048], want[2048];
	size_t i, k, n = 0, argc = sizeof(argv) / sizeof(argv[0]);
	lm_shim_env se;

	for (k = 2; k < argc; k++)
		n += (size_t)snprintf(want + n, sizeof(want) - n, "[%s]\n", argv[k]);
	shim_env(f, &se, "/Users/lume");
	lm_assert_ok(lm_shim_command(&se, 1, argv, argc, &cmd));
	for (i = 0; i < NSHELLS; i++) {
		assert_int_equal(run_shell(shells[i], cmd, f->home, out, sizeof(out)), 0);
		if (strcmp(out, want) != 0)
			fail_msg("%s -c \"%s\" printed:\n%s\nexpected:\n%s", shells[i], cmd, out, want);
	}
	free(cmd);
	cmd = NULL;
	lm_assert_ok(lm_shim_command(&se, 1, env_argv, 3, &cmd));
	snprintf(want, sizeof(want), "/Users/lume/%s/current/lib shim*.so\n1009\n", LM_GUEST_BASE);
	for (i = 0; i < NSHELLS; i++) {
		assert_int_equal(run_shell(shells[i], cmd, f->home, out, sizeof(out)), 0);
		assert_string_equal(out, want);
	}
	free(cmd);
}

/* Facts that are not facts (issue 49, 9): the error says what the guest did answer and what its
 * shell said, never an empty cause. */
static void test_facts_refused_say_what_came(void **state)
{
	lm_guest_facts facts;
	char out[256];

	(void)state;
	snprintf(out, sizeof(out), "Welcome to the lab Mac\narm64\n26.5.2\n\nnot-a-path\n\n\n\n");
	lm_assert_fails(lm_guest_facts_parse(out, "zsh: permission denied: /Users/lume/.zshenv\nmore", &facts, NULL, 0),
	    LM_EREMOTE);
	lm_assert_error_has("uname -s answered \"Welcome to the lab Mac\"");
	lm_assert_error_has("$HOME \"not-a-path\"");
	lm_assert_error_has("its shell said: zsh: permission denied: /Users/lume/.zshenv");
	snprintf(out, sizeof(out), "\n");
	lm_assert_fails(lm_guest_facts_parse(out, "", &facts, NULL, 0), LM_EREMOTE);
	lm_assert_error_has("uname -s answered \"\" and $HOME \"\" (an absolute path was expected)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_prepare_fresh_guest, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prepare_removes_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prepare_other_place, setup, teardown),
		cmocka_unit_test_setup_teardown(test_switch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_switch_refuses, setup, teardown),
		cmocka_unit_test(test_base_refuse),
		cmocka_unit_test(test_entry_rules),
		cmocka_unit_test_setup_teardown(test_run_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_arguments_verbatim, setup, teardown),
		cmocka_unit_test(test_facts_refused_say_what_came),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
