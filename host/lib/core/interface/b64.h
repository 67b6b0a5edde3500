/* Internal: the one base64 (RFC 4648, standard alphabet) -- key fingerprints, OpenSSH key files,
 * known_hosts keys, the journal's preference values. */
#ifndef LM_B64_H
#define LM_B64_H

#include <stddef.h>
#include <stdint.h>

/* The characters lm_b64_encode writes for n bytes, without the NUL. */
size_t lm_b64_encoded_len(size_t n, int pad);

/* n bytes into out, NUL-terminated: room for lm_b64_encoded_len(n, pad) + 1. pad: '=' to a
 * multiple of 4 (OpenSSH fingerprints have none). */
void lm_b64_encode(const uint8_t *in, size_t n, char *out, int pad);

/* Decode in[0..n) into out: the number of bytes, or -1 when it is not base64 or would be more than
 * out_size bytes (n / 4 * 3 + 2 always suffices). Without flags, white space is skipped and the
 * padding may be left out (OpenSSH's key files wrap their lines); with LM_B64_STRICT only the
 * canonical form is taken: no white space, padded to a multiple of 4, not empty. Either way there
 * is nothing after the padding and at most two '='. */
#define LM_B64_STRICT 1u
long lm_b64_decode(const char *in, size_t n, uint8_t *out, size_t out_size, unsigned flags);

#endif
