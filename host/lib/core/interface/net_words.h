/* Internal: the words for a failed TCP connect to a guest, the same wherever lume-metal connects
 * (the readiness probe of port 22, the SSH session): which error it was, by name, so that a
 * refused or unreachable address is never reported as a slow boot. */
#ifndef LM_NET_WORDS_H
#define LM_NET_WORDS_H

#include <stddef.h>

/* The connect error `err` (an errno value) as words into buf: ECONNREFUSED, EHOSTUNREACH (with
 * the fact that macOS 15's Local Network privacy answers so: Apple TN3179), ENETUNREACH,
 * ETIMEDOUT by name; anything else as strerror says it. */
void lm_connect_error_words(int err, char *buf, size_t len);

#endif
