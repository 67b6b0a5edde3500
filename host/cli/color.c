/* Colour and the terminal's width, the way terminals expect: `--color auto` (the default)
 * colours only a terminal, never a pipe or a file, and not when NO_COLOR holds any non-empty
 * value (https://no-color.org) or TERM is dumb; CLICOLOR_FORCE (https://bixense.com/clicolors/:
 * set and not "0") or FORCE_COLOR (https://force-color.org: set and not empty; "0" as Node's
 * tools read it, not forcing) colour a pipe, a file and a dumb terminal too -- a CI log that shows
 * colours -- but NO_COLOR wins over them; `--color always` and `never` decide alone (an option
 * given on the command line wins over the environment). Only ok / warn / fail words are coloured:
 * the colour adds nothing the words do not say. */
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli.h"

int lm_cli_color_forced(const char *clicolor_force, const char *force_color)
{
	return (clicolor_force != NULL && clicolor_force[0] != '\0' && strcmp(clicolor_force, "0") != 0) ||
	    (force_color != NULL && force_color[0] != '\0' && strcmp(force_color, "0") != 0);
}

int lm_cli_color_wanted(int mode, int tty, const char *no_color, const char *term, int forced)
{
	if (mode == LM_CLI_COLOR_ALWAYS)
		return 1;
	if (mode == LM_CLI_COLOR_NEVER)
		return 0;
	if (no_color != NULL && no_color[0] != '\0')
		return 0;
	if (forced)
		return 1;
	if (!tty)
		return 0;
	return term == NULL || strcmp(term, "dumb") != 0;
}

const char *lm_cli_color(const lm_cli *cli, int kind)
{
	if (cli == NULL || !cli->color_on)
		return "";
	switch (kind) {
	case LM_CLI_OK: return "\033[32m";   /* green */
	case LM_CLI_WARN: return "\033[33m"; /* yellow */
	case LM_CLI_FAIL: return "\033[31m"; /* red */
	default: return "\033[0m";
	}
}

int lm_cli_term_dumb(void)
{
	const char *term = getenv("TERM");

	return term != NULL && strcmp(term, "dumb") == 0;
}

/* COLUMNS when it holds a width (the user's word, and what shells export), else the terminal's,
 * else 80; at least 40, so that a narrow window still shows words, not letters. */
int lm_cli_term_width(void)
{
	const char *cols = getenv("COLUMNS");
	struct winsize ws;
	char *end;
	long w = 0;

	if (cols != NULL && cols[0] != '\0') {
		w = strtol(cols, &end, 10);
		if (*end != '\0' || w <= 0 || w > 1000)
			w = 0;
	}
	if (w == 0 && isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		w = ws.ws_col;
	if (w == 0)
		w = 80;
	return w < 40 ? 40 : (int)w;
}

/* A word in its colour, padded to `width` columns: the escape sequences written as they are (the
 * sanitiser would show them), the word itself through it. */
void lm_cli_word(FILE *out, const lm_cli *cli, int kind, const char *word, int width)
{
	int n = (int)strlen(word);

	lm_cli_put_raw(out, lm_cli_color(cli, kind));
	lm_cli_puts(out, word);
	lm_cli_put_raw(out, cli != NULL && cli->color_on ? lm_cli_color(cli, LM_CLI_PLAIN) : "");
	for (; n < width; n++)
		lm_cli_put_raw(out, " ");
}
