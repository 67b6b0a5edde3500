/* lume-metal: GPU family names and numbers. */
#ifndef LUME_METAL_FAMILY_H
#define LUME_METAL_FAMILY_H

#include "common.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
	const char *name; /* "Apple7", "Metal3", ... */
	int value;        /* MTLGPUFamily value: 1007, 5001, ... */
} lm_family;

/* Every family a capability report carries, in report order (see family_list.h). */
LM_EXTERN(const lm_family *) lm_family_table(size_t *count);

/* Name for a value ("Apple9" for 1009); NULL when the value is not in the table. */
LM_EXTERN(const char *) lm_family_name(int value);

/* "Apple9 (1009)" for a value, "Apple12 (1012)" for an Apple value past the table; into buf. */
LM_EXTERN(const char *) lm_family_label(int value, char *buf, size_t size);

/* Value for a name (case-sensitive, "Apple9" -> 1009); LM_ENOTFOUND when unknown. */
LM_EXTERN(int) lm_family_value(const char *name, int *value);

#ifdef __cplusplus
}
#endif
#endif
