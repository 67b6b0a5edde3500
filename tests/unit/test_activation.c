/* The host's reader of the shim's activation records (host/lib/guestops/activation.c,
 * docs/activation-format.md): records written by the real shim -- preloaded into the real probe
 * and a shell on the fake Metal, as in tests/guest -- read into the typed list, told in one line
 * and as JSON; and damaged ones, each refused with a message that says what is wrong and where.
 * The fetch over SFTP runs in the bench scenarios (tests/e2e/bench.sh). */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "guest_activation.h"
#include "lm_test.h"

/* Run argv with the shim preloaded on the fake Metal's stock device, its records into a new
 * directory; returns the directory (free()). extra: "NAME=value" strings, NULL-terminated. */
static char *run_recorded(char *const argv[], char *const extra[])
{
	char *dir = lm_test_tmpdir("activation");
	char lib[1200], pre[1200], rec[1200];
	char *envp[12];
	size_t n = 0;
	lm_test_result *r = malloc(sizeof(*r));

	assert_non_null(r);
	snprintf(lib, sizeof(lib), "LD_LIBRARY_PATH=%s/stock", LM_METAL_ROOT);
	snprintf(pre, sizeof(pre), "LD_PRELOAD=%s", LM_SHIM);
	snprintf(rec, sizeof(rec), "LUME_METAL_RECORD_DIR=%s", dir);
	envp[n++] = lib;
	envp[n++] = pre;
	envp[n++] = rec;
	for (size_t i = 0; extra != NULL && extra[i] != NULL && n < 11; i++)
		envp[n++] = extra[i];
	envp[n] = NULL;
	lm_test_run(r, argv, envp, NULL);
	if (r->status != 0)
		fail_msg("%s: status %d\n%s", argv[0], r->status, r->err);
	free(r);
	return dir;
}

/* Every record of a local directory into list (what lm_activation_fetch does over SFTP). */
static void load_dir(const char *dir, lm_activation_list *list)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort);

	assert_true(n >= 0);
	for (int i = 0; i < n; i++) {
		if (lm_activation_file_name_ok(names[i]->d_name)) {
			char *path = lm_test_join(dir, names[i]->d_name);
			size_t len;
			char *text = lm_test_slurp(path, &len);

			assert_non_null(text);
			lm_assert_ok(lm_activation_list_add(list, path, names[i]->d_name, text, len));
			free(text);
			free(path);
		}
		free(names[i]);
	}
	free(names);
}

/* The probe's one record, shimmed with LUME_METAL_APPLE_FAMILY_MAX=family. */
static char *probe_record(const char *family, lm_activation_list *list)
{
	char fam[64];
	char *argv[] = { LM_PROBE, "--report", NULL };
	char *extra[] = { fam, NULL };
	char *dir;

	snprintf(fam, sizeof(fam), "LUME_METAL_APPLE_FAMILY_MAX=%s", family);
	dir = run_recorded(argv, extra);
	load_dir(dir, list);
	assert_int_equal(list->count, 1);
	return dir;
}

static void cleanup(char *dir)
{
	assert_int_equal(lm_test_rmtree(dir), 0);
	free(dir);
}

static void test_real_record(void **state)
{
	lm_activation_list list = { 0 };
	char *dir = probe_record("1009", &list), *summary, want[4400], exe[4096];
	const lm_activation *a = &list.items[0];
	cJSON *json;

	assert_non_null(realpath(LM_PROBE, exe));
	assert_string_equal(a->exe, exe);
	assert_int_equal(a->ppid, getpid());
	assert_true(lm_activation_took(a));
	assert_true(a->active);
	assert_int_equal(a->apple_family_max, 1009);
	assert_int_equal(a->max_threadgroup_memory, 65536);
	assert_false(a->has_working_set);
	assert_string_equal(a->written, "exit");
	assert_string_equal(a->shim_version, LM_VERSION);
	assert_int_equal(a->nclasses, 1);
	assert_string_equal(a->classes[0].name, "AppleParavirtDevice");
	assert_string_equal(a->classes[0].device, "Apple Paravirtual device");
	assert_int_equal(a->nquestions, 17);
	assert_int_equal(a->questions[8].family, 1009);
	assert_false(a->questions[8].stock);
	assert_true(a->questions[8].given);
	assert_int_equal(a->ntg, 1);
	assert_string_equal(a->setting, "");
	assert_true(a->inherit); /* the spawn rule passes the shim on */
	assert_string_equal(a->variable, "LD_PRELOAD");

	lm_assert_ok(lm_activation_summary(a, &summary));
	assert_true(snprintf(want, sizeof(want), "pid %lld %s: asked Apple6\xe2\x86\x92yes (stock no), Apple7\xe2\x86\x92yes (stock no), "
	    "Apple8\xe2\x86\x92yes (stock no), Apple9\xe2\x86\x92yes (stock no) (13 other answers unchanged); "
	    "maxThreadgroupMemoryLength 64 KiB (stock 32 KiB)", (long long)a->pid, exe) < (int)sizeof(want));
	assert_string_equal(summary, want);

	lm_assert_ok(lm_activation_json(a, &json));
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(json, "took")));
	assert_string_equal(cJSON_GetObjectItem(json, "summary")->valuestring, summary);
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(json, "record"), "pid")->valuedouble, (double)a->pid);
	assert_string_equal(cJSON_GetObjectItem(json, "exe")->valuestring, exe);
	cJSON_Delete(json);
	free(summary);
	lm_activation_list_dispose(&list);
	assert_int_equal(list.count, 0);
	cleanup(dir);
}

/* A shell that loads the shim and asks nothing, its probe child; a profile the shim refuses; a
 * device class it refuses. */
static void test_real_records_other(void **state)
{
	static char script[] = "\"$0\" --report >/dev/null";
	char *sh[] = { "/bin/sh", "-c", script, LM_PROBE, NULL };
	char *probe[] = { LM_PROBE, "--report", NULL };
	char *inherit[] = { "LUME_METAL_APPLE_FAMILY_MAX=1007", "LUME_METAL_INHERIT=1",
		"LUME_METAL_INHERIT_REASON=guest SIP enabled", NULL };
	char *refused[] = { "LUME_METAL_APPLE_FAMILY_MAX=1009", "LUME_METAL_MAX_THREADGROUP_MEMORY=64k", NULL };
	lm_activation_list list = { 0 };
	char *dir, *summary;
	const lm_activation *shell, *child;

	dir = run_recorded(sh, inherit);
	load_dir(dir, &list);
	assert_int_equal(list.count, 2);
	/* In pid order: the shell was first. */
	shell = &list.items[0];
	child = &list.items[1];
	assert_true(shell->pid < child->pid);
	assert_int_equal(child->ppid, shell->pid);
	assert_true(shell->inherit);
	assert_string_equal(shell->setting, "1");
	assert_string_equal(shell->host_reason, "guest SIP enabled");
	lm_assert_ok(lm_activation_summary(shell, &summary));
	assert_non_null(strstr(summary, ": loaded the shim, asked no Metal question"));
	free(summary);
	assert_true(lm_activation_took(child));
	lm_assert_ok(lm_activation_summary(child, &summary));
	assert_non_null(strstr(summary, "asked Apple6\xe2\x86\x92yes (stock no), Apple7\xe2\x86\x92yes (stock no) "
	    "(15 other answers unchanged)"));
	free(summary);
	lm_activation_list_dispose(&list);
	cleanup(dir);

	dir = run_recorded(probe, refused);
	load_dir(dir, &list);
	assert_false(lm_activation_took(&list.items[0]));
	lm_assert_ok(lm_activation_summary(&list.items[0], &summary));
	assert_non_null(strstr(summary, ": loaded the shim, stayed stock: LUME_METAL_MAX_THREADGROUP_MEMORY is not a "
	    "decimal number"));
	free(summary);
	lm_activation_list_dispose(&list);
	cleanup(dir);
}

/* ---- damaged records ---------------------------------------------------------------------- */

typedef void (*mutation)(cJSON *doc);

static cJSON *path_item(cJSON *doc, const char *a, const char *b)
{
	cJSON *o = cJSON_GetObjectItem(doc, a);

	return b != NULL ? (b[0] >= '0' && b[0] <= '9' ? cJSON_GetArrayItem(o, atoi(b)) : cJSON_GetObjectItem(o, b)) : o;
}

static void set(cJSON *obj, const char *key, cJSON *v)
{
	assert_true(cJSON_ReplaceItemInObject(obj, key, v));
}

static void m_pid_text(cJSON *d) { set(d, "pid", cJSON_CreateString("123")); }
static void m_pid_zero(cJSON *d) { set(d, "pid", cJSON_CreateNumber(0)); }
static void m_no_exe(cJSON *d) { cJSON_DeleteItemFromObject(d, "exe"); }
/* Version 1.0 names every member (a 1.x reader ignores those it does not know): a 1.0 record with
 * one more is refused. The real shim writes 1.1, whose added members 1.0 does not have. */
static void m_extra(cJSON *d)
{
	set(d, "format", cJSON_CreateString("lume-metal-activation/1"));
	cJSON_DeleteItemFromObject(d, "forked");
	cJSON_DeleteItemFromObject(d, "spawns");
	cJSON_DeleteItemFromObject(d, "spawns_dropped");
	cJSON_AddTrueToObject(d, "unlocked");
}
static void m_format2(cJSON *d) { set(d, "format", cJSON_CreateString("lume-metal-activation/2")); }
static void m_report(cJSON *d) { set(d, "format", cJSON_CreateString("lume-metal-report/1")); }
static void m_arch(cJSON *d) { set(d, "arch", cJSON_CreateString("ppc")); }
static void m_written(cJSON *d) { set(d, "written", cJSON_CreateString("later")); }
static void m_seq(cJSON *d) { set(d, "sequence", cJSON_CreateNumber(1.5)); }
static void m_active_why(cJSON *d) { set(path_item(d, "profile", NULL), "why_stock", cJSON_CreateString("x")); }
static void m_family_max(cJSON *d) { set(path_item(d, "profile", NULL), "apple_family_max", cJSON_CreateNumber(2001)); }
static void m_class_index(cJSON *d) { set(path_item(d, "questions", "3"), "device_class", cJSON_CreateNumber(1)); }
static void m_question_twice(cJSON *d)
{
	cJSON *qs = cJSON_GetObjectItem(d, "questions");

	cJSON_AddItemToArray(qs, cJSON_Duplicate(cJSON_GetArrayItem(qs, 0), 1));
}
static void m_question_bool(cJSON *d) { set(path_item(d, "questions", "0"), "given", cJSON_CreateNumber(1)); }
static void m_questions_many(cJSON *d)
{
	cJSON *qs = cJSON_GetObjectItem(d, "questions");

	for (int i = 0; i < 60; i++) {
		cJSON *q = cJSON_Duplicate(cJSON_GetArrayItem(qs, 0), 1);

		set(q, "family", cJSON_CreateNumber(7001 + i));
		cJSON_AddItemToArray(qs, q);
	}
}
static void m_tg_below(cJSON *d) { set(path_item(d, "threadgroup_memory_reads", "0"), "given", cJSON_CreateNumber(1024)); }
static void m_hook_why(cJSON *d) { set(path_item(path_item(d, "hooks", NULL), "init_gpu_family_support", NULL), "why_not",
	cJSON_CreateString("because")); }
static void m_class_name_long(cJSON *d)
{
	char name[200];

	memset(name, 'C', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	set(cJSON_GetArrayItem(cJSON_GetObjectItem(path_item(d, "hooks", NULL), "device_classes"), 0), "class",
	    cJSON_CreateString(name));
}
static void m_setting(cJSON *d) { set(path_item(d, "children", NULL), "setting", cJSON_CreateString("2")); }
static void m_variable(cJSON *d) { set(path_item(d, "children", NULL), "variable", cJSON_CreateString("PATH")); }
static void m_children(cJSON *d) { set(d, "children", cJSON_CreateArray()); }

static void test_damaged(void **state)
{
	static const struct {
		mutation change;
		int code;
		const char *message;
	} cases[] = {
		{ m_pid_text, LM_EINVALID, "$.pid: expected an integer in 1..9999999999, found \"123\"" },
		{ m_pid_zero, LM_EINVALID, "$.pid: expected an integer in 1..9999999999, found 0" },
		{ m_no_exe, LM_EINVALID, "$.exe: expected a string or null, found nothing (the member is missing)" },
		{ m_extra, LM_EINVALID, "unlocked" },
		{ m_format2, LM_EUNSUPPORTED, "format lume-metal-activation/2 is not version 1" },
		{ m_report, LM_EINVALID, "(not an activation record)" },
		{ m_arch, LM_EINVALID, "$.arch: \"ppc\" is not one of the values this version knows" },
		{ m_written, LM_EINVALID, "$.written: \"later\"" },
		{ m_seq, LM_EINVALID, "$.sequence: expected an integer" },
		{ m_active_why, LM_EINVALID, "$.profile: active is true but apple_family_max is set and why_stock set" },
		{ m_family_max, LM_EINVALID, "$.profile.apple_family_max: expected an integer in 1001..1999, found 2001" },
		{ m_class_index, LM_EINVALID, "$.questions[3].device_class: class 1 is not in hooks.device_classes (1 entries)" },
		{ m_question_twice, LM_EINVALID, "$.questions[17]: family 1001 is asked twice for class 0" },
		{ m_question_bool, LM_EINVALID, "$.questions[0].given: expected true or false, found 1" },
		{ m_questions_many, LM_EINVALID, "$.questions: has 77 entries, more than the shim records (64)" },
		{ m_tg_below, LM_EINVALID, "$.threadgroup_memory_reads[0]: given 1024 is below stock 32768" },
		{ m_hook_why, LM_EINVALID, "$.hooks.init_gpu_family_support: why_not must be null exactly when installed is true" },
		{ m_class_name_long, LM_EINVALID, "$.hooks.device_classes[0].class: expected 1 to 127 bytes, found 199" },
		{ m_setting, LM_EINVALID, "$.children.setting: \"2\" is not one of the values" },
		{ m_variable, LM_EINVALID, "$.children.variable: \"PATH\"" },
		{ m_children, LM_EINVALID, "$.children: expected an object, found an empty array" },
	};
	lm_activation_list list = { 0 };
	char *dir = probe_record("1009", &list);
	char name[32];

	snprintf(name, sizeof(name), "%s", list.items[0].file);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *doc = cJSON_Parse(list.items[0].text);
		char *text;

		assert_non_null(doc);
		cases[i].change(doc);
		text = cJSON_Print(doc);
		lm_assert_fails(lm_activation_list_add(&list, "guest:/rec/x.json", name, text, strlen(text)), cases[i].code);
		lm_assert_error_has("guest:/rec/x.json");
		lm_assert_error_has(cases[i].message);
		if (cases[i].code == LM_EINVALID)
			lm_assert_error_has("a damaged activation record: ");
		assert_int_equal(list.count, 1); /* nothing added */
		free(text);
		cJSON_Delete(doc);
	}
	cleanup(dir);
	lm_activation_list_dispose(&list);
}

/* spawns[].pid (issue 48): the child's pid is read (it ties a worker's record to the process that
 * started it, for an agent's pruning); null (an exec, a failed call) and absent read as 0; another
 * type is a damaged record. */
static void test_spawn_pid(void **state)
{
	static const char *const pids[] = { "4251", "null", NULL, "\"4251\"" };
	lm_activation_list list = { 0 };
	char *dir = probe_record("1009", &list);
	char name[32];

	(void)state;
	snprintf(name, sizeof(name), "%s", list.items[0].file);
	for (size_t i = 0; i < sizeof(pids) / sizeof(pids[0]); i++) {
		cJSON *doc = cJSON_Parse(list.items[0].text), *spawns, *sp;
		lm_activation a;
		char *text;

		assert_non_null(doc);
		spawns = cJSON_GetObjectItem(doc, "spawns");
		assert_non_null(spawns);
		sp = cJSON_Parse("{\"call\": \"posix_spawn\", \"path\": \"/opt/homebrew/bin/ollama\", \"resolved\": "
		    "\"/opt/homebrew/bin/ollama\", \"interpreter\": null, \"protected\": false, \"shim\": \"kept\", "
		    "\"why\": \"not a protected program\", \"error\": null}");
		assert_non_null(sp);
		if (pids[i] != NULL)
			cJSON_AddItemToObject(sp, "pid", cJSON_Parse(pids[i]));
		cJSON_AddItemToArray(spawns, sp);
		text = cJSON_Print(doc);
		memset(&a, 0, sizeof(a));
		if (i == 3) {
			lm_assert_fails(lm_activation_parse("rec", text, strlen(text), &a), LM_EINVALID);
			lm_assert_error_has("pid");
		} else {
			lm_assert_ok(lm_activation_parse("rec", text, strlen(text), &a));
			assert_true(a.nspawns >= 1);
			assert_int_equal(a.spawns[a.nspawns - 1].pid, i == 0 ? 4251 : 0);
		}
		free(text);
		cJSON_Delete(doc);
	}
	cleanup(dir);
	lm_activation_list_dispose(&list);
}

/* What is wrong before the members: the text, the size, the name. */
static void test_damaged_text(void **state)
{
	lm_activation_list list = { 0 };
	char *dir = probe_record("1009", &list);
	const lm_activation *a = &list.items[0];
	char *big, other[32];
	size_t len = a->text_len;

	/* Cut short: a writer that did not write atomically. */
	lm_assert_fails(lm_activation_list_add(&list, "cut", a->file, a->text, len / 2), LM_EINVALID);
	lm_assert_error_has("cut: ");
	lm_assert_error_has("invalid JSON");
	lm_assert_fails(lm_activation_list_add(&list, "empty", a->file, "", 0), LM_EINVALID);
	lm_assert_fails(lm_activation_list_add(&list, "nul", a->file, "{\"format\": \"x\0\"}", 17), LM_EINVALID);
	lm_assert_fails(lm_activation_list_add(&list, "array", a->file, "[1]", 3), LM_EINVALID);
	lm_assert_fails(lm_activation_list_add(&list, "dup", a->file, "{\"pid\": 1, \"pid\": 2}", 20), LM_EINVALID);
	lm_assert_error_has("pid");
	/* Larger than 64 KiB: refused before it is parsed. */
	big = malloc(LM_ACTIVATION_MAX_BYTES + 2);
	assert_non_null(big);
	memcpy(big, a->text, len);
	memset(big + len, ' ', LM_ACTIVATION_MAX_BYTES + 1 - len);
	lm_assert_fails(lm_activation_list_add(&list, "big", a->file, big, LM_ACTIVATION_MAX_BYTES + 1), LM_EINVALID);
	lm_assert_error_has("65536");
	free(big);

	/* The name: another pid than the record's, or not a record's name. */
	snprintf(other, sizeof(other), "%lld.json", (long long)a->pid + 1);
	lm_assert_fails(lm_activation_list_add(&list, "moved", other, a->text, len), LM_EINVALID);
	lm_assert_error_has("moved: it says pid");
	assert_false(lm_activation_file_name_ok("0123.json"));
	assert_false(lm_activation_file_name_ok("0.json"));
	assert_false(lm_activation_file_name_ok(".123.tmp"));
	assert_false(lm_activation_file_name_ok("123.json.tmp"));
	assert_false(lm_activation_file_name_ok("123.JSON"));
	assert_false(lm_activation_file_name_ok("12345678901.json"));
	assert_false(lm_activation_file_name_ok("../1.json"));
	assert_true(lm_activation_file_name_ok("9999999999.json"));
	lm_assert_fails(lm_activation_list_add(&list, "tmp", ".123.tmp", a->text, len), LM_EINVALID);
	lm_assert_error_has("not an activation record's name");
	assert_int_equal(list.count, 1);
	cleanup(dir);
	lm_activation_list_dispose(&list);
}

/* A newer minor version adds members, which are ignored; pid order; the count limit; the guest's
 * text never reaches the terminal as it is. */
static void test_versions_order_limits(void **state)
{
	lm_activation_list list = { 0 }, many = { 0 };
	char *dir = probe_record("1009", &list), *text, *summary, name[32];
	cJSON *doc = cJSON_Parse(list.items[0].text);
	int i;

	set(doc, "format", cJSON_CreateString("lume-metal-activation/1.3"));
	cJSON_AddStringToObject(doc, "future", "ignored");
	set(doc, "exe", cJSON_CreateString("/tmp/\x1b[31mred"));
	for (i = 1; i <= LM_ACTIVATION_MAX_RECORDS + 1; i++) {
		/* Added from the highest pid down: the list comes out in pid order. */
		int pid = LM_ACTIVATION_MAX_RECORDS + 2 - i;

		set(doc, "pid", cJSON_CreateNumber(pid));
		snprintf(name, sizeof(name), "%d.json", pid);
		text = cJSON_PrintUnformatted(doc);
		if (i <= LM_ACTIVATION_MAX_RECORDS) {
			lm_assert_ok(lm_activation_list_add(&many, "n", name, text, strlen(text)));
		} else {
			lm_assert_fails(lm_activation_list_add(&many, "n", name, text, strlen(text)), LM_ETOOLARGE);
			lm_assert_error_has("more than 256 activation records");
		}
		free(text);
	}
	assert_int_equal(many.count, LM_ACTIVATION_MAX_RECORDS);
	for (size_t k = 0; k < many.count; k++)
		assert_int_equal(many.items[k].pid, (int64_t)k + 2);
	lm_assert_ok(lm_activation_summary(&many.items[0], &summary));
	lm_assert_contains(summary, "pid 2 /tmp/\\x1b[31mred: asked Apple6");
	free(summary);
	cJSON_Delete(doc);
	lm_activation_list_dispose(&many);
	lm_activation_list_dispose(&list);
	cleanup(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_record),
		cmocka_unit_test(test_real_records_other),
		cmocka_unit_test(test_damaged),
		cmocka_unit_test(test_damaged_text),
		cmocka_unit_test(test_spawn_pid),
		cmocka_unit_test(test_versions_order_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
