/* The guest bundle's manifest.json (docs/bundle-format.md), as `enable --bundle DIR` reads it.
 * Whatever it accepts must keep every name inside the bundle and the guest's directory. */
#include <string.h>

#include "guest_bundle.h"
#include "fuzz_support.h"

static int inside(const char *name)
{
	return name[0] != '\0' && name[0] != '/' && strstr(name, "..") == NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static lm_context *ctx;
	lm_guest_facts facts;
	lm_bundle *b = NULL;
	size_t i;

	if (ctx == NULL) {
		lm_options opts;
		lm_fuzz_options(&opts);
		opts.bundle_dir = lm_fuzz_subdir("bundle");
		ctx = lm_fuzz_context(&opts);
	}
	lm_fuzz_write("bundle/manifest.json", data, size);
	memset(&facts, 0, sizeof(facts));
	if (lm_bundle_open(&b, ctx, &facts) < 0)
		return 0;
	LM_FUZZ_CHECK(inside(b->id) && strchr(b->id, '/') == NULL);
	LM_FUZZ_CHECK(b->nfiles <= LM_BUNDLE_MAX_FILES);
	for (i = 0; i < b->nfiles; i++) {
		LM_FUZZ_CHECK(inside(b->files[i].name));
		LM_FUZZ_CHECK(strlen(b->files[i].sha256) == 64);
		LM_FUZZ_CHECK((b->files[i].mode & ~0755) == 0);
	}
	lm_bundle_free(b);
	return 0;
}
