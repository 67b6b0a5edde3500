/* Internal: the exercise results' pieces the report and profile modules call (exercise.c). */
#ifndef LM_EXERCISE_INTERNAL_H
#define LM_EXERCISE_INTERNAL_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "json.h"
#include "lume-metal/exercise.h"
#include "text.h"

/* "simdgroup_reduction" -> LM_EXERCISE_SIMDGROUP_REDUCTION; -1 for a name this build does not know. */
int lm_exercise_index(const char *name, size_t len);
/* A line's value: "pass", "fail", "fail: MESSAGE", "error: MESSAGE" -> result, and where the
 * message starts (len when none). -1 for anything else. */
int lm_exercise_parse_value(const char *v, size_t n, lm_exercise_result *result, size_t *message_at);
/* The report's exercise lines, values through escape(). */
void lm_exercise_lines(lm_buf *b, const lm_report *r, void (*escape)(lm_buf *, const char *));
/* The report's "exercise" member, or NULL when it has no exercise (or on allocation failure). */
cJSON *lm_exercise_json(const lm_report *r);
int lm_exercise_from_json(lm_report *r, const cJSON *doc);
void lm_exercise_free(lm_report *r);

/* The profile's expectations.exercise. */
int lm_exercise_parse_expectations(signed char expect[LM_EXERCISE_FEATURES], const cJSON *obj, const char *src,
    const lm_json_path *path);
void lm_exercise_default_expectations(signed char expect[LM_EXERCISE_FEATURES], int apple_family_max);
int lm_exercise_expectations_json(const signed char expect[LM_EXERCISE_FEATURES], cJSON *parent);

#endif
