/* The state journal (host/lib/state/interface/state.h): creation, atomic save, lock, corrupt
 * files; and its records (host/lib/record/interface/record.h): a VM's record by one table, the
 * setters' rules, only changed parts written, the live VMs, the document's layout. */
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
#include "record.h"
#include "state.h"
#include "lm_test.h"

typedef struct {
	char *tmp;
	char *dir; /* the state dir: tmp/state (not created yet) */
	lm_context *ctx;
} fixture;

static int setup(void **state)
{
	lm_options opts;
	fixture *f = calloc(1, sizeof(*f));

	lm_assert_ok(lm_options_init(&opts, LM_OPTIONS_VERSION));
	f->tmp = lm_test_tmpdir("state");
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
	lm_vm_record r;

	lm_assert_ok(lm_journal_open_rw(&st, f->ctx));
	assert_int_equal(stat(f->dir, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0700);
	assert_string_equal(lm_state_file(st), path);
	assert_int_equal(cJSON_GetObjectItem(lm_state_doc(st), "schema")->valueint, 1);
	lm_assert_ok(lm_vm_record_get(st, "vm1", &r));
	assert_false(r.known);
	lm_assert_ok(lm_vm_record_set_address(&r, "127.0.0.2"));
	lm_assert_ok(lm_vm_record_put(st, &r));
	lm_vm_record_dispose(&r);
	lm_assert_ok(lm_state_save(st));
	lm_state_close(st);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	text = lm_test_slurp(path, NULL);
	lm_assert_contains(text, "\"address\"");
	free(text);

	lm_assert_ok(lm_journal_open_rw(&st, f->ctx));
	lm_assert_ok(lm_vm_record_get(st, "vm1", &r));
	assert_true(r.known);
	assert_string_equal(r.address, "127.0.0.2");
	lm_vm_record_dispose(&r);
	lm_state_close(st);
	lm_state_close(NULL);
	free(path);
}

static void test_readonly_creates_nothing(void **state)
{
	fixture *f = *state;
	lm_state *st;

	lm_assert_ok(lm_journal_open(&st, f->ctx, LM_STATE_READONLY, 0));
	assert_non_null(lm_state_doc(st));
	lm_assert_fails(lm_state_save(st), LM_EINVALID);
	lm_state_close(st);
	assert_false(lm_test_exists(f->dir));
}

static void test_lock_is_exclusive(void **state)
{
	fixture *f = *state;
	lm_state *a, *b;

	lm_assert_ok(lm_journal_open_rw(&a, f->ctx));
	/* flock locks belong to the open file description: a second open waits like another process. */
	lm_assert_fails(lm_journal_open(&b, f->ctx, 0, 0.2), LM_ELOCKED);
	lm_assert_error_has("state.lock");
	/* Readers take it shared: they wait for a writer too, and do not block each other. */
	lm_assert_fails(lm_journal_open(&b, f->ctx, LM_STATE_READONLY, 0.2), LM_ELOCKED);
	lm_state_close(a);
	lm_assert_ok(lm_journal_open(&a, f->ctx, LM_STATE_READONLY, 0.2));
	lm_assert_ok(lm_journal_open(&b, f->ctx, LM_STATE_READONLY, 0.2));
	lm_state_close(b);
	lm_state_close(a);
	lm_assert_ok(lm_journal_open(&b, f->ctx, 0, 0.2));
	lm_state_close(b);
}

static void check_corrupt(fixture *f, const char *content, int expect_code)
{
	char *path = lm_test_join(f->dir, "state.json"), *after;
	size_t len = 0;
	lm_state *st = NULL;

	lm_assert_ok(lm_fs_mkdir_private(f->dir));
	lm_test_write(path, content, strlen(content));
	assert_int_equal(lm_journal_open_rw(&st, f->ctx), expect_code);
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
	lm_assert_fails(lm_journal_open_rw(&st, f->ctx), LM_ECORRUPT);
	assert_int_equal(count_copies(f->dir), 1);
	/* Read-only: the same error, and no copy. */
	lm_assert_fails(lm_journal_open(&st, f->ctx, LM_STATE_READONLY, 0), LM_ECORRUPT);
	assert_int_equal(count_copies(f->dir), 1);

	check_corrupt(f, "[1, 2]", LM_ECORRUPT);
	check_corrupt(f, "{\"vms\": {}}", LM_ECORRUPT);
	check_corrupt(f, "{\"schema\": 1, \"vms\": []}", LM_ECORRUPT);
	check_corrupt(f, "{\"schema\": 1, \"preference\": 3}", LM_ECORRUPT);
	check_corrupt(f, "", LM_ECORRUPT);
	check_corrupt(f, "{\"schema\": 1} trailing", LM_ECORRUPT);
	check_corrupt(f, "{\"schema\": 7}", LM_ENEWER);
	lm_assert_error_has("newer");
}

static void test_state_dir_writable_by_others_is_refused(void **state)
{
	fixture *f = *state;
	lm_state *st;

	lm_assert_ok(lm_fs_mkdir_private(f->dir));
	assert_int_equal(chmod(f->dir, 0777), 0);
	lm_assert_fails(lm_journal_open_rw(&st, f->ctx), LM_EINVALID);
	lm_assert_error_has("chmod 700");
}

/* issue 49 item 10: the state directory's own path is a real directory, never a link followed. */
static void test_state_dir_symlink_is_refused(void **state)
{
	fixture *f = *state;
	char *real = lm_test_join(f->tmp, "elsewhere"), *p = NULL;
	lm_state *st;

	lm_assert_ok(lm_fs_mkdir_private(real));
	assert_int_equal(symlink(real, f->dir), 0);
	lm_assert_fails(lm_journal_open_rw(&st, f->ctx), LM_EINVALID);
	lm_assert_error_has("is a symbolic link (to ");
	lm_assert_error_has("elsewhere)");
	lm_assert_fails(lm_state_path(f->ctx, "known_hosts", &p), LM_EINVALID);
	lm_assert_error_has("is a symbolic link");
	/* Nothing was written through it: not the journal, not its lock. */
	DIR *d = opendir(real);
	struct dirent *de;
	assert_non_null(d);
	while ((de = readdir(d)) != NULL)
		assert_true(strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0);
	closedir(d);
	free(real);
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

/* ---- the journal's records (host/lib/record) ---- */

static lm_guest_facts sample_guest(void)
{
	lm_guest_facts g;

	memset(&g, 0, sizeof(g));
	strcpy(g.os, "Darwin");
	strcpy(g.arch, "arm64");
	strcpy(g.os_version, "26.5.2");
	strcpy(g.home, "/Users/lume");
	strcpy(g.sip, "enabled");
	g.boot_time = 1767225601.25;
	return g;
}

/* Every part set, put, saved, read back: the same values. */
static void test_round_trip(void **state)
{
	fixture *f = *state;
	lm_vm_record r, back;
	lm_profile *p = NULL;
	lm_state *st = NULL;
	lm_guest_facts g = sample_guest();
	const char *argv[] = {"llama-server", "-m", "model.gguf"};
	lm_agent_spec spec = {"com.example.llama", argv, 3, 1, 0};
	lm_agent_info info;
	lm_report *stock = NULL;

	lm_assert_ok(lm_profile_builtin(&p, lm_profile_default_name()));
	lm_assert_ok(lm_report_stock_paravirtual(&stock));
	lm_assert_ok(lm_journal_open_rw(&st, f->ctx));
	lm_assert_ok(lm_vm_record_get(st, "vm1", &r));
	assert_false(r.known);
	lm_vm_record_set_status(&r, LM_VM_STATUS_ENABLED);
	lm_assert_ok(lm_vm_record_set_profile(&r, p));
	lm_assert_ok(lm_vm_record_set_manager(&r, "lume-api"));
	lm_assert_ok(lm_vm_record_set_address(&r, "127.0.0.2"));
	lm_vm_record_set_enabled_at(&r, 100.5);
	lm_vm_record_set_started_at(&r, 99.25);
	lm_vm_record_set_guest(&r, &g);
	lm_assert_ok(lm_vm_record_set_bundle(&r, "0.1.0-abc", "darwin-universal", "DYLD_INSERT_LIBRARIES",
	    "LumeMetalShim.dylib", "metal-capabilities"));
	lm_assert_ok(lm_vm_record_set_probe(&r, 101, stock, stock, NULL));
	memset(&info, 0, sizeof(info));
	strcpy(info.label, "com.example.llama");
	strcpy(info.plist, "/Users/lume/Library/LaunchAgents/com.example.llama.plist");
	strcpy(info.program, "/opt/homebrew/bin/llama-server");
	info.installed_at = 102;
	lm_assert_ok(lm_vm_record_add_agent(&r, &spec, &info));
	lm_assert_ok(lm_vm_record_put(st, &r));
	lm_assert_ok(lm_state_save(st));
	lm_state_close(st);
	lm_vm_record_dispose(&r);

	lm_assert_ok(lm_vm_record_load(f->ctx, "vm1", &back));
	assert_true(back.known);
	assert_int_equal(back.status, LM_VM_STATUS_ENABLED);
	assert_string_equal(back.profile_name, lm_profile_name(p));
	assert_non_null(back.profile);
	assert_string_equal(back.manager, "lume-api");
	assert_string_equal(back.address, "127.0.0.2");
	assert_true(back.enabled_at == 100.5 && back.vm_started_at == 99.25 && back.probed_at == 101);
	assert_string_equal(back.guest.home, "/Users/lume");
	assert_string_equal(back.guest.sip, "enabled");
	assert_true(back.guest.boot_time == g.boot_time);
	assert_string_equal(back.bundle.injection, "DYLD_INSERT_LIBRARIES");
	assert_non_null(back.stock);
	assert_non_null(back.shimmed);
	assert_null(back.exercised);
	assert_int_equal(back.nagents, 1);
	assert_string_equal(back.agents[0].program, "/opt/homebrew/bin/llama-server");
	/* The program is recorded resolved; argv keeps what follows it. */
	assert_string_equal(back.agents[0].argv[0], "-m");
	assert_string_equal(back.agents[0].argv[1], "model.gguf");
	assert_null(back.agents[0].argv[2]);
	assert_true(back.agents[0].keep_alive && !back.agents[0].run_at_load);
	lm_vm_record_dispose(&back);
	lm_report_free(stock);
	lm_profile_free(p);
}

/* A put writes only what a setter changed: other keys, known or not, stay exactly as they were. */
static void test_only_changed_parts_are_written(void **state)
{
	cJSON *entry = cJSON_Parse("{\"status\":\"enabled\",\"future_key\":{\"x\":1},\"guest\":{\"os\":\"Darwin\","
	    "\"home\":\"/Users/lume\",\"future\":true},\"bundle\":{\"id\":\"b1\"}}");
	lm_vm_record r;
	char *text;

	(void)state;
	assert_non_null(entry);
	lm_assert_ok(lm_vm_record_decode(entry, "vm1", &r));
	lm_assert_ok(lm_vm_record_set_mark(&r, "0123abcd"));
	lm_assert_ok(lm_vm_record_encode(&r, entry));
	text = cJSON_PrintUnformatted(entry);
	lm_assert_contains(text, "\"future_key\":{\"x\":1}");
	lm_assert_contains(text, "\"future\":true"); /* the guest object was not rewritten */
	lm_assert_contains(text, "\"enable_run\":\"0123abcd\"");
	free(text);
	/* An empty mark takes the key away; a nested part is replaced whole when changed. */
	lm_assert_ok(lm_vm_record_set_mark(&r, ""));
	lm_vm_record_set_guest(&r, &r.guest);
	lm_assert_ok(lm_vm_record_encode(&r, entry));
	text = cJSON_PrintUnformatted(entry);
	lm_assert_not_contains(text, "enable_run");
	lm_assert_not_contains(text, "\"future\":true");
	lm_assert_contains(text, "\"home\":\"/Users/lume\"");
	free(text);
	lm_vm_record_dispose(&r);
	cJSON_Delete(entry);
}

/* A record put back with its values unchanged is the same text, every key in its place (a setter
 * replaces a key where it is); a save of a document that prints to the file's bytes writes
 * nothing (the file is not replaced: same inode), and a changed one is written. */
static void test_unchanged_is_not_written(void **state)
{
	fixture *f = *state;
	lm_vm_record r;
	lm_state *st = NULL;
	lm_guest_facts g = sample_guest();
	char *before = NULL, *after = NULL, *path = lm_test_join(f->dir, "state.json");
	struct stat sb1, sb2, sb3;

	lm_assert_ok(lm_journal_open_rw(&st, f->ctx));
	lm_assert_ok(lm_vm_record_get(st, "vm1", &r));
	lm_vm_record_set_status(&r, LM_VM_STATUS_ENABLED);
	lm_assert_ok(lm_vm_record_set_manager(&r, "lume-api"));
	lm_assert_ok(lm_vm_record_set_address(&r, "127.0.0.2"));
	lm_vm_record_set_guest(&r, &g);
	lm_assert_ok(lm_vm_record_put(st, &r));
	lm_assert_ok(lm_state_save(st));
	lm_state_close(st);
	lm_vm_record_dispose(&r);
	assert_int_equal(stat(path, &sb1), 0);

	lm_assert_ok(lm_journal_open_rw(&st, f->ctx));
	lm_assert_ok(lm_journal_vm_print(st, "vm1", &before));
	lm_assert_ok(lm_vm_record_get(st, "vm1", &r));
	lm_assert_ok(lm_vm_record_set_manager(&r, "lume-api")); /* first among the keys: it stays first */
	lm_vm_record_set_guest(&r, &r.guest);
	lm_assert_ok(lm_vm_record_put(st, &r));
	lm_assert_ok(lm_journal_vm_print(st, "vm1", &after));
	assert_string_equal(before, after);
	lm_assert_ok(lm_state_save(st));
	assert_int_equal(stat(path, &sb2), 0);
	assert_true(sb1.st_ino == sb2.st_ino);
	/* A change is written (a new file renamed over the old), and the next unchanged save after it
	 * compares with what was written. */
	lm_assert_ok(lm_vm_record_set_address(&r, "127.0.0.3"));
	lm_assert_ok(lm_vm_record_put(st, &r));
	lm_assert_ok(lm_state_save(st));
	assert_int_equal(stat(path, &sb3), 0);
	assert_true(sb3.st_ino != sb2.st_ino);
	lm_assert_ok(lm_state_save(st));
	assert_int_equal(stat(path, &sb2), 0);
	assert_true(sb3.st_ino == sb2.st_ino);
	lm_state_close(st);
	lm_vm_record_dispose(&r);
	free(before);
	free(after);
	lm_assert_ok(lm_vm_record_load(f->ctx, "vm1", &r));
	assert_string_equal(r.address, "127.0.0.3");
	lm_vm_record_dispose(&r);
	/* No record: the print says so with the empty text. */
	lm_assert_ok(lm_journal_open_rw(&st, f->ctx));
	lm_assert_ok(lm_journal_vm_print(st, "vm2", &before));
	assert_string_equal(before, "");
	free(before);
	lm_state_close(st);
	free(path);
}

/* The setters' rules. */
static void test_setter_rules(void **state)
{
	lm_vm_record r;
	lm_guest_facts g = sample_guest();
	char long_id[LM_BUNDLE_ID_MAX + 8];

	(void)state;
	memset(&r, 0, sizeof(r));
	/* Only the first enable's time is kept. */
	lm_vm_record_set_enabled_at(&r, 10);
	lm_vm_record_set_enabled_at(&r, 20);
	assert_true(r.enabled_at == 10);
	/* An unknown manager proves nothing: the recorded one stays. */
	lm_assert_ok(lm_vm_record_set_manager(&r, "tart"));
	lm_assert_ok(lm_vm_record_set_manager(&r, ""));
	assert_string_equal(r.manager, "tart");
	/* Only a SIP state csrutil reports is recorded. */
	strcpy(g.sip, "weird");
	lm_vm_record_set_guest(&r, &g);
	assert_string_equal(r.guest.sip, "");
	/* A value that does not fit is refused whole, never cut. */
	memset(long_id, 'x', sizeof(long_id) - 1);
	long_id[sizeof(long_id) - 1] = '\0';
	assert_int_equal(lm_vm_record_set_bundle(&r, long_id, "p", "i", "s", "q"), LM_EINVALID);
	lm_assert_error_has("bundle's id");
	/* A mark is the run's own. */
	assert_false(lm_vm_record_marked(&r, "abc"));
	r.known = 1;
	lm_assert_ok(lm_vm_record_set_mark(&r, "abc"));
	assert_true(lm_vm_record_marked(&r, "abc"));
	assert_false(lm_vm_record_marked(&r, "abd"));
	lm_vm_record_dispose(&r);
}

/* Damaged values are errors that name the key and the limit, never cut; odd values read as unknown. */
static void test_decode_damage(void **state)
{
	cJSON *entry;
	lm_vm_record r;
	char *json;
	size_t n = LM_GUEST_HOME_MAX + 10;

	(void)state;
	entry = cJSON_Parse("{\"status\":\"exploded\",\"guest\":{\"boot_time\":1e300,\"sip\":\"maybe\"},"
	    "\"last_probe\":{\"stock\":{\"not\":\"a report\"}}}");
	lm_assert_ok(lm_vm_record_decode(entry, "vm1", &r));
	assert_int_equal(r.status, LM_VM_STATUS_NONE);
	assert_true(r.guest.boot_time == 0);
	assert_string_equal(r.guest.sip, "");
	assert_null(r.stock);
	lm_vm_record_dispose(&r);
	cJSON_Delete(entry);

	json = malloc(n + 64);
	strcpy(json, "{\"guest\":{\"home\":\"/");
	memset(json + strlen(json), 'h', n);
	strcpy(json + strlen("{\"guest\":{\"home\":\"/") + n, "\"}}");
	entry = cJSON_Parse(json);
	assert_non_null(entry);
	assert_int_equal(lm_vm_record_decode(entry, "vm1", &r), LM_ECORRUPT);
	lm_assert_error_has("guest.home");
	cJSON_Delete(entry);
	free(json);

	entry = cJSON_Parse("{\"agents\":[{\"label\":\"-bad label\"}]}");
	assert_int_equal(lm_vm_record_decode(entry, "vm1", &r), LM_ECORRUPT);
	cJSON_Delete(entry);
}

/* The VMs that keep the preference needed: "enabling" or "enabled", by name, other than one. */
static void test_live_vms(void **state)
{
	fixture *f = *state;
	lm_state *st = NULL;
	lm_vm_record r;
	char names[64];
	static const struct {
		const char *name;
		lm_vm_status status;
	} vms[] = {{"a", LM_VM_STATUS_ENABLED}, {"b", LM_VM_STATUS_ENABLING}, {"c", LM_VM_STATUS_NONE}};
	size_t i;

	lm_assert_ok(lm_journal_open_rw(&st, f->ctx));
	for (i = 0; i < 3; i++) {
		lm_assert_ok(lm_vm_record_get(st, vms[i].name, &r));
		lm_vm_record_set_status(&r, vms[i].status);
		lm_assert_ok(lm_vm_record_set_address(&r, "127.0.0.2"));
		lm_assert_ok(lm_vm_record_put(st, &r));
		lm_vm_record_dispose(&r);
	}
	assert_int_equal(lm_vm_record_live(st, NULL, names, sizeof(names)), 2);
	assert_string_equal(names, "a, b");
	assert_int_equal(lm_vm_record_live(st, "a", names, sizeof(names)), 1);
	assert_string_equal(names, "b");
	assert_true(lm_journal_has_vm(st, "c"));
	lm_journal_forget_vm(st, "c");
	assert_false(lm_journal_has_vm(st, "c"));
	lm_state_close(st);
}

/* The host preference mode a VM was enabled with and whether it needed the preference: written and
 * read back; absent reads as always, not measured; a VM proven without the preference is not one
 * the preference is kept for (issue 35). The mode's names and the options' check. */
static void test_host_preference_need(void **state)
{
	fixture *f = *state;
	lm_state *st = NULL;
	lm_vm_record r;
	cJSON *entry;
	lm_host_pref_mode mode;
	lm_options opts;
	lm_context *ctx = NULL;
	char names[64];
	char *json;

	lm_assert_ok(lm_journal_open_rw(&st, f->ctx));
	lm_assert_ok(lm_vm_record_get(st, "a", &r));
	lm_vm_record_set_status(&r, LM_VM_STATUS_ENABLED);
	lm_vm_record_set_host_preference(&r, LM_HOST_PREF_AUTO, LM_PREF_NEEDED_NO);
	lm_assert_ok(lm_vm_record_put(st, &r));
	lm_vm_record_dispose(&r);
	lm_assert_ok(lm_vm_record_get(st, "b", &r));
	lm_vm_record_set_status(&r, LM_VM_STATUS_ENABLED);
	lm_vm_record_set_host_preference(&r, LM_HOST_PREF_AUTO, LM_PREF_NEEDED_YES);
	lm_assert_ok(lm_vm_record_put(st, &r));
	lm_vm_record_dispose(&r);
	lm_assert_ok(lm_vm_record_get(st, "c", &r));
	lm_vm_record_set_status(&r, LM_VM_STATUS_ENABLING); /* an older journal's: no host_preference */
	lm_assert_ok(lm_vm_record_put(st, &r));
	lm_vm_record_dispose(&r);
	assert_int_equal(lm_vm_record_live(st, NULL, names, sizeof(names)), 2);
	assert_string_equal(names, "b, c");
	lm_assert_ok(lm_vm_record_get(st, "a", &r));
	assert_int_equal(r.pref_mode, LM_HOST_PREF_AUTO);
	assert_int_equal(r.pref_needed, LM_PREF_NEEDED_NO);
	assert_false(lm_vm_record_uses_preference(&r));
	lm_vm_record_dispose(&r);
	lm_assert_ok(lm_vm_record_get(st, "c", &r));
	assert_int_equal(r.pref_mode, LM_HOST_PREF_ALWAYS);
	assert_int_equal(r.pref_needed, LM_PREF_NEEDED_UNKNOWN);
	assert_true(lm_vm_record_uses_preference(&r));
	lm_vm_record_dispose(&r);
	lm_state_close(st);
	/* The record's JSON: {"mode", "needed"}; not measured leaves needed out; an unknown mode
	 * reads as always (its rules are the safe ones). */
	assert_non_null(entry = cJSON_Parse("{\"status\":\"enabled\",\"host_preference\":{\"mode\":\"sometimes\"}}"));
	lm_assert_ok(lm_vm_record_decode(entry, "vm1", &r));
	assert_int_equal(r.pref_mode, LM_HOST_PREF_ALWAYS);
	assert_int_equal(r.pref_needed, LM_PREF_NEEDED_UNKNOWN);
	lm_vm_record_set_host_preference(&r, LM_HOST_PREF_NEVER, LM_PREF_NEEDED_UNKNOWN);
	lm_assert_ok(lm_vm_record_encode(&r, entry));
	assert_non_null(json = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(entry, "host_preference")));
	assert_string_equal(json, "{\"mode\":\"never\"}");
	cJSON_free(json);
	lm_vm_record_set_host_preference(&r, LM_HOST_PREF_AUTO, LM_PREF_NEEDED_YES);
	lm_assert_ok(lm_vm_record_encode(&r, entry));
	assert_non_null(json = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(entry, "host_preference")));
	assert_string_equal(json, "{\"mode\":\"auto\",\"needed\":true}");
	cJSON_free(json);
	lm_vm_record_dispose(&r);
	cJSON_Delete(entry);
	/* Names, both ways; options version 2 carries the mode, checked by lm_context_new. */
	assert_string_equal(lm_host_pref_mode_name(LM_HOST_PREF_AUTO), "auto");
	assert_string_equal(lm_host_pref_mode_name((lm_host_pref_mode)7), "");
	lm_assert_ok(lm_host_pref_mode_parse("never", &mode));
	assert_int_equal(mode, LM_HOST_PREF_NEVER);
	lm_assert_fails(lm_host_pref_mode_parse("Never", &mode), LM_EINVALID);
	lm_assert_error_has("none of always, auto, never");
	lm_assert_ok(lm_options_init(&opts, 2));
	assert_int_equal(opts.host_preference, LM_HOST_PREF_ALWAYS);
	opts.state_dir = f->dir;
	opts.host_preference = (lm_host_pref_mode)9;
	lm_assert_fails(lm_context_new(&ctx, &opts), LM_EINVALID);
	opts.host_preference = LM_HOST_PREF_AUTO;
	lm_assert_ok(lm_context_new(&ctx, &opts));
	assert_int_equal(lm_context_options(ctx)->host_preference, LM_HOST_PREF_AUTO);
	lm_context_free(ctx);
}

/* The state directory's identity (issue 49, defect 12): none until asked to make one, then the
 * same one for ever, 0600, 32 hex digits; a damaged file is refused naming it, never replaced; a
 * version-2 program's options carry no take-over. */
static void test_identity(void **state)
{
	fixture *f = *state;
	char id[LM_STATE_ID_SIZE], again[LM_STATE_ID_SIZE], *path = lm_test_join(f->dir, "identity");
	struct stat sb;
	lm_options opts;
	lm_context *ctx;

	lm_assert_ok(lm_state_identity(f->ctx, 0, id));
	assert_string_equal(id, "");
	assert_int_equal(stat(f->dir, &sb), -1); /* nothing made when only asked */
	lm_assert_ok(lm_state_identity(f->ctx, 1, id));
	assert_int_equal(strlen(id), 32);
	assert_int_equal(strspn(id, "0123456789abcdef"), 32);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	assert_int_equal(sb.st_size, 33);
	lm_assert_ok(lm_state_identity(f->ctx, 1, again));
	assert_string_equal(again, id);
	lm_assert_ok(lm_state_identity(f->ctx, 0, again));
	assert_string_equal(again, id);
	lm_test_write(path, "0123", 4);
	lm_assert_fails(lm_state_identity(f->ctx, 1, again), LM_ECORRUPT);
	lm_assert_error_has("identity file holds no identity");
	assert_string_equal(again, "");
	lm_test_write(path, "0123456789ABCDEF0123456789ABCDEF\n", 33);
	lm_assert_fails(lm_state_identity(f->ctx, 1, again), LM_ECORRUPT);
	/* Options of version 2 end before take_over: it reads as not given. */
	lm_assert_ok(lm_options_init(&opts, 2));
	opts.state_dir = f->dir;
	lm_assert_ok(lm_context_new(&ctx, &opts));
	assert_int_equal(lm_context_options(ctx)->take_over, 0);
	lm_context_free(ctx);
	free(path);
}

/* The document's layout: a newer schema is refused, a wrong shape is damage. */
static void test_layout(void **state)
{
	fixture *f = *state;
	lm_state *st = NULL;
	char *path;

	lm_assert_ok(lm_journal_open_rw(&st, f->ctx)); /* creates the directory */
	lm_state_close(st);
	path = lm_test_join(f->dir, "state.json");
	lm_test_write(path, "{\"schema\":2,\"vms\":{}}", 21);
	assert_int_equal(lm_journal_open(&st, f->ctx, LM_STATE_READONLY, 1), LM_ENEWER);
	lm_assert_error_has("newer lume-metal");
	lm_test_write(path, "{\"schema\":1,\"vms\":[]}", 21);
	assert_int_equal(lm_journal_open(&st, f->ctx, LM_STATE_READONLY, 1), LM_ECORRUPT);
	/* The state module alone reads it: it is a JSON object, nothing more is asked. */
	lm_assert_ok(lm_state_open_ex(&st, f->ctx, LM_STATE_READONLY, 1));
	lm_state_close(st);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fresh_journal_is_created_private, setup, teardown),
		cmocka_unit_test_setup_teardown(test_readonly_creates_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_is_exclusive, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_journal_is_kept_and_copied, setup, teardown),
		cmocka_unit_test_setup_teardown(test_state_dir_writable_by_others_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_state_dir_symlink_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_state_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
		cmocka_unit_test(test_only_changed_parts_are_written),
		cmocka_unit_test_setup_teardown(test_unchanged_is_not_written, setup, teardown),
		cmocka_unit_test(test_setter_rules),
		cmocka_unit_test(test_decode_damage),
		cmocka_unit_test_setup_teardown(test_live_vms, setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_preference_need, setup, teardown),
		cmocka_unit_test_setup_teardown(test_layout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_identity, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
