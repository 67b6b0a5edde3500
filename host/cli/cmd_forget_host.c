#include "cli.h"

int lm_cmd_forget_host(lm_cli *cli)
{
	return lm_cli_usage_error(cli, "'%s' is not available in this build yet", cli->command);
}
