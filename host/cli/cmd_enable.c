/* lume-metal enable VM... [--profile NAME|FILE] */
#include "cli.h"

int lm_cmd_enable(lm_cli *cli)
{
	lm_context *ctx = NULL;
	lm_profile *profile = NULL;
	lm_flow_result *result = NULL;
	int rc, exit_code;

	if (cli->argc == 0)
		return lm_cli_usage_error(cli, "enable: name at least one VM (lume-metal enable VM... [--profile P])");
	/* The profile is validated before anything is touched. */
	if (lm_profile_resolve(&profile, cli->profile != NULL ? cli->profile : lm_profile_default_name()) < 0)
		return lm_cli_fail(cli, LM_EXIT_FAILURE);
	cli->fleet = cli->argc > 1;
	if ((rc = lm_cli_context(cli, &ctx)) != 0) {
		lm_profile_free(profile);
		return rc;
	}
	lm_cli_trap_signals();
	rc = lm_flow_enable(ctx, (const char *const *)cli->argv, (size_t)cli->argc, profile, cli->jobs, &result);
	/* Out of memory: what would be printed is not whole, so the error alone (issue 36). */
	if (rc < 0 && (result == NULL || result->count == 0 || rc == LM_ENOMEM)) {
		exit_code = lm_cli_fail(cli, rc == LM_EINVALID ? LM_EXIT_USAGE : LM_EXIT_FAILURE);
	} else {
		exit_code = lm_cli_flow_exit(result);
		lm_cli_flow_print(cli, result, exit_code);
		if (lm_cli_interrupted())
			lm_cli_interrupted_line(result);
	}
	lm_flow_result_free(result);
	lm_context_free(ctx);
	lm_profile_free(profile);
	return exit_code;
}
