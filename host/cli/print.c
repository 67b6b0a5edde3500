/* The one way text reaches a stream: through the sanitiser (lm_text_printable), so that echoed
 * input can neither drive a terminal nor hide what it says. Below every other file that prints
 * (output, progress, colour, the interruption's line), none of which it needs. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void lm_cli_puts(FILE *out, const char *text)
{
	char *clean;

	if (text == NULL)
		text = "";
	if ((clean = lm_text_printable(text)) != NULL) {
		fputs(clean, out);
		lm_free(clean);
		return;
	}
	/* Out of memory (the message may say so): the text all the same, never raw, allocating
	 * nothing; every byte outside printable ASCII, lines and tabs shown as \xNN. */
	for (; *text != '\0'; text++) {
		unsigned char c = (unsigned char)*text;

		if ((c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t')
			fputc(c, out);
		else
			fprintf(out, "\\x%02x", c);
	}
}

void lm_cli_printf(FILE *out, const char *fmt, ...)
{
	char line[1024], *text = line;
	va_list ap;
	int n;

	/* Most lines fit on the stack: an error line is printed even when memory has run out. */
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line)) {
		if ((text = malloc((size_t)n + 1)) != NULL) {
			va_start(ap, fmt);
			vsnprintf(text, (size_t)n + 1, fmt, ap);
			va_end(ap);
		} else {
			text = line; /* what fits, marked as cut */
			memcpy(line + sizeof(line) - 5, "...\n", 5);
		}
	}
	lm_cli_puts(out, text);
	if (text != line)
		free(text);
}
