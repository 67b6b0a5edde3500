/* lume-metal: the probe's exercises, as one list that both the host and the guest probe use.
 *
 * Header-only and dependency-free, so the guest probe can include it without a library.
 * LM_EXERCISE_LIST(X) calls X(name) for every kernel `metal-capabilities --exercise` runs against
 * a CPU reference, in report order; each prints `exercise.NAME=pass|fail|error: MESSAGE`.
 * LM_EXERCISE_TG_LIST(X) calls X(bytes) for every threadgroup-memory size it tries, smallest
 * first; each prints `exercise.threadgroup_memory.BYTES=...`. LM_EXERCISE_DEFECT_LIST(X) calls X(name)
 * for every known defect of the paravirtual device it checks, last: reported, never required
 * (`fail` means the defect showed). See docs/report-format.md.
 */
#ifndef LUME_METAL_EXERCISE_LIST_H
#define LUME_METAL_EXERCISE_LIST_H

#define LM_EXERCISE_LIST(X) X(simdgroup_reduction) X(simdgroup_matrix) X(bfloat16)

#define LM_EXERCISE_TG_LIST(X) X(16384) X(32768) X(65536)

#define LM_EXERCISE_DEFECT_LIST(X) X(nocopy_buffer) X(indirect_command_buffer)

/* The report's minor version once exercise lines are in it (readers of 1 ignore them; 1.2 added
 * the defect lines, which readers of 1.1 ignore). */
#define LM_EXERCISE_REPORT_FORMAT "lume-metal-report/1.2"

#endif
