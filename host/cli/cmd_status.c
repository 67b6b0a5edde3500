/* lume-metal status [VM...] [--long] */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int by_name(const void *a, const void *b)
{
	return strcmp((*(const lm_vm_outcome *const *)a)->vm, (*(const lm_vm_outcome *const *)b)->vm);
}

/* The feature kernels of the exercise (simdgroup reduction and matrix, bfloat16; not the
 * threadgroup sizes, whose largest a profile may raise past, nor the device's known defects) that
 * passed, of those run. */
static void kernels_cell(const lm_report *exercised, char *buf, size_t size)
{
	const char *message;
	int i, run = 0, passed = 0;

	for (i = 0; exercised != NULL && i < LM_EXERCISE_THREADGROUP_16K; i++) {
		lm_exercise_result res = lm_report_exercise(exercised, (lm_exercise)i, &message);
		if (res == LM_EXERCISE_NOT_RUN)
			continue;
		run++;
		passed += res == LM_EXERCISE_PASS;
	}
	if (run == 0)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%d/%d pass", passed, run);
}

/* The journal says a rollback of the VM began and did not finish (a library without the field
 * never says so). */
static int rolling_back(const lm_vm_outcome *o)
{
	return LM_HAS_FIELD(o, lm_vm_outcome, journal_status) && o->journal_status != NULL &&
	    strcmp(o->journal_status, "rolling-back") == 0;
}

/* Several VMs: one row each, sorted by name, as `tart list` and `brew services` show a fleet; a
 * failed VM's row says FAILED and its message goes to stderr, once. --long gives the detail. */
static int print_table(const lm_cli *cli, const lm_flow_result *r)
{
	static const char *const head[] = {"VM", "STATE", "MANAGER", "ENABLED", "VERIFIED", "RESTART PENDING",
	    "FAMILY", "KERNELS"};
	const lm_vm_outcome **rows = malloc(r->count * sizeof(*rows));
	int name_w = (int)strlen(head[0]);
	size_t i;

	if (rows == NULL) /* the detail, in the order given, needs no copy to sort */
		return -1;
	for (i = 0; i < r->count; i++) {
		rows[i] = r->vms[i];
		if ((int)strlen(rows[i]->vm) > name_w)
			name_w = (int)strlen(rows[i]->vm);
	}
	qsort(rows, r->count, sizeof(*rows), by_name);
	lm_cli_printf(stdout, "%-*s  %-10s %-10s %-8s %-9s %-16s %-7s %s\n", name_w, head[0], head[1], head[2], head[3],
	    head[4], head[5], head[6], head[7]);
	for (i = 0; i < r->count; i++) {
		const lm_vm_outcome *o = rows[i];
		int on = o->rc == 0 && o->already_enabled;
		char family[24], kernels[32];

		lm_cli_printf(stdout, "%-*s  ", name_w, o->vm);
		if (o->rc < 0) {
			lm_cli_word(stdout, cli, LM_CLI_FAIL, "FAILED", 0);
			lm_cli_puts(stdout, "\n");
			continue;
		}
		if (o->gone) { /* every column, as the other rows */
			lm_cli_printf(stdout, "%-10s %-10s %-9s%-10s%-17s%-7s %s\n", "gone", "-", "no", "-", "-", "-", "-");
			continue;
		}
		if (o->shimmed != NULL)
			snprintf(family, sizeof(family), "Apple%d", lm_report_apple_family(o->shimmed) - 1000);
		else
			snprintf(family, sizeof(family), "-");
		kernels_cell(o->exercised, kernels, sizeof(kernels));
		lm_cli_printf(stdout, "%-10s %-10s ", o->info.status[0] ? o->info.status : "unknown",
		    o->info.manager[0] ? o->info.manager : "-");
		lm_cli_word(stdout, cli, on ? LM_CLI_OK : LM_CLI_PLAIN, on ? "yes" : "no", 9);
		lm_cli_word(stdout, cli, !on ? LM_CLI_PLAIN : o->bundle_verified ? LM_CLI_OK : LM_CLI_WARN,
		    !on ? "-" : o->bundle_verified ? "yes" : "no", 10);
		lm_cli_word(stdout, cli, !on ? LM_CLI_PLAIN : o->restart_pending ? LM_CLI_WARN : LM_CLI_OK,
		    !on ? "-" : o->restart_pending ? "yes" : "no", 17);
		lm_cli_printf(stdout, "%-7s %s\n", family, kernels);
	}
	for (i = 0; i < r->count; i++)
		if (rows[i]->rc < 0)
			lm_cli_printf(stderr, "lume-metal: %s\n", rows[i]->message); /* already names the VM */
		else if (rows[i]->gone)
			lm_cli_printf(stdout, "%s\n", rows[i]->message);
		else if (rolling_back(rows[i]))
			lm_cli_printf(stdout, "%s: a rollback began and did not finish; `lume-metal rollback %s` finishes it\n",
			    rows[i]->vm, rows[i]->vm);
	free(rows);
	return 0;
}

static void print_text(const lm_cli *cli, const lm_flow_result *r)
{
	const lm_host_pref_info *p = &r->pref;
	char flags[160], user[1800];
	const char *why;
	size_t i;

	lm_cli_printf(stdout, "host preference %s %s: %s (%s%s)\n", p->domain, p->key, p->present ? p->value : "absent",
	    p->store, p->managed ? ", managed by a configuration profile" : "");
	if (p->recorded)
		lm_cli_printf(stdout, "  changed by lume-metal; original: %s\n", p->original);
	lm_cli_printf(stdout, "  mode: %s\n", lm_cli_pref_mode(p));
	lm_cli_pref_user_line(p, user, sizeof(user));
	lm_cli_printf(stdout, "  user: %s\n", user);
	lm_cli_pref_byhost_line(p, &r->byhost, user, sizeof(user));
	lm_cli_printf(stdout, "  -currentHost: %s\n", user);
	if (r->count == 0)
		lm_cli_printf(stdout, "no VM is enabled\n");
	if (r->count > 1 && !cli->long_format && print_table(cli, r) == 0)
		return;
	for (i = 0; i < r->count; i++) {
		const lm_vm_outcome *o = r->vms[i];

		if (o->gone) {
			lm_cli_printf(stdout, "%s (`lume-metal gc` forgets it)\n", o->message);
			continue;
		}
		if (o->rc < 0) {
			lm_cli_printf(stdout, "%s: ", o->vm);
			lm_cli_word(stdout, cli, LM_CLI_FAIL, "FAILED", 0);
			lm_cli_puts(stdout, "\n");
			lm_cli_printf(stderr, "lume-metal: %s\n", o->message); /* already names the VM */
			continue;
		}
		lm_cli_printf(stdout, "%s: ", o->vm);
		if (rolling_back(o)) {
			lm_cli_word(stdout, cli, LM_CLI_WARN, "rolling back, unfinished", 0);
			lm_cli_printf(stdout, " (a rollback began and did not finish: its guest's files may be partly removed; "
			    "`lume-metal rollback %s` finishes it)", o->vm);
		} else {
			lm_cli_word(stdout, cli, o->already_enabled ? LM_CLI_OK : LM_CLI_PLAIN, o->already_enabled ? "enabled" :
			    "not enabled", 0);
		}
		lm_cli_puts(stdout, "\n");
		lm_cli_printf(stdout, "  state %s, ip %s, manager %s\n", o->info.status[0] ? o->info.status : "unknown",
		    o->info.ip[0] ? o->info.ip : "-", o->info.manager[0] ? o->info.manager : "-");
		if (o->info.vm_id[0] != '\0')
			lm_cli_printf(stdout, "  identity %s\n", o->info.vm_id);
		else if (o->info.vm_id_why[0] != '\0')
			lm_cli_printf(stdout, "  identity unknown: %s (host-key pins follow the name only)\n", o->info.vm_id_why);
		if (o->guest.os[0] != '\0')
			lm_cli_printf(stdout, "  guest %s %s %s, SIP %s\n", o->guest.os, o->guest.os_version, o->guest.arch,
			    o->guest.sip[0] ? o->guest.sip : "not reported");
		if (o->guest.tart_shim)
			lm_cli_printf(stdout, "  the Tart image's own shim is installed (" LM_TART_SHIM_PATH ", TART_METAL_*), "
			    "not enabled: Cirrus Labs' images inject it into no session, `tart exec` ones included; "
			    "lume-metal's shim reads TART_METAL_* too\n");
		if (o->already_enabled) {
			lm_cli_printf(stdout, "  profile %s, bundle %s: ", o->profile, o->bundle_id);
			lm_cli_word(stdout, cli, o->bundle_verified ? LM_CLI_OK : LM_CLI_WARN, o->bundle_verified ? "verified" :
			    "not verified", 0);
			/* Why, as the library found it (a file replaced by a link to /dev/zero is named as such). */
			if (!o->bundle_verified && (why = strstr(o->message, "bundle not verified: ")) != NULL)
				lm_cli_printf(stdout, ": %.*s", (int)strcspn(why + 21, ";"), why + 21);
			else if (!o->bundle_verified)
				lm_cli_printf(stdout, " (%s)", strcmp(o->info.status, "running") != 0 ? "the VM is not running" :
				    "the guest could not be asked, or holds another bundle than the one recorded");
			lm_cli_printf(stdout, "\n  restart pending: ");
			lm_cli_word(stdout, cli, o->restart_pending ? LM_CLI_WARN : LM_CLI_OK, o->restart_pending ?
			    "yes (not certainly started after the preference changed; `lume-metal enable` restarts it)" : "no", 0);
			lm_cli_puts(stdout, "\n");
			lm_cli_printf(stdout, "  host preference mode %s, %s\n", lm_host_pref_mode_name(o->pref_mode),
			    lm_cli_pref_need(o->pref_mode, o->pref_needed));
		}
		if (o->shimmed != NULL) {
			lm_cli_flags_line(&o->shimmed_flags, flags, sizeof(flags));
			lm_cli_printf(stdout, "  last probe: shim ");
			lm_cli_word(stdout, cli, lm_report_shim_active(o->shimmed) ? LM_CLI_OK : LM_CLI_FAIL,
			    lm_report_shim_active(o->shimmed) ? "active" : "inactive", 0);
			lm_cli_printf(stdout, ", Apple%d, %llu bytes threadgroup memory; llama.cpp %s\n",
			    lm_report_apple_family(o->shimmed) - 1000,
			    (unsigned long long)lm_report_max_threadgroup_memory(o->shimmed), flags);
		}
		if (o->exercised != NULL)
			lm_cli_exercise_lines(cli, stdout, "  ", "last exercise", o->exercised, o->guest.os_version);
		lm_cli_agent_lines(stdout, o);
	}
}

int lm_cmd_status(lm_cli *cli)
{
	lm_context *ctx = NULL;
	lm_flow_result *result = NULL;
	int rc, exit_code;

	if ((rc = lm_cli_context(cli, &ctx)) != 0)
		return rc;
	rc = lm_flow_status(ctx, (const char *const *)cli->argv, (size_t)cli->argc, &result);
	if (rc < 0) {
		exit_code = lm_cli_fail(cli, rc == LM_EINVALID ? LM_EXIT_USAGE : LM_EXIT_FAILURE);
	} else {
		exit_code = lm_cli_flow_exit(result);
		if (cli->json)
			lm_cli_flow_print(cli, result, exit_code);
		else
			print_text(cli, result);
	}
	lm_flow_result_free(result);
	lm_context_free(ctx);
	return exit_code;
}
