/* The state journal (docs/state-format.md) as `lume-metal status` reads it: the schema, the host
 * preference's record (with its base64 binary plists), and every VM's entry (facts, bundle, the
 * profile copy, the last probe's reports). The VM manager points at a closed loopback port, so
 * each VM's entry is read and the VM then reported unreachable. */
#include <string.h>

#include "fuzz_support.h"
#include "record.h"
#include "state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static lm_context *ctx;
	lm_flow_result *result = NULL;
	lm_state *st = NULL;
	char names[256];
	size_t i;

	if (ctx == NULL) {
		lm_options opts;
		lm_fuzz_options(&opts);
		opts.vm_manager = LM_VM_MANAGER_LUME_API;
		opts.lume_url = "http://127.0.0.1:1"; /* nothing listens: refused at once */
		opts.connect_timeout = 1;
		ctx = lm_fuzz_context(&opts);
	}
	lm_fuzz_write("state.json", data, size);
	if (lm_flow_status(ctx, NULL, 0, &result) == 0)
		for (i = 0; i < result->count; i++)
			LM_FUZZ_CHECK(result->vms[i]->rc < 0 && result->vms[i]->message[0] != '\0');
	lm_flow_result_free(result);
	/* What enable and rollback ask before they keep or restore the preference. */
	if (lm_journal_open(&st, ctx, LM_STATE_READONLY, 1) == 0) {
		LM_FUZZ_CHECK(lm_vm_record_live(st, "vm1", names, sizeof(names)) >= 0);
		LM_FUZZ_CHECK(strlen(names) < sizeof(names));
		lm_state_close(st);
	}
	return 0;
}
