/* Internal: families by position in the report order. */
#ifndef LM_FAMILY_INTERNAL_H
#define LM_FAMILY_INTERNAL_H

#include "lume-metal/family.h"
#include "lume-metal/family_list.h"

#define LM_FAMILY_COUNT_ONE(name, value) +1
enum { LM_FAMILY_COUNT = 0 LM_FAMILY_LIST(LM_FAMILY_COUNT_ONE) };

/* Position of a family value in LM_FAMILY_LIST order; -1 when not in the table. */
int lm_family_index(int value);
/* Position of a family name; -1 when not in the table. */
int lm_family_index_by_name(const char *name, size_t len);
/* The known family name closest to `name` (for "did you mean"); NULL when none is close. */
const char *lm_family_suggest(const char *name);

#endif
