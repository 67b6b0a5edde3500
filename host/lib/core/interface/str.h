/* Internal: allocated strings — printf into a new string, and NULL-terminated string arrays
 * (directory lists, environments). */
#ifndef LM_STR_H
#define LM_STR_H

#include <stdarg.h>
#include <stddef.h>

#include "error_internal.h"

/* printf into a new string (free with free()); NULL when out of memory. */
char *lm_format(const char *fmt, ...) LM_PRINTF(1, 2);
char *lm_vformat(const char *fmt, va_list ap) LM_PRINTF(1, 0);

/* Free every string and the array; NULL is fine. */
void lm_strv_free(char **list);

/* n strings sorted in place (strcmp order), and where one is among n sorted ones: its index, or n
 * when it is not there. Sets of thousands of names (gc, known_hosts) are looked up this way, never
 * by a scan per name. */
void lm_strv_sort(char **v, size_t n);
size_t lm_strv_find(char *const *sorted, size_t n, const char *s);

#endif
