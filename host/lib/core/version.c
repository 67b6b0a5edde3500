#include "lume-metal/common.h"
#include "lume-metal/version.h"

const char *lm_version(void)
{
	return LUME_METAL_VERSION;
}
