/* lume-metal rollback: guest files gone, the VM forgotten, and — when no enabled VM is left —
 * the host preference exactly as it was, with running VMs restarted off the unlocked level. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow_internal.h"
#include "vm_level.h"
#include "prefs_internal.h"
#include "guest_agents.h"
#include "guest_bundle.h"
#include "guest_machine.h"
#include "vm_process.h"
#include "test_hooks.h"
#include "text.h"

/* The rollback's intent, in the journal before anything of the VM's is touched: from here on its
 * record says "rolling-back", so that whatever stops the rollback later (a journal it cannot write
 * at its end, a crash, a cancel) leaves a journal that says so -- status reports it, the next
 * rollback finishes it -- never one that still says "enabled". A journal that cannot be written
 * stops the rollback here, with nothing changed. A record gone meanwhile is not made again. */
static int record_intent(lm_context *ctx, const char *vm)
{
	lm_state *st = NULL;
	lm_vm_record rec;
	int rc;

	if ((rc = lm_journal_open_rw(&st, ctx)) < 0)
		return lm_error_prefix("nothing was rolled back: ");
	if ((rc = lm_vm_record_get(st, vm, &rec)) == 0 && rec.known && rec.status != LM_VM_STATUS_ROLLING_BACK) {
		lm_vm_record_set_status(&rec, LM_VM_STATUS_ROLLING_BACK);
		if ((rc = lm_vm_record_put(st, &rec)) == 0)
			rc = lm_state_save(st);
	}
	lm_vm_record_dispose(&rec);
	lm_state_close(st);
	return rc < 0 ? lm_error_prefix("nothing was rolled back: ") : 0;
}

/* Reach the guest to remove its files, the rollback's intent recorded first (*intent then set). A
 * stopped VM is started for it and stopped again, so that it is left as it was found. */
static int remove_guest_files(lm_context *ctx, lm_vm_manager *vmm, const lm_guest_owner *self, lm_vm_outcome *o,
    const lm_agent_info *agents, size_t nagents, int *intent)
{
	const lm_options *opts = lm_context_options(ctx);
	lm_ssh *ssh = NULL;
	lm_bundle *local = NULL;
	lm_guest_facts facts;
	lm_guest_owner_seen seen;
	lm_guest_owner_verdict verdict = LM_GUEST_OWNER_OURS;
	char labels[512], said[2048], current[128], who[1400] = "";
	double t;
	int was_running, rc;

	if ((rc = lm_step_begin(ctx, o, "guest-files", &t)) < 0)
		return rc;
	if ((rc = lm_vm_get(vmm, o->vm, &o->info)) < 0)
		return rc;
	was_running = strcmp(o->info.status, "running") == 0;
	if (opts->dry_run) {
		lm_step_add(ctx, o, "guest-files", t, "would remove ~/%s%s%s", LM_GUEST_BASE,
		    nagents > 0 ? " and the VM's agents" : "",
		    was_running ? "" : " (starting the VM for it, then stopping it again)");
		return 0;
	}
	if (!was_running) {
		if ((rc = lm_vm_start(vmm, o->vm)) < 0) {
			/* Canceled or failed after it launched the VM: stopped again all the same. */
			if (lm_vm_start_launched(vmm, o->vm))
				(void)lm_vm_launch_undo(vmm, o->vm, said, sizeof(said));
			return rc;
		}
		o->started = 1;
	}
	memset(&seen, 0, sizeof(seen));
	/* Another state directory's files (their owner record names it) are not this rollback's to
	 * remove: refused before anything, the agents included, is touched (guest_owner.h). */
	if ((rc = lm_vm_wait_ready(vmm, o->vm, opts->ready_timeout, &o->info)) < 0 ||
	    (rc = lm_flow_connect(ctx, o->vm, &o->info, &ssh)) < 0 ||
	    (rc = lm_guest_facts_read(ssh, &facts, current, sizeof(current))) < 0 ||
	    (rc = lm_guest_owner_read(ssh, &facts, &seen)) < 0 ||
	    (rc = lm_guest_owner_judge(&seen, self, current[0] != '\0', opts->take_over, o->vm,
	    "Nothing was removed; this state directory still counts it as enabled.", &verdict)) < 0 ||
	    (rc = lm_bundle_open_if_any(&local, ctx, &facts)) < 0 || /* names a killed install's staging files */
	    (rc = record_intent(ctx, o->vm)) < 0)
		goto out;
	*intent = 1;
	if ((rc = lm_guest_agents_remove(ssh, &facts, agents, nagents, labels, sizeof(labels))) < 0 ||
	    (rc = lm_guest_remove_all(ssh, &facts, local, said, sizeof(said))) < 0)
		goto out;
	o->guest = facts;
	if (verdict == LM_GUEST_OWNER_TAKE)
		lm_guest_owner_seen_describe(&seen, who, sizeof(who));
	rc = lm_step_add(ctx, o, "guest-files", t, "%s%s%s%s%s", said, labels[0] ? "; agents booted out and removed: " : "",
	    labels, who[0] ? "; taken over from " : "", who);
out:
	lm_guest_owner_seen_dispose(&seen);
	lm_ssh_free(ssh);
	lm_bundle_free(local);
	if (!was_running && o->started) {
		if (lm_vm_launch_undo(vmm, o->vm, said, sizeof(said)) < 0 && rc == 0)
			rc = lm_error_last()->code;
	}
	return rc;
}

/* What the journal looks like once this run has rolled back o's VM. A dry run saves nothing, so
 * the VMs it planned to roll back before o are taken out of its in-memory copy too: the plan then
 * says what the real run would do ("kept" only while VMs outside this run stay enabled). */
static void forget_rolled_back(lm_state *st, const lm_flow_result *res, const lm_vm_outcome *o)
{
	size_t i;

	if (lm_context_options(lm_state_context(st))->dry_run)
		for (i = 0; i < res->count && res->vms[i] != o; i++)
			if (res->vms[i]->rc == 0)
				lm_journal_forget_vm(st, res->vms[i]->vm);
	lm_journal_forget_vm(st, o->vm);
}

/* The preference back to its original once no VM needs it, unless kept (and not --restore-host):
 * prefs' one "last VM out" rule (lm_host_pref_last_out_locked). */
static int restore_if_unneeded(lm_state *st, lm_flow_result *res, lm_host_pref_info *before, lm_pref_fate *fate)
{
	int rc;

	if ((rc = lm_host_pref_last_out_locked(st, before, &res->pref, fate)) == 0 && *fate == LM_PREF_RESTORED)
		res->pref_restored = 1;
	return rc;
}

/* A failure after the intent was recorded: the error, then what it left -- `done` -- and that the
 * journal says the rollback is under way, which the next rollback finishes. */
static int fail_unfinished(lm_context *ctx, lm_vm_outcome *o, int rc, const char *done)
{
	lm_outcome_fail(ctx, o, rc);
	lm_outcome_append(o, "; %s, but the rollback did not finish: the journal says it is under way, and the next "
	    "rollback finishes it", done);
	return rc;
}

/* all: the run's result (a dry run's plan reads which VMs before o were rolled back); res: where
 * the preference's restore is written -- the worker's own (the pool's), merged after. */
static int rollback_vm(lm_context *ctx, lm_vm_manager *vmm, const lm_guest_owner *self, const lm_flow_result *all,
    lm_flow_result *res, lm_vm_outcome *o)
{
	const lm_options *opts = lm_context_options(ctx);
	lm_state *st = NULL;
	lm_host_pref_info before;
	lm_vm_record rec;
	lm_agent_info *agents = NULL;
	double t;
	size_t i;
	lm_pref_fate fate;
	int rc, uses_preference, intent = 0;

	if ((rc = lm_journal_open_rw(&st, ctx)) < 0)
		return lm_outcome_fail(ctx, o, rc);
	rc = lm_vm_record_get(st, o->vm, &rec);
	lm_state_close(st);
	if (rc < 0)
		return lm_outcome_fail(ctx, o, rc);
	if (!rec.known) {
		lm_vm_record_dispose(&rec);
		o->already_enabled = 0;
		return lm_outcome_message(ctx, o, "%s: was never enabled, nothing to roll back", o->vm);
	}
	/* The agents go first: they name the shim that the guest files' removal takes away. */
	if (rec.nagents > 0 && (agents = calloc(rec.nagents, sizeof(*agents))) == NULL) {
		lm_vm_record_dispose(&rec);
		return lm_outcome_fail(ctx, o, lm_error_nomem());
	}
	for (i = 0; i < rec.nagents; i++)
		lm_vm_record_agent_info(&rec.agents[i], &agents[i]);
	/* A VM proven without the preference (never; auto that did not need it) changed nothing of
	 * the host's: its rollback restores and restarts nothing on its account. */
	uses_preference = lm_vm_record_uses_preference(&rec);
	o->pref_mode = rec.pref_mode;
	o->pref_needed = rec.pref_needed;
	rc = remove_guest_files(ctx, vmm, self, o, agents, rec.nagents, &intent);
	free(agents);
	lm_vm_record_dispose(&rec);
	if (rc < 0) {
		if (rc != LM_ENOTFOUND || lm_vm_get(vmm, o->vm, &o->info) != LM_ENOTFOUND) {
			if (intent)
				return fail_unfinished(ctx, o, rc, o->started ? "the guest's files may be partly removed (VM "
				    "stopped again)" : "the guest's files may be partly removed");
			lm_outcome_fail(ctx, o, rc);
			if (rc == LM_ECANCELED)
				(void)lm_outcome_message(ctx, o, "%s: canceled; still enabled, as it was%s", o->vm,
				    o->started ? " (VM stopped again)" : "");
			return rc;
		}
		/* The VM itself is gone: nothing left in a guest; forget it (its pin too). */
		lm_step_add(ctx, o, "guest-files", lm_clock_monotonic(), "the VM no longer exists: nothing to remove");
		o->gone = 1;
		if (!opts->dry_run && lm_ssh_forget_host(ctx, o->vm) < 0)
			lm_log(ctx, LM_LOG_WARN, "%s: its host-key pin was not forgotten: %s", o->vm, lm_error_last()->message);
	}
	lm_test_kill_point("rollback-after-guest");
	if ((rc = lm_step_begin(ctx, o, "host-preference", &t)) < 0 || (rc = lm_journal_open_rw(&st, ctx)) < 0)
		return intent ? fail_unfinished(ctx, o, rc, "the guest's files are removed") : lm_outcome_fail(ctx, o, rc);
	forget_rolled_back(st, all, o);
	if (uses_preference && (rc = restore_if_unneeded(st, res, &before, &fate)) < 0) {
		lm_state_close(st);
		/* The preference may be back already (its record then goes with the next rollback). */
		return intent ? fail_unfinished(ctx, o, rc, res->pref.changed ? "the guest's files are removed and the "
		    "host preference restored" : "the guest's files are removed") : lm_outcome_fail(ctx, o, rc);
	}
	if (!uses_preference)
		lm_step_add(ctx, o, "host-preference", t, "not touched: %s was enabled without it (host preference "
		    "mode %s, not needed)", o->vm, lm_host_pref_mode_name(o->pref_mode));
	else if (fate == LM_PREF_NEEDED)
		lm_step_add(ctx, o, "host-preference", t, "kept: other VMs are still enabled");
	else if (fate == LM_PREF_KEPT)
		lm_step_add(ctx, o, "host-preference", t, "kept: the fleet keeps the host unlocked (a host "
		    "disable restores %s)", before.original);
	else if (fate == LM_PREF_RESTORED)
		lm_step_add(ctx, o, "host-preference", t, "%s to %s", opts->dry_run ? "would restore" : "restored",
		    before.original);
	else
		lm_step_add(ctx, o, "host-preference", t, "no change of lume-metal's to restore");
	if (!opts->dry_run && (rc = lm_state_save(st)) < 0) {
		lm_state_close(st);
		return intent ? fail_unfinished(ctx, o, rc, res->pref_restored ? "the guest's files are removed and the "
		    "host preference restored" : "the guest's files are removed") : lm_outcome_fail(ctx, o, rc);
	}
	lm_state_close(st);
	/* Rolled back, but not to be reported without its message: out of memory fails it. */
	return lm_outcome_message(ctx, o, "%s: %s", o->vm, opts->dry_run ? "would be rolled back" : "rolled back");
}

/* Nothing enabled, but a recorded preference (left by a crash, say) still goes back. */
static int restore_left_behind(lm_context *ctx, lm_flow_result *result)
{
	lm_host_pref_info before;
	lm_state *st = NULL;
	lm_pref_fate fate;
	int rc;

	if ((rc = lm_journal_open_rw(&st, ctx)) < 0)
		return rc;
	rc = restore_if_unneeded(st, result, &before, &fate);
	lm_state_close(st);
	return rc;
}

/* One VM, under its lock: an enable or rollback of the same VM by another process waits. */
static int rollback_one(lm_context *ctx, lm_vm_manager *vmm, const lm_guest_owner *self, const lm_flow_result *all,
    lm_flow_result *res, lm_vm_outcome *o)
{
	lm_vm_lock *lock = NULL;
	int rc;

	if ((rc = lm_context_check_cancel(ctx, "before anything was changed")) < 0 ||
	    (rc = lm_vm_lock_take(&lock, ctx, o->vm, "rollback", 0)) < 0) {
		lm_outcome_fail(ctx, o, rc);
		return rc;
	}
	/* Rolled back, its record is gone: its lock file goes with it. */
	if ((rc = rollback_vm(ctx, vmm, self, all, res, o)) == 0 && !lm_context_options(ctx)->dry_run)
		lm_vm_lock_drop(lock);
	else
		lm_vm_lock_release(lock);
	return rc;
}

/* The preference is recorded as changed again: an enable ran since this rollback restored it. */
static int pref_set_again(lm_context *ctx)
{
	lm_state *st = NULL;
	int again;

	if (lm_journal_open(&st, ctx, LM_STATE_READONLY, 0) < 0)
		return 0;
	again = lm_host_pref_recorded(st);
	lm_state_close(st);
	return again;
}

/* A restart a cancel interrupts still ends with the VM running: its start, also after a stop
 * canceled half-way, is an undo's (lm_vm_start_undo: not asked to cancel). */
static int restart_vm(lm_vm_manager *vmm, const char *name)
{
	int rc = lm_vm_stop(vmm, name), start;

	if (rc < 0 && rc != LM_ECANCELED)
		return rc;
	start = lm_vm_start_undo(vmm, name);
	return rc < 0 ? rc : start;
}

/* The restarts after the preference is restored, `jobs` VMs at once (parts.c's pool): the
 * manager's VMs, and what stops them all -- out of memory, or an enable that set the preference
 * again -- said once to every worker. */
typedef struct {
	lm_context *ctx;
	lm_flow_result *res;
	lm_vm_info *list;
	double changed_at;
	pthread_mutex_t lock;
	int stop;      /* no more restarts (the worker that saw why set it) */
	int rc;        /* LM_ENOMEM when memory ran out */
} restart_fleet;

static int restart_stopped(restart_fleet *f)
{
	int stop;

	pthread_mutex_lock(&f->lock);
	stop = f->stop;
	pthread_mutex_unlock(&f->lock);
	return stop;
}

static void restart_stop(restart_fleet *f, int rc)
{
	pthread_mutex_lock(&f->lock);
	f->stop = 1;
	if (rc == LM_ENOMEM)
		f->rc = rc;
	pthread_mutex_unlock(&f->lock);
}

/* One VM of the manager's: restarted when it runs and may carry the unlocked level. A VM another
 * process is working on is left to it; no VM is enabled now: no lock file is kept. A VM that
 * cannot be restarted is a warning. */
static void restart_one(void *data, size_t worker, lm_vm_manager *vmm, size_t i, lm_vm_outcome *unused)
{
	restart_fleet *f = data;
	lm_context *ctx = f->ctx;
	lm_vm_info *vm = &f->list[i];
	const int dry = lm_context_options(ctx)->dry_run;
	lm_ssh *ssh = NULL;
	lm_vm_lock *lock = NULL;
	lm_guest_facts facts;
	double t = lm_clock_monotonic(), process, created;
	int rc;

	(void)worker;
	(void)unused;
	if (restart_stopped(f) || strcmp(vm->status, "running") != 0 || vm->ip[0] == '\0')
		return;
	if ((rc = lm_vm_lock_take(&lock, ctx, vm->name, "rollback (restart)", LM_VM_LOCK_TRY)) < 0) {
		if (rc == LM_ENOMEM)
			restart_stop(f, rc);
		else
			lm_log(ctx, LM_LOG_INFO, "%s: not restarted: %s", vm->name, lm_error_last()->message);
		return;
	}
	if (!dry && pref_set_again(ctx)) {
		lm_log(ctx, LM_LOG_INFO, "the host preference was set again by an enable meanwhile: running VMs "
		    "are not restarted");
		lm_vm_lock_drop(lock);
		restart_stop(f, 0);
		return;
	}
	if ((rc = lm_flow_connect(ctx, vm->name, vm, &ssh)) < 0 || (rc = lm_guest_facts_read(ssh, &facts, NULL, 0)) < 0) {
		lm_ssh_free(ssh);
		lm_vm_lock_drop(lock);
		if (rc == LM_ENOMEM)
			restart_stop(f, rc);
		else
			lm_log(ctx, LM_LOG_WARN, "%s: cannot tell whether it still runs at the unlocked level (%s); "
			    "it was not restarted", vm->name, lm_error_last()->message);
		return;
	}
	lm_ssh_free(ssh);
	if ((rc = lm_vm_process_started(vmm, vm->name, &process)) < 0 ||
	    (rc = lm_vm_created_at(vmm, vm->name, &created)) < 0) {
		lm_vm_lock_drop(lock);
		restart_stop(f, LM_ENOMEM); /* out of memory */
		return;
	}
	/* Only a VM that certainly started before the change is left: the others may carry the
	 * unlocked level (no journal entry is left to say who started them; its files' creation
	 * is a lower bound). Its process's start, where its manager shows it, tells a guest
	 * reboot from a VM restart. */
	if (lm_vm_level_of(f->changed_at, facts.boot_time, created, process, lm_context_options(ctx)->boot_margin) ==
	    LM_VM_LEVEL_BEFORE) {
		lm_vm_lock_drop(lock);
		return;
	}
	if (!dry && ((rc = restart_vm(vmm, vm->name)) < 0 ||
	    (rc = lm_vm_wait_ready(vmm, vm->name, lm_context_options(ctx)->ready_timeout, NULL)) < 0)) {
		lm_vm_lock_drop(lock);
		if (rc == LM_ENOMEM)
			restart_stop(f, rc);
		else
			lm_log(ctx, LM_LOG_WARN, "%s: restart failed: %s", vm->name, lm_error_last()->message);
		return;
	}
	lm_vm_lock_drop(lock);
	rc = 0;
	/* Each VM of the list is at most one outcome of the run: no other worker writes this one. */
	for (size_t k = 0; k < f->res->count && rc == 0; k++)
		if (strcmp(f->res->vms[k]->vm, vm->name) == 0) {
			f->res->vms[k]->restarted = !dry;
			rc = lm_step_add(ctx, f->res->vms[k], "restart", t, "%s off the unlocked level",
			    dry ? "would restart" : "restarted");
		}
	if (rc < 0)
		restart_stop(f, rc);
	else
		lm_log(ctx, LM_LOG_INFO, dry ? "would restart %s (booted with the unlocked level)" :
		    "%s restarted: it had booted with the unlocked level", vm->name);
}

/* After the preference is restored, running VMs that booted with it still run unlocked: each is
 * restarted, `jobs` at once. Running out of memory ends it all (LM_ENOMEM: the caller fails the
 * run, the VMs may still run unlocked). */
static int restart_unlocked(lm_context *ctx, lm_vm_manager *vmm, lm_flow_result *res, double changed_at, int jobs)
{
	restart_fleet f;
	size_t count = 0;
	int rc;

	memset(&f, 0, sizeof(f));
	if ((rc = lm_vm_list(vmm, &f.list, &count)) < 0) {
		if (rc == LM_ENOMEM)
			return rc;
		lm_log(ctx, LM_LOG_WARN, "could not list VMs to restart them: %s", lm_error_last()->message);
		return 0;
	}
	f.ctx = ctx;
	f.res = res;
	f.changed_at = changed_at;
	pthread_mutex_init(&f.lock, NULL);
	if (count > 0)
		(void)lm_flow_pool_each(ctx, count, lm_context_options(ctx)->dry_run ? 1 : lm_flow_pool_size(jobs, count), vmm,
		    restart_one, NULL, &f);
	pthread_mutex_destroy(&f.lock);
	lm_free(f.list);
	return f.rc;
}

/* The preference's record is read when the last enabled VM goes (restore_if_unneeded). One that
 * cannot be read (a damaged record) stops the rollback before any VM is touched: each VM is then
 * rolled back in the journal and in the guest, or in neither, and the damaged journal is left as
 * it is (its copy aside, lm_state_corrupt) -- no rollback of another VM rewrites it first. */
static int check_pref_record(lm_context *ctx)
{
	lm_host_pref_info info;
	lm_state *st = NULL;
	int rc;

	if ((rc = lm_journal_open_rw(&st, ctx)) < 0)
		return rc;
	rc = lm_host_pref_status_locked(st, NULL, &info);
	lm_state_close(st);
	return rc < 0 ? lm_error_prefix("nothing was rolled back: ") : 0;
}

/* The workers of a rollback (parts.c's pool): each writes the preference's restore, when its VM
 * is the last enabled one, into its own result, merged after (the journal's lock decides which
 * worker that is: exactly one). */
typedef struct {
	lm_context *ctx;
	const lm_guest_owner *self;
	const lm_flow_result *result;
	lm_flow_result mine[LM_FLOW_MAX_JOBS];
} rollback_fleet;

static void rollback_worker_one(void *data, size_t worker, lm_vm_manager *vmm, size_t i, lm_vm_outcome *o)
{
	rollback_fleet *f = data;

	(void)i;
	(void)rollback_one(f->ctx, vmm, f->self, f->result, &f->mine[worker], o);
}

int lm_flow_rollback(lm_context *ctx, const char *const *vms, size_t n, int all, int restart, int jobs,
    lm_flow_result **out)
{
	lm_flow_result *result;
	lm_vm_manager *vmm = NULL;
	lm_guest_owner self;
	rollback_fleet *fleet;
	char id[LM_STATE_ID_SIZE];
	double t = lm_clock_monotonic();
	size_t i, nworkers;
	int rc;

	if ((rc = lm_flow_result_new(out)) < 0)
		return rc;
	result = *out;
	if (all) {
		rc = lm_flow_open_known(ctx, result);
	} else {
		if (n == 0)
			return lm_error_set(LM_EINVALID, "rollback: no VM named and `all` not set");
		rc = lm_flow_open_outcomes(result, vms, n);
	}
	if (rc < 0)
		return rc;
	if ((rc = lm_vm_manager_open(&vmm, ctx)) < 0)
		return lm_flow_fail_all(ctx, result, rc);
	/* This state directory as the guest files' owner: one without an identity yet installed none. */
	if ((rc = check_pref_record(ctx)) < 0 || (rc = lm_state_identity(ctx, 0, id)) < 0 ||
	    (rc = lm_guest_owner_make(&self, id, lm_context_state_dir(ctx))) < 0) {
		lm_vm_manager_free(vmm);
		return lm_flow_fail_all(ctx, result, rc);
	}
	/* Gone VMs would keep the preference "needed" for ever. */
	lm_flow_sweep_others(ctx, vmm, result);
	if ((fleet = calloc(1, sizeof(*fleet))) == NULL) {
		lm_vm_manager_free(vmm);
		return lm_flow_fail_all(ctx, result, lm_error_nomem());
	}
	fleet->ctx = ctx;
	fleet->self = &self;
	fleet->result = result;
	/* A dry run's plan says which VM would restore the preference from the VMs before it (in the
	 * order named): it goes one VM at a time, as its real run would be read. */
	nworkers = lm_context_options(ctx)->dry_run ? 1 : lm_flow_pool_size(jobs, result->count);
	nworkers = lm_flow_pool_run(ctx, result, nworkers, vmm, rollback_worker_one, NULL, fleet);
	for (i = 0; i < nworkers; i++)
		if (fleet->mine[i].pref_restored) {
			result->pref = fleet->mine[i].pref;
			result->pref_restored = 1;
		}
	free(fleet);
	if (all && result->count == 0 && (rc = restore_left_behind(ctx, result)) < 0) {
		lm_vm_manager_free(vmm);
		return rc;
	}
	if (result->pref_restored && restart && restart_unlocked(ctx, vmm, result, result->pref.changed_at, jobs) < 0) {
		/* Rolled back; what could not be done is said (the VMs may still run unlocked). */
		lm_error_set(LM_ENOMEM, "rolled back, but the running VMs that booted with the unlocked level were "
		    "not restarted: out of memory");
		for (i = 0; i < result->count; i++)
			if (result->vms[i]->rc == 0)
				lm_outcome_fail(ctx, result->vms[i], LM_ENOMEM);
	}
	lm_vm_manager_free(vmm);
	if (!result->pref_restored && lm_host_pref_status(ctx, NULL, &result->pref) < 0)
		lm_log(ctx, LM_LOG_WARN, "could not read the host preference: %s", lm_error_last()->message);
	result->seconds = lm_clock_monotonic() - t;
	return lm_flow_summary_rc(result);
}
