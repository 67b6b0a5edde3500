#include "cli.h"

int lm_cmd_profile(lm_cli *cli)
{
	return lm_cli_usage_error(cli, "'%s' is not available in this build yet", cli->command);
}
