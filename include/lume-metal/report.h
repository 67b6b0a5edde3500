/* lume-metal: the capability report — what one guest process saw of its Metal device.
 *
 * The guest probe prints it as flat `key=value` lines (docs/report-format.md); the host parses
 * them, stores the JSON form, and compares stock against shimmed against a profile.
 */
#ifndef LUME_METAL_REPORT_H
#define LUME_METAL_REPORT_H

#include "common.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lm_report lm_report;

/* Parse the probe's line format. Errors name the line number and what was wrong. */
LM_EXTERN(int) lm_report_parse_lines(lm_report **out, const char *text, size_t len);

/* Parse / produce the JSON form (docs/report-format.md). *out is freed with lm_free(). */
LM_EXTERN(int) lm_report_from_json(lm_report **out, const char *json, size_t len);
LM_EXTERN(int) lm_report_to_json(const lm_report *report, char **out);

LM_EXTERN(void) lm_report_free(lm_report *report);

LM_EXTERN(const char *) lm_report_device(const lm_report *report);
/* *supported = 1 or 0; LM_ENOTFOUND when the report does not carry that family. */
LM_EXTERN(int) lm_report_family(const lm_report *report, int family_value, int *supported);
/* Highest Apple family answered true (0 when none): 1009 -> Apple9. */
LM_EXTERN(int) lm_report_apple_family(const lm_report *report);
LM_EXTERN(uint64_t) lm_report_max_threadgroup_memory(const lm_report *report);
LM_EXTERN(uint64_t) lm_report_recommended_working_set_size(const lm_report *report);
LM_EXTERN(int) lm_report_unified_memory(const lm_report *report);
LM_EXTERN(int) lm_report_shim_active(const lm_report *report);
/* Optional lines the probe may print; NULL when absent. */
LM_EXTERN(const char *) lm_report_probe_version(const lm_report *report);
LM_EXTERN(const char *) lm_report_shim_version(const lm_report *report);

/* The line format again (escaped values, families in report order); *out freed with lm_free().
 * Families the report does not carry (possible in the JSON form) are left out. */
LM_EXTERN(int) lm_report_to_lines(const lm_report *report, char **out);

/* What a stock paravirtual device answers (reference/metal.md): "Apple Paravirtual device",
 * Apple1..Apple5 true, every other family false, 32768 bytes of threadgroup memory, unified
 * memory, shim inactive, working-set size 0 (unknown). The baseline `profile lint` starts from. */
LM_EXTERN(int) lm_report_stock_paravirtual(lm_report **out);

#ifdef __cplusplus
}
#endif
#endif
