/* lume-metal report [--format markdown|json] [--archive FILE.tar.gz] DIR...: each evidence folder
 * as the block to post (docs/results-report.md); the archive to attach beside it. */
#include <string.h>

#include "cli.h"

int lm_cmd_report(lm_cli *cli)
{
	char *doc = NULL;

	cli->json_command = "report";
	if (cli->argc < 1)
		return lm_cli_usage_error(cli, "report: lume-metal report [--format markdown|json] [--archive FILE.tar.gz] "
		    "DIR [DIR...]");
	if (cli->archive != NULL && cli->argc != 1)
		return lm_cli_usage_error(cli, "report --archive: one evidence folder per archive (%d given)", cli->argc);
	if (lm_bench_report((const char *const *)cli->argv, (size_t)cli->argc, cli->json ? LM_BENCH_REPORT_JSON :
	    LM_BENCH_REPORT_MARKDOWN, &doc) < 0)
		return lm_cli_fail(cli, LM_EXIT_FAILURE);
	if (cli->archive != NULL && lm_bench_archive(cli->argv[0], cli->archive, cli->lib.force) < 0) {
		lm_free(doc);
		return lm_cli_fail(cli, LM_EXIT_FAILURE);
	}
	lm_cli_printf(stdout, "%s%s", doc, cli->json ? "\n" : "");
	lm_free(doc);
	if (cli->archive != NULL)
		lm_cli_printf(stderr, "archive: %s (attach it to the issue beside this text)\n", cli->archive);
	return LM_EXIT_OK;
}
