/* lume-metal: the probe's exercises — whether the device really runs the kernels the unlock is for.
 *
 * `metal-capabilities --exercise` compiles small compute kernels at run time and checks their
 * output against the CPU (docs/guest.md); its report carries one `exercise.NAME=` line per kernel
 * (docs/report-format.md). A profile's expectations say which must pass (docs/profile-format.md).
 */
#ifndef LUME_METAL_EXERCISE_H
#define LUME_METAL_EXERCISE_H

#include "common.h"

#include <stdint.h>

#include "profile.h"
#include "report.h"

#ifdef __cplusplus
extern "C" {
#endif

/* In report order (include/lume-metal/exercise_list.h). */
typedef enum {
	LM_EXERCISE_SIMDGROUP_REDUCTION,
	LM_EXERCISE_SIMDGROUP_MATRIX,
	LM_EXERCISE_BFLOAT16,
	LM_EXERCISE_THREADGROUP_16K,
	LM_EXERCISE_THREADGROUP_32K,
	LM_EXERCISE_THREADGROUP_64K,
	/* The paravirtual device's known defects: reported, not required by any profile. */
	LM_EXERCISE_NOCOPY_BUFFER,           /* stale data through newBufferWithBytesNoCopy: buffers */
	LM_EXERCISE_INDIRECT_COMMAND_BUFFER, /* indirect command buffers */
	LM_EXERCISE_COUNT
} lm_exercise;

typedef enum {
	LM_EXERCISE_NOT_RUN = 0, /* the report has no line for it (an older probe, or no --exercise) */
	LM_EXERCISE_PASS,        /* the kernel ran and its output matched the CPU's */
	LM_EXERCISE_FAIL,        /* it ran and computed wrong numbers */
	LM_EXERCISE_ERROR        /* library, function or pipeline creation failed, or it did not finish */
} lm_exercise_result;

/* "simdgroup_reduction", ..., "threadgroup_memory.16384"; NULL for an unknown value. */
LM_EXTERN(const char *) lm_exercise_name(lm_exercise e);
/* "not run", "pass", "fail", "error". */
LM_EXTERN(const char *) lm_exercise_result_name(lm_exercise_result r);

/* 1 when the report carries at least one exercise line. */
LM_EXTERN(int) lm_report_has_exercise(const lm_report *report);
/* The result of one exercise; *message (may be NULL) gets the fail/error text, "" when none. */
LM_EXTERN(lm_exercise_result) lm_report_exercise(const lm_report *report, lm_exercise e, const char **message);
/* 1 for the known defects' exercises (a fail there is a defect shown, reported, never required). */
LM_EXTERN(int) lm_exercise_is_defect(lm_exercise e);
/* The largest threadgroup-memory size whose kernel passed (16384, 32768, 65536), 0 when none. */
LM_EXTERN(uint64_t) lm_report_threadgroup_memory_exercised(const lm_report *report);
/* How long the exercise itself took, in seconds, on the guest's monotonic clock (the probe's
 * exercise_us line, since issue 37); -1 when the report does not say (an older probe). */
LM_EXTERN(double) lm_report_exercise_seconds(const lm_report *report);

/* What a profile asks of one exercise feature: simdgroup_reduction, simdgroup_matrix, bfloat16,
 * threadgroup_memory (the last one covers every size up to the profile's max_threadgroup_memory). */
typedef enum { LM_EXERCISE_EXPECT_NONE = 0, LM_EXERCISE_EXPECT_REPORT, LM_EXERCISE_EXPECT_PASS } lm_exercise_expect;
#define LM_EXERCISE_FEATURES 4
LM_EXTERN(const char *) lm_exercise_feature_name(int feature);
LM_EXTERN(lm_exercise_expect) lm_profile_exercise_expect(const lm_profile *profile, int feature);

/* Check the exercise results of `exercised` (a report made with --exercise) against the profile.
 * 0 when every expected pass passed; otherwise LM_ENOTPROVEN with a message that says what was
 * and was not proven. */
LM_EXTERN(int) lm_profile_check_exercise(const lm_profile *profile, const lm_report *exercised);
/* The same, with the features whose bit (1 << feature) is set in `waived` not required: what the
 * guest cannot run whatever the host does (lm_exercise_waived). */
LM_EXTERN(int) lm_profile_check_exercise_waived(const lm_profile *profile, const lm_report *exercised,
    unsigned waived);
/* What a guest of this macOS version (sw_vers -productVersion) cannot run whatever the host does,
 * as bits (1 << feature), so that no profile requires it there: bfloat16 below macOS 14 (it needs
 * the Metal Shading Language 3.1, and llama.cpp turns it off below). `why` (NULL: not wanted)
 * says which and why, "" when nothing is waived; an unknown version waives nothing. */
LM_EXTERN(unsigned) lm_exercise_waived(const char *macos_version, char *why, size_t len);

#ifdef __cplusplus
}
#endif
#endif
