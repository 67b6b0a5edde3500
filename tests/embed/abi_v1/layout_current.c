/* The version-1 fields as the current header lays them out: compiled against include/, linked
 * into test_abi_v1 (which sees only the frozen header). */
#include <stddef.h>

#include "lume-metal/context.h"
#include "v1_fields.h"

const size_t lm_abi_current_layout[] = {LM_V1_FIELDS(LM_V1_LAYOUT)};
const size_t lm_abi_current_size = sizeof(lm_options);
