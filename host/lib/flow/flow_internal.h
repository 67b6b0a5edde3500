/* Internal: what the flow commands share -- each VM's outcome and its timed steps, an enabled VM
 * opened for work (parts.c), VMs their manager no longer knows (gc.c) and the exercise step
 * (probe.c). The operations on a guest are guestops/'s, the journal's records
 * record/'s. flow_internal.h is private to flow/. */
#ifndef LM_FLOW_INTERNAL_H
#define LM_FLOW_INTERNAL_H

#include <stddef.h>

#include "lume-metal/flow.h"
#include "clock.h"
#include "context_internal.h"
#include "flow_parts.h"
#include "guest_shim.h"
#include "record.h"
#include "state.h"
#include "vm_undo.h"

/* --jobs (enable, rollback, agent install and remove): VMs handled at once, at most. */
#define LM_FLOW_MAX_JOBS 64

/* ---- parts.c: several VMs at once (--jobs), the one worker pool of every command ---- */

/* One VM's work: `worker` is the worker's index (0 to the count of workers - 1), `i` the VM's index
 * in the result, vmm the worker's own VM manager (one per thread: a manager is not shared). */
typedef void (*lm_flow_pool_fn)(void *data, size_t worker, lm_vm_manager *vmm, size_t i, lm_vm_outcome *o);
/* A worker that comes to no VM: it never started, or could not open its manager (its share is
 * left to the others). NULL: nothing to say. */
typedef void (*lm_flow_pool_gone_fn)(void *data, size_t worker);
/* How many workers `jobs` makes for n VMs: 1 to min(jobs, n, LM_FLOW_MAX_JOBS). */
size_t lm_flow_pool_size(int jobs, size_t n);
/* Every VM of result to one(), taken in order by nworkers workers at once: with one, in this
 * thread; with several, a thread each (those that could not be started are given to gone(); when
 * none could, worker 0 runs in this thread). Worker 0 uses vmm0, opened by the caller (an
 * unreachable manager is the caller's one clear error); the others open their own. Returns how
 * many workers ran. Callbacks of the context are serialised by the context (context.h). */
size_t lm_flow_pool_run(lm_context *ctx, lm_flow_result *result, size_t nworkers, lm_vm_manager *vmm0,
    lm_flow_pool_fn one, lm_flow_pool_gone_fn gone, void *data);
/* The same over `count` items of the caller's own (rollback's restarts: the manager's VMs), each
 * given by its index: one(data, worker, vmm, i, NULL). */
size_t lm_flow_pool_each(lm_context *ctx, size_t count, size_t nworkers, lm_vm_manager *vmm0, lm_flow_pool_fn one,
    lm_flow_pool_gone_fn gone, void *data);

/* ---- parts.c: outcomes ---- */

/* o->agents from the VM's record, with launchd's state when its guest is reached (ssh not NULL). */
int lm_flow_agents_status(lm_ssh *ssh, const lm_vm_record *r, lm_vm_outcome *o);
/* Every VM failed for the same reason (the last error), before any was handled. */
int lm_flow_fail_all(lm_context *ctx, lm_flow_result *result, int rc);
/* One outcome per VM the state journal knows. */
int lm_flow_open_known(lm_context *ctx, lm_flow_result *result);
/* 0 when every VM succeeded; else the first failure's code and message. */
int lm_flow_summary_rc(const lm_flow_result *result);

/* ---- parts.c: an enabled VM, opened for work ---- */

/* Connect to a running, ready VM's guest. */
int lm_flow_connect(lm_context *ctx, const char *vm, const lm_vm_info *info, lm_ssh **out);
/* An enabled VM, running, reached over SSH (*ssh), its guest facts in o->guest, with its shim
 * environment (*se) from its record r (loaded here; lm_vm_record_dispose() frees it). */
int lm_flow_open_enabled(lm_context *ctx, lm_vm_manager *vmm, lm_vm_outcome *o, lm_vm_record *r, lm_ssh **ssh,
    lm_shim_env *se);

/* ---- gc.c: VMs their manager no longer knows (gc, and the sweep other commands make) ---- */
/* The VM manager the journal recorded for `vm` ("lume-api", ...; "" when none) into buf. */
int lm_flow_journal_manager(lm_context *ctx, const char *vm, char *buf, size_t size);
/* Every VM the journal or known_hosts remember, other than `except`, that the manager says does
 * not exist, is forgotten; with `report`, one outcome each is appended to it. */
int lm_flow_sweep_gone(lm_context *ctx, lm_vm_manager *vmm, const char *const *except, size_t n,
    lm_flow_result *report);
/* lm_flow_sweep_gone() except the VMs of `result`, never failing (not in a dry run): enable and
 * rollback keep the journal and the preference's bookkeeping to VMs that exist. */
void lm_flow_sweep_others(lm_context *ctx, lm_vm_manager *vmm, const lm_flow_result *result);


#endif
