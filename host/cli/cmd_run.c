/* lume-metal run VM -- CMD...: one guest command with the shim; its exit code is ours. The
 * guest's output streams to our stdout/stderr (the library's on_output, output.c); with
 * --format json it is collected into the one document instead. */
#include <stdlib.h>

#include "cli.h"

int lm_cmd_run(lm_cli *cli)
{
	lm_context *ctx = NULL;
	lm_json_envelope env;
	char *doc = NULL;
	int rc, status = 0;

	if (cli->argc != 1 || cli->cmd_argc == 0)
		return lm_cli_usage_error(cli, "run: lume-metal run VM -- CMD [ARGS...]");
	if ((rc = lm_cli_context(cli, &ctx)) != 0)
		return rc;
	rc = lm_flow_run(ctx, cli->argv[0], (const char *const *)cli->cmd_argv, (size_t)cli->cmd_argc, &status);
	lm_context_free(ctx);
	if (rc < 0) {
		free(cli->out_bytes);
		free(cli->err_bytes);
		return lm_cli_fail(cli, LM_EXIT_FAILURE);
	}
	if (cli->json && cli->output_lost) {
		free(cli->out_bytes);
		free(cli->err_bytes);
		return lm_cli_report(cli, LM_EXIT_FAILURE, LM_ENOMEM, "out of memory while collecting the guest's output "
		    "for the JSON document: the command ran, but its output is not all there");
	}
	if (cli->json) {
		env = lm_cli_envelope(cli, status, 0, NULL);
		if (lm_run_to_json(cli->argv[0], status, cli->out_bytes, cli->out_len,
		    cli->err_bytes, cli->err_len, &env, &doc) < 0)
			doc = NULL;
		lm_cli_print_document(cli, doc == NULL ? -1 : 0, doc);
	}
	free(cli->out_bytes);
	free(cli->err_bytes);
	return status;
}
