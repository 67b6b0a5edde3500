/* Internal: operations on one guest over SSH (guestops), and the guest bundle they install.
 *
 * Everything here does one thing to or in one guest and reports what it found; which of them a
 * command runs, in which order, and what it records is flow/'s to decide. */
#ifndef LM_GUESTOPS_H
#define LM_GUESTOPS_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "lume-metal/agent.h"
#include "lume-metal/flow.h"
#include "lume-metal/sys/ssh.h"
#include "buf.h"
#include "ssh_deadline.h"
#include "ssh_files.h"
#include "context_internal.h"
#include "test_hooks.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

/* Where the guest keeps its files, relative to its home. */
#define LM_GUEST_BASE ".local/share/lume-metal"

/* Where Homebrew installs programs: Apple silicon, then Intel. Put on the workload's PATH. */
#define LM_GUEST_HOMEBREW_PATH "/opt/homebrew/bin:/usr/local/bin"

/* ---- bundle.c: a guest bundle on the host ---- */

#define LM_BUNDLE_MAX_FILES 32
typedef struct {
	char name[256];      /* relative path inside the bundle: "metal-capabilities", "profiles/x.json" */
	char sha256[65];
	uint64_t size;
	int mode;
} lm_bundle_file;

typedef struct {
	char dir[PATH_MAX];
	char id[LM_BUNDLE_ID_MAX]; /* "0.1.0-0123456789ab": the guest directory's name */
	char platform[64];
	char os[32];             /* "Darwin", "Linux" */
	char injection[64];      /* "DYLD_INSERT_LIBRARIES", "LD_PRELOAD" */
	char shim[256];
	char probe[256];
	size_t nfiles;
	lm_bundle_file files[LM_BUNDLE_MAX_FILES];
	char *manifest;          /* manifest.json's bytes, uploaded last */
	size_t manifest_len;
} lm_bundle;

/* The bundle for a guest: ctx's bundle_dir when set, else the installed one for facts->os/arch. */
int lm_bundle_open(lm_bundle **out, lm_context *ctx, const lm_guest_facts *facts);
/* The same, for undoing: *out NULL (and no error) when this installation has no bundle for the guest;
 * only running out of memory fails. */
int lm_bundle_open_if_any(lm_bundle **out, lm_context *ctx, const lm_guest_facts *facts);
/* b->manifest's bytes into b's fields and files; `path` names them in messages. Also reads the
 * manifests found in a guest (guest_files.c). */
int lm_bundle_parse_manifest(lm_bundle *b, const char *path);
/* The bundle in `dir` (an installed copy: `local install`'s place), whatever its OS. */
int lm_bundle_open_dir(lm_bundle **out, const char *dir);
/* Read one file, checking size and SHA-256 against the manifest. */
int lm_bundle_read(const lm_bundle *b, const lm_bundle_file *f, void **data, size_t *len);
void lm_bundle_free(lm_bundle *b);
/* ctx's bundle_dir, when set: its manifest and every file checked, before any VM is touched. */
int lm_bundle_check(lm_context *ctx);

/* ---- guest.c: operations on one guest over SSH ---- */

int lm_guest_facts_read(lm_ssh *ssh, lm_guest_facts *facts, char *current, size_t current_len);
/* The guest's login shell ($SHELL) into buf (a longer answer is an error); *written_for: zsh, bash
 * or sh, the shells lume-metal's guest commands are written for. */
int lm_guest_login_shell(lm_ssh *ssh, char *buf, size_t len, int *written_for);
/* The facts command's output (modified in place: lines are cut at '\n'; NULL reads as empty);
 * `err` is its stderr, quoted when the output says nothing usable. Split out of the read so that
 * the parse of what the guest prints can be tested and fuzzed without a guest. */
int lm_guest_facts_parse(char *out, const char *err, lm_guest_facts *facts, char *current, size_t current_len);
/* Installed and every file matches? (1/0). When not, why says what the guest has instead ("...
 * is a FIFO, not a file", a link on the way); an error (no memory, the connection lost, a
 * timeout) is returned, its message in why too. */
int lm_guest_bundle_verify(lm_ssh *ssh, const lm_guest_facts *facts, const lm_bundle *b, int *ok, char *why,
    size_t why_len);
/* Install atomically (staging dir, verified uploads, rename, `current` switched atomically),
 * removing older versions. *uploaded counts the files. */
int lm_guest_bundle_install(lm_ssh *ssh, const lm_guest_facts *facts, const lm_bundle *b, int *uploaded);
/* Its two shell commands (the same under zsh and sh): a fresh staging directory; the staged
 * bundle into place, `current` switched, every other entry gone. */
int lm_guest_install_prepare_command(const lm_guest_facts *facts, const char *stage, char **out);
int lm_guest_install_switch_command(const lm_guest_facts *facts, const lm_bundle *b, const char *stage, char **out);

/* ---- guest_files.c: the guest's lume-metal directory, written and removed with care ----
 *
 * Threat: the guest's user may have made ~/.local/share/lume-metal (or ~/.local, or
 * ~/.local/share) a link to a folder of their own, put a file at its name, or files of their own
 * inside it. Rule: lume-metal writes only through real directories below the home (no link is
 * followed on the way: what it installs, and later removes, is where it says); it removes only
 * the files a lume-metal manifest names (and the upload's temporary names for them), the links it
 * makes (`current`), and then its directories when they are empty. Everything else is left, and
 * said. */

/* One component of the install path, by its kind: 0 for absent or a directory; else
 * LM_EREMOTE naming `shown` ("~/.local") and what to do. */
int lm_guest_base_refuse(const char *shown, lm_ssh_kind kind);
/* Every component from ~/.local to ~/.local/share/lume-metal checked (lm_guest_base_refuse). */
int lm_guest_base_check(lm_ssh *ssh, const lm_guest_facts *facts);
/* What a removal did: counts, and every entry it left with why ("~/.local/share/lume-metal/x
 * (not lume-metal's)"), "; "-separated. */
typedef struct {
	size_t files, links, dirs, nleft;
	lm_buf left;
} lm_guest_removal;
void lm_guest_removal_init(lm_guest_removal *r);
void lm_guest_removal_dispose(lm_guest_removal *r);
/* "removed 5 files, 1 link and 3 directories of ~/.local/share/lume-metal; left: ..." */
void lm_guest_removal_describe(const lm_guest_removal *r, char *buf, size_t len);
/* Which entries of ~/.local/share/lume-metal lume-metal may have made: 'l' a link of its own
 * (current, .current.new: removed when a link), 'a' the activation record directories, 'r' the
 * re-signed copies (resign.c), 'd' a
 * directory that is a bundle or a staging directory when a lume-metal manifest (or, for a staging
 * directory or the local bundle's id, the local bundle's) names its files, 0 anything else (left). */
int lm_guest_entry_class(const char *name, lm_ssh_kind kind);
/* A name the shim gives an activation record (<pid>.json) or its temporary file (.<pid>.tmp)? */
int lm_guest_is_record(const char *entry);
/* The upload's temporary name for a file named `base` (".<base>.lm-<16 hex>", sftp.c)? */
int lm_guest_is_upload_temp(const char *entry, const char *base);
/* Remove what lume-metal put in the guest's directory, except the entry named keep (and
 * `current`) when keep is not NULL; local (may be NULL) names the files of a staging directory
 * whose manifest was not uploaded yet. What was left is no error: it is in r. */
int lm_guest_files_remove(lm_ssh *ssh, const lm_guest_facts *facts, const lm_bundle *local, const char *keep,
    lm_guest_removal *r);
/* One bundle or staging directory of the install directory, by its manifest (or local's). */
int lm_guest_entry_remove(lm_ssh *ssh, const lm_guest_facts *facts, const lm_bundle *local, const char *name,
    lm_guest_removal *r);
/* The whole directory: lm_guest_files_remove, described into said (may be NULL). Returns how
 * many entries were left (0: everything of lume-metal's is gone and nothing else was there), or
 * an error. */
int lm_guest_remove_all(lm_ssh *ssh, const lm_guest_facts *facts, const lm_bundle *local, char *said,
    size_t said_len);

/* What the shim needs on a command line: injection variable and the LUME_METAL_* values. */
typedef struct {
	char injection[64];
	char shim_path[PATH_MAX];
	char probe_path[PATH_MAX];
	size_t nenv;
	lm_env_entry env[LM_PROFILE_ENV_MAX];
	/* A workload's (run, agent): LUME_METAL_INHERIT ("1", "0"; "" not set: the user's own or
	 * none), LUME_METAL_INHERIT_REASON, LUME_METAL_RECORD_DIR ("" not set); set with
	 * lm_shim_env_workload, given with the shim's variables (docs/activation-format.md). And what
	 * the shim's spawn rule needs to know of the guest: LUME_METAL_GUEST_SIP ("enabled",
	 * "disabled", "custom"; "" not known) and LUME_METAL_SHIM_ARM64E ("1", "0"; "" not known), set
	 * with lm_shim_env_guest. */
	char inherit[2];
	char inherit_reason[256];
	char record_dir[PATH_MAX];
	char guest_sip[16];
	char shim_arm64e[2];
} lm_shim_env;

int lm_shim_env_make(lm_shim_env *se, const lm_guest_facts *facts, const char *injection,
    const char *shim, const char *probe, const lm_profile *profile);
/* The same for the Tart image's own shim (LM_TART_SHIM_PATH, TART_METAL_* as its guest agent
 * sets them), the probe still ours. */
int lm_shim_env_tart(lm_shim_env *tart, const lm_shim_env *se);
/* The children policy and the record directory for a workload (either may be NULL: not set). */
int lm_shim_env_workload(lm_shim_env *se, const char *inherit, const char *reason, const char *record_dir);
/* The guest's SIP state (csrutil's word; "" or anything else: not known) and whether the installed
 * shim has an arm64e slice, for the shim's spawn rule. */
void lm_shim_env_guest(lm_shim_env *se, const char *sip, int shim_arm64e);
/* Those that are set, as names and values (at most LM_SHIM_WORKLOAD_VARS): the count. */
#define LM_SHIM_WORKLOAD_VARS 5
size_t lm_shim_env_workload_vars(const lm_shim_env *se, const char *names[LM_SHIM_WORKLOAD_VARS],
    const char *values[LM_SHIM_WORKLOAD_VARS]);
/* `env VAR=... argv...` quoted for the guest's shell. with_shim: 0 nothing before argv;
 * LM_SHIM_ALL the shim's variables and the bundle's PATH; LM_SHIM_PATH_ONLY the PATH alone (what
 * the workload's name is looked up in, without loading the shim). */
#define LM_SHIM_ALL 1
#define LM_SHIM_PATH_ONLY 2
int lm_shim_command(const lm_shim_env *se, int with_shim, const char *const *argv, size_t argc, char **out);
/* Run the probe's --report stock or shimmed. *diag gets the shim's diagnostic (stderr) if any. */
int lm_guest_probe(lm_ssh *ssh, const lm_shim_env *se, int shimmed, lm_report **out,
    char *diag, size_t diag_len);

/* ---- machine.c: the machine lume-metal runs on (`local`, over the local transport) ---- */

/* The stock device's name in a macOS VM (reference/metal.md). */
#define LM_PARAVIRTUAL_DEVICE_NAME "Apple Paravirtual device"
/* The shim's environment with the installed bundle b used where it is (nothing copied). */
int lm_shim_env_in_place(lm_shim_env *se, const lm_bundle *b, const lm_profile *profile);
/* Every file of b read and checked against its manifest (size, SHA-256). */
int lm_bundle_verify_in_place(const lm_bundle *b);
/* sysctl kern.hv_vmm_present: *present 1 (a VM), 0 (not), -1 (no answer). */
int lm_machine_hv_vmm_present(lm_ssh *ssh, int *present);

/* ---- exercise.c: does the device run what it answers? ---- */

/* The shimmed probe with --exercise; LM_EUNSUPPORTED when the probe prints no exercise lines. */
int lm_guest_exercise(lm_ssh *ssh, const lm_shim_env *se, lm_report **out);

/* An enabled guest's re-enable in one round trip: one command that prints the boot time, the
 * home and whether the Tart image's shim is there; the bundle directory `current` names and the
 * SHA-256 of each of its files and of its manifest (computed in the guest by its OpenSSL); the
 * probe's report stock; and its report with the shim and the exercise (one process). `known` is
 * what the journal recorded of the guest: facts are `known` with what was printed (the caller
 * compares the boot time with the recorded one). Every field is set only from a part that ran
 * and read well: facts_ok, sums_ok (`current` is a directory beside it, whose name goes to
 * current, and every file of `b` and the manifest are listed, each with the bundle's hash),
 * stock, shimmed and exercised (the same report twice: the shimmed answers and the exercise come
 * from one process). Returns < 0 only when the command could not run (SSH); a guest that answers
 * otherwise leaves fields unset. */
typedef struct {
	lm_guest_facts facts;
	char current[128];
	int facts_ok;
	int sums_ok;
	lm_report *stock, *shimmed, *exercised;
} lm_guest_confirmation;
int lm_guest_confirm_command(const lm_guest_facts *known, const lm_bundle *b, const lm_shim_env *se,
    const char *mark, char **out);
int lm_guest_confirm(lm_ssh *ssh, const lm_guest_facts *known, const lm_bundle *b, const lm_shim_env *se,
    lm_guest_confirmation *c);
/* Frees the reports a confirmation holds (not the struct). */
void lm_guest_confirmation_dispose(lm_guest_confirmation *c);
/* The confirmation's probe parts alone, in one command: stock, then with the shim and its
 * exercise in one process (c->stock, c->shimmed, c->exercised; NULL where a part did not answer
 * or its report is unreadable: the single steps then ask again and say why). */
int lm_guest_probe_exercise(lm_ssh *ssh, const lm_shim_env *se, lm_guest_confirmation *c);
/* "reduction pass, matrix pass, bfloat16 pass; threadgroup memory 32768 bytes". */
void lm_exercise_summary(const lm_report *r, char *buf, size_t len);
/* The paravirtual device's known defects in an exercise (reported, never required): `checked` lists
 * those that ran, `shown` those that showed with their messages; 0 when none ran (an older probe). */
int lm_exercise_defects(const lm_report *exercised, char *shown, size_t shown_len, char *checked, size_t checked_len);
/* The profile's expected kernels checked against `exercised` for this guest: a feature the
 * guest's macOS cannot run (bfloat16 below macOS 14) is not required, since llama.cpp never uses
 * it there; `note` says which and why ("" when none). lm_profile_check_exercise_waived's answer. */
int lm_guest_exercise_check(const lm_profile *profile, const lm_report *exercised, const lm_guest_facts *g,
    char *note, size_t len);
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

/* ---- agent_plist.c: per-workload LaunchAgents (agent.h) ---- */

/* Where agents and their logs live in the guest, relative to its home. */
#define LM_AGENT_DIR "Library/LaunchAgents"
#define LM_AGENT_LOG_DIR "Library/Logs/lume-metal"

typedef struct {
	char plist[LM_AGENT_PATH_MAX];   /* HOME/Library/LaunchAgents/LABEL.plist */
	char out_log[LM_AGENT_PATH_MAX]; /* HOME/Library/Logs/lume-metal/LABEL.out.log */
	char err_log[LM_AGENT_PATH_MAX];
	char record_dir[LM_AGENT_PATH_MAX]; /* HOME/Library/Logs/lume-metal/LABEL.activation */
} lm_agent_paths_t;

/* The agent's guest paths; LM_EINVALID when they would not fit. */
int lm_agent_paths(const char *home, const char *label, lm_agent_paths_t *paths);
/* a->stdout_path and a->stderr_path as lume-metal's plists name them (the plist's
 * StandardOutPath/StandardErrorPath under home); unchanged when home is unknown. */
void lm_agent_log_paths(const char *home, lm_agent_info *a);
/* An install's spec: a good label (lm_agent_label_check) and a workload command whose first word
 * is a program, not a variable assignment. */
int lm_agent_spec_check(const lm_agent_spec *spec);
/* The agent's plist (XML, NUL-terminated, free()): Label, ProgramArguments (program — the
 * workload's resolved absolute path — then spec's arguments after argv[0]), EnvironmentVariables
 * (the shim's injection variable, the profile's LUME_METAL_*, a PATH with the bundle's tools and
 * Homebrew's), StandardOutPath and StandardErrorPath, ProcessType (process_type, checked by
 * lm_agent_process_type_check; NULL: Interactive), KeepAlive and RunAtLoad when asked. */
int lm_agent_plist_build(const lm_agent_spec *spec, const char *program, const lm_shim_env *se, const char *home,
    const char *process_type, char **xml, size_t *len);
/* The program (ProgramArguments' first) of the plist at plist_path ("" when it names none). */
int lm_agent_plist_program(lm_ssh *ssh, const char *plist_path, char *program, size_t size);
/* ---- launchd.c: launchd in the guest, as reference/lume.md's recipe drives it ---- */

/* A guest command from argv; a non-zero exit is LM_EREMOTE naming `what` and its stderr, unless
 * *status is wanted (then the caller judges). *out (may be NULL) gets its stdout. */
int lm_guest_run_argv(lm_ssh *ssh, const char *const *argv, size_t argc, const char *what, char **out,
    int *status);
/* The guest account's launchd domain, "gui/501". */
int lm_launchd_domain(lm_ssh *ssh, char *domain, size_t len);
/* launchd's view of one agent (`launchctl print DOMAIN/LABEL`): a->state "not loaded", "loaded"
 * or "running", a->pid when running. */
int lm_launchd_query(lm_ssh *ssh, const char *domain, lm_agent_info *a);
/* How long a reload waits for launchd to let go of a booted-out label and accept the bootstrap
 * again: past launchd's own ExitTimeOut (20 s by default, then SIGKILL for a job that has not
 * ended) and the about 5 s measured after that (reference/vm-managers-and-bench.md, "launchd").
 * lm_launchd_release_wait() is it, or the test hook's LUME_METAL_TEST_LAUNCHD_WAIT. */
#define LM_LAUNCHD_RELEASE_WAIT 30.0
double lm_launchd_release_wait(void);
/* A bounded launchd wait: until `deadline` (lm_clock_monotonic), reported as vm's step `step`. */
typedef struct {
	double deadline;
	const char *vm;
	const char *step;
} lm_launchd_wait;
/* Until `launchctl print DOMAIN/LABEL` says the label is gone, asked again every 0.25 s:
 * LM_ETIMEOUT (saying launchd still holds it) past the deadline, LM_ECANCELED on ctx's request. */
int lm_launchd_wait_gone(lm_context *ctx, lm_ssh *ssh, const char *domain, const char *label, const lm_launchd_wait *w);
/* `launchctl bootstrap DOMAIN PLIST`, again every 0.25 s while it fails with 5 (Input/output
 * error: launchd still holds the label): LM_ETIMEOUT with launchd's message past the deadline,
 * LM_EREMOTE at once for any other failure, LM_ECANCELED on ctx's request. */
int lm_launchd_bootstrap(lm_context *ctx, lm_ssh *ssh, const char *domain, const char *plist, const lm_launchd_wait *w);
/* A copy of the plist at `plist` kept aside as DIR/.NAME.lume-metal-previous (into backup, even
 * when there is none: *had says whether there was), so that a failed re-install can put it back;
 * the original stays until the new one is uploaded over it. */
int lm_launchd_plist_keep(lm_ssh *ssh, const char *plist, char *backup, size_t size, int *had);
/* The plist kept aside (lm_launchd_plist_keep) back at a->plist, and launchd as it was before
 * (`was`: "not loaded", "loaded" or "running") when an install touched it (the new one booted
 * out first); a->state and a->pid launchd's answer after. vm and its step "agent-restore" for
 * the waits. */
int lm_launchd_plist_put_back(lm_context *ctx, lm_ssh *ssh, const char *domain, const char *vm, const char *backup,
    int launchd_touched, const char *was, lm_agent_info *a);
/* Out of launchd if it is in (bootout), and its plist (under home) gone. */
int lm_launchd_unload(lm_ssh *ssh, const char *domain, const char *home, lm_agent_info *a);
/* Every agent of agents[n] out of launchd and its plist gone (rollback, before the guest files:
 * the agents name the shim); `labels` gets their labels, ", " between them. */
int lm_guest_agents_remove(lm_ssh *ssh, const lm_guest_facts *facts, const lm_agent_info *agents, size_t n,
    char *labels, size_t len);
/* launchd's state of each of the n agents (in place; a flow outcome's array of pointers). */
int lm_guest_agents_query(lm_ssh *ssh, lm_agent_info *const *agents, size_t n);
/* agent_logs.c: a's stdout and stderr logs (a->stdout_path, a->stderr_path) given to on_data as
 * read, then (follow) what they gain until ctx is cancelled: 0 then (lm_flow_agent_logs). */
int lm_guest_agent_logs(lm_context *ctx, lm_ssh *ssh, const lm_agent_info *a, int follow, lm_agent_log_fn on_data,
    void *data);
/* For each running agent of the n (after lm_guest_agents_query): whether its process loaded the
 * shim since it last started -- its activation record, <record_dir>/<pid>.json -- whether it or a
 * process it started had an answer widened (lm_activation_took; the folder is the agent's alone),
 * and the line (shim_loaded, shim_widened, shim, record_dir set in place; home: the guest's). The
 * folder is first pruned to the live processes: a record whose pid is gone, or written before the
 * guest's boot (a pid of an earlier boot is never this process), is removed (records_pruned). */
int lm_guest_agents_activation(lm_ssh *ssh, const char *home, lm_agent_info *const *agents, size_t n);
/* `sysctl -n kern.boottime`'s "{ sec = S, usec = U } ..." as epoch seconds; 0 when not that. */
double lm_guest_boot_time_parse(const char *boot);


/* ---- activation.c: the shim's activation records (docs/activation-format.md) ---- */

/* What the reader takes from one guest directory: more is an error naming the limit. */
#define LM_ACTIVATION_MAX_RECORDS 256
#define LM_ACTIVATION_MAX_BYTES 65536
/* The shim's own tables (a record with more is damaged). */
#define LM_ACTIVATION_CLASSES 8
#define LM_ACTIVATION_QUESTIONS 64
#define LM_ACTIVATION_TG_READS 32
#define LM_ACTIVATION_REASON 201 /* 200 bytes and the NUL */
#define LM_ACTIVATION_NAME 128

typedef struct {
	char name[LM_ACTIVATION_NAME];
	int installed;
	char why_not[LM_ACTIVATION_REASON]; /* "" when installed */
	char device[LM_ACTIVATION_NAME];    /* "" until a device of the class was asked */
} lm_activation_class;

typedef struct {
	int device_class;                   /* index into classes */
	int64_t family;                     /* MTLGPUFamily value */
	int stock, given;
} lm_activation_question;

typedef struct {
	int device_class;
	uint64_t stock, given;
} lm_activation_tg_read;

/* One exec or spawn the process made (format 1.1, docs/activation-format.md). */
#define LM_ACTIVATION_SPAWNS 32
typedef struct {
	char call[24];                      /* "execve", "posix_spawn", "posix_spawnp", "posix_spawn_setexec" */
	char path[1024];                    /* the program as given */
	int protected_;                     /* a SIP-protected path */
	char shim[8];                       /* "kept", "removed", "absent" */
	char why[LM_ACTIVATION_REASON];
} lm_activation_spawn;

/* One process's record, every member typed; "" where the record has null. */
typedef struct {
	char file[32];                      /* "<pid>.json" */
	char *text;                         /* the record as read, byte for byte (lm_activation_list owns it) */
	size_t text_len;
	int64_t pid, ppid;
	char exe[1024];
	char arch[8];
	char shim_version[65];
	char written[8];                    /* "load", "update", "exit" */
	uint64_t sequence;
	int incomplete;
	int active;                         /* profile.active */
	char why_stock[LM_ACTIVATION_REASON];
	int64_t apple_family_max;           /* 0 when not active */
	uint64_t max_threadgroup_memory;
	int has_working_set;
	uint64_t working_set;
	int init_installed;
	char init_why_not[LM_ACTIVATION_REASON];
	size_t nclasses;
	lm_activation_class classes[LM_ACTIVATION_CLASSES];
	size_t nquestions;
	lm_activation_question questions[LM_ACTIVATION_QUESTIONS];
	size_t ntg;
	lm_activation_tg_read tg[LM_ACTIVATION_TG_READS];
	int inherit;                        /* children keep the shim */
	char variable[32];                  /* DYLD_INSERT_LIBRARIES or LD_PRELOAD */
	char setting[8];                    /* LUME_METAL_INHERIT: "0", "1", "invalid", "" (absent) */
	char children_why[LM_ACTIVATION_REASON];
	char host_reason[LM_ACTIVATION_REASON];
	size_t nspawns;                     /* 1.1: what it started, in order (none in a 1.0 record) */
	lm_activation_spawn spawns[LM_ACTIVATION_SPAWNS];
	uint64_t spawns_dropped;            /* 1.1: spawns past the ones kept */
} lm_activation;

/* The records of one directory, by pid; what lm_activation_fetch could not take, counted. */
#define LM_ACTIVATION_SKIPPED_KEPT 8
typedef struct {
	size_t count;
	lm_activation *items;
	size_t dropped;  /* records past the first LM_ACTIVATION_MAX_RECORDS (by pid): counted, not read */
	size_t nskipped; /* damaged or unreadable records: skipped, each said */
	char *skipped[LM_ACTIVATION_SKIPPED_KEPT]; /* the first ones' messages (which file, what is wrong) */
} lm_activation_list;

/* 1 when name is a record's file name: <pid>.json, the pid 1..9999999999 without leading zeros. */
int lm_activation_file_name_ok(const char *name);
/* Parse and check one record (text[0..len), at most LM_ACTIVATION_MAX_BYTES): every member of its
 * version, of the right type and within the shim's limits. source names it in messages ("VM 'a':
 * /path/123.json"). LM_EINVALID for a damaged record, LM_EUNSUPPORTED for another major version;
 * out->text is left NULL (see lm_activation_list_add). */
int lm_activation_parse(const char *source, const char *text, size_t len, lm_activation *out);
/* Parse text as the record in file (a name lm_activation_file_name_ok accepts, whose pid the record
 * must carry) and add it, with a copy of the text, in pid order. Nothing is added on failure. */
int lm_activation_list_add(lm_activation_list *list, const char *source, const char *file, const char *text,
    size_t len);
/* Every record in the guest directory remote_dir (other names are ignored: the shim's temporary
 * files, anything else), read in pid order: the first LM_ACTIVATION_MAX_RECORDS of at most
 * LM_ACTIVATION_MAX_BYTES each, the rest counted (out->dropped). A damaged or unreadable record is
 * skipped and said (out->nskipped, out->skipped): the others still count. LM_ENOTFOUND when the
 * directory is absent; more than LM_ACTIVATION_MAX_LISTED names is LM_ETOOLARGE. */
#define LM_ACTIVATION_MAX_LISTED 65536
int lm_activation_fetch(lm_ssh *ssh, const char *remote_dir, lm_activation_list *out);
/* Frees what the list holds (not the struct); empty afterwards. */
void lm_activation_list_dispose(lm_activation_list *list);

/* Where a workload's records go in the guest: HOME/.local/share/lume-metal/activation/NAME (name:
 * [A-Za-z0-9._-], not starting with '.'), made empty and owner-only (0700) by the first call; *dir
 * gets its path (free()). Under the bundle's directory, so rollback removes what is left there.
 * The folder a killed run left (run-*) goes with the next one made: its workload's group is gone,
 * or it never got one and is over 10 minutes old. */
#define LM_ACTIVATION_GUEST_DIR "activation"
/* In a run's record folder: the kill target of its workload's process group, written by the
 * wrapper the guest's shell runs (workload_session.c). The workload can rewrite it: a stop never
 * takes its target from it, only the next run's sweep asks whether it still answers (kill -0). */
#define LM_WORKLOAD_GROUP_FILE "process-group"
/* In the install directory: which of ~/.local and ~/.local/share the first install made (one a
 * line), so that rollback leaves the home as it was before the first enable. */
#define LM_GUEST_PARENTS_FILE ".parents-made"
int lm_activation_dir_make(lm_ssh *ssh, const char *home, const char *name, char **dir);
int lm_activation_dir_remove(lm_ssh *ssh, const char *dir); /* absent is fine */
/* cmd (a command line from lm_shim_command) with LUME_METAL_RECORD_DIR=dir set before it (free()). */
int lm_activation_command(const char *dir, const char *cmd, char **out);

/* ---- workload_records.c: what a workload's records say, for people ---- */
typedef struct {
	char **lines;  /* one per process that loaded the shim: what it asked, what it was told */
	size_t count;  /* processes that loaded the shim (records read) */
	size_t took;   /* of them, those that had an answer widened (lm_activation_took) */
	char *json;    /* the records, a JSON array ("[]" when none) */
	size_t dropped; /* records past the reader's limit: counted, not read */
	size_t nskipped; /* damaged or unreadable records, skipped */
	char **skipped;  /* NULL-terminated: the first of them said */
	char **stock_children; /* NULL-terminated: programs started with the shim that ran stock, and why */
} lm_workload_records;
/* Read dir's records (lm_activation_fetch) into r; nothing to dispose on failure. */
int lm_workload_records_read(lm_ssh *ssh, const char *dir, lm_workload_records *r);
void lm_workload_records_dispose(lm_workload_records *r);
/* *out: NULL when some process had its answers widened; else why no process loaded the shim (or
 * why it widened nothing), the likely cause first -- the program t, hardened or not, argv as run. */
int lm_workload_records_why_not(const lm_workload_records *r, const lm_guest_facts *g, const lm_run_target *t,
    int hardened, const char *const *argv, size_t argc, char **out);
/* After a run: res->record_dir's records into res -- one line per process that loaded the shim, the
 * records as JSON, or why none did (no_shim) -- for the program t (hardened or not), argv as run. */
int lm_workload_records_result(lm_ssh *ssh, const lm_guest_facts *g, const lm_run_target *t, int hardened,
    const char *const *argv, size_t argc, lm_run_result *res);
/* A run's result before it runs (exit status 255 until it has one), once opts (NULL: the defaults)
 * and argv are checked; `what` names the command in messages ("run", "local run"). */
int lm_run_result_new(const char *what, const lm_workload_options *opts, size_t argc, lm_run_result **out);

/* ---- workload_session.c: run's workload as `tart exec` runs one ---- */
/* opts (NULL: the defaults) as this library's version of the struct, the fields it lacks 0;
 * LM_EINVALID for an unknown version or values out of range. */
int lm_workload_options_copy(lm_workload_options *dst, const lm_workload_options *opts);
/* Version 3's fields of opts (NULL, or of an older version: the defaults): --resign-copy, and the
 * agent's ProcessType ("Interactive" unless set). */
int lm_workload_resign_copy(const lm_workload_options *opts);
const char *lm_workload_process_type(const lm_workload_options *opts);
/* cmd (a command line from lm_shim_command) run so that the guest first says the kill target of
 * its process group ("-PGID") on stdout (ESC ] lume-metal-group;TARGET BEL, which
 * lm_guest_workload_run cuts out) and writes it to record_dir/process-group, then execs it
 * (free()). */
int lm_workload_group_command(const char *record_dir, const char *cmd, char **out);
/* Run cmd in its own process group (recorded in res->record_dir) with o's input, pseudo-terminal
 * and signals, its output to ctx's on_output for vm; res->exit_status as a shell reports it. A
 * stop ends the group and the workload's processes that left it (found by their ancestry in the
 * guest's ps table). After a stop (res->stopped_by, res->stop_killed) LM_ECANCELED saying how the
 * workload ended and, when some may remain, their PIDs; LM_EREMOTE when processes of it are left
 * (the session then no longer asks should_cancel, so that what follows can clean up). */
int lm_guest_workload_run(lm_context *ctx, lm_ssh *ssh, const char *vm, const char *cmd, const lm_workload_options *o,
    lm_run_result *res);

/* 1 when the shim took in that process: its record shows an answer widened (a supportsFamily:
 * stock answered no and the shim yes, or a maxThreadgroupMemoryLength raised) -- the one rule of
 * "got the unlock" for run, --require-shim, agents, status, doctor and bench. */
int lm_activation_took(const lm_activation *a);
/* One line for people: "pid 123 /usr/local/bin/llama-server: asked Apple7→yes (stock no), Apple9→yes
 * (stock no); maxThreadgroupMemoryLength 64 KiB (stock 32 KiB)"; new string (free()). */
int lm_activation_summary(const lm_activation *a, char **out);
/* The JSON for --format json: {"pid", "ppid", "exe", "took", "summary", "record": the record as
 * written}. */
int lm_activation_json(const lm_activation *a, cJSON **out);

#endif
