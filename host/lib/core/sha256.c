/* SHA-256 from libcrypto, which libcurl and libssh2 load into the process anyway.
 *
 * The low-level SHA256_Init/Update/Final, not EVP: they work on a context the caller holds, so
 * hashing allocates nothing and cannot fail (their return value is always 1), and the callers --
 * lock-file names, known_hosts fingerprints, upload read-backs -- need no failure path that could
 * never be taken. EVP_MD_CTX_new and the provider fetch of EVP_DigestInit_ex allocate inside
 * libcrypto, where an out-of-memory failure would be invisible to the tests' fault injector.
 * OpenSSL 3 marks them deprecated but keeps them (they are the same code EVP runs); LibreSSL and
 * BoringSSL have them undeprecated. */
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include "sha256.h"
#include "error_internal.h"
#include "file.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>

void lm_sha256_init(lm_sha256_ctx *c)
{
	(void)SHA256_Init(&c->sha);
}

void lm_sha256_update(lm_sha256_ctx *c, const void *data, size_t len)
{
	(void)SHA256_Update(&c->sha, data, len);
}

void lm_sha256_final(lm_sha256_ctx *c, uint8_t digest[32])
{
	(void)SHA256_Final(digest, &c->sha);
	OPENSSL_cleanse(c, sizeof(*c));
}

void lm_sha256(const void *data, size_t len, uint8_t digest[32])
{
	lm_sha256_ctx c;

	lm_sha256_init(&c);
	lm_sha256_update(&c, data, len);
	lm_sha256_final(&c, digest);
}

void lm_sha256_hex(const uint8_t digest[32], char hex[65])
{
	static const char digits[] = "0123456789abcdef";
	int i;

	for (i = 0; i < 32; i++) {
		hex[2 * i] = digits[digest[i] >> 4];
		hex[2 * i + 1] = digits[digest[i] & 15];
	}
	hex[64] = '\0';
}

int lm_sha256_file(const char *path, uint8_t digest[32])
{
	lm_sha256_ctx c;
	uint8_t buf[65536];
	struct stat st;
	ssize_t n;
	int fd;

	if (lm_fs_open_read(path, &fd, &st) < 0)
		return lm_error_last()->code;
	lm_sha256_init(&c);
	for (;;) {
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = errno;
			close(fd);
			return lm_error_set(LM_EIO, "cannot read %s: %s", path, strerror(err));
		}
		if (n == 0)
			break;
		lm_sha256_update(&c, buf, (size_t)n);
	}
	close(fd);
	lm_sha256_final(&c, digest);
	return 0;
}
