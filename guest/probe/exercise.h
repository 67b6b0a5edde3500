/* metal-capabilities --exercise: small compute kernels for the features the unlock is for, compiled
 * at run time and checked against a CPU reference (docs/guest.md, "Exercises"). */
#ifndef LUME_METAL_PROBE_EXERCISE_H
#define LUME_METAL_PROBE_EXERCISE_H

#include "../guest_runtime.h"

typedef enum { LM_EX_PASS = 0, LM_EX_FAIL, LM_EX_ERROR } lm_ex_result;

typedef struct {
	lm_ex_result result;
	char message[1024]; /* LM_EX_FAIL: what differed; LM_EX_ERROR: Metal's own message (or ours) */
} lm_ex_outcome;

/* Inside the probe only: its one export stays main (guest_macho_verify checks). */
#define LM_PROBE_HIDDEN __attribute__((visibility("hidden")))

/* Run the exercise NAME (one of LM_EXERCISE_LIST) on device; a command buffer not complete after
 * timeout_ms is abandoned and reported as an error. */
LM_PROBE_HIDDEN void lm_exercise_run(id device, const char *name, unsigned timeout_ms, lm_ex_outcome *out);
/* A kernel that allocates `bytes` of threadgroup memory, writes all of it and reads it back. */
LM_PROBE_HIDDEN void lm_exercise_threadgroup(id device, unsigned bytes, unsigned timeout_ms, lm_ex_outcome *out);

#endif
