/* The one base64 (b64.h), libcrypto's: EVP_EncodeBlock and EVP_DecodeBlock (RFC 4648's standard
 * alphabet, padded), which libssh2 and libcurl load into the process anyway. What they leave to
 * the caller is here: the unpadded form OpenSSH fingerprints use, white space in wrapped key
 * files, where padding may stand, and the caller's bound. Both work a group of 4 characters at a
 * time in buffers of their own: nothing is allocated, so nothing can fail but the input. */
#include "b64.h"

#include <string.h>

#include <openssl/evp.h>

size_t lm_b64_encoded_len(size_t n, int pad)
{
	return pad ? (n + 2) / 3 * 4 : n / 3 * 4 + (n % 3 ? n % 3 + 1 : 0);
}

void lm_b64_encode(const uint8_t *in, size_t n, char *out, int pad)
{
	size_t whole = n / 3 * 3, i;
	unsigned char last[5];

	/* Whole groups straight into out (no padding there), then the last 1 or 2 bytes into a group
	 * of our own, copied without its '=' when pad is 0: out holds exactly lm_b64_encoded_len + 1. */
	for (i = 0; i < whole; i += 3)
		EVP_EncodeBlock((unsigned char *)out + i / 3 * 4, in + i, 3);
	out += whole / 3 * 4;
	if (n > whole) {
		EVP_EncodeBlock(last, in + whole, (int)(n - whole));
		memcpy(out, last, pad ? 4 : n - whole + 1);
		out += pad ? 4 : n - whole + 1;
	}
	*out = '\0';
}

/* One group of 4 characters ('=' only in its last two places) into its 1 to 3 bytes at out[*len],
 * within out_size; -1 when it is not base64 or does not fit. */
static int decode_group(const char group[4], uint8_t *out, size_t out_size, size_t *len)
{
	unsigned char bytes[3];
	size_t k = group[3] != '=' ? 3 : group[2] != '=' ? 2 : 1;

	if (group[0] == '=' || group[1] == '=' || (group[2] == '=' && group[3] != '='))
		return -1;
	if (EVP_DecodeBlock(bytes, (const unsigned char *)group, 4) != 3 || *len + k > out_size)
		return -1;
	memcpy(out + *len, bytes, k);
	*len += k;
	return (int)k;
}

long lm_b64_decode(const char *in, size_t n, uint8_t *out, size_t out_size, unsigned flags)
{
	char group[4];
	size_t i, len = 0, have = 0;
	int strict = (flags & LM_B64_STRICT) != 0, done = 0, k;

	if (strict && (n == 0 || n % 4 != 0))
		return -1;
	for (i = 0; i < n; i++) {
		char c = in[i];

		if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
			if (strict)
				return -1;
			continue;
		}
		/* Nothing after the padding; NUL is no base64 (EVP_DecodeBlock would stop at none). */
		if (done || c == '\0')
			return -1;
		group[have++] = c;
		if (have < 4)
			continue;
		if ((k = decode_group(group, out, out_size, &len)) < 0)
			return -1;
		done = k < 3;
		have = 0;
	}
	if (have == 0)
		return (long)len;
	/* The padding left out (lenient only; strict input is whole groups): 2 or 3 characters. */
	if (strict || have == 1)
		return -1;
	for (; have < 4; have++)
		group[have] = '=';
	return decode_group(group, out, out_size, &len) < 0 ? -1 : (long)len;
}
