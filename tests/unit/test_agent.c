/* Agent labels and the LaunchAgent plist (host/lib/guestops/agent_plist.c): what launchd gets, read
 * back with libplist as launchd and plutil would read it. The launchctl sequence runs in the e2e
 * scenarios against the guest's stand-ins (tests/e2e/cli.sh agents). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <plist/plist.h>

#include "guest_agents.h"
#include "guest_shim.h"
#include "lm_test.h"

static void test_labels(void **state)
{
	static const char *const good[] = {"com.example.llama-server", "org.llama.server2", "a", "A-1.b-2", "x.y.z"};
	static const char *const bad[] = {"", "bad label", "com/example", "com.example.", ".com.example", "-x",
	    "com..example", "com.apple.metal", "café", "x;rm", "a_b", "x\n"};
	char long_label[LM_AGENT_LABEL_MAX + 2];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		lm_assert_ok(lm_agent_label_check(good[i]));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		lm_assert_fails(lm_agent_label_check(bad[i]), LM_EINVALID);
		assert_true(strlen(lm_error_last()->message) > 0);
	}
	lm_assert_fails(lm_agent_label_check(NULL), LM_EINVALID);
	memset(long_label, 'a', sizeof(long_label) - 1);
	long_label[sizeof(long_label) - 1] = '\0';
	lm_assert_fails(lm_agent_label_check(long_label), LM_EINVALID);
	lm_assert_error_has("at most 127");
	long_label[LM_AGENT_LABEL_MAX - 1] = '\0';
	lm_assert_ok(lm_agent_label_check(long_label));
}

static void shim_env(lm_shim_env *se)
{
	memset(se, 0, sizeof(*se));
	snprintf(se->injection, sizeof(se->injection), "DYLD_INSERT_LIBRARIES");
	snprintf(se->shim_path, sizeof(se->shim_path), "/Users/lume/.local/share/lume-metal/current/libshim.dylib");
	snprintf(se->probe_path, sizeof(se->probe_path), "/Users/lume/.local/share/lume-metal/current/metal-capabilities");
	se->env[0].name = "LUME_METAL_APPLE_FAMILY_MAX";
	snprintf(se->env[0].value, sizeof(se->env[0].value), "1009");
	se->env[1].name = "LUME_METAL_MAX_THREADGROUP_MEMORY";
	snprintf(se->env[1].value, sizeof(se->env[1].value), "65536");
	se->nenv = 2;
}

static const char *dict_string(plist_t dict, const char *key)
{
	plist_t item = plist_dict_get_item(dict, key);
	static char *last;

	free(last);
	last = NULL;
	if (item == NULL || plist_get_node_type(item) != PLIST_STRING)
		return NULL;
	plist_get_string_val(item, &last);
	return last;
}

static plist_t build_typed(const lm_agent_spec *spec, const char *program, const char *process_type)
{
	lm_shim_env se;
	plist_t root = NULL;
	char *xml = NULL;
	size_t len = 0;

	shim_env(&se);
	lm_assert_ok(lm_agent_plist_build(spec, program, &se, "/Users/lume", process_type, &xml, &len));
	assert_int_equal(strlen(xml), len);
	lm_assert_contains(xml, "<?xml");
	plist_from_xml(xml, (uint32_t)len, &root);
	free(xml);
	assert_non_null(root);
	assert_int_equal(plist_get_node_type(root), PLIST_DICT);
	return root;
}

static plist_t build(const lm_agent_spec *spec, const char *program)
{
	return build_typed(spec, program, NULL);
}

static void test_plist(void **state)
{
	const char *argv[] = {"llama-server", "--port", "8080", "-m", "/Users/lume/models/m.gguf"};
	lm_agent_spec spec = {"com.example.llama-server", argv, 5, 1, 0};
	plist_t root, args, env, item;
	uint8_t b = 0;
	uint32_t i;

	(void)state;
	root = build(&spec, "/opt/homebrew/bin/llama-server");
	assert_string_equal(dict_string(root, "Label"), "com.example.llama-server");
	/* The program itself (resolved), never a launcher, then the arguments as given. */
	args = plist_dict_get_item(root, "ProgramArguments");
	assert_int_equal(plist_get_node_type(args), PLIST_ARRAY);
	assert_int_equal(plist_array_get_size(args), 5);
	for (i = 0; i < 5; i++) {
		char *s = NULL;
		plist_get_string_val(plist_array_get_item(args, i), &s);
		assert_string_equal(s, i == 0 ? "/opt/homebrew/bin/llama-server" : argv[i]);
		free(s);
	}
	env = plist_dict_get_item(root, "EnvironmentVariables");
	assert_string_equal(dict_string(env, "DYLD_INSERT_LIBRARIES"),
	    "/Users/lume/.local/share/lume-metal/current/libshim.dylib");
	assert_string_equal(dict_string(env, "LUME_METAL_APPLE_FAMILY_MAX"), "1009");
	assert_string_equal(dict_string(env, "LUME_METAL_MAX_THREADGROUP_MEMORY"), "65536");
	assert_string_equal(dict_string(env, "PATH"),
	    "/Users/lume/.local/share/lume-metal/current:/opt/homebrew/bin:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin");
	assert_int_equal(plist_dict_get_size(env), 4);
	assert_string_equal(dict_string(root, "StandardOutPath"),
	    "/Users/lume/Library/Logs/lume-metal/com.example.llama-server.out.log");
	assert_string_equal(dict_string(root, "StandardErrorPath"),
	    "/Users/lume/Library/Logs/lume-metal/com.example.llama-server.err.log");
	item = plist_dict_get_item(root, "KeepAlive");
	assert_non_null(item);
	plist_get_bool_val(item, &b);
	assert_true(b);
	assert_null(plist_dict_get_item(root, "RunAtLoad"));
	/* Not throttled: without ProcessType launchd applies light resource limits (launchd.plist(5)). */
	assert_string_equal(dict_string(root, "ProcessType"), "Interactive");
	/* Label, ProgramArguments, EnvironmentVariables, 2 paths, ProcessType, KeepAlive */
	assert_int_equal(plist_dict_get_size(root), 7);
	plist_free(root);

	/* --process-type: another of launchd's values. */
	root = build_typed(&spec, "/opt/homebrew/bin/llama-server", "Background");
	assert_string_equal(dict_string(root, "ProcessType"), "Background");
	plist_free(root);

	/* RunAtLoad alone. */
	spec.keep_alive = 0;
	spec.run_at_load = 1;
	root = build(&spec, "/opt/homebrew/bin/llama-server");
	assert_null(plist_dict_get_item(root, "KeepAlive"));
	assert_non_null(plist_dict_get_item(root, "RunAtLoad"));
	plist_free(root);
	dict_string(NULL, "");
}

static void test_plist_refused(void **state)
{
	const char *argv[] = {"llama-server"};
	lm_agent_spec spec = {"com.example.x", argv, 1, 0, 0};
	lm_shim_env se;
	char *xml = (char *)"untouched", home[LM_AGENT_PATH_MAX + 8];
	size_t len = 1;

	(void)state;
	shim_env(&se);
	/* launchd needs an absolute program. */
	lm_assert_fails(lm_agent_plist_build(&spec, "llama-server", &se, "/Users/lume", NULL, &xml, &len), LM_EINVALID);
	assert_null(xml);
	assert_int_equal(len, 0);
	spec.label = "bad label";
	assert_int_equal(lm_agent_plist_build(&spec, "/opt/homebrew/bin/llama-server", &se, "/Users/lume", NULL, &xml, &len),
	    LM_EINVALID);
	/* Paths that would not fit are refused, not cut. */
	spec.label = "com.example.x";
	memset(home, 'h', sizeof(home) - 1);
	home[0] = '/';
	home[sizeof(home) - 1] = '\0';
	assert_int_equal(lm_agent_plist_build(&spec, "/opt/homebrew/bin/llama-server", &se, home, NULL, &xml, &len),
	    LM_EINVALID);
	lm_assert_error_has("longer than");
	/* A ProcessType launchd does not know is refused, naming the ones it does. */
	assert_int_equal(lm_agent_plist_build(&spec, "/opt/homebrew/bin/llama-server", &se, "/Users/lume", "Fast", &xml,
	    &len), LM_EINVALID);
	lm_assert_error_has("'Fast' is not a launchd ProcessType: Interactive, Adaptive, Standard or Background");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_plist),
		cmocka_unit_test(test_plist_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
