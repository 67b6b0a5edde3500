/* lume-metal: capability profiles (docs/profile-format.md).
 *
 * A profile says which answers the shim changes, which host preference it needs, what the probe
 * must confirm, and where it was validated. Built-in profiles ship in the tool; users may pass a file.
 */
#ifndef LUME_METAL_PROFILE_H
#define LUME_METAL_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "lume-metal/report.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lm_profile lm_profile;

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
int lm_profile_parse(lm_profile **out, const char *json, size_t len, const char *source);
int lm_profile_load_file(lm_profile **out, const char *path);
/* A built-in profile by name, or a file when `name_or_path` contains '/' or ends in ".json". */
int lm_profile_resolve(lm_profile **out, const char *name_or_path);
int lm_profile_builtin(lm_profile **out, const char *name);
size_t lm_profile_builtin_count(void);
const char *lm_profile_builtin_name(size_t index);
/* The default profile's name (the published, validated one). */
const char *lm_profile_default_name(void);

void lm_profile_free(lm_profile *profile);

const char *lm_profile_name(const lm_profile *profile);
const char *lm_profile_description(const lm_profile *profile);
int lm_profile_validated(const lm_profile *profile); /* 1 when it lists validations */
const lm_profile_capabilities *lm_profile_caps(const lm_profile *profile);
const lm_pref_setting *lm_profile_host_preference(const lm_profile *profile);

/* Canonical JSON (stable key order, 2-space indent, trailing newline); free with lm_free(). */
int lm_profile_to_json(const lm_profile *profile, char **out);

/* The shim's environment (LUME_METAL_* contract, reference/lume.md). */
#define LM_PROFILE_ENV_MAX 4
typedef struct {
	const char *name; /* "LUME_METAL_APPLE_FAMILY_MAX" */
	char value[32];   /* "1009" */
} lm_env_entry;
int lm_profile_render_env(const lm_profile *profile, lm_env_entry out[LM_PROFILE_ENV_MAX], size_t *count);

/* Check the profile's expectations against the stock and shimmed reports. 0 when all hold;
 * otherwise LM_EUNSUPPORTED with a message listing every expectation that failed. */
int lm_profile_check(const lm_profile *profile, const lm_report *stock, const lm_report *shimmed);

#ifdef __cplusplus
}
#endif
#endif
