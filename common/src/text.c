#include "text.h"

#include "lume-metal/error.h"

#include <stdarg.h>
#include <stdint.h>
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

/* c is one of set's bytes; a NUL byte of the data never is (strchr would find set's own end). */
static int in_set(char c, const char *set)
{
	return c != '\0' && strchr(set, c) != NULL;
}

int lm_scan_token(lm_scan *s, const char *seps, const char **t, size_t *n)
{
	size_t start;

	while (s->off < s->len && in_set(s->data[s->off], seps))
		s->off++;
	if (s->off == s->len)
		return 0;
	start = s->off;
	while (s->off < s->len && !in_set(s->data[s->off], seps))
		s->off++;
	*t = s->data + start;
	*n = s->off - start;
	return 1;
}

int lm_scan_word(lm_scan *s, const char **w, size_t *n)
{
	return lm_scan_token(s, " \t", w, n);
}

size_t lm_scan_span(lm_scan *s, const char *set)
{
	size_t start = s->off;

	while (s->off < s->len && in_set(s->data[s->off], set))
		s->off++;
	return s->off - start;
}

int lm_scan_skip(lm_scan *s, const char *prefix)
{
	size_t k = strlen(prefix);

	if (k > lm_scan_left(s) || memcmp(s->data + s->off, prefix, k) != 0)
		return 0;
	s->off += k;
	return 1;
}

int lm_scan_u64(lm_scan *s, uint64_t max, uint64_t *out)
{
	size_t k = 0, left = lm_scan_left(s);
	const char *at = s->data + s->off;

	while (k < left && at[k] >= '0' && at[k] <= '9')
		k++;
	if (lm_text_parse_u64(at, k, max, out) < 0)
		return -1;
	s->off += k;
	return 0;
}

void lm_scan_rest(lm_scan *s, const char **rest, size_t *n)
{
	*rest = s->data != NULL ? s->data + s->off : "";
	*n = lm_scan_left(s);
	s->off = s->len;
}

/* Length of the well-formed UTF-8 sequence at s[0..len) (no overlong forms, no surrogates,
 * <= U+10FFFF), or 0 when the bytes there are not one. */
static size_t utf8_sequence(const unsigned char *s, size_t len)
{
	size_t need, k;
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
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
		return 0;
	}
	if (len <= need)
		return 0;
	for (k = 1; k <= need; k++) {
		unsigned char b = s[k];
		unsigned char l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xbf;
		if (b < l || b > h)
			return 0;
	}
	return need + 1;
}

int lm_utf8_check(const char *buf, size_t len, size_t *bad)
{
	const unsigned char *s = (const unsigned char *)buf;
	size_t i = 0, n;

	while (i < len) {
		if ((n = utf8_sequence(s + i, len - i)) == 0) {
			*bad = i;
			return -1;
		}
		i += n;
	}
	return 0;
}

int lm_text_sanitize(lm_buf *b, const char *text, size_t len, unsigned flags)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)text;
	size_t i = 0, n;
	char esc[5] = {'\\', 'x', 0, 0, 0};

	while (i < len) {
		unsigned char c = s[i];
		n = utf8_sequence(s + i, len - i);
		/* U+0080..U+009F (C2 80..C2 9F) are C1 controls: some terminals take U+009B for CSI. */
		if (n == 2 && c == 0xc2 && s[i + 1] < 0xa0)
			n = 0;
		if (n > 1) {
			lm_buf_add(b, text + i, n);
			i += n;
			continue;
		}
		i++;
		if ((flags & LM_TEXT_QUOTED) && (c == '"' || c == '\\')) {
			lm_buf_add(b, c == '"' ? "\\\"" : "\\\\", 2);
			continue;
		}
		if (c == '\n' || c == '\t' || c == '\r') {
			if ((flags & LM_TEXT_LINES) && c != '\r')
				lm_buf_add(b, &c, 1);
			else
				lm_buf_adds(b, c == '\n' ? "\\n" : c == '\t' ? "\\t" : "\\r");
			continue;
		}
		if (n == 1 && c >= 0x20 && c != 0x7f) {
			lm_buf_add(b, &c, 1);
			continue;
		}
		esc[2] = hex[c >> 4];
		esc[3] = hex[c & 15];
		lm_buf_add(b, esc, 4);
	}
	return lm_buf_error(b);
}

char *lm_text_printable(const char *text)
{
	return lm_text_sanitized(text, text != NULL ? strlen(text) : 0, LM_TEXT_LINES);
}

/* The limit for sanitising len bytes: what they can become (each byte at most \xNN). */
static size_t sanitized_max(size_t len)
{
	return len > SIZE_MAX / 4 ? SIZE_MAX - 1 : 4 * len;
}

char *lm_text_sanitized(const char *s, size_t len, unsigned flags)
{
	char *out;
	lm_buf b;

	if (s == NULL)
		len = 0;
	lm_buf_init(&b, sanitized_max(len));
	lm_text_sanitize(&b, s != NULL ? s : "", len, flags);
	return lm_buf_take(&b, &out, NULL) == 0 ? out : NULL;
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
	lm_buf b;
	size_t n;
	int cut = len > max_chars;

	if (size == 0)
		return;
	out[0] = '\0';
	if (cut)
		len = max_chars;
	lm_buf_init(&b, sanitized_max(len));
	if (lm_text_sanitize(&b, s, len, LM_TEXT_QUOTED) < 0)
		return;
	n = b.len;
	if (n + 1 > size) {
		/* Room for "..." and the NUL; never end inside a UTF-8 sequence. */
		cut = 1;
		n = size > 4 ? size - 4 : 0;
		while (n > 0 && ((unsigned char)b.data[n] & 0xc0) == 0x80)
			n--;
	}
	if (b.data != NULL)
		memcpy(out, b.data, n);
	if (cut && n + 4 <= size) {
		memcpy(out + n, "...", 3);
		n += 3;
	}
	out[n] = '\0';
	lm_buf_dispose(&b);
}

int lm_text_format(char *out, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (size == 0)
		return -1;
	va_start(ap, fmt);
	n = vsnprintf(out, size, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size) {
		out[0] = '\0';
		return -1;
	}
	return 0;
}

/* The value of one digit in base 10 or 16, or -1. */
static int digit_value(char c, unsigned base)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (base == 16 && c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (base == 16 && c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* n digits of base (no sign, no prefix) into *out, refused above max: one parse for both bases. */
static int parse_digits(const char *s, size_t n, unsigned base, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;
	int d;

	if (n == 0)
		return -1;
	for (i = 0; i < n; i++) {
		if ((d = digit_value(s[i], base)) < 0 || (uint64_t)d > max || v > (max - (uint64_t)d) / base)
			return -1;
		v = v * base + (uint64_t)d;
	}
	*out = v;
	return 0;
}

int lm_text_parse_u64(const char *s, size_t n, uint64_t max, uint64_t *out)
{
	return parse_digits(s, n, 10, max, out);
}

int lm_text_parse_i64(const char *s, size_t n, int64_t min, int64_t max, int64_t *out)
{
	uint64_t v;
	int64_t x;

	if (n > 0 && s[0] == '-') {
		/* the magnitude of INT64_MIN is INT64_MAX + 1 */
		if (lm_text_parse_u64(s + 1, n - 1, (uint64_t)INT64_MAX + 1, &v) < 0)
			return -1;
		x = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
	} else {
		if (lm_text_parse_u64(s, n, (uint64_t)INT64_MAX, &v) < 0)
			return -1;
		x = (int64_t)v;
	}
	if (x < min || x > max)
		return -1;
	*out = x;
	return 0;
}

int lm_text_parse_hex(const char *s, size_t n, uint64_t max, uint64_t *out)
{
	return parse_digits(s, n, 16, max, out);
}

const char *lm_text_find(const char *s, size_t n, const char *what)
{
	size_t w = strlen(what), i;

	for (i = 0; w <= n && i <= n - w; i++)
		if (memcmp(s + i, what, w) == 0)
			return s + i;
	return NULL;
}

int lm_text_is(const char *s, size_t n, const char *lit)
{
	return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

int lm_text_copy(char *out, size_t size, const char *s, size_t n)
{
	if (size == 0)
		return -1;
	out[0] = '\0';
	if (n == 0)
		return 0;
	if (n >= size || memchr(s, '\0', n) != NULL)
		return -1;
	memcpy(out, s, n);
	out[n] = '\0';
	return 0;
}

char *lm_text_dupn(const char *s, size_t n)
{
	char *p;

	if (n == SIZE_MAX || (p = malloc(n + 1)) == NULL)
		return NULL;
	if (n > 0)
		memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *lm_text_dup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = malloc(n);

	if (p != NULL)
		memcpy(p, s, n);
	return p;
}
