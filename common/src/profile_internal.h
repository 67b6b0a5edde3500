/* Internal: the parsed profile. */
#ifndef LM_PROFILE_INTERNAL_H
#define LM_PROFILE_INTERNAL_H

#include "family_internal.h"
#include "lume-metal/exercise.h"
#include "lume-metal/profile.h"

typedef struct {
	int present;                          /* the side appears in the profile */
	signed char family[LM_FAMILY_COUNT];  /* 1, 0, or -1 when not expected */
	int has_min_threadgroup_memory;
	uint64_t min_threadgroup_memory;
	int has_min_working_set_size;
	uint64_t min_working_set_size;
	int shim_active;                      /* 1, 0, or -1 when not expected */
} lm_expect_side;

typedef struct {
	char *chip;
	char *host_os;
	char *guest_os;
	char **workloads;
	size_t workload_count;
	char *evidence;
} lm_validation;

struct lm_profile {
	char *name;
	char *description;
	lm_profile_capabilities caps;
	char *pref_domain;
	char *pref_key;
	char *pref_string;
	lm_pref_setting pref;                 /* points at the strings above */
	lm_expect_side expect[2];             /* [0] stock, [1] shimmed */
	signed char exercise_expect[LM_EXERCISE_FEATURES]; /* lm_exercise_expect, per feature */
	lm_validation *validated;
	size_t validated_count;
};

/* Built-in profile sources, generated at build time from the JSON files in common/profiles. */
typedef struct {
	const char *name;   /* "published" */
	const char *file;   /* "published.json" */
	const char *data;
	size_t len;
} lm_builtin_profile_source;
extern const lm_builtin_profile_source lm_builtin_profile_sources[];
extern const size_t lm_builtin_profile_source_count;

#endif
