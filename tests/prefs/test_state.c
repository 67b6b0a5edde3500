/* The state journal (host/lib/core/state.h): creation, atomic save, lock, corrupt files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error_internal.h"
#include "fs.h"
#include "state.h"
#include "lm_test.h"

typedef struct {
	char *tmp;
	char *dir; /* the state dir: tmp/state (not created yet) */
	lm_context *ctx;
} fixture;

static int setup(void **state)
{
	lm_options opts = LM_OPTIONS_INIT;
	fixture *f = calloc(1, sizeof(*f));

	f->tmp = lm_test_tmpdir("prefs");
	f->dir = lm_test_join(f->tmp, "state");
	opts.state_dir = f->dir;
	lm_assert_ok(lm_context_new(&f->ctx, &opts));
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;

	lm_context_free(f->ctx);
	lm_test_rmtree(f->tmp);
	free(f->dir);
	free(f->tmp);
	free(f);
	return 0;
}

static int count_copies(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)) != NULL)
		n += strncmp(de->d_name, "state.json.corrupt-", 19) == 0;
	closedir(d);
	return n;
}

static void test_fresh_journal_is_created_private(void **state)
{
	fixture *f = *state;
	lm_state *st;
	struct stat sb;
	char *path = lm_test_join(f->dir, "state.json"), *text;
	cJSON *vm;

	lm_assert_ok(lm_state_open(&st, f->ctx));
	assert_int_equal(stat(f->dir, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0700);
	assert_string_equal(lm_state_file(st), path);
	assert_int_equal(cJSON_GetObjectItem(lm_state_doc(st), "schema")->valueint, 1);
	assert_null(lm_state_vm(st, "vm1", 0));
	vm = lm_state_vm(st, "vm1", 1);
	assert_non_null(vm);
	cJSON_AddStringToObject(vm, "bundle", "1.0");
	lm_assert_ok(lm_state_save(st));
	lm_state_close(st);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	text = lm_test_slurp(path, NULL);
	lm_assert_contains(text, "\"bundle\"");
	free(text);

	lm_assert_ok(lm_state_open(&st, f->ctx));
	assert_string_equal(cJSON_GetObjectItem(lm_state_vm(st, "vm1", 0), "bundle")->valuestring, "1.0");
	lm_state_close(st);
	lm_state_close(NULL);
	free(path);
}

static void test_readonly_creates_nothing(void **state)
{
	fixture *f = *state;
	lm_state *st;

	lm_assert_ok(lm_state_open_ex(&st, f->ctx, LM_STATE_READONLY, 0));
	assert_non_null(lm_state_doc(st));
	lm_assert_fails(lm_state_save(st), LM_EINVALID);
	lm_state_close(st);
	assert_false(lm_test_exists(f->dir));
}

static void test_lock_is_exclusive(void **state)
{
	fixture *f = *state;
	lm_state *a, *b;

	lm_assert_ok(lm_state_open(&a, f->ctx));
	/* flock locks belong to the open file description: a second open waits like another process. */
	lm_assert_fails(lm_state_open_ex(&b, f->ctx, 0, 0.2), LM_ELOCKED);
	lm_assert_error_has("state.lock");
	/* Readers take it shared: they wait for a writer too, and do not block each other. */
	lm_assert_fails(lm_state_open_ex(&b, f->ctx, LM_STATE_READONLY, 0.2), LM_ELOCKED);
	lm_state_close(a);
	lm_assert_ok(lm_state_open_ex(&a, f->ctx, LM_STATE_READONLY, 0.2));
	lm_assert_ok(lm_state_open_ex(&b, f->ctx, LM_STATE_READONLY, 0.2));
	lm_state_close(b);
	lm_state_close(a);
	lm_assert_ok(lm_state_open_ex(&b, f->ctx, 0, 0.2));
	lm_state_close(b);
}

static void check_corrupt(fixture *f, const char *content, int expect_code)
{
	char *path = lm_test_join(f->dir, "state.json"), *after;
	size_t len = 0;
	lm_state *st = NULL;

	lm_assert_ok(lm_fs_mkdir_private(f->dir));
	lm_test_write(path, content, strlen(content));
	assert_int_equal(lm_state_open(&st, f->ctx), expect_code);
	assert_null(st);
	after = lm_test_slurp(path, &len);
	assert_int_equal(len, strlen(content));
	assert_memory_equal(after, content, len);
	free(after);
	free(path);
}

static void test_corrupt_journal_is_kept_and_copied(void **state)
{
	fixture *f = *state;
	const char *msg;
	lm_state *st;

	check_corrupt(f, "{\"schema\": 1, \"vms\": {", LM_ECORRUPT);
	msg = lm_error_last()->message;
	lm_assert_contains(msg, "state.json");
	lm_assert_contains(msg, "copy");
	lm_assert_contains(msg, "state-format.md");
	assert_int_equal(count_copies(f->dir), 1);
	/* Trying again does not pile up copies of the same damage. */
	lm_assert_fails(lm_state_open(&st, f->ctx), LM_ECORRUPT);
	assert_int_equal(count_copies(f->dir), 1);
	/* Read-only: the same error, and no copy. */
	lm_assert_fails(lm_state_open_ex(&st, f->ctx, LM_STATE_READONLY, 0), LM_ECORRUPT);
	assert_int_equal(count_copies(f->dir), 1);

	check_corrupt(f, "[1, 2]", LM_ECORRUPT);
	check_corrupt(f, "{\"vms\": {}}", LM_ECORRUPT);
	check_corrupt(f, "{\"schema\": 1, \"vms\": []}", LM_ECORRUPT);
	check_corrupt(f, "{\"schema\": 1, \"preference\": 3}", LM_ECORRUPT);
	check_corrupt(f, "", LM_ECORRUPT);
	check_corrupt(f, "{\"schema\": 1} trailing", LM_ECORRUPT);
	check_corrupt(f, "{\"schema\": 7}", LM_EUNSUPPORTED);
	lm_assert_error_has("newer");
}

static void test_state_dir_writable_by_others_is_refused(void **state)
{
	fixture *f = *state;
	lm_state *st;

	lm_assert_ok(lm_fs_mkdir_private(f->dir));
	assert_int_equal(chmod(f->dir, 0777), 0);
	lm_assert_fails(lm_state_open(&st, f->ctx), LM_EINVALID);
	lm_assert_error_has("chmod 700");
}

static void test_state_path(void **state)
{
	fixture *f = *state;
	char *p = NULL;

	lm_assert_fails(lm_state_path(f->ctx, "../x", &p), LM_EINVALID);
	lm_assert_fails(lm_state_path(f->ctx, "a/b", &p), LM_EINVALID);
	lm_assert_ok(lm_state_path(f->ctx, "known_hosts", &p));
	lm_assert_contains(p, "/state/known_hosts");
	assert_true(lm_test_exists(f->dir));
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fresh_journal_is_created_private, setup, teardown),
		cmocka_unit_test_setup_teardown(test_readonly_creates_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_is_exclusive, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_journal_is_kept_and_copied, setup, teardown),
		cmocka_unit_test_setup_teardown(test_state_dir_writable_by_others_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_state_path, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
