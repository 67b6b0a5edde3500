/* Profiles: every malformed input gets its exact message; canonical JSON round-trips; the
 * built-in profiles, the shim environment, expectation checks and the linter. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "lume-metal/error.h"
#include "lume-metal/profile.h"
#include "pref_default.h"
#include "lm_test.h"

#define MINIMAL "{\"format\":\"lume-metal-profile\",\"version\":1,\"name\":\"t\",\"description\":\"d\"," \
	"\"capabilities\":{\"apple_family_max\":1009,\"max_threadgroup_memory\":65536}}"

/* Each a document lm_profile_parse refuses: MINIMAL with one edit (its end "}}" is where members
 * are added, to the capabilities or the top level), or a short one of its own, and the message. */
static const struct {
	const char *name;
	lm_test_edit edit; /* of MINIMAL */
	const char *message;
} malformed[] = {
	{"empty", {.whole = ""},
	    "profile.json: the input is empty; expected a JSON object"},
	{"whitespace only", {.whole = "  \n\t "},
	    "profile.json: the input is empty; expected a JSON object"},
	{"array root", {.whole = "[]"},
	    "profile.json: $: expected an object, found an empty array"},
	{"number root", {.whole = "42"},
	    "profile.json: $: expected an object, found 42"},
	{"string root", {.whole = "\"profile\""},
	    "profile.json: $: expected an object, found \"profile\""},
	{"unclosed object", {.whole = "{"},
	    "profile.json: line 1, column 1 (byte 0): invalid JSON; check the quotes, commas and brackets near there"},
	{"trailing comma", {.whole = "{\"format\": \"lume-metal-profile\",}"},
	    "profile.json: line 1, column 33 (byte 32): invalid JSON; check the quotes, commas and brackets near there"},
	{"single quotes", {.whole = "{'format': 1}"},
	    "profile.json: line 1, column 3 (byte 2): invalid JSON; check the quotes, commas and brackets near there"},
	{"trailing garbage", {.from = "}}", .to = "}} x"},
	    "profile.json: line 1, column 146 (byte 145): unexpected data after the JSON value"},
	{"two documents", {.from = "}}", .to = "}}{\"a\":1}"},
	    "profile.json: line 1, column 145 (byte 144): unexpected data after the JSON value"},
	{"NUL byte", {.from = "}}", LM_TEST_TO_BYTES("}\0}")},
	    "profile.json: byte 143: NUL byte; the input must be UTF-8 text"},
	{"invalid UTF-8 byte", {.from = "\"description\":\"d\"", .to = "\"description\":\"d\xff\""},
	    "profile.json: byte 70: invalid UTF-8 (0xff); save the file as UTF-8"},
	{"overlong UTF-8", {.from = "\"description\":\"d\"", .to = "\"d\xc0\xaf\"escription\":\"d"},
	    "profile.json: byte 56: invalid UTF-8 (0xc0); save the file as UTF-8"},
	{"UTF-16 surrogate in UTF-8", {.from = "\"description\":\"d\"", .to = "\"description\":\"d\xed\xa0\x80\""},
	    "profile.json: byte 70: invalid UTF-8 (0xed); save the file as UTF-8"},
	{"cut UTF-8 sequence at end", {.from = "}}", .to = "}}\xe2\x82"},
	    "profile.json: byte 144: invalid UTF-8 (0xe2); save the file as UTF-8"},
	{"duplicate top-level key", {.from = "}}", .to = "},\"name\":\"u\"}"},
	    "profile.json: $: duplicate key \"name\"; each key may appear once"},
	{"duplicate nested key", {.from = "}}", .to = ",\"apple_family_max\":1010}}"},
	    "profile.json: $.capabilities: duplicate key \"apple_family_max\"; each key may appear once"},
	{"duplicate key in validated_on", {.from = "}}", .to = "},\"validated_on\":["
	    "{\"chip\":\"M1\",\"host_os\":\"macOS 26\",\"guest_os\":\"macOS 26\",\"workloads\":[\"llama.cpp\"],\"evidence\":\"e\",\"chip\":\"M2\"}]}"},
	    "profile.json: $.validated_on[0]: duplicate key \"chip\"; each key may appear once"},
	{"missing format", {.whole = "{\"version\":1}"},
	    "profile.json: $: missing required field \"format\" (\"lume-metal-profile\")"},
	{"wrong format", {.whole = "{\"format\":\"lume-metal-profil\",\"version\":1}"},
	    "profile.json: $.format: expected \"lume-metal-profile\", found \"lume-metal-profil\""},
	{"format not a string", {.whole = "{\"format\":1,\"version\":1}"},
	    "profile.json: $.format: expected \"lume-metal-profile\", found 1"},
	{"missing version", {.whole = "{\"format\":\"lume-metal-profile\"}"},
	    "profile.json: $: missing required field \"version\" (1)"},
	{"newer version", {.whole = "{\"format\":\"lume-metal-profile\",\"version\":2,\"whatever\":true}"},
	    "profile.json: $.version: expected 1, found 2; this lume-metal reads profile format version 1, a newer lume-metal is needed for this profile"},
	{"version as string", {.whole = "{\"format\":\"lume-metal-profile\",\"version\":\"1\"}"},
	    "profile.json: $.version: expected an integer in 1..1000000, found \"1\""},
	{"version as float", {.whole = "{\"format\":\"lume-metal-profile\",\"version\":1.5}"},
	    "profile.json: $.version: expected an integer in 1..1000000, found 1.5"},
	{"version negative", {.whole = "{\"format\":\"lume-metal-profile\",\"version\":-1}"},
	    "profile.json: $.version: expected an integer in 1..1000000, found -1"},
	{"misspelt top-level field", {.from = "}}", .to = "},\"descripton\":\"x\"}"},
	    "profile.json: $.descripton: unknown field; did you mean \"description\"?"},
	{"unknown top-level field", {.from = "}}", .to = "},\"extra\":true}"},
	    "profile.json: $.extra: unknown field (known fields: format, version, name, description, capabilities, host_preference, expectations, validated_on)"},
	{"missing name", {.whole = "{\"format\":\"lume-metal-profile\",\"version\":1,\"description\":\"d\"}"},
	    "profile.json: $: missing required field \"name\" (a name such as \"my-profile\")"},
	{"name with a space", {.from = "\"name\":\"t\"", .to = "\"name\":\"Bad Name\""},
	    "profile.json: $.name: expected a name of 1..64 characters from a-z, 0-9, '.', '_', '-' starting with a letter or digit, found \"Bad Name\""},
	{"empty name", {.from = "\"name\":\"t\"", .to = "\"name\":\"\""},
	    "profile.json: $.name: expected a name of 1..64 characters from a-z, 0-9, '.', '_', '-' starting with a letter or digit, found \"\""},
	{"name too long", {.from = "\"name\":\"t\"", .to = "\"name\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\""},
	    "profile.json: $.name: expected a name of 1..64 characters from a-z, 0-9, '.', '_', '-' starting with a letter or digit, found \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...\""},
	{"name starting with a dash", {.from = "\"name\":\"t\"", .to = "\"name\":\"-x\""},
	    "profile.json: $.name: expected a name of 1..64 characters from a-z, 0-9, '.', '_', '-' starting with a letter or digit, found \"-x\""},
	{"description a number", {.from = "\"description\":\"d\"", .to = "\"description\":42"},
	    "profile.json: $.description: expected a non-empty string of at most 1024 bytes without control characters, found 42"},
	{"empty description", {.from = "\"description\":\"d\"", .to = "\"description\":\"\""},
	    "profile.json: $.description: expected a non-empty string of at most 1024 bytes without control characters, found \"\""},
	{"description with a newline", {.from = "\"description\":\"d\"", .to = "\"description\":\"a\\nb\""},
	    "profile.json: $.description: expected a non-empty string of at most 1024 bytes without control characters, found \"a\\nb\""},
	{"missing capabilities", {.whole = "{\"format\":\"lume-metal-profile\",\"version\":1,\"name\":\"t\",\"description\":\"d\"}"},
	    "profile.json: $: missing required field \"capabilities\" (an object with apple_family_max and max_threadgroup_memory)"},
	{"capabilities an array", {.whole = "{\"format\":\"lume-metal-profile\",\"version\":1,\"name\":\"t\",\"description\":\"d\",\"capabilities\":[]}"},
	    "profile.json: $.capabilities: expected an object, found an empty array"},
	{"apple_family_max too high", {.from = "\"apple_family_max\":1009", .to = "\"apple_family_max\":2001"},
	    "profile.json: $.capabilities.apple_family_max: expected an integer in 1001..1999, found 2001"},
	{"apple_family_max too low", {.from = "\"apple_family_max\":1009", .to = "\"apple_family_max\":1000"},
	    "profile.json: $.capabilities.apple_family_max: expected an integer in 1001..1999, found 1000"},
	{"apple_family_max fractional", {.from = "\"apple_family_max\":1009", .to = "\"apple_family_max\":1009.5"},
	    "profile.json: $.capabilities.apple_family_max: expected an integer in 1001..1999, found 1009.5"},
	{"apple_family_max a string", {.from = "\"apple_family_max\":1009", .to = "\"apple_family_max\":\"1009\""},
	    "profile.json: $.capabilities.apple_family_max: expected an integer in 1001..1999, found \"1009\""},
	{"apple_family_max negative", {.from = "\"apple_family_max\":1009", .to = "\"apple_family_max\":-1009"},
	    "profile.json: $.capabilities.apple_family_max: expected an integer in 1001..1999, found -1009"},
	{"apple_family_max overflowing", {.from = "\"apple_family_max\":1009", .to = "\"apple_family_max\":1e400"},
	    "profile.json: $.capabilities.apple_family_max: expected an integer in 1001..1999, found a number too large"},
	{"apple_family_max null", {.from = "\"apple_family_max\":1009", .to = "\"apple_family_max\":null"},
	    "profile.json: $.capabilities.apple_family_max: expected an integer in 1001..1999, found null"},
	{"missing apple_family_max", {.from = "\"apple_family_max\":1009,", .to = ""},
	    "profile.json: $.capabilities: missing required field \"apple_family_max\" (an integer in 1001..1999)"},
	{"misspelt capability", {.from = "\"apple_family_max\"", .to = "\"apple_famly_max\""},
	    "profile.json: $.capabilities.apple_famly_max: unknown field; did you mean \"apple_family_max\"?"},
	{"threadgroup memory zero", {.from = "\"max_threadgroup_memory\":65536", .to = "\"max_threadgroup_memory\":0"},
	    "profile.json: $.capabilities.max_threadgroup_memory: expected an integer in 1024..1048576, found 0"},
	{"threadgroup memory too large", {.from = "\"max_threadgroup_memory\":65536", .to = "\"max_threadgroup_memory\":2097152"},
	    "profile.json: $.capabilities.max_threadgroup_memory: expected an integer in 1024..1048576, found 2097152"},
	{"missing threadgroup memory", {.from = ",\"max_threadgroup_memory\":65536", .to = ""},
	    "profile.json: $.capabilities: missing required field \"max_threadgroup_memory\" (an integer in 1024..1048576)"},
	{"working set overflowing 2^53", {.from = "}}", .to = ",\"recommended_working_set_size\":18446744073709551616}}"},
	    "profile.json: $.capabilities.recommended_working_set_size: expected an integer in 1048576..9007199254740991, found 1.8446744073709552e+19"},
	{"working set too small", {.from = "}}", .to = ",\"recommended_working_set_size\":1024}}"},
	    "profile.json: $.capabilities.recommended_working_set_size: expected an integer in 1048576..9007199254740991, found 1024"},
	{"host_preference a string", {.from = "}}", .to = "},\"host_preference\":\"defaults\"}"},
	    "profile.json: $.host_preference: expected an object, found \"defaults\""},
	{"preference domain with a space", {.from = "}}", .to = "},\"host_preference\":{\"domain\":\"com.apple x\"}}"},
	    "profile.json: $.host_preference.domain: expected a preference domain of 1..255 characters from A-Z, a-z, 0-9, '.', '_', '-' starting with a letter or digit, found \"com.apple x\""},
	{"preference key empty", {.from = "}}", .to = "},\"host_preference\":{\"key\":\"\"}}"},
	    "profile.json: $.host_preference.key: expected a preference key of 1..255 characters from A-Z, a-z, 0-9, '.', '_', '-' starting with a letter or digit, found \"\""},
	{"preference value null", {.from = "}}", .to = "},\"host_preference\":{\"value\":null}}"},
	    "profile.json: $.host_preference.value: expected true, false, an integer or a string, found null"},
	{"preference value fractional", {.from = "}}", .to = "},\"host_preference\":{\"value\":1.5}}"},
	    "profile.json: $.host_preference.value: expected true, false, an integer or a string, found 1.5"},
	{"preference value an array", {.from = "}}", .to = "},\"host_preference\":{\"value\":[true]}}"},
	    "profile.json: $.host_preference.value: expected true, false, an integer or a string, found an array of 1 element"},
	{"misspelt preference field", {.from = "}}", .to = "},\"host_preference\":{\"vaule\":true}}"},
	    "profile.json: $.host_preference.vaule: unknown field; did you mean \"value\"?"},
	{"expectations an array", {.from = "}}", .to = "},\"expectations\":[]}"},
	    "profile.json: $.expectations: expected an object, found an empty array"},
	{"misspelt expectation side", {.from = "}}", .to = "},\"expectations\":{\"shimed\":{}}}"},
	    "profile.json: $.expectations.shimed: unknown field; did you mean \"shimmed\"?"},
	{"unknown family, close", {.from = "}}", .to = "},\"expectations\":{\"shimmed\":{\"families\":{\"Apple99\":true}}}}"},
	    "profile.json: $.expectations.shimmed.families.Apple99: unknown GPU family; did you mean \"Apple9\"?"},
	{"unknown family, far", {.from = "}}", .to = "},\"expectations\":{\"shimmed\":{\"families\":{\"Vulkan\":true}}}}"},
	    "profile.json: $.expectations.shimmed.families.Vulkan: unknown GPU family (known: Apple1, Apple2, Apple3, Apple4, Apple5, Apple6, Apple7, Apple8, Apple9, Apple10, Mac1, Mac2, Common1, Common2, Common3, Metal3, Metal4)"},
	{"family answer a string", {.from = "}}", .to = "},\"expectations\":{\"shimmed\":{\"families\":{\"Apple9\":\"yes\"}}}}"},
	    "profile.json: $.expectations.shimmed.families.Apple9: expected true or false, found \"yes\""},
	{"families an array", {.from = "}}", .to = "},\"expectations\":{\"stock\":{\"families\":[\"Apple5\"]}}}"},
	    "profile.json: $.expectations.stock.families: expected an object, found an array of 1 element"},
	{"shim_active a number", {.from = "}}", .to = "},\"expectations\":{\"shimmed\":{\"shim_active\":1}}}"},
	    "profile.json: $.expectations.shimmed.shim_active: expected true or false, found 1"},
	{"negative minimum", {.from = "}}", .to = "},\"expectations\":{\"shimmed\":{\"min_threadgroup_memory\":-5}}}"},
	    "profile.json: $.expectations.shimmed.min_threadgroup_memory: expected an integer in 1..9007199254740991, found -5"},
	{"unknown expectation field", {.from = "}}", .to = "},\"expectations\":{\"stock\":{\"device\":\"x\"}}}"},
	    "profile.json: $.expectations.stock.device: unknown field (known fields: families, min_threadgroup_memory, min_recommended_working_set_size, shim_active)"},
	{"validated_on an object", {.from = "}}", .to = "},\"validated_on\":{}}"},
	    "profile.json: $.validated_on: expected an array of at most 64 validations, found an object"},
	{"validation missing chip", {.from = "}}", .to = "},\"validated_on\":[{\"host_os\":\"a\"}]}"},
	    "profile.json: $.validated_on[0]: missing required field \"chip\" (a string)"},
	{"validation with no workloads", {.from = "}}", .to = "},\"validated_on\":["
	    "{\"chip\":\"M1\",\"host_os\":\"macOS 26\",\"guest_os\":\"macOS 26\",\"workloads\":[],\"evidence\":\"e\"}]}"},
	    "profile.json: $.validated_on[0].workloads: expected an array of 1..32 strings, found an empty array"},
	{"workload not a string", {.from = "}}", .to = "},\"validated_on\":["
	    "{\"chip\":\"M1\",\"host_os\":\"macOS 26\",\"guest_os\":\"macOS 26\",\"workloads\":[\"llama.cpp\",42],\"evidence\":\"e\"}]}"},
	    "profile.json: $.validated_on[0].workloads[1]: expected a non-empty string of at most 128 bytes without control characters, found 42"},
	{"misspelt validation field", {.from = "}}", .to = "},\"validated_on\":["
	    "{\"chip\":\"M1\",\"host_os\":\"macOS 26\",\"guest_os\":\"macOS 26\",\"workloads\":[\"llama.cpp\"],\"evidense\":\"e\"}]}"},
	    "profile.json: $.validated_on[0].evidense: unknown field; did you mean \"evidence\"?"},
	{"validation not an object", {.from = "}}", .to = "},\"validated_on\":[\"M1\"]}"},
	    "profile.json: $.validated_on[0]: expected an object, found \"M1\""},
	{"second validation missing evidence", {.from = "}}", .to = "},\"validated_on\":["
	    "{\"chip\":\"M1\",\"host_os\":\"macOS 26\",\"guest_os\":\"macOS 26\",\"workloads\":[\"llama.cpp\"],\"evidence\":\"e\"},"
	    "{\"chip\":\"M1\",\"host_os\":\"macOS 26\",\"guest_os\":\"macOS 26\",\"workloads\":[\"llama.cpp\"]}]}"},
	    "profile.json: $.validated_on[1]: missing required field \"evidence\" (a string)"},
	{"odd key in path", {.from = "}}", .to = "},\"expectations\":{\"shimmed\":{\"families\":{\"a b\":true}}}}"},
	    "profile.json: $.expectations.shimmed.families[\"a b\"]: unknown GPU family (known: Apple1, Apple2, Apple3, Apple4, Apple5, Apple6, Apple7, Apple8, Apple9, Apple10, Mac1, Mac2, Common1, Common2, Common3, Metal3, Metal4)"},
};

static void test_malformed_profiles(void **state)
{
	size_t i, n = sizeof(malformed) / sizeof(malformed[0]);
	lm_profile *p;

	(void)state;
	assert_true(n >= 40);
	for (i = 0; i < n; i++) {
		size_t len;
		char *input = lm_test_edited(MINIMAL, &malformed[i].edit, &len);
		int rc;

		p = (lm_profile *)&p; /* must be reset to NULL on failure */
		rc = lm_profile_parse(&p, input, len, "profile.json");
		free(input);
		if (rc != LM_EINVALID || strcmp(lm_error_last()->message, malformed[i].message) != 0)
			fail_msg("case '%s': rc %d, message:\n  %s\nexpected:\n  %s", malformed[i].name, rc,
			    lm_error_last()->message, malformed[i].message);
		assert_null(p);
	}
}

static void test_too_deep(void **state)
{
	size_t depth = 5000, i, o = 0;
	char *buf = malloc(2 * depth + 16);
	lm_profile *p;

	(void)state;
	for (i = 0; i < depth; i++)
		buf[o++] = '[';
	for (i = 0; i < depth; i++)
		buf[o++] = ']';
	lm_assert_fails(lm_profile_parse(&p, buf, o, "deep.json"), LM_EINVALID);
	lm_assert_error_has("deep.json: line 1, column ");
	lm_assert_error_has("invalid JSON");
	free(buf);
}

static void test_too_large(void **state)
{
	size_t n = LM_PROFILE_MAX_BYTES + 1;
	char *buf = malloc(n);
	lm_profile *p;

	(void)state;
	memset(buf, ' ', n);
	lm_assert_fails(lm_profile_parse(&p, buf, n, "big.json"), LM_EINVALID);
	assert_string_equal(lm_error_last()->message,
	    "big.json: the input is 1048577 bytes; at most 1048576 bytes are accepted");
	/* Exactly at the limit is read, and judged on its content. */
	lm_assert_fails(lm_profile_parse(&p, buf, n - 1, "big.json"), LM_EINVALID);
	assert_string_equal(lm_error_last()->message, "big.json: the input is empty; expected a JSON object");
	free(buf);
}

static void test_too_many_validations(void **state)
{
	char *buf = malloc(65536);
	size_t o, i;
	lm_profile *p;

	(void)state;
	o = (size_t)sprintf(buf, "%.*s,\"validated_on\":[", (int)strlen(MINIMAL) - 1, MINIMAL);
	for (i = 0; i < 65; i++)
		o += (size_t)sprintf(buf + o, "%s{\"chip\":\"M1\",\"host_os\":\"a\",\"guest_os\":\"b\","
		    "\"workloads\":[\"w\"],\"evidence\":\"e\"}", i ? "," : "");
	o += (size_t)sprintf(buf + o, "]}");
	lm_assert_fails(lm_profile_parse(&p, buf, o, "many.json"), LM_EINVALID);
	assert_string_equal(lm_error_last()->message, "many.json: $.validated_on: expected an array of at most "
	    "64 validations, found an array of 65 elements");
	free(buf);
}

static char *canonical(const char *json, size_t len)
{
	lm_profile *p;
	char *out = NULL;

	lm_assert_ok(lm_profile_parse(&p, json, len, "rt.json"));
	lm_assert_ok(lm_profile_to_json(p, &out));
	lm_profile_free(p);
	return out;
}

static void round_trip(const char *json)
{
	char *a = canonical(json, strlen(json));
	char *b = canonical(a, strlen(a));

	assert_string_equal(a, b);
	assert_int_equal(a[strlen(a) - 1], '\n');
	lm_free(a);
	lm_free(b);
}

static const char full_profile[] =
    "{\"validated_on\":[{\"evidence\":\"runs \\\"A\\\" \\u00e9\",\"workloads\":[\"w1\",\"w2\"],"
    "\"guest_os\":\"g\",\"host_os\":\"h\",\"chip\":\"M4 Max\"},{\"chip\":\"M2\",\"host_os\":\"h2\","
    "\"guest_os\":\"g2\",\"workloads\":[\"x\"],\"evidence\":\"e2\"}],"
    "\"expectations\":{\"shimmed\":{\"shim_active\":true,\"families\":{\"Metal3\":false,\"Apple8\":true},"
    "\"min_recommended_working_set_size\":2000000,\"min_threadgroup_memory\":4096},\"stock\":{\"families\":"
    "{\"Apple5\":true},\"shim_active\":false}},"
    "\"host_preference\":{\"value\":\"yes\",\"key\":\"K\",\"domain\":\"org.example.D\"},"
    "\"capabilities\":{\"recommended_working_set_size\":17179869184,\"max_threadgroup_memory\":4096,"
    "\"apple_family_max\":1008},\"description\":\"full\",\"name\":\"full-1.x_y\",\"version\":1,"
    "\"format\":\"lume-metal-profile\"}";

static void test_round_trips(void **state)
{
	size_t i;
	lm_profile *p;
	char *json;

	(void)state;
	round_trip(MINIMAL);
	round_trip(full_profile);
	round_trip("{\"format\":\"lume-metal-profile\",\"version\":1,\"name\":\"i\",\"description\":\"d\","
	    "\"capabilities\":{\"apple_family_max\":1999,\"max_threadgroup_memory\":1024},"
	    "\"host_preference\":{\"value\":-42},\"expectations\":{\"stock\":{}}}");
	for (i = 0; i < lm_profile_builtin_count(); i++) {
		lm_assert_ok(lm_profile_builtin(&p, lm_profile_builtin_name(i)));
		lm_assert_ok(lm_profile_to_json(p, &json));
		round_trip(json);
		lm_free(json);
		lm_profile_free(p);
	}
}

static void test_canonical_form(void **state)
{
	char *out = canonical(MINIMAL, strlen(MINIMAL));

	(void)state;
	/* Defaults are written out: the host preference and the expectations every profile implies. */
	assert_string_equal(out,
	    "{\n"
	    "  \"format\": \"lume-metal-profile\",\n"
	    "  \"version\": 1,\n"
	    "  \"name\": \"t\",\n"
	    "  \"description\": \"d\",\n"
	    "  \"capabilities\": {\n"
	    "    \"apple_family_max\": 1009,\n"
	    "    \"max_threadgroup_memory\": 65536\n"
	    "  },\n"
	    "  \"host_preference\": {\n"
	    "    \"domain\": \"com.apple.gpusw.ParavirtualizedGraphics\",\n"
	    "    \"key\": \"ForceUnrestrictedDeviceFeatureLevel\",\n"
	    "    \"value\": true\n"
	    "  },\n"
	    "  \"expectations\": {\n"
	    "    \"stock\": {\n"
	    "      \"shim_active\": false\n"
	    "    },\n"
	    "    \"shimmed\": {\n"
	    "      \"families\": {\n"
	    "        \"Apple9\": true,\n"
	    "        \"Metal3\": false\n"
	    "      },\n"
	    "      \"min_threadgroup_memory\": 65536,\n"
	    "      \"shim_active\": true\n"
	    "    },\n"
	    "    \"exercise\": {\n"
	    "      \"simdgroup_reduction\": \"pass\",\n"
	    "      \"simdgroup_matrix\": \"pass\",\n"
	    "      \"bfloat16\": \"pass\",\n"
	    "      \"threadgroup_memory\": \"report\"\n"
	    "    }\n"
	    "  },\n"
	    "  \"validated_on\": []\n"
	    "}\n");
	lm_free(out);
}

static const char bom_profile[] = "\xef\xbb\xbf{\"format\":\"lume-metal-profile\",\"version\":1,"
    "\"name\":\"n\",\"description\":\"d\",\"capabilities\":{\"apple_family_max\":1007,"
    "\"max_threadgroup_memory\":32768},\"host_preference\":{\"value\":3}}";

static void test_full_profile_fields(void **state)
{
	lm_profile *p;
	const lm_pref_setting *pref;
	lm_profile_validation v;
	lm_profile_expectation e;

	(void)state;
	lm_assert_ok(lm_profile_parse(&p, full_profile, strlen(full_profile), NULL));
	assert_string_equal(lm_profile_name(p), "full-1.x_y");
	assert_int_equal(lm_profile_caps(p)->apple_family_max, 1008);
	assert_int_equal(lm_profile_caps(p)->has_recommended_working_set_size, 1);
	assert_true(lm_profile_caps(p)->recommended_working_set_size == 17179869184ULL);
	pref = lm_profile_host_preference(p);
	assert_string_equal(pref->domain, "org.example.D");
	assert_string_equal(pref->key, "K");
	assert_int_equal(pref->value.type, LM_PREF_STRING);
	assert_string_equal(pref->value.string, "yes");
	assert_int_equal(lm_profile_validation_count(p), 2);
	lm_assert_ok(lm_profile_validation_get(p, 0, &v));
	assert_string_equal(v.chip, "M4 Max");
	assert_int_equal(v.workload_count, 2);
	assert_string_equal(v.workloads[1], "w2");
	assert_string_equal(v.evidence, "runs \"A\" \xc3\xa9");
	lm_assert_fails(lm_profile_validation_get(p, 2, &v), LM_ENOTFOUND);
	/* stock: Apple5, shim_active; shimmed: Apple8, Metal3, min tg, min ws, shim_active */
	assert_int_equal(lm_profile_expectation_count(p), 7);
	lm_assert_ok(lm_profile_expectation_get(p, 0, &e));
	assert_int_equal(e.shimmed, 0);
	assert_int_equal(e.kind, LM_EXPECT_FAMILY);
	assert_int_equal(e.family, 1005);
	lm_assert_ok(lm_profile_expectation_get(p, 2, &e));
	assert_int_equal(e.shimmed, 1);
	assert_int_equal(e.family, 1008);
	lm_assert_ok(lm_profile_expectation_get(p, 5, &e));
	assert_int_equal(e.kind, LM_EXPECT_MIN_WORKING_SET_SIZE);
	assert_int_equal(e.value, 2000000);
	lm_assert_fails(lm_profile_expectation_get(p, 7, &e), LM_ENOTFOUND);
	lm_profile_free(p);

	/* An integer preference value and a UTF-8 byte order mark. */
	lm_assert_ok(lm_profile_parse(&p, bom_profile, sizeof(bom_profile) - 1, "bom.json"));
	assert_int_equal(lm_profile_host_preference(p)->value.type, LM_PREF_INTEGER);
	assert_int_equal(lm_profile_host_preference(p)->value.integer, 3);
	assert_string_equal(lm_profile_host_preference(p)->key, "ForceUnrestrictedDeviceFeatureLevel");
	lm_profile_free(p);
	lm_profile_free(NULL);
}

static void test_builtins(void **state)
{
	lm_profile *p;
	lm_profile_validation v;
	const lm_pref_setting *pref;
	size_t i;

	(void)state;
	assert_int_equal(lm_profile_builtin_count(), 2);
	assert_string_equal(lm_profile_default_name(), "published");
	assert_string_equal(lm_profile_builtin_name(0), "published");
	assert_string_equal(lm_profile_builtin_name(1), "conservative");
	assert_null(lm_profile_builtin_name(2));
	for (i = 0; i < lm_profile_builtin_count(); i++) {
		lm_assert_ok(lm_profile_builtin(&p, lm_profile_builtin_name(i)));
		assert_string_equal(lm_profile_name(p), lm_profile_builtin_name(i));
		pref = lm_profile_host_preference(p);
		assert_string_equal(pref->domain, "com.apple.gpusw.ParavirtualizedGraphics");
		assert_string_equal(pref->key, "ForceUnrestrictedDeviceFeatureLevel");
		assert_int_equal(pref->value.type, LM_PREF_BOOL);
		assert_int_equal(pref->value.boolean, 1);
		lm_profile_free(p);
	}
	lm_assert_ok(lm_profile_builtin(&p, "published"));
	assert_int_equal(lm_profile_caps(p)->apple_family_max, 1009);
	assert_int_equal(lm_profile_caps(p)->max_threadgroup_memory, 65536);
	assert_int_equal(lm_profile_caps(p)->has_recommended_working_set_size, 0);
	assert_int_equal(lm_profile_validated(p), 1);
	lm_assert_ok(lm_profile_validation_get(p, 0, &v));
	assert_string_equal(v.chip, "M1 Ultra");
	assert_string_equal(v.host_os, "macOS 26.6.1");
	assert_string_equal(v.guest_os, "macOS 26.5.2");
	assert_int_equal(v.workload_count, 2);
	assert_string_equal(v.workloads[0], "llama.cpp b10167");
	assert_string_equal(v.workloads[1], "MLX-LM 0.31.3");
	lm_profile_free(p);
	lm_assert_ok(lm_profile_builtin(&p, "conservative"));
	assert_int_equal(lm_profile_caps(p)->apple_family_max, 1007);
	assert_int_equal(lm_profile_caps(p)->max_threadgroup_memory, 32768);
	lm_assert_ok(lm_profile_validated(p));
	lm_profile_free(p);

	lm_assert_fails(lm_profile_builtin(&p, "publishd"), LM_ENOTFOUND);
	assert_null(p);
	assert_string_equal(lm_error_last()->message, "no built-in profile 'publishd'; did you mean 'published'? "
	    "(built-in: published, conservative; a path to a JSON file works too)");
	lm_assert_fails(lm_profile_resolve(&p, "turbo"), LM_ENOTFOUND);
	assert_string_equal(lm_error_last()->message,
	    "no built-in profile 'turbo' (built-in: published, conservative; a path to a JSON file works too)");
	lm_assert_fails(lm_profile_resolve(&p, ""), LM_EINVALID);
	lm_assert_ok(lm_profile_resolve(&p, "conservative"));
	assert_string_equal(lm_profile_name(p), "conservative");
	lm_profile_free(p);
}

static void test_files(void **state)
{
	char *dir = lm_test_tmpdir("profile"), *path = lm_test_join(dir, "mine.json"), missing[256];
	char *big;
	lm_profile *p;

	(void)state;
	lm_test_write_text(path, MINIMAL);
	lm_assert_ok(lm_profile_load_file(&p, path));
	assert_string_equal(lm_profile_name(p), "t");
	lm_profile_free(p);
	lm_assert_ok(lm_profile_resolve(&p, path)); /* a path, not a built-in name */
	lm_profile_free(p);

	/* Messages name the file as given. */
	lm_test_write_text(path, "{\"format\":\"lume-metal-profile\",\"version\":1,\"nme\":1}");
	lm_assert_fails(lm_profile_load_file(&p, path), LM_EINVALID);
	snprintf(missing, sizeof(missing), "%s: $.nme: unknown field; did you mean \"name\"?", path);
	assert_string_equal(lm_error_last()->message, missing);

	big = malloc(LM_PROFILE_MAX_BYTES + 10);
	memset(big, ' ', LM_PROFILE_MAX_BYTES + 10);
	lm_test_write(path, big, LM_PROFILE_MAX_BYTES + 10);
	free(big);
	lm_assert_fails(lm_profile_load_file(&p, path), LM_EINVALID);
	snprintf(missing, sizeof(missing), "profile %s: too large (1048586 bytes; at most 1048576)", path);
	assert_string_equal(lm_error_last()->message, missing);
	assert_int_equal(unlink(path), 0);

	snprintf(missing, sizeof(missing), "%s/absent.json", dir);
	lm_assert_fails(lm_profile_resolve(&p, missing), LM_ENOTFOUND);
	lm_assert_error_has("no such file");
	lm_assert_fails(lm_profile_load_file(&p, dir), LM_EINVALID);
	lm_assert_error_has("not a regular file");
	assert_int_equal(rmdir(dir), 0);
	free(path);
	free(dir);
}

static void test_render_env(void **state)
{
	lm_env_entry env[LM_PROFILE_ENV_MAX];
	size_t n = 99;
	lm_profile *p;

	(void)state;
	lm_assert_ok(lm_profile_builtin(&p, "published"));
	lm_assert_ok(lm_profile_render_env(p, env, &n));
	assert_int_equal(n, 2);
	assert_string_equal(env[0].name, "LUME_METAL_APPLE_FAMILY_MAX");
	assert_string_equal(env[0].value, "1009");
	assert_string_equal(env[1].name, "LUME_METAL_MAX_THREADGROUP_MEMORY");
	assert_string_equal(env[1].value, "65536");
	lm_profile_free(p);
	lm_assert_ok(lm_profile_parse(&p, full_profile, strlen(full_profile), "f"));
	lm_assert_ok(lm_profile_render_env(p, env, &n));
	assert_int_equal(n, 3);
	assert_string_equal(env[0].value, "1008");
	assert_string_equal(env[1].value, "4096");
	assert_string_equal(env[2].name, "LUME_METAL_RECOMMENDED_WORKING_SET_SIZE");
	assert_string_equal(env[2].value, "17179869184");
	lm_profile_free(p);
}

/* A report in the probe's line format, with the Apple families up to apple_max answered true. */
static lm_report *report(int apple_max, int metal3, unsigned tg, int shim)
{
	static const char *const names[] = {"Apple1", "Apple2", "Apple3", "Apple4", "Apple5", "Apple6",
		"Apple7", "Apple8", "Apple9", "Apple10"};
	char text[2048];
	size_t o, i;
	lm_report *r;

	o = (size_t)snprintf(text, sizeof(text), "format=lume-metal-report/1\ndevice=Apple Paravirtual device\n");
	for (i = 0; i < 10; i++)
		o += (size_t)snprintf(text + o, sizeof(text) - o, "family.%s=%d\n", names[i], (int)(1001 + i) <= apple_max);
	o += (size_t)snprintf(text + o, sizeof(text) - o, "family.Mac1=0\nfamily.Mac2=0\nfamily.Common1=1\n"
	    "family.Common2=1\nfamily.Common3=1\nfamily.Metal3=%d\nfamily.Metal4=0\nmax_threadgroup_memory=%u\n"
	    "recommended_max_working_set_size=17179869184\nhas_unified_memory=1\nshim_active=%d\nend=1\n",
	    metal3, tg, shim);
	lm_assert_ok(lm_report_parse_lines(&r, text, o));
	return r;
}

static void test_check(void **state)
{
	lm_report *stock = report(1005, 0, 32768, 0), *good = report(1009, 0, 65536, 1);
	lm_report *inactive = report(1005, 0, 32768, 0), *metal3 = report(1009, 1, 32768, 1);
	lm_profile *p;

	(void)state;
	lm_assert_ok(lm_profile_builtin(&p, "published"));
	lm_assert_ok(lm_profile_check(p, stock, good));
	lm_assert_ok(lm_profile_check(p, NULL, good));
	lm_assert_ok(lm_profile_check(p, stock, NULL));
	lm_assert_fails(lm_profile_check(p, stock, inactive), LM_EUNSUPPORTED);
	assert_string_equal(lm_error_last()->message, "profile 'published': the probe did not confirm its "
	    "expectations: shimmed: Apple7 expected true, found false; shimmed: Apple9 expected true, found false; "
	    "shimmed: max_threadgroup_memory expected at least 65536, found 32768; shimmed: shim_active expected "
	    "true, found false");
	lm_assert_fails(lm_profile_check(p, good, metal3), LM_EUNSUPPORTED);
	assert_string_equal(lm_error_last()->message, "profile 'published': the probe did not confirm its "
	    "expectations: stock: shim_active expected false, found true; shimmed: Metal3 expected false, found "
	    "true; shimmed: max_threadgroup_memory expected at least 65536, found 32768");
	lm_profile_free(p);

	/* A family the report does not carry is reported as such (JSON reports may omit families). */
	{
		lm_report *partial;
		const char *json = "{\"format\":\"lume-metal-report\",\"version\":1,\"device\":\"x\",\"families\":"
		    "{\"Apple9\":true},\"max_threadgroup_memory\":65536,\"recommended_max_working_set_size\":1,"
		    "\"has_unified_memory\":true,\"shim_active\":true}";
		lm_assert_ok(lm_report_from_json(&partial, json, strlen(json)));
		lm_assert_ok(lm_profile_builtin(&p, "conservative"));
		lm_assert_fails(lm_profile_check(p, NULL, partial), LM_EUNSUPPORTED);
		assert_string_equal(lm_error_last()->message, "profile 'conservative': the probe did not confirm its "
		    "expectations: shimmed: Apple7 expected true, not reported; shimmed: Metal3 expected false, not reported");
		lm_profile_free(p);
		lm_report_free(partial);
	}
	lm_report_free(stock);
	lm_report_free(good);
	lm_report_free(inactive);
	lm_report_free(metal3);
}

static void test_apply(void **state)
{
	lm_report *stock, *shimmed;
	lm_profile *p;
	int yes = -1;

	(void)state;
	lm_assert_ok(lm_report_stock_paravirtual(&stock));
	lm_assert_ok(lm_profile_builtin(&p, "published"));
	lm_assert_ok(lm_profile_apply(p, stock, &shimmed));
	assert_int_equal(lm_report_apple_family(stock), 1005);
	assert_int_equal(lm_report_apple_family(shimmed), 1009);
	lm_assert_ok(lm_report_family(shimmed, 1010, &yes));
	assert_int_equal(yes, 0);
	lm_assert_ok(lm_report_family(shimmed, 5001, &yes));
	assert_int_equal(yes, 0);
	assert_int_equal(lm_report_max_threadgroup_memory(shimmed), 65536);
	assert_int_equal(lm_report_shim_active(shimmed), 1);
	assert_string_equal(lm_report_device(shimmed), "Apple Paravirtual device");
	/* The stock answers of this profile's own shimmed report satisfy its expectations. */
	lm_assert_ok(lm_profile_check(p, stock, shimmed));
	lm_report_free(shimmed);
	lm_profile_free(p);
	lm_report_free(stock);
}

static int has_code(const lm_profile_lint_result *r, const char *code, lm_lint_level level)
{
	size_t i;

	for (i = 0; i < r->count; i++)
		if (strcmp(r->items[i].code, code) == 0 && r->items[i].level == level)
			return 1;
	return 0;
}

static void test_lint(void **state)
{
	lm_profile_lint_result r;
	lm_profile *p;
	size_t i;
	const char *metal3 = "{\"format\":\"lume-metal-profile\",\"version\":1,\"name\":\"m\",\"description\":\"d\","
	    "\"capabilities\":{\"apple_family_max\":1005,\"max_threadgroup_memory\":131072},"
	    "\"expectations\":{\"shimmed\":{\"families\":{\"Metal3\":true,\"Apple4\":false,\"Apple8\":true},"
	    "\"min_threadgroup_memory\":262144}}}";

	(void)state;
	lm_assert_ok(lm_profile_builtin(&p, "published"));
	lm_assert_ok(lm_profile_lint(p, 1007, &r));
	assert_int_equal(r.stock.llama_simdgroup_reduction, 0);
	assert_int_equal(r.stock.llama_simdgroup_mm, 0);
	assert_int_equal(r.stock.llama_bfloat16, 0);
	assert_int_equal(r.shimmed.llama_simdgroup_reduction, 1);
	assert_int_equal(r.shimmed.llama_simdgroup_mm, 1);
	assert_int_equal(r.shimmed.llama_bfloat16, 1);
	assert_int_equal(r.shimmed.llama_tensor, 0);
	assert_int_equal(r.shimmed.mlx_residency_risk, 0);
	assert_int_equal(r.warnings, 2);
	assert_true(has_code(&r, "threadgroup-memory-beyond-families", LM_LINT_WARNING));
	assert_true(has_code(&r, "ceiling-above-host", LM_LINT_WARNING));
	assert_false(has_code(&r, "not-validated", LM_LINT_WARNING));
	for (i = 0; i < r.count; i++)
		if (strcmp(r.items[i].code, "threadgroup-memory-beyond-families") == 0)
			assert_string_equal(r.items[i].message, "max_threadgroup_memory 65536: no Apple family reports "
			    "more than 32 KB; kernels that really allocate more may fail");
	lm_assert_ok(lm_profile_lint(p, 0, &r));
	assert_int_equal(r.warnings, 1);
	lm_assert_ok(lm_profile_lint(p, 1009, &r));
	assert_false(has_code(&r, "ceiling-above-host", LM_LINT_WARNING));
	lm_profile_free(p);

	lm_assert_ok(lm_profile_builtin(&p, "conservative"));
	lm_assert_ok(lm_profile_lint(p, 0, &r));
	assert_int_equal(r.warnings, 1);
	assert_true(has_code(&r, "not-validated", LM_LINT_WARNING));
	assert_true(has_code(&r, "threadgroup-memory-unchanged", LM_LINT_NOTE));
	assert_int_equal(r.shimmed.llama_simdgroup_mm, 1);
	lm_profile_free(p);

	lm_assert_ok(lm_profile_parse(&p, metal3, strlen(metal3), "m.json"));
	lm_assert_ok(lm_profile_lint(p, 0, &r));
	assert_true(has_code(&r, "mlx-residency-risk", LM_LINT_WARNING));
	assert_true(has_code(&r, "llama-unchanged", LM_LINT_WARNING));
	assert_true(has_code(&r, "expectation-unreachable", LM_LINT_WARNING));
	assert_true(has_code(&r, "threadgroup-memory-beyond-families", LM_LINT_WARNING));
	assert_int_equal(r.shimmed.llama_simdgroup_reduction, 0);
	/* Apple4 false (<= ceiling), Apple8 true (> ceiling), min threadgroup beyond the floor. */
	{
		size_t unreachable = 0;
		for (i = 0; i < r.count; i++)
			unreachable += strcmp(r.items[i].code, "expectation-unreachable") == 0;
		assert_int_equal(unreachable, 3);
	}
	lm_profile_free(p);
}

/* Issue 22: one default preference. Every built-in profile sets it, and a profile that names no
 * host preference gets it. */
static void test_default_preference(void **state)
{
	const lm_pref_setting *pref;
	lm_profile *p = NULL;
	size_t i;

	(void)state;
	for (i = 0; i < lm_profile_builtin_count(); i++) {
		assert_int_equal(lm_profile_builtin(&p, lm_profile_builtin_name(i)), 0);
		pref = lm_profile_host_preference(p);
		assert_string_equal(pref->domain, LM_PREF_DEFAULT_DOMAIN);
		assert_string_equal(pref->key, LM_PREF_DEFAULT_KEY);
		assert_int_equal(pref->value.type, LM_PREF_BOOL);
		assert_int_equal(pref->value.boolean, 1);
		lm_profile_free(p);
	}
	assert_int_equal(lm_profile_parse(&p, MINIMAL, strlen(MINIMAL), "minimal.json"), 0);
	pref = lm_profile_host_preference(p);
	assert_string_equal(pref->domain, LM_PREF_DEFAULT_DOMAIN);
	assert_string_equal(pref->key, LM_PREF_DEFAULT_KEY);
	assert_int_equal(pref->value.type, LM_PREF_BOOL);
	assert_int_equal(pref->value.boolean, 1);
	lm_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_malformed_profiles),
		cmocka_unit_test(test_default_preference),
		cmocka_unit_test(test_too_deep),
		cmocka_unit_test(test_too_large),
		cmocka_unit_test(test_too_many_validations),
		cmocka_unit_test(test_round_trips),
		cmocka_unit_test(test_canonical_form),
		cmocka_unit_test(test_full_profile_fields),
		cmocka_unit_test(test_builtins),
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_render_env),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_apply),
		cmocka_unit_test(test_lint),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
