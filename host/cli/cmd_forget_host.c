/* lume-metal forget-host VM: drop the SSH host key(s) recorded for a VM, so that the next
 * connection records the key it then sees (after a VM was re-created, for instance). */
#include "cli.h"

int lm_cmd_forget_host(lm_cli *cli)
{
	lm_context *ctx;
	lm_json_envelope env;
	char *doc = NULL;
	const char *vm;
	char name[LM_VM_NAME_MAX];
	int n;

	if (cli->argc != 1)
		return lm_cli_usage_error(cli, "forget-host takes exactly one VM name (lume-metal forget-host VM)");
	vm = cli->argv[0];
	/* A name no VM can have is a usage error, as in every command (the message names the fault). */
	if (lm_vm_name_normalize(vm, name) < 0)
		return lm_cli_fail(cli, LM_EXIT_USAGE);
	if (lm_cli_context(cli, &ctx) != 0)
		return LM_EXIT_FAILURE;
	n = lm_ssh_forget_host(ctx, vm);
	if (n < 0) {
		lm_context_free(ctx);
		return lm_cli_fail(cli, LM_EXIT_FAILURE);
	}
	if (cli->json) {
		env = lm_cli_envelope(cli, LM_EXIT_OK, 0, NULL);
		if (lm_forget_host_to_json(vm, n, lm_context_state_dir(ctx), &env, &doc) < 0)
			doc = NULL;
		lm_cli_print_document(cli, doc == NULL ? -1 : 0, doc);
	} else if (n == 0) {
		lm_cli_printf(stdout, "No SSH host key was recorded for VM '%s'; nothing to forget.\n", vm);
	} else {
		lm_cli_printf(stdout, "Forgot %d SSH host key%s of VM '%s'. The next connection records the key it is shown.\n", n,
		    n == 1 ? "" : "s", vm);
	}
	lm_context_free(ctx);
	return LM_EXIT_OK;
}
