/* Code signatures and the shim: what `codesign -dv --entitlements -` says about the program `run`
 * or `agent install` would start (and a script's interpreter), and what dyld decides from it.
 *
 * dyld ignores DYLD_* variables in a process signed with the hardened runtime (flags contain
 * `runtime`) unless its entitlements grant com.apple.security.cs.allow-dyld-environment-variables:
 * the shim never loads and the workload runs stock -- whatever `enable` verified on the probe.
 * With library validation (the hardened runtime without
 * com.apple.security.cs.disable-library-validation, or the `library-validation` flag) dyld also
 * refuses a library signed by another team, which the shim is. On a guest whose SIP is enabled
 * (or not reported: enabled is macOS's default) the first is refused before the workload starts
 * and the second is warned about (docs/guest.md).
 *
 * With SIP disabled or custom, neither: "When you turn SIP Off, Hardened Runtime protections are
 * no longer applied" (an Apple Security Engineer, Apple Developer Forums thread 757000), and a
 * field report agrees (Proxyman issue 788); one from macOS 10.14 does not (Bear issue 232: the
 * hardened runtime still applied with SIP off). The sources disagree, so the workload is started
 * with one line saying so, and its activation records decide afterwards whether the shim loaded.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest_codesign.h"
#include "ssh_deadline.h"
#include "text.h"

#define ENT_ALLOW_DYLD "com.apple.security.cs.allow-dyld-environment-variables"
#define ENT_DISABLE_LV "com.apple.security.cs.disable-library-validation"

enum { KEY_NONE = 0, KEY_ALLOW_DYLD, KEY_DISABLE_LV, KEY_OTHER };

static const char *skip_space(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

static const char *find_in(const char *p, const char *end, const char *what)
{
	size_t n = strlen(what);

	for (; p + n <= end; p++)
		if (memcmp(p, what, n) == 0)
			return p;
	return NULL;
}

static int has_word(const char *p, const char *end, const char *word)
{
	return find_in(p, end, word) != NULL;
}

/* The flags' words between the parentheses, each a whole word: "runtime" is not "runtime-x". */
static int flag_word(const char *words, const char *word)
{
	size_t n = strlen(word);
	const char *p;

	for (p = words; (p = strstr(p, word)) != NULL; p += n)
		if ((p == words || p[-1] == '(' || p[-1] == ',') && (p[n] == ')' || p[n] == ','))
			return 1;
	return 0;
}

/* flags=0xHEX(word,word) on the CodeDirectory line. The bits are what count when the words are
 * missing: 0x10000 runtime, 0x2000 library-validation. */
static void parse_flags(lm_code_signature *s, const char *p, const char *end)
{
	const char *f = find_in(p, end, "flags=0x"), *q;
	unsigned long bits;
	size_t n;

	if (f == NULL)
		return;
	f += strlen("flags=");
	for (q = f; q < end && *q != ' ' && *q != '\t'; q++)
		;
	n = (size_t)(q - f) < sizeof(s->flags) ? (size_t)(q - f) : sizeof(s->flags) - 1;
	memcpy(s->flags, f, n);
	s->flags[n] = '\0';
	bits = strtoul(s->flags, NULL, 16);
	s->hardened = (bits & 0x10000UL) != 0 || flag_word(s->flags, "runtime");
	s->library_validation = (bits & 0x2000UL) != 0 || flag_word(s->flags, "library-validation");
}

static int key_of(const char *p, const char *end)
{
	if (has_word(p, end, ENT_ALLOW_DYLD))
		return KEY_ALLOW_DYLD;
	if (has_word(p, end, ENT_DISABLE_LV))
		return KEY_DISABLE_LV;
	return KEY_OTHER;
}

static void set_value(lm_code_signature *s, int on)
{
	if (s->pending_key == KEY_ALLOW_DYLD)
		s->allow_dyld_env = on;
	else if (s->pending_key == KEY_DISABLE_LV)
		s->disable_library_validation = on;
	s->pending_key = KEY_NONE;
}

void lm_codesign_parse_line(lm_code_signature *s, const char *line, size_t n)
{
	const char *end = line + n, *p = skip_space(line, end), *k;

	s->seen = 1;
	if (has_word(p, end, "code object is not signed at all")) {
		s->unsigned_ = 1;
		return;
	}
	if (n >= 14 && strncmp(p, "CodeDirectory ", 14) == 0) {
		parse_flags(s, p, end);
		return;
	}
	/* Entitlements, as codesign prints them since macOS 12 ("[Key] NAME", "[Value]", "[Bool]
	 * true", one per line) or as XML with --xml or before ("<key>NAME</key>" then "<true/>",
	 * on one line or several). */
	if ((size_t)(end - p) >= 6 && strncmp(p, "[Key] ", 6) == 0) {
		s->pending_key = key_of(p + 6, end);
		return;
	}
	while ((k = find_in(p, end, "<key>")) != NULL) {
		const char *close = find_in(k, end, "</key>");

		if (close == NULL)
			return;
		s->pending_key = key_of(k + 5, close);
		p = skip_space(close + 6, end);
		if (p < end) {
			if (find_in(p, end, "<true/>") == p)
				set_value(s, 1);
			else if (find_in(p, end, "<false/>") == p)
				set_value(s, 0);
		}
	}
	if (s->pending_key == KEY_NONE)
		return;
	if (find_in(p, end, "[Bool] true") == p || find_in(p, end, "<true/>") == p)
		set_value(s, 1);
	else if (find_in(p, end, "[Bool] false") == p || find_in(p, end, "<false/>") == p)
		set_value(s, 0);
	else if (p < end && find_in(p, end, "[Value]") != p)
		s->pending_key = KEY_NONE; /* a value of another type: not a grant */
}

int lm_codesign_ignores_injection(const lm_code_signature *s)
{
	return s->seen && !s->unsigned_ && s->hardened && !s->allow_dyld_env;
}

int lm_codesign_validates_libraries(const lm_code_signature *s)
{
	return s->seen && !s->unsigned_ && !s->disable_library_validation && (s->hardened || s->library_validation);
}

/* "NAME is PATH," or "NAME (PATH) is a script run by INTERP," -- as sip.c says it. */
static const lm_code_signature *culprit(const char *name, const lm_run_target *t, int (*test)(const lm_code_signature *),
    char *who, size_t len)
{
	const char *as_given = strlen(name) < 256 ? name : "the program";
	const char *program = t->program_real[0] ? t->program_real : t->program;
	const char *interp = t->interpreter_real[0] ? t->interpreter_real : t->interpreter;
	int n;

	if (test(&t->program_sig)) {
		n = snprintf(who, len, "%s (%s)", as_given, program);
		if (n < 0 || (size_t)n >= len)
			snprintf(who, len, "%s", as_given);
		return &t->program_sig;
	}
	if (t->interpreter[0] != '\0' && test(&t->interpreter_sig)) {
		n = snprintf(who, len, "%s (%s) is a script whose interpreter %s", as_given, t->program, interp);
		if (n < 0 || (size_t)n >= len)
			snprintf(who, len, "%s is a script whose interpreter", as_given);
		return &t->interpreter_sig;
	}
	return NULL;
}

/* 1 when test picks t's program or its script's interpreter. */
static int culprit_any(const lm_run_target *t, int (*test)(const lm_code_signature *))
{
	return test(&t->program_sig) || (t->interpreter[0] != '\0' && test(&t->interpreter_sig));
}

/* "WHO is signed with WHAT (flags=F)REST" for the first of t's files that test picks; 0 for none. */
static int judge(const char *name, const lm_run_target *t, int (*test)(const lm_code_signature *), const char *what,
    const char *rest, char *buf, size_t len)
{
	char who[3 * PATH_MAX + 64];
	const lm_code_signature *s = culprit(name, t, test, who, sizeof(who));

	buf[0] = '\0';
	if (s == NULL)
		return 0;
	snprintf(buf, len, "%s is signed with %s (flags=%s)%s", who, what, s->flags[0] ? s->flags : "not shown", rest);
	return 1;
}

int lm_codesign_refusal(const char *name, const lm_run_target *t, char *buf, size_t len)
{
	return judge(name, t, lm_codesign_ignores_injection, "the hardened runtime", " without the entitlement "
	    ENT_ALLOW_DYLD ": dyld ignores DYLD_INSERT_LIBRARIES in it, so the shim cannot load and it would run "
	    "stock. Nothing was started", buf, len);
}

int lm_codesign_warning(const char *name, const lm_run_target *t, char *buf, size_t len)
{
	return judge(name, t, lm_codesign_validates_libraries, "library validation", " and without the entitlement "
	    ENT_DISABLE_LV ": dyld refuses libraries signed by another team, as the shim is, unless the program "
	    "is re-signed with that entitlement", buf, len);
}

int lm_codesign_sip_off(const lm_guest_facts *facts)
{
	return strcmp(facts->sip, "disabled") == 0 || strcmp(facts->sip, "custom") == 0;
}

int lm_codesign_sip_off_note(const lm_guest_facts *facts, const char *name, const lm_run_target *t, char *buf,
    size_t len)
{
	char rest[512];
	int hardened = culprit_any(t, lm_codesign_ignores_injection);

	buf[0] = '\0';
	if (!lm_codesign_sip_off(facts))
		return 0;
	snprintf(rest, sizeof(rest), " without the entitlement %s: this guest's SIP is %s, and macOS does not apply "
	    "hardened-runtime restrictions with SIP off (an Apple Security Engineer, Apple Developer Forums thread "
	    "757000; Proxyman issue 788 agrees, Bear issue 232 on macOS 10.14 does not), so it is started; the "
	    "activation records will tell whether the shim loaded", hardened ? ENT_ALLOW_DYLD : ENT_DISABLE_LV,
	    facts->sip);
	if (hardened)
		return judge(name, t, lm_codesign_ignores_injection, "the hardened runtime", rest, buf, len);
	return judge(name, t, lm_codesign_validates_libraries, "library validation", rest, buf, len);
}

int lm_codesign_sibling_warning(const lm_run_target *t, size_t i, char *buf, size_t len)
{
	const lm_run_sibling *s = &t->siblings[i];
	const char *base = strrchr(s->path, '/') != NULL ? strrchr(s->path, '/') + 1 : s->path;
	const char *program = t->program_real[0] ? t->program_real : t->program;
	const char *flags = s->sig.flags[0] ? s->sig.flags : "not shown";

	buf[0] = '\0';
	if (lm_codesign_ignores_injection(&s->sig))
		snprintf(buf, len, "%s (%s), shipped beside %s, is signed with the hardened runtime (flags=%s) without the "
		    "entitlement " ENT_ALLOW_DYLD ": if the workload starts it, it runs stock (dyld ignores "
		    "DYLD_INSERT_LIBRARIES in it)", base, s->path, program, flags);
	else if (lm_codesign_validates_libraries(&s->sig))
		snprintf(buf, len, "%s (%s), shipped beside %s, is signed with library validation (flags=%s) without the "
		    "entitlement " ENT_DISABLE_LV ": if the workload starts it, library validation refuses the shim and "
		    "it runs stock", base, s->path, program, flags);
	return buf[0] != '\0';
}

/* Each file's codesign output after its own "file=" line; codesign is the system's, on the
 * session's PATH (none: every file unseen). */
static const char sign_script[] =
	"command -v codesign >/dev/null 2>&1 || exit 0\n"
	"for f; do printf 'file=%s\\n' \"$f\"; codesign -dv --entitlements - \"$f\" 2>&1 | sed 's/^/codesign=/'; done\n";

int lm_guest_codesign(lm_ssh *ssh, const char *const *paths, size_t n, lm_code_signature *sigs)
{
	const char *argv[4 + LM_CODESIGN_MAX_FILES] = { "/bin/sh", "-c", sign_script };
	const char *line;
	char *out = NULL, *err = NULL;
	size_t i, at = 0, len;
	lm_scan lines;
	int rc, status = 0;

	if (n > LM_CODESIGN_MAX_FILES)
		return lm_error_set(LM_EINVALID, "lm_guest_codesign: at most %d files", LM_CODESIGN_MAX_FILES);
	memset(sigs, 0, n * sizeof(*sigs));
	argv[3] = "lume-metal-codesign";
	for (i = 0; i < n; i++) {
		if (paths[i][0] != '/' || strchr(paths[i], '\n') != NULL)
			return lm_error_set(LM_EINVALID, "lm_guest_codesign: '%s' is not an absolute path on one line", paths[i]);
		argv[4 + i] = paths[i];
	}
	if (n == 0)
		return 0;
	/* Straight to the session: launchd.c's runner would make a circle of these files. */
	if ((rc = lm_ssh_ask_argv(ssh, argv, 4 + n, 64 * 1024, &out, &err, &status)) < 0)
		return rc;
	lm_free(err);
	lm_scan_init(&lines, out, strlen(out));
	for (i = 0; lm_scan_line(&lines, &line, &len) != 0;) {
		if (len >= 5 && strncmp(line, "file=", 5) == 0) {
			if (i == n)
				break; /* a file more than were asked about: not the script's */
			at = i++;
		} else if (i > 0 && len >= 9 && strncmp(line, "codesign=", 9) == 0)
			lm_codesign_parse_line(&sigs[at], line + 9, len - 9);
	}
	lm_free(out);
	return 0;
}

/* A Mach-O header's arm64e: CPU_TYPE_ARM64 (0x0100000c) with subtype CPU_SUBTYPE_ARM64E (2) under
 * the capability bits (CPU_SUBTYPE_MASK, 0xff000000: the pointer-authentication ABI version;
 * <mach/machine.h>, reference metal.md 2026-12-06). */
static int arm64e(uint32_t cputype, uint32_t cpusubtype)
{
	return cputype == 0x0100000cU && (cpusubtype & 0x00ffffffU) == 2;
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

int lm_macho_has_arm64e(const unsigned char *head, size_t len)
{
	uint32_t magic, n, i;
	size_t entry;

	if (len < 8)
		return 0;
	magic = be32(head);
	if (magic == 0xcafebabeU || magic == 0xcafebabfU) { /* fat, fat_arch or fat_arch_64 entries */
		entry = magic == 0xcafebabeU ? 20 : 32;
		n = be32(head + 4);
		for (i = 0; i < n && 8 + (i + 1) * entry <= len; i++)
			if (arm64e(be32(head + 8 + i * entry), be32(head + 8 + i * entry + 4)))
				return 1;
		return 0;
	}
	if (le32(head) == 0xfeedfacfU && len >= 12) /* thin 64-bit, little-endian */
		return arm64e(le32(head + 4), le32(head + 8));
	return 0;
}

/* The shim's rule (guest/shim, macho_arm64e_only) on the host: dyld terminates an arm64e process
 * whose inserted library has no arm64e slice, whatever folder the file is in. */
int lm_macho_arm64e_only(const unsigned char *head, size_t len)
{
	uint32_t magic, n, i, arm64 = 0;
	size_t entry;

	if (len < 12)
		return 0;
	if (le32(head) == 0xfeedfacfU)
		return arm64e(le32(head + 4), le32(head + 8));
	magic = be32(head);
	if (magic != 0xcafebabeU && magic != 0xcafebabfU)
		return 0;
	entry = magic == 0xcafebabeU ? 20 : 32;
	n = be32(head + 4);
	for (i = 0; i < n && 8 + (i + 1) * (size_t)entry <= len; i++) {
		const unsigned char *a = head + 8 + i * entry;

		if (be32(a) != 0x0100000cU)
			continue;
		if (!arm64e(be32(a), be32(a + 4)))
			return 0;
		arm64++;
	}
	return arm64 > 0;
}
