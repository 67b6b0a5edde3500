/* --resign-copy (issue 34): a program dyld would not give the shim, run as a re-signed copy.
 *
 * dyld ignores DYLD_* in a process signed with the hardened runtime without
 * com.apple.security.cs.allow-dyld-environment-variables, and under library validation skips an
 * inserted library another team signed (reference/metal.md, "Corrections and additions
 * (2026-12-02)"). What users do: copy the executables out (re-signing inside an app bundle breaks
 * its seal) and re-sign them ad hoc with `codesign --force --sign - --options runtime
 * --entitlements E.plist FILE`, E granting allow-dyld-environment-variables and
 * disable-library-validation: the runtime flag stays and the shim gets in ("adhoc,runtime").
 *
 * The copy is the program's own directory (for an app bundle, Contents/MacOS and
 * Contents/Resources), layout kept, so that a program that starts its sibling by path beside
 * itself (Ollama's `ollama` and its `llama-server`) starts the copy's; it lives in
 * ~/.local/share/lume-metal/resigned/NAME with a marker naming the original and its SHA-256, is
 * made again when that changes, and is removed by `agent remove` and `rollback`. The original is
 * only ever read. Every copied file that codesign can display (every arm64 Mach-O is signed, at
 * least by the linker) is re-signed, then displayed again and checked here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lm_plist_api.h" /* libplist, across its versions */

#include "guest_bundle.h"
#include "guest_codesign.h"
#include "path.h"
#include "sha256.h"
#include "ssh_deadline.h"
#include "str.h"
#include "text.h"

#define ENT_ALLOW_DYLD "com.apple.security.cs.allow-dyld-environment-variables"
#define ENT_DISABLE_LV "com.apple.security.cs.disable-library-validation"
#define MARKER ".lume-metal-copy"
/* What a copy may hold: a program's own directory, not a disk. */
#define COPY_MAX_FILES 4096
#define COPY_MAX_KIB (16LL * 1024 * 1024)

/* Run by /bin/sh in the guest: "$1" the original, "$2" the copy's folder, "$3" the entitlements
 * (XML), "$4" and "$5" the most files and KiB a copy may hold. Prints copy=PATH (the program's
 * copy) and reused=0|1, then for each re-signed file signed=FILE and its codesign lines
 * (codesign=...); or error=WHY. Exits 0 either way; the marker is written last, so that a copy
 * half made is made again. */
static const char copy_script[] =
	"set -u\n"
	"p=$1 dest=$2 ents=$3 maxn=$4 maxk=$5\n"
	"fail() { printf 'error=%s\\n' \"$*\"; exit 0; }\n"
	"[ -f \"$p\" ] || fail \"$p is not a file\"\n"
	"sha=$(shasum -a 256 \"$p\" 2>/dev/null | cut -d ' ' -f 1)\n"
	"[ -n \"$sha\" ] || fail \"shasum could not read $p\"\n"
	"d=${p%/*} b=${p##*/}\n"
	"case $d in\n"
	"*.app/Contents/MacOS|*.app/Contents/Resources)\n"
	"  c=${d%/*}; a=${c%/Contents}; top=${a##*/}/Contents; at=$top/${d##*/}/$b; app=1 ;;\n"
	"*) c=$d; top=${d##*/}; at=$top/$b; app=0 ;;\n"
	"esac\n"
	"want=\"sha256=$sha source=$p\"\n"
	"if [ -f \"$dest/" MARKER "\" ] && [ \"$(cat \"$dest/" MARKER "\")\" = \"$want\" ] && [ -f \"$dest/$at\" ]; then\n"
	"  printf 'copy=%s\\nreused=1\\n' \"$dest/$at\"; exit 0\n"
	"fi\n"
	"if [ $app = 1 ]; then set -- \"$c/MacOS\" \"$c/Resources\"; else set -- \"$c\"; fi\n"
	"n=0 k=0\n"
	"for s; do [ -d \"$s\" ] || continue\n"
	"  n=$((n + $(find \"$s\" | wc -l))); k=$((k + $(du -sk \"$s\" | cut -f 1))); done\n"
	"[ $n -le $maxn ] || fail \"$c holds $n files, more than the $maxn a program's directory copied for re-signing may\"\n"
	"[ $k -le $maxk ] || fail \"$c holds $k KiB, more than the $maxk a program's directory copied for re-signing may\"\n"
	"rm -rf \"$dest\" && mkdir -p \"$dest\" || fail \"could not make $dest\"\n"
	"if [ $app = 1 ]; then\n"
	"  mkdir -p \"$dest/$top\" || fail \"could not make $dest/$top\"\n"
	"  for s; do [ -d \"$s\" ] || continue; cp -pR \"$s\" \"$dest/$top/${s##*/}\" || fail \"could not copy $s\"; done\n"
	"else\n"
	"  cp -pR \"$c\" \"$dest/$top\" || fail \"could not copy $c\"\n"
	"fi\n"
	"e=$dest/.lume-metal-entitlements.plist\n"
	"printf '%s' \"$ents\" >\"$e\" || fail \"could not write $e\"\n"
	"printf 'copy=%s\\nreused=0\\n' \"$dest/$at\"\n"
	"find \"$dest/$top\" -type f | while IFS= read -r f; do\n"
	"  case $f in *.dylib|*.so) ;; *) [ -x \"$f\" ] || continue ;; esac\n"
	"  codesign -d \"$f\" >/dev/null 2>&1 || continue\n"
	"  o=$(codesign --force --sign - --options runtime --entitlements \"$e\" \"$f\" 2>&1) ||"
	" { printf 'error=codesign could not re-sign %s: %s\\n' \"$f\" \"$o\"; exit 1; }\n"
	"  printf 'signed=%s\\n' \"$f\"\n"
	"  codesign -dv --entitlements - \"$f\" 2>&1 | sed 's/^/codesign=/'\n"
	"done || exit 0\n"
	"printf '%s\\n' \"$want\" >\"$dest/" MARKER "\" || fail \"could not write the copy's marker\"\n";

static int name_ok(const char *name)
{
	size_t n = name != NULL ? strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") : 0;

	return n > 0 && n <= 128 && name[n] == '\0' && name[0] != '.';
}

int lm_resign_dir(const char *home, const char *name, char *dir, size_t len)
{
	if (home == NULL || home[0] != '/' || !name_ok(name))
		return lm_error_set(LM_EINVALID, "a re-signed copy needs the guest's home and a plain name ([A-Za-z0-9._-])");
	return lm_path_join_buf(dir, len, home, LM_GUEST_BASE, LM_RESIGN_GUEST_DIR, name, NULL);
}

int lm_resign_name(const char *program, char *name, size_t len)
{
	uint8_t digest[32];
	char hex[65];

	lm_sha256(program, strlen(program), digest);
	lm_sha256_hex(digest, hex);
	return lm_text_format(name, len, "run-%.16s", hex);
}

int lm_resign_entitlements(char **xml)
{
	plist_t root = plist_new_dict();
	char *text = NULL;
	uint32_t n = 0;

	*xml = NULL;
	if (root == NULL)
		return lm_error_nomem();
	plist_dict_set_item(root, ENT_ALLOW_DYLD, plist_new_bool(1));
	plist_dict_set_item(root, ENT_DISABLE_LV, plist_new_bool(1));
	plist_to_xml(root, &text, &n);
	plist_free(root);
	if (text == NULL)
		return lm_error_nomem();
	*xml = lm_format("%.*s", (int)n, text);
	lm_plist_mem_free(text);
	return *xml != NULL ? 0 : lm_error_nomem();
}

int lm_resign_signature_ok(const lm_code_signature *s)
{
	return s->seen && !s->unsigned_ && s->hardened && s->allow_dyld_env && s->disable_library_validation &&
	    strstr(s->flags, "adhoc") != NULL;
}

/* One re-signed file's new signature, as codesign displayed it. */
static int check_signed(const char *program, const char *file, const lm_code_signature *sig)
{
	if (lm_resign_signature_ok(sig))
		return 0;
	return lm_error_set(LM_EREMOTE, "re-signing a copy of %s: %s is not signed as asked after codesign (flags=%s; "
	    "expected adhoc,runtime and the entitlements " ENT_ALLOW_DYLD " and " ENT_DISABLE_LV ")", program, file,
	    sig->flags[0] ? sig->flags : "not shown");
}

/* The script's answer: where the copy is, and every re-signed file's new signature checked --
 * the program's own among them. */
static int judge(const char *out, const char *program, lm_resign_copy *c)
{
	lm_code_signature sig;
	char file[PATH_MAX] = "";
	const char *line;
	size_t n;
	lm_scan lines;
	int have = 0, rc, program_signed = 0;

	memset(&sig, 0, sizeof(sig));
	lm_scan_init(&lines, out, strlen(out));
	while (lm_scan_line(&lines, &line, &n) != 0) {
		if (n > 6 && strncmp(line, "error=", 6) == 0)
			return lm_error_set(LM_EREMOTE, "re-signing a copy of %s: %.*s", program, (int)(n - 6), line + 6);
		if (n >= 9 && strncmp(line, "codesign=", 9) == 0) {
			if (have)
				lm_codesign_parse_line(&sig, line + 9, n - 9);
		} else if (n > 7 && strncmp(line, "signed=", 7) == 0) {
			if (have && (rc = check_signed(program, file, &sig)) < 0)
				return rc;
			if (lm_text_format(file, sizeof(file), "%.*s", (int)(n - 7), line + 7) < 0)
				return lm_error_set(LM_EREMOTE, "re-signing a copy of %s: a copied path longer than %zu bytes",
				    program, sizeof(file) - 1);
			memset(&sig, 0, sizeof(sig));
			have = 1;
			c->nsigned++;
			program_signed |= strcmp(file, c->program) == 0;
		} else if (n > 5 && strncmp(line, "copy=", 5) == 0) {
			if (lm_text_format(c->program, sizeof(c->program), "%.*s", (int)(n - 5), line + 5) < 0)
				return lm_error_set(LM_EREMOTE, "re-signing a copy of %s: the copy's path is longer than %zu bytes",
				    program, sizeof(c->program) - 1);
		} else if (n == 8 && strncmp(line, "reused=", 7) == 0) {
			c->reused = line[7] == '1';
		}
	}
	if (have && (rc = check_signed(program, file, &sig)) < 0)
		return rc;
	if (c->program[0] == '\0')
		return lm_error_set(LM_EREMOTE, "re-signing a copy of %s: the guest did not say where the copy is", program);
	if (!c->reused && !program_signed)
		return lm_error_set(LM_EREMOTE, "re-signing a copy of %s: codesign did not re-sign the program's copy %s "
		    "(it displays no signature of it)", program, c->program);
	return 0;
}

int lm_guest_resign_copy(lm_ssh *ssh, const char *home, const char *name, const char *program, lm_resign_copy *c)
{
	char dir[PATH_MAX], maxn[24], maxk[24], *ents = NULL, *cmd = NULL, *out = NULL, *err = NULL;
	const char *argv[9];
	int rc, status = 0;

	memset(c, 0, sizeof(*c));
	if (program == NULL || program[0] != '/')
		return lm_error_set(LM_EINVALID, "lm_guest_resign_copy: the program's absolute path in the guest is required");
	if ((rc = lm_resign_dir(home, name, dir, sizeof(dir))) < 0 || (rc = lm_resign_entitlements(&ents)) < 0)
		return rc;
	snprintf(maxn, sizeof(maxn), "%d", COPY_MAX_FILES);
	snprintf(maxk, sizeof(maxk), "%lld", COPY_MAX_KIB);
	argv[0] = "/bin/sh";
	argv[1] = "-c";
	argv[2] = copy_script;
	argv[3] = "lume-metal-resign";
	argv[4] = program;
	argv[5] = dir;
	argv[6] = ents;
	argv[7] = maxn;
	argv[8] = maxk;
	if ((rc = lm_shell_quote_argv(argv, 9, &cmd)) < 0)
		goto done;
	/* A copy of a large directory takes its time: the session's command timeout, not a question's.
	 * Each re-signed file's display is under a kilobyte: room for a few thousand. */
	if ((rc = lm_ssh_exec_capture(ssh, cmd, 4 * 1024 * 1024, &out, &err, &status)) < 0)
		goto done;
	if (status != 0)
		rc = lm_error_set(LM_EREMOTE, "re-signing a copy of %s failed in the guest (exit %d): %s", program, status,
		    err != NULL && err[0] ? err : "no output");
	else if ((rc = judge(out, program, c)) < 0)
		(void)lm_guest_resign_remove(ssh, home, name); /* a copy not signed as asked is never run */
done:
	lm_free(out);
	lm_free(err);
	lm_free(cmd);
	free(ents);
	return rc;
}

int lm_guest_resign_remove_dir(lm_ssh *ssh, const char *dir)
{
	const char *argv[3] = { "rm", "-rf", dir };
	const char *last = dir != NULL ? strrchr(dir, '/') : NULL;
	char *out = NULL, *err = NULL;
	int rc, status = 0;

	/* rm -rf of a path that is not one of ours would be a disaster: only resigned/NAME. */
	if (last == NULL || strstr(dir, "/" LM_GUEST_BASE "/" LM_RESIGN_GUEST_DIR "/") == NULL ||
	    strstr(dir, "/../") != NULL || !name_ok(last + 1))
		return lm_error_set(LM_EINVALID, "lm_guest_resign_remove_dir: '%s' is not a re-signed copy's folder",
		    dir != NULL ? dir : "");
	if ((rc = lm_ssh_ask_argv(ssh, argv, 3, 64 * 1024, &out, &err, &status)) == 0 && status != 0)
		rc = lm_error_set(LM_EREMOTE, "removing the re-signed copy %s failed (exit %d): %.*s", dir, status,
		    (int)strcspn(err != NULL ? err : "", "\n"), err != NULL ? err : "");
	lm_free(out);
	lm_free(err);
	return rc;
}

int lm_guest_resign_remove(lm_ssh *ssh, const char *home, const char *name)
{
	char dir[PATH_MAX];
	int rc;

	if ((rc = lm_resign_dir(home, name, dir, sizeof(dir))) < 0)
		return rc;
	return lm_guest_resign_remove_dir(ssh, dir);
}
