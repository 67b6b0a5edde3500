/* lume-metal: results as JSON documents (docs/json-output.md, docs/json-output.schema.json).
 *
 * Every document has the same envelope — schema, command, ok, exit_code, dry_run, error — and
 * then the members of its command. The lume-metal tool prints exactly these documents with
 * --format json; an embedder gets the same text for the same result. Each function writes a
 * NUL-terminated document (indented, one member per line, trailing newline) to *out, freed with
 * lm_free().
 */
#ifndef LUME_METAL_OUTPUT_H
#define LUME_METAL_OUTPUT_H

#include <stddef.h>

#include "bench.h"
#include "common.h"
#include "doctor.h"
#include "flow.h"
#include "local.h"
#include "local_image.h"
#include "prefs.h"
#include "profile.h"
#include "selftest.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the documents' layout ("schema" in every document). */
#define LM_JSON_SCHEMA 2

typedef struct {
	const char *command;       /* "enable", "status", "probe", "run", "rollback", "profile list",
	                              "profile show", "profile lint", "host enable", "host disable",
	                              "host status", "forget-host", "bench", "bench compare", or the command word as given */
	int exit_code;             /* what the program exits with */
	int dry_run;
	int error_code;            /* 0, or the lm_error_code of a failure */
	const char *error_message; /* with error_code: what went wrong */
	const char *hint;          /* with error_code: the caller's advice, or NULL */
} lm_json_envelope;

/* A failure before any result: the envelope alone. */
LM_EXTERN(int) lm_json_error(const lm_json_envelope *env, char **out);

/* enable, status, probe, rollback: each failed VM's error carrying advice(data, vm)'s hint about
 * that VM (advice NULL: no hints). */
typedef const char *(*lm_outcome_advice_fn)(void *data, const lm_vm_outcome *vm);
LM_EXTERN(int) lm_flow_result_to_json_advised(const lm_flow_result *result, lm_outcome_advice_fn advice, void *data,
    const lm_json_envelope *env, char **out);

/* run (lm_flow_run_workload): the guest command's exit status (255 when result is NULL), its output
 * (invalid UTF-8 replaced by U+FFFD) and `activation` -- the record directory, the children
 * policy, one line per process that loaded the shim, why none did (no_shim), and the records
 * themselves (docs/activation-format.md); null when result is NULL or the workload did not run. */
LM_EXTERN(int) lm_run_result_to_json(const char *vm, const lm_run_result *result, const char *out_bytes,
    size_t out_len, const char *err_bytes, size_t err_len, const lm_json_envelope *env, char **out);

/* host enable|disable|status; info may be NULL (a failure before the preference was read), and
 * byhost (the preference's -currentHost value, `host_preference.byhost`) NULL when not read. */
LM_EXTERN(int) lm_host_pref_status_to_json(const lm_host_pref_info *info, const lm_host_pref_byhost *byhost,
    const lm_json_envelope *env, char **out);

/* host status: the same, and `vms`, the enabled VMs with the mode each was enabled with, whether it
 * needed the preference and whether the preference is kept for it (lm_host_pref_vms). */
LM_EXTERN(int) lm_host_status_to_json(const lm_host_pref_info *info, const lm_host_pref_byhost *byhost,
    lm_host_pref_vm *const *vms, size_t nvms, const lm_json_envelope *env, char **out);

/* selftest: `dir`, `simulator`, `checks` (each `name`, `question`, `assumed`, `seen`, `verdict`,
 * `raw`) and `summary` (docs/selftest.md). */
LM_EXTERN(int) lm_selftest_result_to_json(const lm_selftest_result *r, const lm_json_envelope *env, char **out);

/* profile list (the built-in profiles), show, lint. */
LM_EXTERN(int) lm_profile_list_to_json(const lm_json_envelope *env, char **out);
LM_EXTERN(int) lm_profile_show_to_json(const lm_profile *profile, int builtin, int is_default,
    const lm_json_envelope *env, char **out);
LM_EXTERN(int) lm_profile_lint_to_json(const lm_profile *profile, const char *source, int host_family,
    const lm_profile_lint_result *lint, const lm_json_envelope *env, char **out);

/* local install (result NULL: a failure before anything was installed); local env: the variables. */
LM_EXTERN(int) lm_local_install_to_json(const lm_local_install_result *result, const lm_json_envelope *env, char **out);
LM_EXTERN(int) lm_local_env_to_json(const lm_local_env *local, const lm_json_envelope *env, char **out);

/* bench: the record's folder, its tests and what llama.cpp selected per arm (docs/bench.md);
 * bench compare: the comparison's rows (comparison NULL: none, after a failure). */
LM_EXTERN(int) lm_bench_result_to_json(const lm_bench_result *result, const lm_json_envelope *env, char **out);
LM_EXTERN(int) lm_bench_compare_to_json(const lm_bench_comparison *comparison, const lm_json_envelope *env,
    char **out);
/* JSON Lines (--format jsonl): one step event as one line — schema, event "step", command, vm,
 * step, state (started, done, failed, waiting), seconds, detail, time (`at`, epoch seconds) —
 * newline-terminated. */
LM_EXTERN(int) lm_step_event_to_json(const lm_step_event *event, const char *command, double at, char **out);
/* Any document above as one line (the final line of a JSON Lines stream). */
LM_EXTERN(int) lm_json_one_line(const char *document, char **out);

/* doctor: checks[] (vm, check, level, message, hint) and counts; advice (may be NULL) gives the
 * caller's hint for a check, or NULL. */
typedef const char *(*lm_doctor_advice_fn)(void *data, const lm_doctor_check *check);
LM_EXTERN(int) lm_doctor_to_json(const lm_doctor_result *result, lm_doctor_advice_fn advice, void *data,
    const lm_json_envelope *env, char **out);

/* version: `version`, the program's (the caller's own, e.g. the CLI's LUME_METAL_VERSION), and
 * `library_version`, lm_version() of the library it runs with (the two differ only when a program
 * runs with another build of the shared library). */
LM_EXTERN(int) lm_version_to_json(const char *program_version, const lm_json_envelope *env, char **out);

/* forget-host. */
LM_EXTERN(int) lm_forget_host_to_json(const char *vm, int forgotten, const char *state_dir,
    const lm_json_envelope *env, char **out);

/* local probe|status|agent: the probe's document with "machine" (this machine's outcome and what it
 * says of itself) in place of "vms" (docs/json-output.md, "local"). */
LM_EXTERN(int) lm_local_result_to_json(const lm_local_result *result, const lm_json_envelope *env, char **out);

#ifdef __cplusplus
}
#endif
#endif
