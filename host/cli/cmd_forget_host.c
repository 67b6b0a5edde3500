/* lume-metal forget-host VM: drop the SSH host key(s) recorded for a VM, so that the next
 * connection records the key it then sees (after a VM was re-created, for instance). */
#include "cli.h"

int lm_cmd_forget_host(lm_cli *cli)
{
	lm_context *ctx;
	cJSON *doc;
	const char *vm;
	int n;

	if (cli->argc != 1)
		return lm_cli_usage_error(cli, "forget-host takes exactly one VM name (lume-metal forget-host VM)");
	vm = cli->argv[0];
	if (lm_cli_context(cli, &ctx) != 0)
		return LM_EXIT_FAILURE;
	n = lm_ssh_forget_host(ctx, vm);
	if (n < 0) {
		lm_context_free(ctx);
		return lm_cli_fail(cli, LM_EXIT_FAILURE);
	}
	if (cli->json) {
		doc = cJSON_CreateObject();
		cJSON_AddNumberToObject(doc, "schema", 1);
		cJSON_AddStringToObject(doc, "command", "forget-host");
		cJSON_AddBoolToObject(doc, "ok", 1);
		cJSON_AddStringToObject(doc, "vm", vm);
		cJSON_AddNumberToObject(doc, "forgotten", n);
		cJSON_AddStringToObject(doc, "state_dir", lm_context_state_dir(ctx));
		lm_cli_print_json(doc);
	} else if (n == 0) {
		lm_cli_printf(stdout, "No SSH host key was recorded for VM '%s'; nothing to forget.\n", vm);
	} else {
		lm_cli_printf(stdout, "Forgot %d SSH host key%s of VM '%s'. The next connection records the key it is shown.\n", n,
		    n == 1 ? "" : "s", vm);
	}
	lm_context_free(ctx);
	return LM_EXIT_OK;
}
