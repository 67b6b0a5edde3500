/* lume-metal selftest VM [--out DIR]: the facts the simulator assumes, measured in the VM's guest
 * (docs/selftest.md); one line per check, the folder to post, exit 1 when any check disagrees. */
#include "cli.h"

int lm_cmd_selftest(lm_cli *cli)
{
	lm_context *ctx = NULL;
	lm_selftest_result *result = NULL;
	lm_json_envelope env;
	char *doc = NULL;
	size_t i;
	int rc, exit_code;

	if (cli->argc != 1)
		return lm_cli_usage_error(cli, "selftest: name one enabled, running VM (lume-metal selftest VM [--out DIR])");
	if ((rc = lm_cli_context(cli, &ctx)) != 0)
		return rc;
	lm_cli_trap_signals();
	if (lm_selftest_run(ctx, cli->argv[0], cli->out_dir, &result) < 0) {
		exit_code = lm_cli_fail(cli, LM_EXIT_FAILURE);
		goto out;
	}
	exit_code = result->disagree > 0 ? LM_EXIT_FAILURE : LM_EXIT_OK;
	if (cli->json) {
		env = lm_cli_envelope(cli, exit_code, 0, NULL);
		rc = lm_selftest_result_to_json(result, &env, &doc);
		lm_cli_print_document(cli, rc, doc);
		goto out;
	}
	lm_cli_progress_clear(cli);
	if (result->simulator)
		lm_cli_printf(stdout, "ran on lume-metal's simulator (its guest says so), not on a Mac\n");
	for (i = 0; i < result->count; i++) {
		const lm_selftest_check *c = result->checks[i];
		lm_cli_word(stdout, cli, c->verdict == LM_SELFTEST_AGREES ? LM_CLI_OK : c->verdict == LM_SELFTEST_DISAGREES ?
		    LM_CLI_FAIL : LM_CLI_WARN, lm_selftest_verdict_name(c->verdict), 12);
		lm_cli_printf(stdout, " %s\n      assumed: %s\n      seen:    %s\n", c->name, c->assumed, c->seen);
	}
	lm_cli_printf(stdout, "%zu checks: %zu agree, %zu disagree, %zu not measured; evidence folder %s\n", result->count,
	    result->agree, result->disagree, result->not_measured, result->dir);
	if (result->disagree > 0)
		lm_cli_printf(stderr, "hint: the simulator's assumptions above that disagree are what the project needs to "
		    "hear: post the folder %s (docs/selftest.md)\n", result->dir);
out:
	lm_selftest_result_free(result);
	lm_context_free(ctx);
	return exit_code;
}
