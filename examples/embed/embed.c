/* Embedding the host library: enable one VM, show its status, roll it back, with progress shown
 * as it happens through the on_step callback.
 *
 *   cc embed.c $(pkg-config --cflags --libs lume-metal) -o embed     (or CMakeLists.txt here)
 *   ./embed my-vm
 *
 * Where state, preferences and Lume are is this program's choice; it takes them from the same
 * environment variables as the lume-metal tool (unset: the library's defaults).
 */
#include <stdio.h>
#include <stdlib.h>

#include <lume-metal.h>

static int fail(const char *what)
{
	fprintf(stderr, "embed: %s: %s\n", what, lm_error_last()->message);
	return 1;
}

/* Progress: every step when it starts and when it ends, and about once a second while it waits (a
 * VM booting, SSH, another process's lock of the VM); maybe from a library thread, but never two
 * calls at once for one context (docs/embedding.md). Every state is named: a wait is no failure. */
static void on_step(void *data, const lm_step_event *ev)
{
	const char *what = data;

	switch (ev->state) {
	case LM_STEP_STARTED:
		printf("%s: [%s] %s ...\n", what, ev->vm, ev->name);
		break;
	case LM_STEP_WAITING:
		printf("%s: [%s] %s waiting %.0f s: %s\n", what, ev->vm, ev->name, ev->elapsed, ev->detail);
		break;
	case LM_STEP_DONE:
		printf("%s: [%s] %s done in %.2f s: %s\n", what, ev->vm, ev->name, ev->elapsed, ev->detail);
		break;
	case LM_STEP_FAILED:
		printf("%s: [%s] %s failed in %.2f s: %s\n", what, ev->vm, ev->name, ev->elapsed, ev->detail);
		break;
	default: /* a state a newer library reports: shown as what it is, never as a failure */
		printf("%s: [%s] %s (state %d)\n", what, ev->vm, ev->name, (int)ev->state);
		break;
	}
	fflush(stdout);
}

static void print_result(const char *what, const lm_flow_result *result)
{
	size_t i;

	for (i = 0; i < result->count; i++)
		printf("%s: %s\n", what, result->vms[i]->message);
}

int main(int argc, char **argv)
{
	lm_options opts;
	lm_context *ctx = NULL;
	lm_profile *profile = NULL;
	lm_flow_result *result = NULL;
	const char *const *vm = (const char *const *)&argv[1];
	int rc = 1;

	if (argc != 2) {
		fprintf(stderr, "usage: %s VM\n", argv[0]);
		return 2;
	}
	/* The defaults of the version this program is built with; a newer library reads just those. */
	if (lm_options_init(&opts, LM_OPTIONS_VERSION) < 0)
		return fail("options");
	opts.state_dir = getenv("LUME_METAL_STATE_DIR");
	opts.prefs_dir = getenv("LUME_METAL_PREFS_DIR");
	opts.lume_url = getenv("LUME_METAL_LUME_URL");
	opts.on_step = on_step;
	opts.callback_data = "progress";
	printf("lume-metal %s (headers %s)\n", lm_version(), LUME_METAL_VERSION);
	if (lm_context_new(&ctx, &opts) < 0)
		return fail("context");
	if (lm_profile_builtin(&profile, lm_profile_default_name()) < 0) {
		lm_context_free(ctx);
		return fail("profile");
	}

	/* A result comes back even when the call fails (each VM's rc and message say what happened);
	 * it is the library's, freed with lm_flow_result_free(). */
	if (lm_flow_enable(ctx, vm, 1, profile, 1, &result) < 0) {
		rc = fail("enable");
		goto out;
	}
	print_result("enable", result);
	lm_flow_result_free(result);

	if (lm_flow_status(ctx, vm, 1, &result) < 0) {
		rc = fail("status");
		goto out;
	}
	print_result("status", result);
	printf("status: bundle %s\n", result->count == 1 && result->vms[0]->bundle_verified ? "verified" : "not verified");
	lm_flow_result_free(result);

	if (lm_flow_rollback(ctx, vm, 1, 0, 1, 1, &result) < 0) {
		rc = fail("rollback");
		goto out;
	}
	print_result("rollback", result);
	printf("rollback: host preference %s\n", result->pref_restored ? "restored" : "kept");
	rc = 0;
out:
	lm_flow_result_free(result);
	lm_profile_free(profile);
	lm_context_free(ctx);
	return rc;
}
