/* Internal: the report's fields, for the profile module (applying a profile to answers). */
#ifndef LM_REPORT_INTERNAL_H
#define LM_REPORT_INTERNAL_H

#include "family_internal.h"
#include "lume-metal/exercise.h"
#include "lume-metal/report.h"

#define LM_REPORT_MAX_BYTES (1024 * 1024)
#define LM_REPORT_MAX_LINE 4096
#define LM_REPORT_MAX_UNKNOWN 256

struct lm_report {
	char *device;
	signed char family[LM_FAMILY_COUNT]; /* 1, 0, or -1 when the report does not carry it */
	uint64_t max_threadgroup_memory;
	uint64_t recommended_max_working_set_size;
	int has_unified_memory;
	int shim_active;
	char *probe_version; /* NULL when absent */
	char *shim_version;  /* NULL when absent */
	signed char exercise[LM_EXERCISE_COUNT];  /* lm_exercise_result; LM_EXERCISE_NOT_RUN when absent */
	char *exercise_message[LM_EXERCISE_COUNT]; /* fail/error text; NULL when none */
	uint64_t exercise_us;   /* the exercise's own time on the guest's monotonic clock (exercise_us=) */
	int has_exercise_us;    /* 0: the probe did not say (older than issue 37) */
};

/* An empty report (no family carried, device ""). */
lm_report *lm_report_alloc(void);

#endif
