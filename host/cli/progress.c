/* Progress of waits (a VM booting, SSH, another process's lock of the VM), from the library's
 * LM_STEP_WAITING events (curl's tool_cb_prg.c: the tool draws, the library reports). On a
 * terminal one live line is redrawn in place; elsewhere (CI logs) a plain line when a wait starts
 * and every 10 s while it lasts. --quiet and the JSON formats show none. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli.h"

/* Off a terminal: seconds between two lines about the same wait. */
#define LM_CLI_WAIT_LINE_EVERY 10.0

void lm_cli_progress_clear(lm_cli *cli)
{
	if (cli->live.drawn) {
		fputs("\r\033[K", stderr);
		cli->live.drawn = 0;
	}
}

/* The live line: one screen line, so that \r and erase-line redraw it whole; a longer one is
 * cut at the terminal's width (at a character's start). */
void lm_cli_progress_live(lm_cli *cli, const char *fmt, ...)
{
	char line[512];
	struct winsize ws;
	size_t n, width = sizeof(line) - 1;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 && ws.ws_col <= width)
		width = (size_t)ws.ws_col - 1;
	if ((n = strlen(line)) > width) {
		n = width;
		while (n > 0 && ((unsigned char)line[n] & 0xC0) == 0x80)
			n--;
		line[n] = '\0';
	}
	fputs("\r\033[K", stderr);
	lm_cli_puts(stderr, line);
	fflush(stderr);
	cli->live.drawn = 1;
}

/* The slot of the wait for this VM and step: found, or a free (or the oldest) one taken. */
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
		lm_cli_progress_live(cli, "%s%s%s: waiting %.0f s: %s", ev->vm, ev->vm[0] ? ": " : "", ev->name,
		    ev->elapsed, ev->detail);
		return;
	}
	i = slot_of(&cli->live, ev, &is_new);
	if (!is_new && ev->elapsed < cli->live.slot[i].next)
		return;
	cli->live.slot[i].next = ev->elapsed + LM_CLI_WAIT_LINE_EVERY;
	lm_cli_printf(stderr, "%s%s%s: waiting (%.0f s so far): %s\n", ev->vm, ev->vm[0] ? ": " : "", ev->name,
	    ev->elapsed, ev->detail);
}
