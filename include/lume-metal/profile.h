/* lume-metal: capability profiles (docs/profile-format.md).
 *
 * A profile says which answers the shim changes, which host preference it needs, what the probe
 * must confirm, and where it was validated. Built-in profiles ship in the tool; users may pass a file.
 */
#ifndef LUME_METAL_PROFILE_H
#define LUME_METAL_PROFILE_H

#include "common.h"

#include <stddef.h>
#include <stdint.h>

#include "report.h"
#include "workload.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lm_profile lm_profile;

/* The longest profile name (a parsed profile's name never exceeds it). */
#define LM_PROFILE_NAME_MAX 64

/* The value of a host preference, typed as the plist will hold it. */
typedef enum { LM_PREF_BOOL, LM_PREF_INTEGER, LM_PREF_STRING } lm_pref_type;
typedef struct {
	lm_pref_type type;
	int boolean;        /* LM_PREF_BOOL */
	long long integer;  /* LM_PREF_INTEGER */
	const char *string; /* LM_PREF_STRING */
} lm_pref_value;

typedef struct {
	const char *domain; /* com.apple.gpusw.ParavirtualizedGraphics */
	const char *key;    /* ForceUnrestrictedDeviceFeatureLevel */
	lm_pref_value value;/* true */
} lm_pref_setting;

typedef struct {
	int apple_family_max;                  /* 1001..1999 */
	uint64_t max_threadgroup_memory;       /* floor */
	int has_recommended_working_set_size;
	uint64_t recommended_working_set_size; /* floor, when set */
} lm_profile_capabilities;

/* Parse from memory; `source` names the input in messages ("profile.json: $.x: ..."). */
LM_EXTERN(int) lm_profile_parse(lm_profile **out, const char *json, size_t len, const char *source);
LM_EXTERN(int) lm_profile_load_file(lm_profile **out, const char *path);
/* A built-in profile by name, or a file when `name_or_path` contains '/' or ends in ".json". */
LM_EXTERN(int) lm_profile_resolve(lm_profile **out, const char *name_or_path);
LM_EXTERN(int) lm_profile_builtin(lm_profile **out, const char *name);
LM_EXTERN(size_t) lm_profile_builtin_count(void);
LM_EXTERN(const char *) lm_profile_builtin_name(size_t index);
/* The default profile's name (the published, validated one). */
LM_EXTERN(const char *) lm_profile_default_name(void);

LM_EXTERN(void) lm_profile_free(lm_profile *profile);

LM_EXTERN(const char *) lm_profile_name(const lm_profile *profile);
LM_EXTERN(const char *) lm_profile_description(const lm_profile *profile);
LM_EXTERN(int) lm_profile_validated(const lm_profile *profile); /* 1 when it lists validations */
LM_EXTERN(const lm_profile_capabilities *) lm_profile_caps(const lm_profile *profile);
LM_EXTERN(const lm_pref_setting *) lm_profile_host_preference(const lm_profile *profile);

/* Canonical JSON (stable key order, 2-space indent, trailing newline); free with lm_free(). */
LM_EXTERN(int) lm_profile_to_json(const lm_profile *profile, char **out);

/* The shim's environment (LUME_METAL_* contract, reference/lume.md). */
#define LM_PROFILE_ENV_MAX 4
typedef struct {
	const char *name; /* "LUME_METAL_APPLE_FAMILY_MAX" */
	char value[32];   /* "1009" */
} lm_env_entry;
LM_EXTERN(int) lm_profile_render_env(const lm_profile *profile, lm_env_entry out[LM_PROFILE_ENV_MAX], size_t *count);

/* Check the profile's expectations against the stock and shimmed reports. 0 when all hold;
 * otherwise LM_EUNSUPPORTED with a message listing every expectation that failed. */
LM_EXTERN(int) lm_profile_check(const lm_profile *profile, const lm_report *stock, const lm_report *shimmed);
/* A NULL report is not checked (e.g. before the shimmed probe has run). */

/* The largest profile accepted, from memory or from a file. */
#define LM_PROFILE_MAX_BYTES (1024 * 1024)

/* What the probe must confirm, one expectation at a time (stock side first, then shimmed; inside
 * a side: families in report order, then the minimums, then shim_active). */
typedef enum {
	LM_EXPECT_FAMILY,                  /* family answered `value` (1 or 0) */
	LM_EXPECT_MIN_THREADGROUP_MEMORY,  /* max_threadgroup_memory >= value */
	LM_EXPECT_MIN_WORKING_SET_SIZE,    /* recommended_max_working_set_size >= value */
	LM_EXPECT_SHIM_ACTIVE              /* shim_active == value (1 or 0) */
} lm_expectation_kind;
typedef struct {
	int shimmed;              /* 0: applies to the stock report; 1: to the shimmed report */
	lm_expectation_kind kind;
	int family;               /* LM_EXPECT_FAMILY: the MTLGPUFamily value */
	uint64_t value;
} lm_profile_expectation;
LM_EXTERN(size_t) lm_profile_expectation_count(const lm_profile *profile);
LM_EXTERN(int) lm_profile_expectation_get(const lm_profile *profile, size_t index, lm_profile_expectation *out);

/* Where the profile was validated (validated_on). Strings belong to the profile. */
typedef struct {
	const char *chip;      /* "M1 Ultra" */
	const char *host_os;   /* "macOS 26.6.1" */
	const char *guest_os;  /* "macOS 26.5.2" */
	const char *const *workloads;
	size_t workload_count;
	const char *evidence;
} lm_profile_validation;
LM_EXTERN(size_t) lm_profile_validation_count(const lm_profile *profile);
LM_EXTERN(int) lm_profile_validation_get(const lm_profile *profile, size_t index, lm_profile_validation *out);

/* What the shim would answer with this profile on top of `stock` (Apple families 1001..ceiling
 * answered true, the limits raised to the floors, shim_active set; the device name and the
 * families outside the Apple range unchanged). Free with lm_report_free(). */
LM_EXTERN(int) lm_profile_apply(const lm_profile *profile, const lm_report *stock, lm_report **out);

/* The linter: a profile's effect on the stock paravirtual answers and what to be careful about.
 * host_family is the host's own Apple family value (1007 for an M1), or 0 when unknown. */
typedef enum { LM_LINT_NOTE, LM_LINT_WARNING } lm_lint_level;
typedef struct {
	lm_lint_level level;
	const char *code;     /* stable id: "threadgroup-memory-beyond-families", "not-validated", ... */
	char message[384];
} lm_lint_item;
#define LM_LINT_MAX 24
typedef struct {
	lm_workload_flags stock;   /* the stock paravirtual device */
	lm_workload_flags shimmed; /* the same device with this profile */
	size_t count;
	size_t warnings;
	lm_lint_item items[LM_LINT_MAX];
} lm_profile_lint_result;
LM_EXTERN(int) lm_profile_lint(const lm_profile *profile, int host_family, lm_profile_lint_result *out);

#ifdef __cplusplus
}
#endif
#endif
