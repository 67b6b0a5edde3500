/* Code signatures and the shim (host/lib/guestops/codesign.c): codesign's output as macOS prints
 * it (the "[Dict]" entitlements of macOS 12 and later, and XML), dyld's two rules (the hardened
 * runtime without allow-dyld-environment-variables: refused; library validation without
 * disable-library-validation: warned), a script's interpreter, the shim's arm64e slice in its
 * Mach-O header, and the children policy (sip.c). The stand-in that prints the same lines runs in
 * tests/e2e/activation.sh and tests/sim/standins.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "guest_codesign.h"
#include "guest_shim.h"
#include "lm_test.h"

#define ALLOW "com.apple.security.cs.allow-dyld-environment-variables"
#define NOLV "com.apple.security.cs.disable-library-validation"

/* codesign -dv --entitlements - (stderr then stdout, as 2>&1 gives them). */
static const char hardened[] =
	"Executable=/opt/homebrew/bin/ollama\n"
	"Identifier=ollama\n"
	"Format=Mach-O thin (arm64)\n"
	"CodeDirectory v=20500 size=31234 flags=0x10000(runtime) hashes=965+7 location=embedded\n"
	"Signature size=9041\n"
	"Timestamp=Nov 20, 2026 at 10:00:00\n"
	"Info.plist=not bound\n"
	"TeamIdentifier=3MU9H2V9Y9\n"
	"Runtime Version=15.0.0\n"
	"Sealed Resources=none\n"
	"Internal requirements count=1 size=188\n"
	"[Dict]\n"
	"\t[Key] com.apple.security.cs.allow-jit\n"
	"\t[Value]\n"
	"\t\t[Bool] true\n";

static void parse(lm_code_signature *s, const char *text)
{
	const char *line = text;

	memset(s, 0, sizeof(*s));
	while (*line != '\0') {
		const char *end = strchr(line, '\n');
		size_t n = end != NULL ? (size_t)(end - line) : strlen(line);

		lm_codesign_parse_line(s, line, n);
		line += n + (end != NULL);
	}
}

static void test_hardened(void **state)
{
	lm_code_signature s;

	parse(&s, hardened);
	assert_true(s.seen);
	assert_false(s.unsigned_);
	assert_true(s.hardened);
	assert_string_equal(s.flags, "0x10000(runtime)");
	assert_false(s.allow_dyld_env);
	assert_true(lm_codesign_ignores_injection(&s));
	assert_true(lm_codesign_validates_libraries(&s));
}

static void test_entitled(void **state)
{
	lm_code_signature s;

	/* Both entitlements, as the [Dict] form prints them. */
	parse(&s, "CodeDirectory v=20500 size=1 flags=0x10000(runtime) hashes=1+7 location=embedded\n[Dict]\n"
	    "\t[Key] " ALLOW "\n\t[Value]\n\t\t[Bool] true\n\t[Key] " NOLV "\n\t[Value]\n\t\t[Bool] true\n");
	assert_true(s.hardened && s.allow_dyld_env && s.disable_library_validation);
	assert_false(lm_codesign_ignores_injection(&s));
	assert_false(lm_codesign_validates_libraries(&s));

	/* The dyld entitlement alone: the shim is allowed, another team's library is not. */
	parse(&s, "CodeDirectory v=20500 size=1 flags=0x10000(runtime) hashes=1+7 location=embedded\n[Dict]\n"
	    "\t[Key] " ALLOW "\n\t[Value]\n\t\t[Bool] true\n");
	assert_false(lm_codesign_ignores_injection(&s));
	assert_true(lm_codesign_validates_libraries(&s));

	/* false is no grant. */
	parse(&s, "CodeDirectory v=20500 size=1 flags=0x10000(runtime) hashes=1+7 location=embedded\n[Dict]\n"
	    "\t[Key] " ALLOW "\n\t[Value]\n\t\t[Bool] false\n");
	assert_true(lm_codesign_ignores_injection(&s));

	/* XML (--xml, and codesign before macOS 12), one key per line or all on one. */
	parse(&s, "CodeDirectory v=20400 size=1 flags=0x10000(runtime) hashes=1+7 location=embedded\n"
	    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\">\n<dict>\n"
	    "\t<key>" ALLOW "</key>\n\t<true/>\n\t<key>" NOLV "</key>\n\t<false/>\n</dict>\n</plist>\n");
	assert_true(s.allow_dyld_env);
	assert_false(s.disable_library_validation);
	parse(&s, "CodeDirectory v=20400 size=1 flags=0x10000(runtime) hashes=1+7 location=embedded\n"
	    "<plist version=\"1.0\"><dict><key>" NOLV "</key><true/><key>" ALLOW "</key><true/></dict></plist>\n");
	assert_true(s.allow_dyld_env && s.disable_library_validation);

	/* A key that only starts like the entitlement is another one. */
	parse(&s, "CodeDirectory v=20500 size=1 flags=0x10000(runtime) hashes=1+7 location=embedded\n[Dict]\n"
	    "\t[Key] com.apple.security.cs.allow-dyld\n\t[Value]\n\t\t[Bool] true\n");
	assert_true(lm_codesign_ignores_injection(&s));
}

static void test_not_hardened(void **state)
{
	lm_code_signature s;

	/* Apple's linker signs every arm64 binary ad hoc: nothing to say. */
	parse(&s, "Executable=/usr/local/bin/llama-server\nCodeDirectory v=20400 size=1 flags=0x20002(adhoc,linker-signed) "
	    "hashes=1+0 location=embedded\nSignature=adhoc\nTeamIdentifier=not set\n");
	assert_false(s.hardened);
	assert_false(lm_codesign_ignores_injection(&s));
	assert_false(lm_codesign_validates_libraries(&s));
	/* A script is not signed at all. */
	parse(&s, "/Users/lume/job.sh: code object is not signed at all\n");
	assert_true(s.unsigned_);
	assert_false(lm_codesign_ignores_injection(&s));
	/* Library validation as a flag alone, by its word or its bit. */
	parse(&s, "CodeDirectory v=20500 size=1 flags=0x2000(library-validation) hashes=1+7 location=embedded\n");
	assert_false(lm_codesign_ignores_injection(&s));
	assert_true(lm_codesign_validates_libraries(&s));
	parse(&s, "CodeDirectory v=20500 size=1 flags=0x12000 hashes=1+7 location=embedded\n");
	assert_true(s.hardened && s.library_validation);
	/* Nothing printed (no codesign): nothing known, nothing refused. */
	memset(&s, 0, sizeof(s));
	assert_false(lm_codesign_ignores_injection(&s));
}

static void test_messages(void **state)
{
	lm_run_target t;
	char msg[4096];

	/* What the guest-side resolver prints, codesign's lines prefixed. */
	lm_run_target_parse("shim_head=cafebabe\nprogram=ollama-x\nprogram_real=/opt/homebrew/bin/ollama-x\n"
	    "program_codesign=CodeDirectory v=20500 size=1 flags=0x10000(runtime) hashes=1+7 location=embedded\n", &t);
	assert_true(t.program_sig.hardened);
	assert_int_equal(lm_codesign_refusal("ollama-x", &t, msg, sizeof(msg)), 1);
	assert_string_equal(msg, "ollama-x (/opt/homebrew/bin/ollama-x) is signed with the hardened runtime "
	    "(flags=0x10000(runtime)) without the entitlement com.apple.security.cs.allow-dyld-environment-variables: "
	    "dyld ignores DYLD_INSERT_LIBRARIES in it, so the shim cannot load and it would run stock. Nothing was started");
	/* Library validation comes with the hardened runtime too (run says only the refusal). */
	assert_int_equal(lm_codesign_warning("ollama-x", &t, msg, sizeof(msg)), 1);

	/* A script: its interpreter's signature decides. */
	lm_run_target_parse("program=./serve.py\nprogram_real=/Users/lume/serve.py\n"
	    "program_codesign=/Users/lume/serve.py: code object is not signed at all\n"
	    "interpreter=/opt/homebrew/bin/python3\ninterpreter_real=/opt/homebrew/Cellar/python/bin/python3\n"
	    "interpreter_codesign=CodeDirectory v=20500 size=1 flags=0x10000(runtime) hashes=1+7 location=embedded\n"
	    "interpreter_codesign=[Dict]\ninterpreter_codesign=\t[Key] " ALLOW "\n"
	    "interpreter_codesign=\t[Value]\ninterpreter_codesign=\t\t[Bool] true\n", &t);
	assert_int_equal(lm_codesign_refusal("./serve.py", &t, msg, sizeof(msg)), 0);
	assert_int_equal(lm_codesign_warning("./serve.py", &t, msg, sizeof(msg)), 1);
	lm_assert_contains(msg, "./serve.py (./serve.py) is a script whose interpreter "
	    "/opt/homebrew/Cellar/python/bin/python3 is signed with library validation (flags=0x10000(runtime)) and "
	    "without the entitlement com.apple.security.cs.disable-library-validation");
	lm_run_target_parse("program=./serve.py\ninterpreter=/opt/x/python3\n"
	    "interpreter_codesign=CodeDirectory v=20500 size=1 flags=0x10000(runtime) hashes=1+7 location=embedded\n", &t);
	assert_int_equal(lm_codesign_refusal("./serve.py", &t, msg, sizeof(msg)), 1);
	lm_assert_contains(msg, "is a script whose interpreter /opt/x/python3 is signed with the hardened runtime");
}

static void test_arm64e(void **state)
{
	/* fat: arm64 (0x0100000c/0) and x86_64 (0x01000007/3); then arm64e (subtype 2, with the
	 * capability bits 0x80 in the top byte, as ld64 writes it). */
	static const unsigned char fat_plain[] = { 0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 2,
		1, 0, 0, 0x0c, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0x10, 0, 0, 0, 0, 14,
		1, 0, 0, 0x07, 0, 0, 0, 3, 0, 0, 0x80, 0, 0, 0, 0x10, 0, 0, 0, 0, 14 };
	static const unsigned char fat_e[] = { 0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 2,
		1, 0, 0, 0x0c, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0x10, 0, 0, 0, 0, 14,
		1, 0, 0, 0x0c, 0x80, 0, 0, 2, 0, 0, 0x80, 0, 0, 0, 0x10, 0, 0, 0, 0, 14 };
	static const unsigned char thin_e[] = { 0xcf, 0xfa, 0xed, 0xfe, 0x0c, 0, 0, 1, 2, 0, 0, 0x80 };
	static const unsigned char thin[] = { 0xcf, 0xfa, 0xed, 0xfe, 0x0c, 0, 0, 1, 0, 0, 0, 0 };
	static const unsigned char elf[] = { 0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, 0, 0 };
	lm_run_target t;

	assert_false(lm_macho_has_arm64e(fat_plain, sizeof(fat_plain)));
	assert_true(lm_macho_has_arm64e(fat_e, sizeof(fat_e)));
	/* The second entry cut off: not read past what was given. */
	assert_false(lm_macho_has_arm64e(fat_e, sizeof(fat_e) - 1));
	assert_true(lm_macho_has_arm64e(thin_e, sizeof(thin_e)));
	assert_false(lm_macho_has_arm64e(thin, sizeof(thin)));
	assert_false(lm_macho_has_arm64e(elf, sizeof(elf)));
	assert_false(lm_macho_has_arm64e(fat_e, 4));
	/* As od prints them in the resolver's line. */
	lm_run_target_parse("shim_head=cffaedfe0c00000102000080\n", &t);
	assert_true(t.shim_arm64e);
	lm_run_target_parse("shim_head=7f454c46020101\n", &t);
	assert_false(t.shim_arm64e);
	lm_run_target_parse("shim_head=cffaedfe0c000001020000zz\n", &t);
	assert_false(t.shim_arm64e);
}

/* The children rule's header test (lm_macho_arm64e_only, the shim's macho_arm64e_only on the host):
 * a thin arm64e file, or a universal one whose arm64 slices are all arm64e; CPU_SUBTYPE_ARM64E is
 * 2 under CPU_SUBTYPE_MASK (0xff000000, the pointer-authentication ABI bits). */
static void test_arm64e_only(void **state)
{
	static const unsigned char thin_e[] = { 0xcf, 0xfa, 0xed, 0xfe, 0x0c, 0, 0, 1, 2, 0, 0, 0x80 };
	static const unsigned char thin_e_noabi[] = { 0xcf, 0xfa, 0xed, 0xfe, 0x0c, 0, 0, 1, 2, 0, 0, 0 };
	static const unsigned char thin[] = { 0xcf, 0xfa, 0xed, 0xfe, 0x0c, 0, 0, 1, 0, 0, 0, 0 };
	static const unsigned char thin_x86[] = { 0xcf, 0xfa, 0xed, 0xfe, 0x07, 0, 0, 1, 3, 0, 0, 0 };
	/* fat: arm64e alone; x86_64 + arm64e (Apple's universal tools); arm64 + arm64e (a process
	 * that may run as arm64); x86_64 alone; fat_arch_64 (FAT_MAGIC_64) with arm64e alone. */
	static const unsigned char fat_e[] = { 0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 1,
		1, 0, 0, 0x0c, 0x80, 0, 0, 2, 0, 0, 0x40, 0, 0, 0, 0x10, 0, 0, 0, 0, 14 };
	static const unsigned char fat_x86_e[] = { 0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 2,
		1, 0, 0, 0x07, 0, 0, 0, 3, 0, 0, 0x40, 0, 0, 0, 0x10, 0, 0, 0, 0, 14,
		1, 0, 0, 0x0c, 0x80, 0, 0, 2, 0, 0, 0x80, 0, 0, 0, 0x10, 0, 0, 0, 0, 14 };
	static const unsigned char fat_both[] = { 0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 2,
		1, 0, 0, 0x0c, 0x80, 0, 0, 2, 0, 0, 0x40, 0, 0, 0, 0x10, 0, 0, 0, 0, 14,
		1, 0, 0, 0x0c, 0, 0, 0, 0, 0, 0, 0x80, 0, 0, 0, 0x10, 0, 0, 0, 0, 14 };
	static const unsigned char fat_x86[] = { 0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 1,
		1, 0, 0, 0x07, 0, 0, 0, 3, 0, 0, 0x40, 0, 0, 0, 0x10, 0, 0, 0, 0, 14 };
	static const unsigned char fat64_e[] = { 0xca, 0xfe, 0xba, 0xbf, 0, 0, 0, 1,
		1, 0, 0, 0x0c, 0x80, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0, 0x10, 0,
		0, 0, 0, 14, 0, 0, 0, 0 };
	lm_run_target t;

	(void)state;
	assert_true(lm_macho_arm64e_only(thin_e, sizeof(thin_e)));
	assert_true(lm_macho_arm64e_only(thin_e_noabi, sizeof(thin_e_noabi)));
	assert_false(lm_macho_arm64e_only(thin, sizeof(thin)));
	assert_false(lm_macho_arm64e_only(thin_x86, sizeof(thin_x86)));
	assert_true(lm_macho_arm64e_only(fat_e, sizeof(fat_e)));
	assert_true(lm_macho_arm64e_only(fat_x86_e, sizeof(fat_x86_e)));
	assert_false(lm_macho_arm64e_only(fat_both, sizeof(fat_both)));
	assert_false(lm_macho_arm64e_only(fat_x86, sizeof(fat_x86)));
	assert_true(lm_macho_arm64e_only(fat64_e, sizeof(fat64_e)));
	/* A slice table cut off before its arm64e entry: no arm64 slice seen, not arm64e. */
	assert_false(lm_macho_arm64e_only(fat_x86_e, sizeof(fat_x86_e) - 1));
	assert_false(lm_macho_arm64e_only(thin_e, 11));
	/* As the resolver prints the program's and the interpreter's first bytes. */
	lm_run_target_parse("program=/x/clang\nprogram_head=cffaedfe0c00000102000080\n", &t);
	assert_true(t.program_arm64e);
	assert_false(t.interpreter_arm64e);
	lm_run_target_parse("program=/x/s\ninterpreter=/x/i\ninterpreter_head=cafebabe000000010100000c80000002"
	    "00004000000010000000000e\n", &t);
	assert_false(t.program_arm64e);
	assert_true(t.interpreter_arm64e);
}

/* The host's warning from the header: an arm64e program outside the system folders on a guest whose
 * SIP is not enabled, when the shim has no arm64e slice; not on a SIP-on guest, not with a slice. */
static void test_arm64e_warning(void **state)
{
	lm_guest_facts on = { .os = "Darwin", .sip = "enabled" }, off = { .os = "Darwin", .sip = "disabled" };
	lm_run_target t;
	char msg[8192];

	(void)state;
	lm_run_target_parse("program=/Applications/Xcode.app/bin/clang\nprogram_head=cffaedfe0c00000102000080\n", &t);
	assert_int_equal(lm_sip_warning(&off, "clang", &t, msg, sizeof(msg)), 1);
	assert_string_equal(msg, "clang (/Applications/Xcode.app/bin/clang) is arm64e only (its Mach-O header) and the "
	    "guest's SIP is disabled: dyld loads the shim into it, and the installed shim has no arm64e slice, so dyld "
	    "cannot load it and stops the program (\"inserted dylib could not be loaded\"). Run an arm64 build of it, or "
	    "install a shim with an arm64e slice (a native macOS build).");
	assert_int_equal(lm_sip_warning(&on, "clang", &t, msg, sizeof(msg)), 0);
	t.shim_arm64e = 1;
	assert_int_equal(lm_sip_warning(&off, "clang", &t, msg, sizeof(msg)), 0);
	lm_run_target_parse("program=/x/build.sh\ninterpreter=/x/bash\ninterpreter_head=cffaedfe0c00000102000080\n", &t);
	assert_int_equal(lm_sip_warning(&off, "build.sh", &t, msg, sizeof(msg)), 1);
	lm_assert_contains(msg, "build.sh (/x/build.sh) is a script whose interpreter /x/bash is arm64e only");
}

/* The hardened runtime by the guest's SIP state (Apple Developer Forums thread 757000): with SIP
 * disabled or custom, one line instead of the refusal and the library-validation warning. */
static void test_sip_off_note(void **state)
{
	lm_guest_facts on = { .os = "Darwin", .sip = "enabled" }, off = { .os = "Darwin", .sip = "disabled" };
	lm_guest_facts custom = { .os = "Darwin", .sip = "custom" }, unknown = { .os = "Darwin", .sip = "" };
	lm_run_target t;
	char msg[8192];

	(void)state;
	assert_false(lm_codesign_sip_off(&on));
	assert_false(lm_codesign_sip_off(&unknown));
	assert_true(lm_codesign_sip_off(&off));
	assert_true(lm_codesign_sip_off(&custom));
	lm_run_target_parse("program=/opt/homebrew/bin/ollama\nprogram_codesign=CodeDirectory v=20500 size=1 "
	    "flags=0x10000(runtime) hashes=1+7 location=embedded\n", &t);
	assert_int_equal(lm_codesign_sip_off_note(&on, "ollama", &t, msg, sizeof(msg)), 0);
	assert_int_equal(lm_codesign_sip_off_note(&off, "ollama", &t, msg, sizeof(msg)), 1);
	assert_string_equal(msg, "ollama (/opt/homebrew/bin/ollama) is signed with the hardened runtime "
	    "(flags=0x10000(runtime)) without the entitlement " ALLOW ": this guest's SIP is disabled, and macOS does not "
	    "apply hardened-runtime restrictions with SIP off (an Apple Security Engineer, Apple Developer Forums thread "
	    "757000; Proxyman issue 788 agrees, Bear issue 232 on macOS 10.14 does not), so it is started; the "
	    "activation records will tell whether the shim loaded");
	assert_int_equal(lm_codesign_sip_off_note(&custom, "ollama", &t, msg, sizeof(msg)), 1);
	lm_assert_contains(msg, "this guest's SIP is custom");
	/* Library validation only (the dyld entitlement granted). */
	lm_run_target_parse("program=/x/lv\nprogram_codesign=CodeDirectory v=20500 size=1 flags=0x10000(runtime) "
	    "hashes=1+7 location=embedded\nprogram_codesign=[Key] " ALLOW "\nprogram_codesign=[Value]\n"
	    "program_codesign=[Bool] true\n", &t);
	assert_int_equal(lm_codesign_sip_off_note(&off, "lv", &t, msg, sizeof(msg)), 1);
	lm_assert_contains(msg, "lv (/x/lv) is signed with library validation (flags=0x10000(runtime)) without the "
	    "entitlement " NOLV ": this guest's SIP is disabled");
	lm_run_target_parse("program=/x/plain\n", &t);
	assert_int_equal(lm_codesign_sip_off_note(&off, "plain", &t, msg, sizeof(msg)), 0);
}

static void test_children_policy(void **state)
{
	lm_guest_facts on = { .os = "Darwin", .sip = "enabled" }, off = { .os = "Darwin", .sip = "disabled" };
	lm_guest_facts custom = { .os = "Darwin", .sip = "custom" };
	char why[256];

	assert_int_equal(lm_children_policy(&on, 0, why, sizeof(why)), 1);
	assert_string_equal(why, "guest SIP enabled: protected children purge DYLD_* themselves");
	assert_int_equal(lm_children_policy(&off, 1, why, sizeof(why)), 1);
	assert_string_equal(why, "the installed shim has an arm64e slice: protected children can load it");
	assert_int_equal(lm_children_policy(&off, 0, why, sizeof(why)), 0);
	assert_string_equal(why, "guest SIP disabled and the installed shim has no arm64e slice: protected and arm64e "
	    "children start without it (dyld would stop them), every other child keeps it");
	/* A custom configuration may have dropped the protection that purges DYLD_*: not trusted. */
	assert_int_equal(lm_children_policy(&custom, 0, why, sizeof(why)), 0);
}

static void test_workload_command(void **state)
{
	lm_guest_facts facts = { .os = "Darwin", .home = "/Users/lume" };
	const char *argv[] = { "LUME_METAL_INHERIT=0", "server" };
	lm_profile *profile = NULL;
	lm_shim_env se;
	char *cmd = NULL;

	lm_assert_ok(lm_profile_builtin(&profile, lm_profile_default_name()));
	lm_assert_ok(lm_shim_env_make(&se, &facts, "DYLD_INSERT_LIBRARIES", "LumeMetalShim.dylib", "metal-capabilities",
	    profile));
	lm_assert_ok(lm_shim_env_workload(&se, "1", "guest SIP enabled", "/Users/lume/.local/share/lume-metal/runs/ab"));
	lm_assert_ok(lm_shim_command(&se, LM_SHIM_ALL, argv, 2, &cmd));
	/* Ours first, so that the user's own assignment, later on env's command line, wins. */
	lm_assert_contains(cmd, " 'LUME_METAL_INHERIT=1' 'LUME_METAL_INHERIT_REASON=guest SIP enabled' "
	    "'LUME_METAL_RECORD_DIR=/Users/lume/.local/share/lume-metal/runs/ab' ");
	assert_true(strstr(cmd, "LUME_METAL_RECORD_DIR") < strstr(cmd, "LUME_METAL_INHERIT=0"));
	lm_free(cmd);
	/* What the shim's spawn rule is told of the guest, next to the rest; a SIP state csrutil did
	 * not report is left out. */
	lm_shim_env_guest(&se, "disabled", 0);
	lm_assert_ok(lm_shim_command(&se, LM_SHIM_ALL, argv + 1, 1, &cmd));
	lm_assert_contains(cmd, " 'LUME_METAL_INHERIT_REASON=guest SIP enabled' 'LUME_METAL_GUEST_SIP=disabled' "
	    "'LUME_METAL_SHIM_ARM64E=0' 'LUME_METAL_RECORD_DIR=");
	lm_free(cmd);
	lm_shim_env_guest(&se, "", 1);
	lm_assert_ok(lm_shim_command(&se, LM_SHIM_ALL, argv + 1, 1, &cmd));
	lm_assert_not_contains(cmd, "LUME_METAL_GUEST_SIP");
	lm_assert_contains(cmd, " 'LUME_METAL_SHIM_ARM64E=1' ");
	lm_free(cmd);
	/* Not for the probe: a shim environment without a workload's has none of them. */
	lm_assert_ok(lm_shim_env_make(&se, &facts, "DYLD_INSERT_LIBRARIES", "LumeMetalShim.dylib", "metal-capabilities",
	    profile));
	lm_assert_ok(lm_shim_command(&se, LM_SHIM_ALL, argv + 1, 1, &cmd));
	lm_assert_not_contains(cmd, "LUME_METAL_INHERIT");
	lm_assert_not_contains(cmd, "LUME_METAL_GUEST_SIP");
	lm_assert_not_contains(cmd, "LUME_METAL_SHIM_ARM64E");
	lm_free(cmd);
	lm_profile_free(profile);
}

/* --resign-copy (resign.c): the entitlements file, what the new signature must show, the copies'
 * names and folders. */
static void test_resign(void **state)
{
	static const char resigned[] =
	    "Executable=/Users/lume/.local/share/lume-metal/resigned/x/Resources/ollama\n"
	    "CodeDirectory v=20500 size=1 flags=0x10002(adhoc,runtime) hashes=1+7 location=embedded\n"
	    "Signature=adhoc\n"
	    "TeamIdentifier=not set\n"
	    "[Dict]\n"
	    "\t[Key] com.apple.security.cs.allow-dyld-environment-variables\n\t[Value]\n\t\t[Bool] true\n"
	    "\t[Key] com.apple.security.cs.disable-library-validation\n\t[Value]\n\t\t[Bool] true\n";
	lm_code_signature s;
	char *xml = NULL, name[64], dir[256];

	(void)state;
	lm_assert_ok(lm_resign_entitlements(&xml));
	lm_assert_contains(xml, "<key>com.apple.security.cs.allow-dyld-environment-variables</key>");
	lm_assert_contains(xml, "<key>com.apple.security.cs.disable-library-validation</key>");
	assert_int_equal(lm_test_count(xml, "<true/>"), 2);
	/* What codesign prints of the entitlements file is what the parser takes as granted. */
	parse(&s, xml);
	assert_true(s.allow_dyld_env);
	assert_true(s.disable_library_validation);
	free(xml);

	parse(&s, resigned);
	assert_true(lm_resign_signature_ok(&s));
	assert_false(lm_codesign_ignores_injection(&s));
	assert_false(lm_codesign_validates_libraries(&s));
	parse(&s, hardened); /* the vendor's signature, still there: not re-signed */
	assert_false(lm_resign_signature_ok(&s));
	parse(&s, "CodeDirectory v=20500 size=1 flags=0x2(adhoc) hashes=1+7 location=embedded\n"
	    "[Dict]\n\t[Key] com.apple.security.cs.allow-dyld-environment-variables\n\t[Value]\n\t\t[Bool] true\n"
	    "\t[Key] com.apple.security.cs.disable-library-validation\n\t[Value]\n\t\t[Bool] true\n");
	assert_false(lm_resign_signature_ok(&s)); /* the runtime flag lost */

	lm_assert_ok(lm_resign_name("/Applications/Ollama.app/Contents/Resources/ollama", name, sizeof(name)));
	assert_int_equal(strlen(name), 4 + 16);
	assert_true(strncmp(name, "run-", 4) == 0);
	lm_assert_ok(lm_resign_dir("/Users/lume", name, dir, sizeof(dir)));
	assert_true(strncmp(dir, "/Users/lume/.local/share/lume-metal/resigned/run-", 49) == 0);
	lm_assert_fails(lm_resign_dir("/Users/lume", "../x", dir, sizeof(dir)), LM_EINVALID);
	lm_assert_fails(lm_resign_dir("/Users/lume", ".hidden", dir, sizeof(dir)), LM_EINVALID);
	lm_assert_fails(lm_resign_dir("relative", "x", dir, sizeof(dir)), LM_EINVALID);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hardened),
		cmocka_unit_test(test_entitled),
		cmocka_unit_test(test_not_hardened),
		cmocka_unit_test(test_messages),
		cmocka_unit_test(test_arm64e),
		cmocka_unit_test(test_arm64e_only),
		cmocka_unit_test(test_arm64e_warning),
		cmocka_unit_test(test_sip_off_note),
		cmocka_unit_test(test_children_policy),
		cmocka_unit_test(test_workload_command),
		cmocka_unit_test(test_resign),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
