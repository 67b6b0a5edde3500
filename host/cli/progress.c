/* Progress of steps and waits (a VM booting, SSH, another process's lock of the VM), from the
 * library's step events (curl's tool_cb_prg.c: the tool draws, the library reports). On a
 * terminal a live area on stderr is redrawn in place: one row per VM at work, its step running or
 * what it waits for, so that every VM of a fleet that waits is shown waiting (as Ansible shows
 * each host's task), not only the last one heard; a row goes when its step ends. Elsewhere (CI
 * logs) a plain line when a wait starts (a fleet's: once it has lasted 10 s, unless --verbose) and
 * every 10 s while it lasts. --quiet and the JSON formats show none. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli.h"

/* Off a terminal: seconds between two lines about the same wait. */
#define LM_CLI_WAIT_LINE_EVERY 10.0

/* The terminal's width less one column (a full row would wrap on some terminals), and its height. */
static size_t term_columns(size_t cap, size_t *rows)
{
	struct winsize ws;
	size_t width = cap;

	*rows = 0;
	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0) {
		if (ws.ws_col > 1 && ws.ws_col <= width)
			width = (size_t)ws.ws_col - 1;
		*rows = ws.ws_row;
	}
	return width;
}

/* A row cut at the width, at a character's start: one screen line each, so that moving up a line
 * per row and erasing redraws the area whole. */
static void cut(char *line, size_t width)
{
	size_t n = strlen(line);

	if (n <= width)
		return;
	n = width;
	while (n > 0 && ((unsigned char)line[n] & 0xC0) == 0x80)
		n--;
	line[n] = '\0';
}

void lm_cli_progress_clear(lm_cli *cli)
{
	int k;

	if (cli->live.drawn <= 0)
		return;
	fputs("\r\033[K", stderr);
	for (k = 1; k < cli->live.drawn; k++)
		fputs("\033[A\033[K", stderr);
	cli->live.drawn = 0;
}

/* The live area again: every row in use, in the order the VMs first came. */
static void redraw(lm_cli *cli)
{
	size_t rows, width = term_columns(sizeof(cli->live.row[0].text) - 1, &rows), i, shown = 0;
	char line[sizeof(cli->live.row[0].text)];

	lm_cli_progress_clear(cli);
	for (i = 0; i < LM_CLI_WAIT_SLOTS; i++) {
		if (!cli->live.row[i].used)
			continue;
		/* Never more rows than the screen has: the area would scroll and could not be erased. */
		if (rows > 1 && shown + 1 >= rows)
			break;
		snprintf(line, sizeof(line), "%s", cli->live.row[i].text);
		cut(line, width);
		fputs(shown > 0 ? "\n\033[K" : "\r\033[K", stderr);
		lm_cli_puts(stderr, line);
		shown++;
	}
	fflush(stderr);
	cli->live.drawn = (int)shown;
}

/* The row of `key` (a VM's name; "" for the host alone): found, or a free one taken (the oldest
 * when every row is in use). */
static size_t row_of(lm_cli_progress *p, const char *key)
{
	size_t i, free_row = LM_CLI_WAIT_SLOTS;

	for (i = 0; i < LM_CLI_WAIT_SLOTS; i++) {
		if (p->row[i].used && strcmp(p->row[i].key, key) == 0)
			return i;
		if (free_row == LM_CLI_WAIT_SLOTS && !p->row[i].used)
			free_row = i;
	}
	i = free_row < LM_CLI_WAIT_SLOTS ? free_row : 0;
	snprintf(p->row[i].key, sizeof(p->row[i].key), "%s", key);
	p->row[i].used = 1;
	return i;
}

void lm_cli_progress_row(lm_cli *cli, const char *key, const char *fmt, ...)
{
	size_t i = row_of(&cli->live, key);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cli->live.row[i].text, sizeof(cli->live.row[i].text), fmt, ap);
	va_end(ap);
	redraw(cli);
}

void lm_cli_progress_row_done(lm_cli *cli, const char *key)
{
	size_t i;

	for (i = 0; i < LM_CLI_WAIT_SLOTS; i++)
		if (cli->live.row[i].used && strcmp(cli->live.row[i].key, key) == 0) {
			cli->live.row[i].used = 0;
			redraw(cli);
			return;
		}
}

/* Off a terminal: the slot of the wait for this VM and step, found, or a free (or the oldest) one
 * taken. */
static int slot_of(lm_cli_progress *p, const lm_step_event *ev, int *is_new)
{
	char key[sizeof(p->slot[0].key)];
	int i, free_slot = -1;

	snprintf(key, sizeof(key), "%.127s/%.31s", ev->vm, ev->name);
	for (i = 0; i < LM_CLI_WAIT_SLOTS; i++) {
		if (strcmp(p->slot[i].key, key) == 0) {
			/* A new wait of the same step starts again from a smaller elapsed time. */
			*is_new = ev->elapsed < p->slot[i].seen;
			p->slot[i].seen = ev->elapsed;
			return i;
		}
		if (free_slot < 0 && p->slot[i].key[0] == '\0')
			free_slot = i;
	}
	i = free_slot >= 0 ? free_slot : 0;
	snprintf(p->slot[i].key, sizeof(p->slot[i].key), "%s", key);
	p->slot[i].seen = ev->elapsed;
	*is_new = 1;
	return i;
}

void lm_cli_progress_wait(lm_cli *cli, const lm_step_event *ev)
{
	int i, is_new = 0;

	if (cli->quiet || cli->json)
		return;
	if (cli->live.tty) {
		lm_cli_progress_row(cli, ev->vm, "%s%s%s: waiting %.0f s: %s", ev->vm, ev->vm[0] ? ": " : "", ev->name,
		    ev->elapsed, ev->detail);
		return;
	}
	i = slot_of(&cli->live, ev, &is_new);
	/* A fleet's log says a wait once it has lasted (every VM of it waits for its boot; eight lines
	 * saying so at once are noise beside each VM's one line); one VM's, --verbose, and a wait for
	 * another process's lock of the VM (never routine: it says why the VM stalls) as it starts. */
	if (is_new)
		cli->live.slot[i].next = cli->fleet && !cli->verbose && strcmp(ev->name, "wait-lock") != 0 ?
		    LM_CLI_WAIT_LINE_EVERY : 0;
	if (ev->elapsed < cli->live.slot[i].next)
		return;
	cli->live.slot[i].next = ev->elapsed + LM_CLI_WAIT_LINE_EVERY;
	lm_cli_printf(stderr, "%s%s%s: waiting (%.0f s so far): %s\n", ev->vm, ev->vm[0] ? ": " : "", ev->name,
	    ev->elapsed, ev->detail);
}
