/* Internal: each step of a VM's outcome, timed and reported (on_step), and the outcome's message
 * (steps.c), and the result that holds them (outcome.c). flow's commands and the modules above them use these through flow_parts.h. */
#ifndef LM_STEPS_H
#define LM_STEPS_H

#include "lume-metal/context.h"
#include "lume-metal/flow.h"
#include "error_internal.h"

/* A step starts: 0, or LM_ECANCELED when the embedder asks to stop (the operation then fails
 * like on any error). *started gets the time to pass to lm_step_add. */
int lm_step_begin(lm_context *ctx, lm_vm_outcome *o, const char *name, double *started);
/* A step is done (the one begun under that name, or a new one); `name` must be static. A step
 * begun is always listed with its detail (room for it is reserved when it begins): 0; a new one is
 * left out when there is no memory for it: LM_ENOMEM. */
int lm_step_add(lm_context *ctx, lm_vm_outcome *o, const char *name, double started, const char *fmt, ...)
    LM_PRINTF(5, 6);
/* The step begun and not yet done, done with this detail (what it found, that a later step acts on). */
int lm_step_settle(lm_context *ctx, lm_vm_outcome *o, const char *fmt, ...) LM_PRINTF(3, 4);
/* Set o->rc and o->message from the last error, prefixed with the VM's name; a step begun and
 * not done is marked failed (and reported). */
int lm_outcome_fail(lm_context *ctx, lm_vm_outcome *o, int rc);
/* o->message, replaced (printf-style): the result a VM's operation reports. When it cannot be had
 * (out of memory) the VM fails with LM_ENOMEM (lm_outcome_fail): nothing done is ever reported
 * without its message, nor with another's. Returns 0 or LM_ENOMEM. */
int lm_outcome_message(lm_context *ctx, lm_vm_outcome *o, const char *fmt, ...) LM_PRINTF(3, 4);
/* o->message extended (printf-style); out of memory leaves it as it was (a failure's hint). */
void lm_outcome_append(lm_vm_outcome *o, const char *fmt, ...) LM_PRINTF(2, 3);

/* ---- outcome.c: a result and its outcomes as data ---- */

/* A copy of *a appended to o->agents; LM_ENOMEM when it cannot be. An operation that did what it
 * reports with it fails its VM then (lm_outcome_fail), as for its message. */
int lm_outcome_add_agent(lm_vm_outcome *o, const lm_agent_info *a);
/* A result without outcomes (lm_flow_result_free() frees it); *out is NULL when out of memory. */
int lm_flow_result_new(lm_flow_result **out);
/* One more outcome in result, for the VM `vm` (a valid name); *out (when not NULL) gets it. */
int lm_flow_outcome_add(lm_flow_result *result, const char *vm, lm_vm_outcome **out);
/* One outcome per name of vms[n], normalised (NAME:TAG as Lume stores it); on failure none is
 * left and the message names the VM. */
int lm_flow_open_outcomes(lm_flow_result *result, const char *const *vms, size_t n);

#endif
