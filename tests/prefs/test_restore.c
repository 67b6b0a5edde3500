/* The preference manager (lm_host_pref_*): record once, restore exactly, conflicts, crashes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "error_internal.h"
#include "prefs_store.h"
#include "record.h"
#include "lm_test.h"

#define DOMAIN "com.apple.gpusw.ParavirtualizedGraphics"
#define KEY "ForceUnrestrictedDeviceFeatureLevel"

typedef struct {
	char *tmp;
	char *prefs;  /* tmp/prefs (not created) */
	char *file;
	char *state;  /* tmp/state */
	lm_context *ctx;
	lm_prefs_store *store;
	lm_pref_setting want;
} fixture;

static lm_context *new_ctx(fixture *f, int dry_run, int force)
{
	lm_options opts;
	lm_context *ctx;

	assert_int_equal(lm_options_init(&opts, LM_OPTIONS_VERSION), 0);
	opts.prefs_dir = f->prefs;
	opts.state_dir = f->state;
	opts.dry_run = dry_run;
	opts.force = force;
	lm_assert_ok(lm_context_new(&ctx, &opts));
	return ctx;
}

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));

	f->tmp = lm_test_tmpdir("prefs");
	f->prefs = lm_test_join(f->tmp, "prefs");
	f->file = lm_test_join(f->prefs, DOMAIN ".plist");
	f->state = lm_test_join(f->tmp, "state");
	f->ctx = new_ctx(f, 0, 0);
	lm_assert_ok(lm_prefs_store_open_plist(&f->store, f->prefs, DOMAIN));
	lm_host_pref_default(&f->want);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;

	lm_prefs_store_free(f->store);
	lm_context_free(f->ctx);
	lm_test_rmtree(f->tmp);
	free(f->state);
	free(f->file);
	free(f->prefs);
	free(f->tmp);
	free(f);
	return 0;
}

/* The whole file as a dictionary (NULL when absent). */
static plist_t file_dict(fixture *f)
{
	size_t len;
	char *data = lm_test_slurp(f->file, &len);
	plist_t p;

	if (data == NULL)
		return NULL;
	lm_assert_ok(lm_plist_read(data, len, f->file, &p, NULL));
	free(data);
	return p;
}

static void put_file(fixture *f, plist_t dict)
{
	char *bin = NULL;
	uint32_t len = 0;

	mkdir(f->prefs, 0700);
	plist_to_bin(dict, &bin, &len);
	lm_test_write(f->file, bin, len);
	lm_plist_mem_free(bin);
}

/* enable then disable from `prior` (NULL dict: no file; dir_too: no directory either). */
static void round_trip(fixture *f, plist_t prior, int dir_too)
{
	lm_host_pref_info info;
	plist_t after, t = plist_new_bool(1);

	if (prior != NULL)
		put_file(f, prior);
	else if (!dir_too)
		assert_int_equal(mkdir(f->prefs, 0700), 0);
	lm_assert_ok(lm_host_pref_enable(f->ctx, &f->want, &info));
	assert_int_equal(info.changed, 1);
	assert_int_equal(info.recorded, 1);
	assert_int_equal(info.matches, 1);
	assert_string_equal(info.value, "true (bool)");
	after = file_dict(f);
	assert_non_null(after);
	assert_true(lm_pref_plist_equal(plist_dict_get_item(after, KEY), t));
	plist_free(after);
	/* A second enable confirms and changes nothing. */
	lm_assert_ok(lm_host_pref_enable(f->ctx, &f->want, &info));
	assert_int_equal(info.changed, 0);
	assert_int_equal(info.recorded, 1);

	lm_assert_ok(lm_host_pref_disable(f->ctx, &info));
	assert_int_equal(info.changed, 1);
	assert_int_equal(info.recorded, 0);
	after = file_dict(f);
	if (prior == NULL) {
		assert_null(after);
		assert_int_equal(lm_test_exists(f->prefs), !dir_too);
	} else {
		assert_true(lm_pref_plist_equal(prior, after));
	}
	plist_free(after);
	/* A second disable has nothing to do. */
	lm_assert_ok(lm_host_pref_disable(f->ctx, &info));
	assert_int_equal(info.changed, 0);
	plist_free(t);
}

static void test_every_prior_state_is_restored(void **state)
{
	fixture *f = *state;
	plist_t d;

	round_trip(f, NULL, 1);
	round_trip(f, NULL, 0);
	d = plist_new_dict();
	plist_dict_set_item(d, "Other", plist_new_string("kept"));
	round_trip(f, d, 0); /* file without the key */
	plist_dict_set_item(d, KEY, plist_new_bool(0));
	round_trip(f, d, 0); /* key false */
	plist_dict_set_item(d, KEY, plist_new_uint(1));
	round_trip(f, d, 0); /* key integer 1 */
	plist_dict_set_item(d, KEY, plist_new_string("YES"));
	round_trip(f, d, 0); /* key string "YES" */
	plist_free(d);
}

static void test_already_true_is_left_unrecorded(void **state)
{
	fixture *f = *state;
	lm_host_pref_info info;
	plist_t d = plist_new_dict();

	plist_dict_set_item(d, KEY, plist_new_bool(1));
	put_file(f, d);
	lm_assert_ok(lm_host_pref_enable(f->ctx, &f->want, &info));
	assert_int_equal(info.changed, 0);
	assert_int_equal(info.recorded, 0);
	assert_int_equal(info.matches, 1);
	lm_assert_ok(lm_host_pref_disable(f->ctx, &info));
	assert_int_equal(info.changed, 0);
	plist_free(d);
	d = file_dict(f);
	assert_non_null(plist_dict_get_item(d, KEY));
	plist_free(d);
}

static void test_someone_else_changed_it(void **state)
{
	fixture *f = *state;
	lm_host_pref_info info;
	lm_context *forced;
	plist_t d = plist_new_dict(), now, mine = plist_new_bool(0);

	plist_dict_set_item(d, KEY, plist_new_uint(1));
	put_file(f, d);
	lm_assert_ok(lm_host_pref_enable(f->ctx, &f->want, &info));
	lm_assert_ok(lm_prefs_store_set(f->store, KEY, mine));
	lm_assert_fails(lm_host_pref_disable(f->ctx, &info), LM_ECONFLICT);
	lm_assert_error_has("false (bool)");
	lm_assert_error_has("true (bool)");
	lm_assert_error_has("1 (integer)");
	lm_assert_error_has("needs force"); /* a fact; the tool names --force */
	lm_assert_not_contains(lm_error_last()->message, "--");
	now = file_dict(f);
	assert_true(lm_pref_plist_equal(plist_dict_get_item(now, KEY), mine));
	plist_free(now);
	/* Their value stays, the record stays; --force restores the original. */
	lm_assert_ok(lm_host_pref_status(f->ctx, NULL, &info));
	assert_int_equal(info.recorded, 1);
	forced = new_ctx(f, 0, 1);
	lm_assert_ok(lm_host_pref_disable(forced, &info));
	assert_int_equal(info.changed, 1);
	lm_context_free(forced);
	now = file_dict(f);
	assert_true(lm_pref_plist_equal(now, d));
	plist_free(now);
	plist_free(mine);
	plist_free(d);
}

static void test_crash_between_record_and_write_converges(void **state)
{
	fixture *f = *state;
	lm_host_pref_info info;
	lm_state *st;
	plist_t d = plist_new_dict(), orig = plist_new_bool(0), now;

	plist_dict_set_item(d, KEY, plist_copy(orig));
	put_file(f, d);
	/* A run recorded the original and was killed before writing the preference. */
	lm_assert_ok(lm_host_pref_enable(f->ctx, &f->want, &info));
	lm_assert_ok(lm_prefs_store_set(f->store, KEY, orig));
	/* The next disable sees the original in place and just drops the record. */
	lm_assert_ok(lm_host_pref_disable(f->ctx, &info));
	assert_int_equal(info.recorded, 0);
	lm_assert_ok(lm_journal_open_rw(&st, f->ctx));
	assert_false(lm_host_pref_recorded(st));
	lm_state_close(st);
	/* Same crash, then the next enable writes and keeps the first record. */
	lm_assert_ok(lm_host_pref_enable(f->ctx, &f->want, &info));
	lm_assert_ok(lm_prefs_store_set(f->store, KEY, orig));
	lm_assert_ok(lm_host_pref_enable(f->ctx, &f->want, &info));
	assert_int_equal(info.changed, 1);
	assert_string_equal(info.original, "false (bool)");
	lm_assert_ok(lm_host_pref_disable(f->ctx, &info));
	now = file_dict(f);
	assert_true(lm_pref_plist_equal(now, d));
	plist_free(now);
	plist_free(orig);
	plist_free(d);
}

static void test_managed_preference_is_not_fought(void **state)
{
	fixture *f = *state;
	lm_host_pref_info info;
	char *mdir = lm_test_join(f->prefs, "managed"), *mfile = lm_test_join(mdir, DOMAIN ".plist");
	plist_t d = plist_new_dict();
	char *bin = NULL;
	uint32_t len = 0;

	assert_int_equal(mkdir(f->prefs, 0700), 0);
	assert_int_equal(mkdir(mdir, 0700), 0);
	plist_dict_set_item(d, KEY, plist_new_bool(0));
	plist_to_bin(d, &bin, &len);
	lm_test_write(mfile, bin, len);
	lm_plist_mem_free(bin);
	lm_assert_fails(lm_host_pref_enable(f->ctx, &f->want, &info), LM_EMANAGED);
	assert_int_equal(info.managed, 1);
	assert_string_equal(info.managed_value, "false (bool)");
	lm_assert_error_has("configuration profile");
	assert_false(lm_test_exists(f->file));
	lm_assert_ok(lm_host_pref_status(f->ctx, NULL, &info));
	assert_int_equal(info.managed, 1);
	/* Forced to what we want: nothing to fight. */
	plist_dict_set_item(d, KEY, plist_new_bool(1));
	bin = NULL; /* plist_to_bin() refuses a non-NULL output pointer */
	plist_to_bin(d, &bin, &len);
	lm_test_write(mfile, bin, len);
	lm_plist_mem_free(bin);
	lm_assert_ok(lm_host_pref_enable(f->ctx, &f->want, &info));
	plist_free(d);
	free(mfile);
	free(mdir);
}

static void test_unexpected_type_changes_nothing(void **state)
{
	fixture *f = *state;
	lm_host_pref_info info;
	plist_t d = NULL, now;
	/* The date as text: libplist's date functions differ between versions (lm_plist_api.h). */
	static const char xml[] = "<plist version=\"1.0\"><dict><key>" KEY "</key><date>2001-01-01T00:01:40Z</date></dict></plist>";

	plist_from_xml(xml, (uint32_t)strlen(xml), &d);
	assert_non_null(d);
	put_file(f, d);
	lm_assert_fails(lm_host_pref_enable(f->ctx, &f->want, &info), LM_EINVALID);
	lm_assert_error_has(f->file);
	lm_assert_error_has("(date)");
	now = file_dict(f);
	assert_true(lm_pref_plist_equal(now, d));
	plist_free(now);
	plist_free(d);
	/* Nothing was recorded either. */
	lm_assert_ok(lm_host_pref_status(f->ctx, NULL, &info));
	assert_int_equal(info.recorded, 0);
	assert_string_equal(info.value, "2001-01-01T00:01:40Z (date)");
}

static void test_dry_run_changes_nothing(void **state)
{
	fixture *f = *state;
	lm_context *dry = new_ctx(f, 1, 0);
	lm_host_pref_info info;

	lm_assert_ok(lm_host_pref_enable(dry, &f->want, &info));
	assert_int_equal(info.changed, 1);
	assert_string_equal(info.original, "absent file");
	assert_false(lm_test_exists(f->prefs));
	assert_false(lm_test_exists(f->state));
	lm_assert_ok(lm_host_pref_enable(f->ctx, &f->want, &info));
	lm_assert_ok(lm_host_pref_disable(dry, &info));
	assert_int_equal(info.changed, 1);
	assert_true(lm_test_exists(f->file));
	lm_assert_ok(lm_host_pref_status(f->ctx, NULL, &info));
	assert_int_equal(info.recorded, 1);
	lm_context_free(dry);
}

static void test_damaged_record_is_an_error(void **state)
{
	fixture *f = *state;
	lm_host_pref_info info;
	char *path = lm_test_join(f->state, "state.json"), *before, *after;
	static const char bad[] = "{\"schema\": 1, \"vms\": {}, \"preference\": {\"store\": \"plist:/x\", "
	    "\"domain\": \"d\", \"key\": \"k\", \"original\": {\"state\": \"maybe\"}}}";

	assert_int_equal(mkdir(f->state, 0700), 0);
	lm_test_write(path, bad, strlen(bad));
	before = lm_test_slurp(path, NULL);
	lm_assert_fails(lm_host_pref_enable(f->ctx, &f->want, &info), LM_ECORRUPT);
	lm_assert_fails(lm_host_pref_disable(f->ctx, &info), LM_ECORRUPT);
	lm_assert_fails(lm_host_pref_status(f->ctx, NULL, &info), LM_ECORRUPT);
	after = lm_test_slurp(path, NULL);
	assert_string_equal(before, after);
	assert_false(lm_test_exists(f->prefs));
	free(before);
	free(after);
	free(path);
}

static void test_other_preference_recorded_is_a_conflict(void **state)
{
	fixture *f = *state;
	lm_host_pref_info info;
	lm_pref_setting other = f->want;

	lm_assert_ok(lm_host_pref_enable(f->ctx, &f->want, &info));
	other.key = "SomethingElse";
	lm_assert_fails(lm_host_pref_enable(f->ctx, &other, &info), LM_ECONFLICT);
	lm_assert_error_has("must be restored first");
	other.key = "";
	lm_assert_fails(lm_host_pref_enable(f->ctx, &other, &info), LM_EINVALID);
}

/* The enable flow's way: one journal lock around the preference and its own VM records. */
static void test_locked_variant_shares_the_journal(void **state)
{
	fixture *f = *state;
	lm_host_pref_info info;
	lm_vm_record r;
	lm_state *st;

	lm_assert_ok(lm_journal_open_rw(&st, f->ctx));
	lm_assert_ok(lm_host_pref_enable_locked(st, &f->want, &info));
	assert_int_equal(info.changed, 1);
	lm_assert_ok(lm_vm_record_get(st, "vm1", &r));
	lm_vm_record_set_status(&r, LM_VM_STATUS_ENABLING);
	lm_assert_ok(lm_vm_record_put(st, &r));
	lm_vm_record_dispose(&r);
	lm_assert_ok(lm_state_save(st));
	assert_true(lm_host_pref_recorded(st));
	lm_state_close(st);
	lm_assert_ok(lm_journal_open_rw(&st, f->ctx));
	assert_true(lm_journal_has_vm(st, "vm1"));
	assert_true(lm_host_pref_recorded(st));
	lm_assert_ok(lm_host_pref_status_locked(st, NULL, &info));
	assert_int_equal(info.recorded, 1);
	lm_assert_ok(lm_host_pref_disable_locked(st, &info));
	assert_false(lm_host_pref_recorded(st));
	assert_true(lm_journal_has_vm(st, "vm1"));
	lm_state_close(st);
}

/* keep_host: the record carries the fleet's mark, also when made by an earlier per-VM enable; a
 * journal of before the mark (no "kept") reads as per VM; disable drops the mark with the record. */
static void test_kept_by_the_fleet(void **state)
{
	fixture *f = *state;
	lm_host_pref_info info;
	lm_context *keep;
	lm_options opts = *lm_context_options(f->ctx);
	char *path = lm_test_join(f->state, "state.json"), *doc;

	lm_assert_ok(lm_host_pref_enable(f->ctx, &f->want, &info));
	assert_int_equal(info.recorded, 1);
	assert_int_equal(info.kept, 0);
	doc = lm_test_slurp(path, NULL);
	lm_assert_not_contains(doc, "\"kept\"");   /* per VM: written as before the mode existed */
	free(doc);
	opts.keep_host = 1;
	lm_assert_ok(lm_context_new(&keep, &opts));
	lm_assert_ok(lm_host_pref_enable(keep, &f->want, &info));
	assert_int_equal(info.changed, 0);
	assert_int_equal(info.kept, 1);
	lm_assert_ok(lm_host_pref_status(f->ctx, NULL, &info));
	assert_int_equal(info.kept, 1);
	/* A later enable without the option keeps the mark. */
	lm_assert_ok(lm_host_pref_enable(f->ctx, &f->want, &info));
	assert_int_equal(info.kept, 1);
	lm_assert_ok(lm_host_pref_disable(f->ctx, &info));
	assert_int_equal(info.changed, 1);
	assert_int_equal(info.recorded, 0);
	assert_int_equal(info.kept, 0);
	assert_null(file_dict(f));
	/* First change made with the option: marked at once. */
	lm_assert_ok(lm_host_pref_enable(keep, &f->want, &info));
	assert_int_equal(info.changed, 1);
	assert_int_equal(info.kept, 1);
	doc = lm_test_slurp(path, NULL);
	lm_assert_contains(doc, "\"kept\"");
	free(doc);
	lm_context_free(keep);
	free(path);
}

/* Put `text` into the file at `path` just before the first `anchor`. */
static void insert_before(const char *path, const char *anchor, const char *text)
{
	char *doc = lm_test_slurp(path, NULL), *at, *out;
	size_t len;

	assert_non_null(doc);
	assert_non_null(at = strstr(doc, anchor));
	len = strlen(doc) + strlen(text) + 1;
	out = malloc(len);
	snprintf(out, len, "%.*s%s%s", (int)(at - doc), doc, text, at);
	lm_test_write(path, out, strlen(out));
	free(out);
	free(doc);
}

static void test_kept_mark_not_a_bool_is_damage(void **state)
{
	fixture *f = *state;
	lm_host_pref_info info;
	char *path = lm_test_join(f->state, "state.json");

	lm_assert_ok(lm_host_pref_enable(f->ctx, &f->want, &info));
	insert_before(path, "\"changed_at\"", "\"kept\":\"yes\",");
	lm_assert_fails(lm_host_pref_status(f->ctx, NULL, &info), LM_ECORRUPT);
	lm_assert_error_has("preference.kept");
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_every_prior_state_is_restored, setup, teardown),
		cmocka_unit_test_setup_teardown(test_already_true_is_left_unrecorded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_someone_else_changed_it, setup, teardown),
		cmocka_unit_test_setup_teardown(test_crash_between_record_and_write_converges, setup, teardown),
		cmocka_unit_test_setup_teardown(test_managed_preference_is_not_fought, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unexpected_type_changes_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dry_run_changes_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damaged_record_is_an_error, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_preference_recorded_is_a_conflict, setup, teardown),
		cmocka_unit_test_setup_teardown(test_locked_variant_shares_the_journal, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kept_by_the_fleet, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kept_mark_not_a_bool_is_damage, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
