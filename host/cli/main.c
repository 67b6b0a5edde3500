/* lume-metal: entry point. Parses options, then hands over to one command; stdout is checked
 * first (open) and last (flushed and closed: print.c's rule for output that cannot be written). */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct {
	const char *name;
	int (*run)(lm_cli *cli);
} commands[] = {
	{"enable", lm_cmd_enable},
	{"status", lm_cmd_status},
	{"probe", lm_cmd_probe},
	{"run", lm_cmd_run},
	{"rollback", lm_cmd_rollback},
	{"profile", lm_cmd_profile},
	{"host", lm_cmd_host},
	{"forget-host", lm_cmd_forget_host},
	{"bench", lm_cmd_bench},
	{"report", lm_cmd_report},
	{"gc", lm_cmd_gc},
	{"agent", lm_cmd_agent},
	{"doctor", lm_cmd_doctor},
	{"selftest", lm_cmd_selftest},
	{"help", lm_cmd_help},
	{"completion", lm_cmd_completion},
	{"local", lm_cmd_local},
	{"version", lm_cmd_version},
	{"__complete", lm_cmd_complete}, /* hidden: the completion scripts' helper (VM names) */
};

int main(int argc, char **argv)
{
	lm_cli cli;
	size_t i;
	int rc;

	/* Before anything opens a file: with fd 1 closed, the first file opened would become stdout. */
	lm_cli_output_stdout_open();
	if ((rc = lm_cli_parse(&cli, argc, argv)) != LM_EXIT_OK)
		return lm_cli_output_close(rc == -1 ? LM_EXIT_OK : rc); /* -1: --version already printed */
	switch (cli.show) {
	case LM_CLI_SHOW_HELP:
		return lm_cli_output_close(lm_cli_help_asked(&cli));
	case LM_CLI_SHOW_MAN:
		lm_cli_man(stdout);
		return lm_cli_output_close(LM_EXIT_OK);
	case LM_CLI_SHOW_USAGE:
		lm_cli_usage(stderr);
		return lm_cli_output_close(LM_EXIT_USAGE);
	default:
		break;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(cli.command, commands[i].name) == 0) {
			rc = commands[i].run(&cli);
			/* JSON is whole or absent: a command whose document could not be rendered failed. */
			if (rc == LM_EXIT_OK && lm_cli_document_failed())
				rc = LM_EXIT_FAILURE;
			lm_cli_exit_interrupted();
			return lm_cli_output_close(rc);
		}
	/* unknown: an error naming the nearest command */
	return lm_cli_output_close(lm_cli_command_help(&cli, cli.command, stdout));
}
