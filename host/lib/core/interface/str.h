/* Internal: allocated strings — printf into a new string, and NULL-terminated string arrays
 * (directory lists, environments). */
#ifndef LM_STR_H
#define LM_STR_H

#include <stdarg.h>

#include "error_internal.h"

/* printf into a new string (free with free()); NULL when out of memory. */
char *lm_format(const char *fmt, ...) LM_PRINTF(1, 2);
char *lm_vformat(const char *fmt, va_list ap) LM_PRINTF(1, 0);

/* Free every string and the array; NULL is fine. */
void lm_strv_free(char **list);

#endif
