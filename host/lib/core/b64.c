/* The one base64 (b64.h). */
#include "b64.h"

#include <string.h>

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t lm_b64_encoded_len(size_t n, int pad)
{
	return pad ? (n + 2) / 3 * 4 : n / 3 * 4 + (n % 3 ? n % 3 + 1 : 0);
}

void lm_b64_encode(const uint8_t *in, size_t n, char *out, int pad)
{
	size_t i;
	uint32_t v;

	for (i = 0; i + 2 < n; i += 3) {
		v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
		*out++ = alphabet[v >> 18];
		*out++ = alphabet[(v >> 12) & 63];
		*out++ = alphabet[(v >> 6) & 63];
		*out++ = alphabet[v & 63];
	}
	if (n - i == 1) {
		v = (uint32_t)in[i] << 16;
		*out++ = alphabet[v >> 18];
		*out++ = alphabet[(v >> 12) & 63];
		if (pad) {
			*out++ = '=';
			*out++ = '=';
		}
	} else if (n - i == 2) {
		v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;
		*out++ = alphabet[v >> 18];
		*out++ = alphabet[(v >> 12) & 63];
		*out++ = alphabet[(v >> 6) & 63];
		if (pad)
			*out++ = '=';
	}
	*out = '\0';
}

static int value_of(char c)
{
	const char *p = c != '\0' ? strchr(alphabet, c) : NULL;

	return p != NULL ? (int)(p - alphabet) : -1;
}

long lm_b64_decode(const char *in, size_t n, uint8_t *out, size_t out_size, unsigned flags)
{
	uint32_t acc = 0;
	size_t i, len = 0;
	int bits = 0, v, padding = 0;

	if ((flags & LM_B64_STRICT) && (n == 0 || n % 4 != 0))
		return -1;
	for (i = 0; i < n; i++) {
		char c = in[i];

		if ((c == ' ' || c == '\t' || c == '\r' || c == '\n') && !(flags & LM_B64_STRICT))
			continue;
		if (c == '=') {
			padding++;
			continue;
		}
		if (padding > 0 || (v = value_of(c)) < 0)
			return -1; /* data after padding, or not base64 */
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (len >= out_size)
				return -1;
			out[len++] = (uint8_t)(acc >> bits);
		}
	}
	if (padding > 2)
		return -1;
	return (long)len;
}
