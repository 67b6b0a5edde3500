/* Printing flow results (enable, status, probe, rollback) as text or one JSON document. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* How many VMs came to each result: the exit code's and the recap line's one count. */
static void count_results(const lm_flow_result *r, size_t *ok, size_t *failed, size_t *unsupported)
{
	size_t i;

	*ok = *failed = *unsupported = 0;
	for (i = 0; i < r->count; i++) {
		/* Stock kept: the shim does not activate, or (the shim alone, the host untouched) the
		 * kernels the profile needs do not run -- a clear skip, as local probe's. */
		if (r->vms[i]->rc == LM_EUNSUPPORTED ||
		    (r->vms[i]->rc == LM_ENOTPROVEN && r->vms[i]->pref_mode == LM_HOST_PREF_NEVER))
			(*unsupported)++;
		else if (r->vms[i]->rc < 0)
			(*failed)++;
		else
			(*ok)++;
	}
}

int lm_cli_flow_exit(const lm_flow_result *r)
{
	size_t i, ok, failed, unsupported;

	for (i = 0; i < r->count; i++)
		if (r->vms[i]->rc == LM_ENEWER) /* the state every VM shares: the run's own code */
			return LM_EXIT_NEWER;
	count_results(r, &ok, &failed, &unsupported);
	if (failed + unsupported == 0)
		return LM_EXIT_OK;
	if (failed + unsupported < r->count)
		return LM_EXIT_PARTIAL;
	return failed == 0 ? LM_EXIT_GUEST_UNSUPPORTED : LM_EXIT_FAILURE;
}

/* The first failed VM stands for the run in the envelope's error. */
static const lm_vm_outcome *first_failure(const lm_flow_result *r)
{
	size_t i;

	for (i = 0; i < r->count; i++)
		if (r->vms[i]->rc < 0)
			return r->vms[i];
	return NULL;
}

/* The hint for one VM's failure (the JSON document's per-VM error.hint). */
static const char *advise_vm(void *data, const lm_vm_outcome *o)
{
	return lm_cli_hint_about(data, o->rc, o->vm, o->message);
}

/* How many VMs a dry run would restart: their restart step says "would restart" (enable.c). */
static size_t would_restart(const lm_flow_result *r)
{
	size_t i, k, n = 0;

	for (i = 0; i < r->count; i++)
		for (k = 0; k < r->vms[i]->nsteps; k++)
			if (strcmp(r->vms[i]->steps[k]->name, "restart") == 0 && r->vms[i]->steps[k]->detail != NULL &&
			    strncmp(r->vms[i]->steps[k]->detail, "would restart", 13) == 0) {
				n++;
				break;
			}
	return n;
}

/* Whether a VM of a fleet restarted, in its one line: enable says it either way (the question a
 * fleet's operator asks), rollback only when it did; a dry run says what it would do. */
static const char *restart_words(const lm_cli *cli, const lm_vm_outcome *o)
{
	const char *command = cli->json_command != NULL ? cli->json_command : cli->command;
	size_t k;

	if (o->restarted)
		return ", restarted";
	for (k = 0; k < o->nsteps; k++)
		if (strcmp(o->steps[k]->name, "restart") == 0 && o->steps[k]->detail != NULL &&
		    strncmp(o->steps[k]->detail, "would restart", 13) == 0)
			return ", would restart";
	if (command == NULL || strcmp(command, "enable") != 0)
		return "";
	if (o->started)
		return cli->lib.dry_run ? ", would start" : ", started";
	for (k = 0; k < o->nsteps; k++)
		if (strcmp(o->steps[k]->name, "start") == 0 && cli->lib.dry_run)
			return ", would start";
	return ", no restart";
}

/* What several VMs came to, in one line after theirs, as Ansible's PLAY RECAP ends a play:
 * "4 enabled, 0 failed in 2.2 s" (the run's own time); a dry run says what it would do: "would
 * enable 3 (1 restart), 0 failed in 0.4 s". One VM's line says it already. */
void lm_cli_flow_recap(const lm_cli *cli, const lm_flow_result *r)
{
	static const struct { const char *command, *done, *would; } verbs[] = {
		{"enable", "enabled", "enable"}, {"rollback", "rolled back", "roll back"}, {"probe", "probed", "probe"},
		{"agent install", "installed", "install"}, {"agent remove", "removed", "remove"},
		{"agent list", "listed", "list"},
	};
	const char *command = cli->json_command != NULL ? cli->json_command : cli->command, *done = NULL, *would = NULL;
	size_t i, ok, failed, unsupported, restarts;

	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]) && command != NULL; i++)
		if (strcmp(command, verbs[i].command) == 0) {
			done = verbs[i].done;
			would = verbs[i].would;
		}
	if (done == NULL || r->count < 2)
		return;
	count_results(r, &ok, &failed, &unsupported);
	if (cli->lib.dry_run && (restarts = would_restart(r)) > 0)
		lm_cli_printf(stdout, "would %s %zu (%zu restart%s), ", would, ok, restarts, restarts == 1 ? "" : "s");
	else if (cli->lib.dry_run)
		lm_cli_printf(stdout, "would %s %zu, ", would, ok);
	else
		lm_cli_printf(stdout, "%zu %s, ", ok, done);
	if (unsupported > 0)
		lm_cli_printf(stdout, "%zu unsupported, ", unsupported);
	lm_cli_printf(stdout, "%zu failed in %.1f s\n", failed, r->seconds);
}

void lm_cli_flow_failed_vm(lm_cli *cli, const lm_flow_result *r, const lm_vm_outcome *o, double total)
{
	const char *hint;

	size_t k;

	/* Its time is its steps'; a VM that failed before any step took the run's time when it was
	 * the run's only VM and the run was timed. Otherwise its time is not known: none is printed,
	 * never a "(0.00 s)" that did not happen (issue 50). */
	if (o->nsteps > 0)
		for (total = 0, k = 0; k < o->nsteps; k++)
			total += o->steps[k]->seconds;
	lm_cli_word(stdout, cli, LM_CLI_FAIL, "FAILED", 0);
	if (o->nsteps == 0 && (r->count > 1 || total <= 0))
		lm_cli_printf(stdout, " %s\n", o->vm);
	else
		lm_cli_printf(stdout, " %s (%.2f s)\n", o->vm, total);
	lm_cli_printf(stderr, "lume-metal: %s\n", o->message != NULL ? o->message : o->vm);
	if ((hint = advise_vm(cli, o)) != NULL)
		lm_cli_printf(stderr, "hint: %s\n", hint);
}

static int by_name(const void *a, const void *b)
{
	return strcmp((*(const lm_vm_outcome *const *)a)->vm, (*(const lm_vm_outcome *const *)b)->vm);
}

void lm_cli_flow_print(lm_cli *cli, const lm_flow_result *r, int exit_code)
{
	const lm_vm_outcome **order = NULL;
	const lm_vm_outcome *failed = first_failure(r);
	lm_json_envelope env;
	const char *hint;
	char *doc = NULL, run_hint[640];
	size_t i, k;
	int rc, fleet;

	lm_cli_progress_clear(cli);
	if (cli->json) {
		env = lm_cli_envelope(cli, exit_code, failed != NULL ? failed->rc : 0, failed != NULL ? failed->message : NULL);
		/* The run's hint is the first failed VM's, about that VM (not the first VM named); copied,
		 * since each VM's advice is made in the same buffer. */
		hint = failed != NULL ? advise_vm(cli, failed) : NULL;
		snprintf(run_hint, sizeof(run_hint), "%s", hint != NULL ? hint : "");
		env.hint = hint != NULL ? run_hint : NULL;
		rc = lm_flow_result_to_json_advised(r, advise_vm, cli, &env, &doc);
		lm_cli_print_document(cli, rc, doc);
		return;
	}
	/* Several VMs are printed sorted by name, as status's table is, whatever order they were
	 * named or handled in (--jobs); the JSON keeps the order they were named in. */
	if (r->count > 1 && (order = malloc(r->count * sizeof(*order))) != NULL) {
		for (i = 0; i < r->count; i++)
			order[i] = r->vms[i];
		qsort(order, r->count, sizeof(*order), by_name);
	}
	/* A fleet reads like Ansible's: one line per VM (its result, its time, whether it restarted)
	 * and the recap; the steps under --verbose. One VM keeps its steps. */
	fleet = r->count > 1 && !cli->verbose;
	for (i = 0; i < r->count; i++) {
		const lm_vm_outcome *o = order != NULL ? order[i] : r->vms[i];
		double total = 0;

		for (k = 0; k < o->nsteps; k++)
			total += o->steps[k]->seconds;
		/* A failure's message goes to stderr, once, with the hint about this VM; stdout says
		 * which VM failed. */
		/* A failure before any step (a VM no manager knows, a lock) took time all the same: the
		 * run's, when it was this VM's alone; never a 0.00 s that did not happen. */
		if (o->nsteps == 0 && r->count == 1)
			total = r->seconds;
		if (o->rc < 0)
			lm_cli_flow_failed_vm(cli, r, o, total);
		else if (fleet)
			lm_cli_printf(stdout, "%s (%.2f s%s)\n", o->message, total, restart_words(cli, o));
		else
			lm_cli_printf(stdout, "%s (%.2f s)\n", o->message, total);
		if (cli->quiet || fleet) /* the result only */
			continue;
		for (k = 0; k < o->nsteps; k++)
			lm_cli_printf(stdout, "  %-16s %7.3f s  %s\n", o->steps[k]->name, o->steps[k]->seconds, o->steps[k]->detail);
		if (cli->after_vm != NULL && o->rc == 0) /* agent install, remove: the agent under its VM */
			cli->after_vm(stdout, o);
	}
	if (r->pref_restored)
		lm_cli_printf(stdout, "host preference %s.%s restored: %s\n", r->pref.domain, r->pref.key,
		    r->pref.present ? r->pref.value : "absent");
	/* A fleet's informational lines are --verbose's: the preference's change, which every VM of
	 * the host reads, is said once. */
	else if (cli->fleet && !cli->verbose && r->pref_changed)
		lm_cli_printf(stdout, "host preference %s.%s %s %s (was %s)\n", r->pref.domain, r->pref.key,
		    cli->lib.dry_run ? "would be set to" : "set to", r->pref.present ? r->pref.value : "absent",
		    r->pref.original[0] ? r->pref.original : "unknown");
	free(order);
	lm_cli_flow_recap(cli, r);
	lm_cli_flush();
}

void lm_cli_pref_user_line(const lm_host_pref_info *p, char *buf, size_t size)
{
	if (p->user[0] == '\0')
		snprintf(buf, size, "unknown");
	else if (p->server_user[0] == '\0')
		snprintf(buf, size, "%s's domain (no Lume server found on this host to compare with)%s", p->user,
		    p->user_mismatch ? "; root's domain is not a Lume user's" : "");
	else if (p->user_mismatch)
		snprintf(buf, size, "%s's domain, but the Lume server runs as %s: its VMs do not read this one", p->user,
		    p->server_user);
	else
		snprintf(buf, size, "%s's domain, the Lume server's user's: its VMs read it", p->user);
}

void lm_cli_pref_byhost_line(const lm_host_pref_info *p, const lm_host_pref_byhost *b, char *buf, size_t size)
{
	if (!b->present)
		snprintf(buf, size, "none (%s)", b->where);
	else
		snprintf(buf, size, "%s in %s: it wins over the value above for the process that runs the VMs%s; "
		    "remove it with `defaults -currentHost delete %s %s`", b->value, b->where,
		    b->matches ? " (the same value)" : ", which then does not get the unlock", p->domain, p->key);
}

const char *lm_cli_pref_need(lm_host_pref_mode mode, lm_pref_needed needed)
{
	switch (needed) {
	case LM_PREF_NEEDED_YES: return "needed: the kernels failed with the shim alone and ran once it was set";
	case LM_PREF_NEEDED_NO: return "not needed: the kernels ran with the shim alone, the VM at the stock level";
	case LM_PREF_NEEDED_UNKNOWN: break;
	}
	return mode == LM_HOST_PREF_ALWAYS ? "not measured (set first, the published recipe)" :
	    "not measured (the VM already ran with the preference in effect)";
}

const char *lm_cli_pref_mode(const lm_host_pref_info *p)
{
	if (!p->recorded)
		return "no change of lume-metal's in effect";
	if (p->kept)
		return "kept: the fleet keeps the host unlocked; only `host disable` (or `rollback --all --restore-host`) "
		    "restores it";
	return "per VM: rolling back the last enabled VM restores it";
}

/* The VM's llama.cpp flags in one short line: "reduction mm bf16 -tensor". */
void lm_cli_flags_line(const lm_workload_flags *f, char *buf, size_t len)
{
	snprintf(buf, len, "%creduction %cmatrix-multiply %cbfloat16 %ctensor%s",
	    f->llama_simdgroup_reduction ? '+' : '-', f->llama_simdgroup_mm ? '+' : '-',
	    f->llama_bfloat16 ? '+' : '-', f->llama_tensor ? '+' : '-',
	    f->mlx_residency_risk ? " (MLX residency-set risk)" : "");
}
