/* lume-metal agent install VM... --label L [--keep-alive] [--run-at-load] [--profile P] -- PROG ARGS...
 *            agent remove VM... --label L (or: agent remove VM L)
 *            agent list VM...
 *            agent logs VM --label L [-f] (or: agent logs VM L)
 * Over several VMs each is handled in turn and the run ends with the recap line enable's and
 * rollback's have (lm_cli_flow_recap; JSON: `recap`). */
#include <string.h>

#include "cli.h"

/* How launchd says the job last ended ("never exited", "exit 0", "signal 15"), as `brew services
 * info` gives it. */
static void last_exit_words(const lm_agent_info *a, char *buf, size_t len)
{
	if (!LM_HAS_FIELD(a, lm_agent_info, stderr_path) || strcmp(a->state, "unknown") == 0)
		snprintf(buf, len, "unknown (the guest was not reached)");
	else if (strcmp(a->state, "not loaded") == 0)
		snprintf(buf, len, "unknown (not loaded in launchd)");
	else if (!a->last_exit_known)
		snprintf(buf, len, "never exited since it was loaded");
	else if (a->last_exit_status < 0)
		snprintf(buf, len, "ended by signal %d", -a->last_exit_status);
	else
		snprintf(buf, len, "exit %d", a->last_exit_status);
}

static void agent_lines(FILE *out, const lm_vm_outcome *o, int launchd)
{
	char last[64];
	size_t i;

	if (o->nagents == 0)
		return;
	lm_cli_printf(out, "  agents:\n");
	for (i = 0; i < o->nagents; i++) {
		const lm_agent_info *a = o->agents[i];
		if (a->pid > 0)
			lm_cli_printf(out, "    %-32s %s (pid %ld)  %s\n", a->label, a->state, a->pid, a->program);
		else
			lm_cli_printf(out, "    %-32s %s  %s\n", a->label, a->state, a->program);
		/* Whether the agent's process got the shim: its activation record (docs/activation-format.md). */
		if (a->shim_loaded == 1 && a->shim_widened == 1)
			lm_cli_printf(out, "      shim: loaded since it started: %s\n", a->shim);
		else if (a->shim_loaded == 1)
			lm_cli_printf(out, "      shim: no answer widened since it started: %s\n", a->shim);
		else if (a->shim_widened == 1 && LM_HAS_FIELD(a, lm_agent_info, widened_exited_exe) && a->widened_exited_pid > 0)
			lm_cli_printf(out, "      shim: not loaded by its process (pid %ld); %s\n", a->pid, a->shim);
		else if (a->shim_widened == 1)
			lm_cli_printf(out, "      shim: not loaded by its process (pid %ld), widened in a process it started: %s\n",
			    a->pid, a->shim);
		else if (a->shim_loaded == 0)
			lm_cli_printf(out, "      shim: not loaded by its process since it started (no activation record "
			    "for pid %ld in %s)\n", a->pid, a->record_dir);
		if (!launchd || !LM_HAS_FIELD(a, lm_agent_info, stderr_path))
			continue;
		/* What `launchctl print` shows of the job (agent list, install). */
		last_exit_words(a, last, sizeof(last));
		lm_cli_printf(out, "      last exit: %s\n", last);
		if (a->stdout_path[0] != '\0')
			lm_cli_printf(out, "      stdout: %s\n", a->stdout_path);
		if (a->stderr_path[0] != '\0')
			lm_cli_printf(out, "      stderr: %s\n", a->stderr_path);
	}
}

void lm_cli_agent_lines(FILE *out, const lm_vm_outcome *o)
{
	agent_lines(out, o, 0);
}

static void agent_detail_lines(FILE *out, const lm_vm_outcome *o)
{
	agent_lines(out, o, 1);
}

void lm_cli_agent_spec(const lm_cli *cli, const char *label, lm_agent_spec *spec, lm_workload_options *wo)
{
	memset(spec, 0, sizeof(*spec));
	spec->label = label;
	spec->argv = (const char *const *)cli->cmd_argv;
	spec->argc = (size_t)cli->cmd_argc;
	spec->keep_alive = cli->keep_alive;
	spec->run_at_load = cli->run_at_load;
	lm_workload_options_init(wo, LM_WORKLOAD_OPTIONS_VERSION);
	wo->run_hardened_stock = cli->run_hardened_stock;
	wo->resign_copy = cli->resign_copy;
	wo->process_type = cli->process_type;
}

#define AGENT_USAGE "lume-metal agent install VM... --label L [--keep-alive] [--run-at-load] [--profile P] -- " \
    "PROG ARGS..., agent remove VM... --label L, agent list VM..., agent logs VM --label L [-f]"

static int agent_usage(lm_cli *cli, const char *what)
{
	return lm_cli_usage_error(cli, "agent: %s (" AGENT_USAGE ")", what);
}

static int print_result(lm_cli *cli, int rc, const lm_flow_result *result)
{
	int exit_code, list = strcmp(cli->json_command, "agent list") == 0;
	size_t i;

	if (rc < 0 && (result == NULL || result->count == 0))
		return lm_cli_fail(cli, rc == LM_EINVALID ? LM_EXIT_USAGE : LM_EXIT_FAILURE);
	exit_code = lm_cli_flow_exit(result);
	if (cli->json || !list) {
		cli->after_vm = agent_detail_lines; /* each VM's agent under its steps */
		lm_cli_flow_print(cli, result, exit_code);
		return exit_code;
	}
	/* agent list: each VM's agents, a failed VM's line and message as the flows print them. */
	lm_cli_progress_clear(cli);
	for (i = 0; i < result->count; i++) {
		const lm_vm_outcome *o = result->vms[i];
		if (o->rc < 0)
			lm_cli_flow_failed_vm(cli, result, o, result->count == 1 ? result->seconds : 0);
		else if (o->nagents == 0)
			lm_cli_printf(stdout, "%s: no agents installed by lume-metal\n", o->vm);
		else
			lm_cli_printf(stdout, "%s:\n", o->vm);
		if (o->rc == 0)
			agent_detail_lines(stdout, o);
	}
	lm_cli_flow_recap(cli, result);
	lm_cli_flush();
	return exit_code;
}

/* agent logs: the bytes as they come, each log under a header when there are two (as tail). A
 * write that fails refuses the bytes, which ends the reading (following too); the command then
 * ends as every command does when its output cannot be written (print.c). */
typedef struct {
	const lm_agent_info *info;
	int last; /* the log the last bytes came from (0: none yet) */
} logs_out;

static int on_log(void *data, int which, const char *bytes, size_t len)
{
	logs_out *lo = data;

	if (which != lo->last) {
		if (lm_cli_output_printf(1, "%s==> %s <==\n", lo->last != 0 ? "\n" : "",
		    which == 1 ? lo->info->stdout_path : lo->info->stderr_path) < 0)
			return -1;
		lo->last = which;
	}
	return lm_cli_output_write(1, bytes, len);
}

static int agent_logs(lm_cli *cli, lm_context *ctx, const char *vm, const char *label)
{
	lm_agent_info info;
	logs_out lo = {&info, 0};
	int rc;

	memset(&info, 0, sizeof(info));
	if (cli->follow)
		lm_cli_trap_signals(); /* ^C, SIGTERM: the end of following, as tail -f's */
	rc = lm_flow_agent_logs(ctx, vm, label, cli->follow, on_log, &lo, &info);
	if (lm_cli_output_failed(NULL) != 0)
		lm_cli_output_end();
	if (rc < 0)
		return lm_cli_fail(cli, rc == LM_EINVALID ? LM_EXIT_USAGE : LM_EXIT_FAILURE);
	if (lo.last == 0 && !cli->quiet)
		lm_cli_printf(stderr, "lume-metal: %s: agent %s has written nothing yet (%s, %s)\n", vm, label,
		    info.stdout_path[0] ? info.stdout_path : "no stdout path", info.stderr_path[0] ? info.stderr_path : "no stderr path");
	return LM_EXIT_OK;
}

int lm_cmd_agent(lm_cli *cli)
{
	const char *verb = cli->argc > 0 ? cli->argv[0] : "", *label = cli->label;
	const char *const *vms = (const char *const *)cli->argv + 1;
	size_t nvms = cli->argc > 1 ? (size_t)cli->argc - 1 : 0;
	lm_context *ctx = NULL;
	lm_profile *profile = NULL;
	lm_flow_result *result = NULL;
	lm_agent_spec spec;
	lm_workload_options wo;
	int rc, exit_code, logs = strcmp(verb, "logs") == 0;

	if (strcmp(verb, "install") == 0)
		cli->json_command = "agent install";
	else if (strcmp(verb, "remove") == 0)
		cli->json_command = "agent remove";
	else if (strcmp(verb, "list") == 0)
		cli->json_command = "agent list";
	else if (logs)
		cli->json_command = "agent logs";
	else
		return lm_cli_unknown_subcommand(cli, "agent", verb);
	/* `agent remove VM L` (and `agent logs VM L`): the label after the one VM, without --label. */
	if ((strcmp(verb, "remove") == 0 || logs) && label == NULL && cli->argc == 3) {
		label = cli->argv[2];
		nvms = 1;
	}
	if (nvms == 0)
		return agent_usage(cli, "name a VM");
	if (logs && nvms != 1)
		return agent_usage(cli, "agent logs: name exactly one VM");
	if (logs && cli->json)
		return agent_usage(cli, "agent logs prints the logs as they are: no --format json");
	if (cli->follow && !logs)
		return agent_usage(cli, "--follow (-f) is for agent logs only");
	if (cli->cmd_argv != NULL && strcmp(verb, "install") != 0)
		return agent_usage(cli, "'--' and a command are for agent install only");
	if (strcmp(verb, "list") != 0 && label == NULL)
		return agent_usage(cli, "give the agent's label with --label");
	if (label != NULL && lm_agent_label_check(label) < 0)
		return lm_cli_fail(cli, LM_EXIT_USAGE);
	if (strcmp(verb, "install") == 0 && cli->cmd_argc == 0)
		return agent_usage(cli, "give the workload after '--'");
	if (cli->profile != NULL && lm_profile_resolve(&profile, cli->profile) < 0)
		return lm_cli_fail(cli, LM_EXIT_FAILURE);
	cli->fleet = nvms > 1 && !logs && strcmp(verb, "list") != 0;
	if ((rc = lm_cli_context(cli, &ctx)) != 0) {
		lm_profile_free(profile);
		return rc;
	}
	if (logs) {
		exit_code = agent_logs(cli, ctx, vms[0], label);
		lm_context_free(ctx);
		lm_profile_free(profile);
		return exit_code;
	}
	if (strcmp(verb, "install") == 0) {
		lm_cli_agent_spec(cli, label, &spec, &wo);
		rc = lm_flow_agent_install(ctx, vms, nvms, &spec, profile, &wo, cli->jobs, &result);
	} else if (strcmp(verb, "remove") == 0) {
		rc = lm_flow_agent_remove(ctx, vms, nvms, label, cli->jobs, &result);
	} else {
		rc = lm_flow_agent_list(ctx, vms, nvms, &result);
	}
	exit_code = print_result(cli, rc, result);
	lm_flow_result_free(result);
	lm_context_free(ctx);
	lm_profile_free(profile);
	return exit_code;
}
