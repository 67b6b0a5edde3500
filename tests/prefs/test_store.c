/* The plist-file store and preference values (host/lib/prefs/prefs_internal.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "error_internal.h"
#include "pref_default.h"
#include "prefs_store.h"
#include "lm_test.h"

#define DOMAIN "com.apple.gpusw.ParavirtualizedGraphics"
#define KEY "ForceUnrestrictedDeviceFeatureLevel"

/* Other keys of every plist type, as a user's real preferences file might hold. */
static const char every_type_xml[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n"
    "<plist version=\"1.0\"><dict>\n"
    "<key>aDict</key><dict><key>inner</key><string>x</string><key>n</key><integer>-5</integer></dict>\n"
    "<key>anArray</key><array><integer>1</integer><string>two</string><false/></array>\n"
    "<key>someData</key><data>AAECAwT/</data>\n"
    "<key>aDate</key><date>2024-02-29T12:34:56Z</date>\n"
    "<key>aReal</key><real>3.25</real>\n"
    "<key>anInteger</key><integer>9007199254740993</integer>\n"
    "<key>aString</key><string>h\xc3\xa9llo</string>\n"
    "<key>aBool</key><true/>\n"
    "</dict></plist>\n";

typedef struct {
	char *dir;
	char *prefs;  /* dir/prefs (not created) */
	char *file;   /* dir/prefs/DOMAIN.plist */
	lm_prefs_store *store;
} fixture;

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));

	f->dir = lm_test_tmpdir("prefs");
	f->prefs = lm_test_join(f->dir, "prefs");
	f->file = lm_test_join(f->prefs, DOMAIN ".plist");
	lm_assert_ok(lm_prefs_store_open_plist(&f->store, f->prefs, DOMAIN));
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;

	lm_prefs_store_free(f->store);
	lm_test_rmtree(f->dir);
	free(f->file);
	free(f->prefs);
	free(f->dir);
	free(f);
	return 0;
}

static plist_t parse_file(const char *path)
{
	size_t len;
	char *data = lm_test_slurp(path, &len);
	plist_t p;

	assert_non_null(data);
	lm_assert_ok(lm_plist_read(data, len, path, &p, NULL));
	free(data);
	return p;
}

static void test_absent_directory_reads_as_absent_file(void **state)
{
	fixture *f = *state;
	plist_t v = NULL;
	int present = 1;

	lm_assert_ok(lm_prefs_store_read(f->store, KEY, &present, &v));
	assert_int_equal(present, 0);
	assert_null(v);
	lm_assert_contains(lm_prefs_store_id(f->store), "plist:/");
	assert_string_equal(lm_prefs_store_path(f->store), f->file);
}

static void test_set_writes_binary_and_keeps_every_other_key(void **state)
{
	fixture *f = *state;
	plist_t before, after, v = NULL, t = plist_new_bool(1);
	char *data;
	int present;

	assert_int_equal(mkdir(f->prefs, 0700), 0);
	lm_test_write(f->file, every_type_xml, strlen(every_type_xml));
	before = parse_file(f->file);
	assert_non_null(before);
	lm_assert_ok(lm_prefs_store_set(f->store, KEY, t));
	data = lm_test_slurp(f->file, NULL);
	assert_memory_equal(data, "bplist00", 8);
	free(data);
	lm_assert_ok(lm_prefs_store_read(f->store, KEY, &present, &v));
	assert_int_equal(present, 1);
	assert_true(lm_pref_plist_equal(v, t));
	plist_free(v);
	/* Remove our key again: exactly the original dictionary, every type intact. */
	lm_assert_ok(lm_prefs_store_delete(f->store, KEY, 1));
	after = parse_file(f->file);
	assert_true(lm_pref_plist_equal(before, after));
	plist_free(before);
	plist_free(after);
	plist_free(t);
}

static void test_delete_removes_file_only_when_empty(void **state)
{
	fixture *f = *state;
	plist_t t = plist_new_bool(1), o = plist_new_string("other");

	lm_assert_ok(lm_prefs_store_set(f->store, KEY, t));
	assert_true(lm_test_exists(f->file));
	lm_assert_ok(lm_prefs_store_delete(f->store, KEY, 1));
	assert_false(lm_test_exists(f->file));
	lm_assert_ok(lm_prefs_store_set(f->store, KEY, t));
	lm_assert_ok(lm_prefs_store_set(f->store, "Other", o));
	lm_assert_ok(lm_prefs_store_delete(f->store, KEY, 1));
	assert_true(lm_test_exists(f->file));
	/* Deleting an absent key leaves the file alone. */
	lm_assert_ok(lm_prefs_store_delete(f->store, KEY, 0));
	assert_true(lm_test_exists(f->file));
	plist_free(t);
	plist_free(o);
}

/* A damaged file is an error naming it, and no call writes anything. */
static void check_malformed(fixture *f, const void *content, size_t len, int code)
{
	plist_t v = NULL, t = plist_new_bool(1);
	char *after;
	size_t alen;
	int present;

	lm_test_write(f->file, content, len);
	assert_int_equal(lm_prefs_store_read(f->store, KEY, &present, &v), code);
	lm_assert_error_has(f->file);
	assert_int_equal(lm_prefs_store_set(f->store, KEY, t), code);
	assert_int_equal(lm_prefs_store_delete(f->store, KEY, 1), code);
	after = lm_test_slurp(f->file, &alen);
	assert_int_equal(alen, len);
	assert_memory_equal(after, content, len);
	free(after);
	plist_free(t);
}

static void test_malformed_files(void **state)
{
	static const char array_root[] = "<?xml version=\"1.0\"?><plist version=\"1.0\"><array><true/></array></plist>";
	static const char string_root[] = "<?xml version=\"1.0\"?><plist version=\"1.0\"><string>x</string></plist>";
	fixture *f = *state;
	plist_t d = plist_new_dict();
	char *bin = NULL;
	uint32_t blen = 0;
	size_t xlen = strlen(every_type_xml);

	assert_int_equal(mkdir(f->prefs, 0700), 0);
	check_malformed(f, "this is not a plist at all", 26, LM_ECORRUPT);
	check_malformed(f, "", 0, LM_ECORRUPT);
	check_malformed(f, every_type_xml, xlen / 2, LM_ECORRUPT);
	check_malformed(f, array_root, strlen(array_root), LM_ECORRUPT);
	check_malformed(f, string_root, strlen(string_root), LM_ECORRUPT);
	plist_dict_set_item(d, KEY, plist_new_bool(0));
	plist_dict_set_item(d, "other", plist_new_string("some longer string value"));
	plist_to_bin(d, &bin, &blen);
	check_malformed(f, bin, blen - 10, LM_ECORRUPT); /* truncated binary */
	check_malformed(f, bin, 12, LM_ECORRUPT);
	lm_plist_mem_free(bin);
	plist_free(d);
}

/* Strings the binary form cannot keep exactly are refused with the file's name, before any value is
 * read or written (found by fuzzing: a NUL made libplist 2.2 abort the process). */
static void test_strings_that_cannot_be_kept(void **state)
{
	static const char nul_xml[] = "<?xml version=\"1.0\"?><plist version=\"1.0\"><dict><key>" KEY
	    "</key><string>o\0\0YES</string></dict></plist>";
	static const char bad_utf8_xml[] = "<?xml version=\"1.0\"?><plist version=\"1.0\"><dict><key>" KEY
	    "</key><string>YE\x94S</string></dict></plist>";
	/* {KEY: "a\0"} and {KEY: {"a\0": true}}, the strings in UTF-16 as macOS writes non-ASCII text. */
	static const char nul_utf16[] =
	    "\x62\x70\x6c\x69\x73\x74\x30\x30\xd1\x01\x02\x5f\x10\x23\x46\x6f\x72\x63\x65\x55\x6e\x72\x65\x73"
	    "\x74\x72\x69\x63\x74\x65\x64\x44\x65\x76\x69\x63\x65\x46\x65\x61\x74\x75\x72\x65\x4c\x65\x76\x65"
	    "\x6c\x62\x00\x61\x00\x00\x08\x0b\x31\x00\x00\x00\x00\x00\x00\x01\x01\x00\x00\x00\x00\x00\x00\x00"
	    "\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x36";
	static const char nul_key_utf16[] =
	    "\x62\x70\x6c\x69\x73\x74\x30\x30\xd1\x01\x02\x5f\x10\x23\x46\x6f\x72\x63\x65\x55\x6e\x72\x65\x73"
	    "\x74\x72\x69\x63\x74\x65\x64\x44\x65\x76\x69\x63\x65\x46\x65\x61\x74\x75\x72\x65\x4c\x65\x76\x65"
	    "\x6c\xd1\x03\x04\x62\x00\x61\x00\x00\x09\x08\x0b\x31\x34\x39\x00\x00\x00\x00\x00\x00\x01\x01\x00"
	    "\x00\x00\x00\x00\x00\x00\x05\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x3a";
	fixture *f = *state;
	plist_t v = NULL;

	assert_int_equal(mkdir(f->prefs, 0700), 0);
	check_malformed(f, nul_xml, sizeof(nul_xml) - 1, LM_ECORRUPT);
	lm_assert_error_has("NUL character or invalid UTF-8");
	check_malformed(f, bad_utf8_xml, sizeof(bad_utf8_xml) - 1, LM_ECORRUPT);
	check_malformed(f, nul_utf16, sizeof(nul_utf16) - 1, LM_ECORRUPT);
	check_malformed(f, nul_key_utf16, sizeof(nul_key_utf16) - 1, LM_ECORRUPT);
	/* The journal's form of a value: ["a\0"] as a binary plist. */
	assert_int_equal(lm_pref_plist_decode("YnBsaXN0MDChAWIAYQAACAoAAAAAAAABAQAAAAAAAAACAAAAAAAAAAAAAAAAAAAADw==", &v),
	    LM_EINVALID);
	assert_null(v);
}

/* Issue 49: a key with a NUL merged with the key before it. libplist cuts a binary plist's ASCII
 * string at its first NUL, so {"a": 1, "a\0b": 2, "Keep": "me"} read as two keys "a" and was
 * written back as {"a": 2, "Keep": "me"}. Keys follow the rule of strings: the file is refused,
 * naming it, and left as it is; so is the same key in XML (where XML allows no NUL at all). */
static void test_key_with_a_nul_is_refused(void **state)
{
	static const char nul_key_ascii[] =
	    "\x62\x70\x6c\x69\x73\x74\x30\x30\xd3\x00\x01\x00\x02\x00\x03\x00\x04\x00\x05\x00\x06\x51\x61\x53"
	    "\x61\x00\x62\x54\x4b\x65\x65\x70\x10\x01\x10\x02\x52\x6d\x65\x00\x00\x00\x08\x00\x00\x00\x15\x00"
	    "\x00\x00\x17\x00\x00\x00\x1b\x00\x00\x00\x20\x00\x00\x00\x22\x00\x00\x00\x24\x00\x00\x00\x00\x00"
	    "\x00\x04\x02\x00\x00\x00\x00\x00\x00\x00\x07\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
	    "\x00\x00\x27";
	static const char nul_key_xml[] = "<?xml version=\"1.0\"?><plist version=\"1.0\"><dict><key>a</key><integer>1"
	    "</integer><key>a\0b</key><integer>2</integer><key>Keep</key><string>me</string></dict></plist>";
	fixture *f = *state;

	assert_int_equal(mkdir(f->prefs, 0700), 0);
	check_malformed(f, nul_key_ascii, sizeof(nul_key_ascii) - 1, LM_ECORRUPT);
	lm_assert_error_has("NUL character");
	check_malformed(f, nul_key_xml, sizeof(nul_key_xml) - 1, LM_ECORRUPT);
	lm_assert_error_has("NUL character");
}

/* Issue 49: a file nested 50,000 deep crashed every command (libplist's recursion overflowed the
 * stack). Nesting is bounded at 512 (macOS's own limit) before anything recurses: 512 is read
 * and kept through a write, 513 and 50,000 are refused naming the file, which is left as it is. */
static void test_nesting_is_bounded(void **state)
{
	static const unsigned refused[] = {LM_PLIST_MAX_DEPTH + 1, 50000};
	fixture *f = *state;
	plist_t t = plist_new_bool(1), v = NULL, before, after;
	size_t len, i;
	char *data;
	int binary, present;

	assert_int_equal(mkdir(f->prefs, 0700), 0);
	for (binary = 0; binary < 2; binary++) {
		for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
			data = lm_test_deep_plist(refused[i], binary, &len);
			check_malformed(f, data, len, LM_ECORRUPT);
			lm_assert_error_has("more than 512 deep");
			free(data);
		}
		data = lm_test_deep_plist(LM_PLIST_MAX_DEPTH, binary, &len);
		lm_test_write(f->file, data, len);
		free(data);
		before = parse_file(f->file);
		lm_assert_ok(lm_prefs_store_read(f->store, KEY, &present, &v));
		assert_null(v);
		lm_assert_ok(lm_prefs_store_set(f->store, KEY, t));
		after = parse_file(f->file);
		assert_true(lm_pref_plist_equal(plist_dict_get_item(before, "Deep"), plist_dict_get_item(after, "Deep")));
		plist_free(before);
		plist_free(after);
	}
	plist_free(t);
}

static void test_unreadable_locations(void **state)
{
	fixture *f = *state;
	lm_prefs_store *s = NULL;
	char *asfile = lm_test_join(f->dir, "a-file");
	plist_t v = NULL;
	int present;

	/* The prefs "directory" is a regular file. */
	lm_test_write(asfile, "x", 1);
	lm_assert_ok(lm_prefs_store_open_plist(&s, asfile, DOMAIN));
	assert_true(lm_prefs_store_read(s, KEY, &present, &v) < 0);
	lm_assert_error_has(asfile);
	lm_prefs_store_free(s);
	/* The plist "file" is a directory. */
	assert_int_equal(mkdir(f->prefs, 0700), 0);
	assert_int_equal(mkdir(f->file, 0700), 0);
	assert_true(lm_prefs_store_read(f->store, KEY, &present, &v) < 0);
	lm_assert_error_has(f->file);
	free(asfile);
}

static void test_managed_file_simulates_configuration_profile(void **state)
{
	fixture *f = *state;
	char *mdir = lm_test_join(f->prefs, "managed"), *mfile = lm_test_join(mdir, DOMAIN ".plist");
	plist_t d = plist_new_dict(), forced = NULL;
	char *bin = NULL;
	uint32_t blen = 0;
	int managed = 1;

	lm_assert_ok(lm_prefs_store_managed(f->store, KEY, &managed, &forced));
	assert_int_equal(managed, 0);
	assert_null(forced);
	assert_int_equal(mkdir(f->prefs, 0700), 0);
	assert_int_equal(mkdir(mdir, 0700), 0);
	plist_dict_set_item(d, KEY, plist_new_bool(0));
	plist_to_bin(d, &bin, &blen);
	lm_test_write(mfile, bin, blen);
	lm_assert_ok(lm_prefs_store_managed(f->store, KEY, &managed, &forced));
	assert_int_equal(managed, 1);
	assert_int_equal(plist_get_node_type(forced), PLIST_BOOLEAN);
	plist_free(forced);
	lm_assert_ok(lm_prefs_store_managed(f->store, "OtherKey", &managed, &forced));
	assert_int_equal(managed, 0);
	assert_null(forced);
	lm_plist_mem_free(bin);
	plist_free(d);
	free(mfile);
	free(mdir);
}

/* The -currentHost value: ByHost/<domain>.<UUID>.plist, the UUID this machine's ID written as a
 * hardware UUID (upper case, 8-4-4-4-12); another host's file, or the any-host file, is not it. */
static void test_byhost_file_is_the_current_hosts(void **state)
{
	fixture *f = *state;
	char where[1104], *dir = lm_test_join(f->prefs, "ByHost"), *other = lm_test_join(dir, DOMAIN ".00000000-0000-0000-0000-000000000000.plist");
	const char *file;
	plist_t d = plist_new_dict(), v = NULL;
	char *bin = NULL;
	uint32_t blen = 0;

	lm_assert_ok(lm_prefs_store_byhost(f->store, KEY, &v, where, sizeof(where)));
	assert_null(v);
	lm_assert_contains(where, "/ByHost/" DOMAIN ".");
	file = where;
	assert_int_equal(strlen(strrchr(file, '/') + 1), strlen(DOMAIN ".") + 36 + strlen(".plist"));
	assert_int_equal(strspn(file + strlen(file) - 42, "0123456789ABCDEF-"), 36);
	assert_int_equal(mkdir(f->prefs, 0700), 0);
	assert_int_equal(mkdir(dir, 0700), 0);
	plist_dict_set_item(d, KEY, plist_new_bool(0));
	plist_to_bin(d, &bin, &blen);
	lm_test_write(other, bin, blen);
	lm_test_write(f->file, bin, blen);
	lm_assert_ok(lm_prefs_store_byhost(f->store, KEY, &v, where, sizeof(where)));
	assert_null(v); /* neither another host's value nor the any-host one */
	lm_test_write(where, bin, blen);
	lm_assert_ok(lm_prefs_store_byhost(f->store, KEY, &v, where, sizeof(where)));
	assert_int_equal(plist_get_node_type(v), PLIST_BOOLEAN);
	plist_free(v);
	lm_assert_ok(lm_prefs_store_byhost(f->store, "OtherKey", &v, where, sizeof(where)));
	assert_null(v);
	lm_plist_mem_free(bin);
	plist_free(d);
	free(other);
	free(dir);
}

static void test_domain_validation(void **state)
{
	lm_prefs_store *s = NULL;

	(void)state;
	lm_assert_fails(lm_prefs_store_open_plist(&s, "/tmp", "../etc/passwd"), LM_EINVALID);
	lm_assert_fails(lm_prefs_store_open_plist(&s, "/tmp", ".hidden"), LM_EINVALID);
	lm_assert_fails(lm_prefs_store_open_plist(&s, "/tmp", "a/b"), LM_EINVALID);
	lm_assert_fails(lm_prefs_store_open_plist(&s, "/tmp", ""), LM_EINVALID);
	assert_null(s);
	lm_assert_ok(lm_prefs_store_open_plist(&s, "/tmp/", "com.example.x-y_z"));
	assert_string_equal(lm_prefs_store_path(s), "/tmp/com.example.x-y_z.plist");
	lm_prefs_store_free(s);
	lm_prefs_store_free(NULL);
}

/* Every type survives the journal's text form exactly, and describes itself with its type. */
static void test_value_encoding_round_trips_every_type(void **state)
{
	plist_t all = NULL, back = NULL, item;
	plist_dict_iter it = NULL;
	char *key = NULL, *text = NULL, desc[512];
	size_t n = 0;

	(void)state;
	lm_assert_ok(lm_plist_read(every_type_xml, strlen(every_type_xml), "every_type_xml", &all, NULL));
	plist_dict_new_iter(all, &it);
	for (;;) {
		item = NULL;
		plist_dict_next_item(all, it, &key, &item);
		if (item == NULL)
			break;
		lm_assert_ok(lm_pref_plist_encode(item, &text));
		lm_assert_ok(lm_pref_plist_decode(text, &back));
		assert_true(lm_pref_plist_equal(item, back));
		lm_pref_plist_describe(item, desc, sizeof(desc));
		lm_assert_contains(desc, lm_pref_plist_type(item));
		plist_free(back);
		free(text);
		free(key);
		n++;
	}
	free(it);
	assert_int_equal(n, 8);
	/* The whole dictionary too. */
	lm_assert_ok(lm_pref_plist_encode(all, &text));
	lm_assert_ok(lm_pref_plist_decode(text, &back));
	assert_true(lm_pref_plist_equal(all, back));
	plist_free(back);
	free(text);
	plist_free(all);

	lm_assert_fails(lm_pref_plist_decode("not base64!", &back), LM_EINVALID);
	lm_assert_fails(lm_pref_plist_decode("aGVsbG8=", &back), LM_EINVALID); /* "hello" */
	lm_assert_fails(lm_pref_plist_decode("", &back), LM_EINVALID);
	assert_null(back);
}

static void test_value_description_and_equality(void **state)
{
	lm_pref_value bv = {LM_PREF_BOOL, 1, 0, NULL}, iv = {LM_PREF_INTEGER, 0, -3, NULL};
	lm_pref_value sv = {LM_PREF_STRING, 0, 0, "YES"};
	plist_t b = lm_pref_value_to_plist(&bv), i = lm_pref_value_to_plist(&iv), s = lm_pref_value_to_plist(&sv);
	plist_t one = plist_new_uint(1), r = plist_new_real(1.0);
	char desc[512];

	(void)state;
	lm_pref_plist_describe(b, desc, sizeof(desc));
	assert_string_equal(desc, "true (bool)");
	lm_pref_plist_describe(i, desc, sizeof(desc));
	assert_string_equal(desc, "-3 (integer)");
	lm_pref_plist_describe(s, desc, sizeof(desc));
	assert_string_equal(desc, "YES (string)");
	lm_pref_plist_describe(NULL, desc, sizeof(desc));
	assert_string_equal(desc, "");
	/* Equality is by type and value: integer 1 and "YES" are not bool true. */
	assert_false(lm_pref_plist_equal(b, one));
	assert_false(lm_pref_plist_equal(b, s));
	assert_false(lm_pref_plist_equal(one, r));
	assert_true(lm_pref_plist_equal(NULL, NULL));
	assert_false(lm_pref_plist_equal(b, NULL));
	assert_true(lm_pref_plist_is_flag_type(b) && lm_pref_plist_is_flag_type(one) && lm_pref_plist_is_flag_type(s));
	assert_false(lm_pref_plist_is_flag_type(r));
	plist_free(b);
	plist_free(i);
	plist_free(s);
	plist_free(one);
	plist_free(r);
}

/* Issue 22: lm_host_pref_default is the one default (common/interface/pref_default.h), the one
 * the default profile sets. */
static void test_default_setting(void **state)
{
	lm_pref_setting def;
	lm_profile *p = NULL;

	(void)state;
	lm_host_pref_default(&def);
	assert_string_equal(def.domain, LM_PREF_DEFAULT_DOMAIN);
	assert_string_equal(def.key, LM_PREF_DEFAULT_KEY);
	assert_int_equal(def.value.type, LM_PREF_BOOL);
	assert_int_equal(def.value.boolean, 1);
	assert_int_equal(lm_profile_builtin(&p, lm_profile_default_name()), 0);
	assert_string_equal(lm_profile_host_preference(p)->domain, def.domain);
	assert_string_equal(lm_profile_host_preference(p)->key, def.key);
	lm_profile_free(p);
	assert_int_equal(lm_prefs_validate_domain(LM_PREF_DEFAULT_DOMAIN), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_absent_directory_reads_as_absent_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_set_writes_binary_and_keeps_every_other_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_delete_removes_file_only_when_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_strings_that_cannot_be_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(test_key_with_a_nul_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nesting_is_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unreadable_locations, setup, teardown),
		cmocka_unit_test_setup_teardown(test_managed_file_simulates_configuration_profile, setup, teardown),
		cmocka_unit_test_setup_teardown(test_byhost_file_is_the_current_hosts, setup, teardown),
		cmocka_unit_test(test_domain_validation),
		cmocka_unit_test(test_default_setting),
		cmocka_unit_test(test_value_encoding_round_trips_every_type),
		cmocka_unit_test(test_value_description_and_equality),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
