/* An opt-in timing trace: LUME_METAL_TRACE=FILE makes a context append one line per timed event
 * (a journal transaction, a lock wait, a readiness question, each stage of an SSH connection and
 * command) to FILE, so that where a command's time goes is measured, not guessed
 * (docs/testing.md, "Where the time goes"). Without the variable nothing is opened or written and
 * every call returns at once. */
#ifndef LM_TRACE_H
#define LM_TRACE_H

#include "lume-metal/context.h"

#define LM_TRACE_ENV "LUME_METAL_TRACE"

/* The trace file named by $LUME_METAL_TRACE, opened for appending (several processes may share
 * one file: each line is one write), or -1 with no variable or an empty one. LM_EIO with a
 * message naming the variable when it cannot be opened. */
int lm_trace_open(int *fd_out);

/* One event: "START SECONDS PID VM WHAT\n", START and SECONDS in seconds of the monotonic clock
 * (START absolute: lines of several processes sort into one timeline), VM "-" without one. `since`
 * is the event's start (lm_clock_monotonic); it ends now. A no-op without a trace. */
void lm_trace(const lm_context *ctx, const char *vm, const char *what, double since);

#endif
