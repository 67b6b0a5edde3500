/* known_hosts in the state directory, as `lume-metal forget-host` reads and rewrites it.
 *
 * Today the file is parsed by libssh2 behind lm_ssh_forget_host(), so the input goes through a
 * file; once known_hosts has a parser of its own that takes the bytes, call it here instead. */
#include "fuzz_support.h"

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
