#include "text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void lm_scan_init(lm_scan *s, const char *data, size_t len)
{
	s->data = data;
	s->len = data == NULL ? 0 : len;
	s->off = 0;
}

size_t lm_scan_left(const lm_scan *s)
{
	return s->len - s->off;
}

int lm_scan_line(lm_scan *s, const char **line, size_t *n)
{
	const char *start, *nl;
	size_t left = lm_scan_left(s);

	if (left == 0)
		return 0;
	start = s->data + s->off;
	nl = memchr(start, '\n', left);
	*line = start;
	if (nl == NULL) {
		*n = left;
		s->off = s->len;
		return 2;
	}
	*n = (size_t)(nl - start);
	s->off += *n + 1;
	return 1;
}

int lm_utf8_check(const char *buf, size_t len, size_t *bad)
{
	const unsigned char *s = (const unsigned char *)buf;
	size_t i = 0, need, k;
	unsigned char c, lo, hi;

	while (i < len) {
		c = s[i];
		lo = 0x80;
		hi = 0xbf;
		if (c < 0x80) {
			i++;
			continue;
		} else if (c >= 0xc2 && c <= 0xdf) {
			need = 1;
		} else if (c >= 0xe0 && c <= 0xef) {
			need = 2;
			if (c == 0xe0)
				lo = 0xa0; /* overlong */
			else if (c == 0xed)
				hi = 0x9f; /* UTF-16 surrogates */
		} else if (c >= 0xf0 && c <= 0xf4) {
			need = 3;
			if (c == 0xf0)
				lo = 0x90; /* overlong */
			else if (c == 0xf4)
				hi = 0x8f; /* above U+10FFFF */
		} else {
			*bad = i;
			return -1;
		}
		if (len - i <= need) {
			*bad = i;
			return -1;
		}
		for (k = 1; k <= need; k++) {
			unsigned char b = s[i + k];
			unsigned char l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xbf;
			if (b < l || b > h) {
				*bad = i;
				return -1;
			}
		}
		i += need + 1;
	}
	return 0;
}

size_t lm_text_distance(const char *a, const char *b, size_t cap)
{
	size_t la = strlen(a), lb = strlen(b), i, j, row[65], prev, tmp, best;

	if (la > 64 || lb > 64)
		return cap + 1;
	if ((la > lb ? la - lb : lb - la) > cap)
		return cap + 1;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = i;
		best = row[0];
		for (j = 1; j <= lb; j++) {
			tmp = row[j];
			row[j] = prev + (a[i - 1] == b[j - 1] ? 0 : 1);
			if (row[j - 1] + 1 < row[j])
				row[j] = row[j - 1] + 1;
			if (tmp + 1 < row[j])
				row[j] = tmp + 1;
			prev = tmp;
			if (row[j] < best)
				best = row[j];
		}
		if (best > cap)
			return cap + 1;
	}
	return row[lb] > cap ? cap + 1 : row[lb];
}

void lm_text_quote(char *out, size_t size, const char *s, size_t len, size_t max_chars)
{
	size_t o = 0, i;
	int cut = len > max_chars;
	char esc[8];

	if (size == 0)
		return;
	if (cut)
		len = max_chars;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		const char *piece = esc;
		if (c == '"')
			piece = "\\\"";
		else if (c == '\\')
			piece = "\\\\";
		else if (c == '\n')
			piece = "\\n";
		else if (c == '\t')
			piece = "\\t";
		else if (c == '\r')
			piece = "\\r";
		else if (c < 0x20 || c == 0x7f)
			snprintf(esc, sizeof(esc), "\\x%02x", c);
		else {
			esc[0] = (char)c;
			esc[1] = '\0';
		}
		if (o + strlen(piece) + 4 >= size) {
			cut = 1;
			break;
		}
		memcpy(out + o, piece, strlen(piece));
		o += strlen(piece);
	}
	if (cut && o + 4 <= size) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
}

int lm_text_parse_u64(const char *s, size_t n, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (n == 0)
		return -1;
	for (i = 0; i < n; i++) {
		unsigned d;
		if (s[i] < '0' || s[i] > '9')
			return -1;
		d = (unsigned)(s[i] - '0');
		if (d > max || v > (max - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

char *lm_text_dup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = malloc(n);

	if (p != NULL)
		memcpy(p, s, n);
	return p;
}

void lm_buf_put(lm_buf *b, const char *data, size_t n)
{
	size_t cap;
	char *p;

	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		cap = b->cap ? b->cap : 256;
		while (cap < b->len + n + 1)
			cap *= 2;
		if ((p = realloc(b->data, cap)) == NULL) {
			free(b->data);
			b->data = NULL;
			b->len = b->cap = 0;
			b->oom = 1;
			return;
		}
		b->data = p;
		b->cap = cap;
	}
	memcpy(b->data + b->len, data, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void lm_buf_puts(lm_buf *b, const char *s)
{
	lm_buf_put(b, s, strlen(s));
}

void lm_buf_printf(lm_buf *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	lm_buf_put(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

char *lm_buf_finish(lm_buf *b)
{
	char *p;

	if (b->oom)
		return NULL;
	if (b->data == NULL)
		lm_buf_put(b, "", 0);
	p = b->data;
	b->data = NULL;
	b->len = b->cap = 0;
	return p;
}
