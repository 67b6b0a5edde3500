/* The results' ABI rule (flow.h, docs/embedding.md "ABI") as two embedders see it, built against
 * the installed headers and run against the installed library:
 *  - one built when lm_vm_outcome had only its first fields: that version-1 prefix is frozen
 *    here, and read through the result's array of pointers from the library's larger outcomes;
 *  - one built against a header newer than the library, whose outcome has one more field at
 *    its end: LM_HAS_FIELD says the library's outcomes lack it, and have every field they have.
 * The outcomes come from an enable that fails before any VM is touched (its bundle directory
 * does not exist): no simulator, no guest, no network.
 *
 *   abi_outcome WORKDIR      (exit 0 when every check holds; each failed check is printed) */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <lume-metal.h>

/* lm_vm_outcome of version 1, frozen: what an embedder built then has in its header. */
typedef struct {
	size_t size;
	char vm[128];
	int rc;
	char *message;
} v1_vm_outcome;

/* The next version's lm_vm_outcome: every field of this one, then one more at the end. Every
 * result struct ends without padding (host/lib/flow/parts.c), so the new field starts at this
 * library's sizeof, as it would in the next header. */
typedef struct {
	lm_vm_outcome now;
	int next_field;
} next_vm_outcome;

static int failures;

#define CHECK(cond) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "abi_outcome: check failed (line %d): %s\n", __LINE__, #cond); \
			failures++; \
		} \
	} while (0)

static void check_outcome(const lm_vm_outcome *o, const char *vm)
{
	const v1_vm_outcome *v1 = (const v1_vm_outcome *)o;

	/* The version-1 embedder's view of the library's outcome. */
	CHECK(v1->size == sizeof(lm_vm_outcome));
	CHECK(v1->size > sizeof(v1_vm_outcome));
	CHECK(LM_HAS_FIELD(v1, v1_vm_outcome, message));
	CHECK(strcmp(v1->vm, vm) == 0);
	CHECK(v1->rc < 0 && v1->rc == o->rc);
	CHECK(v1->message != NULL && v1->message == o->message && strstr(v1->message, vm) == v1->message);
	/* The newer embedder's: the library has every field of this header, not the next one's. */
	CHECK(LM_HAS_FIELD(o, lm_vm_outcome, agents));
	CHECK(!LM_HAS_FIELD(o, next_vm_outcome, next_field));
	CHECK(o->nsteps == 0 && o->nagents == 0);
}

int main(int argc, char **argv)
{
	static const char *const vms[] = {"abi-a", "abi-b"};
	char state[1024], prefs[1024], bundles[1024];
	lm_options opts;
	lm_context *ctx = NULL;
	lm_profile *profile = NULL;
	lm_flow_result *result = NULL;
	size_t i;
	int rc;

	if (lm_options_init(&opts, LM_OPTIONS_VERSION) != 0)
		return 1;

	if (argc != 2) {
		fprintf(stderr, "usage: %s WORKDIR\n", argv[0]);
		return 2;
	}
	snprintf(state, sizeof(state), "%s/state", argv[1]);
	snprintf(prefs, sizeof(prefs), "%s/prefs", argv[1]);
	snprintf(bundles, sizeof(bundles), "%s/no-such-bundles", argv[1]);
	opts.state_dir = state;
	opts.prefs_dir = prefs;
	opts.bundle_dir = bundles;
	if (lm_context_new(&ctx, &opts) < 0 || lm_profile_builtin(&profile, lm_profile_default_name()) < 0) {
		fprintf(stderr, "abi_outcome: %s\n", lm_error_last()->message);
		lm_context_free(ctx);
		return 1;
	}
	rc = lm_flow_enable(ctx, vms, 2, profile, 1, &result);
	CHECK(rc < 0);
	CHECK(result != NULL); /* the outcomes come back with the failure */
	if (result != NULL) {
		CHECK(result->size == sizeof(lm_flow_result));
		CHECK(LM_HAS_FIELD(result, lm_flow_result, seconds));
		CHECK(LM_HAS_FIELD(result, lm_flow_result, byhost)); /* enable leaves it unread: size 0 */
		CHECK(result->byhost.size == 0);
		CHECK(result->count == 2);
		for (i = 0; i < result->count && i < 2; i++)
			check_outcome(result->vms[i], vms[i]);
	}
	lm_flow_result_free(result);
	lm_flow_result_free(NULL);
	lm_profile_free(profile);
	lm_context_free(ctx);
	if (failures == 0)
		printf("ok: a version-1 outcome reads the library's outcomes (%zu bytes, its prefix %zu); "
		    "a field past the library's size is reported absent\n", sizeof(lm_vm_outcome), sizeof(v1_vm_outcome));
	return failures == 0 ? 0 : 1;
}
