/* lume-metal: the host library. Include this one header.
 *
 * Conventions (libgit2's): functions are lm_<module>_<verb>, return 0 or a negative
 * lm_error_code and leave a message for lm_error_last(); objects are opaque and freed by
 * lm_<type>_free(), which accepts NULL; strings returned to the caller are freed with lm_free().
 *
 * The lower-level calls the flows are built on -- the VM managers and the SSH transport -- are not
 * included: a program that needs them includes lume-metal/sys/vm.h and lume-metal/sys/ssh.h itself
 * (docs/embedding.md, "Lower-level calls").
 */
#ifndef LUME_METAL_H
#define LUME_METAL_H

#include "lume-metal/common.h"
#include "lume-metal/version.h"
#include "lume-metal/error.h"
#include "lume-metal/family.h"
#include "lume-metal/family_list.h"
#include "lume-metal/exercise_list.h"
#include "lume-metal/report.h"
#include "lume-metal/exercise.h"
#include "lume-metal/workload.h"
#include "lume-metal/profile.h"
#include "lume-metal/context.h"
#include "lume-metal/prefs.h"
#include "lume-metal/vm.h"
#include "lume-metal/agent.h"
#include "lume-metal/flow.h"
#include "lume-metal/local.h"
#include "lume-metal/bench.h"
#include "lume-metal/selftest.h"
#include "lume-metal/doctor.h"
#include "lume-metal/output.h"
#include "lume-metal/local_image.h"

#endif
