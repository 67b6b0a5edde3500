/* System Integrity Protection and the shim: the guest's SIP state, and which programs the shim
 * cannot reach.
 *
 * dyld ignores and purges DYLD_* variables in restricted processes: programs SIP protects, under
 * /bin, /sbin, /usr/bin, /usr/sbin, /usr/libexec and /System. A workload that is such a program,
 * or a script whose #! interpreter is one, therefore runs stock however the shim's variables are
 * set. With SIP off dyld honours the variables there, but those programs are arm64e and a
 * cross-built shim has no arm64e slice: dyld cannot load it and terminates the process.
 *
 * arm64e is a property of the file, not of its folder: Apple's arm64e tools also live in Xcode.app
 * and /Library/Developer/CommandLineTools/usr/bin, and dyld terminates them the same way
 * ("terminating because inserted dylib ... could not be loaded", DyldRuntimeState.cpp;
 * rbenv/ruby-build issue 2073). The Mach-O header decides first (lm_macho_arm64e_only), the folder
 * second, as the shim's children rule does (guest/shim).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest_codesign.h"

void lm_sip_status_parse(const char *line, char *out, size_t len)
{
	static const struct {
		const char *text, *word;
	} states[] = {
		{ "enabled", "enabled" }, { "disabled", "disabled" }, { "custom", "custom" },
		{ "unknown (Custom Configuration)", "custom" },
	};
	const char *p = strstr(line, "status: ");
	size_t i;

	out[0] = '\0';
	/* "System Integrity Protection status: enabled." as csrutil says it, or the stored word. */
	p = p != NULL ? p + strlen("status: ") : line;
	for (i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
		size_t n = strlen(states[i].text);
		if (strncmp(p, states[i].text, n) == 0 && (p[n] == '\0' || p[n] == '.')) {
			snprintf(out, len, "%s", states[i].word);
			return;
		}
	}
}

int lm_children_policy(const lm_guest_facts *facts, int shim_arm64e, char *reason, size_t len)
{
	if (strcmp(facts->sip, "enabled") == 0) {
		snprintf(reason, len, "guest SIP enabled: protected children purge DYLD_* themselves");
		return 1;
	}
	if (shim_arm64e) {
		snprintf(reason, len, "the installed shim has an arm64e slice: protected children can load it");
		return 1;
	}
	snprintf(reason, len, "guest SIP %s and the installed shim has no arm64e slice: protected and arm64e children "
	    "start without it (dyld would stop them), every other child keeps it", facts->sip[0] ? facts->sip : "not reported");
	return 0;
}

int lm_sip_protected_path(const char *path)
{
	static const char *const protected_dirs[] = {
		"/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/libexec", "/System",
	};
	size_t i;

	/* The data volume is writable, and mounted below /System. */
	if (strncmp(path, "/System/Volumes/Data/", strlen("/System/Volumes/Data/")) == 0)
		return 0;
	for (i = 0; i < sizeof(protected_dirs) / sizeof(protected_dirs[0]); i++) {
		size_t n = strlen(protected_dirs[i]);
		if (strncmp(path, protected_dirs[i], n) == 0 && path[n] == '/')
			return 1;
	}
	return 0;
}

int lm_sip_warning(const lm_guest_facts *facts, const char *name, const lm_run_target *t, char *buf, size_t len)
{
	char who[3 * PATH_MAX + 64];
	const char *as_given = strlen(name) < 256 ? name : "the program";
	int n;

	buf[0] = '\0';
	/* Only macOS has SIP; a guest that reports no csrutil status and is not Darwin is not one. */
	if (facts->sip[0] == '\0' && strcmp(facts->os, "Darwin") != 0)
		return 0;
	if (lm_sip_protected_path(t->program) || lm_sip_protected_path(t->program_real)) {
		if (t->program_real[0] != '\0' && strcmp(t->program, t->program_real) != 0)
			n = snprintf(who, sizeof(who), "%s is %s, a link to %s,", as_given, t->program, t->program_real);
		else
			n = snprintf(who, sizeof(who), "%s is %s,", as_given, t->program);
	} else if (lm_sip_protected_path(t->interpreter) || lm_sip_protected_path(t->interpreter_real)) {
		n = snprintf(who, sizeof(who), "%s (%s) is a script run by %s,", as_given, t->program, t->interpreter);
	} else if ((t->program_arm64e || t->interpreter_arm64e) && strcmp(facts->sip, "enabled") != 0 && !t->shim_arm64e) {
		if (t->program_arm64e)
			n = snprintf(who, sizeof(who), "%s (%s)", as_given, t->program_real[0] ? t->program_real : t->program);
		else
			n = snprintf(who, sizeof(who), "%s (%s) is a script whose interpreter %s", as_given, t->program,
			    t->interpreter_real[0] ? t->interpreter_real : t->interpreter);
		if (n < 0 || (size_t)n >= sizeof(who))
			snprintf(who, sizeof(who), "%s", as_given);
		snprintf(buf, len, "%s is arm64e only (its Mach-O header) and the guest's SIP is %s: dyld loads the shim "
		    "into it, and the installed shim has no arm64e slice, so dyld cannot load it and stops the program "
		    "(\"inserted dylib could not be loaded\"). Run an arm64 build of it, or install a shim with an arm64e "
		    "slice (a native macOS build).", who, facts->sip[0] ? facts->sip : "not reported");
		return 1;
	} else {
		return 0;
	}
	if (n < 0 || (size_t)n >= sizeof(who))
		snprintf(who, sizeof(who), "%s is", as_given);
	if (strcmp(facts->sip, "disabled") == 0)
		snprintf(buf, len, "%s which System Integrity Protection covers (SIP disabled): dyld then loads the "
		    "shim into it, but protected programs are arm64e, and unless the shim has an arm64e slice (a "
		    "native macOS build) dyld cannot load it and stops the program (\"inserted dylib could not be "
		    "loaded\"). Run the workload with a program or interpreter outside the system directories "
		    "(Homebrew's /opt/homebrew/bin/python3, a venv's bin/python).", who);
	else if (strcmp(facts->sip, "custom") == 0)
		/* csrutil does not say which protections a custom configuration keeps: macOS may purge the
		 * variables (protection on) or load the shim and stop an arm64e program (off), the two cases
		 * lm_children_policy assumes for custom (reference/metal.md, 2026-12-06). */
		snprintf(buf, len, "%s which System Integrity Protection may cover (SIP custom: which protections are "
		    "on is not reported): macOS may purge DYLD_INSERT_LIBRARIES from it, and it runs stock, or load the "
		    "shim into it and stop it (protected programs are arm64e; the shim has no arm64e slice unless it is "
		    "a native macOS build). Run the workload with a program or interpreter outside the system "
		    "directories (Homebrew's /opt/homebrew/bin/python3, a venv's bin/python).", who);
	else
		snprintf(buf, len, "%s which System Integrity Protection protects (SIP %s): macOS removes "
		    "DYLD_INSERT_LIBRARIES from protected programs, so the shim cannot reach the workload and it runs "
		    "stock. Run it with a program or interpreter outside the system directories (Homebrew's "
		    "/opt/homebrew/bin/python3, a venv's bin/python).", who, facts->sip[0] ? facts->sip : "state not reported");
	return 1;
}
