/* lume-metal rollback VM... | --all [--no-restart] [--jobs N] */
#include "cli.h"

int lm_cmd_rollback(lm_cli *cli)
{
	lm_context *ctx = NULL;
	lm_flow_result *result = NULL;
	int rc, exit_code;

	if (cli->argc == 0 && !cli->all)
		return lm_cli_usage_error(cli, "rollback: name the VMs, or pass --all");
	if (cli->argc > 0 && cli->all)
		return lm_cli_usage_error(cli, "rollback: either name VMs or pass --all, not both");
	cli->fleet = cli->argc > 1 || cli->all;
	if ((rc = lm_cli_context(cli, &ctx)) != 0)
		return rc;
	lm_cli_trap_signals();
	rc = lm_flow_rollback(ctx, (const char *const *)cli->argv, (size_t)cli->argc, cli->all, !cli->no_restart,
	    cli->jobs, &result);
	if (rc < 0 && (result == NULL || result->count == 0)) {
		exit_code = lm_cli_fail(cli, rc == LM_EINVALID ? LM_EXIT_USAGE : LM_EXIT_FAILURE);
	} else {
		exit_code = lm_cli_flow_exit(result);
		lm_cli_flow_print(cli, result, exit_code);
		if (result->count == 0 && !cli->json)
			lm_cli_printf(stdout, "no VM is enabled: nothing to roll back\n");
		if (lm_cli_interrupted())
			lm_cli_interrupted_line(result);
	}
	lm_flow_result_free(result);
	lm_context_free(ctx);
	return exit_code;
}
