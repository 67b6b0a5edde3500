/* What a workload's records say (host/lib/guestops/activation.c, workload_records.c; issue 34), on
 * hand-made records of format 1.0 and 1.1 (docs/activation-format.md): the one rule of "got the
 * unlock" (an answer widened), 1.1's spawns read and checked, a directory of more records than the
 * reader takes (the rest counted) and of damaged ones (skipped and said, never an error), and the
 * one sentence run prints when nothing was widened. Directories are read through the local
 * transport (ssh_local.h), which serves the SFTP calls' contracts on this machine. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "guest_activation.h"
#include "guest_codesign.h"
#include "guest_workload.h"
#include "lm_test.h"
#include "ssh_local.h"

/* One process's record, every member of 1.0 present; the caller changes what it tests. */
static cJSON *record(int pid, const char *minor)
{
	char format[64];
	cJSON *d = cJSON_CreateObject(), *p, *h, *init, *classes, *c, *ch;

	snprintf(format, sizeof(format), "lume-metal-activation/%s", minor);
	cJSON_AddStringToObject(d, "format", format);
	cJSON_AddNumberToObject(d, "pid", pid);
	cJSON_AddNumberToObject(d, "ppid", 1);
	cJSON_AddStringToObject(d, "exe", "/opt/homebrew/bin/worker");
	cJSON_AddStringToObject(d, "arch", "arm64");
	cJSON_AddStringToObject(d, "shim_version", "0.1.0");
	cJSON_AddStringToObject(d, "written", "update");
	cJSON_AddNumberToObject(d, "sequence", 2);
	cJSON_AddFalseToObject(d, "incomplete");
	p = cJSON_AddObjectToObject(d, "profile");
	cJSON_AddTrueToObject(p, "active");
	cJSON_AddNullToObject(p, "why_stock");
	cJSON_AddNumberToObject(p, "apple_family_max", 1009);
	cJSON_AddNumberToObject(p, "max_threadgroup_memory", 65536);
	cJSON_AddNullToObject(p, "recommended_working_set_size");
	h = cJSON_AddObjectToObject(d, "hooks");
	init = cJSON_AddObjectToObject(h, "init_gpu_family_support");
	cJSON_AddTrueToObject(init, "installed");
	cJSON_AddNullToObject(init, "why_not");
	classes = cJSON_AddArrayToObject(h, "device_classes");
	c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "class", "MTLFakeDevice");
	cJSON_AddTrueToObject(c, "installed");
	cJSON_AddNullToObject(c, "why_not");
	cJSON_AddStringToObject(c, "device", "Apple Paravirtual device");
	cJSON_AddItemToArray(classes, c);
	cJSON_AddArrayToObject(d, "questions");
	cJSON_AddArrayToObject(d, "threadgroup_memory_reads");
	ch = cJSON_AddObjectToObject(d, "children");
	cJSON_AddTrueToObject(ch, "inherit");
	cJSON_AddStringToObject(ch, "variable", "DYLD_INSERT_LIBRARIES");
	cJSON_AddStringToObject(ch, "setting", "1");
	cJSON_AddStringToObject(ch, "why", "LUME_METAL_INHERIT=1");
	cJSON_AddStringToObject(ch, "host_reason", "guest SIP enabled");
	if (strcmp(minor, "1.0") != 0) {
		cJSON_AddArrayToObject(d, "spawns");
		cJSON_AddNumberToObject(d, "spawns_dropped", 0);
	}
	return d;
}

static void question(cJSON *d, int family, int stock, int given)
{
	cJSON *q = cJSON_CreateObject();

	cJSON_AddNumberToObject(q, "device_class", 0);
	cJSON_AddNumberToObject(q, "family", family);
	cJSON_AddBoolToObject(q, "stock", stock);
	cJSON_AddBoolToObject(q, "given", given);
	cJSON_AddItemToArray(cJSON_GetObjectItem(d, "questions"), q);
}

static void tg_read(cJSON *d, double stock, double given)
{
	cJSON *t = cJSON_CreateObject();

	cJSON_AddNumberToObject(t, "device_class", 0);
	cJSON_AddNumberToObject(t, "stock", stock);
	cJSON_AddNumberToObject(t, "given", given);
	cJSON_AddItemToArray(cJSON_GetObjectItem(d, "threadgroup_memory_reads"), t);
}

static void spawn(cJSON *d, const char *call, const char *path, const char *shim)
{
	cJSON *s = cJSON_CreateObject();

	cJSON_AddStringToObject(s, "call", call);
	cJSON_AddStringToObject(s, "path", path);
	cJSON_AddFalseToObject(s, "protected");
	cJSON_AddStringToObject(s, "shim", shim);
	cJSON_AddStringToObject(s, "why", "not a protected program: the shim is passed on");
	cJSON_AddItemToArray(cJSON_GetObjectItem(d, "spawns"), s);
}

/* d parsed as <pid>.json (consumed); the return code, the record in *a. */
static int parse(cJSON *d, lm_activation *a)
{
	char *text = cJSON_PrintUnformatted(d);
	int rc = lm_activation_parse("test", text, strlen(text), a);

	free(text);
	cJSON_Delete(d);
	return rc;
}

static int took(cJSON *d)
{
	lm_activation *a = calloc(1, sizeof(*a));
	int rc, t;

	assert_non_null(a);
	rc = parse(d, a);
	lm_assert_ok(rc);
	t = lm_activation_took(a);
	free(a);
	return t;
}

/* The one rule: a supportsFamily: stock said no and the shim yes, or a raised threadgroup memory. */
static void test_rule(void **state)
{
	cJSON *d;

	(void)state;
	assert_false(took(record(10, "1.0")));          /* loaded, asked nothing */
	d = record(10, "1.1");
	question(d, 1007, 1, 1);                        /* asked, stock already yes */
	question(d, 2001, 0, 0);
	assert_false(took(d));
	d = record(10, "1.1");
	question(d, 1007, 1, 1);
	question(d, 1009, 0, 1);                        /* widened */
	assert_true(took(d));
	d = record(10, "1.0");
	tg_read(d, 32768, 32768);
	assert_false(took(d));
	d = record(10, "1.0");
	tg_read(d, 32768, 65536);
	assert_true(took(d));
}

/* 1.1's spawns: read in order; a damaged entry refused naming it; a 1.x without them reads as none. */
static void test_spawns(void **state)
{
	lm_activation *a = calloc(1, sizeof(*a));
	cJSON *d;

	(void)state;
	assert_non_null(a);
	d = record(20, "1.1");
	spawn(d, "posix_spawn", "/Applications/Ollama.app/Contents/Resources/llama-server", "kept");
	spawn(d, "posix_spawn_setexec", "/usr/bin/true", "removed");
	lm_assert_ok(parse(d, a));
	assert_int_equal(a->nspawns, 2);
	assert_string_equal(a->spawns[0].call, "posix_spawn");
	assert_string_equal(a->spawns[0].path, "/Applications/Ollama.app/Contents/Resources/llama-server");
	assert_string_equal(a->spawns[0].shim, "kept");
	assert_string_equal(a->spawns[1].shim, "removed");

	d = record(20, "1.1");
	spawn(d, "fork", "/bin/sh", "kept");
	lm_assert_fails(parse(d, a), LM_EINVALID);
	lm_assert_error_has("$.spawns[0].call");
	d = record(20, "1.1");
	spawn(d, "execve", "/bin/sh", "maybe");
	lm_assert_fails(parse(d, a), LM_EINVALID);
	lm_assert_error_has("$.spawns[0].shim");
	d = record(20, "1.1");
	cJSON_ReplaceItemInObject(d, "spawns_dropped", cJSON_CreateNumber(3));
	lm_assert_fails(parse(d, a), LM_EINVALID);
	lm_assert_error_has("not marked incomplete");
	d = record(20, "1.1");
	cJSON_ReplaceItemInObject(d, "spawns", cJSON_CreateObject());
	lm_assert_fails(parse(d, a), LM_EINVALID);
	lm_assert_error_has("$.spawns: expected an array");
	/* 1.0 with spawns: an unknown member of 1.0 is damage. */
	d = record(20, "1.0");
	cJSON_AddArrayToObject(d, "spawns");
	lm_assert_fails(parse(d, a), LM_EINVALID);
	d = record(20, "1.2");
	cJSON_DeleteItemFromObject(d, "spawns");
	cJSON_DeleteItemFromObject(d, "spawns_dropped");
	lm_assert_ok(parse(d, a));
	assert_int_equal(a->nspawns, 0);
	free(a);
}

typedef struct {
	char *dir, *records, *old_home;
	lm_context *ctx;
	lm_ssh *ssh;
} fixture;

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));
	lm_options o;

	f->dir = lm_test_tmpdir("workload-records");
	f->records = lm_test_join(f->dir, "records");
	assert_int_equal(lm_test_mkdir_p(f->records, 0700), 0);
	f->old_home = getenv("HOME") != NULL ? strdup(getenv("HOME")) : NULL;
	setenv("HOME", f->dir, 1);
	lm_assert_ok(lm_options_init(&o, LM_OPTIONS_VERSION));
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
	free(f->records);
	free(f->dir);
	free(f);
	return 0;
}

static void put(const fixture *f, int pid, cJSON *d)
{
	char name[32], *path, *text = cJSON_PrintUnformatted(d);

	snprintf(name, sizeof(name), "%d.json", pid);
	path = lm_test_join(f->records, name);
	lm_test_write_text(path, text);
	free(path);
	free(text);
	cJSON_Delete(d);
}

/* 300 shim-loading processes and a damaged record: the first 256 by pid read, the rest counted,
 * the damaged one said and skipped, the shim's temporary file ignored; nothing of it an error. */
static void test_scale_and_damage(void **state)
{
	fixture *f = *state;
	lm_workload_records r;
	char *tmp = lm_test_join(f->records, ".1500.tmp"), *bad = lm_test_join(f->records, "999.json");
	int pid;

	for (pid = 1000; pid < 1300; pid++) {
		cJSON *d = record(pid, "1.1");

		if (pid == 1299)
			question(d, 1009, 0, 1);
		put(f, pid, d);
	}
	lm_test_write_text(bad, "{\"format\": \"lume-metal-activation/1.1\", \"pid\": ");
	lm_test_write_text(tmp, "partial");
	lm_assert_ok(lm_workload_records_read(f->ssh, f->records, &r));
	assert_int_equal(r.count, LM_ACTIVATION_MAX_RECORDS);
	assert_int_equal(r.dropped, 300 - LM_ACTIVATION_MAX_RECORDS);
	assert_int_equal(r.took, 0); /* the widened one is past the limit: pid 1299 */
	assert_int_equal(r.nskipped, 1);
	assert_non_null(r.skipped[0]);
	lm_assert_contains(r.skipped[0], "999.json");
	assert_null(r.skipped[1]);
	lm_assert_contains(r.lines[0], "pid 1000 /opt/homebrew/bin/worker: loaded the shim, asked no Metal question");
	lm_workload_records_dispose(&r);
	free(tmp);
	free(bad);
}

/* The sentence run prints when nothing was widened: what the records show, never "no process
 * loaded the shim" beside a process that did; library validation named as such. */
static void test_why_not(void **state)
{
	fixture *f = *state;
	const char *argv[] = { "worker" };
	lm_workload_records r;
	lm_guest_facts g;
	lm_run_target *t = calloc(1, sizeof(*t));
	char *why = NULL;

	assert_non_null(t);
	memset(&g, 0, sizeof(g));
	snprintf(g.sip, sizeof(g.sip), "enabled");
	snprintf(t->program, sizeof(t->program), "/opt/homebrew/bin/worker");
	put(f, 4000, record(4000, "1.1"));
	lm_assert_ok(lm_workload_records_read(f->ssh, f->records, &r));
	lm_assert_ok(lm_workload_records_why_not(&r, &g, t, 0, argv, 1, &why));
	assert_non_null(why);
	assert_string_equal(why, "no answer was widened: 1 process loaded the shim and it was not given more than "
	    "stock (the lines above say what each asked)");
	assert_false(lm_test_contains(why, "no process"));
	free(why);
	lm_workload_records_dispose(&r);

	/* None loaded it: the program validates libraries (the hardened runtime with the dyld
	 * entitlement, not disable-library-validation). */
	lm_test_rmtree(f->records);
	assert_int_equal(lm_test_mkdir_p(f->records, 0700), 0);
	t->program_sig.seen = 1;
	t->program_sig.hardened = 1;
	t->program_sig.allow_dyld_env = 1;
	snprintf(t->program_sig.flags, sizeof(t->program_sig.flags), "0x10000(runtime)");
	lm_assert_ok(lm_workload_records_read(f->ssh, f->records, &r));
	lm_assert_ok(lm_workload_records_why_not(&r, &g, t, 0, argv, 1, &why));
	assert_non_null(why);
	lm_assert_contains(why, "no process of the workload loaded the shim: library validation refused it: worker");
	free(why);
	lm_workload_records_dispose(&r);

	/* A widened answer: nothing to explain. */
	{
		cJSON *d = record(4001, "1.1");

		question(d, 1009, 0, 1);
		put(f, 4001, d);
	}
	lm_assert_ok(lm_workload_records_read(f->ssh, f->records, &r));
	assert_int_equal(r.took, 1);
	lm_assert_ok(lm_workload_records_why_not(&r, &g, t, 0, argv, 1, &why));
	assert_null(why);
	lm_workload_records_dispose(&r);

	/* The directory gone: said, not an error. */
	lm_test_rmtree(f->records);
	lm_assert_ok(lm_workload_records_read(f->ssh, f->records, &r));
	assert_int_equal(r.count, 0);
	assert_int_equal(r.nskipped, 1);
	lm_workload_records_dispose(&r);
	free(t);
}

/* A program a record says was started with the shim kept, with no record of its own: what codesign
 * says of it names why it ran stock (a codesign on PATH that answers as macOS's does: hardened for
 * llama-server, library validation for lv-worker, plain for the rest). */
static void test_stock_children(void **state)
{
	fixture *f = *state;
	lm_workload_records r;
	char *bin = lm_test_join(f->dir, "bin"), *tool = lm_test_join(bin, "codesign"), *path;
	char *old_path = getenv("PATH") != NULL ? strdup(getenv("PATH")) : NULL;
	cJSON *d = record(5000, "1.1");

	assert_int_equal(lm_test_mkdir_p(bin, 0700), 0);
	lm_test_write_text(tool, "#!/bin/sh\n"
	    "for f; do :; done\n"
	    "case $f in\n"
	    "*/llama-server) echo 'CodeDirectory v=20500 size=1 flags=0x10000(runtime) hashes=1+7 location=embedded' >&2 ;;\n"
	    "*/lv-worker) echo 'CodeDirectory v=20500 size=1 flags=0x10000(runtime) hashes=1+7 location=embedded' >&2\n"
	    "  printf '[Dict]\\n\\t[Key] com.apple.security.cs.allow-dyld-environment-variables\\n\\t[Value]\\n\\t\\t[Bool] true\\n' ;;\n"
	    "*) echo 'CodeDirectory v=20500 size=1 flags=0x20002(adhoc,linker-signed) hashes=1+7 location=embedded' >&2 ;;\n"
	    "esac\n");
	assert_int_equal(chmod(tool, 0755), 0);
	path = malloc(strlen(bin) + strlen(old_path != NULL ? old_path : "") + 2);
	assert_non_null(path);
	sprintf(path, "%s:%s", bin, old_path != NULL ? old_path : "");
	setenv("PATH", path, 1);
	/* The local transport's commands get the environment it was opened with. */
	lm_ssh_free(f->ssh);
	lm_assert_ok(lm_ssh_open_local(&f->ssh, f->ctx));
	spawn(d, "posix_spawn", "/Applications/Ollama.app/Contents/Resources/llama-server", "kept");
	spawn(d, "posix_spawn", "/opt/lv/lv-worker", "kept");
	spawn(d, "posix_spawn", "/opt/homebrew/bin/plain", "kept");
	spawn(d, "execve", "/usr/bin/true", "removed");          /* not passed on: the record says why */
	spawn(d, "posix_spawn", "/opt/homebrew/bin/worker", "kept"); /* it wrote a record */
	put(f, 5000, d);
	lm_assert_ok(lm_workload_records_read(f->ssh, f->records, &r));
	if (old_path != NULL)
		setenv("PATH", old_path, 1);
	assert_non_null(r.stock_children);
	assert_non_null(r.stock_children[0]);
	assert_string_equal(r.stock_children[0], "llama-server is signed with the hardened runtime: it ran stock "
	    "(/Applications/Ollama.app/Contents/Resources/llama-server, flags=0x10000(runtime), without the entitlement "
	    "com.apple.security.cs.allow-dyld-environment-variables)");
	assert_non_null(r.stock_children[1]);
	lm_assert_contains(r.stock_children[1], "lv-worker is signed with library validation: library validation refused "
	    "the shim, it ran stock (/opt/lv/lv-worker");
	assert_null(r.stock_children[2]);
	lm_workload_records_dispose(&r);
	free(path);
	free(old_path);
	free(tool);
	free(bin);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule),
		cmocka_unit_test(test_spawns),
		cmocka_unit_test_setup_teardown(test_scale_and_damage, setup, teardown),
		cmocka_unit_test_setup_teardown(test_why_not, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stock_children, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
