/* The one POSIX sh quoting function for remote command lines.
 *
 * A word made only of characters that no POSIX shell (nor bash or zsh) treats specially is left
 * as it is, for readable command lines in logs; anything else is put in single quotes, inside
 * which nothing is special except the single quote itself, written as '\'' (close, escaped quote,
 * reopen). '=' is always quoted so that a word is never taken for a variable assignment, '~' and
 * '#' so that no word is expanded as a home directory or read as a comment. */
#include "lume-metal/sys/ssh.h"
#include "error_internal.h"

#include <stdlib.h>
#include <string.h>

static int is_plain(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	    c == '_' || c == '@' || c == '%' || c == '+' || c == ':' || c == ',' || c == '.' ||
	    c == '/' || c == '-';
}

/* Bytes needed for arg quoted (without the terminating NUL). */
static size_t quoted_len(const char *arg)
{
	size_t n = 0, quotes = 0;
	int plain = arg[0] != '\0';
	const char *p;

	for (p = arg; *p; p++) {
		n++;
		if (*p == '\'')
			quotes++;
		if (!is_plain((unsigned char)*p))
			plain = 0;
	}
	return plain ? n : n + 2 + quotes * 3;
}

static char *quote_into(char *dst, const char *arg)
{
	const char *p;

	if (quoted_len(arg) == strlen(arg)) {
		memcpy(dst, arg, strlen(arg));
		return dst + strlen(arg);
	}
	*dst++ = '\'';
	for (p = arg; *p; p++) {
		if (*p == '\'') {
			memcpy(dst, "'\\''", 4);
			dst += 4;
		} else {
			*dst++ = *p;
		}
	}
	*dst++ = '\'';
	return dst;
}

int lm_shell_quote(const char *arg, char **out)
{
	return lm_shell_quote_argv(&arg, 1, out);
}

int lm_shell_quote_argv(const char *const *argv, size_t argc, char **out)
{
	size_t i, total = 1;
	char *buf, *p;

	*out = NULL;
	if (argv == NULL && argc > 0)
		return lm_error_set(LM_EINVALID, "lm_shell_quote_argv: no arguments given");
	for (i = 0; i < argc; i++) {
		if (argv[i] == NULL)
			return lm_error_set(LM_EINVALID, "lm_shell_quote_argv: argument %zu is NULL", i);
		total += quoted_len(argv[i]) + 1;
	}
	if ((buf = malloc(total)) == NULL)
		return lm_error_nomem();
	p = buf;
	for (i = 0; i < argc; i++) {
		if (i > 0)
			*p++ = ' ';
		p = quote_into(p, argv[i]);
	}
	*p = '\0';
	*out = buf;
	return 0;
}
