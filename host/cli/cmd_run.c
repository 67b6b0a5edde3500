#include "cli.h"

int lm_cmd_run(lm_cli *cli)
{
	return lm_cli_usage_error(cli, "'%s' is not available in this build yet", cli->command);
}
