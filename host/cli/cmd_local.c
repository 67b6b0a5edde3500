/* lume-metal local probe|run|agent|status: the commands on the machine lume-metal runs on, one row
 * each in the table below -- its name, its function, its summary; `local` alone lists them. Each
 * function gets the context made from the options and the --profile given (NULL: none) and returns
 * the exit code; the JSON documents name the command "local NAME". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char *tristate(int v, const char *yes, const char *no)
{
	return v < 0 ? "unknown" : v ? yes : no;
}

/* What this machine says of itself, after the table (text). */
static void machine_lines(const lm_cli *cli, const lm_local_result *r)
{
	const lm_vm_outcome *o = r->machine;

	(void)cli;
	lm_cli_printf(stdout, "  %-30s %s (kern.hv_vmm_present: %s; stock device: %s)\n", "looks like a VM",
	    tristate(r->looks_like_vm, "yes", "no"), r->hv_vmm_present < 0 ? "no answer" : r->hv_vmm_present ? "1" : "0",
	    o->stock != NULL ? lm_report_device(o->stock) : "not probed");
	lm_cli_printf(stdout, "  %-30s not touched (local cannot reach the host; on the host: lume-metal host status)\n",
	    "host preference");
	lm_cli_printf(stdout, "  %-30s %s\n", "bundle (in place)", r->bundle_dir[0] ? r->bundle_dir : "none");
	if (r->answers_hold >= 0)
		lm_cli_printf(stdout, "  %-30s %s (profile %s)\n", "shimmed answers hold", tristate(r->answers_hold, "yes", "no"),
		    o->profile);
	if (r->kernels_ran >= 0)
		lm_cli_printf(stdout, "  %-30s %s%s%s\n", "kernels the profile needs", r->kernels_ran ? "ran" : "did not run",
		    r->kernels_note[0] ? ": " : "", r->kernels_note);
}

/* The result as one JSON document, or text; the exit code. */
static int print_local(lm_cli *cli, int rc, const lm_local_result *r, int table)
{
	lm_json_envelope env;
	char *doc = NULL;
	int exit_code, failed = r->machine->rc < 0;

	/* --require-exercise's refusal has its own code, so that a CI job tells a clear skip from a
	 * failure. */
	exit_code = !failed ? LM_EXIT_OK : r->machine->rc == LM_ENOTPROVEN ? LM_EXIT_GUEST_UNSUPPORTED : LM_EXIT_FAILURE;
	lm_cli_progress_clear(cli);
	if (cli->json) {
		env = lm_cli_envelope(cli, exit_code, failed ? r->machine->rc : 0, failed ? r->machine->message : NULL);
		rc = lm_local_result_to_json(r, &env, &doc);
		lm_cli_print_document(cli, rc, doc);
		return exit_code;
	}
	/* A refused exercise still shows what ran and what did not, then the error. */
	if (failed && !(table && r->machine->stock != NULL && r->machine->shimmed != NULL))
		return lm_cli_report(cli, exit_code, rc, r->machine->message);
	if (table && r->machine->stock != NULL && r->machine->shimmed != NULL)
		lm_cli_probe_table(cli, r->machine);
	else
		lm_cli_printf(stdout, "this machine: %s %s %s\n", r->machine->guest.os, r->machine->guest.os_version,
		    r->machine->guest.arch);
	machine_lines(cli, r);
	lm_cli_agent_lines(stdout, r->machine);
	return failed ? lm_cli_report(cli, exit_code, rc, r->machine->message) : exit_code;
}

static int local_probe(lm_cli *cli, lm_context *ctx, const lm_profile *profile)
{
	lm_local_result *r = NULL;
	unsigned flags = (cli->exercise ? LM_LOCAL_EXERCISE : 0) | (cli->require_exercise ? LM_LOCAL_REQUIRE_EXERCISE : 0);
	int rc, exit_code;

	if (cli->argc != 1)
		return lm_cli_usage_error(cli, "local probe: takes no names (lume-metal local probe [--exercise] "
		    "[--require-exercise] [--profile P])");
	rc = lm_local_probe(ctx, profile, flags, &r);
	exit_code = r == NULL ? lm_cli_fail(cli, LM_EXIT_FAILURE) : print_local(cli, rc, r, 1);
	lm_local_result_free(r);
	return exit_code;
}

/* The workload's own output goes straight to the terminal (it is our child); with --format json
 * its stdout goes to stderr, so that stdout holds the one document. */
static int local_run(lm_cli *cli, lm_context *ctx, const lm_profile *profile)
{
	lm_workload_options wo;
	lm_run_result *res = NULL;
	lm_json_envelope env;
	char *doc = NULL, msg[4096];
	int rc, saved = -1, status;

	if (cli->argc != 1 || cli->cmd_argc == 0)
		return lm_cli_usage_error(cli, "local run: lume-metal local run [--profile P] -- CMD [ARGS...]");
	lm_workload_options_init(&wo, LM_WORKLOAD_OPTIONS_VERSION);
	wo.run_hardened_stock = cli->run_hardened_stock;
	wo.require_shim = cli->require_shim;
	lm_cli_flush();
	if (cli->json && (saved = dup(STDOUT_FILENO)) >= 0)
		(void)dup2(STDERR_FILENO, STDOUT_FILENO);
	rc = lm_local_run(ctx, profile, (const char *const *)cli->cmd_argv, (size_t)cli->cmd_argc, &wo, &res);
	if (saved >= 0) {
		(void)dup2(saved, STDOUT_FILENO);
		close(saved);
	}
	snprintf(msg, sizeof(msg), "%s", rc < 0 ? lm_error_last()->message : "");
	status = res != NULL ? res->exit_status : 255;
	if (cli->json) {
		env = rc < 0 ? lm_cli_envelope(cli, LM_EXIT_FAILURE, rc, msg) : lm_cli_envelope(cli, status, 0, NULL);
		if (lm_run_result_to_json("local", res, NULL, 0, NULL, 0, &env, &doc) < 0)
			doc = NULL;
		lm_cli_print_document(cli, doc == NULL ? -1 : 0, doc);
	} else {
		if (res != NULL && res->record_dir != NULL)
			lm_cli_activation_lines(cli, res, 0);
		if (rc < 0)
			lm_cli_report(cli, LM_EXIT_FAILURE, rc, msg);
	}
	lm_run_result_free(res);
	return rc < 0 ? LM_EXIT_FAILURE : status;
}

static int agent_usage(lm_cli *cli, const char *what)
{
	return lm_cli_usage_error(cli, "local agent: %s (lume-metal local agent install --label L [--keep-alive] "
	    "[--run-at-load] [--profile P] -- PROG ARGS..., local agent remove --label L, local agent list)", what);
}

static int local_agent(lm_cli *cli, lm_context *ctx, const lm_profile *profile)
{
	const char *verb = cli->argc > 1 ? cli->argv[1] : "", *label = cli->label;
	lm_local_result *r = NULL;
	lm_workload_options wo;
	lm_agent_spec spec;
	int rc, exit_code;

	if (strcmp(verb, "remove") == 0 && label == NULL && cli->argc == 3)
		label = cli->argv[2];
	if (strcmp(verb, "install") != 0 && strcmp(verb, "remove") != 0 && strcmp(verb, "list") != 0)
		return agent_usage(cli, verb[0] ? "unknown subcommand; use install, remove or list" : "name a subcommand");
	if (cli->argc != (strcmp(verb, "remove") == 0 && cli->label == NULL ? 3 : 2))
		return agent_usage(cli, "it takes no VM: it is this machine");
	if ((cli->cmd_argv != NULL) != (strcmp(verb, "install") == 0))
		return agent_usage(cli, strcmp(verb, "install") == 0 ? "give the workload after '--'" :
		    "'--' and a command are for local agent install only");
	if (strcmp(verb, "list") != 0 && label == NULL)
		return agent_usage(cli, "give the agent's label with --label");
	cli->json_command = strcmp(verb, "install") == 0 ? "local agent install" : strcmp(verb, "remove") == 0 ?
	    "local agent remove" : "local agent list";
	if (strcmp(verb, "install") == 0) {
		lm_cli_agent_spec(cli, label, &spec, &wo);
		rc = lm_local_agent_install(ctx, &spec, profile, &wo, &r);
	} else if (strcmp(verb, "remove") == 0) {
		rc = lm_local_agent_remove(ctx, label, &r);
	} else {
		rc = lm_local_agent_list(ctx, &r);
	}
	if (r == NULL)
		return lm_cli_fail(cli, LM_EXIT_FAILURE);
	if (!cli->json && r->machine->rc == 0 && r->machine->message != NULL && r->machine->message[0] != '\0')
		lm_cli_printf(stdout, "%s\n", r->machine->message);
	else if (!cli->json && r->machine->rc == 0 && r->machine->nagents == 0)
		lm_cli_printf(stdout, "this machine: no agents installed by lume-metal\n");
	if (!cli->json && r->machine->rc == 0)
		lm_cli_agent_lines(stdout, r->machine);
	exit_code = cli->json || r->machine->rc < 0 ? print_local(cli, rc, r, 0) : LM_EXIT_OK;
	lm_local_result_free(r);
	return exit_code;
}

static int local_status(lm_cli *cli, lm_context *ctx, const lm_profile *profile)
{
	lm_local_result *r = NULL;
	int rc, exit_code;

	(void)profile;
	if (cli->argc != 1)
		return lm_cli_usage_error(cli, "local status: takes no names (lume-metal local status)");
	rc = lm_local_status(ctx, &r);
	exit_code = r == NULL ? lm_cli_fail(cli, LM_EXIT_FAILURE) : print_local(cli, rc, r, 0);
	lm_local_result_free(r);
	return exit_code;
}

static const struct {
	const char *name;
	int (*run)(lm_cli *cli, lm_context *ctx, const lm_profile *profile);
	const char *summary;
} subcommands[] = {
	{"probe", local_probe, "[--exercise] [--require-exercise] [--profile P]: stock vs shimmed "
	    "answers of this machine, whether it looks like a VM, and which kernels run"},
	{"run", local_run, "[--profile P] [--require-shim] -- CMD...: one workload here with the shim, as a direct child; "
	    "its exit status is lume-metal's, then which of its processes loaded the shim"},
	{"agent", local_agent, "install --label L -- PROG ARGS... | remove --label L | list: LaunchAgents here carrying the "
	    "shim's environment"},
	{"status", local_status, ": this machine, its bundle (in place, verified), whether it looks like a VM, the stock "
	    "device, the agents lume-metal installed here"},
	{"install", lm_cmd_local_install, "[--prefix DIR]: this machine's bundle into an image (PREFIX/lib/lume-metal, "
	    "default /usr/local), verified by SHA-256, atomically"},
	{"env", lm_cmd_local_env, "[--github-env] [--prefix DIR] [--record-dir DIR]: the environment a job step exports "
	    "to run its workload with the installed shim"},
};

int lm_cmd_local(lm_cli *cli)
{
	const char *verb = cli->argc > 0 ? cli->argv[0] : "";
	lm_context *ctx = NULL;
	lm_profile *profile = NULL;
	char json_command[32];
	size_t i;
	int rc;

	for (i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		if (strcmp(verb, subcommands[i].name) == 0)
			break;
	if (i == sizeof(subcommands) / sizeof(subcommands[0])) {
		size_t k;
		for (k = 0; !cli->json && lm_cli_nearest_subcommand("local", verb) == NULL &&
		    k < sizeof(subcommands) / sizeof(subcommands[0]); k++)
			lm_cli_printf(stderr, "  local %-8s %s\n", subcommands[k].name, subcommands[k].summary);
		return lm_cli_unknown_subcommand(cli, "local", verb);
	}
	snprintf(json_command, sizeof(json_command), "local %s", subcommands[i].name);
	cli->json_command = json_command;
	if (cli->profile != NULL && lm_profile_resolve(&profile, cli->profile) < 0)
		return lm_cli_fail(cli, LM_EXIT_FAILURE);
	if ((rc = lm_cli_context(cli, &ctx)) != 0) {
		lm_profile_free(profile);
		return rc;
	}
	rc = subcommands[i].run(cli, ctx, profile);
	lm_context_free(ctx);
	lm_profile_free(profile);
	return rc;
}
