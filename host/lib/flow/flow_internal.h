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

/* A guest booted more than this many seconds before the preference changed runs at the old
 * level. kern.boottime has whole seconds; host and guest clocks agree to well under this. */
#define LM_BOOT_TOLERANCE 1.0

/* The guest booted before the recorded change of the preference, so it runs at the level it had
 * before (changed_at 0 or boot_time unknown: no). One rule for enable, status and rollback. */
int lm_booted_before(long long boot_time, double changed_at);

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

/* ---- guest.c: operations on one guest over SSH ---- */

int lm_guest_facts_read(lm_ssh *ssh, lm_guest_facts *facts, char *current, size_t current_len);
/* Installed and every file matches? (1/0) */
int lm_guest_bundle_verify(lm_ssh *ssh, const lm_guest_facts *facts, const lm_bundle *b, int *ok);
/* Install atomically (staging dir, verified uploads, rename, `current` switched atomically),
 * removing older versions. *uploaded counts the files. */
int lm_guest_bundle_install(lm_ssh *ssh, const lm_guest_facts *facts, const lm_bundle *b, int *uploaded);
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
/* `env VAR=... argv...` quoted for the guest's shell; shim NULL: no shim variables. */
int lm_shim_command(const lm_shim_env *se, int with_shim, const char *const *argv, size_t argc, char **out);
/* Run the probe's --report stock or shimmed. *diag gets the shim's diagnostic (stderr) if any. */
int lm_guest_probe(lm_ssh *ssh, const lm_shim_env *se, int shimmed, lm_report **out,
    char *diag, size_t diag_len);

/* ---- journal.c: per-VM entries ---- */

/* Record a VM's facts / bundle / last probe. */
void lm_journal_set_string(cJSON *obj, const char *key, const char *value);
void lm_journal_set_number(cJSON *obj, const char *key, double value);
const char *lm_journal_string(const cJSON *obj, const char *key);
double lm_journal_number(const cJSON *obj, const char *key);
int lm_journal_store_report(cJSON *vm, const char *key, const lm_report *report);
int lm_journal_load_report(const cJSON *vm, const char *key, lm_report **out);
void lm_journal_store_facts(cJSON *vm, const lm_guest_facts *facts);
void lm_journal_load_facts(const cJSON *vm, lm_guest_facts *facts);

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

/* Connect to a running, ready VM's guest. */
int lm_flow_connect(lm_context *ctx, const char *vm, const lm_vm_info *info, lm_ssh **out);

/* Test hook (docs/testing.md), in test builds only (LM_TEST_HOOKS: the tests' library and tool,
 * never the installed ones): LUME_METAL_TEST_KILL_AT=<step> makes the process SIGKILL itself
 * when it reaches that step, to prove that every step is crash-safe. */
#ifdef LM_TEST_HOOKS
void lm_flow_test_kill_point(const char *step);
#else
#define lm_flow_test_kill_point(step) ((void)0)
#endif

#endif
