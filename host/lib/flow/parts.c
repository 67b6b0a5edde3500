/* What the commands share (flow_internal.h, flow_parts.h): the per-VM outcomes every command
 * reports (flow.h; their timed steps are core's steps.c), and an enabled VM opened for work (probe,
 * run, agent, bench): its record, the VM running, its guest reached over SSH and its installed
 * bundle the one the record names, and a workload's checks before it starts. The one file of
 * flow/ that is no command (tests/hygiene/architecture.sh flow_holds_commands). */
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow_internal.h"
#include "flow_level.h"
#include "guest_agents.h"
#include "guest_codesign.h"
#include "guest_machine.h"
#include "guest_shim.h"
#include "guest_workload.h"
#include "prefs_internal.h"
#include "ssh_pins.h"
#include "str.h"
#include "text.h"

/* ---- several VMs at once ---- */

typedef struct {
	lm_context *ctx;
	lm_flow_result *result; /* NULL: `count` items of the caller's */
	size_t count;
	pthread_mutex_t *lock;
	size_t *next;
	size_t index;
	lm_vm_manager *vmm;   /* NULL: the worker opens its own */
	lm_flow_pool_fn one;
	lm_flow_pool_gone_fn gone;
	void *data;
} pool_worker;

size_t lm_flow_pool_size(int jobs, size_t n)
{
	size_t k = jobs < 1 ? 1 : (size_t)jobs;

	if (k > LM_FLOW_MAX_JOBS)
		k = LM_FLOW_MAX_JOBS;
	if (k > n)
		k = n;
	return k < 1 ? 1 : k;
}

static void *pool_worker_run(void *arg)
{
	pool_worker *w = arg;
	lm_vm_manager *vmm = w->vmm;
	size_t i;

	/* A worker that cannot reach the manager leaves its share to the others. */
	if (vmm == NULL && lm_vm_manager_open(&vmm, w->ctx) < 0) {
		if (w->gone != NULL)
			w->gone(w->data, w->index);
		return NULL;
	}
	for (;;) {
		pthread_mutex_lock(w->lock);
		i = (*w->next)++;
		pthread_mutex_unlock(w->lock);
		if (i >= w->count)
			break;
		w->one(w->data, w->index, vmm, i, w->result != NULL ? w->result->vms[i] : NULL);
	}
	if (vmm != w->vmm)
		lm_vm_manager_free(vmm);
	return NULL;
}

static size_t pool(lm_context *ctx, lm_flow_result *result, size_t count, size_t nworkers, lm_vm_manager *vmm0,
    lm_flow_pool_fn one, lm_flow_pool_gone_fn gone, void *data)
{
	pool_worker workers[LM_FLOW_MAX_JOBS];
	pthread_t threads[LM_FLOW_MAX_JOBS];
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	size_t i, k, next = 0;

	if (nworkers < 1)
		nworkers = 1;
	if (nworkers > LM_FLOW_MAX_JOBS)
		nworkers = LM_FLOW_MAX_JOBS;
	memset(workers, 0, sizeof(workers));
	for (i = 0; i < nworkers; i++) {
		workers[i].ctx = ctx;
		workers[i].result = result;
		workers[i].count = count;
		workers[i].lock = &lock;
		workers[i].next = &next;
		workers[i].index = i;
		workers[i].one = one;
		workers[i].gone = gone;
		workers[i].data = data;
	}
	workers[0].vmm = vmm0;
	if (nworkers == 1) {
		pool_worker_run(&workers[0]);
		return 1;
	}
	for (i = 0; i < nworkers; i++)
		if (pthread_create(&threads[i], NULL, pool_worker_run, &workers[i]) != 0)
			break;
	/* Workers that never started are said to be gone (when none did, the first runs in this
	 * thread below and still comes). */
	for (k = i + (i == 0); k < nworkers; k++)
		if (gone != NULL)
			gone(data, k);
	if (i == 0) {
		pool_worker_run(&workers[0]);
		return 1;
	}
	for (k = 0; k < i; k++)
		pthread_join(threads[k], NULL);
	return i;
}

size_t lm_flow_pool_run(lm_context *ctx, lm_flow_result *result, size_t nworkers, lm_vm_manager *vmm0,
    lm_flow_pool_fn one, lm_flow_pool_gone_fn gone, void *data)
{
	return pool(ctx, result, result->count, nworkers, vmm0, one, gone, data);
}

size_t lm_flow_pool_each(lm_context *ctx, size_t count, size_t nworkers, lm_vm_manager *vmm0, lm_flow_pool_fn one,
    lm_flow_pool_gone_fn gone, void *data)
{
	return pool(ctx, NULL, count, nworkers, vmm0, one, gone, data);
}

int lm_flow_open_known(lm_context *ctx, lm_flow_result *result)
{
	lm_state *st = NULL;
	char **names = NULL;
	size_t count = 0;
	int rc;

	if ((rc = lm_journal_open(&st, ctx, LM_STATE_READONLY, 10)) < 0)
		return rc;
	rc = lm_journal_vm_names(st, &names);
	lm_state_close(st);
	if (rc < 0)
		return rc;
	while (names[count] != NULL)
		count++;
	rc = lm_flow_open_outcomes(result, (const char *const *)names, count);
	lm_strv_free(names);
	return rc;
}

int lm_flow_fail_all(lm_context *ctx, lm_flow_result *result, int rc)
{
	size_t i;

	for (i = 0; i < result->count; i++)
		lm_outcome_fail(ctx, result->vms[i], rc);
	return rc;
}

int lm_flow_summary_rc(const lm_flow_result *result)
{
	size_t i;

	for (i = 0; i < result->count; i++)
		if (result->vms[i]->rc < 0)
			return result->vms[i]->message != NULL ? lm_error_set(result->vms[i]->rc, "%s", result->vms[i]->message) :
			    /* no message: there was no memory for it */
			    lm_error_set(result->vms[i]->rc, "%s: %s", result->vms[i]->vm,
			        result->vms[i]->rc == LM_ENOMEM ? "out of memory" : lm_error_name(result->vms[i]->rc));
	return 0;
}

/* o->agents from the record, with launchd's state when the guest is reached (ssh). */
int lm_flow_agents_status(lm_ssh *ssh, const lm_vm_record *r, lm_vm_outcome *o)
{
	lm_agent_info a;
	size_t i;
	int rc;

	for (i = 0; i < r->nagents; i++) {
		lm_vm_record_agent_info(&r->agents[i], &a);
		lm_agent_log_paths(r->guest.home, &a);
		if ((rc = lm_outcome_add_agent(o, &a)) < 0)
			return rc;
	}
	if (ssh == NULL || (rc = lm_guest_agents_query(ssh, o->agents, o->nagents)) < 0)
		return ssh == NULL ? 0 : rc;
	return lm_guest_agents_activation(ssh, r->guest.home, o->agents, o->nagents);
}

int lm_flow_connect(lm_context *ctx, const char *vm, const lm_vm_info *info, lm_ssh **out)
{
	if (info->ip[0] == '\0')
		return lm_error_set(LM_ERROR, "%s has no IP address (is it running?)", vm);
	/* Port 0: ~/.ssh/config's Port for the address, else 22 (ssh/ssh_config.c). */
	return lm_ssh_connect_vm(out, ctx, vm, info->ip, 0, info->account, info->vm_id);
}

int lm_flow_open_enabled(lm_context *ctx, lm_vm_manager *vmm, lm_vm_outcome *o, lm_vm_record *r, lm_ssh **ssh,
    lm_shim_env *se)
{
	char current[128];
	int rc;

	if ((rc = lm_vm_record_load(ctx, o->vm, r)) < 0)
		return rc;
	if (!r->known || r->status != LM_VM_STATUS_ENABLED || r->profile == NULL) {
		/* A name no VM manager knows is a wrong name, not a VM to enable first: the manager's own
		 * words (and their hint, "check the name"). One it cannot be asked about is still "not
		 * enabled", which is true either way. */
		if (!r->known && (rc = lm_vm_get(vmm, o->vm, &o->info)) < 0 && (rc == LM_ENOTFOUND || rc == LM_ENOMEM))
			return rc;
		return lm_error_set(LM_ENOTENABLED, "%s is not enabled", o->vm);
	}
	if ((rc = lm_vm_get(vmm, o->vm, &o->info)) < 0)
		return rc;
	/* Not "guest unsupported": nothing is wrong with the guest, it is just not running. */
	if (strcmp(o->info.status, "running") != 0)
		return lm_error_set(LM_ENOTRUNNING, "%s is %s, not running", o->vm, o->info.status);
	if ((rc = lm_flow_connect(ctx, o->vm, &o->info, ssh)) < 0 ||
	    (rc = lm_guest_facts_read(*ssh, &o->guest, current, sizeof(current))) < 0)
		return rc;
	if (strcmp(current, r->bundle.id) != 0)
		return lm_error_set(LM_ECORRUPT, "%s: the installed bundle is %s, the state says %s", o->vm,
		    current[0] ? current : "missing", r->bundle.id);
	return lm_shim_env_make(se, &o->guest, r->bundle.injection, r->bundle.shim, r->bundle.probe, r->profile);
}

int lm_flow_workload_check(lm_context *ctx, lm_ssh *ssh, lm_shim_env *se, const lm_vm_outcome *o,
    const char *const *argv, size_t argc, const lm_workload_options *opts, const char *copy_name,
    lm_flow_workload *w)
{
	char msg[4 * PATH_MAX];
	lm_resign_copy c;
	size_t i;
	int rc, own;

	memset(w, 0, sizeof(*w));
	if ((rc = lm_guest_run_target(ssh, se, argv, argc, &w->target)) < 0)
		return rc;
	i = lm_run_program_index(argv, argc, &own);
	if (i < argc && lm_workload_resign_copy(opts) && w->target.program[0] != '\0') {
		if ((rc = lm_guest_resign_workload(ssh, se, o->guest.home, copy_name, argv, argc, &w->target, &c)) < 0)
			return lm_error_prefix("%s: ", o->vm);
		snprintf(w->copy, sizeof(w->copy), "%s", c.program);
		lm_log(ctx, LM_LOG_INFO, "%s: re-signed copy: %s", o->vm, c.said);
	}
	if (i < argc && lm_sip_warning(&o->guest, argv[i], &w->target, msg, sizeof(msg)))
		lm_log(ctx, LM_LOG_WARN, "%s: %s", o->vm, msg);
	/* With the guest's SIP disabled or custom nothing is refused or warned about: macOS does not
	 * apply the hardened runtime there, by Apple's word, though one report disagrees
	 * (codesign.c): one line says so, and the activation records decide. */
	if (lm_codesign_sip_off(&o->guest)) {
		if (i < argc && lm_codesign_sip_off_note(&o->guest, argv[i], &w->target, msg, sizeof(msg))) {
			lm_log(ctx, LM_LOG_WARN, "%s: %s", o->vm, msg);
			w->hardened = LM_HARDENED_SIP_OFF;
		}
	} else {
		for (size_t k = 0; k < w->target.nsiblings; k++)
			if (lm_codesign_sibling_warning(&w->target, k, msg, sizeof(msg)))
				lm_log(ctx, LM_LOG_WARN, "%s: %s", o->vm, msg);
	}
	if (w->hardened == LM_HARDENED_SIP_OFF) {
		/* started: the records tell */
	} else if (i < argc && lm_codesign_refusal(argv[i], &w->target, msg, sizeof(msg))) {
		if (opts == NULL || !opts->run_hardened_stock)
			return lm_error_set(LM_EHARDENED, "%s: %s", o->vm, msg);
		lm_log(ctx, LM_LOG_WARN, "%s: %s; started all the same, as asked: with the guest's SIP %s dyld is "
		    "documented to ignore the shim in it, so it is expected to run stock (the activation records will tell)",
		    o->vm, msg, o->guest.sip[0] ? o->guest.sip : "not reported");
		w->hardened = LM_HARDENED_STOCK;
	} else if (i < argc && lm_codesign_warning(argv[i], &w->target, msg, sizeof(msg))) {
		lm_log(ctx, LM_LOG_WARN, "%s: %s", o->vm, msg);
	}
	/* The user's own LUME_METAL_INHERIT wins: nothing of ours beside it. */
	if (own) {
		w->inherit = -1;
		return 0;
	}
	/* The shim decides at each spawn, from what the guest is (docs/guest.md): no LUME_METAL_INHERIT,
	 * which would override that. Children keep the shim; the reason says when protected ones
	 * start without it. */
	(void)lm_children_policy(&o->guest, w->target.shim_arm64e, w->inherit_reason, sizeof(w->inherit_reason));
	w->inherit = 1;
	lm_shim_env_guest(se, o->guest.sip, w->target.shim_arm64e);
	return lm_shim_env_workload(se, NULL, w->inherit_reason, NULL);
}

/* ---- the host's level for one VM (flow_level.h) ---- */

/* The journal notes when this tool asked for the VM to start; a note that cannot be written is
 * said, not fatal: status may then call a restart pending. */
static void note_started(lm_context *ctx, const char *vm, double when)
{
	lm_state *st = NULL;
	lm_vm_record rec;

	memset(&rec, 0, sizeof(rec));
	if (lm_journal_open_rw(&st, ctx) < 0 || lm_vm_record_get(st, vm, &rec) < 0 || !rec.known ||
	    (lm_vm_record_set_started_at(&rec, when), lm_vm_record_put(st, &rec)) < 0 || lm_state_save(st) < 0)
		lm_log(ctx, LM_LOG_WARN, "%s: the journal does not say that the VM was restarted (%s): status may call "
		    "a restart pending", vm, lm_error_last()->message);
	lm_vm_record_dispose(&rec);
	lm_state_close(st);
}

int lm_flow_host_level(lm_context *ctx, lm_vm_manager *vmm, const char *vm, const lm_pref_setting *want, int on,
    int undo, int *pref_set)
{
	lm_host_pref_info info;
	lm_state *st = NULL;
	double t;
	int rc;

	if ((rc = lm_journal_open_rw(&st, ctx)) < 0)
		return rc;
	rc = on ? lm_host_pref_enable_locked(st, want, &info) : lm_host_pref_disable_locked(st, &info);
	lm_state_close(st);
	*pref_set = rc == 0;
	if (rc < 0)
		return rc;
	if ((rc = undo ? lm_vm_stop_undo(vmm, vm) : lm_vm_stop(vmm, vm)) < 0)
		return rc;
	t = lm_clock_epoch();
	if ((rc = undo ? lm_vm_start_undo(vmm, vm) : lm_vm_start(vmm, vm)) < 0)
		return rc;
	note_started(ctx, vm, t);
	return undo ? 0 : lm_vm_wait_ready(vmm, vm, lm_context_options(ctx)->ready_timeout, NULL);
}
