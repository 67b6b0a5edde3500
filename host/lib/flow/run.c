/* lume-metal run: one workload in an enabled VM with the shim, and the session bench holds for
 * its workloads (flow_session.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow_internal.h"
#include "flow_session.h"
#include "path.h"
#include "random.h"
#include "str.h"
#include "text.h"
#include "guest_activation.h"
#include "guest_codesign.h"
#include "guest_shim.h"
#include "guest_workload.h"

/* Before running: a program SIP protects, or one run by such an interpreter, never gets the shim
 * (or, with SIP off, is stopped by dyld): say so first. */
static int warn_protected(lm_context *ctx, lm_ssh *ssh, const lm_shim_env *se, const lm_vm_outcome *o,
    const char *const *argv, size_t argc)
{
	lm_run_target t;
	char warning[4 * PATH_MAX];
	size_t i;
	int rc;

	if ((rc = lm_guest_run_target(ssh, se, argv, argc, &t)) < 0)
		return rc;
	for (i = 0; i < argc && strchr(argv[i], '=') != NULL; i++)
		;
	if (i < argc && lm_sip_warning(&o->guest, argv[i], &t, warning, sizeof(warning)))
		lm_log(ctx, LM_LOG_WARN, "%s: %s", o->vm, warning);
	return 0;
}

/* An enabled VM held for workloads (run, bench): its shared lock, manager, SSH session and shim
 * environment, and the outcome that carries its guest facts and profile. */
struct lm_flow_session {
	lm_context *ctx;
	lm_vm_lock *lock;
	lm_vm_manager *vmm;
	lm_ssh *ssh;
	lm_shim_env se;
	lm_vm_record r;
	lm_flow_result *result;
	lm_vm_outcome *o; /* result's one outcome */
};

int lm_flow_session_open(lm_flow_session **out, lm_context *ctx, const char *vm)
{
	lm_flow_session *s;
	int rc;

	*out = NULL;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return lm_error_nomem();
	s->ctx = ctx;
	if ((rc = lm_flow_result_new(&s->result)) < 0 || (rc = lm_flow_open_outcomes(s->result, &vm, 1)) < 0)
		goto fail;
	s->o = s->result->vms[0];
	/* Shared: several workloads may run at once, but not while the VM is enabled or rolled back. */
	if ((rc = lm_vm_lock_take(&s->lock, ctx, s->o->vm, "run", LM_VM_LOCK_SHARED)) < 0 ||
	    (rc = lm_vm_manager_open(&s->vmm, ctx)) < 0 ||
	    (rc = lm_flow_open_enabled(ctx, s->vmm, s->o, &s->r, &s->ssh, &s->se)) < 0)
		goto fail;
	snprintf(s->o->profile, sizeof(s->o->profile), "%s", s->r.profile_name);
	snprintf(s->o->bundle_id, sizeof(s->o->bundle_id), "%s", s->r.bundle.id);
	*out = s;
	return 0;
fail:
	lm_flow_session_close(s);
	return rc;
}

void lm_flow_session_close(lm_flow_session *s)
{
	if (s == NULL)
		return;
	lm_vm_lock_release(s->lock);
	lm_vm_record_dispose(&s->r);
	lm_ssh_free(s->ssh);
	lm_vm_manager_free(s->vmm);
	lm_flow_result_free(s->result);
	free(s);
}

const lm_vm_outcome *lm_flow_session_vm(const lm_flow_session *s)
{
	return s->o;
}

const lm_profile *lm_flow_session_profile(const lm_flow_session *s)
{
	return s->r.profile;
}

/* The VM manager as chosen for this VM (lume-api, tart, ...): the one its info came from; "auto"
 * only before any manager answered for it. */
const char *lm_flow_session_manager(const lm_flow_session *s)
{
	if (s->o->info.manager[0] != '\0' && strcmp(s->o->info.manager, "auto") != 0)
		return s->o->info.manager;
	return lm_vm_manager_name_for(s->vmm, s->o->vm);
}

void lm_flow_session_manager_version(lm_flow_session *s, char *buf, size_t len)
{
	if (lm_vm_manager_version(s->vmm, s->o->vm, buf, len) < 0) {
		lm_log(s->ctx, LM_LOG_DEBUG, "%s: the VM manager's version: %s", s->o->vm, lm_error_last()->message);
		buf[0] = '\0';
	}
}

lm_ssh *lm_flow_session_ssh(lm_flow_session *s)
{
	return s->ssh;
}

const char *lm_flow_session_shim(const lm_flow_session *s)
{
	return s->se.shim_path;
}

const char *lm_flow_session_probe(const lm_flow_session *s)
{
	return s->se.probe_path;
}

int lm_flow_session_command(const lm_flow_session *s, int shimmed, const char *const *argv, size_t argc, char **cmd)
{
	return lm_shim_command(&s->se, shimmed ? LM_SHIM_ALL : LM_SHIM_PATH_ONLY, argv, argc, cmd);
}

int lm_flow_session_program(lm_flow_session *s, const char *const *argv, size_t argc, char *path, size_t len)
{
	lm_run_target t;
	int rc;

	if ((rc = lm_guest_run_target(s->ssh, &s->se, argv, argc, &t)) < 0)
		return rc;
	if (lm_text_format(path, len, "%s", t.program_real[0] ? t.program_real : t.program) < 0)
		return lm_error_set(LM_EINVALID, "the workload's path in the guest is longer than %zu bytes", len - 1);
	return 0;
}

int lm_flow_session_guest(lm_flow_session *s)
{
	/* The slice is the installed shim's whatever the program: the probe stands for any. */
	const char *argv[1] = { s->se.probe_path };
	lm_run_target t;
	int rc;

	if ((rc = lm_guest_run_target(s->ssh, &s->se, argv, 1, &t)) < 0)
		return rc;
	lm_shim_env_guest(&s->se, s->o->guest.sip, t.shim_arm64e);
	return 0;
}

int lm_flow_session_warn(lm_flow_session *s, const char *const *argv, size_t argc)
{
	return warn_protected(s->ctx, s->ssh, &s->se, s->o, argv, argc);
}

void lm_run_result_free(lm_run_result *result)
{
	size_t i;

	if (result == NULL)
		return;
	for (i = 0; i < result->nprocesses; i++)
		free(result->process_lines[i]);
	free(result->process_lines);
	lm_strv_free(result->skipped_lines);
	lm_strv_free(result->stock_children);
	free(result->no_shim);
	free(result->records_json);
	free(result->record_dir);
	free(result);
}

/* A directory of its own for this run's activation records (removed after the run; one left by a
 * run that was stopped goes with the next bundle install or rollback). */
static int record_dir_make(lm_flow_session *s, lm_run_result *res)
{
	char name[24] = "run-";
	int rc;

	if ((rc = lm_random_hex(name + 4, 8)) < 0 ||
	    (rc = lm_activation_dir_make(s->ssh, s->o->guest.home, name, &res->record_dir)) < 0)
		return rc;
	return lm_shim_env_workload(&s->se, NULL, NULL, res->record_dir);
}

/* The run's error, if any, is kept (and returned). A removal that fails is a warning -- the
 * guest's folder goes with the next run's sweep or rollback -- except out of memory, which fails a
 * run that had succeeded: whole or absent (issue 36, item 2), the next run removes the folder. */
static int record_dir_remove(lm_flow_session *s, const lm_run_result *res, int rc)
{
	char saved[4096];
	int removed;

	if (res->record_dir == NULL)
		return rc;
	snprintf(saved, sizeof(saved), "%s", lm_error_last()->message);
	if ((removed = lm_activation_dir_remove(s->ssh, res->record_dir)) == LM_ENOMEM && rc == 0)
		return removed;
	if (removed < 0)
		lm_log(s->ctx, LM_LOG_WARN, "%s: %s", s->o->vm, lm_error_last()->message);
	if (rc < 0)
		lm_error_set(rc, "%s", saved);
	return rc;
}

int lm_flow_run_workload(lm_context *ctx, const char *vm, const char *const *argv, size_t argc,
    const lm_workload_options *opts, lm_run_result **out)
{
	lm_flow_session *s = NULL;
	lm_workload_options o;
	lm_flow_workload w;
	lm_run_result *res;
	const char *const *run_argv = argv;
	char *cmd = NULL;
	int rc;

	if (out != NULL)
		*out = NULL;
	if ((rc = lm_workload_options_copy(&o, opts)) < 0)
		return rc;
	if ((rc = lm_run_result_new("run", opts, argc, &res)) < 0)
		return rc;
	if ((rc = lm_flow_session_open(&s, ctx, vm)) < 0 ||
	    (rc = lm_flow_workload_check(ctx, s->ssh, &s->se, s->o, argv, argc, &o, NULL, &w)) < 0 ||
	    (rc = lm_run_argv_program(argv, argc, w.copy, &run_argv)) < 0 || (rc = record_dir_make(s, res)) < 0 ||
	    (rc = lm_flow_session_command(s, 1, run_argv, argc, &cmd)) < 0)
		goto out;
	res->inherit = w.inherit;
	snprintf(res->inherit_reason, sizeof(res->inherit_reason), "%s", w.inherit_reason);
	if ((rc = lm_guest_workload_run(ctx, s->ssh, s->o->vm, cmd, &o, res)) < 0)
		goto out;
	rc = lm_workload_records_result(s->ssh, &s->o->guest, &w.target, w.hardened, argv, argc, res);
	if (rc == 0 && res->no_shim != NULL && o.require_shim)
		rc = lm_error_set(LM_ENOSHIM, "%s: %s", s->o->vm, res->no_shim);
out:
	if (s != NULL)
		rc = record_dir_remove(s, res, rc);
	free(cmd);
	lm_flow_session_close(s);
	if (run_argv != argv)
		free((void *)run_argv);
	if (out != NULL)
		*out = res;
	else
		lm_run_result_free(res);
	return rc;
}
