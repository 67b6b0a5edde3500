/* VM manager internals without a simulator: the name validator, the JSON reader that copes with
 * `lume`'s log lines, VM objects, the DHCP leases, the Lume URL's endpoint, connect errors in
 * words, Lume's storage. The child runner they use is tests/proc's. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lume-metal.h"
#include "lume-metal/sys/ssh.h"
#include "vm_internal.h"
#include "lume_common.h"
#include "vm_name.h"
#include "net_words.h"
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

/* Issue 22: two validators disagreed (the SSH layer took 255 bytes, a leading '-', "." and "..").
 * One rule now: the name normalised for a VM manager, checked as stored, and taken by the SSH
 * layer (connect, forget-host, known_hosts) -- same verdict, same message. */
static void test_name_one_rule(void **state)
{
	static const struct {
		const char *name;
		const char *mention; /* NULL: valid */
	} cases[] = {
		{"vm", NULL}, {"a", NULL}, {"A.b_C-9", NULL}, {"..x", NULL}, {".hidden", NULL}, {"x-", NULL},
		{"-rf", "must not start with '-'"}, {"-", "must not start with '-'"},
		{".", "is not allowed"}, {"..", "is not allowed"},
		{"a/b", "character '/' at position 2"}, {"/", "character '/' at position 1"},
		{"../x", "character '/' at position 3"}, {"a b", "character ' '"}, {"a\x1b[0m", "character \\x1b"},
	};
	char max[LM_VM_NAME_MAX], over[LM_VM_NAME_MAX + 1], out[LM_VM_NAME_MAX], message[512];
	char dir[] = "/tmp/lm-name-rule-XXXXXX";
	lm_options o;
	lm_context *ctx = NULL;
	lm_ssh *ssh = NULL;
	size_t i;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(lm_options_init(&o, LM_OPTIONS_VERSION), 0);
	o.state_dir = dir;
	assert_int_equal(lm_context_new(&ctx, &o), 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *name = cases[i].name;
		int want = cases[i].mention != NULL ? LM_EINVALID : 0;

		if (lm_vm_name_normalize(name, out) != want)
			fail_msg("'%s': normalize says %d", name, lm_error_last()->code);
		if (want == 0) {
			assert_string_equal(out, name);
			assert_int_equal(lm_vm_name_check(name, strlen(name)), 0);
			assert_int_equal(lm_ssh_forget_host(ctx, name), 0); /* valid, and nothing to forget */
			continue;
		}
		snprintf(message, sizeof(message), "%s", lm_error_last()->message);
		if (strstr(message, cases[i].mention) == NULL)
			fail_msg("'%s': \"%s\" does not mention \"%s\"", name, message, cases[i].mention);
		assert_int_equal(lm_vm_name_check(name, strlen(name)), LM_EINVALID);
		assert_string_equal(lm_error_last()->message, message);
		assert_int_equal(lm_ssh_forget_host(ctx, name), LM_EINVALID);
		assert_string_equal(lm_error_last()->message, message);
		assert_int_equal(lm_ssh_connect(&ssh, ctx, name, "127.0.0.1", 22), LM_EINVALID);
		assert_string_equal(lm_error_last()->message, message);
		assert_null(ssh);
	}
	/* The longest name, and one byte more: the same limit for every layer. */
	memset(max, 'm', sizeof(max) - 1);
	max[sizeof(max) - 1] = '\0';
	assert_int_equal(strlen(max), LM_VM_NAME_MAX - 1);
	assert_int_equal(lm_vm_name_normalize(max, out), 0);
	assert_int_equal(lm_vm_name_check(max, strlen(max)), 0);
	assert_int_equal(lm_ssh_forget_host(ctx, max), 0);
	memset(over, 'm', sizeof(over) - 1);
	over[sizeof(over) - 1] = '\0';
	assert_int_equal(lm_vm_name_normalize(over, out), LM_EINVALID);
	assert_non_null(strstr(lm_error_last()->message, "is too long (128 bytes; at most 127)"));
	assert_int_equal(lm_vm_name_check(over, strlen(over)), LM_EINVALID);
	assert_int_equal(lm_ssh_forget_host(ctx, over), LM_EINVALID);
	assert_non_null(strstr(lm_error_last()->message, "is too long (128 bytes; at most 127)"));
	assert_int_equal(lm_ssh_connect(&ssh, ctx, over, "127.0.0.1", 22), LM_EINVALID);
	/* A stored name has no NAME:TAG (Lume's is stored NAME_TAG), and a NUL inside is no end. */
	assert_int_equal(lm_vm_name_check("vm:tag", 6), LM_EINVALID);
	assert_non_null(strstr(lm_error_last()->message, "character ':' at position 3"));
	assert_int_equal(lm_vm_name_check("vm\0x", 4), LM_EINVALID);
	assert_non_null(strstr(lm_error_last()->message, "character \\x00 at position 3"));
	assert_int_equal(lm_vm_name_check(NULL, 0), LM_EINVALID);
	assert_non_null(strstr(lm_error_last()->message, "empty"));
	lm_context_free(ctx);
	assert_int_equal(lm_test_rmtree(dir), 0);
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
	/* A status word longer than the field: cut for the field, never spilled into the name (sscanf's
	 * %31s made the rest of it the name's start); a line cut by a lone CR is two lines. */
	lm_assert_ok(lm_vm_utm_parse_list("5A1B0C2D-3E4F-4A5B-8C6D-000000000005 "
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa  vm5\rjunk", &vms, &n));
	assert_int_equal(n, 1);
	assert_string_equal(vms[0].name, "vm5");
	assert_string_equal(vms[0].status, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"); /* 31 bytes */
	free(vms);
	lm_assert_ok(lm_vm_utm_parse_list(empty, &vms, &n));
	assert_int_equal(n, 0);
	assert_null(vms);
}

/* bootpd's /var/db/dhcpd_leases (Lume's DHCPLeaseParser.swift reads the same): the newest live
 * lease of the MAC, whatever the case and leading zeros; hardware types other than Ethernet,
 * expired leases, broken blocks and garbage are skipped, never trusted. */
static void test_dhcp_leases(void **state)
{
	const char *text =
	    "{\n\tname=old\n\tip_address=192.168.64.9\n\thw_address=1,7a:6d:5f:0:0:1\n\tlease=0x10\n}\n"
	    "{\n\tname=vm1\n\tip_address=192.168.64.3\n\thw_address=1,7a:6d:5f:0:0:1\n"
	    "\tidentifier=1,7a:6d:5f:0:0:1\n\tlease=0x7fffffff\n}\n"
	    "{\n\tname=vm1-older\n\tip_address=192.168.64.2\n\thw_address=1,7a:6d:5f:0:0:1\n\tlease=0x7fffffff\n}\n"
	    "{\n\tip_address=192.168.64.4\n\thw_address=ff,7a:6d:5f:0:0:2\n\tlease=0x7fffffff\n}\n"
	    "{\n\tip_address=not-an-ip\n\thw_address=1,7a:6d:5f:0:0:3\n\tlease=0x7fffffff\n}\n"
	    "{\n\tip_address=192.168.64.5\n\thw_address=1,7a:6d:5f:0:0:4\n\tlease=zz\n}\n"
	    "garbage line\n}\n{\n\tip_address=192.168.64.6\n\thw_address=1,7a:6d:5f:0:0:5:6\n\tlease=0x7fffffff\n}\n"
	    "  {  \r\n  ip_address=192.168.64.7  \r\n  hw_address=1,7A:6D:5F:00:00:07\r\n  lease=0x7FFFFFFF\r\n  }\r\n"
	    "{\n\tip_address=192.168.64.8\n\thw_address=1,7a:6d:5f:0:0:8\n";  /* cut off: no closing brace */
	char ip[64];

	(void)state;
	lm_assert_ok(lm_vm_dhcp_lease_find(text, "7A:6D:5F:00:00:01", 1000.0, ip, sizeof(ip)));
	assert_string_equal(ip, "192.168.64.3"); /* the expired one first is skipped; the newest live one */
	lm_assert_ok(lm_vm_dhcp_lease_find(text, "7a:6d:5f:0:0:7", 1000.0, ip, sizeof(ip)));
	assert_string_equal(ip, "192.168.64.7"); /* blanks and CRLF around the lines */
	lm_assert_ok(lm_vm_dhcp_lease_find(text, "7a:6d:5f:00:00:01", 3e9, ip, sizeof(ip)));
	assert_string_equal(ip, ""); /* every lease of it over */
	{
		static const char *const none[] = {"7a:6d:5f:0:0:2", "7a:6d:5f:0:0:4", "7a:6d:5f:0:0:5",
			"7a:6d:5f:0:0:8", "7a:6d:5f:0:0:9"};
		size_t i;
		for (i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
			lm_assert_ok(lm_vm_dhcp_lease_find(text, none[i], 1000.0, ip, sizeof(ip)));
			assert_string_equal(ip, "");
		}
	}
	/* The live lease of a MAC whose address is not an address: refused, never looked up. */
	lm_assert_fails(lm_vm_dhcp_lease_find(text, "7a:6d:5f:0:0:3", 1000.0, ip, sizeof(ip)), LM_ERROR);
	lm_assert_error_has("the DHCP lease of 7a:6d:5f:00:00:03: the address it gave, 'not-an-ip', is not an IPv4 address");
	assert_string_equal(ip, "");
	lm_assert_fails(lm_vm_dhcp_lease_find(text, "7a:6d:5f:0:0", 1000.0, ip, sizeof(ip)), LM_EINVALID);
	lm_assert_fails(lm_vm_dhcp_lease_find(text, "7a:6d:5f:0:0:100", 1000.0, ip, sizeof(ip)), LM_EINVALID);
	lm_assert_fails(lm_vm_dhcp_lease_find(text, "7A:6D:5F:00:00:01", 1000.0, ip, 8), LM_EINVALID);
	lm_assert_ok(lm_vm_dhcp_lease_find("", "7a:6d:5f:0:0:1", 1000.0, ip, sizeof(ip)));
	assert_string_equal(ip, "");
	/* a file that is not there, or not a regular file, has no lease */
	lm_assert_ok(lm_vm_dhcp_lease_lookup("/nonexistent/dhcpd_leases", "7a:6d:5f:0:0:1", ip, sizeof(ip)));
	assert_string_equal(ip, "");
	lm_assert_ok(lm_vm_dhcp_lease_lookup("/dev/null", "7a:6d:5f:0:0:1", ip, sizeof(ip)));
	assert_string_equal(ip, "");
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

/* Issue 24: a failed connect is said by name wherever lume-metal connects; EHOSTUNREACH names
 * macOS 15's Local Network privacy, which answers so. */
static void test_connect_error_words(void **state)
{
	char buf[256];

	(void)state;
	lm_connect_error_words(ECONNREFUSED, buf, sizeof(buf));
	lm_assert_contains(buf, "connection refused (ECONNREFUSED)");
	lm_connect_error_words(EHOSTUNREACH, buf, sizeof(buf));
	lm_assert_contains(buf, "no route to host (EHOSTUNREACH)");
	lm_assert_contains(buf, "Local Network privacy");
	lm_connect_error_words(ENETUNREACH, buf, sizeof(buf));
	lm_assert_contains(buf, "(ENETUNREACH)");
	lm_connect_error_words(EACCES, buf, sizeof(buf));
	assert_string_equal(buf, strerror(EACCES));
}

/* The Lume URL's HOST:PORT for the server lookup, read without libcurl: the scheme's port by
 * default, loopback only as a dotted 127.0.0.0/8 address, localhost or [::1]; anything a host
 * cannot be refused with the URL named. */
static void test_url_endpoint(void **state)
{
	static const struct {
		const char *url, *address;
		int port, local;
	} good[] = {
		{"http://127.0.0.1:7777", "127.0.0.1:7777", 7777, 1},
		{"http://127.0.0.9:7777/lume/", "127.0.0.9:7777", 7777, 1},
		{"http://localhost", "localhost:80", 80, 1},
		{"https://LocalHost/x?y", "LocalHost:443", 443, 1},
		{"http://[::1]:8080", "[::1]:8080", 8080, 1},
		{"http://[fe80::1%25en0]:1", "[fe80::1%25en0]:1", 1, 0},
		{"http://mac-mini.local:7777", "mac-mini.local:7777", 7777, 0},
		{"http://127.example.com:7777", "127.example.com:7777", 7777, 0},
		{"http://10.0.0.1:65535", "10.0.0.1:65535", 65535, 0},
	};
	static const char *const bad[] = {"ftp://127.0.0.1:7777", "127.0.0.1:7777", "http://", "http://:7777",
		"http://127.0.0.1:", "http://127.0.0.1:0", "http://127.0.0.1:65536", "http://127.0.0.1:77a7",
		"http://user@127.0.0.1:7777", "http://[::1", "http://[]:1", "http://a b:1", "http://h:1:2"};
	char address[64];
	int port, local;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		lm_assert_ok(lm_vm_url_endpoint(good[i].url, address, sizeof(address), &port, &local));
		assert_string_equal(address, good[i].address);
		assert_int_equal(port, good[i].port);
		assert_int_equal(local, good[i].local);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		lm_assert_fails(lm_vm_url_endpoint(bad[i], address, sizeof(address), &port, &local), LM_EINVALID);
		lm_assert_error_has(bad[i]);
		lm_assert_error_has("expected http://HOST:PORT");
		assert_int_equal(port, 0);
	}
	/* An address that does not fit is refused, never cut. */
	lm_assert_fails(lm_vm_url_endpoint("http://mac-mini.local:7777", address, 10, &port, &local), LM_EINVALID);
}

/* LOCATION/NAME with the first `n` of Lume's three files (config.json, disk.img, nvram.bin). */
static void lume_vm_files(const char *location, const char *name, size_t n)
{
	static const char *const three[] = {"config.json", "disk.img", "nvram.bin"};
	char path[PATH_MAX];
	size_t i;

	snprintf(path, sizeof(path), "%s/%s", location, name);
	assert_int_equal(lm_test_mkdir_p(path, 0755), 0);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s/%s", location, name, three[i]);
		lm_test_write_text(path, "");
	}
}

/* Lume takes a directory for a VM only when it holds config.json, disk.img and nvram.bin
 * (VMDirectory.initialized(), trycua/cua libs/lume 0.5.3): the gone sweep's look at the storage
 * answers "it exists" for those alone, in any location, and "cannot tell" for anything less. */
static void test_lume_stored(void **state)
{
	char *root = lm_test_tmpdir("stored"), *one = lm_test_join(root, "one"), *two = lm_test_join(root, "two");
	lm_vm_lume_storage st;

	(void)state;
	memset(&st, 0, sizeof(st));
	assert_int_equal(lm_vm_lume_stored(&st, "vm-a"), 0); /* not asked yet: no locations */
	lume_vm_files(two, "vm-a", 3); /* vm-a: whole in the second location, */
	lume_vm_files(one, "vm-a", 1); /* config.json alone in the first */
	lume_vm_files(one, "vm-b", 2); /* vm-b: no nvram.bin (a VM being made) */
	lm_assert_ok(lm_vm_lume_storage_add(&st, one));
	assert_int_equal(lm_vm_lume_stored(&st, "vm-a"), 0);
	assert_int_equal(lm_vm_lume_stored(&st, "vm-b"), 0);
	lm_assert_ok(lm_vm_lume_storage_add(&st, two));
	assert_int_equal(lm_vm_lume_stored(&st, "vm-a"), 1);
	assert_int_equal(lm_vm_lume_stored(&st, "vm-b"), 0);
	assert_int_equal(lm_vm_lume_stored(&st, "vm-c"), 0);
	lm_vm_lume_storage_dispose(&st);
	lm_test_rmtree(root);
	free(one);
	free(two);
	free(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name_valid),
		cmocka_unit_test(test_name_invalid),
		cmocka_unit_test(test_name_one_rule),
		cmocka_unit_test(test_json_among_log_lines),
		cmocka_unit_test(test_vm_objects),
		cmocka_unit_test(test_excerpt),
		cmocka_unit_test(test_utm_list_table),
		cmocka_unit_test(test_dhcp_leases),
		cmocka_unit_test(test_connect_error_words),
		cmocka_unit_test(test_url_endpoint),
		cmocka_unit_test(test_lume_stored),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
