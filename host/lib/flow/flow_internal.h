/* Internal: the pieces the flow commands share (bundle, guest operations, VM journal entries). */
#ifndef LM_FLOW_INTERNAL_H
#define LM_FLOW_INTERNAL_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "lume-metal/flow.h"
#include "lume-metal/ssh.h"
#include "clock.h"
#include "context_internal.h"
#include "state.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

/* Where the guest keeps its files, relative to its home. */
#define LM_GUEST_BASE ".local/share/lume-metal"

/* Where Homebrew installs programs: Apple silicon, then Intel. Put on the workload's PATH. */
#define LM_GUEST_HOMEBREW_PATH "/opt/homebrew/bin:/usr/local/bin"

/* Which value of the host preference a running VM got. The host side reads it when the VM
 * process starts, which is some seconds (firmware start-up) before the guest kernel boots; all we
 * can see is the kernel's boot time, and what this tool started itself. See docs/lume-metal.md,
 * "When a VM is restarted". */
typedef enum {
	LM_VM_LEVEL_UNSURE = 0, /* it may have read either value */
	LM_VM_LEVEL_BEFORE,     /* its guest kernel booted before the change: it read the old value */
	LM_VM_LEVEL_AFTER       /* this tool started it after the change, or it booted later than
	                           the change plus margin: it read the new value */
} lm_vm_level;

/* The one rule. changed_at: when the preference changed (0: unknown); boot_time: the guest's
 * kern.boottime (0: unknown); started_at: when this tool last asked for the VM to be started
 * (from the journal; 0: never); margin: seconds a VM may take from its start to its kernel's boot
 * (lm_options.boot_margin). All epoch seconds with fractions. */
lm_vm_level lm_vm_level_of(double changed_at, double boot_time, double started_at, double margin);

/* enable and status: a running VM must be restarted unless it certainly read the preference as
 * this tool set it (pref->recorded: this tool changed it). Errs toward restarting. */
int lm_vm_restart_needed(const lm_host_pref_info *pref, double boot_time, double started_at, double margin);

/* enable --jobs: VMs handled at once. */
#define LM_FLOW_MAX_JOBS 64

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
/* Read one file, checking size and SHA-256 against the manifest. */
int lm_bundle_read(const lm_bundle *b, const lm_bundle_file *f, void **data, size_t *len);
void lm_bundle_free(lm_bundle *b);
/* ctx's bundle_dir, when set: its manifest and every file checked, before any VM is touched. */
int lm_bundle_check(lm_context *ctx);

/* ---- guest.c: operations on one guest over SSH ---- */

int lm_guest_facts_read(lm_ssh *ssh, lm_guest_facts *facts, char *current, size_t current_len);
/* The facts command's output (modified in place: lines are cut at '\n'; NULL reads as empty);
 * `err` is its stderr, quoted when the output says nothing usable. Split out of the read so that
 * the parse of what the guest prints can be tested and fuzzed without a guest. */
int lm_guest_facts_parse(char *out, const char *err, lm_guest_facts *facts, char *current, size_t current_len);
/* Installed and every file matches? (1/0) */
int lm_guest_bundle_verify(lm_ssh *ssh, const lm_guest_facts *facts, const lm_bundle *b, int *ok);
/* Install atomically (staging dir, verified uploads, rename, `current` switched atomically),
 * removing older versions. *uploaded counts the files. */
int lm_guest_bundle_install(lm_ssh *ssh, const lm_guest_facts *facts, const lm_bundle *b, int *uploaded);
/* Its two shell commands (the same under zsh and sh): a fresh staging directory; the staged
 * bundle into place, `current` switched, every other entry gone. */
int lm_guest_install_prepare_command(const lm_guest_facts *facts, const char *stage, char **out);
int lm_guest_install_switch_command(const lm_guest_facts *facts, const lm_bundle *b, const char *stage, char **out);
int lm_guest_remove_all(lm_ssh *ssh, const lm_guest_facts *facts);

/* What the shim needs on a command line: injection variable and the LUME_METAL_* values. */
typedef struct {
	char injection[64];
	char shim_path[PATH_MAX];
	char probe_path[PATH_MAX];
	size_t nenv;
	lm_env_entry env[LM_PROFILE_ENV_MAX];
} lm_shim_env;

int lm_shim_env_make(lm_shim_env *se, const lm_guest_facts *facts, const char *injection,
    const char *shim, const char *probe, const lm_profile *profile);
/* The same for the Tart image's own shim (LM_TART_SHIM_PATH, TART_METAL_* as its guest agent
 * sets them), the probe still ours. */
int lm_shim_env_tart(lm_shim_env *tart, const lm_shim_env *se);
/* `env VAR=... argv...` quoted for the guest's shell. with_shim: 0 nothing before argv;
 * LM_SHIM_ALL the shim's variables and the bundle's PATH; LM_SHIM_PATH_ONLY the PATH alone (what
 * the workload's name is looked up in, without loading the shim). */
#define LM_SHIM_ALL 1
#define LM_SHIM_PATH_ONLY 2
int lm_shim_command(const lm_shim_env *se, int with_shim, const char *const *argv, size_t argc, char **out);
/* Run the probe's --report stock or shimmed. *diag gets the shim's diagnostic (stderr) if any. */
int lm_guest_probe(lm_ssh *ssh, const lm_shim_env *se, int shimmed, lm_report **out,
    char *diag, size_t diag_len);

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
/* "reduction pass, matrix pass, bfloat16 pass; threadgroup memory 32768 bytes". */
void lm_exercise_summary(const lm_report *r, char *buf, size_t len);
/* Run it into o->exercised, check it against profile (NULL: no check), add the step. */
int lm_flow_step_exercise(lm_context *ctx, lm_ssh *ssh, const lm_shim_env *se, const lm_profile *profile,
    lm_vm_outcome *o);
/* The same step over results already in o->exercised (read by lm_guest_confirm). */
int lm_flow_step_exercised(lm_context *ctx, const lm_profile *profile, lm_vm_outcome *o);

/* ---- sip.c: the programs System Integrity Protection keeps the shim away from ---- */

/* csrutil status's first line -> "enabled", "disabled", "custom" ("unknown (Custom
 * Configuration)"), or "" for anything else. */
void lm_sip_status_parse(const char *line, char *out, size_t len);
/* 1 when path is in a directory SIP protects (/bin, /sbin, /usr/bin, /usr/sbin, /usr/libexec,
 * /System, except /System/Volumes/Data). */
int lm_sip_protected_path(const char *path);

/* What `run` would start in the guest: the program found as env finds it, the file behind it, and
 * for a script its #! interpreter. Empty strings for what does not apply. */
typedef struct {
	char program[PATH_MAX];
	char program_real[PATH_MAX];
	char interpreter[PATH_MAX];
	char interpreter_real[PATH_MAX];
} lm_run_target;

/* Parse the guest-side resolver's key=value lines (unknown keys ignored). */
void lm_run_target_parse(const char *output, lm_run_target *t);
/* Look up argv's program in the guest, with the PATH the run gives it. */
int lm_guest_run_target(lm_ssh *ssh, const lm_shim_env *se, const char *const *argv, size_t argc,
    lm_run_target *t);
/* The warning for running t with the shim in a guest whose SIP state is sip, or 0 (returns 1)
 * when the shim can reach the program. name: the program as the user gave it. */
int lm_sip_warning(const lm_guest_facts *facts, const char *name, const lm_run_target *t, char *buf, size_t len);

/* ---- inspect.c: an enabled VM as the journal records it ---- */

/* What the journal says about an enabled VM, enough to reach its installed bundle. */
typedef struct {
	int known;
	char status[32];
	char profile_name[LM_PROFILE_NAME_MAX + 1];
	lm_profile *profile;
	char injection[64], shim[256], probe[256], bundle_id[96];
	lm_guest_facts facts;
	double started_at;       /* when this tool last started the VM; 0: never */
	lm_report *stock, *shimmed, *exercised;
	cJSON *agents;           /* a copy of the entry's "agents" array (agent.c), or NULL */
} lm_vm_record;

/* Read the journal's record of VM name (r->known 0 when it has none); dispose frees its contents. */
int lm_vm_record_load(lm_context *ctx, const char *name, lm_vm_record *r);
void lm_vm_record_dispose(lm_vm_record *r);
/* An enabled VM, running, reached over SSH (*ssh), its guest facts in o->guest, with its shim
 * environment (*se) from the record r loaded here. */
int lm_flow_open_enabled(lm_context *ctx, lm_vm_manager *vmm, lm_vm_outcome *o, lm_vm_record *r, lm_ssh **ssh,
    lm_shim_env *se);

/* ---- agent_plist.c, agent.c: per-workload LaunchAgents (agent.h) ---- */

/* Where agents and their logs live in the guest, relative to its home. */
#define LM_AGENT_DIR "Library/LaunchAgents"
#define LM_AGENT_LOG_DIR "Library/Logs/lume-metal"

typedef struct {
	char plist[LM_AGENT_PATH_MAX];   /* HOME/Library/LaunchAgents/LABEL.plist */
	char out_log[LM_AGENT_PATH_MAX]; /* HOME/Library/Logs/lume-metal/LABEL.out.log */
	char err_log[LM_AGENT_PATH_MAX];
} lm_agent_paths_t;

/* The agent's guest paths; LM_EINVALID when they would not fit. */
int lm_agent_paths(const char *home, const char *label, lm_agent_paths_t *paths);
/* The agent's plist (XML, NUL-terminated, free()): Label, ProgramArguments (program — the
 * workload's resolved absolute path — then spec's arguments after argv[0]), EnvironmentVariables
 * (the shim's injection variable, the profile's LUME_METAL_*, a PATH with the bundle's tools and
 * Homebrew's), StandardOutPath and StandardErrorPath, KeepAlive and RunAtLoad when asked. */
int lm_agent_plist_build(const lm_agent_spec *spec, const char *program, const lm_shim_env *se, const char *home,
    char **xml, size_t *len);
/* o->agents from a journal entry's "agents" array, with launchd's state when ssh is given. */
int lm_flow_agents_status(lm_ssh *ssh, const cJSON *agents, lm_vm_outcome *o);
/* Boot the agents a journal entry lists (its "agents" array) out of launchd and remove their plists
 * (rollback, before the guest files: the agents name the shim); `labels` gets their labels, ", "
 * between them. The entry is left as it is. */
int lm_guest_agents_remove_recorded(lm_ssh *ssh, const lm_guest_facts *facts, const cJSON *agents, char *labels,
    size_t len);

/* ---- journal.c: per-VM entries ---- */

/* When this tool last asked for the VM to be started (epoch seconds; docs/state-format.md). */
#define LM_JOURNAL_VM_STARTED_AT "vm_started_at"

/* Record a VM's facts / bundle / last probe. */
void lm_journal_set_string(cJSON *obj, const char *key, const char *value);
void lm_journal_set_number(cJSON *obj, const char *key, double value);
const char *lm_journal_string(const cJSON *obj, const char *key);
double lm_journal_number(const cJSON *obj, const char *key);
int lm_journal_store_report(cJSON *vm, const char *key, const lm_report *report);
int lm_journal_load_report(const cJSON *vm, const char *key, lm_report **out);
void lm_journal_store_facts(cJSON *vm, const lm_guest_facts *facts);
/* Read back what lm_journal_store_facts wrote; a value too long for its field is LM_ECORRUPT (never
 * cut), an out-of-range boot time reads as unknown (0). */
int lm_journal_load_facts(const cJSON *vm, lm_guest_facts *facts);
/* A string member into a fixed field ("" when absent); too long is LM_ECORRUPT naming the limit. */
int lm_journal_copy_string(const cJSON *obj, const char *key, char *out, size_t len);

/* ---- journal.c: each step of a VM's outcome, timed and reported (on_step) ---- */
/* A step starts: 0, or LM_ECANCELED when the embedder asks to stop (the operation then fails
 * like on any error). *started gets the time to pass to lm_step_add. */
int lm_step_begin(lm_context *ctx, lm_vm_outcome *o, const char *name, double *started);
/* A step is done (the one begun under that name, or a new one); `name` must be static. */
void lm_step_add(lm_context *ctx, lm_vm_outcome *o, const char *name, double started, const char *fmt, ...)
    LM_PRINTF(5, 6);
/* Set o->rc and o->message from the last error, prefixed with the VM's name; a step begun and
 * not done is marked failed (and reported). */
int lm_outcome_fail(lm_context *ctx, lm_vm_outcome *o, int rc);
/* Replace / extend o->message (printf-style). */
void lm_outcome_message(lm_vm_outcome *o, const char *fmt, ...) LM_PRINTF(2, 3);
void lm_outcome_append(lm_vm_outcome *o, const char *fmt, ...) LM_PRINTF(2, 3);

/* Allocate one outcome per named VM (names validated and normalised). */
int lm_flow_open_outcomes(lm_flow_result *result, const char *const *vms, size_t n);
/* Every VM failed for the same reason (the last error), before any was handled. */
int lm_flow_fail_all(lm_context *ctx, lm_flow_result *result, int rc);
/* One outcome per VM the state journal knows. */
int lm_flow_open_known(lm_context *ctx, lm_flow_result *result);
/* 0 when every VM succeeded; else the first failure's code and message. */
int lm_flow_summary_rc(const lm_flow_result *result);

/* ---- gone.c: VMs their manager no longer knows ---- */
/* The VM manager the journal recorded for `vm` ("lume-api", ...; "" when none) into buf. */
int lm_flow_journal_manager(lm_context *ctx, const char *vm, char *buf, size_t size);
/* Drop `vm`'s journal entry and known_hosts pin (dry run: only say whether there is an entry),
 * with one notice; *journal and *pin say what was (or would be) dropped. */
int lm_flow_forget_vm(lm_context *ctx, const char *vm, int *journal, int *pin);
/* o is a VM found gone: result ok, `gone`, the message saying what was forgotten. */
void lm_flow_gone_outcome(lm_vm_outcome *o, int journal, int pin, int dry_run);
/* Every VM the journal or known_hosts remember, other than `except`, that the manager says does
 * not exist, is forgotten; with `report`, one outcome each is appended to it. */
int lm_flow_sweep_gone(lm_context *ctx, lm_vm_manager *vmm, const char *const *except, size_t n,
    lm_flow_result *report);
/* lm_flow_sweep_gone() except the VMs of `result`, never failing (not in a dry run): enable and
 * rollback keep the journal and the preference's bookkeeping to VMs that exist. */
void lm_flow_sweep_others(lm_context *ctx, lm_vm_manager *vmm, const lm_flow_result *result);

/* Connect to a running, ready VM's guest. */
int lm_flow_connect(lm_context *ctx, const char *vm, const lm_vm_info *info, lm_ssh **out);

/* Test hooks (docs/testing.md), in test builds only (LM_TEST_HOOKS: the tests' library and tool,
 * never the installed ones): LUME_METAL_TEST_KILL_AT=<step> makes the process SIGKILL itself
 * when it reaches that step, to prove that every step is crash-safe;
 * LUME_METAL_TEST_STOP_AT=<step> makes it SIGSTOP itself there (the first time only), so that a
 * test can act while it holds what it holds at that step (its VM lock) and signal it at a known
 * point. */
#ifdef LM_TEST_HOOKS
void lm_flow_test_kill_point(const char *step);
#else
#define lm_flow_test_kill_point(step) ((void)0)
#endif

#endif
