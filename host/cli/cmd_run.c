/* lume-metal run VM -- CMD...: one guest command with the shim, as `tart exec` runs one (stdin,
 * -i, -t: terminal.c); its exit code is ours. The guest's output streams to our stdout/stderr
 * (the library's on_output, output.c); with --format json it is collected into the one document
 * instead. SIGINT, SIGTERM and SIGHUP stop the workload's process group in the guest; lume-metal
 * then ends by that signal (main.c). Afterwards, which of its processes loaded the shim (their
 * activation records), or why none did. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* What the library's callbacks share during the run (lm_workload_options.callback_data). */
typedef struct {
	lm_cli *cli;
	int want_raw;    /* the terminal is to go raw at the first ask for the window's size */
	int stop_asked;  /* the failed write's stop was handed to the library */
} run_io;

/* The window's size is asked for as soon as the workload runs, at every wake of the library's
 * loop: the first ask is the moment to go raw (until then ^C still interrupts the connection). */
static int window_size(void *data, unsigned int *cols, unsigned int *rows)
{
	run_io *r = data;

	if (r->want_raw) {
		r->want_raw = 0;
		if (lm_cli_terminal_raw() < 0)
			lm_cli_printf(stderr, "lume-metal: warning: this terminal cannot be put in raw mode; keys go to the "
			    "guest a line at a time\n");
	}
	return lm_cli_window_changed(NULL, cols, rows);
}

/* The signal that stops the workload: the one lume-metal got (interrupt.c), or SIGTERM once the
 * output could not be written (print.c): a run whose output goes nowhere must not read and drop
 * it forever. */
static int pending_signal(void *data)
{
	run_io *r = data;
	int sig = lm_cli_pending_signal(NULL);

	if (sig == 0 && lm_cli_output_failed(NULL) != 0 && !r->stop_asked) {
		r->stop_asked = 1;
		sig = SIGTERM;
	}
	return sig;
}

/* As `tart exec`: stdin, a pseudo-terminal, the signals that stop the workload (run's own: SIGHUP
 * too), the window. */
static void terminal_options(lm_cli *cli, lm_workload_options *wo, run_io *r)
{
	lm_cli_run_io io;

	lm_cli_run_terminal(cli->interactive, cli->tty, isatty(STDIN_FILENO), isatty(STDOUT_FILENO), &io);
	wo->input = io.forward;
	wo->input_fd = STDIN_FILENO;
	wo->tty = io.pty;
	lm_cli_terminal_size(&wo->tty_cols, &wo->tty_rows);
	wo->tty_term = getenv("TERM");
	wo->pending_signal = pending_signal;
	wo->window_size = window_size;
	r->cli = cli;
	r->want_raw = io.raw;
	wo->callback_data = r;
	lm_cli_trap_signals();
	lm_cli_trap_hangup();
}

/* Why no answer was widened, as the library says it; the option that helps is the tool's to name. */
static void print_no_shim(const char *no_shim)
{
	lm_cli_printf(stderr, "shim: %s\n", no_shim);
	if (strstr(no_shim, "copy re-signed ad hoc") != NULL)
		lm_cli_printf(stderr, "hint: --resign-copy runs such a copy (the original untouched)\n");
}

/* After the workload's own output, as quiet as `tart exec`: none under --quiet; by default one
 * line of ours at most -- why no answer was widened, else a program it started that ran stock,
 * else the one process that loaded the shim, else how many did; under --verbose one line per
 * process that loaded the shim (the first 256 by pid; the rest counted), the records skipped as
 * damaged or unreadable, the programs it started that ran stock, and what its children got. */
void lm_cli_activation_lines(const lm_cli *cli, const lm_run_result *res, int children)
{
	size_t i, nstock = 0, all = res->nprocesses + res->records_dropped;
	const char *widened = NULL;
	int widened_len = 0;

	if (cli->quiet)
		return;
	while (res->stock_children != NULL && res->stock_children[nstock] != NULL)
		nstock++;
	/* The process the answers were widened in, named: "pid N PROGRAM" of its line (a worker
	 * that came and went, as Ollama's runners do, among the others; issue 48). */
	if (LM_HAS_FIELD(res, lm_run_result, widened_line) && res->widened_line >= 0 &&
	    (size_t)res->widened_line < res->nprocesses && res->process_lines != NULL) {
		widened = res->process_lines[res->widened_line];
		widened_len = strstr(widened, ": ") != NULL ? (int)(strstr(widened, ": ") - widened) : 0;
		if (widened_len == 0)
			widened = NULL;
	}
	if (!cli->verbose) {
		if (res->no_shim != NULL)
			print_no_shim(res->no_shim);
		else if (nstock > 0)
			lm_cli_printf(stderr, "shim: %s%s\n", res->stock_children[0], nstock > 1 || all > 0 ? " (--verbose: "
			    "every process)" : "");
		else if (all == 1 && res->records_skipped == 0)
			lm_cli_printf(stderr, "shim: %s\n", res->process_lines[0]);
		else if (all > 0 || res->records_skipped > 0)
			lm_cli_printf(stderr, "shim: loaded by %zu process%s of the workload%s%s%.*s (--verbose: each)\n", all,
			    all == 1 ? "" : "es", res->records_skipped > 0 ? ", some records damaged and skipped" : "",
			    widened != NULL ? ", widened in " : "", widened_len, widened != NULL ? widened : "");
		return;
	}
	for (i = 0; i < res->nprocesses; i++)
		lm_cli_printf(stderr, "shim: %s\n", res->process_lines[i]);
	if (res->records_dropped > 0)
		lm_cli_printf(stderr, "shim: %zu more process%s loaded the shim (records past the first %zu are counted, "
		    "not read)\n", res->records_dropped, res->records_dropped == 1 ? "" : "es", res->nprocesses);
	for (i = 0; res->skipped_lines != NULL && res->skipped_lines[i] != NULL; i++)
		lm_cli_printf(stderr, "shim: skipped %s\n", res->skipped_lines[i]);
	if (res->records_skipped > i)
		lm_cli_printf(stderr, "shim: skipped %zu more damaged or unreadable records\n", res->records_skipped - i);
	for (i = 0; i < nstock; i++)
		lm_cli_printf(stderr, "shim: %s\n", res->stock_children[i]);
	if (res->no_shim != NULL)
		print_no_shim(res->no_shim);
	if (children && res->inherit >= 0)
		lm_cli_printf(stderr, "shim: children %s (%s)\n", res->inherit ? "keep the shim" : "start without the shim",
		    res->inherit_reason);
}

/* A write of the guest's output failed: the run's error, whatever the workload's end (its output
 * is lost); what the library said of the stop, or of the workload's own end, follows. */
static int output_failed(const lm_cli *cli, int rc, int status, char *msg, size_t size)
{
	char said[3072];
	int stream, err = lm_cli_output_failed(&stream);
	const char *where = stream == 2 ? "stderr" : "stdout", *e = strerror(err), *p;

	snprintf(said, sizeof(said), "%.3000s", rc < 0 ? msg : "");
	if (rc < 0 && (p = strstr(said, "run stopped: ")) != NULL)
		snprintf(msg, size, "%s: writing the workload's output to %s failed (%s), so the run was stopped: %.3000s",
		    cli->argv[0], where, e, p + 13);
	else if (rc < 0)
		snprintf(msg, size, "%s: writing the workload's output to %s failed (%s), and then: %.3000s", cli->argv[0],
		    where, e, said);
	else
		snprintf(msg, size, "%s: writing the workload's output to %s failed (%s): what it wrote after that is "
		    "lost (it ended by itself, exit %d)", cli->argv[0], where, e, status);
	return LM_EIO;
}

int lm_cmd_run(lm_cli *cli)
{
	lm_workload_options wo;
	lm_run_result *res = NULL;
	lm_context *ctx = NULL;
	lm_json_envelope env;
	run_io rio;
	char *doc = NULL, msg[4096];
	int rc, status;

	if (cli->argc != 1 || cli->cmd_argc == 0)
		return lm_cli_usage_error(cli, "run: lume-metal run VM -- CMD [ARGS...]");
	if ((rc = lm_cli_context(cli, &ctx)) != 0)
		return rc;
	lm_workload_options_init(&wo, LM_WORKLOAD_OPTIONS_VERSION);
	wo.run_hardened_stock = cli->run_hardened_stock;
	wo.require_shim = cli->require_shim;
	wo.resign_copy = cli->resign_copy;
	memset(&rio, 0, sizeof(rio));
	terminal_options(cli, &wo, &rio);
	rc = lm_flow_run_workload(ctx, cli->argv[0], (const char *const *)cli->cmd_argv, (size_t)cli->cmd_argc, &wo,
	    &res);
	lm_cli_terminal_restore();
	/* The error as it was: printing the records' lines and freeing the context come first. */
	snprintf(msg, sizeof(msg), "%s", rc < 0 ? lm_error_last()->message : "");
	lm_context_free(ctx);
	status = res != NULL ? res->exit_status : 255;
	if (lm_cli_output_failed(NULL) != 0 && lm_cli_interrupted() == 0)
		rc = output_failed(cli, rc, status, msg, sizeof(msg));
	if (!cli->json && res != NULL && res->record_dir != NULL && (rc == 0 || rc == LM_ENOSHIM))
		lm_cli_activation_lines(cli, res, 1);
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
