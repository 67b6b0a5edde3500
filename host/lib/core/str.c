#include "str.h"

#include <stdio.h>
#include <stdlib.h>

char *lm_vformat(const char *fmt, va_list ap)
{
	va_list copy;
	char *s;
	int n;

	va_copy(copy, ap);
	n = vsnprintf(NULL, 0, fmt, copy);
	va_end(copy);
	if (n < 0 || (s = malloc((size_t)n + 1)) == NULL)
		return NULL;
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	return s;
}

char *lm_format(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = lm_vformat(fmt, ap);
	va_end(ap);
	return s;
}

void lm_strv_free(char **list)
{
	size_t i;

	if (list == NULL)
		return;
	for (i = 0; list[i] != NULL; i++)
		free(list[i]);
	free(list);
}
