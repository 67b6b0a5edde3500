/* Embedding the host library: enable one VM and print what happened.
 *   cc enable_vm.c $(pkg-config --cflags --libs lume-metal) -o enable_vm
 */
#include <stdio.h>

#include <lume-metal.h>

int main(int argc, char **argv)
{
	lm_options opts = LM_OPTIONS_INIT;
	lm_context *ctx = NULL;
	lm_profile *profile = NULL;
	lm_flow_result result;
	size_t i;
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: %s VM\n", argv[0]);
		return 2;
	}
	if (lm_context_new(&ctx, &opts) < 0 || lm_profile_builtin(&profile, lm_profile_default_name()) < 0) {
		fprintf(stderr, "%s\n", lm_error_last()->message);
		return 1;
	}
	rc = lm_flow_enable(ctx, (const char *const *)&argv[1], 1, profile, 1, &result);
	for (i = 0; i < result.count; i++)
		printf("%s\n", result.vms[i].message);
	lm_flow_result_free(&result);
	lm_profile_free(profile);
	lm_context_free(ctx);
	return rc < 0 ? 1 : 0;
}
