/* Internal: what the local commands share -- this machine opened for work (machine.c). */
#ifndef LM_LOCAL_INTERNAL_H
#define LM_LOCAL_INTERNAL_H

#include "lume-metal/local.h"
#include "clock.h"
#include "context_internal.h"
#include "flow_parts.h"
#include "guestops.h"
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
/* Whether this machine looks like a VM, from kern.hv_vmm_present and the stock report (NULL: not
 * probed), into the result. */
int lm_local_vm_signs(lm_local_machine *m);
/* The result's seconds; the machine's parts freed (not the result). Returns rc. */
int lm_local_close(lm_local_machine *m, int rc);

#endif
