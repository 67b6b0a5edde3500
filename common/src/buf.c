#include "buf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUF_FIRST_CAP 256

void lm_buf_init(lm_buf *b, size_t limit)
{
	memset(b, 0, sizeof(*b));
	b->limit = limit;
}

/* The first failure: the contents go, the code stays. */
static int fail(lm_buf *b, int code)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
	b->error = code;
	if (code == LM_ETOOLARGE)
		return lm_error_set(code, "more than %zu bytes (the limit)", b->limit);
	if (code == LM_EINVALID)
		return lm_error_set(code, "a text that vsnprintf cannot format");
	return lm_error_nomem();
}

/* Room for `more` bytes and the NUL after them. */
static int reserve(lm_buf *b, size_t more)
{
	size_t need, cap;
	char *p;

	if (b->error != 0)
		return b->error;
	if (more > b->limit - b->len)
		return fail(b, LM_ETOOLARGE);
	if (b->len + more == SIZE_MAX)
		return fail(b, LM_ENOMEM); /* no room for the NUL */
	need = b->len + more + 1;
	if (need <= b->cap)
		return 0;
	cap = b->cap != 0 ? b->cap : BUF_FIRST_CAP;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	if (b->limit < SIZE_MAX && cap > b->limit + 1)
		cap = b->limit + 1; /* never more memory than the limit needs */
	if ((p = realloc(b->data, cap)) == NULL)
		return fail(b, LM_ENOMEM);
	b->data = p;
	b->cap = cap;
	return 0;
}

int lm_buf_add(lm_buf *b, const void *data, size_t len)
{
	int rc;

	if ((rc = reserve(b, len)) < 0)
		return rc;
	if (len > 0)
		memcpy(b->data + b->len, data, len);
	b->len += len;
	if (b->data != NULL)
		b->data[b->len] = '\0';
	return 0;
}

int lm_buf_adds(lm_buf *b, const char *s)
{
	return lm_buf_add(b, s, strlen(s));
}

int lm_buf_vaddf(lm_buf *b, const char *fmt, va_list ap)
{
	va_list copy;
	int n, rc;

	if (b->error != 0)
		return b->error;
	va_copy(copy, ap);
	n = vsnprintf(NULL, 0, fmt, copy);
	va_end(copy);
	if (n < 0)
		return fail(b, LM_EINVALID);
	/* Formatted in place, at its full size: nothing is ever cut. */
	if ((rc = reserve(b, (size_t)n)) < 0)
		return rc;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int lm_buf_addf(lm_buf *b, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = lm_buf_vaddf(b, fmt, ap);
	va_end(ap);
	return rc;
}

const char *lm_buf_ptr(const lm_buf *b)
{
	return b->data != NULL ? b->data : "";
}

size_t lm_buf_len(const lm_buf *b)
{
	return b->len;
}

int lm_buf_error(const lm_buf *b)
{
	return b->error;
}

int lm_buf_take(lm_buf *b, char **out, size_t *len)
{
	int rc = b->error;

	*out = NULL;
	if (len != NULL)
		*len = 0;
	if (rc == 0 && b->data == NULL && (b->data = calloc(1, 1)) == NULL)
		rc = lm_error_nomem();
	if (rc == 0) {
		*out = b->data;
		if (len != NULL)
			*len = b->len;
		b->data = NULL;
	}
	lm_buf_dispose(b);
	return rc;
}

void lm_buf_reset(lm_buf *b)
{
	b->len = 0;
	b->error = 0;
	if (b->data != NULL)
		b->data[0] = '\0';
}

void lm_buf_dispose(lm_buf *b)
{
	free(b->data);
	lm_buf_init(b, b->limit);
}
