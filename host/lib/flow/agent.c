/* lume-metal agent install|remove|list: per-workload LaunchAgents carrying the shim's environment.
 *
 * The journal lists each VM's agents (docs/state-format.md, "agents") before anything reaches the
 * guest, so that a crash between the upload and the load still leaves them for `rollback` and
 * `agent remove` to find. launchd is driven as reference/lume.md's recipe says: plutil -lint,
 * bootout when loaded, bootstrap gui/UID, kickstart -k; never `launchctl setenv`. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow_internal.h"
#include "path.h"
#include "guest_agents.h"
#include "guest_codesign.h"
#include "guest_machine.h"
#include "guest_shim.h"
#include "guest_workload.h"
#include "test_hooks.h"

/* ---- the flows ---- */

/* The open parts of one agent operation on one VM. */
typedef struct {
	lm_vm_lock *lock;
	lm_vm_manager *vmm;
	lm_ssh *ssh;
	lm_vm_record r;
	lm_shim_env se;
	lm_vm_outcome *o;
	char domain[32];
} agent_op;

/* vmm: the worker's manager (parts.c's pool), not the operation's to free. */
static int op_open(lm_context *ctx, lm_vm_manager *vmm, lm_vm_outcome *o, const char *what, agent_op *op)
{
	int rc;

	memset(op, 0, sizeof(*op));
	op->o = o;
	op->vmm = vmm;
	if ((rc = lm_vm_lock_take(&op->lock, ctx, op->o->vm, what, 0)) < 0 ||
	    (rc = lm_flow_open_enabled(ctx, op->vmm, op->o, &op->r, &op->ssh, &op->se)) < 0 ||
	    (rc = lm_launchd_domain(op->ssh, op->domain, sizeof(op->domain))) < 0)
		return lm_outcome_fail(ctx, op->o, rc);
	return 0;
}

static void op_close(agent_op *op)
{
	lm_vm_record_dispose(&op->r);
	lm_ssh_free(op->ssh);
	lm_vm_lock_release(op->lock);
}

/* The workload's program as launchd must be given it: an absolute path, found as `run` finds it;
 * checked as `run` checks it (SIP, its code signature: LM_EHARDENED before anything is installed),
 * and the children policy put into the agent's environment. */
static int resolve_program(lm_context *ctx, agent_op *op, const lm_agent_spec *spec, const lm_workload_options *opts,
    lm_agent_info *a)
{
	lm_flow_workload w;
	int rc;

	/* A re-signed copy (--resign-copy) is the agent's own, named by its label: agent remove removes it. */
	if ((rc = lm_flow_workload_check(ctx, op->ssh, &op->se, op->o, spec->argv, 1, opts, spec->label, &w)) < 0)
		return rc;
	if (w.target.program[0] == '\0')
		return lm_error_set(LM_ENOTFOUND, "%s: %s not found in the guest (looked up on the bundle's tools, "
		    LM_GUEST_HOMEBREW_PATH " and the session's PATH)", op->o->vm, spec->argv[0]);
	if (strlen(w.target.program) >= sizeof(a->program))
		return lm_error_set(LM_EINVALID, "%s: the program's path in the guest is longer than %zu bytes", op->o->vm,
		    sizeof(a->program) - 1);
	memcpy(a->program, w.target.program, strlen(w.target.program) + 1);
	return 0;
}

/* What an install under a label found there, so that a failed one puts it back: the plist (kept
 * aside in the guest while the new one is tried), launchd's state of the agent, the journal's
 * entry. A re-install boots the running agent out, and launchd may keep its label for longer than
 * the install waits: the user then still has the agent they had, running as it was. */
typedef struct {
	int guest_touched;             /* the plist's path may have changed (kept aside first) */
	int had_plist;                 /* a plist was at the label's path: kept as `backup` */
	char backup[LM_AGENT_PATH_MAX + 32];
	char was[32];                  /* launchd's state of it before ("not loaded": never asked) */
	int launchd_touched;           /* the old one booted out, or the new one bootstrapped */
	const lm_vm_record_agent *recorded; /* the journal's entry before (in op->r), or NULL */
} previous_agent;

/* Keep the plist at the label's path aside (launchd.c); the guest may have changed from here on. */
static int previous_keep(agent_op *op, const char *plist, previous_agent *prev)
{
	int rc = lm_launchd_plist_keep(op->ssh, plist, prev->backup, sizeof(prev->backup), &prev->had_plist);

	prev->guest_touched = rc == 0;
	return rc;
}

/* Upload, lint, and load; *recorded says whether the journal lists it (for the undo). */
static int install_steps(lm_context *ctx, agent_op *op, const lm_agent_spec *spec, const lm_workload_options *opts,
    lm_agent_info *a, int *recorded, previous_agent *prev)
{
	lm_agent_paths_t paths;
	char *xml = NULL, dirs[2][LM_AGENT_PATH_MAX], target[160];
	const char *mkdir_argv[] = {"mkdir", "-p", dirs[0], dirs[1], paths.record_dir};
	/* Its activation records start afresh with each install. */
	const char *clear_argv[] = {"rm", "-rf", paths.record_dir};
	const char *lint_argv[] = {"plutil", "-lint", paths.plist};
	const char *kick_argv[] = {"launchctl", "kickstart", "-k", target};
	lm_launchd_wait w = {0, op->o->vm, "agent-load"};
	size_t len = 0;
	double t;
	int rc;

	if ((rc = lm_step_begin(ctx, op->o, "agent-plist", &t)) < 0 ||
	    (rc = resolve_program(ctx, op, spec, opts, a)) < 0 ||
	    (rc = lm_agent_paths(op->o->guest.home, spec->label, &paths)) < 0 ||
	    (rc = lm_shim_env_workload(&op->se, NULL, NULL, paths.record_dir)) < 0 ||
	    (rc = lm_agent_plist_build(spec, a->program, &op->se, op->o->guest.home,
	        lm_workload_process_type(opts), &xml, &len)) < 0)
		return rc;
	snprintf(a->record_dir, sizeof(a->record_dir), "%s", paths.record_dir);
	snprintf(a->plist, sizeof(a->plist), "%s", paths.plist);
	lm_agent_log_paths(op->o->guest.home, a);
	snprintf(target, sizeof(target), "%s/%s", op->domain, a->label);
	if ((rc = lm_path_join_buf(dirs[0], sizeof(dirs[0]), op->o->guest.home, LM_AGENT_DIR, NULL)) < 0 ||
	    (rc = lm_path_join_buf(dirs[1], sizeof(dirs[1]), op->o->guest.home, LM_AGENT_LOG_DIR, NULL)) < 0) {
		free(xml);
		return rc;
	}
	if (lm_context_options(ctx)->dry_run) {
		lm_step_add(ctx, op->o, "agent-plist", t, "would install %s running %s, then bootstrap it in %s",
		    paths.plist, a->program, op->domain);
		free(xml);
		return 0;
	}
	lm_step_add(ctx, op->o, "agent-plist", t, "%s runs %s with the shim's environment (%zu bytes)", a->label,
	    a->program, len);
	if ((rc = lm_step_begin(ctx, op->o, "record", &t)) < 0 || (rc = lm_journal_agent_add(ctx, op->o->vm, spec, a)) < 0) {
		free(xml);
		return rc;
	}
	*recorded = 1;
	lm_step_add(ctx, op->o, "record", t, "state journal lists the agent");
	if ((rc = lm_step_begin(ctx, op->o, "agent-upload", &t)) < 0 ||
	    (rc = lm_guest_run_argv(op->ssh, clear_argv, 3, "rm", NULL, NULL)) < 0 ||
	    (rc = lm_guest_run_argv(op->ssh, mkdir_argv, 5, "mkdir", NULL, NULL)) < 0 ||
	    (rc = previous_keep(op, paths.plist, prev)) < 0 ||
	    (rc = lm_ssh_upload(op->ssh, xml, len, paths.plist, 0644)) < 0 ||
	    (rc = lm_guest_run_argv(op->ssh, lint_argv, 3, "plutil -lint", NULL, NULL)) < 0) {
		free(xml);
		return rc;
	}
	free(xml);
	lm_step_add(ctx, op->o, "agent-upload", t, "%s uploaded and verified, plutil -lint OK", paths.plist);
	lm_test_kill_point("agent-after-upload");
	if ((rc = lm_step_begin(ctx, op->o, "agent-load", &t)) < 0 || (rc = lm_launchd_query(op->ssh, op->domain, a)) < 0)
		return rc;
	snprintf(prev->was, sizeof(prev->was), "%s", a->state);
	w.deadline = lm_clock_monotonic() + lm_launchd_release_wait();
	if (strcmp(a->state, "not loaded") != 0) {
		const char *out_argv[] = {"launchctl", "bootout", target};
		prev->launchd_touched = 1;
		if ((rc = lm_guest_run_argv(op->ssh, out_argv, 3, "launchctl bootout", NULL, NULL)) < 0 ||
		    (rc = lm_launchd_wait_gone(ctx, op->ssh, op->domain, a->label, &w)) < 0)
			return rc;
	}
	prev->launchd_touched = 1;
	if ((rc = lm_launchd_bootstrap(ctx, op->ssh, op->domain, paths.plist, &w)) < 0 ||
	    (rc = lm_guest_run_argv(op->ssh, kick_argv, 4, "launchctl kickstart", NULL, NULL)) < 0 ||
	    (rc = lm_launchd_query(op->ssh, op->domain, a)) < 0)
		return rc;
	if (prev->had_plist)
		(void)lm_ssh_remove(op->ssh, prev->backup); /* a copy left behind loads nothing */
	lm_step_add(ctx, op->o, "agent-load", t, "bootstrapped in %s and kickstarted: %s%s", op->domain, a->state,
	    a->pid > 0 ? " (pid known)" : "");
	return 0;
}

/* The agent the install found, back as it was: in launchd and the guest (launchd.c), then the
 * journal's entry. */
static int previous_restore(lm_context *ctx, agent_op *op, const previous_agent *prev, lm_agent_info *a)
{
	int rc = lm_launchd_plist_put_back(ctx, op->ssh, op->domain, op->o->vm, prev->backup, prev->launchd_touched,
	    prev->was, a);

	return rc < 0 ? rc : lm_journal_agent_put_back(ctx, op->o->vm, prev->recorded, a);
}

/* A failed install undone: the previous agent back, or nothing half-installed (out of launchd,
 * plist and record gone). */
static void install_undo(lm_context *ctx, agent_op *op, const lm_agent_spec *spec, const previous_agent *prev,
    lm_agent_info *a)
{
	if (!prev->guest_touched) {
		if (lm_journal_agent_put_back(ctx, op->o->vm, prev->recorded, a) < 0)
			lm_outcome_append(op->o, "; the journal could not be put back (%s), so its agent list may not "
			    "match the guest", lm_error_last()->message);
		else
			lm_outcome_append(op->o, "; nothing was changed in the guest");
		return;
	}
	if (prev->had_plist) {
		if (previous_restore(ctx, op, prev, a) < 0)
			lm_outcome_append(op->o, "; putting the previous agent back failed too (%s): its plist is kept "
			    "in the guest as %s; `mv` it to %s and `launchctl bootstrap %s %s` there", lm_error_last()->message,
			    prev->backup, a->plist, op->domain, a->plist);
		else
			lm_outcome_append(op->o, "; the previous agent %s is back as it was (%s)", a->label, a->state);
		return;
	}
	if (lm_launchd_unload(op->ssh, op->domain, op->o->guest.home, a) < 0 || lm_journal_agent_forget(ctx, op->o->vm, a) < 0)
		lm_outcome_append(op->o, "; undoing failed too (%s): the agent is left installed",
		    lm_error_last()->message);
	else
		lm_outcome_append(op->o, "; the agent is not installed");
}

/* What one VM's install is given. */
typedef struct {
	const lm_agent_spec *spec;
	const lm_profile *profile;
	const lm_workload_options *opts;
} install_args;

static int install_one(lm_context *ctx, lm_vm_manager *vmm, lm_vm_outcome *o, const void *arg)
{
	const install_args *ia = arg;
	const lm_agent_spec *spec = ia->spec;
	lm_agent_info a;
	previous_agent prev;
	agent_op op;
	int rc, recorded = 0;

	if ((rc = op_open(ctx, vmm, o, "agent install", &op)) < 0)
		goto out;
	if (ia->profile != NULL && (rc = lm_shim_env_make(&op.se, &op.o->guest, op.r.bundle.injection, op.r.bundle.shim,
	    op.r.bundle.probe, ia->profile)) < 0) {
		lm_outcome_fail(ctx, op.o, rc);
		goto out;
	}
	memset(&a, 0, sizeof(a));
	memset(&prev, 0, sizeof(prev));
	snprintf(prev.was, sizeof(prev.was), "not loaded");
	/* op_open read the record under the VM's lock: no other operation changed it since. */
	prev.recorded = lm_vm_record_find_agent(&op.r, spec->label);
	snprintf(a.label, sizeof(a.label), "%s", spec->label);
	a.installed_at = lm_clock_epoch();
	a.shim_loaded = -1;
	a.shim_widened = -1;
	if ((rc = install_steps(ctx, &op, spec, ia->opts, &a, &recorded, &prev)) < 0) {
		lm_outcome_fail(ctx, op.o, rc);
		if (recorded)
			install_undo(ctx, &op, spec, &prev, &a);
		goto out;
	}
	/* Installed, but not to be reported without it (the JSON's agents): out of memory fails it. */
	if ((rc = lm_outcome_add_agent(op.o, &a)) < 0) {
		lm_outcome_fail(ctx, op.o, rc);
		goto out;
	}
	/* "started" only when launchd says it runs: a workload that exited at once is not. */
	if (lm_context_options(ctx)->dry_run)
		rc = lm_outcome_message(ctx, op.o, "%s: agent %s would be installed", op.o->vm, a.label);
	else if (strcmp(a.state, "running") == 0 && a.pid > 0)
		rc = lm_outcome_message(ctx, op.o, "%s: agent %s installed and started (pid %ld)", op.o->vm, a.label, a.pid);
	else
		rc = lm_outcome_message(ctx, op.o, "%s: agent %s installed, but not running (launchd: %s); its log is in "
		    "~/Library/Logs/lume-metal", op.o->vm, a.label, a.state);
out:
	op_close(&op);
	return rc;
}

static int remove_one(lm_context *ctx, lm_vm_manager *vmm, lm_vm_outcome *o, const void *arg)
{
	const char *label = arg;
	lm_agent_info a;
	const lm_vm_record_agent *recorded;
	agent_op op;
	double t;
	int rc;

	if ((rc = op_open(ctx, vmm, o, "agent remove", &op)) < 0)
		goto out;
	/* op_open read the record under the VM's lock: no other operation changed it since. */
	/* Removing what is not there is done already (a CI job's clean-up may run twice). */
	if ((recorded = lm_vm_record_find_agent(&op.r, label)) == NULL) {
		rc = lm_outcome_message(ctx, op.o, "%s: no agent %s installed by lume-metal; nothing to remove", op.o->vm, label);
		goto out;
	}
	lm_vm_record_agent_info(recorded, &a);
	lm_agent_log_paths(op.o->guest.home, &a);
	if ((rc = lm_step_begin(ctx, op.o, "agent-unload", &t)) < 0) {
		lm_outcome_fail(ctx, op.o, rc);
		goto out;
	}
	if (lm_context_options(ctx)->dry_run) {
		lm_step_add(ctx, op.o, "agent-unload", t, "would boot %s out of %s and remove %s", label, op.domain, a.plist);
	} else {
		/* Its re-signed copy (--resign-copy) goes with it: nothing else runs it. */
		if ((rc = lm_launchd_unload(op.ssh, op.domain, op.o->guest.home, &a)) < 0 ||
		    (rc = lm_guest_resign_remove(op.ssh, op.o->guest.home, label)) < 0 ||
		    (rc = lm_journal_agent_forget(ctx, op.o->vm, &a)) < 0) {
			lm_outcome_fail(ctx, op.o, rc);
			goto out;
		}
		lm_step_add(ctx, op.o, "agent-unload", t, "booted out of %s, %s removed (its logs are kept)", op.domain,
		    a.plist);
	}
	/* Removed, but not to be reported without it: out of memory fails it. */
	if ((rc = lm_outcome_add_agent(op.o, &a)) < 0) {
		lm_outcome_fail(ctx, op.o, rc);
		goto out;
	}
	rc = lm_outcome_message(ctx, op.o, "%s: agent %s %s", op.o->vm, label,
	    lm_context_options(ctx)->dry_run ? "would be removed" : "removed");
out:
	op_close(&op);
	return rc;
}

typedef int (*agent_one_fn)(lm_context *, lm_vm_manager *, lm_vm_outcome *, const void *);

/* What each VM of a run is given (parts.c's pool). */
typedef struct {
	lm_context *ctx;
	agent_one_fn one;
	const void *arg;
	int first_rc; /* the first VM's code (one VM: the run's) */
} agent_fleet;

static void agent_worker_one(void *data, size_t worker, lm_vm_manager *vmm, size_t i, lm_vm_outcome *o)
{
	agent_fleet *f = data;
	int rc;

	(void)worker;
	if (i > 0 && (rc = lm_context_check_cancel(f->ctx, "the next VM")) < 0)
		lm_outcome_fail(f->ctx, o, rc);
	else
		rc = f->one(f->ctx, vmm, o, f->arg);
	if (i == 0)
		f->first_rc = rc;
}

/* The same operation on each named VM, as rollback goes through its VMs, jobs of them at once
 * (parts.c's pool, enable's): an outcome each, a failed VM never stopping the others, and the
 * run's own time (the recap's). Past a request to stop, the VMs not begun fail as cancelled. One
 * VM: its own code and error. */
static int each_vm(lm_context *ctx, const char *const *vms, size_t n, agent_one_fn one, const void *arg, int jobs,
    lm_flow_result *result)
{
	agent_fleet f = {ctx, one, arg, 0};
	lm_vm_manager *vmm = NULL;
	double t = lm_clock_monotonic();
	int rc;

	if ((rc = lm_flow_open_outcomes(result, vms, n)) < 0)
		return rc;
	if (n == 0)
		return lm_error_set(LM_EINVALID, "agent: name at least one VM");
	/* The first worker's manager: an unreachable one is one clear error for every VM. */
	if ((rc = lm_vm_manager_open(&vmm, ctx)) < 0) {
		lm_flow_fail_all(ctx, result, rc);
		result->seconds = lm_clock_monotonic() - t;
		return rc;
	}
	(void)lm_flow_pool_run(ctx, result, lm_flow_pool_size(jobs, n), vmm, agent_worker_one, NULL, &f);
	lm_vm_manager_free(vmm);
	result->seconds = lm_clock_monotonic() - t;
	return n == 1 ? f.first_rc : lm_flow_summary_rc(result);
}

int lm_flow_agent_install(lm_context *ctx, const char *const *vms, size_t n, const lm_agent_spec *spec,
    const lm_profile *profile, const lm_workload_options *opts, int jobs, lm_flow_result **out)
{
	install_args ia = {spec, profile, opts};
	int rc;

	if ((rc = lm_flow_result_new(out)) < 0 || (rc = lm_agent_spec_check(spec)) < 0)
		return rc;
	if (opts != NULL && (opts->version < 1 || opts->version > LM_WORKLOAD_OPTIONS_VERSION))
		return lm_error_set(LM_EINVALID, "agent install: workload options of version %u, which this library does "
		    "not know (1 to %d)", opts->version, LM_WORKLOAD_OPTIONS_VERSION);
	return each_vm(ctx, vms, n, install_one, &ia, jobs, *out);
}

int lm_flow_agent_remove(lm_context *ctx, const char *const *vms, size_t n, const char *label, int jobs,
    lm_flow_result **out)
{
	int rc;

	if ((rc = lm_flow_result_new(out)) < 0 || (rc = lm_agent_label_check(label)) < 0)
		return rc;
	return each_vm(ctx, vms, n, remove_one, label, jobs, *out);
}

int lm_flow_agent_list(lm_context *ctx, const char *const *vms, size_t n, lm_flow_result **out)
{
	double t = lm_clock_monotonic();
	int rc;

	if (n == 0) /* status of none is every VM's; a list names its VMs */
		return lm_flow_result_new(out) < 0 ? LM_ENOMEM : lm_error_set(LM_EINVALID, "agent list: name at least one VM");
	rc = lm_flow_status(ctx, vms, n, out);
	if (*out != NULL)
		(*out)->seconds = lm_clock_monotonic() - t;
	return rc;
}

/* ---- agent logs ---- */

int lm_flow_agent_logs(lm_context *ctx, const char *vm, const char *label, int follow, lm_agent_log_fn on_data,
    void *data, lm_agent_info *info)
{
	lm_flow_result *result = NULL;
	lm_vm_manager *vmm = NULL;
	lm_vm_record r;
	lm_shim_env se;
	lm_ssh *ssh = NULL;
	lm_agent_info a;
	const lm_vm_record_agent *recorded;
	char domain[32];
	int rc;

	memset(&r, 0, sizeof(r));
	memset(&a, 0, sizeof(a));
	if (on_data == NULL)
		return lm_error_set(LM_EINVALID, "agent logs: no output callback given");
	if ((rc = lm_agent_label_check(label)) < 0 || (rc = lm_flow_result_new(&result)) < 0 ||
	    (rc = lm_flow_open_outcomes(result, &vm, 1)) < 0)
		goto out;
	/* Read only: no VM lock, so that a follower never keeps an install or a rollback waiting. */
	if ((rc = lm_vm_manager_open(&vmm, ctx)) < 0 ||
	    (rc = lm_flow_open_enabled(ctx, vmm, result->vms[0], &r, &ssh, &se)) < 0)
		goto out;
	if ((recorded = lm_vm_record_find_agent(&r, label)) == NULL) {
		rc = lm_error_set(LM_ENOTFOUND, "%s: lume-metal installed no agent %s there (the journal records "
		    "none by that label)", result->vms[0]->vm, label);
		goto out;
	}
	lm_vm_record_agent_info(recorded, &a);
	lm_agent_log_paths(result->vms[0]->guest.home, &a);
	/* launchd's own paths when it has the job (the plist's StandardOutPath/StandardErrorPath). */
	if ((rc = lm_launchd_domain(ssh, domain, sizeof(domain))) < 0 || (rc = lm_launchd_query(ssh, domain, &a)) < 0)
		goto out;
	if (info != NULL) {
		*info = a;
		info->size = sizeof(*info);
	}
	rc = lm_guest_agent_logs(ctx, ssh, &a, follow, on_data, data);
out:
	lm_ssh_free(ssh);
	lm_vm_record_dispose(&r);
	lm_vm_manager_free(vmm);
	lm_flow_result_free(result);
	return rc;
}
