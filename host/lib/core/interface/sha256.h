/* Internal: SHA-256 from libcrypto (OpenSSL), for verifying uploads and bundle manifests. */
#ifndef LM_SHA256_H
#define LM_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/sha.h>

/* libcrypto's own context, held by value: hashing allocates nothing and cannot fail, so every
 * function but lm_sha256_file returns nothing. */
typedef struct {
	SHA256_CTX sha;
} lm_sha256_ctx;

void lm_sha256_init(lm_sha256_ctx *c);
void lm_sha256_update(lm_sha256_ctx *c, const void *data, size_t len);
void lm_sha256_final(lm_sha256_ctx *c, uint8_t digest[32]);
void lm_sha256(const void *data, size_t len, uint8_t digest[32]);
void lm_sha256_hex(const uint8_t digest[32], char hex[65]);
/* SHA-256 of a regular local file (opened with lm_fs_open_read); LM_ENOTFOUND, LM_EINVALID or
 * LM_EIO with the file's name on failure. */
int lm_sha256_file(const char *path, uint8_t digest[32]);

#endif
