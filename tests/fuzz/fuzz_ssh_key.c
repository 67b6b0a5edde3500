/* The --ssh-key file: lume-metal reads the key's kind (and whether it is encrypted) from its
 * public parts before libssh2 sees it, to explain RSA and DSA keys that cannot work. */
#include "fuzz_support.h"
#include "ssh_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static lm_context *ctx;

	if (ctx == NULL) {
		lm_options opts;
		lm_fuzz_options(&opts);
		opts.ssh_key = lm_fuzz_path("id_key");
		ctx = lm_fuzz_context(&opts);
	}
	lm_fuzz_write("id_key", data, size);
	(void)lm_ssh_check_key_option(ctx);
	return 0;
}
