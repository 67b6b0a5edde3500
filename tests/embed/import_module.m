/* What Swift's `import LumeMetal` reads, checked without a Swift toolchain: the installed module
 * map builds as a Clang module and declares the API. */
@import LumeMetal;

int main(void)
{
	lm_options opts;
	lm_context *ctx = NULL;

	if (lm_options_init(&opts, LM_OPTIONS_VERSION) < 0)
		return lm_error_last()->code;
	if (lm_context_new(&ctx, &opts) < 0)
		return lm_error_last()->code;
	lm_context_free(ctx);
	return lm_version()[0] == '\0';
}
