/* lume-metal status, probe and run: reading an enabled VM, and running one workload in it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flow_internal.h"
#include "flow_session.h"
#include "vm_gone.h"
#include "text.h"

void lm_vm_record_dispose(lm_vm_record *r)
{
	lm_profile_free(r->profile);
	lm_report_free(r->stock);
	lm_report_free(r->shimmed);
	lm_report_free(r->exercised);
	cJSON_Delete(r->agents);
	memset(r, 0, sizeof(*r));
}

int lm_vm_record_load(lm_context *ctx, const char *name, lm_vm_record *r)
{
	lm_state *st = NULL;
	const cJSON *vm, *bundle, *probe;
	const char *pj;
	int rc;

	memset(r, 0, sizeof(*r));
	if ((rc = lm_state_open_ex(&st, ctx, LM_STATE_READONLY, 10)) < 0)
		return rc;
	if ((vm = lm_state_vm(st, name, 0)) == NULL)
		goto out;
	r->known = 1;
	if ((rc = lm_journal_copy_string(vm, "status", r->status, sizeof(r->status))) < 0 ||
	    (rc = lm_journal_copy_string(vm, "profile", r->profile_name, sizeof(r->profile_name))) < 0)
		goto out;
	if ((pj = lm_journal_string(vm, "profile_json")) != NULL &&
	    (rc = lm_profile_parse(&r->profile, pj, strlen(pj), "state journal")) < 0)
		goto out;
	bundle = cJSON_GetObjectItemCaseSensitive(vm, "bundle");
	if ((rc = lm_journal_copy_string(bundle, "injection_variable", r->injection, sizeof(r->injection))) < 0 ||
	    (rc = lm_journal_copy_string(bundle, "shim", r->shim, sizeof(r->shim))) < 0 ||
	    (rc = lm_journal_copy_string(bundle, "probe", r->probe, sizeof(r->probe))) < 0 ||
	    (rc = lm_journal_copy_string(bundle, "id", r->bundle_id, sizeof(r->bundle_id))) < 0 ||
	    (rc = lm_journal_load_facts(vm, &r->facts)) < 0)
		goto out;
	r->started_at = lm_journal_number(vm, LM_JOURNAL_VM_STARTED_AT);
	if (cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(vm, "agents")) &&
	    (r->agents = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(vm, "agents"), 1)) == NULL) {
		rc = lm_error_nomem();
		goto out;
	}
	probe = cJSON_GetObjectItemCaseSensitive(vm, "last_probe");
	/* A report that cannot be read is left out; one that could not be held is an error. */
	if (lm_journal_load_report(probe, "stock", &r->stock) == LM_ENOMEM ||
	    lm_journal_load_report(probe, "shimmed", &r->shimmed) == LM_ENOMEM ||
	    lm_journal_load_report(probe, "exercised", &r->exercised) == LM_ENOMEM) {
		rc = LM_ENOMEM;
		goto out;
	}
	rc = 0;
out:
	lm_state_close(st);
	if (rc < 0)
		lm_vm_record_dispose(r);
	return rc;
}

int lm_flow_open_enabled(lm_context *ctx, lm_vm_manager *vmm, lm_vm_outcome *o, lm_vm_record *r, lm_ssh **ssh,
    lm_shim_env *se)
{
	char current[128];
	int rc;

	if ((rc = lm_vm_record_load(ctx, o->vm, r)) < 0)
		return rc;
	if (!r->known || strcmp(r->status, "enabled") != 0 || r->profile == NULL)
		return lm_error_set(LM_ENOTENABLED, "%s is not enabled", o->vm);
	if ((rc = lm_vm_get(vmm, o->vm, &o->info)) < 0)
		return rc;
	/* Not "guest unsupported": nothing is wrong with the guest, it is just not running. */
	if (strcmp(o->info.status, "running") != 0)
		return lm_error_set(LM_ENOTRUNNING, "%s is %s, not running", o->vm, o->info.status);
	if ((rc = lm_flow_connect(ctx, o->vm, &o->info, ssh)) < 0 ||
	    (rc = lm_guest_facts_read(*ssh, &o->guest, current, sizeof(current))) < 0)
		return rc;
	if (strcmp(current, r->bundle_id) != 0)
		return lm_error_set(LM_ECORRUPT, "%s: the installed bundle is %s, the state says %s", o->vm,
		    current[0] ? current : "missing", r->bundle_id);
	return lm_shim_env_make(se, &o->guest, r->injection, r->shim, r->probe, r->profile);
}

static int probe_vm(lm_context *ctx, const char *vm, int exercise, lm_flow_result *result)
{
	lm_vm_lock *lock = NULL;
	lm_vm_manager *vmm = NULL;
	lm_ssh *ssh = NULL;
	lm_state *st = NULL;
	lm_shim_env se;
	lm_vm_record r;
	lm_vm_outcome *o;
	cJSON *entry, *probe;
	double t;
	int rc;

	memset(&r, 0, sizeof(r));
	memset(result, 0, sizeof(*result));
	if ((rc = lm_flow_open_outcomes(result, &vm, 1)) < 0)
		return rc;
	o = &result->vms[0];
	if ((rc = lm_vm_lock_take(&lock, ctx, o->vm, "probe", 0)) < 0 ||
	    (rc = lm_vm_manager_open(&vmm, ctx)) < 0 || (rc = lm_flow_open_enabled(ctx, vmm, o, &r, &ssh, &se)) < 0 ||
	    (rc = lm_step_begin(ctx, o, "probe", &t)) < 0 ||
	    (rc = lm_guest_probe(ssh, &se, 0, &o->stock, NULL, 0)) < 0 ||
	    (rc = lm_guest_probe(ssh, &se, 1, &o->shimmed, NULL, 0)) < 0) {
		lm_outcome_fail(ctx, o, rc);
		goto out;
	}
	snprintf(o->profile, sizeof(o->profile), "%s", r.profile_name);
	lm_workload_derive(o->stock, &o->stock_flags);
	lm_workload_derive(o->shimmed, &o->shimmed_flags);
	/* A Tart image's own shim: a third column, what `tart exec` sessions get. */
	if (o->guest.tart_shim) {
		lm_shim_env tart;
		if (lm_shim_env_tart(&tart, &se) < 0 || lm_guest_probe(ssh, &tart, 1, &o->tart, NULL, 0) < 0)
			lm_log(ctx, LM_LOG_WARN, "%s: the Tart image's shim (%s) could not be probed: %s", o->vm,
			    LM_TART_SHIM_PATH, lm_error_last()->message);
	}
	lm_step_add(ctx, o, "probe", t, "stock and shimmed reports%s", o->tart != NULL ? ", and the Tart image's shim" : "");
	/* Run on demand and reported, not judged; without --exercise the last one recorded is shown. */
	if (exercise && (rc = lm_flow_step_exercise(ctx, ssh, &se, NULL, o)) < 0) {
		lm_outcome_fail(ctx, o, rc);
		goto out;
	}
	if (!exercise) {
		o->exercised = r.exercised;
		r.exercised = NULL;
	}
	if (lm_state_open(&st, ctx) == 0) {
		if ((entry = lm_state_vm(st, o->vm, 0)) != NULL) {
			cJSON_DeleteItemFromObjectCaseSensitive(entry, "last_probe");
			probe = cJSON_AddObjectToObject(entry, "last_probe");
			cJSON_AddNumberToObject(probe, "at", lm_clock_epoch());
			if (lm_journal_store_report(probe, "stock", o->stock) == 0 &&
			    lm_journal_store_report(probe, "shimmed", o->shimmed) == 0 &&
			    (o->exercised == NULL || lm_journal_store_report(probe, "exercised", o->exercised) == 0))
				(void)lm_state_save(st);
		}
		lm_state_close(st);
	}
out:
	lm_vm_record_dispose(&r);
	lm_ssh_free(ssh);
	lm_vm_manager_free(vmm);
	lm_vm_lock_release(lock);
	return rc;
}

int lm_flow_probe(lm_context *ctx, const char *vm, lm_flow_result *result)
{
	return probe_vm(ctx, vm, 0, result);
}

int lm_flow_probe_exercise(lm_context *ctx, const char *vm, lm_flow_result *result)
{
	return probe_vm(ctx, vm, 1, result);
}

/* The guest command's output goes to the embedder's on_output, as it arrives. */
typedef struct {
	const lm_context *ctx;
	const char *vm;
} run_output;

static void stream_out(void *data, int stream, const char *bytes, size_t len)
{
	const run_output *ro = data;

	lm_context_output(ro->ctx, ro->vm, stream, bytes, len);
}

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
	lm_flow_result result;
};

int lm_flow_session_open(lm_flow_session **out, lm_context *ctx, const char *vm)
{
	lm_flow_session *s;
	int rc;

	*out = NULL;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return lm_error_nomem();
	s->ctx = ctx;
	/* Shared: several workloads may run at once, but not while the VM is enabled or rolled back. */
	if ((rc = lm_flow_open_outcomes(&s->result, &vm, 1)) < 0 ||
	    (rc = lm_vm_lock_take(&s->lock, ctx, s->result.vms[0].vm, "run", LM_VM_LOCK_SHARED)) < 0 ||
	    (rc = lm_vm_manager_open(&s->vmm, ctx)) < 0 ||
	    (rc = lm_flow_open_enabled(ctx, s->vmm, &s->result.vms[0], &s->r, &s->ssh, &s->se)) < 0) {
		lm_flow_session_close(s);
		return rc;
	}
	snprintf(s->result.vms[0].profile, sizeof(s->result.vms[0].profile), "%s", s->r.profile_name);
	snprintf(s->result.vms[0].bundle_id, sizeof(s->result.vms[0].bundle_id), "%s", s->r.bundle_id);
	*out = s;
	return 0;
}

void lm_flow_session_close(lm_flow_session *s)
{
	if (s == NULL)
		return;
	lm_vm_lock_release(s->lock);
	lm_vm_record_dispose(&s->r);
	lm_ssh_free(s->ssh);
	lm_vm_manager_free(s->vmm);
	lm_flow_result_dispose(&s->result);
	free(s);
}

const lm_vm_outcome *lm_flow_session_vm(const lm_flow_session *s)
{
	return &s->result.vms[0];
}

const lm_profile *lm_flow_session_profile(const lm_flow_session *s)
{
	return s->r.profile;
}

const char *lm_flow_session_manager(const lm_flow_session *s)
{
	return lm_vm_manager_name_for(s->vmm, s->result.vms[0].vm);
}

void lm_flow_session_manager_version(lm_flow_session *s, char *buf, size_t len)
{
	if (lm_vm_manager_version(s->vmm, s->result.vms[0].vm, buf, len) < 0) {
		lm_log(s->ctx, LM_LOG_DEBUG, "%s: the VM manager's version: %s", s->result.vms[0].vm, lm_error_last()->message);
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

int lm_flow_session_warn(lm_flow_session *s, const char *const *argv, size_t argc)
{
	return warn_protected(s->ctx, s->ssh, &s->se, &s->result.vms[0], argv, argc);
}

int lm_flow_run(lm_context *ctx, const char *vm, const char *const *argv, size_t argc, int *exit_status)
{
	lm_flow_session *s = NULL;
	run_output ro;
	char *cmd = NULL;
	int rc;

	*exit_status = 255;
	if (argc == 0)
		return lm_error_set(LM_EINVALID, "run: no guest command given");
	if ((rc = lm_flow_session_open(&s, ctx, vm)) < 0 || (rc = lm_flow_session_warn(s, argv, argc)) < 0 ||
	    (rc = lm_flow_session_command(s, 1, argv, argc, &cmd)) < 0)
		goto out;
	ro.ctx = ctx;
	ro.vm = s->result.vms[0].vm;
	rc = lm_ssh_exec(s->ssh, cmd, stream_out, &ro, exit_status);
out:
	free(cmd);
	lm_flow_session_close(s);
	return rc;
}

static int status_one(lm_context *ctx, lm_vm_manager *vmm, const lm_host_pref_info *pref, lm_vm_outcome *o)
{
	lm_ssh *ssh = NULL;
	lm_bundle *b = NULL;
	lm_vm_record r;
	char current[128];
	int ok = 0, rc;

	if ((rc = lm_vm_record_load(ctx, o->vm, &r)) < 0)
		return lm_outcome_fail(ctx, o, rc);
	snprintf(o->profile, sizeof(o->profile), "%s", r.profile_name);
	snprintf(o->bundle_id, sizeof(o->bundle_id), "%s", r.bundle_id);
	o->already_enabled = r.known && strcmp(r.status, "enabled") == 0;
	o->stock = r.stock;
	o->shimmed = r.shimmed;
	o->exercised = r.exercised;
	r.stock = r.shimmed = r.exercised = NULL;
	if (o->stock != NULL)
		lm_workload_derive(o->stock, &o->stock_flags);
	if (o->shimmed != NULL)
		lm_workload_derive(o->shimmed, &o->shimmed_flags);
	o->guest = r.facts;
	if ((rc = lm_vm_get(vmm, o->vm, &o->info)) < 0) {
		int journal, pin, known = r.known;
		char manager[32];
		lm_vm_record_dispose(&r);
		/* Deleted since: forgotten now, listed as gone this once. */
		if (rc == LM_ENOTFOUND && known && lm_flow_journal_manager(ctx, o->vm, manager, sizeof(manager)) == 0 &&
		    lm_vm_gone(vmm, o->vm, manager) && lm_flow_forget_vm(ctx, o->vm, &journal, &pin) == 0) {
			lm_error_clear();
			o->already_enabled = 0;
			lm_flow_gone_outcome(o, journal, pin, 0);
			return 0;
		}
		return lm_outcome_fail(ctx, o, rc);
	}
	lm_outcome_message(o, "%s: %s", o->vm, !r.known ? "not enabled" : r.status);
	/* What cannot be asked is said in the message; running out of memory fails the VM's status
	 * (a bundle not verified for want of memory is not an unverified bundle). */
	rc = 0;
	if (strcmp(o->info.status, "running") == 0 && o->info.ip[0] != '\0' && o->info.ssh_available) {
		if ((rc = lm_flow_connect(ctx, o->vm, &o->info, &ssh)) == 0 &&
		    (rc = lm_guest_facts_read(ssh, &o->guest, current, sizeof(current))) == 0) {
			o->restart_pending = lm_vm_restart_needed(pref, o->guest.boot_time, r.started_at,
			    lm_context_options(ctx)->boot_margin);
			if (r.known && strcmp(current, r.bundle_id) == 0 && (rc = lm_bundle_open(&b, ctx, &o->guest)) == 0 &&
			    strcmp(b->id, r.bundle_id) == 0 && (rc = lm_guest_bundle_verify(ssh, &o->guest, b, &ok)) == 0)
				o->bundle_verified = ok;
		} else if (rc != LM_ENOMEM) {
			lm_outcome_append(o, "; guest unreachable: %s", lm_error_last()->message);
			lm_ssh_free(ssh);
			ssh = NULL;
		}
	}
	if (rc != LM_ENOMEM && (rc = lm_flow_agents_status(ssh, r.agents, o)) < 0 && rc != LM_ENOMEM)
		lm_outcome_append(o, "; agents: %s", lm_error_last()->message);
	lm_bundle_free(b);
	lm_ssh_free(ssh);
	lm_vm_record_dispose(&r);
	return rc == LM_ENOMEM ? lm_outcome_fail(ctx, o, rc) : 0;
}

int lm_flow_status(lm_context *ctx, const char *const *vms, size_t n, lm_flow_result *result)
{
	lm_vm_manager *vmm = NULL;
	size_t i;
	int rc;

	memset(result, 0, sizeof(*result));
	if ((rc = lm_host_pref_status(ctx, NULL, &result->pref)) < 0)
		return rc;
	rc = n > 0 ? lm_flow_open_outcomes(result, vms, n) : lm_flow_open_known(ctx, result);
	if (rc < 0 || result->count == 0)
		return rc;
	if ((rc = lm_vm_manager_open(&vmm, ctx)) < 0)
		return lm_flow_fail_all(ctx, result, rc);
	for (i = 0; i < result->count; i++)
		(void)status_one(ctx, vmm, &result->pref, &result->vms[i]);
	lm_vm_manager_free(vmm);
	return 0;
}
