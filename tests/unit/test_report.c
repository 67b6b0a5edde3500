/* The capability report: the probe's line format on malformed and hostile input, escaping, and
 * the JSON form. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lume-metal/error.h"
#include "lume-metal/family.h"
#include "lume-metal/report.h"
#include "lume-metal/workload.h"
#include "lm_test.h"

/* What the stock paravirtual device answers, exactly as the probe prints it. */
static const char stock_lines[] =
    "format=lume-metal-report/1\n"
    "device=Apple Paravirtual device\n"
    "family.Apple1=1\nfamily.Apple2=1\nfamily.Apple3=1\nfamily.Apple4=1\nfamily.Apple5=1\n"
    "family.Apple6=0\nfamily.Apple7=0\nfamily.Apple8=0\nfamily.Apple9=0\nfamily.Apple10=0\n"
    "family.Mac1=0\nfamily.Mac2=0\nfamily.Common1=0\nfamily.Common2=0\nfamily.Common3=0\n"
    "family.Metal3=0\nfamily.Metal4=0\n"
    "max_threadgroup_memory=32768\n"
    "recommended_max_working_set_size=17179869184\n"
    "has_unified_memory=1\n"
    "shim_active=0\n"
    "end=1\n";

/* Each a report the probe could not have printed: stock_lines with one edit, and the message. */
static const struct {
	const char *name;
	lm_test_edit edit; /* of stock_lines */
	const char *message;
} malformed[] = {
	{"empty", {.whole = ""},
	    "report: empty; expected format=lume-metal-report/1 on line 1"},
	{"only a newline", {.whole = "\n"},
	    "report: line 1: missing version line: expected format=lume-metal-report/1 first, found ''"},
	{"missing version line", {.from = "format=lume-metal-report/1\n", .to = ""},
	    "report: line 1: missing version line: expected format=lume-metal-report/1 first, found 'device=Apple Paravirtual device'"},
	{"other report format", {.from = "format=lume-metal-report/1", .to = "format=other/1"},
	    "report: line 1: expected format=lume-metal-report/1, found format=other/1"},
	{"newer major version", {.from = "format=lume-metal-report/1", .to = "format=lume-metal-report/2"},
	    "report: line 1: report format version 2 is not supported (this lume-metal reads version 1); use a probe and a lume-metal from the same release"},
	{"version not a number", {.from = "format=lume-metal-report/1", .to = "format=lume-metal-report/x"},
	    "report: line 1: expected format=lume-metal-report/1, found format=lume-metal-report/x"},
	{"version line without newline", {.cut_after = "format=lume-metal-report/1"},
	    "report: line 1: truncated report: the last line has no newline"},
	{"no end line", {.from = "end=1\n", .to = ""},
	    "report: truncated report: no end=1 line after line 23"},
	{"last line without newline", {.cut_after = "end=1"},
	    "report: line 24: truncated report: the last line has no newline"},
	{"cut in the middle", {.cut_after = "family.Apple9"},
	    "report: line 11: truncated report: the last line has no newline"},
	{"end with another value", {.from = "end=1", .to = "end=yes"},
	    "report: line 24: the value of 'end' must be 1, found 'yes'"},
	{"data after end", {.from = "end=1\n", .to = "end=1\nshim_active=1\n"},
	    "report: line 25: data after end=1"},
	{"CRLF line endings", {.from = "\n", .to = "\r\n", .every = 1},
	    "report: line 1: ends with a carriage return; report lines end with \\n only"},
	{"line without =", {.from = "end=1\n", .to = "garbage\nend=1\n"},
	    "report: line 24: expected KEY=VALUE, found 'garbage'"},
	{"empty key", {.from = "end=1\n", .to = "=1\nend=1\n"},
	    "report: line 24: invalid key '' (keys are letters, digits, '_' and '.')"},
	{"key with a space", {.from = "end=1\n", .to = "my key=1\nend=1\n"},
	    "report: line 24: invalid key 'my key' (keys are letters, digits, '_' and '.')"},
	{"key with a dash", {.from = "end=1\n", .to = "shim-active=1\nend=1\n"},
	    "report: line 24: invalid key 'shim-active' (keys are letters, digits, '_' and '.')"},
	{"duplicate device", {.from = "end=1\n", .to = "device=Other\nend=1\n"},
	    "report: line 24: duplicate key 'device'"},
	{"duplicate family", {.from = "end=1\n", .to = "family.Apple7=1\nend=1\n"},
	    "report: line 24: duplicate key 'family.Apple7'"},
	{"duplicate shim_active", {.from = "end=1\n", .to = "shim_active=1\nend=1\n"},
	    "report: line 24: duplicate key 'shim_active'"},
	{"duplicate unknown key", {.from = "end=1\n", .to = "x.y=1\nx.y=2\nend=1\n"},
	    "report: line 25: duplicate key 'x.y'"},
	{"duplicate format line", {.from = "end=1\n", .to = "format=lume-metal-report/1\nend=1\n"},
	    "report: line 24: duplicate key 'format'"},
	{"family value 2", {.from = "family.Apple7=0", .to = "family.Apple7=2"},
	    "report: line 9: the value of 'family.Apple7' must be 0 or 1, found '2'"},
	{"family value empty", {.from = "family.Apple7=0", .to = "family.Apple7="},
	    "report: line 9: the value of 'family.Apple7' must be 0 or 1, found ''"},
	{"family value true", {.from = "family.Apple7=0", .to = "family.Apple7=true"},
	    "report: line 9: the value of 'family.Apple7' must be 0 or 1, found 'true'"},
	{"threadgroup memory negative", {.from = "max_threadgroup_memory=32768", .to = "max_threadgroup_memory=-1"},
	    "report: line 20: the value of 'max_threadgroup_memory' must be a decimal number in 0..9007199254740991, found '-1'"},
	{"threadgroup memory hex", {.from = "max_threadgroup_memory=32768", .to = "max_threadgroup_memory=0x8000"},
	    "report: line 20: the value of 'max_threadgroup_memory' must be a decimal number in 0..9007199254740991, found '0x8000'"},
	{"threadgroup memory with a space", {.from = "max_threadgroup_memory=32768", .to = "max_threadgroup_memory= 32768"},
	    "report: line 20: the value of 'max_threadgroup_memory' must be a decimal number in 0..9007199254740991, found ' 32768'"},
	{"working set above 2^53", {.from = "recommended_max_working_set_size=17179869184",
	    .to = "recommended_max_working_set_size=18446744073709551616"},
	    "report: line 21: the value of 'recommended_max_working_set_size' must be a decimal number in 0..9007199254740991, found '18446744073709551616'"},
	{"working set empty", {.from = "recommended_max_working_set_size=17179869184", .to = "recommended_max_working_set_size="},
	    "report: line 21: the value of 'recommended_max_working_set_size' must be a decimal number in 0..9007199254740991, found ''"},
	{"unified memory 01", {.from = "has_unified_memory=1", .to = "has_unified_memory=01"},
	    "report: line 22: the value of 'has_unified_memory' must be 0 or 1, found '01'"},
	{"missing device", {.from = "device=Apple Paravirtual device\n", .to = ""},
	    "report: line 23: report ended without required key 'device'"},
	{"missing shim_active", {.from = "shim_active=0\n", .to = ""},
	    "report: line 23: report ended without required key 'shim_active'"},
	{"missing threadgroup memory", {.from = "max_threadgroup_memory=32768\n", .to = ""},
	    "report: line 23: report ended without required key 'max_threadgroup_memory'"},
	{"missing Metal4", {.from = "family.Metal4=0\n", .to = ""},
	    "report: line 23: report ended without required key 'family.Metal4'"},
	{"bad escape", {.from = "device=Apple Paravirtual device", .to = "device=Apple\\qdevice"},
	    "report: line 2: bad escape '\\q' in the value of 'device' (allowed: \\\\, \\n, \\r, \\t, \\xHH)"},
	{"short hex escape", {.from = "device=Apple Paravirtual device", .to = "device=Apple\\x4"},
	    "report: line 2: bad escape in the value of 'device': \\x needs two hex digits"},
	{"non-hex escape", {.from = "device=Apple Paravirtual device", .to = "device=Apple\\xzz"},
	    "report: line 2: bad escape in the value of 'device': \\x needs two hex digits"},
	{"escaped NUL", {.from = "device=Apple Paravirtual device", .to = "device=Apple\\x00"},
	    "report: line 2: the value of 'device' contains \\x00; NUL is not allowed"},
	{"lone backslash", {.from = "device=Apple Paravirtual device", .to = "device=Apple\\"},
	    "report: line 2: the value of 'device' ends with a lone backslash; write it as \\\\"},
	{"raw tab in value", {.from = "device=Apple Paravirtual device", .to = "device=Apple\tdevice"},
	    "report: line 2: unescaped control byte 0x09 in the value of 'device'; write it as \\xHH"},
	{"raw DEL in value", {.from = "device=Apple Paravirtual device", .to = "device=Apple\x7f" "device"},
	    "report: line 2: unescaped control byte 0x7f in the value of 'device'; write it as \\xHH"},
	{"raw ESC in value", {.from = "device=Apple Paravirtual device", .to = "device=\x1b" "[31m"},
	    "report: line 2: unescaped control byte 0x1b in the value of 'device'; write it as \\xHH"},
	{"NUL byte", {.from = "device=Apple Paravirtual device", LM_TEST_TO_BYTES("device=Apple\0device")},
	    "report: line 2: NUL byte; a report is text"},
	{"invalid UTF-8 in device", {.from = "device=Apple Paravirtual device", .to = "device=Apple Para\xff" "virtual device"},
	    "report: line 2: the value of 'device' is not valid UTF-8 (decoded byte 10)"},
	{"escaped invalid UTF-8", {.from = "device=Apple Paravirtual device", .to = "device=Apple\\xff"},
	    "report: line 2: the value of 'device' is not valid UTF-8 (decoded byte 5)"},
	{"escape in a number", {.from = "max_threadgroup_memory=32768", .to = "max_threadgroup_memory=3\\x32768"},
	    "report: line 20: the value of 'max_threadgroup_memory' must be a decimal number in 0..9007199254740991, found '3\\\\x32768'"},
	{"bad probe_version escape", {.from = "end=1\n", .to = "probe_version=1.0\\u\nend=1\n"},
	    "report: line 24: bad escape '\\u' in the value of 'probe_version' (allowed: \\\\, \\n, \\r, \\t, \\xHH)"},
};

static void test_malformed_reports(void **state)
{
	size_t i, n = sizeof(malformed) / sizeof(malformed[0]);
	lm_report *r;

	(void)state;
	for (i = 0; i < n; i++) {
		size_t len;
		char *input = lm_test_edited(stock_lines, &malformed[i].edit, &len);
		int rc;

		r = (lm_report *)&r;
		rc = lm_report_parse_lines(&r, input, len);
		free(input);
		if (rc != LM_EINVALID || strcmp(lm_error_last()->message, malformed[i].message) != 0)
			fail_msg("case '%s': rc %d, message:\n  %s\nexpected:\n  %s", malformed[i].name, rc,
			    lm_error_last()->message, malformed[i].message);
		assert_null(r);
	}
}

static void test_stock_report(void **state)
{
	lm_report *r;
	int yes = -1;
	char *lines;

	(void)state;
	lm_assert_ok(lm_report_parse_lines(&r, stock_lines, strlen(stock_lines)));
	assert_string_equal(lm_report_device(r), "Apple Paravirtual device");
	assert_int_equal(lm_report_apple_family(r), 1005);
	lm_assert_ok(lm_report_family(r, 1005, &yes));
	assert_int_equal(yes, 1);
	lm_assert_ok(lm_report_family(r, 1006, &yes));
	assert_int_equal(yes, 0);
	lm_assert_fails(lm_report_family(r, 4001, &yes), LM_ENOTFOUND);
	assert_int_equal(lm_report_max_threadgroup_memory(r), 32768);
	assert_true(lm_report_recommended_working_set_size(r) == 17179869184ULL);
	assert_int_equal(lm_report_unified_memory(r), 1);
	lm_assert_ok(lm_report_shim_active(r));
	assert_null(lm_report_probe_version(r));
	assert_null(lm_report_shim_version(r));
	/* Written back, the line format is byte for byte what the probe printed. */
	lm_assert_ok(lm_report_to_lines(r, &lines));
	assert_string_equal(lines, stock_lines);
	lm_free(lines);
	lm_report_free(r);
	lm_report_free(NULL);
}

/* stock_lines with `insert` placed before the end=1 line. */
static char *with_lines(const char *insert)
{
	size_t base = strlen(stock_lines) - strlen("end=1\n");
	char *text = malloc(strlen(stock_lines) + strlen(insert) + 1);

	memcpy(text, stock_lines, base);
	strcpy(text + base, insert);
	strcat(text, "end=1\n");
	return text;
}

static void test_optional_and_unknown_keys(void **state)
{
	static const lm_test_edit minor = {.from = "format=lume-metal-report/1\n", .to = "format=lume-metal-report/1.7\n"};
	char *text = with_lines("probe_version=0.1.0\nshim_version=0.1.0 (abc)\nfuture.key=whatever \\x01\n"
	    "family.Apple11=1\nnew_limit=12\n");
	lm_report *r;
	size_t len;

	(void)state;
	lm_assert_ok(lm_report_parse_lines(&r, text, strlen(text)));
	assert_string_equal(lm_report_probe_version(r), "0.1.0");
	assert_string_equal(lm_report_shim_version(r), "0.1.0 (abc)");
	lm_report_free(r);
	free(text);

	/* A minor version of format 1 only adds keys: accepted. */
	text = lm_test_edited(stock_lines, &minor, &len);
	lm_assert_ok(lm_report_parse_lines(&r, text, len));
	assert_int_equal(lm_report_apple_family(r), 1005);
	lm_report_free(r);
	free(text);
}

static void test_every_family_required(void **state)
{
	size_t n, i;
	const lm_family *t = lm_family_table(&n);
	char line[64], expected[128], *text, *at;
	lm_report *r;

	(void)state;
	for (i = 0; i < n; i++) {
		snprintf(line, sizeof(line), "family.%s=", t[i].name);
		text = strdup(stock_lines);
		at = strstr(text, line);
		assert_non_null(at);
		memmove(at, strchr(at, '\n') + 1, strlen(strchr(at, '\n') + 1) + 1);
		lm_assert_fails(lm_report_parse_lines(&r, text, strlen(text)), LM_EINVALID);
		snprintf(expected, sizeof(expected), "report: line 23: report ended without required key 'family.%s'",
		    t[i].name);
		assert_string_equal(lm_error_last()->message, expected);
		free(text);
	}
}

static void test_hostile_input(void **state)
{
	size_t big = 5000, i, o;
	char *text, *huge;
	lm_report *r;

	(void)state;
	/* A line longer than 4096 bytes. */
	text = malloc(strlen(stock_lines) + big + 16);
	o = (size_t)sprintf(text, "format=lume-metal-report/1\ndevice=");
	memset(text + o, 'A', big);
	strcpy(text + o + big, "\nend=1\n");
	lm_assert_fails(lm_report_parse_lines(&r, text, strlen(text)), LM_EINVALID);
	assert_string_equal(lm_error_last()->message, "report: line 2: longer than 4096 bytes");
	/* Exactly 4096 bytes is fine (and fails later for what is missing). */
	o = (size_t)sprintf(text, "format=lume-metal-report/1\ndevice=");
	memset(text + o, 'A', 4096 - 7);
	strcpy(text + o + 4096 - 7, "\nend=1\n");
	lm_assert_fails(lm_report_parse_lines(&r, text, strlen(text)), LM_EINVALID);
	assert_string_equal(lm_error_last()->message, "report: line 3: report ended without required key "
	    "'max_threadgroup_memory'");
	free(text);

	/* More than 1 MiB. */
	huge = malloc(1024 * 1024 + 2);
	memset(huge, '\n', 1024 * 1024 + 1);
	lm_assert_fails(lm_report_parse_lines(&r, huge, 1024 * 1024 + 1), LM_EINVALID);
	assert_string_equal(lm_error_last()->message, "report: 1048577 bytes; a capability report is at most 1048576 bytes");
	free(huge);

	/* Hundreds of unknown keys: bounded. */
	text = malloc(300 * 32 + 1024);
	o = (size_t)sprintf(text, "format=lume-metal-report/1\n");
	for (i = 0; i < 300; i++)
		o += (size_t)sprintf(text + o, "unknown.k%zu=1\n", i);
	strcpy(text + o, "end=1\n");
	lm_assert_fails(lm_report_parse_lines(&r, text, strlen(text)), LM_EINVALID);
	assert_string_equal(lm_error_last()->message, "report: line 258: more than 256 unknown keys; this is not a "
	    "capability report");
	free(text);

	/* NULL input is an empty report. */
	lm_assert_fails(lm_report_parse_lines(&r, NULL, 10), LM_EINVALID);
	assert_string_equal(lm_error_last()->message, "report: empty; expected format=lume-metal-report/1 on line 1");
}

static void test_escaping_round_trip(void **state)
{
	static const lm_test_edit hostile = {.from = "device=Apple Paravirtual device\n",
	    .to = "device=\\x01\\x02\\x03\\x04\\x05\\x06\\x07\\x08\\t\\n\\x0b\\x0c\\r\\x0e\\x0f"
	          "\\x10\\x11\\x12\\x13\\x14\\x15\\x16\\x17\\x18\\x19\\x1a\\x1b\\x1c\\x1d\\x1e\\x1f\\x7f\\\\ \xc3\xa9 "
	          "\xe6\x97\xa5 = x\n"};
	char device[256], *lines, *json, *json2, *text;
	size_t o = 0, len;
	lm_report *r, *back, *from_json;
	int c;

	(void)state;
	/* Every control byte, DEL, a backslash and some UTF-8 in the device name. */
	for (c = 1; c < 0x20; c++)
		device[o++] = (char)c;
	device[o] = '\0';
	strcat(device, "\x7f\\ \xc3\xa9 \xe6\x97\xa5 = x");
	lm_assert_ok(lm_report_parse_lines(&r, stock_lines, strlen(stock_lines)));
	lm_assert_ok(lm_report_to_lines(r, &lines));
	lm_report_free(r);
	/* Replace the device with the hostile one by writing its escaped form. */
	text = lm_test_edited(stock_lines, &hostile, &len);
	lm_assert_ok(lm_report_parse_lines(&r, text, len));
	assert_string_equal(lm_report_device(r), device);
	lm_free(lines);
	lm_assert_ok(lm_report_to_lines(r, &lines));
	assert_string_equal(lines, text); /* the writer escapes exactly as the probe does */
	lm_assert_ok(lm_report_parse_lines(&back, lines, strlen(lines)));
	assert_string_equal(lm_report_device(back), device);
	/* And through JSON. */
	lm_assert_ok(lm_report_to_json(back, &json));
	lm_assert_ok(lm_report_from_json(&from_json, json, strlen(json)));
	assert_string_equal(lm_report_device(from_json), device);
	lm_assert_ok(lm_report_to_json(from_json, &json2));
	assert_string_equal(json, json2);
	lm_free(json);
	lm_free(json2);
	lm_free(lines);
	free(text);
	lm_report_free(r);
	lm_report_free(back);
	lm_report_free(from_json);
}

static void test_json_form(void **state)
{
	char *text = with_lines("probe_version=0.1.0\n"), *json;
	lm_report *r;

	(void)state;
	lm_assert_ok(lm_report_parse_lines(&r, text, strlen(text)));
	lm_assert_ok(lm_report_to_json(r, &json));
	assert_string_equal(json,
	    "{\n"
	    "  \"format\": \"lume-metal-report\",\n"
	    "  \"version\": 1,\n"
	    "  \"device\": \"Apple Paravirtual device\",\n"
	    "  \"families\": {\n"
	    "    \"Apple1\": true,\n    \"Apple2\": true,\n    \"Apple3\": true,\n    \"Apple4\": true,\n"
	    "    \"Apple5\": true,\n    \"Apple6\": false,\n    \"Apple7\": false,\n    \"Apple8\": false,\n"
	    "    \"Apple9\": false,\n    \"Apple10\": false,\n    \"Mac1\": false,\n    \"Mac2\": false,\n"
	    "    \"Common1\": false,\n    \"Common2\": false,\n    \"Common3\": false,\n    \"Metal3\": false,\n"
	    "    \"Metal4\": false\n"
	    "  },\n"
	    "  \"highest_apple_family\": \"Apple5\",\n"
	    "  \"max_threadgroup_memory\": 32768,\n"
	    "  \"recommended_max_working_set_size\": 17179869184,\n"
	    "  \"has_unified_memory\": true,\n"
	    "  \"shim_active\": false,\n"
	    "  \"probe_version\": \"0.1.0\",\n"
	    "  \"workloads\": {\n"
	    "    \"llama_simdgroup_reduction\": false,\n"
	    "    \"llama_simdgroup_mm\": false,\n"
	    "    \"llama_bfloat16\": false,\n"
	    "    \"llama_tensor\": false,\n"
	    "    \"mlx_residency_risk\": false\n"
	    "  }\n"
	    "}\n");
	lm_free(json);
	lm_report_free(r);
	free(text);
}

static const struct {
	const char *input;
	const char *message;
} bad_json[] = {
	{"[]", "report: $: expected an object, found an empty array"},
	{"{}", "report: $: missing field \"format\""},
	{"{\"format\":\"lume-metal-profile\"}", "report: $.format: expected \"lume-metal-report\", found \"lume-metal-profile\""},
	{"{\"format\":\"lume-metal-report\",\"version\":2}",
	 "report: $.version: expected 1, found 2 (a report from a newer lume-metal; update this one)"},
	{"{\"format\":\"lume-metal-report\",\"version\":1}", "report: $: missing field \"device\""},
	{"{\"format\":\"lume-metal-report\",\"version\":1,\"device\":7}", "report: $.device: expected a string, found 7"},
	{"{\"format\":\"lume-metal-report\",\"version\":1,\"device\":\"d\",\"families\":[]}",
	 "report: $.families: expected an object, found an empty array"},
	{"{\"format\":\"lume-metal-report\",\"version\":1,\"device\":\"d\",\"families\":{\"Apple7\":1}}",
	 "report: $.families.Apple7: expected true or false, found 1"},
	{"{\"format\":\"lume-metal-report\",\"version\":1,\"device\":\"d\",\"families\":{},"
	 "\"max_threadgroup_memory\":-1}",
	 "report: $.max_threadgroup_memory: expected an integer in 0..9007199254740991, found -1"},
	{"{\"format\":\"lume-metal-report\",\"version\":1,\"device\":\"d\",\"families\":{},"
	 "\"max_threadgroup_memory\":1,\"recommended_max_working_set_size\":1,\"has_unified_memory\":true}",
	 "report: $: missing field \"shim_active\""},
	{"{\"format\":\"lume-metal-report\",\"version\":1,\"device\":\"d\",\"device\":\"e\"}",
	 "report: $: duplicate key \"device\"; each key may appear once"},
};

static void test_json_errors(void **state)
{
	size_t i;
	lm_report *r;
	const char *ok = "{\"format\":\"lume-metal-report\",\"version\":1,\"device\":\"d\",\"families\":"
	    "{\"Apple7\":true,\"Apple42\":true},\"max_threadgroup_memory\":1,\"recommended_max_working_set_size\":2,"
	    "\"has_unified_memory\":false,\"shim_active\":true,\"workloads\":{},\"future\":[1]}";
	int yes = -1;

	(void)state;
	for (i = 0; i < sizeof(bad_json) / sizeof(bad_json[0]); i++) {
		if (lm_report_from_json(&r, bad_json[i].input, strlen(bad_json[i].input)) != LM_EINVALID ||
		    strcmp(lm_error_last()->message, bad_json[i].message) != 0)
			fail_msg("case %zu: %s", i, lm_error_last()->message);
		assert_null(r);
	}
	/* Unknown keys and families are ignored; missing families are not carried. */
	lm_assert_ok(lm_report_from_json(&r, ok, strlen(ok)));
	lm_assert_ok(lm_report_family(r, 1007, &yes));
	assert_int_equal(yes, 1);
	lm_assert_fails(lm_report_family(r, 1005, &yes), LM_ENOTFOUND);
	assert_int_equal(lm_report_apple_family(r), 1007);
	lm_report_free(r);
}

static void test_stock_paravirtual(void **state)
{
	lm_report *r, *parsed;
	char *a, *b;

	(void)state;
	lm_assert_ok(lm_report_stock_paravirtual(&r));
	lm_assert_ok(lm_report_parse_lines(&parsed, stock_lines, strlen(stock_lines)));
	assert_int_equal(lm_report_apple_family(r), 1005);
	assert_int_equal(lm_report_max_threadgroup_memory(r), 32768);
	assert_string_equal(lm_report_device(r), lm_report_device(parsed));
	lm_assert_ok(lm_report_to_lines(r, &a));
	lm_assert_ok(lm_report_to_lines(parsed, &b));
	/* The same answers; only the working-set size (unknown in the stock model) differs. */
	lm_assert_contains(a, "recommended_max_working_set_size=0\n");
	lm_assert_contains(b, "recommended_max_working_set_size=17179869184\n");
	assert_memory_equal(a, b, (size_t)(strstr(a, "recommended") - a));
	lm_free(a);
	lm_free(b);
	lm_report_free(r);
	lm_report_free(parsed);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_malformed_reports),
		cmocka_unit_test(test_stock_report),
		cmocka_unit_test(test_optional_and_unknown_keys),
		cmocka_unit_test(test_every_family_required),
		cmocka_unit_test(test_hostile_input),
		cmocka_unit_test(test_escaping_round_trip),
		cmocka_unit_test(test_json_form),
		cmocka_unit_test(test_json_errors),
		cmocka_unit_test(test_stock_paravirtual),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
