/* run's workload in the guest: how it is started (lm_workload_options). */
#include <stddef.h>
#include <string.h>

#include "guestops.h"

int lm_workload_options_init(lm_workload_options *opts, unsigned int version)
{
	if (opts == NULL)
		return lm_error_set(LM_EINVALID, "lm_workload_options_init: no options to fill");
	if (version < 1 || version > LM_WORKLOAD_OPTIONS_VERSION)
		return lm_error_set(LM_EINVALID, "lm_workload_options_init: version %u is not one this library knows "
		    "(1 to %d)", version, LM_WORKLOAD_OPTIONS_VERSION);
	memset(opts, 0, sizeof(*opts));
	opts->version = version;
	return 0;
}
