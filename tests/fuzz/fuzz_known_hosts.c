/* known_hosts in the state directory, as `lume-metal forget-host` reads, parses and rewrites it.
 *
 * The parse has no entry point that takes bytes (it is part of reading the file), so the input
 * goes through the file; if it gets one, call it here instead. */
#include "fuzz_support.h"
#include "lume-metal/sys/ssh.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static lm_context *ctx;

	if (ctx == NULL) {
		lm_options opts;
		lm_fuzz_options(&opts);
		ctx = lm_fuzz_context(&opts);
	}
	lm_fuzz_write("known_hosts", data, size);
	(void)lm_ssh_forget_host(ctx, "vm1");
	return 0;
}
