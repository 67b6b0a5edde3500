/* What `run` would start in the guest: the program found as env finds it, the file behind it and,
 * for a script, its #! interpreter -- what the SIP warning (sip.c) is decided on -- with what
 * codesign says of each (codesign.c), the executables shipped beside it, and the first bytes of the
 * installed shim (its slices); with --resign-copy, the program swapped for its re-signed copy
 * (resign.c makes it). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest_codesign.h"
#include "guest_shim.h"
#include "text.h"
#include "ssh_deadline.h"

/* od's hexadecimal bytes, run together, into head: how many (0 for anything else). */
static size_t head_bytes(const char *hex, size_t n, unsigned char head[512])
{
	size_t len = 0;

	for (; n >= 2 && len < 512; hex += 2, n -= 2) {
		char pair[3] = { hex[0], hex[1], '\0' }, *end;
		unsigned long v = strtoul(pair, &end, 16);

		if (*end != '\0')
			return 0;
		head[len++] = (unsigned char)v;
	}
	return len;
}

/* The Mach-O header decides: the shim's slices, a program's arm64e. */
static int head_test(const char *hex, size_t n, int (*test)(const unsigned char *, size_t))
{
	unsigned char head[512];
	size_t len = head_bytes(hex, n, head);

	return test(head, len);
}

void lm_run_target_parse(const char *output, lm_run_target *t)
{
	/* A path (kept whole), or one of codesign's lines about a file (parsed as they come). */
	static const struct {
		const char *key;
		size_t offset;
		int codesign;
	} keys[] = {
		{ "program=", offsetof(lm_run_target, program), 0 },
		{ "program_real=", offsetof(lm_run_target, program_real), 0 },
		{ "interpreter=", offsetof(lm_run_target, interpreter), 0 },
		{ "interpreter_real=", offsetof(lm_run_target, interpreter_real), 0 },
		{ "program_codesign=", offsetof(lm_run_target, program_sig), 1 },
		{ "interpreter_codesign=", offsetof(lm_run_target, interpreter_sig), 1 },
	};
	const char *line;
	size_t n, i;
	lm_scan lines;

	memset(t, 0, sizeof(*t));
	lm_scan_init(&lines, output, strlen(output));
	while (lm_scan_line(&lines, &line, &n) != 0) {

		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			size_t k = strlen(keys[i].key);

			if (n < k || strncmp(line, keys[i].key, k) != 0)
				continue;
			if (keys[i].codesign)
				lm_codesign_parse_line((lm_code_signature *)((char *)t + keys[i].offset), line + k, n - k);
			else if (n - k < PATH_MAX) /* a path that does not fit is not the path: left empty, not cut */
				snprintf((char *)t + keys[i].offset, PATH_MAX, "%.*s", (int)(n - k), line + k);
		}
		if (n >= 10 && strncmp(line, "shim_head=", 10) == 0)
			t->shim_arm64e = head_test(line + 10, n - 10, lm_macho_has_arm64e);
		else if (n >= 13 && strncmp(line, "program_head=", 13) == 0)
			t->program_arm64e = head_test(line + 13, n - 13, lm_macho_arm64e_only);
		else if (n >= 17 && strncmp(line, "interpreter_head=", 17) == 0)
			t->interpreter_arm64e = head_test(line + 17, n - 17, lm_macho_arm64e_only);
		/* The executables beside it: a path starts one, its codesign lines follow. */
		if (n > 8 && strncmp(line, "sibling=", 8) == 0 && t->nsiblings < LM_RUN_SIBLINGS && n - 8 < sizeof(t->siblings[0].path)) {
			snprintf(t->siblings[t->nsiblings].path, sizeof(t->siblings[0].path), "%.*s", (int)(n - 8), line + 8);
			t->nsiblings++;
		} else if (n > 17 && strncmp(line, "sibling_codesign=", 17) == 0 && t->nsiblings > 0) {
			lm_codesign_parse_line(&t->siblings[t->nsiblings - 1].sig, line + 17, n - 17);
		} else if (n >= 13 && strncmp(line, "sibling_more=", 13) == 0) {
			t->siblings_more = 1;
		}
	}
}

/* Run by /bin/sh in the guest with the PATH the workload gets, or with the session's when the
 * workload sets its own (then in $LM_LOOKUP_PATH): "$1" is looked up as env's execvp does (a name
 * with a slash as it is, else each PATH entry, an empty one meaning the current directory), then
 * the file behind it and, for a script, its #! interpreter, each with what codesign says of it
 * (stderr and stdout, one prefixed line each; codesign stays the system's, found on the session's
 * PATH). First, the first 512 bytes of the shim ("$2") in hexadecimal: its slices; the file's and
 * the interpreter's first 512 bytes too (an arm64e program, sip.c). realpath
 * exists from macOS 13 on; without it the paths are taken as they are. No program line: not found
 * (env will say so). Then the executables shipped beside the file (its directory; an app bundle's
 * Contents/MacOS and Contents/Resources; none in a directory SIP protects), at most LM_RUN_SIBLINGS,
 * each with what codesign says of it: programs the workload may start by path. */
#define LM_STR2(x) #x
#define LM_STR(x) LM_STR2(x)
static const char resolve_script[] =
	"printf 'shim_head=%s\\n' \"$(od -An -v -tx1 -N 512 \"$2\" 2>/dev/null | tr -d ' \\n')\"\n"
	"p=$1\n"
	"case $p in\n"
	"*/*) ;;\n"
	"*) p=; rest=${LM_LOOKUP_PATH-$PATH}:\n"
	"   while [ -n \"$rest\" ]; do\n"
	"     d=${rest%%:*}; rest=${rest#*:}\n"
	"     if [ -f \"${d:-.}/$1\" ] && [ -x \"${d:-.}/$1\" ]; then p=${d:-.}/$1; break; fi\n"
	"   done ;;\n"
	"esac\n"
	"[ -n \"$p\" ] && [ -f \"$p\" ] || exit 0\n"
	"real() { realpath -- \"$1\" 2>/dev/null || printf '%s\\n' \"$1\"; }\n"
	"sig() { command -v codesign >/dev/null 2>&1 || return 0; codesign -dv --entitlements - \"$2\" 2>&1 |"
	" sed \"s/^/$1_codesign=/\"; }\n"
	"printf 'program=%s\\n' \"$p\"\n"
	"r=$(real \"$p\")\n"
	"printf 'program_real=%s\\n' \"$r\"\n"
	"printf 'program_head=%s\\n' \"$(od -An -v -tx1 -N 512 \"$r\" 2>/dev/null | tr -d ' \\n')\"\n"
	"sig program \"$r\"\n"
	"sib() { for f in \"$1\"/*; do [ -f \"$f\" ] && [ -x \"$f\" ] && [ \"$f\" != \"$r\" ] || continue; n=$((n + 1));"
	" [ $n -le " LM_STR(LM_RUN_SIBLINGS) " ] || { echo sibling_more=1; return; }; printf 'sibling=%s\\n' \"$f\";"
	" sig sibling \"$f\"; done; }\n"
	"d=${r%/*} n=0\n"
	"case $d in\n"
	/* A program whose real path is in a shared bin directory was not shipped with what lies beside
	 * it there (Homebrew links its programs into /opt/homebrew/bin from their kegs, whose real
	 * directory is checked instead). */
	"/bin|/sbin|/usr/bin|/usr/sbin|/usr/libexec|/usr/libexec/*|/System/*|/opt/homebrew/bin|/usr/local/bin|/opt/local/bin) ;;\n"
	"*.app/Contents/MacOS|*.app/Contents/Resources) sib \"${d%/*}/MacOS\"; sib \"${d%/*}/Resources\" ;;\n"
	"*) sib \"$d\" ;;\n"
	"esac\n"
	"[ \"$(head -c 2 -- \"$p\" 2>/dev/null)\" = '#!' ] || exit 0\n"
	"IFS= read -r l < \"$p\" || :\n"
	"l=${l#??}\n"
	"while :; do case $l in ' '*|'\t'*) l=${l#?} ;; *) break ;; esac; done\n"
	"i=${l%%[ \t]*}\n"
	"[ -n \"$i\" ] || exit 0\n"
	"printf 'interpreter=%s\\n' \"$i\"\n"
	"r=$(real \"$i\")\n"
	"printf 'interpreter_real=%s\\n' \"$r\"\n"
	"printf 'interpreter_head=%s\\n' \"$(od -An -v -tx1 -N 512 \"$r\" 2>/dev/null | tr -d ' \\n')\"\n"
	"sig interpreter \"$r\"\n";

int lm_guest_run_target(lm_ssh *ssh, const lm_shim_env *se, const char *const *argv, size_t argc,
    lm_run_target *t)
{
	const char *args[7];
	char lookup[PATH_MAX + 32];
	char *cmd = NULL, *out = NULL, *err = NULL;
	size_t i, n = 0;
	int status = 0, rc;

	memset(t, 0, sizeof(*t));
	/* env takes leading NAME=VALUE words as assignments; the program is the first other word. A
	 * PATH among them is the one the program is looked up in (the script's own stays the
	 * session's, where codesign is). */
	for (i = 0; i < argc && strchr(argv[i], '=') != NULL; i++) {
		if (strncmp(argv[i], "PATH=", 5) == 0) {
			if (lm_text_format(lookup, sizeof(lookup), "LM_LOOKUP_PATH=%s", argv[i] + 5) < 0)
				return lm_error_set(LM_EINVALID, "the workload's PATH is longer than %d bytes", PATH_MAX);
			args[0] = lookup, n = 1;
		}
	}
	if (i == argc)
		return 0;
	args[n++] = "/bin/sh";
	args[n++] = "-c";
	args[n++] = resolve_script;
	args[n++] = "lume-metal-resolve";
	args[n++] = argv[i];
	args[n++] = se->shim_path;
	if ((rc = lm_shim_command(se, LM_SHIM_PATH_ONLY, args, n, &cmd)) < 0)
		return rc;
	/* Codesign outputs (entitlements included) of the program, its interpreter and its siblings. */
	rc = lm_ssh_ask(ssh, cmd, 4 * PATH_MAX + 192 * 1024, &out, &err, &status);
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

size_t lm_run_program_index(const char *const *argv, size_t argc, int *own_inherit)
{
	size_t i;

	*own_inherit = 0;
	for (i = 0; i < argc && strchr(argv[i], '=') != NULL; i++)
		if (strncmp(argv[i], "LUME_METAL_INHERIT=", strlen("LUME_METAL_INHERIT=")) == 0)
			*own_inherit = 1;
	return i;
}

int lm_run_argv_program(const char *const *argv, size_t argc, const char *program, const char *const **out)
{
	const char **v;
	int own;
	size_t i = lm_run_program_index(argv, argc, &own);

	*out = argv;
	if (program == NULL || program[0] == '\0' || i >= argc)
		return 0;
	if ((v = malloc(argc * sizeof(*v))) == NULL)
		return lm_error_nomem();
	memcpy(v, argv, argc * sizeof(*v));
	v[i] = program;
	*out = v;
	return 0;
}

/* The program, or an executable shipped beside it, that dyld would not give the shim. */
static int needs_resign(const lm_run_target *t)
{
	if (lm_codesign_ignores_injection(&t->program_sig) || lm_codesign_validates_libraries(&t->program_sig))
		return 1;
	for (size_t i = 0; i < t->nsiblings; i++)
		if (lm_codesign_ignores_injection(&t->siblings[i].sig) || lm_codesign_validates_libraries(&t->siblings[i].sig))
			return 1;
	return 0;
}

int lm_guest_resign_workload(lm_ssh *ssh, const lm_shim_env *se, const char *home, const char *name,
    const char *const *argv, size_t argc, lm_run_target *t, lm_resign_copy *c)
{
	const char *program = t->program_real[0] ? t->program_real : t->program;
	const char *const *v = NULL;
	char own_name[64];
	int rc;

	memset(c, 0, sizeof(*c));
	if (!needs_resign(t)) {
		lm_text_format_cut(c->said, sizeof(c->said), "neither %s nor an executable shipped beside it keeps the shim "
		    "out: the original runs", program);
		return 0;
	}
	if (t->interpreter[0] != '\0')
		return lm_error_set(LM_EHARDENED, "%s is a script: a re-signed copy is made of a program, not of a "
		    "script's interpreter", t->program);
	if (name == NULL) {
		if ((rc = lm_resign_name(program, own_name, sizeof(own_name))) < 0)
			return rc;
		name = own_name;
	}
	if ((rc = lm_guest_resign_copy(ssh, home, name, program, c)) < 0)
		return rc;
	if (c->reused)
		lm_text_format_cut(c->said, sizeof(c->said), "runs the re-signed copy %s (made before from the same %s)",
		    c->program, program);
	else
		lm_text_format_cut(c->said, sizeof(c->said), "runs a re-signed copy: %s, %zu file%s re-signed ad hoc with the "
		    "dyld entitlements (the original is untouched)", c->program, c->nsigned, c->nsigned == 1 ? "" : "s");
	/* The copy looked at as the original was: the checks that follow are the copy's. */
	if ((rc = lm_run_argv_program(argv, argc, c->program, &v)) < 0)
		return rc;
	rc = lm_guest_run_target(ssh, se, v, argc, t);
	if (v != argv)
		free((void *)v);
	return rc;
}
