#include "str.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int compare_strings(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void lm_strv_sort(char **v, size_t n)
{
	if (n > 1)
		qsort(v, n, sizeof(*v), compare_strings);
}

size_t lm_strv_find(char *const *sorted, size_t n, const char *s)
{
	char *const *hit = n > 0 ? bsearch(&s, sorted, n, sizeof(*sorted), compare_strings) : NULL;

	return hit != NULL ? (size_t)(hit - sorted) : n;
}
