/* lume-metal gc [--dry-run]: forget the VMs their manager no longer knows (journal entries and
 * host-key pins), one line each. */
#include "cli.h"

int lm_cmd_gc(lm_cli *cli)
{
	lm_context *ctx = NULL;
	lm_flow_result *result = NULL;
	size_t i;
	int rc, exit_code;

	if (cli->argc != 0)
		return lm_cli_usage_error(cli, "gc takes no VM names: it looks at every VM lume-metal remembers");
	if ((rc = lm_cli_context(cli, &ctx)) != 0)
		return rc;
	rc = lm_flow_gc(ctx, &result);
	if (rc < 0) {
		exit_code = lm_cli_fail(cli, LM_EXIT_FAILURE);
	} else {
		exit_code = LM_EXIT_OK;
		if (cli->json)
			lm_cli_flow_print(cli, result, exit_code);
		else if (result->count == 0)
			lm_cli_printf(stdout, "nothing to forget: every VM lume-metal remembers exists\n");
		else
			for (i = 0; i < result->count; i++)
				lm_cli_printf(stdout, "%s\n", result->vms[i]->message);
	}
	lm_flow_result_free(result);
	lm_context_free(ctx);
	return exit_code;
}
