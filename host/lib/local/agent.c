/* lume-metal local agent install|remove|list, and local status: LaunchAgents in this account's gui
 * domain carrying the shim's environment, as for a VM. The machine's files are the record (no
 * journal: a CI runner is often fresh): an agent is lume-metal's when its plist is in
 * ~/Library/LaunchAgents and its activation directory, made by the install, in
 * ~/Library/Logs/lume-metal (LABEL.activation). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "local_internal.h"
#include "path.h"
#include "ssh_files.h"
#include "str.h"
#include "text.h"
#include "guest_agents.h"
#include "guest_codesign.h"
#include "guest_machine.h"
#include "guest_shim.h"
#include "guest_workload.h"

#define ACTIVATION_SUFFIX ".activation"
/* More is not a list of agents any more but a directory someone else fills: an error. */
#define LOCAL_AGENTS_MAX 256

/* The agents lume-metal installed here, with launchd's state and whether each running one loaded
 * the shim, into the outcome. */
static int agents_found(lm_local_machine *m)
{
	lm_vm_outcome *o = m->res->machine;
	lm_agent_paths_t paths;
	lm_ssh_stat_info st;
	lm_agent_info a;
	char logs[LM_AGENT_PATH_MAX], **names = NULL;
	size_t i, n;
	int rc;

	if ((rc = lm_path_join_buf(logs, sizeof(logs), o->guest.home, LM_AGENT_LOG_DIR, NULL)) < 0)
		return rc;
	if ((rc = lm_ssh_list_dir(m->ssh, logs, LOCAL_AGENTS_MAX, &names)) == LM_ENOTFOUND)
		return 0;
	for (i = 0; rc == 0 && names != NULL && names[i] != NULL; i++) {
		n = strlen(names[i]);
		if (n <= strlen(ACTIVATION_SUFFIX) || strcmp(names[i] + n - strlen(ACTIVATION_SUFFIX), ACTIVATION_SUFFIX) != 0)
			continue;
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.shim_loaded = -1;
		a.shim_widened = -1;
		snprintf(a.label, sizeof(a.label), "%.*s", (int)(n - strlen(ACTIVATION_SUFFIX)), names[i]);
		if (lm_agent_label_check(a.label) < 0 || lm_agent_paths(o->guest.home, a.label, &paths) < 0)
			continue;
		if ((rc = lm_ssh_stat(m->ssh, paths.plist, &st)) < 0 || !st.exists)
			continue;
		snprintf(a.plist, sizeof(a.plist), "%s", paths.plist);
		snprintf(a.record_dir, sizeof(a.record_dir), "%s", paths.record_dir);
		snprintf(a.state, sizeof(a.state), "unknown");
		if ((rc = lm_agent_plist_program(m->ssh, paths.plist, a.program, sizeof(a.program))) == 0)
			rc = lm_outcome_add_agent(o, &a);
	}
	lm_strv_free(names);
	if (rc == 0 && o->nagents > 0 && (rc = lm_guest_agents_query(m->ssh, o->agents, o->nagents)) == 0)
		rc = lm_guest_agents_activation(m->ssh, o->guest.home, o->agents, o->nagents);
	return rc;
}

int lm_local_status(lm_context *ctx, lm_local_result **out)
{
	lm_local_machine m;
	lm_vm_outcome *o;
	double t;
	int rc;

	/* The stock answers only: status changes nothing and loads no shim. */
	if ((rc = lm_local_begin(&m, ctx, NULL, "status", &t, out)) < 0)
		return lm_local_close(&m, rc);
	o = m.res->machine;
	if ((rc = agents_found(&m)) < 0)
		return lm_local_close(&m, rc);
	lm_step_add(ctx, o, "status", t, "stock %s; %zu agent%s", lm_report_device(o->stock), o->nagents,
	    o->nagents == 1 ? "" : "s");
	return lm_local_close(&m, 0);
}

int lm_local_agent_list(lm_context *ctx, lm_local_result **out)
{
	lm_local_machine m;
	int rc;

	if ((rc = lm_local_open(&m, ctx, NULL, out)) == 0)
		rc = agents_found(&m);
	return lm_local_close(&m, rc);
}

int lm_local_agent_remove(lm_context *ctx, const char *label, lm_local_result **out)
{
	const char *rm_argv[] = {"rm", "-rf", NULL};
	lm_agent_paths_t paths;
	lm_ssh_stat_info st;
	lm_local_machine m;
	lm_vm_outcome *o;
	lm_agent_info a;
	char domain[32];
	double t;
	int rc;

	if ((rc = lm_local_open(&m, ctx, NULL, out)) < 0)
		return lm_local_close(&m, rc);
	o = m.res->machine;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.shim_loaded = -1;
	a.shim_widened = -1;
	if ((rc = lm_agent_label_check(label)) < 0 || (rc = lm_agent_paths(o->guest.home, label, &paths)) < 0 ||
	    (rc = lm_ssh_stat(m.ssh, paths.record_dir, &st)) < 0)
		return lm_local_close(&m, rc);
	/* Removing what is not there is done already (a CI job's clean-up may run twice); a plist
	 * without our activation directory is someone else's. */
	if (!st.exists) {
		rc = lm_outcome_message(ctx, o, "this machine: no agent %s installed by lume-metal; nothing to remove", label);
		return lm_local_close(&m, rc);
	}
	snprintf(a.label, sizeof(a.label), "%s", label);
	snprintf(a.plist, sizeof(a.plist), "%s", paths.plist);
	snprintf(a.record_dir, sizeof(a.record_dir), "%s", paths.record_dir);
	rm_argv[2] = paths.record_dir;
	if ((rc = lm_step_begin(ctx, o, "agent-unload", &t)) < 0 || (rc = lm_launchd_domain(m.ssh, domain, sizeof(domain))) < 0)
		return lm_local_close(&m, rc);
	if (lm_context_options(ctx)->dry_run) {
		lm_step_add(ctx, o, "agent-unload", t, "would boot %s out of %s and remove %s", label, domain, a.plist);
	} else {
		if ((rc = lm_launchd_unload(m.ssh, domain, o->guest.home, &a)) < 0 ||
		    (rc = lm_guest_resign_remove(m.ssh, o->guest.home, label)) < 0 ||
		    (rc = lm_guest_run_argv(m.ssh, rm_argv, 3, "rm", NULL, NULL)) < 0)
			return lm_local_close(&m, rc);
		lm_step_add(ctx, o, "agent-unload", t, "booted out of %s, %s removed (its logs are kept)", domain, a.plist);
	}
	if ((rc = lm_outcome_add_agent(o, &a)) < 0) /* removed, not to be reported without it */
		return lm_local_close(&m, rc);
	rc = lm_outcome_message(ctx, o, "this machine: agent %s %s", label, lm_context_options(ctx)->dry_run ?
	    "would be removed" : "removed");
	return lm_local_close(&m, rc);
}

/* The plist written, linted and loaded (the launchd recipe of a VM's agent install). */
static int install_steps(lm_local_machine *m, const lm_agent_spec *spec, const lm_workload_options *opts,
    lm_agent_info *a, char *backup, size_t backup_len, int *had)
{
	lm_vm_outcome *o = m->res->machine;
	lm_agent_paths_t paths;
	lm_flow_workload w;
	char *xml = NULL, dirs[2][LM_AGENT_PATH_MAX], domain[32], target[160];
	const char *clear_argv[] = {"rm", "-rf", paths.record_dir};
	const char *mkdir_argv[] = {"mkdir", "-p", dirs[0], dirs[1], paths.record_dir};
	const char *lint_argv[] = {"plutil", "-lint", paths.plist};
	const char *out_argv[] = {"launchctl", "bootout", target};
	const char *kick_argv[] = {"launchctl", "kickstart", "-k", target};
	lm_launchd_wait wait = {0, "local", "agent-load"};
	size_t len = 0;
	double t;
	int rc;

	if ((rc = lm_step_begin(m->ctx, o, "agent-plist", &t)) < 0 ||
	    (rc = lm_flow_workload_check(m->ctx, m->ssh, &m->se, o, spec->argv, 1, opts, spec->label, &w)) < 0)
		return rc;
	if (w.target.program[0] == '\0')
		return lm_error_set(LM_ENOTFOUND, "this machine: %s not found (looked up on the bundle's tools, "
		    LM_GUEST_HOMEBREW_PATH " and PATH)", spec->argv[0]);
	if ((rc = lm_text_format(a->program, sizeof(a->program), "%s", w.target.program)) < 0 ||
	    (rc = lm_agent_paths(o->guest.home, spec->label, &paths)) < 0 ||
	    (rc = lm_launchd_domain(m->ssh, domain, sizeof(domain))) < 0 ||
	    (rc = lm_shim_env_workload(&m->se, NULL, NULL, paths.record_dir)) < 0 ||
	    (rc = lm_path_join_buf(dirs[0], sizeof(dirs[0]), o->guest.home, LM_AGENT_DIR, NULL)) < 0 ||
	    (rc = lm_path_join_buf(dirs[1], sizeof(dirs[1]), o->guest.home, LM_AGENT_LOG_DIR, NULL)) < 0 ||
	    (rc = lm_agent_plist_build(spec, a->program, &m->se, o->guest.home, lm_workload_process_type(opts),
	        &xml, &len)) < 0)
		return rc < 0 ? rc : lm_error_set(LM_EINVALID, "this machine: the program's path is too long");
	snprintf(a->plist, sizeof(a->plist), "%s", paths.plist);
	snprintf(a->record_dir, sizeof(a->record_dir), "%s", paths.record_dir);
	snprintf(target, sizeof(target), "%s/%s", domain, a->label);
	if (lm_context_options(m->ctx)->dry_run) {
		lm_step_add(m->ctx, o, "agent-plist", t, "would install %s running %s, then bootstrap it in %s", paths.plist,
		    a->program, domain);
		free(xml);
		return 0;
	}
	lm_step_add(m->ctx, o, "agent-plist", t, "%s runs %s with the shim's environment (%zu bytes)", a->label,
	    a->program, len);
	if ((rc = lm_step_begin(m->ctx, o, "agent-upload", &t)) < 0 ||
	    (rc = lm_guest_run_argv(m->ssh, clear_argv, 3, "rm", NULL, NULL)) < 0 ||
	    (rc = lm_guest_run_argv(m->ssh, mkdir_argv, 5, "mkdir", NULL, NULL)) < 0 ||
	    (rc = lm_launchd_plist_keep(m->ssh, paths.plist, backup, backup_len, had)) < 0 ||
	    (rc = lm_ssh_upload(m->ssh, xml, len, paths.plist, 0644)) < 0 ||
	    (rc = lm_guest_run_argv(m->ssh, lint_argv, 3, "plutil -lint", NULL, NULL)) < 0) {
		free(xml);
		return rc;
	}
	free(xml);
	lm_step_add(m->ctx, o, "agent-upload", t, "%s written and verified, plutil -lint OK", paths.plist);
	wait.deadline = lm_clock_monotonic() + lm_launchd_release_wait();
	if ((rc = lm_step_begin(m->ctx, o, "agent-load", &t)) < 0 || (rc = lm_launchd_query(m->ssh, domain, a)) < 0 ||
	    (strcmp(a->state, "not loaded") != 0 &&
	    ((rc = lm_guest_run_argv(m->ssh, out_argv, 3, "launchctl bootout", NULL, NULL)) < 0 ||
	    (rc = lm_launchd_wait_gone(m->ctx, m->ssh, domain, a->label, &wait)) < 0)) ||
	    (rc = lm_launchd_bootstrap(m->ctx, m->ssh, domain, paths.plist, &wait)) < 0 ||
	    (rc = lm_guest_run_argv(m->ssh, kick_argv, 4, "launchctl kickstart", NULL, NULL)) < 0 ||
	    (rc = lm_launchd_query(m->ssh, domain, a)) < 0)
		return rc;
	if (*had)
		(void)lm_ssh_remove(m->ssh, backup); /* a copy left behind loads nothing */
	lm_step_add(m->ctx, o, "agent-load", t, "bootstrapped in %s and kickstarted: %s", domain, a->state);
	return 0;
}

int lm_local_agent_install(lm_context *ctx, const lm_agent_spec *spec, const lm_profile *profile,
    const lm_workload_options *opts, lm_local_result **out)
{
	lm_local_machine m;
	lm_vm_outcome *o;
	lm_agent_info a;
	char backup[LM_AGENT_PATH_MAX + 32] = "";
	int rc, had = 0;

	if ((rc = lm_local_open(&m, ctx, profile, out)) < 0)
		return lm_local_close(&m, rc);
	o = m.res->machine;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.shim_loaded = -1;
	a.shim_widened = -1;
	a.installed_at = lm_clock_epoch();
	if (spec == NULL || spec->argc == 0 || spec->argv == NULL || spec->argv[0] == NULL || spec->argv[0][0] == '\0' ||
	    strchr(spec->argv[0], '=') != NULL)
		rc = lm_error_set(LM_EINVALID, "local agent install: the workload must start with its program");
	else if ((rc = lm_agent_label_check(spec->label)) == 0)
		snprintf(a.label, sizeof(a.label), "%s", spec->label);
	if (rc == 0 && (rc = install_steps(&m, spec, opts, &a, backup, sizeof(backup), &had)) < 0 && a.plist[0] != '\0' &&
	    !lm_context_options(ctx)->dry_run) {
		/* Nothing half-installed: the previous plist back (not loaded), or none and out of launchd. */
		const char *mv_argv[] = {"mv", "-f", backup, a.plist};
		char domain[32];
		lm_outcome_fail(ctx, o, rc);
		if (had ? lm_guest_run_argv(m.ssh, mv_argv, 4, "mv", NULL, NULL) < 0 :
		    lm_launchd_domain(m.ssh, domain, sizeof(domain)) < 0 || lm_launchd_unload(m.ssh, domain, o->guest.home, &a) < 0)
			lm_outcome_append(o, "; undoing failed too (%s): the agent %s is left installed",
			    lm_error_last()->message, a.label);
		else
			lm_outcome_append(o, had ? "; the previous plist is back (not loaded)" : "; the agent is not installed");
		return lm_local_close(&m, rc);
	}
	if (rc < 0)
		return lm_local_close(&m, rc);
	if ((rc = lm_outcome_add_agent(o, &a)) < 0) /* installed, not to be reported without it */
		return lm_local_close(&m, rc);
	if (lm_context_options(ctx)->dry_run)
		rc = lm_outcome_message(ctx, o, "this machine: agent %s would be installed", a.label);
	else if (strcmp(a.state, "running") == 0 && a.pid > 0)
		rc = lm_outcome_message(ctx, o, "this machine: agent %s installed and started (pid %ld)", a.label, a.pid);
	else
		rc = lm_outcome_message(ctx, o, "this machine: agent %s installed, but not running (launchd: %s); its log is in "
		    "~/Library/Logs/lume-metal", a.label, a.state);
	return lm_local_close(&m, rc);
}
