/* lume-metal: what llama.cpp and MLX select from a device's answers (reference/metal.md). */
#ifndef LUME_METAL_WORKLOAD_H
#define LUME_METAL_WORKLOAD_H

#include "common.h"

#include "report.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
	int llama_simdgroup_reduction; /* Apple7 or Metal3 */
	int llama_simdgroup_mm;        /* Apple7 */
	int llama_bfloat16;            /* Metal3 or Apple6 */
	int llama_tensor;              /* Metal4 and an M5/M6/A19/A20 device name */
	int mlx_residency_risk;        /* Metal3 advertised on a device that cannot make residency sets */
} lm_workload_flags;

LM_EXTERN(void) lm_workload_derive(const lm_report *report, lm_workload_flags *out);

#ifdef __cplusplus
}
#endif
#endif
