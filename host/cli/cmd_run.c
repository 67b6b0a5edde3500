/* lume-metal run VM -- CMD...: one guest command with the shim; its exit code is ours. */
#include "cli.h"

int lm_cmd_run(lm_cli *cli)
{
	lm_context *ctx = NULL;
	int rc, status = 0;

	if (cli->argc != 1 || cli->cmd_argc == 0)
		return lm_cli_usage_error(cli, "run: lume-metal run VM -- CMD [ARGS...]");
	if ((rc = lm_cli_context(cli, &ctx)) != 0)
		return rc;
	rc = lm_flow_run(ctx, cli->argv[0], (const char *const *)cli->cmd_argv, (size_t)cli->cmd_argc, &status);
	lm_context_free(ctx);
	if (rc < 0)
		return lm_cli_fail(cli, LM_EXIT_FAILURE);
	return status;
}
