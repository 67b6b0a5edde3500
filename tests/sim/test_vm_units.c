/* VM manager internals without a simulator: the name validator, the JSON reader that copes with
 * `lume`'s log lines, VM objects, and child processes with a deadline. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "lume-metal.h"
#include "vm_internal.h"
#include "lm_test.h"

static void test_name_valid(void **state)
{
	char out[LM_VM_NAME_MAX];

	(void)state;
	lm_assert_ok(lm_vm_name_normalize("my-vm", out));
	assert_string_equal(out, "my-vm");
	lm_assert_ok(lm_vm_name_normalize("macos-sequoia-cua:latest", out));
	assert_string_equal(out, "macos-sequoia-cua_latest");
	lm_assert_ok(lm_vm_name_normalize("A.b_C-9", out));
	assert_string_equal(out, "A.b_C-9");
	lm_assert_ok(lm_vm_name_normalize("..x", out));
}

static void check_invalid(const char *name, const char *mention)
{
	char out[LM_VM_NAME_MAX];

	lm_assert_fails(lm_vm_name_normalize(name, out), LM_EINVALID);
	assert_string_equal(out, "");
	lm_assert_error_has(mention);
}

static void test_name_invalid(void **state)
{
	char long_name[LM_VM_NAME_MAX + 8];

	(void)state;
	check_invalid("", "empty");
	check_invalid(NULL, "empty");
	check_invalid(".", "not allowed");
	check_invalid("..", "not allowed");
	check_invalid("a/b", "character '/' at position 2");
	check_invalid("a b", "character ' ' at position 2");
	check_invalid("vm;rm -rf", "character ';'");
	check_invalid("vm$(x)", "character '$'");
	check_invalid("vm\n", "character \\x0a");
	check_invalid("caf\xc3\xa9", "character \\xc3");
	check_invalid("vm%20x", "character '%'");
	check_invalid("-rf", "must not start with '-'");
	check_invalid(":tag", "NAME:TAG");
	check_invalid("name:", "NAME:TAG");
	check_invalid("a:b:c", "NAME:TAG");
	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	check_invalid(long_name, "too long");
	long_name[LM_VM_NAME_MAX - 1] = '\0'; /* 127 bytes: the longest allowed */
	{
		char out[LM_VM_NAME_MAX];
		lm_assert_ok(lm_vm_name_normalize(long_name, out));
	}
}

static void test_json_among_log_lines(void **state)
{
	const char *out =
	    "[2026-08-01T10:00:00Z] INFO: Listing VMs\n"
	    "[lume] notice: something\n"
	    "[{\n  \"name\": \"a\", \"status\": \"running\", \"os\": \"macOS\",\n"
	    "  \"ipAddress\": \"192.168.64.5\", \"sshAvailable\": true }]\n"
	    "[2026-08-01T10:00:01Z] INFO: done\n";
	cJSON *doc;
	lm_vm_info *vms;
	size_t n;

	(void)state;
	lm_assert_ok(lm_vm_json_find(out, cJSON_Array, &doc));
	lm_assert_ok(lm_vm_info_array_from_json(doc, &vms, &n, "test"));
	assert_int_equal(n, 1);
	assert_string_equal(vms[0].name, "a");
	assert_string_equal(vms[0].ip, "192.168.64.5");
	assert_int_equal(vms[0].ssh_available, 1);
	lm_free(vms);
	cJSON_Delete(doc);

	lm_assert_ok(lm_vm_json_find("[]\n", cJSON_Array, &doc));
	assert_int_equal(cJSON_GetArraySize(doc), 0);
	cJSON_Delete(doc);
	lm_assert_fails(lm_vm_json_find("INFO: no json here\n[broken\n", cJSON_Array, &doc), LM_EINVALID);
	assert_null(doc);
	lm_assert_fails(lm_vm_json_find("", cJSON_Array, &doc), LM_EINVALID);
	lm_assert_fails(lm_vm_json_find("{\"a\":1}\n", cJSON_Array, &doc), LM_EINVALID);
	lm_assert_ok(lm_vm_json_find("log\n  {\"a\":1}\n", cJSON_Object, &doc));
	cJSON_Delete(doc);
}

static void test_vm_objects(void **state)
{
	cJSON *doc;
	lm_vm_info info;

	(void)state;
	/* Every key null but name and status, as Lume sends for a stopped VM. */
	doc = cJSON_Parse("{\"name\":\"v\",\"status\":\"stopped\",\"os\":null,\"ipAddress\":null,\"sshAvailable\":null}");
	lm_assert_ok(lm_vm_info_from_json(doc, &info, "t"));
	assert_string_equal(info.os, "");
	assert_string_equal(info.ip, "");
	assert_int_equal(info.ssh_available, 0);
	cJSON_Delete(doc);
	doc = cJSON_Parse("{\"name\":\"v\"}");
	lm_assert_fails(lm_vm_info_from_json(doc, &info, "t"), LM_ERROR);
	cJSON_Delete(doc);
	doc = cJSON_Parse("{\"name\":\"v\",\"status\":\"running\",\"ipAddress\":5}");
	lm_assert_fails(lm_vm_info_from_json(doc, &info, "t"), LM_ERROR);
	cJSON_Delete(doc);
	doc = cJSON_Parse("[1]");
	lm_assert_fails(lm_vm_info_from_json(doc, &info, "t"), LM_ERROR);
	cJSON_Delete(doc);
}

/* `utmctl list`: the fixed table, read by words whatever the padding, line ends or stray lines. */
static void test_utm_list_table(void **state)
{
	char text[] =
	    "UUID                                 Status   Name\r\n"
	    "5A1B0C2D-3E4F-4A5B-8C6D-000000000001 started  dev-vm\r\n"
	    "\n"
	    "NOTE: something utmctl printed\n"
	    "5A1B0C2D-3E4F-4A5B-8C6D-000000000002 stopped  My Mac VM  \n"
	    "not-a-uuid stopped vm3\n"
	    "5A1B0C2D-3E4F-4A5B-8C6D-000000000004 paused   last";
	char empty[] = "UUID                                 Status   Name\n";
	lm_vm_info *vms = NULL;
	size_t n = 0;

	(void)state;
	lm_assert_ok(lm_vm_utm_parse_list(text, &vms, &n));
	assert_int_equal(n, 3);
	assert_string_equal(vms[0].name, "dev-vm");
	assert_string_equal(vms[0].status, "running"); /* UTM's "started" */
	assert_string_equal(vms[1].name, "My Mac VM"); /* the rest of the line, inner spaces kept */
	assert_string_equal(vms[1].status, "stopped");
	assert_string_equal(vms[2].name, "last");
	assert_string_equal(vms[2].status, "paused");
	free(vms);
	lm_assert_ok(lm_vm_utm_parse_list(empty, &vms, &n));
	assert_int_equal(n, 0);
	assert_null(vms);
}

static void test_excerpt(void **state)
{
	char buf[12];

	(void)state;
	lm_vm_excerpt("\n  hello\nworld", buf, sizeof(buf));
	assert_string_equal(buf, "hello");
	lm_vm_excerpt("a\x01z", buf, sizeof(buf));
	assert_string_equal(buf, "a?z");
	lm_vm_excerpt("0123456789abcdef", buf, sizeof(buf));
	assert_string_equal(buf, "01234567...");
}

static void test_proc_env_drops_password(void **state)
{
	char *show[] = {"/bin/sh", "-c", "echo \"[${LUME_METAL_SSH_PASSWORD-unset}]\"", NULL};
	char **env;
	lm_proc_result res;

	(void)state;
	setenv("LUME_METAL_SSH_PASSWORD", "s3cret", 1);
	env = lm_proc_env_with("LUME_LOG_LEVEL", "error");
	unsetenv("LUME_METAL_SSH_PASSWORD");
	assert_non_null(env);
	lm_assert_ok(lm_proc_run(show, env, 10, &res));
	assert_string_equal(res.out, "[unset]\n");
	lm_proc_result_dispose(&res);
	lm_strv_free(env);
}

static void test_proc_run_and_timeout(void **state)
{
	char *echo[] = {"/bin/sh", "-c", "echo out; echo err >&2; echo $LUME_LOG_LEVEL; exit 3", NULL};
	char *sleeper[] = {"/bin/sleep", "10", NULL};
	char *missing[] = {"/nonexistent/lume", NULL};
	char **env = lm_proc_env_with("LUME_LOG_LEVEL", "error");
	lm_proc_result res;

	(void)state;
	assert_non_null(env);
	lm_assert_ok(lm_proc_run(echo, env, 10, &res));
	assert_string_equal(res.out, "out\nerror\n");
	assert_string_equal(res.err, "err\n");
	assert_int_equal(res.exit_code, 3);
	assert_int_equal(res.timed_out, 0);
	lm_proc_result_dispose(&res);

	/* timed_out says the 0.3 s limit ended it (sleep would have run 10 s). */
	lm_assert_ok(lm_proc_run(sleeper, env, 0.3, &res));
	assert_int_equal(res.timed_out, 1);
	lm_proc_result_dispose(&res);

	lm_assert_fails(lm_proc_run(missing, env, 1, &res), LM_ENOTFOUND);
	lm_strv_free(env);
}

static void test_find_program(void **state)
{
	char *p = NULL;

	(void)state;
	lm_assert_ok(lm_proc_find_program("sh", &p));
	lm_assert_contains(p, "/sh");
	free(p);
	lm_assert_ok(lm_proc_find_program("/bin/sh", &p));
	free(p);
	lm_assert_fails(lm_proc_find_program("lume-metal-no-such-program", &p), LM_ENOTFOUND);
	lm_assert_fails(lm_proc_find_program("/etc", &p), LM_ENOTFOUND);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name_valid),
		cmocka_unit_test(test_name_invalid),
		cmocka_unit_test(test_json_among_log_lines),
		cmocka_unit_test(test_vm_objects),
		cmocka_unit_test(test_excerpt),
		cmocka_unit_test(test_utm_list_table),
		cmocka_unit_test(test_proc_run_and_timeout),
		cmocka_unit_test(test_proc_env_drops_password),
		cmocka_unit_test(test_find_program),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
