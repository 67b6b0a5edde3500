/* Internal: the one growable byte buffer, with a limit (model: curl's dynbuf).
 *
 * Every growable byte string of the library -- a child's or a guest command's output, an HTTP
 * answer, a command line, a document or message being built -- goes into one of these. Its owner
 * states the most it may hold when it is set up; an add past that fails with LM_ETOOLARGE instead
 * of cutting, so that a partial result can never pass for a whole one.
 *
 * Errors are sticky: after the first failure (LM_ENOMEM, LM_ETOOLARGE, whose message was set
 * then) the buffer holds nothing, every add returns that code again without doing anything, and
 * lm_buf_take returns it. A text can thus be built with many adds and checked once, at the take.
 * The contents are always NUL-terminated (not counted in the length or the limit), so they can be
 * read as a string.
 */
#ifndef LM_BUF_H
#define LM_BUF_H

#include <stdarg.h>
#include <stddef.h>

#include "error_internal.h"

typedef struct {
	char *data;     /* NULL until something was added */
	size_t len;
	size_t cap;
	size_t limit;   /* the most bytes it may hold */
	int error;      /* 0, or the first failure: sticky */
} lm_buf;

/* For text built from parts that are bounded themselves (messages, reports, documents): a limit
 * none of them reaches, so that a runaway loop fails instead of taking all the memory. */
#define LM_BUF_TEXT_MAX ((size_t)64 << 20)

/* Empty, holding at most `limit` bytes. Nothing is allocated until the first add. */
void lm_buf_init(lm_buf *b, size_t limit);

/* Append; 0, or the (sticky) error: LM_ETOOLARGE with "more than LIMIT bytes (the limit)" when
 * the result would be longer than the limit, LM_ENOMEM. */
int lm_buf_add(lm_buf *b, const void *data, size_t len);
int lm_buf_adds(lm_buf *b, const char *s);
int lm_buf_addf(lm_buf *b, const char *fmt, ...) LM_PRINTF(2, 3);
int lm_buf_vaddf(lm_buf *b, const char *fmt, va_list ap) LM_PRINTF(2, 0);

/* The contents ("" when empty or after a failure) and their length; valid until the next change. */
const char *lm_buf_ptr(const lm_buf *b);
size_t lm_buf_len(const lm_buf *b);
/* 0, or the sticky error. */
int lm_buf_error(const lm_buf *b);

/* Hand the contents over: *out (NUL-terminated, "" when nothing was added; free with free()) and
 * *len (may be NULL). On the sticky error, that code with *out NULL. Either way the buffer is
 * empty afterwards, with its limit, ready for use again. */
int lm_buf_take(lm_buf *b, char **out, size_t *len);

/* Empty again, the error forgotten, the memory kept for the next adds. */
void lm_buf_reset(lm_buf *b);

/* Free what it holds (the struct is the caller's); usable again afterwards, with its limit. */
void lm_buf_dispose(lm_buf *b);

#endif
