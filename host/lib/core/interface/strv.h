/* Internal: NULL-terminated arrays of malloc'ed strings (directory lists, environments). */
#ifndef LM_STRV_H
#define LM_STRV_H

/* Free every string and the array; NULL is fine. */
void lm_strv_free(char **list);

#endif
