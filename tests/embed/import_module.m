/* What Swift's `import LumeMetal` reads, checked without a Swift toolchain: the installed module
 * map builds as a Clang module and declares the API; the lower-level calls come with
 * `import LumeMetal.Sys` only (LM_WITHOUT_SYS: check_modulemap.sh expects this file not to build
 * then, as lume-metal.h alone does not declare them). */
@import LumeMetal;
#ifndef LM_WITHOUT_SYS
@import LumeMetal.Sys;
#endif

int main(void)
{
	lm_options opts;
	lm_context *ctx = NULL;
	lm_vm_manager *vmm = NULL;

	if (lm_options_init(&opts, LM_OPTIONS_VERSION) < 0)
		return lm_error_last()->code;
	if (lm_context_new(&ctx, &opts) < 0)
		return lm_error_last()->code;
	if (lm_vm_manager_open(&vmm, ctx) == 0)
		lm_vm_manager_free(vmm);
	lm_context_free(ctx);
	return lm_version()[0] == '\0';
}
