/* Human text cut visibly: "..." where it ends, never inside a UTF-8 sequence. A file of its own,
 * needing nothing, so that the error messages (error.c) cut their text as every other part does
 * without text.c's buffers (buf.c, which sets errors) below them. */
#include "text.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void lm_text_format_cut(char *out, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (size == 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(out, size, fmt, ap);
	va_end(ap);
	lm_text_mark_cut(out, size, n);
}

void lm_text_mark_cut(char *out, size_t size, int n)
{
	size_t k;

	if (n < 0) {
		out[0] = '\0';
		return;
	}
	if ((size_t)n < size || size < 4)
		return;
	k = size - 4;
	while (k > 0 && ((unsigned char)out[k] & 0xc0) == 0x80)
		k--;
	memcpy(out + k, "...", 4);
}
