/* lume-metal local probe|run|agent|status: the commands on the machine lume-metal runs on, one row
 * each in the table below -- its name, its function, its summary; `local` alone lists them. Each
 * function gets the context made from the options and the --profile given (NULL: none) and returns
 * the exit code; the JSON documents name the command "local NAME". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	if (failed)
		return lm_cli_report(cli, exit_code, rc, r->machine->message);
	if (table && r->machine->stock != NULL)
		lm_cli_probe_table(cli, r->machine);
	else
		lm_cli_printf(stdout, "this machine: %s %s %s\n", r->machine->guest.os, r->machine->guest.os_version,
		    r->machine->guest.arch);
	machine_lines(cli, r);
	lm_cli_agent_lines(stdout, r->machine);
	return exit_code;
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

static const struct {
	const char *name;
	int (*run)(lm_cli *cli, lm_context *ctx, const lm_profile *profile);
	const char *summary;
} subcommands[] = {
	{"probe", local_probe, "[--exercise] [--require-exercise] [--profile P]: stock vs shimmed "
	    "answers of this machine, whether it looks like a VM, and which kernels run"},
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
		lm_cli_printf(stderr, "lume-metal local: %s; one of:\n", verb[0] ? "unknown subcommand" : "name a subcommand");
		for (k = 0; k < sizeof(subcommands) / sizeof(subcommands[0]); k++)
			lm_cli_printf(stderr, "  local %-8s %s\n", subcommands[k].name, subcommands[k].summary);
		return LM_EXIT_USAGE;
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
