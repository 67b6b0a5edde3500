/* lume-metal doctor [VM...]: one line per check (ok / warn / fail) with what to do; exit 1 when
 * any check failed. The library finds; this file advises (per check name, as output.c's hints). */
#include <string.h>

#include "cli.h"

/* What to do when a check warns or fails. "{vm}" stands for the VM the check is about. */
static const struct {
	const char *name;
	const char *text;
} advice[] = {
	{"os", "lume-metal unlocks VMs on macOS hosts; elsewhere it serves tests and the simulator"},
	{"chip", "Paravirtualized Metal needs an Apple silicon host"},
	{"vm-manager", "start `lume serve` (or pass --lume-url URL), or put lume, tart or utmctl on PATH; a VM no "
	    "manager runs: --vm-manager none --address IP"},
	{"user", "run lume-metal as the user the Lume server runs as (docs/preferences.md)"},
	{"preference", "`lume-metal enable VM` sets it; a configuration profile that forces it must be changed "
	    "by its administrator; `lume-metal host status` shows the details"},
	{"bundle", "build and install the guest bundles (cmake --build, cmake --install) or pass --bundle DIR; "
	    "for a VM, `lume-metal enable {vm}` repairs its files"},
	{"manager", "check the VM's name (lume ls, tart list, utmctl list)"},
	{"reachable", "start the VM (`lume run {vm}`), check its network, and that Remote Login (SSH) is on"},
	/* Apple TN3179: Local Network privacy covers apps and LaunchAgents (a CI runner's); programs run
	 * from Terminal or SSH, and launchd daemons, are exempt. */
	{"local-network", "on macOS 15 or later: allow the program that runs lume-metal (the terminal app, or the "
	    "CI runner's agent) under System Settings > Privacy & Security > Local Network, once, in the GUI; or run "
	    "lume-metal from Terminal or an SSH session, or as a LaunchDaemon, which that permission does not cover"},
	{"guest-os", "lume-metal's shim is for macOS guests"},
	{"sip", "keep SIP enabled; run workloads with programs outside the system directories (Homebrew's)"},
	{"shell", "make zsh the guest account's login shell (chsh -s /bin/zsh)"},
	{"tart-shim", "nothing to do: both shims read the same kind of settings; `lume-metal probe {vm}` compares them"},
	{"last-probe", "`lume-metal probe {vm}` probes it now; `lume-metal enable {vm}` repairs it"},
	{"last-exercise", "`lume-metal probe {vm} --exercise` runs it now; a failure: stop and start the VM, then "
	    "enable again"},
	{"known-defects", "nocopy_buffer: run llama.cpp with --no-mmap (its weights then go through copied "
	    "buffers); indirect_command_buffer: turn off the workload's use of them (tinygrad: its Metal graph); "
	    "docs/guest.md, \"Known defects\""},
	{"agents", "`lume-metal agent list {vm}` shows them; the agent's log is in ~/Library/Logs/lume-metal"},
	{"agent-shim", "a hardened program (where SIP is on) or one SIP protects does not get the shim "
	    "(docs/guest.md); `lume-metal run {vm} -- PROGRAM` says which; reinstall the agent with a program the "
	    "shim can reach"},
	{"record", "see docs/state-format.md"},
};

static const char *advise(void *data, const lm_doctor_check *c)
{
	static _Thread_local char text[512];
	const char *at;
	size_t i;

	(void)data;
	for (i = 0; i < sizeof(advice) / sizeof(advice[0]); i++) {
		if (strcmp(advice[i].name, c->name) != 0)
			continue;
		if ((at = strstr(advice[i].text, "{vm}")) == NULL)
			return advice[i].text;
		/* Every {vm} replaced, the text cut visibly if the VM name were very long. */
		snprintf(text, sizeof(text), "%.*s%s%s", (int)(at - advice[i].text), advice[i].text, c->vm, at + 4);
		while ((at = strstr(text, "{vm}")) != NULL) {
			char rest[512];
			snprintf(rest, sizeof(rest), "%s", at + 4);
			snprintf(text + (at - text), sizeof(text) - (size_t)(at - text), "%s%s", c->vm, rest);
		}
		return text;
	}
	return NULL;
}

int lm_cmd_doctor(lm_cli *cli)
{
	lm_context *ctx = NULL;
	lm_doctor_result *result = NULL;
	lm_json_envelope env;
	const char *hint, *scope;
	char *doc = NULL;
	size_t i;
	int rc, exit_code;

	if ((rc = lm_cli_context(cli, &ctx)) != 0)
		return rc;
	if (lm_doctor_run(ctx, (const char *const *)cli->argv, (size_t)cli->argc, &result) < 0) {
		lm_context_free(ctx);
		return lm_cli_fail(cli, LM_EXIT_FAILURE);
	}
	exit_code = result->failed > 0 ? LM_EXIT_FAILURE : LM_EXIT_OK;
	if (cli->json) {
		env = lm_cli_envelope(cli, exit_code, 0, NULL);
		rc = lm_doctor_to_json(result, advise, NULL, &env, &doc);
		lm_cli_print_document(cli, rc, doc);
	} else {
		for (i = 0; i < result->count; i++) {
			const lm_doctor_check *c = result->checks[i];
			scope = c->vm[0] ? c->vm : "host";
			lm_cli_word(stdout, cli, c->level == LM_CHECK_OK ? LM_CLI_OK : c->level == LM_CHECK_WARN ? LM_CLI_WARN :
			    LM_CLI_FAIL, lm_check_level_name(c->level), 4);
			lm_cli_printf(stdout, "  %s %s: %s\n", scope, c->name, c->message);
			if (c->level != LM_CHECK_OK && (hint = advise(NULL, c)) != NULL)
				lm_cli_printf(stdout, "      -> %s\n", hint);
		}
		lm_cli_printf(stdout, "%zu checks: %zu ok, %zu warn, %zu fail\n", result->count,
		    result->count - result->failed - result->warned, result->warned, result->failed);
	}
	lm_doctor_result_free(result);
	lm_context_free(ctx);
	return exit_code;
}
