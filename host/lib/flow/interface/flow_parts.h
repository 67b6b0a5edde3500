/* Internal (for flow/ and the modules that depend on it): what a command shares -- an outcome
 * (core's outcome.c and steps.h), a workload's checks (parts.c), the exercise step (probe.c). */
#ifndef LM_FLOW_PARTS_H
#define LM_FLOW_PARTS_H

#include "lume-metal/flow.h"
#include "guest_codesign.h"
#include "guest_shim.h"
#include "steps.h"

/* ---- core's steps.h: each step of a VM's outcome, timed and reported (on_step) ---- */

/* A workload about to start in an enabled VM (run, agent install): what would start (w->target);
 * the SIP and library-validation warnings logged, and those of the executables shipped beside it
 * (a program it may start that dyld would not give the shim); with opts->resign_copy, a program
 * that needs it runs as its re-signed copy (resign.c; named copy_name, NULL: from its path):
 * w->copy is then the program to start instead of argv's, and w->target is the copy's;
 * LM_EHARDENED when dyld would ignore the shim in the program on a guest whose SIP is enabled or
 * not reported, unless opts->run_hardened_stock (then w->hardened LM_HARDENED_STOCK); with SIP
 * disabled or custom such a program is started with one line saying why (w->hardened
 * LM_HARDENED_SIP_OFF: its records decide, codesign.c); the children policy (w->inherit 1 or 0 and why, or -1 when argv's leading
 * assignments set LUME_METAL_INHERIT) put into se. */
typedef struct {
	lm_run_target target;
	int hardened;                 /* LM_HARDENED_* */
	int inherit;
	char inherit_reason[256];
	char copy[PATH_MAX];          /* the re-signed copy to run ("": the program as given) */
} lm_flow_workload;
int lm_flow_workload_check(lm_context *ctx, lm_ssh *ssh, lm_shim_env *se, const lm_vm_outcome *o,
    const char *const *argv, size_t argc, const lm_workload_options *opts, const char *copy_name,
    lm_flow_workload *w);

/* ---- probe.c: the exercise step ---- */

/* Run it into o->exercised, check it against profile (NULL: no check), add the step. */
int lm_flow_step_exercise(lm_context *ctx, lm_ssh *ssh, const lm_shim_env *se, const lm_profile *profile,
    lm_vm_outcome *o);
/* The same step over results already in o->exercised (read by lm_guest_confirm). */
int lm_flow_step_exercised(lm_context *ctx, const lm_profile *profile, lm_vm_outcome *o);

#endif
