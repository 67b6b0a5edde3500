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

/* lm_trace of "WHAT A B" (a manager's request: "vm-request GET /lume/vms/NAME"), B cut at the
 * line's end. The first one a command makes marks the end of its start-up (docs/testing.md). */
void lm_trace_request(const lm_context *ctx, const char *what, const char *a, const char *b, double since);

/* The clock line a context writes first: "START 0 PID - clock EPOCH", START the monotonic clock and
 * EPOCH the wall clock of the same moment, so that a timeline taken outside the process (a
 * benchmark's clock before it started the command) can be put beside the trace. */
void lm_trace_clock(const lm_context *ctx);

#endif
