/* The host preference's plist file (XML or binary), as `lume-metal host status` reads it from
 * --prefs-dir: the domain's file, the key's value, its description, and the base64 binary-plist
 * form the state journal keeps, which must decode to an equal value. */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_support.h"
#include "prefs_store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static lm_context *ctx;
	lm_host_pref_info info;
	lm_pref_setting want;
	lm_prefs_store *store = NULL;
	plist_t value = NULL, back = NULL, forced = NULL;
	char display[512], *text = NULL, path[300];
	int present = 0, managed = 0;

	lm_host_pref_default(&want);
	if (ctx == NULL) {
		lm_options opts;
		lm_fuzz_options(&opts);
		ctx = lm_fuzz_context(&opts);
	}
	/* The same bytes as the user's file and as the configuration profile's (managed) one. */
	snprintf(path, sizeof(path), "%s.plist", want.domain);
	lm_fuzz_write(path, data, size);
	snprintf(path, sizeof(path), "managed/%s.plist", want.domain);
	lm_fuzz_write(path, data, size);
	(void)lm_host_pref_status(ctx, &want, &info);

	LM_FUZZ_CHECK(lm_prefs_store_open_plist(&store, lm_fuzz_dir(), want.domain) == 0);
	if (lm_prefs_store_read(store, want.key, &present, &value) == 0 && value != NULL) {
		(void)lm_pref_plist_type(value);
		lm_pref_plist_describe(value, display, sizeof(display));
		(void)lm_pref_plist_is_flag_type(value);
		if (lm_pref_plist_encode(value, &text) == 0) {
			LM_FUZZ_CHECK(lm_pref_plist_decode(text, &back) == 0);
			LM_FUZZ_CHECK(lm_pref_plist_equal(value, back));
		}
	}
	(void)lm_prefs_store_managed(store, want.key, &managed, &forced);
	free(text);
	plist_free(back);
	plist_free(forced);
	plist_free(value);
	lm_prefs_store_free(store);
	return 0;
}
