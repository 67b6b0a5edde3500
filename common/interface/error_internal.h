/* Internal: setting the last error. */
#ifndef LM_ERROR_INTERNAL_H
#define LM_ERROR_INTERNAL_H

#include "lume-metal/error.h"

#if defined(__GNUC__)
#define LM_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define LM_PRINTF(a, b)
#endif

/* Set the calling thread's last error and return code, so that callers can write
 * `return lm_error_set(LM_EINVALID, "...", ...);`. */
int lm_error_set(int code, const char *fmt, ...) LM_PRINTF(2, 3);

/* Put context in front of the current message ("state.json: " + message); returns the current
 * code. Use when a lower layer's message lacks what the caller knows (a file name, a VM). */
int lm_error_prefix(const char *fmt, ...) LM_PRINTF(1, 2);

/* Shorthand for an allocation failure. */
int lm_error_nomem(void);

#endif
