/* The one path join (path.h). */
#include "path.h"

#include <limits.h>
#include <stdarg.h>
#include <string.h>

#include "buf.h"
#include "text.h"

/* The parts into b; a result longer than b's limit is an error naming the path's start. */
static int join(lm_buf *b, const char *first, va_list ap)
{
	const char *part;
	char shown[96];

	lm_buf_adds(b, first);
	while ((part = va_arg(ap, const char *)) != NULL) {
		lm_buf_add(b, "/", 1);
		lm_buf_adds(b, part);
	}
	if (lm_buf_error(b) != LM_ETOOLARGE)
		return lm_buf_error(b);
	lm_text_quote(shown, sizeof(shown), first, strlen(first), 60);
	return lm_error_set(LM_EINVALID, "a path under '%s' would be longer than %zu bytes (the limit)", shown, b->limit);
}

int lm_path_join(char **out, const char *first, ...)
{
	va_list ap;
	lm_buf b;
	int rc;

	*out = NULL;
	lm_buf_init(&b, PATH_MAX - 1);
	va_start(ap, first);
	rc = join(&b, first, ap);
	va_end(ap);
	if (rc == 0)
		return lm_buf_take(&b, out, NULL);
	lm_buf_dispose(&b);
	return rc;
}

int lm_path_join_buf(char *buf, size_t size, const char *first, ...)
{
	va_list ap;
	lm_buf b;
	int rc;

	if (size == 0)
		return lm_error_set(LM_EINVALID, "no room for a path");
	buf[0] = '\0';
	lm_buf_init(&b, size - 1);
	va_start(ap, first);
	rc = join(&b, first, ap);
	va_end(ap);
	if (rc == 0)
		memcpy(buf, lm_buf_ptr(&b), lm_buf_len(&b) + 1);
	lm_buf_dispose(&b);
	return rc;
}
