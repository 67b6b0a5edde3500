/* lume-metal agent install VM --label L [--keep-alive] [--run-at-load] [--profile P] -- PROG ARGS...
 *            agent remove VM --label L (or: agent remove VM L)
 *            agent list VM */
#include <string.h>

#include "cli.h"

void lm_cli_agent_lines(FILE *out, const lm_vm_outcome *o)
{
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
		else if (a->shim_widened == 1)
			lm_cli_printf(out, "      shim: not loaded by its process (pid %ld), widened in a process it started: %s\n",
			    a->pid, a->shim);
		else if (a->shim_loaded == 0)
			lm_cli_printf(out, "      shim: not loaded by its process since it started (no activation record "
			    "for pid %ld in %s)\n", a->pid, a->record_dir);
	}
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

static int agent_usage(lm_cli *cli, const char *what)
{
	return lm_cli_usage_error(cli, "agent: %s (lume-metal agent install VM --label L [--keep-alive] [--run-at-load] "
	    "[--profile P] -- PROG ARGS..., agent remove VM --label L, agent list VM)", what);
}

static int print_result(lm_cli *cli, int rc, const lm_flow_result *result)
{
	const lm_vm_outcome *o;
	int exit_code;

	if (rc < 0 && (result == NULL || result->count == 0))
		return lm_cli_fail(cli, rc == LM_EINVALID ? LM_EXIT_USAGE : LM_EXIT_FAILURE);
	o = result->vms[0];
	exit_code = lm_cli_flow_exit(result);
	if (cli->json || o->rc < 0 || strcmp(cli->json_command, "agent list") != 0)
		lm_cli_flow_print(cli, result, exit_code);
	if (!cli->json && o->rc == 0) {
		if (strcmp(cli->json_command, "agent list") == 0 && o->nagents == 0)
			lm_cli_printf(stdout, "%s: no agents installed by lume-metal\n", o->vm);
		else if (strcmp(cli->json_command, "agent list") == 0)
			lm_cli_printf(stdout, "%s:\n", o->vm);
		lm_cli_agent_lines(stdout, o);
	}
	return exit_code;
}

int lm_cmd_agent(lm_cli *cli)
{
	const char *verb = cli->argc > 0 ? cli->argv[0] : "", *label = cli->label;
	lm_context *ctx = NULL;
	lm_profile *profile = NULL;
	lm_flow_result *result = NULL;
	lm_agent_spec spec;
	lm_workload_options wo;
	int rc, exit_code;

	if (strcmp(verb, "install") == 0)
		cli->json_command = "agent install";
	else if (strcmp(verb, "remove") == 0)
		cli->json_command = "agent remove";
	else if (strcmp(verb, "list") == 0)
		cli->json_command = "agent list";
	else
		return lm_cli_unknown_subcommand(cli, "agent", verb);
	if (strcmp(verb, "remove") == 0 && label == NULL && cli->argc == 3)
		label = cli->argv[2];
	if (cli->argc != (strcmp(verb, "remove") == 0 && cli->label == NULL ? 3 : 2))
		return agent_usage(cli, "name exactly one VM");
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
	if ((rc = lm_cli_context(cli, &ctx)) != 0) {
		lm_profile_free(profile);
		return rc;
	}
	if (strcmp(verb, "install") == 0) {
		lm_cli_agent_spec(cli, label, &spec, &wo);
		rc = lm_flow_agent_install_workload(ctx, cli->argv[1], &spec, profile, &wo, &result);
	} else if (strcmp(verb, "remove") == 0) {
		rc = lm_flow_agent_remove(ctx, cli->argv[1], label, &result);
	} else {
		rc = lm_flow_agent_list(ctx, cli->argv[1], &result);
	}
	exit_code = print_result(cli, rc, result);
	lm_flow_result_free(result);
	lm_context_free(ctx);
	lm_profile_free(profile);
	return exit_code;
}
