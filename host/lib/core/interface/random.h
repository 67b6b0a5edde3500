/* Internal: random names (temporary files, staging directories, run marks in the journal). */
#ifndef LM_RANDOM_H
#define LM_RANDOM_H

#include <stddef.h>

/* nbytes random bytes from the system's generator as 2*nbytes lowercase hex digits and a NUL
 * (out holds at least 2*nbytes+1). LM_EIO when the generator cannot be read. */
int lm_random_hex(char *out, size_t nbytes);

#endif
