/* Issue 11 (reliability and security), the parts a unit test reaches: the one sanitiser (item 3),
 * no hang on a FIFO for any file lume-metal reads (item 5), relative directories refused by the
 * library (item 6), the one range check before a JSON number becomes an integer (item 7, run under
 * the asan preset with UBSan's float-cast-overflow check), and fixed buffers that fail or end
 * visibly instead of cutting silently (item 8). The known-hosts and password-file parts need an
 * SSH server: tests/ssh/test_ssh_guest.c. The CLI parts: cli_safety.sh. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <setjmp.h>

#include <cmocka.h>

#include "lume-metal.h"
#include "error_internal.h"
#include "guest_bundle.h"
#include "guest_machine.h"
#include "fs.h"
#include "json.h"
#include "record.h"
#include "state.h"
#include "text.h"
#include "lm_test.h"

static char *tmp_dir;

static char *path_in(const char *name)
{
	return lm_test_join(tmp_dir, name);
}

static void make_fifo(const char *path)
{
	unlink(path);
	assert_int_equal(mkfifo(path, 0600), 0);
}

static lm_context *context_in(const char *state, const char *prefs, const char *bundle)
{
	lm_options o;
	lm_context *ctx = NULL;

	assert_int_equal(lm_options_init(&o, LM_OPTIONS_VERSION), 0);
	o.state_dir = state;
	o.prefs_dir = prefs;
	o.bundle_dir = bundle;
	o.connect_timeout = 2;
	lm_assert_ok(lm_context_new(&ctx, &o));
	return ctx;
}

static int setup(void **state)
{
	(void)state;
	tmp_dir = lm_test_tmpdir("safety");
	/* A FIFO that blocks would hang the test: the alarm makes that a failure instead. */
	alarm(600);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	alarm(0);
	lm_test_rmtree(tmp_dir);
	free(tmp_dir);
	return 0;
}

/* ---- item 3: one sanitiser ------------------------------------------------------------------ */

static char *sanitized(const char *s, size_t len, unsigned flags)
{
	return lm_text_sanitized(s, len, flags);
}

static void test_sanitiser(void **state)
{
	/* ESC [ 3 1 m, a C1 CSI (U+009B), a lone byte, an overlong '/', a truncated sequence. */
	static const char evil[] = "vm\x1b[31m\xc2\x9b" "2J\xff\xc0\xaf\xe2\x82";
	static const char good[] = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80";
	char *s, out[32];
	size_t bad;

	(void)state;
	s = sanitized(evil, sizeof(evil) - 1, 0);
	assert_string_equal(s, "vm\\x1b[31m\\xc2\\x9b2J\\xff\\xc0\\xaf\\xe2\\x82");
	free(s);
	/* Well-formed printable UTF-8 passes as it is. */
	s = sanitized(good, sizeof(good) - 1, 0);
	assert_string_equal(s, good);
	free(s);
	/* Lines: newlines and tabs kept, CR and DEL not; quoted: quotes and backslashes escaped. */
	s = lm_text_printable("a\n\tb\rc\x7f");
	assert_string_equal(s, "a\n\tb\\rc\\x7f");
	lm_free(s);
	s = sanitized("\"a\\b\"\n", 6, LM_TEXT_QUOTED);
	assert_string_equal(s, "\\\"a\\\\b\\\"\\n");
	free(s);
	/* lm_text_quote never ends inside a UTF-8 sequence when it cuts, and marks the cut. */
	lm_text_quote(out, 9, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 10, 100);
	lm_assert_ok(lm_utf8_check(out, strlen(out), &bad));
	assert_string_equal(out, "\xc3\xa9\xc3\xa9...");
	/* A rejected VM name in a library message: no raw escape byte. */
	{
		char name[LM_VM_NAME_MAX];
		lm_assert_fails(lm_vm_name_normalize("bad\x1b]0;owned\x07name", name), LM_EINVALID);
		assert_null(strchr(lm_error_last()->message, '\x1b'));
		assert_null(strchr(lm_error_last()->message, '\x07'));
		lm_assert_error_has("\\x1b]0;owned\\x07");
		lm_assert_fails(lm_vm_name_normalize("\xff\xfe", name), LM_EINVALID);
		lm_assert_ok(lm_utf8_check(lm_error_last()->message, strlen(lm_error_last()->message), &bad));
	}
}

/* ---- item 5: FIFOs never hang --------------------------------------------------------------- */

static void test_fifo_reader(void **state)
{
	char *fifo = path_in("fifo"), *data = NULL;
	size_t len = 0;
	struct stat st;
	int fd = -1;

	(void)state;
	make_fifo(fifo);
	lm_assert_fails(lm_fs_read_file(fifo, 100, &data, &len), LM_EINVALID);
	lm_assert_error_has("FIFO");
	lm_assert_fails(lm_fs_open_read(fifo, &fd, &st), LM_EINVALID);
	assert_int_equal(fd, -1);
	/* A profile. */
	{
		lm_profile *p = NULL;
		lm_assert_fails(lm_profile_load_file(&p, fifo), LM_EINVALID);
		lm_assert_error_has(fifo);
		lm_assert_error_has("FIFO");
	}
	free(fifo);
}

static void test_fifo_journal_lock_plist(void **state)
{
	char *dir = path_in("fifo-state"), *prefs = path_in("fifo-prefs"), *journal, *lock, *plist;
	lm_host_pref_info info;
	lm_pref_setting want;
	lm_context *ctx;
	lm_state *st = NULL;

	(void)state;
	lm_assert_ok(lm_fs_mkdir_private(dir));
	lm_assert_ok(lm_fs_mkdir_private(prefs));
	journal = lm_test_join(dir, "state.json");
	lock = lm_test_join(dir, "state.lock");
	plist = lm_test_join(prefs, "com.apple.gpusw.ParavirtualizedGraphics.plist");
	ctx = context_in(dir, prefs, NULL);
	/* The journal. */
	make_fifo(journal);
	/* Not a journal at all: a state error naming the file, never a usage error (issue 25). */
	lm_assert_fails(lm_state_open(&st, ctx), LM_ECORRUPT);
	assert_null(st);
	lm_assert_error_has("FIFO");
	lm_assert_fails(lm_state_open_ex(&st, ctx, LM_STATE_READONLY, 1), LM_ECORRUPT);
	unlink(journal);
	/* The lock file. */
	make_fifo(lock);
	lm_assert_fails(lm_state_open(&st, ctx), LM_EIO);
	lm_assert_error_has("not a regular file");
	unlink(lock);
	/* The preference plist. */
	make_fifo(plist);
	lm_host_pref_default(&want);
	memset(&info, 0, sizeof(info));
	lm_assert_fails(lm_host_pref_status(ctx, &want, &info), LM_EINVALID);
	lm_assert_error_has("FIFO");
	memset(&info, 0, sizeof(info));
	lm_assert_fails(lm_host_pref_enable(ctx, &want, &info), LM_EINVALID);
	unlink(plist);
	lm_context_free(ctx);
	free(journal);
	free(lock);
	free(plist);
	free(dir);
	free(prefs);
}

static void test_fifo_manifest_key_password_known_hosts(void **state)
{
	char *bundle = path_in("fifo-bundle"), *manifest, *key = path_in("fifo-key"), *pw = path_in("fifo-pw"),
	     *sdir = path_in("fifo-kh"), *kh;
	lm_options o;
	lm_guest_facts facts;
	lm_bundle *b = NULL;
	lm_context *ctx;
	lm_ssh *ssh = NULL;

	(void)state;
	assert_int_equal(lm_options_init(&o, LM_OPTIONS_VERSION), 0);
	/* The bundle manifest. */
	lm_assert_ok(lm_fs_mkdir_private(bundle));
	manifest = lm_test_join(bundle, "manifest.json");
	make_fifo(manifest);
	ctx = context_in(sdir, NULL, bundle);
	memset(&facts, 0, sizeof(facts));
	lm_assert_fails(lm_bundle_open(&b, ctx, &facts), LM_EINVALID);
	lm_assert_error_has("FIFO");
	lm_context_free(ctx);
	/* A key file and a password file: refused before any connection is tried (port 1 of a
	 * loopback address nobody listens on would say "refused" otherwise). */
	make_fifo(key);
	o.state_dir = sdir;
	o.ssh_key = key;
	lm_assert_ok(lm_context_new(&ctx, &o));
	lm_assert_fails(lm_ssh_connect(&ssh, ctx, "vm", "127.0.0.1", 1), LM_EINVALID);
	lm_assert_error_has("FIFO");
	lm_context_free(ctx);
	make_fifo(pw);
	o.ssh_key = NULL;
	o.ssh_password_file = pw;
	lm_assert_ok(lm_context_new(&ctx, &o));
	lm_assert_fails(lm_ssh_connect(&ssh, ctx, "vm", "127.0.0.1", 1), LM_EINVALID);
	lm_assert_error_has("FIFO");
	lm_assert_error_has("password file");
	/* known_hosts. */
	lm_assert_ok(lm_fs_mkdir_private(sdir));
	kh = lm_test_join(sdir, "known_hosts");
	make_fifo(kh);
	lm_assert_fails(lm_ssh_forget_host(ctx, "vm"), LM_EINVALID);
	lm_assert_error_has("FIFO");
	lm_context_free(ctx);
	free(kh);
	free(manifest);
	free(bundle);
	free(key);
	free(pw);
	free(sdir);
}

/* ---- item 6: relative directories ------------------------------------------------------------- */

static void test_relative_dirs_refused(void **state)
{
	lm_options o;
	lm_context *ctx = NULL;

	(void)state;
	assert_int_equal(lm_options_init(&o, LM_OPTIONS_VERSION), 0);
	o.state_dir = "state";
	lm_assert_fails(lm_context_new(&ctx, &o), LM_EINVALID);
	lm_assert_error_has("relative");
	assert_null(ctx);
	o.state_dir = NULL;
	o.prefs_dir = "./prefs";
	lm_assert_fails(lm_context_new(&ctx, &o), LM_EINVALID);
	o.prefs_dir = NULL;
	o.bundle_dir = "bundle";
	lm_assert_fails(lm_context_new(&ctx, &o), LM_EINVALID);
	o.bundle_dir = NULL;
	/* Timeouts become milliseconds: NaN or absurd values are refused, not converted. */
	o.connect_timeout = NAN;
	lm_assert_fails(lm_context_new(&ctx, &o), LM_EINVALID);
	o.connect_timeout = 1e300;
	lm_assert_fails(lm_context_new(&ctx, &o), LM_EINVALID);
	o.connect_timeout = 0;
	o.state_dir = "/abs/state";
	lm_assert_ok(lm_context_new(&ctx, &o));
	lm_context_free(ctx);
}

/* Options of a version this library does not know are refused by name, never read; every version
 * it knows is filled with zeros, every default being 0 or NULL (the version-1 program:
 * tests/embed/abi_v1). */
static void test_options_versions(void **state)
{
	static const lm_options zeros = {.version = LM_OPTIONS_VERSION};
	/* The struct's fields; the padding after the last one is not the library's to write. */
	const size_t end = offsetof(lm_options, host_preference) + sizeof(zeros.host_preference);
	lm_options o;
	lm_context *ctx = NULL;

	(void)state;
	memset(&o, 0xa5, sizeof(o));
	assert_int_equal(lm_options_init(&o, LM_OPTIONS_VERSION), 0);
	assert_int_equal(o.version, LM_OPTIONS_VERSION);
	assert_memory_equal(&o, &zeros, end);
	assert_int_equal(lm_options_init(&o, 0), LM_EINVALID);
	lm_assert_error_has("lm_options_init: asked for version 0; this library reads lm_options versions 1 to");
	assert_int_equal(lm_options_init(&o, LM_OPTIONS_VERSION + 1), LM_EINVALID);
	assert_int_equal(lm_options_init(NULL, LM_OPTIONS_VERSION), LM_EINVALID);
	assert_int_equal(lm_options_init(&o, 1), 0);
	assert_int_equal(o.version, 1);
	o.version = LM_OPTIONS_VERSION + 1;
	assert_int_equal(lm_context_new(&ctx, &o), LM_EINVALID);
	lm_assert_error_has("options of version");
	assert_null(ctx);
	o.version = 0;
	assert_int_equal(lm_context_new(&ctx, &o), LM_EINVALID);
	assert_int_equal(lm_context_new(&ctx, NULL), LM_EINVALID);
	lm_assert_error_has("no options given");
	o.version = 1;
	o.state_dir = "/abs/state";
	assert_int_equal(lm_context_new(&ctx, &o), 0);
	assert_int_equal(lm_context_options(ctx)->version, LM_OPTIONS_VERSION);
	lm_context_free(ctx);
}

/* ---- item 7: double -> integer ----------------------------------------------------------------- */

static void test_json_to_int(void **state)
{
	int64_t v = 7;

	(void)state;
	lm_assert_ok(lm_json_to_int(1, 1, 10, &v));
	assert_int_equal(v, 1);
	lm_assert_ok(lm_json_to_int(9007199254740991.0, 0, INT64_MAX, &v));
	assert_true(v == 9007199254740991LL);
	assert_int_equal(lm_json_to_int(9007199254740992.0, 0, INT64_MAX, &v), -1);
	lm_assert_ok(lm_json_to_int(-9007199254740991.0, INT64_MIN, 0, &v));
	assert_int_equal(lm_json_to_int(1e300, INT64_MIN, INT64_MAX, &v), -1);
	assert_int_equal(lm_json_to_int(-1e300, INT64_MIN, INT64_MAX, &v), -1);
	assert_int_equal(lm_json_to_int(1.4e47, 0, INT64_MAX, &v), -1);
	assert_int_equal(lm_json_to_int(1.5, 0, 10, &v), -1);
	assert_int_equal(lm_json_to_int(NAN, INT64_MIN, INT64_MAX, &v), -1);
	assert_int_equal(lm_json_to_int(INFINITY, INT64_MIN, INT64_MAX, &v), -1);
	assert_int_equal(lm_json_to_int(11, 1, 10, &v), -1);
	lm_assert_ok(lm_json_to_int(-0.0, 0, 0, &v));
	assert_int_equal(v, 0);
}

static void test_out_of_range_numbers(void **state)
{
	static const char *const schemas[] = {"1e300", "-1e300", "1.5", "0", "2147483648", "\"1\""};
	char *dir = path_in("numbers"), *journal, *bundle = path_in("numbers-bundle"), *manifest, text[256];
	lm_guest_facts facts;
	lm_vm_record rec;
	lm_context *ctx;
	lm_state *st = NULL;
	lm_bundle *b = NULL;
	lm_profile *p = NULL;
	cJSON *vm;
	size_t i;

	(void)state;
	lm_assert_ok(lm_fs_mkdir_private(dir));
	journal = lm_test_join(dir, "state.json");
	ctx = context_in(dir, NULL, bundle);
	/* state.c: the schema number. */
	for (i = 0; i < sizeof(schemas) / sizeof(schemas[0]); i++) {
		snprintf(text, sizeof(text), "{\"schema\":%s,\"vms\":{}}\n", schemas[i]);
		lm_test_write_text(journal, text);
		if (lm_journal_open(&st, ctx, LM_STATE_READONLY, 1) != LM_ECORRUPT)
			fail_msg("schema %s: %s", schemas[i], lm_error_last()->message);
		assert_null(st);
	}
	/* vm_record.c: a boot time of 1e300 reads as unknown; a home too long for its field is an
	 * error, never cut. */
	vm = cJSON_Parse("{\"guest\":{\"os\":\"Darwin\",\"home\":\"/Users/lume\",\"boot_time\":1e300}}");
	lm_assert_ok(lm_vm_record_decode(vm, "vm1", &rec));
	assert_int_equal(rec.guest.boot_time, 0);
	assert_string_equal(rec.guest.home, "/Users/lume");
	lm_vm_record_dispose(&rec);
	cJSON_Delete(vm);
	{
		char *long_home = malloc(LM_GUEST_HOME_MAX + 200), *json = malloc(LM_GUEST_HOME_MAX + 300);
		char limit[32];
		memset(long_home, 'h', LM_GUEST_HOME_MAX + 199);
		long_home[0] = '/';
		long_home[LM_GUEST_HOME_MAX + 199] = '\0';
		snprintf(json, LM_GUEST_HOME_MAX + 300, "{\"guest\":{\"os\":\"Darwin\",\"home\":\"%s\"}}", long_home);
		vm = cJSON_Parse(json);
		lm_assert_fails(lm_vm_record_decode(vm, "vm1", &rec), LM_ECORRUPT);
		snprintf(limit, sizeof(limit), "%d", LM_GUEST_HOME_MAX - 1);
		lm_assert_error_has(limit);
		cJSON_Delete(vm);
		free(long_home);
		free(json);
	}
	/* bundle.c: a file size of 1.4e47, a version of 1e300. */
	lm_assert_ok(lm_fs_mkdir_private(bundle));
	manifest = lm_test_join(bundle, "manifest.json");
	lm_test_write_text(manifest, "{\"format\":\"lume-metal-bundle\",\"version\":1,\"bundle_id\":\"x-1\",\"platform\":\"p\","
	    "\"os\":\"Linux\",\"injection_variable\":\"LD_PRELOAD\",\"shim\":\"s\",\"probe\":\"p\",\"files\":[{\"name\":"
	    "\"s\",\"sha256\":\"0000000000000000000000000000000000000000000000000000000000000000\",\"size\":1.4e47,"
	    "\"mode\":\"0755\"}]}");
	memset(&facts, 0, sizeof(facts));
	lm_assert_fails(lm_bundle_open(&b, ctx, &facts), LM_EINVALID);
	lm_assert_error_has("size");
	lm_test_write_text(manifest, "{\"format\":\"lume-metal-bundle\",\"version\":1e300}");
	lm_assert_fails(lm_bundle_open(&b, ctx, &facts), LM_EINVALID);
	/* A profile's integer preference value. */
	assert_int_equal(lm_profile_parse(&p, "{\"format\":\"lume-metal-profile\",\"version\":1,\"name\":\"t\","
	    "\"capabilities\":{\"apple_family_max\":1009,\"max_threadgroup_memory\":65536},"
	    "\"host_preference\":{\"value\":1e300}}", 160, "t"), LM_EINVALID);
	lm_context_free(ctx);
	free(manifest);
	free(journal);
	free(bundle);
	free(dir);
}

/* ---- item 8: no silent truncation --------------------------------------------------------------- */

static void test_guest_home_limit(void **state)
{
	lm_guest_facts facts;
	char out[LM_GUEST_HOME_MAX + 512], current[96], limit[32];
	size_t n;

	(void)state;
	/* A home of LM_GUEST_HOME_MAX - 1 bytes fits; one more is an error naming the limit (it feeds
	 * `rm -rf` paths). */
	snprintf(limit, sizeof(limit), "%d bytes", LM_GUEST_HOME_MAX - 1);
	for (n = LM_GUEST_HOME_MAX - 1; n <= LM_GUEST_HOME_MAX; n++) {
		char home[LM_GUEST_HOME_MAX + 8];
		memset(home, 'h', n);
		home[0] = '/';
		home[n] = '\0';
		snprintf(out, sizeof(out), "Darwin\narm64\n26.5.2\n{ sec = 1796000000, usec = 0 }\n%s\n0.1.0-abc\n", home);
		if (n == LM_GUEST_HOME_MAX - 1) {
			lm_assert_ok(lm_guest_facts_parse(out, NULL, &facts, current, sizeof(current)));
			assert_string_equal(facts.home, home);
			assert_string_equal(current, "0.1.0-abc");
		} else {
			lm_assert_fails(lm_guest_facts_parse(out, NULL, &facts, current, sizeof(current)), LM_EREMOTE);
			lm_assert_error_has("home directory");
			lm_assert_error_has(limit);
		}
	}
	/* The same for the other fields. */
	{
		char os[LM_GUEST_FIELD_MAX + 1];
		memset(os, 'D', LM_GUEST_FIELD_MAX);
		os[LM_GUEST_FIELD_MAX] = '\0';
		snprintf(out, sizeof(out), "%s\narm64\n26\n\n/Users/lume\n\n", os);
		lm_assert_fails(lm_guest_facts_parse(out, NULL, &facts, NULL, 0), LM_EREMOTE);
		snprintf(limit, sizeof(limit), "%d bytes", LM_GUEST_FIELD_MAX - 1);
		lm_assert_error_has(limit);
	}
}

static void test_buffers_fail_or_show_the_cut(void **state)
{
	char small[8], big[600], *s;
	lm_buf b;

	(void)state;
	lm_assert_ok(lm_text_format(small, sizeof(small), "%s", "1234567"));
	assert_string_equal(small, "1234567");
	assert_int_equal(lm_text_format(small, sizeof(small), "%s", "12345678"), -1);
	assert_string_equal(small, "");
	lm_text_format_cut(small, sizeof(small), "%s", "12345678");
	assert_string_equal(small, "1234...");
	/* The formatted add used to stop at 512 bytes. */
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	lm_buf_init(&b, LM_BUF_TEXT_MAX);
	assert_int_equal(lm_buf_addf(&b, "<%s>", big), 0);
	assert_int_equal(lm_buf_take(&b, &s, NULL), 0);
	assert_int_equal(strlen(s), sizeof(big) + 1);
	free(s);
	/* An error message longer than its buffer ends in "...". */
	{
		char *huge = malloc(5000);
		memset(huge, 'm', 4999);
		huge[4999] = '\0';
		lm_error_set(LM_EINVALID, "%s", huge);
		s = (char *)lm_error_last()->message;
		assert_string_equal(s + strlen(s) - 3, "...");
		lm_error_prefix("context: ");
		s = (char *)lm_error_last()->message;
		assert_true(strncmp(s, "context: mmm", 12) == 0);
		assert_string_equal(s + strlen(s) - 3, "...");
		free(huge);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sanitiser),
		cmocka_unit_test(test_fifo_reader),
		cmocka_unit_test(test_fifo_journal_lock_plist),
		cmocka_unit_test(test_fifo_manifest_key_password_known_hosts),
		cmocka_unit_test(test_relative_dirs_refused),
		cmocka_unit_test(test_options_versions),
		cmocka_unit_test(test_json_to_int),
		cmocka_unit_test(test_out_of_range_numbers),
		cmocka_unit_test(test_guest_home_limit),
		cmocka_unit_test(test_buffers_fail_or_show_the_cut),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
