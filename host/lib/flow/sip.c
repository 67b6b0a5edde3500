/* System Integrity Protection and the shim: the guest's SIP state, and which programs the shim
 * cannot reach.
 *
 * dyld ignores and purges DYLD_* variables in restricted processes: programs SIP protects, under
 * /bin, /sbin, /usr/bin, /usr/sbin, /usr/libexec and /System. A workload that is such a program,
 * or a script whose #! interpreter is one, therefore runs stock however the shim's variables are
 * set. With SIP off dyld honours the variables there, but those programs are arm64e and a
 * cross-built shim has no arm64e slice: dyld cannot load it and terminates the process.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow_internal.h"

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

void lm_run_target_parse(const char *output, lm_run_target *t)
{
	static const struct {
		const char *key;
		size_t offset;
	} keys[] = {
		{ "program=", offsetof(lm_run_target, program) },
		{ "program_real=", offsetof(lm_run_target, program_real) },
		{ "interpreter=", offsetof(lm_run_target, interpreter) },
		{ "interpreter_real=", offsetof(lm_run_target, interpreter_real) },
	};
	const char *line = output;

	memset(t, 0, sizeof(*t));
	while (line != NULL && *line != '\0') {
		const char *end = strchr(line, '\n');
		size_t n = end != NULL ? (size_t)(end - line) : strlen(line), i;

		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			size_t k = strlen(keys[i].key);
			/* A path that does not fit is not the path: leave it empty rather than cut it. */
			if (n >= k && strncmp(line, keys[i].key, k) == 0 && n - k < PATH_MAX)
				snprintf((char *)t + keys[i].offset, PATH_MAX, "%.*s", (int)(n - k), line + k);
		}
		line = end != NULL ? end + 1 : NULL;
	}
}

/* Run by /bin/sh in the guest with the PATH the workload gets: "$1" is looked up as env's
 * execvp does (a name with a slash as it is, else each PATH entry, an empty one meaning the
 * current directory), then the file behind it and, for a script, its #! interpreter. realpath
 * exists from macOS 13 on; without it the paths are taken as they are. No output: not found
 * (env will say so). */
static const char resolve_script[] =
	"p=$1\n"
	"case $p in\n"
	"*/*) ;;\n"
	"*) p=; rest=$PATH:\n"
	"   while [ -n \"$rest\" ]; do\n"
	"     d=${rest%%:*}; rest=${rest#*:}\n"
	"     if [ -f \"${d:-.}/$1\" ] && [ -x \"${d:-.}/$1\" ]; then p=${d:-.}/$1; break; fi\n"
	"   done ;;\n"
	"esac\n"
	"[ -n \"$p\" ] && [ -f \"$p\" ] || exit 0\n"
	"real() { realpath -- \"$1\" 2>/dev/null || printf '%s\\n' \"$1\"; }\n"
	"printf 'program=%s\\n' \"$p\"\n"
	"printf 'program_real=%s\\n' \"$(real \"$p\")\"\n"
	"[ \"$(head -c 2 -- \"$p\" 2>/dev/null)\" = '#!' ] || exit 0\n"
	"IFS= read -r l < \"$p\" || :\n"
	"l=${l#??}\n"
	"while :; do case $l in ' '*|'\t'*) l=${l#?} ;; *) break ;; esac; done\n"
	"i=${l%%[ \t]*}\n"
	"[ -n \"$i\" ] || exit 0\n"
	"printf 'interpreter=%s\\n' \"$i\"\n"
	"printf 'interpreter_real=%s\\n' \"$(real \"$i\")\"\n";

int lm_guest_run_target(lm_ssh *ssh, const lm_shim_env *se, const char *const *argv, size_t argc,
    lm_run_target *t)
{
	const char *args[6];
	char *cmd = NULL, *out = NULL, *err = NULL;
	size_t i, n = 0;
	int status = 0, rc;

	memset(t, 0, sizeof(*t));
	/* env takes leading NAME=VALUE words as assignments; the program is the first other word. A
	 * PATH among them is the one the program is looked up in. */
	for (i = 0; i < argc && strchr(argv[i], '=') != NULL; i++) {
		if (strncmp(argv[i], "PATH=", 5) == 0)
			args[0] = argv[i], n = 1;
	}
	if (i == argc)
		return 0;
	args[n++] = "/bin/sh";
	args[n++] = "-c";
	args[n++] = resolve_script;
	args[n++] = "lume-metal-resolve";
	args[n++] = argv[i];
	if ((rc = lm_shim_command(se, LM_SHIM_PATH_ONLY, args, n, &cmd)) < 0)
		return rc;
	rc = lm_ssh_exec_capture(ssh, cmd, 4 * PATH_MAX + 256, &out, &err, &status);
	free(cmd);
	if (rc == 0 && status != 0)
		rc = lm_error_set(LM_EREMOTE, "looking up %s in the guest failed (exit %d): %s", argv[i], status,
		    err != NULL && err[0] ? err : "no output");
	if (rc == 0)
		lm_run_target_parse(out, t);
	lm_free(out);
	lm_free(err);
	return rc;
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
	else
		snprintf(buf, len, "%s which System Integrity Protection protects (SIP %s): macOS removes "
		    "DYLD_INSERT_LIBRARIES from protected programs, so the shim cannot reach the workload and it runs "
		    "stock. Run it with a program or interpreter outside the system directories (Homebrew's "
		    "/opt/homebrew/bin/python3, a venv's bin/python).", who, facts->sip[0] ? facts->sip : "state not reported");
	return 1;
}
