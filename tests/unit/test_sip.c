/* System Integrity Protection and `run`: which paths are protected, csrutil's words, the guest-side
 * resolver's lines, and the warning (host/lib/guestops/sip.c). The resolver itself runs in the e2e
 * scenarios (tests/e2e/sip.sh). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "guest_codesign.h"
#include "lm_test.h"

static void test_protected_paths(void **state)
{
	static const struct {
		const char *path;
		int protected_;
	} cases[] = {
		{ "/bin/sh", 1 }, { "/sbin/ping", 1 }, { "/usr/bin/python3", 1 }, { "/usr/sbin/sshd", 1 },
		{ "/usr/libexec/path_helper", 1 }, { "/usr/bin/env", 1 },
		{ "/System/Library/Frameworks/JavaScriptCore.framework/Helpers/jsc", 1 },
		{ "/System/Cryptexes/App/usr/bin/safaridriver", 1 },
		{ "/System/Volumes/Data/opt/homebrew/bin/python3", 0 },
		{ "/usr/local/bin/python3", 0 }, { "/opt/homebrew/bin/python3", 0 },
		{ "/Users/lume/venv/bin/python", 0 }, { "/usr/lib/libSystem.B.dylib", 0 },
		{ "/usr/binx/tool", 0 }, { "/binaries/x", 0 }, { "/Systemd/x", 0 }, { "/usr/bin", 0 },
		{ "bin/sh", 0 }, { "./bin/sh", 0 }, { "", 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (lm_sip_protected_path(cases[i].path) != cases[i].protected_)
			fail_msg("%s: expected %d", cases[i].path, cases[i].protected_);
	}
}

static void test_csrutil_status(void **state)
{
	static const struct {
		const char *line, *want;
	} cases[] = {
		{ "System Integrity Protection status: enabled.", "enabled" },
		{ "System Integrity Protection status: disabled.", "disabled" },
		{ "System Integrity Protection status: unknown (Custom Configuration).", "custom" },
		{ "enabled", "enabled" }, { "disabled", "disabled" }, { "custom", "custom" }, /* the journal's words */
		{ "", "" }, { "csrutil: command not found", "" }, { "System Integrity Protection status: enabledx.", "" },
		{ "System Integrity Protection status: maybe.", "" },
	};
	char out[16];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		lm_sip_status_parse(cases[i].line, out, sizeof(out));
		if (strcmp(out, cases[i].want) != 0)
			fail_msg("'%s': got '%s', expected '%s'", cases[i].line, out, cases[i].want);
	}
}

static void test_resolver_lines(void **state)
{
	lm_run_target t;
	char big[PATH_MAX + 64];

	lm_run_target_parse("program=./job.sh\nprogram_real=/Users/lume/job.sh\ninterpreter=/bin/sh\n"
	    "interpreter_real=/bin/sh\nother=x\n", &t);
	assert_string_equal(t.program, "./job.sh");
	assert_string_equal(t.program_real, "/Users/lume/job.sh");
	assert_string_equal(t.interpreter, "/bin/sh");
	assert_string_equal(t.interpreter_real, "/bin/sh");

	lm_run_target_parse("program=/usr/bin/python3\nprogram_real=/usr/bin/python3", &t);
	assert_string_equal(t.program, "/usr/bin/python3");
	assert_string_equal(t.program_real, "/usr/bin/python3");
	assert_string_equal(t.interpreter, "");

	lm_run_target_parse("", &t);
	assert_string_equal(t.program, "");

	/* Too long to be a path here: left empty, never cut. */
	memset(big, 'a', sizeof(big));
	memcpy(big, "program=/", 9);
	big[sizeof(big) - 1] = '\0';
	lm_run_target_parse(big, &t);
	assert_string_equal(t.program, "");
}

static void test_warning(void **state)
{
	lm_guest_facts mac = { .os = "Darwin", .arch = "arm64", .sip = "enabled" };
	lm_guest_facts off = { .os = "Darwin", .arch = "arm64", .sip = "disabled" };
	lm_guest_facts unknown = { .os = "Darwin", .arch = "arm64" };
	lm_guest_facts linux_guest = { .os = "Linux", .arch = "x86_64" };
	lm_run_target sh = { .program = "/bin/sh", .program_real = "/bin/sh" };
	lm_run_target link = { .program = "/Users/lume/bin/py", .program_real = "/usr/bin/python3" };
	lm_run_target script = { .program = "./job.sh", .program_real = "/Users/lume/job.sh", .interpreter = "/usr/bin/env", .interpreter_real = "/usr/bin/env" };
	lm_run_target brew = { .program = "/opt/homebrew/bin/python3", .program_real = "/opt/homebrew/Cellar/python/bin/python3" };
	lm_run_target venv = { .program = "./job.py", .program_real = "/Users/lume/job.py", .interpreter = "/Users/lume/venv/bin/python", .interpreter_real = "/opt/homebrew/bin/python3" };
	lm_run_target none = { .program = "" };
	char w[4096];

	assert_int_equal(lm_sip_warning(&mac, "sh", &sh, w, sizeof(w)), 1);
	assert_string_equal(w, "sh is /bin/sh, which System Integrity Protection protects (SIP enabled): macOS removes "
	    "DYLD_INSERT_LIBRARIES from protected programs, so the shim cannot reach the workload and it runs stock. "
	    "Run it with a program or interpreter outside the system directories (Homebrew's /opt/homebrew/bin/python3, "
	    "a venv's bin/python).");
	assert_int_equal(lm_sip_warning(&mac, "py", &link, w, sizeof(w)), 1);
	lm_assert_contains(w, "py is /Users/lume/bin/py, a link to /usr/bin/python3, which System Integrity");
	assert_int_equal(lm_sip_warning(&mac, "./job.sh", &script, w, sizeof(w)), 1);
	lm_assert_contains(w, "./job.sh (./job.sh) is a script run by /usr/bin/env, which System Integrity");
	assert_int_equal(lm_sip_warning(&off, "sh", &sh, w, sizeof(w)), 1);
	lm_assert_contains(w, "(SIP disabled): dyld then loads the shim into it, but protected programs are arm64e");
	lm_assert_contains(w, "stops the program (\"inserted dylib could not be loaded\")");
	assert_int_equal(lm_sip_warning(&unknown, "sh", &sh, w, sizeof(w)), 1);
	lm_assert_contains(w, "(SIP state not reported)");

	/* Nothing to say: outside the system directories, not found, or not macOS. */
	lm_assert_ok(lm_sip_warning(&mac, "python3", &brew, w, sizeof(w)));
	assert_string_equal(w, "");
	lm_assert_ok(lm_sip_warning(&mac, "./job.py", &venv, w, sizeof(w)));
	lm_assert_ok(lm_sip_warning(&mac, "nothing", &none, w, sizeof(w)));
	lm_assert_ok(lm_sip_warning(&linux_guest, "sh", &sh, w, sizeof(w)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_protected_paths),
		cmocka_unit_test(test_csrutil_status),
		cmocka_unit_test(test_resolver_lines),
		cmocka_unit_test(test_warning),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
