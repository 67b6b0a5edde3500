/* lume-metal local install|env: for CI runners that live inside the VM (docs/ci-topologies.md).
 * install puts this machine's guest bundle into an image (PREFIX/lib/lume-metal); env prints the
 * environment a job step exports to run its workload with that shim. */
#include <string.h>

#include "cli.h"

int lm_cmd_local_install(lm_cli *cli, lm_context *ctx, const lm_profile *profile)
{
	lm_local_install_result r;
	lm_json_envelope env;
	char *doc = NULL;

	if (cli->argc != 1 || profile != NULL)
		return lm_cli_usage_error(cli, "usage: lume-metal local install [--prefix DIR] [--bundle DIR] (the bundle "
		    "holds every profile; --profile is for local env)");
	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	if (lm_local_install(ctx, cli->prefix, &r) < 0)
		return lm_cli_fail(cli, LM_EXIT_FAILURE);
	if (cli->json) {
		env = lm_cli_envelope(cli, LM_EXIT_OK, 0, NULL);
		if (lm_local_install_to_json(&r, &env, &doc) < 0)
			doc = NULL;
		lm_cli_print_document(cli, doc == NULL ? -1 : 0, doc);
		return LM_EXIT_OK;
	}
	if (!r.changed) {
		lm_cli_printf(stdout, "already installed: %s/current is bundle %s, every file verified; nothing changed\n",
		    r.dir, r.bundle_id);
		return LM_EXIT_OK;
	}
	lm_cli_printf(stdout, "installed: %s/current is bundle %s; %d file%s written, every file verified\n", r.dir,
	    r.bundle_id, r.files, r.files == 1 ? "" : "s");
	if (r.repaired)
		lm_cli_printf(stdout, "replaced: the copy that was there did not match the manifest\n");
	if (r.previous[0] != '\0' && strcmp(r.previous, r.bundle_id) != 0)
		lm_cli_printf(stdout, "previous: bundle %s\n", r.previous);
	if (r.removed > 0)
		lm_cli_printf(stdout, "removed: %d older or unfinished entr%s\n", r.removed, r.removed == 1 ? "y" : "ies");
	return LM_EXIT_OK;
}

int lm_cmd_local_env(lm_cli *cli, lm_context *ctx, const lm_profile *profile)
{
	lm_local_env *local = NULL;
	lm_json_envelope env;
	char *text = NULL;
	int rc;

	(void)ctx; /* the installed place is the prefix's, not the context's bundle */
	if (cli->argc != 1)
		return lm_cli_usage_error(cli, "usage: lume-metal local env [--github-env] [--prefix DIR] [--profile P] "
		    "[--record-dir DIR]");
	if (cli->json && cli->github_env)
		return lm_cli_usage_error(cli, "local env: --github-env and --format json are two different outputs; "
		    "choose one");
	if (lm_local_env_open(&local, cli->prefix, profile, cli->record_dir) < 0)
		return lm_cli_fail(cli, LM_EXIT_FAILURE);
	if (cli->json) {
		env = lm_cli_envelope(cli, LM_EXIT_OK, 0, NULL);
		rc = lm_local_env_to_json(local, &env, &text);
		lm_local_env_free(local);
		lm_cli_print_document(cli, rc < 0 ? -1 : 0, rc < 0 ? NULL : text);
		return rc < 0 ? LM_EXIT_FAILURE : LM_EXIT_OK;
	}
	rc = lm_local_env_format(local, cli->github_env ? LM_LOCAL_ENV_GITHUB : LM_LOCAL_ENV_SH, &text);
	lm_local_env_free(local);
	if (rc < 0)
		return lm_cli_fail(cli, LM_EXIT_FAILURE);
	/* The library refuses control bytes in values, so the sanitiser leaves the text as it is. */
	lm_cli_puts(stdout, text);
	lm_free(text);
	return LM_EXIT_OK;
}
