/* lume-metal run VM -- CMD...: one guest command with the shim, as `tart exec` runs one (stdin,
 * -i, -t: terminal.c); its exit code is ours. The guest's output streams to our stdout/stderr
 * (the library's on_output, output.c); with --format json it is collected into the one document
 * instead. SIGINT, SIGTERM and SIGHUP stop the workload's process group in the guest; lume-metal
 * then ends by that signal (main.c). Afterwards, which of its processes loaded the shim (their
 * activation records), or why none did. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli.h"

/* The window's size is asked for as soon as the workload runs, at every wake of the library's
 * loop: the first ask is the moment to go raw (until then ^C still interrupts the connection). */
static int window_size(void *data, unsigned int *cols, unsigned int *rows)
{
	int *want_raw = data;

	if (*want_raw) {
		*want_raw = 0;
		if (lm_cli_terminal_raw() < 0)
			lm_cli_printf(stderr, "lume-metal: warning: this terminal cannot be put in raw mode; keys go to the "
			    "guest a line at a time\n");
	}
	return lm_cli_window_changed(NULL, cols, rows);
}

/* As `tart exec`: stdin, a pseudo-terminal, the signals that stop the workload (run's own: SIGHUP
 * too), the window. */
static void terminal_options(const lm_cli *cli, lm_workload_options *wo, int *want_raw)
{
	lm_cli_run_io io;

	lm_cli_run_terminal(cli->interactive, cli->tty, isatty(STDIN_FILENO), isatty(STDOUT_FILENO), &io);
	wo->input = io.forward;
	wo->input_fd = STDIN_FILENO;
	wo->tty = io.pty;
	lm_cli_terminal_size(&wo->tty_cols, &wo->tty_rows);
	wo->tty_term = getenv("TERM");
	wo->pending_signal = lm_cli_pending_signal;
	wo->window_size = window_size;
	*want_raw = io.raw;
	wo->callback_data = want_raw;
	lm_cli_trap_signals();
	lm_cli_trap_hangup();
}

/* After the workload's own output, as quiet as `tart exec`: by default one line of ours at most —
 * the one process that loaded the shim, how many did, or why none did; none under --quiet; under
 * --verbose one line per process that loaded the shim and what its children got. */
static void activation_lines(const lm_cli *cli, const lm_run_result *res)
{
	size_t i;

	if (cli->quiet)
		return;
	if (res->no_shim != NULL) {
		lm_cli_printf(stderr, "shim: no process of the workload loaded the shim: %s\n", res->no_shim);
	} else if (!cli->verbose && res->nprocesses > 1) {
		lm_cli_printf(stderr, "shim: loaded by %zu processes of the workload (--verbose: each)\n", res->nprocesses);
		return;
	}
	for (i = 0; i < res->nprocesses && (cli->verbose || i == 0); i++)
		lm_cli_printf(stderr, "shim: %s\n", res->process_lines[i]);
	if (cli->verbose && res->inherit >= 0)
		lm_cli_printf(stderr, "shim: children %s (%s)\n", res->inherit ? "keep the shim" : "start without the shim",
		    res->inherit_reason);
}

int lm_cmd_run(lm_cli *cli)
{
	lm_workload_options wo;
	lm_run_result *res = NULL;
	lm_context *ctx = NULL;
	lm_json_envelope env;
	char *doc = NULL, msg[4096];
	int rc, status, want_raw = 0;

	if (cli->argc != 1 || cli->cmd_argc == 0)
		return lm_cli_usage_error(cli, "run: lume-metal run VM -- CMD [ARGS...]");
	if ((rc = lm_cli_context(cli, &ctx)) != 0)
		return rc;
	lm_workload_options_init(&wo, LM_WORKLOAD_OPTIONS_VERSION);
	wo.run_hardened_stock = cli->run_hardened_stock;
	wo.require_shim = cli->require_shim;
	terminal_options(cli, &wo, &want_raw);
	rc = lm_flow_run_workload(ctx, cli->argv[0], (const char *const *)cli->cmd_argv, (size_t)cli->cmd_argc, &wo,
	    &res);
	lm_cli_terminal_restore();
	/* The error as it was: printing the records' lines and freeing the context come first. */
	snprintf(msg, sizeof(msg), "%s", rc < 0 ? lm_error_last()->message : "");
	lm_context_free(ctx);
	status = res != NULL ? res->exit_status : 255;
	if (!cli->json && res != NULL && res->record_dir != NULL && (rc == 0 || rc == LM_ENOSHIM))
		activation_lines(cli, res);
	if (rc < 0 && rc != LM_ENOSHIM) {
		lm_run_result_free(res);
		free(cli->out_bytes);
		free(cli->err_bytes);
		return lm_cli_report(cli, lm_cli_exit_of(rc, LM_EXIT_FAILURE), rc, msg);
	}
	if (cli->json && cli->output_lost) {
		lm_run_result_free(res);
		free(cli->out_bytes);
		free(cli->err_bytes);
		return lm_cli_report(cli, LM_EXIT_FAILURE, LM_ENOMEM, "out of memory while collecting the guest's output "
		    "for the JSON document: the command ran, but its output is not all there");
	}
	if (cli->json) {
		env = rc < 0 ? lm_cli_envelope(cli, LM_EXIT_FAILURE, rc, msg) :
		    lm_cli_envelope(cli, status, 0, NULL);
		if (lm_run_result_to_json(cli->argv[0], res, cli->out_bytes, cli->out_len,
		    cli->err_bytes, cli->err_len, &env, &doc) < 0)
			doc = NULL;
		lm_cli_print_document(cli, doc == NULL ? -1 : 0, doc);
	} else if (rc < 0) {
		lm_cli_report(cli, LM_EXIT_FAILURE, rc, msg);
	}
	lm_run_result_free(res);
	free(cli->out_bytes);
	free(cli->err_bytes);
	return rc < 0 ? LM_EXIT_FAILURE : status;
}
