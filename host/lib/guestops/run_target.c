/* What `run` would start in the guest: the program found as env finds it, the file behind it and,
 * for a script, its #! interpreter -- what the SIP warning (sip.c) is decided on. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guestops.h"

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
