/* local install and local env through the library (host/lib/local/image.c, local_image.h): what
 * the two text forms say for a prefix that needs quoting (read back by sh itself), the values that
 * cannot be exported as lines, and the refusals that come before anything is written. The whole
 * commands, with the probe loading the shim, are tests/e2e/local_image.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "lume-metal.h"
#include "lm_test.h"

static lm_context *context(void)
{
	lm_options opts;
	lm_context *ctx;

	lm_options_init(&opts, LM_OPTIONS_VERSION);
	opts.bundle_dir = LM_TEST_BUNDLE_DIR;
	lm_assert_ok(lm_context_new(&ctx, &opts));
	return ctx;
}

static char *installed(const char *tmp, const char *name)
{
	lm_local_install_result r;
	lm_context *ctx = context();
	char *prefix = lm_test_join(tmp, name);

	assert_int_equal(lm_test_mkdir_p(prefix, 0755), 0);
	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	lm_assert_ok(lm_local_install(ctx, prefix, &r));
	assert_true(r.changed);
	lm_context_free(ctx);
	return prefix;
}

/* A prefix with a quote, a space, a dollar and a backquote: sh reads back exactly the value. */
static void test_sh_form_reads_back(void **state)
{
	char *tmp = lm_test_tmpdir("local-image"), *prefix, *text, *file, *want, script[512];
	const char *name, *value;
	lm_local_env *env;
	lm_test_result r;
	size_t i;

	(void)state;
	chmod(tmp, 0755);
	prefix = installed(tmp, "it's a $HOME `x`");
	lm_assert_ok(lm_local_env_open(&env, prefix, NULL, "/records dir"));
	lm_assert_ok(lm_local_env_format(env, LM_LOCAL_ENV_SH, &text));
	file = lm_test_join(tmp, "env.sh");
	lm_test_write_text(file, text);
	char *const argv[] = { "/bin/sh", "-c", script, file, NULL };
	for (i = 0; i < lm_local_env_count(env); i++) {
		lm_assert_ok(lm_local_env_entry(env, i, &name, &value));
		if (strcmp(name, "PATH") == 0)
			continue;
		snprintf(script, sizeof(script), ". \"$0\" && printf %%s \"$%s\"", name);
		lm_test_run(&r, argv, NULL, NULL);
		assert_int_equal(r.status, 0);
		assert_string_equal(r.out, value);
	}
	/* PATH: the installed tools first, then the step's own. */
	{
		char *const path_argv[] = { "/bin/sh", "-c", "PATH=/step/bin; . \"$0\" && printf %s \"$PATH\"", file, NULL };

		lm_test_run(&r, path_argv, NULL, NULL);
		assert_int_equal(r.status, 0);
		want = malloc(strlen(prefix) + 128);
		assert_non_null(want);
		snprintf(want, strlen(prefix) + 128, "%s/lib/lume-metal/current:/opt/homebrew/bin:/usr/local/bin:/step/bin",
		    prefix);
		assert_string_equal(r.out, want);
		free(want);
	}
	lm_assert_ok(lm_local_env_entry(env, 0, &name, &value));
	assert_string_equal(name, "LD_PRELOAD");
	lm_assert_contains(text, "export LUME_METAL_RECORD_DIR='/records dir'\n");
	lm_free(text);
	/* The runner's form: NAME=value lines as they are, the injection under its own name. */
	lm_assert_ok(lm_local_env_format(env, LM_LOCAL_ENV_GITHUB, &text));
	lm_assert_contains(text, "\nLUME_METAL_RECORD_DIR=/records dir\n");
	lm_assert_not_contains(text, "\nLD_PRELOAD=");
	assert_int_equal(strncmp(text, "LUME_METAL_INJECT=LD_PRELOAD=", strlen("LUME_METAL_INJECT=LD_PRELOAD=")), 0);
	lm_free(text);
	lm_local_env_free(env);
	free(file);
	free(prefix);
	lm_test_rmtree(tmp);
	free(tmp);
}

/* A path with a line break would be two lines for sh's reader of $GITHUB_ENV: refused, naming it. */
static void test_line_break_refused(void **state)
{
	char *tmp = lm_test_tmpdir("local-image"), *prefix;
	lm_local_env *env = NULL;

	(void)state;
	chmod(tmp, 0755);
	prefix = installed(tmp, "two\nlines");
	lm_assert_fails(lm_local_env_open(&env, prefix, NULL, NULL), LM_EINVALID);
	lm_assert_error_has("LD_PRELOAD's value holds a control character (0x0a)");
	assert_null(env);
	free(prefix);
	lm_test_rmtree(tmp);
	free(tmp);
}

/* Refusals before anything is touched: an unset result size, a relative prefix or record
 * directory, nothing installed. */
static void test_refusals(void **state)
{
	char *tmp = lm_test_tmpdir("local-image"), *prefix = lm_test_join(tmp, "p");
	lm_local_install_result r;
	lm_local_env *env = NULL;
	lm_context *ctx = context();

	(void)state;
	memset(&r, 0, sizeof(r));
	lm_assert_fails(lm_local_install(ctx, prefix, &r), LM_EINVALID);
	lm_assert_error_has("the result's size is not set");
	r.size = sizeof(r);
	lm_assert_fails(lm_local_install(ctx, "usr/local", &r), LM_EINVALID);
	lm_assert_error_has("the prefix 'usr/local' is a relative path");
	lm_assert_fails(lm_local_env_open(&env, prefix, NULL, "records"), LM_EINVALID);
	lm_assert_error_has("the record directory 'records' is a relative path");
	lm_assert_fails(lm_local_env_open(&env, prefix, NULL, NULL), LM_ENOBUNDLE);
	lm_assert_error_has("nothing is installed at");
	assert_null(env);
	assert_false(lm_test_exists(prefix));
	assert_int_equal(lm_local_env_count(NULL), 0);
	lm_assert_fails(lm_local_env_format(NULL, LM_LOCAL_ENV_SH, (char *[]){ NULL }), LM_EINVALID);
	lm_local_env_free(NULL);
	lm_context_free(ctx);
	free(prefix);
	lm_test_rmtree(tmp);
	free(tmp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sh_form_reads_back),
		cmocka_unit_test(test_line_break_refused),
		cmocka_unit_test(test_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
