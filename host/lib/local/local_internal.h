/* Internal: what the local commands share -- this machine opened for work (machine.c). */
#ifndef LM_LOCAL_INTERNAL_H
#define LM_LOCAL_INTERNAL_H

#include "lume-metal/local.h"
#include "clock.h"
#include "context_internal.h"
#include "flow_parts.h"
#include "guest_bundle.h"
#include "guest_shim.h"
#include "ssh_local.h"

/* This machine, opened: the local transport, its facts (in the result's machine outcome), the
 * installed bundle (verified) and the shim's environment with it in place. */
typedef struct {
	lm_context *ctx;
	lm_local_result *res;
	lm_flow_result *flow;   /* holds res->machine */
	lm_ssh *ssh;
	lm_bundle *bundle;
	lm_profile *own_profile; /* the default, when none was given */
	const lm_profile *profile;
	lm_shim_env se;
	double started;
} lm_local_machine;

/* A result for *out (set even on failure; NULL only when out of memory), then the machine opened
 * with profile (NULL: the default): the "machine" step. Failures are recorded in the outcome. */
int lm_local_open(lm_local_machine *m, lm_context *ctx, const lm_profile *profile, lm_local_result **out);
/* The stock probe into the machine's outcome, and whether this machine looks like a VM (from
 * kern.hv_vmm_present and the stock device) into the result. */
int lm_local_stock(lm_local_machine *m);
/* lm_local_open, then the step `step` (its start in *t) with lm_local_stock: probe's and status's
 * beginning. A failure is in the outcome. */
int lm_local_begin(lm_local_machine *m, lm_context *ctx, const lm_profile *profile, const char *step, double *t,
    lm_local_result **out);
/* rc (< 0) into the outcome unless it failed already; the result's seconds; the machine's parts
 * freed (not the result). Returns rc. */
int lm_local_close(lm_local_machine *m, int rc);

#endif
