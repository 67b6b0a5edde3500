/* The document of `local env --format json` from plain data: local/ owns the environment a job
 * step exports (local_image.c), output/ the document's spelling (docs/json-output.md). */
#ifndef LM_OUTPUT_LOCAL_H
#define LM_OUTPUT_LOCAL_H

#include <stddef.h>

#include "lume-metal/output.h"

/* bundle_id NULL: the envelope alone (no environment). names[i] = values[i], i < n. */
int lm_output_local_env(const lm_json_envelope *env, const char *bundle_id, size_t n, char *const *names,
    char *const *values, char **out);

#endif
