/* Internal (guestops): what keeps the shim from a program in the guest, and what is done about
 * it -- SIP (sip.c), what `run` would start (run_target.c), code signatures as dyld judges them
 * (codesign.c), and a hardened program run as a re-signed copy (resign.c). */
#ifndef LM_GUEST_CODESIGN_H
#define LM_GUEST_CODESIGN_H

#include <stddef.h>

#include "lume-metal/flow.h"
#include "lume-metal/sys/ssh.h"
#include "guest_bundle.h"
#include "guest_shim.h"

/* ---- sip.c: the programs System Integrity Protection keeps the shim away from ---- */

/* csrutil status's first line -> "enabled", "disabled", "custom" ("unknown (Custom
 * Configuration)"), or "" for anything else. */
void lm_sip_status_parse(const char *line, char *out, size_t len);
/* Whether every child of a workload keeps the shim under the shim's spawn rule (docs/guest.md): 1
 * when the guest's SIP is enabled (protected children purge DYLD_* themselves) or the installed
 * shim has an arm64e slice (protected children can load it), else 0 (the shim removes itself from
 * protected children, which dyld would stop, and every other child keeps it); reason says which,
 * in words the activation record keeps. */
int lm_children_policy(const lm_guest_facts *facts, int shim_arm64e, char *reason, size_t len);
/* 1 when path is in a directory SIP protects (/bin, /sbin, /usr/bin, /usr/sbin, /usr/libexec,
 * /System, except /System/Volumes/Data). */
int lm_sip_protected_path(const char *path);

/* ---- run_target.c: what `run` would start in the guest ---- */

/* What `codesign -dv --entitlements -` said about one file (codesign.c). */
typedef struct {
	int seen;                       /* codesign answered about it */
	int unsigned_;                  /* "code object is not signed at all" */
	int hardened;                   /* flags contain runtime (0x10000) */
	int library_validation;         /* flags contain library-validation (0x2000) */
	int allow_dyld_env;             /* ...cs.allow-dyld-environment-variables granted */
	int disable_library_validation; /* ...cs.disable-library-validation granted */
	char flags[96];                 /* "0x10000(runtime)" as codesign printed it */
	int pending_key;                /* the parse's state: the entitlement whose value comes next */
} lm_code_signature;

/* An executable shipped beside the program (its own directory; for an app bundle, Contents/MacOS
 * and Contents/Resources), with what codesign says of it: a program the workload may start. */
#define LM_RUN_SIBLINGS 16
typedef struct {
	char path[1024];
	lm_code_signature sig;
} lm_run_sibling;

/* What `run` would start in the guest: the program found as env finds it, the file behind it, and
 * for a script its #! interpreter, with what codesign says of each; the executables shipped beside
 * it (at most LM_RUN_SIBLINGS; siblings_more when there were more); and whether the installed shim
 * has an arm64e slice. Empty strings for what does not apply. */
typedef struct {
	char program[PATH_MAX];
	char program_real[PATH_MAX];
	char interpreter[PATH_MAX];
	char interpreter_real[PATH_MAX];
	lm_code_signature program_sig, interpreter_sig;
	int shim_arm64e;                /* the shim's Mach-O header names an arm64e slice */
	int program_arm64e;             /* the program's header says arm64e only (lm_macho_arm64e_only) */
	int interpreter_arm64e;         /* the same of the script's interpreter */
	size_t nsiblings;
	lm_run_sibling siblings[LM_RUN_SIBLINGS];
	int siblings_more;
} lm_run_target;

/* Parse the guest-side resolver's key=value lines (unknown keys ignored). */
void lm_run_target_parse(const char *output, lm_run_target *t);
/* Look up argv's program in the guest, with the PATH the run gives it. */
/* The index of the program the user named in argv: the first word after env's leading NAME=VALUE
 * assignments; *own_inherit 1 when those set LUME_METAL_INHERIT themselves. */
size_t lm_run_program_index(const char *const *argv, size_t argc, int *own_inherit);
/* argv with its program (lm_run_program_index) replaced by program when it is not "" (a re-signed
 * copy), else argv itself: *out (free() when it is not argv) of argc words. */
int lm_run_argv_program(const char *const *argv, size_t argc, const char *program, const char *const **out);
int lm_guest_run_target(lm_ssh *ssh, const lm_shim_env *se, const char *const *argv, size_t argc,
    lm_run_target *t);
/* The warning for running t with the shim in a guest whose SIP state is sip, or 0 (returns 1)
 * when the shim can reach the program. name: the program as the user gave it. */
int lm_sip_warning(const lm_guest_facts *facts, const char *name, const lm_run_target *t, char *buf, size_t len);

/* ---- codesign.c: code signatures, as dyld judges them for the shim ---- */

/* One line of codesign's output (stderr and stdout), in order, into s (zeroed first). */
void lm_codesign_parse_line(lm_code_signature *s, const char *line, size_t n);
/* 1: the hardened runtime without allow-dyld-environment-variables (dyld ignores DYLD_*). */
int lm_codesign_ignores_injection(const lm_code_signature *s);
/* 1: library validation without disable-library-validation (dyld refuses another team's dylib). */
int lm_codesign_validates_libraries(const lm_code_signature *s);
/* The refusal (an error: the shim cannot load) and the warning (library validation) for t, each
 * returning 1 with the message in buf, or 0. name: the program as the user gave it. */
int lm_codesign_refusal(const char *name, const lm_run_target *t, char *buf, size_t len);
int lm_codesign_warning(const char *name, const lm_run_target *t, char *buf, size_t len);
/* A workload's program as started (run, agent install): not hardened (or not refused); hardened
 * on a guest whose SIP is enabled or not reported, started stock as asked (--run-hardened-stock);
 * hardened on a SIP-off guest, started so that its records tell. */
enum { LM_HARDENED_NO = 0, LM_HARDENED_STOCK = 1, LM_HARDENED_SIP_OFF = 2 };
/* 1 when the guest's SIP is disabled or custom: macOS then does not apply the hardened runtime's
 * restrictions (Apple Developer Forums thread 757000; codesign.c), so nothing is refused. */
int lm_codesign_sip_off(const lm_guest_facts *facts);
/* On such a guest, the one line said instead of the refusal and the warning: 1 with it in buf when
 * t's program or interpreter is hardened without the dyld entitlement or under library
 * validation, 0 otherwise. */
int lm_codesign_sip_off_note(const lm_guest_facts *facts, const char *name, const lm_run_target *t, char *buf,
    size_t len);
/* 1 with the warning in buf when t's sibling i is one dyld would not give the shim: if the workload
 * starts it, it runs stock (the hardened runtime, or library validation); 0 otherwise. */
int lm_codesign_sibling_warning(const lm_run_target *t, size_t i, char *buf, size_t len);
/* What `codesign -dv --entitlements -` says in the guest of each of paths[n] (absolute, at most
 * LM_CODESIGN_MAX_FILES), in one command, into sigs[n] (a file codesign did not answer about is
 * left unseen). */
#define LM_CODESIGN_MAX_FILES 32
int lm_guest_codesign(lm_ssh *ssh, const char *const *paths, size_t n, lm_code_signature *sigs);
/* The first bytes of a Mach-O file (fat or thin 64-bit): 1 when it has an arm64e slice. */
int lm_macho_has_arm64e(const unsigned char *head, size_t len);
/* The same: 1 when the file runs only as arm64e on Apple silicon -- thin arm64e, or universal with
 * arm64 slices that are all arm64e (the shim's children rule, guest/shim). */
int lm_macho_arm64e_only(const unsigned char *head, size_t len);

/* ---- resign.c: --resign-copy, a hardened program run as a re-signed copy ---- */

/* Where copies live: HOME/.local/share/lume-metal/resigned/NAME (rollback removes the folder). */
#define LM_RESIGN_GUEST_DIR "resigned"
typedef struct {
	char program[PATH_MAX];  /* the program's copy, to run instead of the original ("": none) */
	int reused;              /* the copy of the same original (its SHA-256) was there already */
	size_t nsigned;          /* files re-signed this time */
	char said[2 * PATH_MAX + 128]; /* what was done, in words (lm_guest_resign_workload) */
} lm_resign_copy;
/* The copy's folder for name ([A-Za-z0-9._-], not starting with '.'). */
int lm_resign_dir(const char *home, const char *name, char *dir, size_t len);
/* A run's copy's name, from the original's path: "run-" and 16 hex digits of its SHA-256. */
int lm_resign_name(const char *program, char *name, size_t len);
/* The entitlements the copy is signed with (XML plist, free()): allow-dyld-environment-variables
 * and disable-library-validation, both true. */
int lm_resign_entitlements(char **xml);
/* 1 when s is what the re-signing makes: ad hoc, the hardened runtime, both entitlements. */
int lm_resign_signature_ok(const lm_code_signature *s);
/* The copy of program (absolute, in the guest) named name: made -- or kept, when it is of the same
 * original -- re-signed and verified (resign.c says how); LM_EREMOTE saying what failed, the copy
 * then removed. The original is only read. */
int lm_guest_resign_copy(lm_ssh *ssh, const char *home, const char *name, const char *program, lm_resign_copy *c);
/* --resign-copy for a workload: when the program t (argv's, looked up) or an executable shipped
 * beside it keeps the shim out (the hardened runtime without the dyld entitlement, or library
 * validation), its copy named name (NULL: lm_resign_name of its path) is made and t looked up again
 * on the copy; c->program is then the copy's path, "" when nothing needed re-signing; c->said says
 * which. LM_EHARDENED for a script (its interpreter is not copied). */
int lm_guest_resign_workload(lm_ssh *ssh, const lm_shim_env *se, const char *home, const char *name,
    const char *const *argv, size_t argc, lm_run_target *t, lm_resign_copy *c);
/* The copy named name gone (absent is fine); or the copy's folder dir (resigned/NAME, checked). */
int lm_guest_resign_remove(lm_ssh *ssh, const char *home, const char *name);
int lm_guest_resign_remove_dir(lm_ssh *ssh, const char *dir);

#endif
