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

/* A guest command from argv; a non-zero exit is LM_EREMOTE naming `what` and its stderr, unless
 * status is wanted (then the caller judges). */
static int guest_run(lm_ssh *ssh, const char *const *argv, size_t argc, const char *what, char **out, int *status)
{
	char *cmd = NULL, *sout = NULL, *serr = NULL;
	int st = 0, rc;

	if (out != NULL)
		*out = NULL;
	if ((rc = lm_shell_quote_argv(argv, argc, &cmd)) < 0)
		return rc;
	rc = lm_ssh_exec_capture(ssh, cmd, 64 * 1024, &sout, &serr, &st);
	lm_free(cmd);
	if (rc == 0 && status == NULL && st != 0)
		rc = lm_error_set(LM_EREMOTE, "%s failed (exit %d): %s", what, st,
		    serr != NULL && serr[0] ? serr : sout != NULL && sout[0] ? sout : "no output");
	if (status != NULL)
		*status = st;
	if (rc == 0 && out != NULL) {
		*out = sout;
		sout = NULL;
	}
	lm_free(sout);
	lm_free(serr);
	return rc;
}

/* The guest account's launchd domain, "gui/501". */
static int guest_domain(lm_ssh *ssh, char *domain, size_t len)
{
	const char *argv[] = {"id", "-u"};
	char *out = NULL, *end;
	long uid;
	int rc;

	if ((rc = guest_run(ssh, argv, 2, "id -u", &out, NULL)) < 0)
		return rc;
	errno = 0;
	uid = strtol(out != NULL ? out : "", &end, 10);
	if (errno != 0 || end == out || (*end != '\0' && *end != '\n') || uid < 0) {
		rc = lm_error_set(LM_EREMOTE, "id -u in the guest printed '%s', not a user id", out != NULL ? out : "");
		lm_free(out);
		return rc;
	}
	lm_free(out);
	snprintf(domain, len, "gui/%ld", uid);
	return 0;
}

/* launchd's view of one agent (`launchctl print gui/UID/LABEL`): not loaded (it exits non-zero),
 * or loaded with its state and pid. */
static int agent_query(lm_ssh *ssh, const char *domain, lm_agent_info *a)
{
	char target[160], *out = NULL, *line, *save = NULL, *v;
	const char *argv[] = {"launchctl", "print", target};
	int status = 0, rc;

	snprintf(target, sizeof(target), "%s/%s", domain, a->label);
	a->pid = 0;
	if ((rc = guest_run(ssh, argv, 3, "launchctl print", &out, &status)) < 0)
		return rc;
	if (status != 0) {
		snprintf(a->state, sizeof(a->state), "not loaded");
		lm_free(out);
		return 0;
	}
	snprintf(a->state, sizeof(a->state), "loaded");
	for (line = strtok_r(out, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		line += strspn(line, " \t");
		if (strncmp(line, "state = ", 8) == 0 && strcmp(line + 8, "running") == 0)
			snprintf(a->state, sizeof(a->state), "running");
		else if (strncmp(line, "pid = ", 6) == 0 && (v = line + 6, *v >= '0' && *v <= '9'))
			a->pid = strtol(v, NULL, 10);
	}
	if (strcmp(a->state, "running") != 0)
		a->pid = 0;
	lm_free(out);
	return 0;
}

/* Out of launchd if it is in, and its plist gone. */
static int agent_unload(lm_ssh *ssh, const char *domain, const char *home, lm_agent_info *a)
{
	lm_agent_paths_t paths;
	char target[160];
	const char *argv[] = {"launchctl", "bootout", target};
	int rc;

	if ((rc = lm_agent_paths(home, a->label, &paths)) < 0 || (rc = agent_query(ssh, domain, a)) < 0)
		return rc;
	snprintf(target, sizeof(target), "%s/%s", domain, a->label);
	if (strcmp(a->state, "not loaded") != 0 && (rc = guest_run(ssh, argv, 3, "launchctl bootout", NULL, NULL)) < 0)
		return rc;
	snprintf(a->state, sizeof(a->state), "not loaded");
	a->pid = 0;
	return lm_ssh_remove(ssh, paths.plist);
}

/* ---- the journal's "agents" array ---- */

static cJSON *journal_agents(cJSON *vm, int create)
{
	cJSON *a = cJSON_GetObjectItemCaseSensitive(vm, "agents");

	if (a == NULL && create)
		a = cJSON_AddArrayToObject(vm, "agents");
	return cJSON_IsArray(a) ? a : NULL;
}

static cJSON *journal_agent(cJSON *agents, const char *label)
{
	cJSON *a;

	cJSON_ArrayForEach(a, agents) {
		const char *l = lm_journal_string(a, "label");
		if (l != NULL && strcmp(l, label) == 0)
			return a;
	}
	return NULL;
}

static int agent_from_json(const cJSON *j, lm_agent_info *a)
{
	int rc;

	memset(a, 0, sizeof(*a));
	if ((rc = lm_journal_copy_string(j, "label", a->label, sizeof(a->label))) < 0 ||
	    (rc = lm_journal_copy_string(j, "plist", a->plist, sizeof(a->plist))) < 0 ||
	    (rc = lm_journal_copy_string(j, "program", a->program, sizeof(a->program))) < 0)
		return rc;
	if (lm_agent_label_check(a->label) < 0)
		return lm_error_set(LM_ECORRUPT, "state journal: an agent's label is not valid: %s", lm_error_last()->message);
	a->installed_at = lm_journal_number(j, "installed_at");
	snprintf(a->state, sizeof(a->state), "unknown");
	return 0;
}

/* o->agents from a journal entry's array. */
static int agents_load(const cJSON *agents, lm_vm_outcome *o)
{
	const cJSON *j;
	int n = cJSON_GetArraySize(agents), rc;

	o->nagents = 0;
	if (n <= 0)
		return 0;
	if ((o->agents = calloc((size_t)n, sizeof(*o->agents))) == NULL)
		return lm_error_nomem();
	cJSON_ArrayForEach(j, agents) {
		if ((rc = agent_from_json(j, &o->agents[o->nagents])) < 0)
			return rc;
		o->nagents++;
	}
	return 0;
}

/* Record (create) or forget (!create) one agent in the VM's entry. */
static int journal_update(lm_context *ctx, const char *vm, const lm_agent_spec *spec, const lm_agent_info *a,
    int create)
{
	lm_state *st = NULL;
	cJSON *entry, *agents, *j, *argv;
	size_t i;
	int rc;

	if ((rc = lm_state_open(&st, ctx)) < 0)
		return rc;
	if ((entry = lm_state_vm(st, vm, 0)) == NULL) {
		lm_state_close(st);
		return create ? lm_error_set(LM_ENOTENABLED, "%s is not enabled", vm) : 0;
	}
	agents = journal_agents(entry, create);
	if (agents != NULL && (j = journal_agent(agents, a->label)) != NULL)
		cJSON_DetachItemViaPointer(agents, j), cJSON_Delete(j);
	if (create) {
		if (agents == NULL || (j = cJSON_CreateObject()) == NULL || (argv = cJSON_CreateArray()) == NULL) {
			lm_state_close(st);
			return lm_error_nomem();
		}
		cJSON_AddItemToArray(agents, j);
		lm_journal_set_string(j, "label", a->label);
		lm_journal_set_string(j, "plist", a->plist);
		lm_journal_set_string(j, "program", a->program);
		cJSON_AddItemToObject(j, "argv", argv);
		for (i = 1; i < spec->argc; i++)
			cJSON_AddItemToArray(argv, cJSON_CreateString(spec->argv[i]));
		cJSON_AddBoolToObject(j, "keep_alive", spec->keep_alive != 0);
		cJSON_AddBoolToObject(j, "run_at_load", spec->run_at_load != 0);
		lm_journal_set_number(j, "installed_at", a->installed_at);
	} else if (agents != NULL && cJSON_GetArraySize(agents) == 0) {
		cJSON_DeleteItemFromObjectCaseSensitive(entry, "agents");
	}
	rc = lm_state_save(st);
	lm_state_close(st);
	return rc;
}

int lm_guest_agents_remove_recorded(lm_ssh *ssh, const lm_guest_facts *facts, const cJSON *agents, char *labels,
    size_t len)
{
	char domain[32];
	const cJSON *j;
	lm_agent_info a;
	size_t n = 0, used;
	int rc;

	if (len > 0)
		labels[0] = '\0';
	if (cJSON_GetArraySize(agents) <= 0)
		return 0;
	if ((rc = guest_domain(ssh, domain, sizeof(domain))) < 0)
		return rc;
	cJSON_ArrayForEach(j, agents) {
		if ((rc = agent_from_json(j, &a)) < 0 || (rc = agent_unload(ssh, domain, facts->home, &a)) < 0)
			return rc;
		used = strlen(labels);
		if (used + 1 < len)
			snprintf(labels + used, len - used, "%s%s", n++ ? ", " : "", a.label);
	}
	return 0;
}

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

static int op_open(lm_context *ctx, const char *vm, const char *what, lm_flow_result *result, agent_op *op)
{
	int rc;

	memset(op, 0, sizeof(*op));
	memset(result, 0, sizeof(*result));
	if ((rc = lm_flow_open_outcomes(result, &vm, 1)) < 0)
		return rc;
	op->o = &result->vms[0];
	if ((rc = lm_vm_lock_take(&op->lock, ctx, op->o->vm, what, 0)) < 0 ||
	    (rc = lm_vm_manager_open(&op->vmm, ctx)) < 0 ||
	    (rc = lm_flow_open_enabled(ctx, op->vmm, op->o, &op->r, &op->ssh, &op->se)) < 0 ||
	    (rc = guest_domain(op->ssh, op->domain, sizeof(op->domain))) < 0)
		return lm_outcome_fail(ctx, op->o, rc);
	return 0;
}

static void op_close(agent_op *op)
{
	lm_vm_record_dispose(&op->r);
	lm_ssh_free(op->ssh);
	lm_vm_manager_free(op->vmm);
	lm_vm_lock_release(op->lock);
}

/* The workload's program as launchd must be given it: an absolute path, found as `run` finds it;
 * a warning when SIP keeps the shim away from it. */
static int resolve_program(lm_context *ctx, agent_op *op, const lm_agent_spec *spec, lm_agent_info *a)
{
	lm_run_target t;
	char warning[4 * PATH_MAX];
	int rc;

	if ((rc = lm_guest_run_target(op->ssh, &op->se, spec->argv, 1, &t)) < 0)
		return rc;
	if (t.program[0] == '\0')
		return lm_error_set(LM_ENOTFOUND, "%s: %s not found in the guest (looked up on the bundle's tools, "
		    LM_GUEST_HOMEBREW_PATH " and the session's PATH)", op->o->vm, spec->argv[0]);
	if (lm_sip_warning(&op->o->guest, spec->argv[0], &t, warning, sizeof(warning)))
		lm_log(ctx, LM_LOG_WARN, "%s: %s", op->o->vm, warning);
	if (strlen(t.program) >= sizeof(a->program))
		return lm_error_set(LM_EINVALID, "%s: the program's path in the guest is longer than %zu bytes", op->o->vm,
		    sizeof(a->program) - 1);
	memcpy(a->program, t.program, strlen(t.program) + 1);
	return 0;
}

static int check_spec(const lm_agent_spec *spec)
{
	int rc;

	if (spec == NULL || (rc = lm_agent_label_check(spec->label)) == 0) {
		if (spec == NULL || spec->argc == 0 || spec->argv == NULL || spec->argv[0] == NULL || spec->argv[0][0] == '\0')
			return lm_error_set(LM_EINVALID, "agent install: no workload command given");
		if (strchr(spec->argv[0], '=') != NULL)
			return lm_error_set(LM_EINVALID, "agent install: '%s' is a variable assignment; the agent's "
			    "environment is the profile's (start the command with its program)", spec->argv[0]);
		return 0;
	}
	return rc;
}

/* Upload, lint, and load; *recorded says whether the journal lists it (for the undo). */
static int install_steps(lm_context *ctx, agent_op *op, const lm_agent_spec *spec, lm_agent_info *a, int *recorded)
{
	lm_agent_paths_t paths;
	char *xml = NULL, dirs[2][LM_AGENT_PATH_MAX], target[160];
	const char *mkdir_argv[] = {"mkdir", "-p", dirs[0], dirs[1]};
	const char *lint_argv[] = {"plutil", "-lint", paths.plist};
	const char *boot_argv[] = {"launchctl", "bootstrap", op->domain, paths.plist};
	const char *kick_argv[] = {"launchctl", "kickstart", "-k", target};
	size_t len = 0;
	double t;
	int rc;

	if ((rc = lm_step_begin(ctx, op->o, "agent-plist", &t)) < 0 || (rc = resolve_program(ctx, op, spec, a)) < 0 ||
	    (rc = lm_agent_paths(op->o->guest.home, spec->label, &paths)) < 0 ||
	    (rc = lm_agent_plist_build(spec, a->program, &op->se, op->o->guest.home, &xml, &len)) < 0)
		return rc;
	snprintf(a->plist, sizeof(a->plist), "%s", paths.plist);
	snprintf(target, sizeof(target), "%s/%s", op->domain, a->label);
	snprintf(dirs[0], sizeof(dirs[0]), "%s/" LM_AGENT_DIR, op->o->guest.home);
	snprintf(dirs[1], sizeof(dirs[1]), "%s/" LM_AGENT_LOG_DIR, op->o->guest.home);
	if (lm_context_options(ctx)->dry_run) {
		lm_step_add(ctx, op->o, "agent-plist", t, "would install %s running %s, then bootstrap it in %s",
		    paths.plist, a->program, op->domain);
		free(xml);
		return 0;
	}
	lm_step_add(ctx, op->o, "agent-plist", t, "%s runs %s with the shim's environment (%zu bytes)", a->label,
	    a->program, len);
	if ((rc = lm_step_begin(ctx, op->o, "record", &t)) < 0 || (rc = journal_update(ctx, op->o->vm, spec, a, 1)) < 0) {
		free(xml);
		return rc;
	}
	*recorded = 1;
	lm_step_add(ctx, op->o, "record", t, "state journal lists the agent");
	if ((rc = lm_step_begin(ctx, op->o, "agent-upload", &t)) < 0 ||
	    (rc = guest_run(op->ssh, mkdir_argv, 4, "mkdir", NULL, NULL)) < 0 ||
	    (rc = lm_ssh_upload(op->ssh, xml, len, paths.plist, 0644)) < 0 ||
	    (rc = guest_run(op->ssh, lint_argv, 3, "plutil -lint", NULL, NULL)) < 0) {
		free(xml);
		return rc;
	}
	free(xml);
	lm_step_add(ctx, op->o, "agent-upload", t, "%s uploaded and verified, plutil -lint OK", paths.plist);
	lm_flow_test_kill_point("agent-after-upload");
	if ((rc = lm_step_begin(ctx, op->o, "agent-load", &t)) < 0 || (rc = agent_query(op->ssh, op->domain, a)) < 0)
		return rc;
	if (strcmp(a->state, "not loaded") != 0) {
		const char *out_argv[] = {"launchctl", "bootout", target};
		if ((rc = guest_run(op->ssh, out_argv, 3, "launchctl bootout", NULL, NULL)) < 0)
			return rc;
	}
	if ((rc = guest_run(op->ssh, boot_argv, 4, "launchctl bootstrap", NULL, NULL)) < 0 ||
	    (rc = guest_run(op->ssh, kick_argv, 4, "launchctl kickstart", NULL, NULL)) < 0 ||
	    (rc = agent_query(op->ssh, op->domain, a)) < 0)
		return rc;
	lm_step_add(ctx, op->o, "agent-load", t, "bootstrapped in %s and kickstarted: %s%s", op->domain, a->state,
	    a->pid > 0 ? " (pid known)" : "");
	return 0;
}

int lm_flow_agent_install(lm_context *ctx, const char *vm, const lm_agent_spec *spec, const lm_profile *profile,
    lm_flow_result *result)
{
	lm_agent_info a;
	agent_op op;
	int rc, recorded = 0;

	memset(result, 0, sizeof(*result));
	if ((rc = check_spec(spec)) < 0)
		return rc;
	if ((rc = op_open(ctx, vm, "agent install", result, &op)) < 0)
		goto out;
	if (profile != NULL && (rc = lm_shim_env_make(&op.se, &op.o->guest, op.r.injection, op.r.shim, op.r.probe,
	    profile)) < 0) {
		lm_outcome_fail(ctx, op.o, rc);
		goto out;
	}
	memset(&a, 0, sizeof(a));
	snprintf(a.label, sizeof(a.label), "%s", spec->label);
	a.installed_at = lm_clock_epoch();
	if ((rc = install_steps(ctx, &op, spec, &a, &recorded)) < 0) {
		lm_outcome_fail(ctx, op.o, rc);
		/* Nothing half-installed: out of launchd, plist and record gone. */
		if (recorded && (agent_unload(op.ssh, op.domain, op.o->guest.home, &a) < 0 ||
		    journal_update(ctx, op.o->vm, spec, &a, 0) < 0))
			lm_outcome_append(op.o, "; undoing failed too (%s): `lume-metal agent remove` or `rollback` "
			    "removes it", lm_error_last()->message);
		else
			lm_outcome_append(op.o, "; the agent is not installed");
		goto out;
	}
	if ((op.o->agents = malloc(sizeof(a))) != NULL) {
		op.o->agents[0] = a;
		op.o->nagents = 1;
	}
	lm_outcome_message(op.o, "%s: agent %s %s", op.o->vm, a.label,
	    lm_context_options(ctx)->dry_run ? "would be installed" : "installed and started");
out:
	op_close(&op);
	return rc;
}

int lm_flow_agent_remove(lm_context *ctx, const char *vm, const char *label, lm_flow_result *result)
{
	lm_agent_spec spec;
	lm_agent_info a;
	lm_state *st = NULL;
	const cJSON *j = NULL;
	agent_op op;
	double t;
	int rc;

	memset(result, 0, sizeof(*result));
	if ((rc = lm_agent_label_check(label)) < 0)
		return rc;
	if ((rc = op_open(ctx, vm, "agent remove", result, &op)) < 0)
		goto out;
	if ((rc = lm_state_open_ex(&st, ctx, LM_STATE_READONLY, 0)) == 0 &&
	    (j = journal_agent(journal_agents(lm_state_vm(st, op.o->vm, 0), 0), label)) != NULL)
		rc = agent_from_json(j, &a);
	lm_state_close(st);
	if (rc == 0 && j == NULL)
		rc = lm_error_set(LM_ENOTFOUND, "%s has no agent %s installed by lume-metal", op.o->vm, label);
	if (rc < 0 || (rc = lm_step_begin(ctx, op.o, "agent-unload", &t)) < 0) {
		lm_outcome_fail(ctx, op.o, rc);
		goto out;
	}
	if (lm_context_options(ctx)->dry_run) {
		lm_step_add(ctx, op.o, "agent-unload", t, "would boot %s out of %s and remove %s", label, op.domain, a.plist);
	} else {
		memset(&spec, 0, sizeof(spec));
		if ((rc = agent_unload(op.ssh, op.domain, op.o->guest.home, &a)) < 0 ||
		    (rc = journal_update(ctx, op.o->vm, &spec, &a, 0)) < 0) {
			lm_outcome_fail(ctx, op.o, rc);
			goto out;
		}
		lm_step_add(ctx, op.o, "agent-unload", t, "booted out of %s, %s removed (its logs are kept)", op.domain,
		    a.plist);
	}
	if ((op.o->agents = malloc(sizeof(a))) != NULL) {
		op.o->agents[0] = a;
		op.o->nagents = 1;
	}
	lm_outcome_message(op.o, "%s: agent %s %s", op.o->vm, label,
	    lm_context_options(ctx)->dry_run ? "would be removed" : "removed");
out:
	op_close(&op);
	return rc;
}

int lm_flow_agents_status(lm_ssh *ssh, const cJSON *agents, lm_vm_outcome *o)
{
	char domain[32];
	size_t i;
	int rc;

	if ((rc = agents_load(agents, o)) < 0 || ssh == NULL || o->nagents == 0)
		return rc;
	if ((rc = guest_domain(ssh, domain, sizeof(domain))) < 0)
		return rc;
	for (i = 0; i < o->nagents; i++)
		if ((rc = agent_query(ssh, domain, &o->agents[i])) < 0)
			return rc;
	return 0;
}

int lm_flow_agent_list(lm_context *ctx, const char *vm, lm_flow_result *result)
{
	return lm_flow_status(ctx, &vm, 1, result);
}
