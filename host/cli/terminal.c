/* run's terminal, as `tart exec` treats it: which of stdin and a pseudo-terminal the guest gets
 * (-i, -t), the local terminal in raw mode while a pseudo-terminal is used -- restored on every
 * way out, a signal handler's included (interrupt.c) -- and the window's size, watched through
 * SIGWINCH. The saved terminal and the SIGWINCH flag are process-wide: signal handlers read them. */
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "cli.h"

static struct termios saved;
static volatile sig_atomic_t raw_on;
static volatile sig_atomic_t resized;

void lm_cli_run_terminal(int interactive, int tty, int stdin_tty, int stdout_tty, lm_cli_run_io *io)
{
	/* A pipe or a file is input meant for the workload; a terminal only when asked (tart exec
	 * attaches stdin with -i alone), so that a command run from a shell never waits on the
	 * keyboard. -t, or -i at a terminal, gives the guest a terminal; raw mode only when the local
	 * side is one (keys, ^C included, then go to the guest's terminal). */
	io->forward = !stdin_tty || interactive || tty;
	io->pty = tty || (interactive && stdin_tty && stdout_tty);
	io->raw = io->pty && stdin_tty;
}

void lm_cli_terminal_restore(void)
{
	/* Async-signal-safe: called from signal handlers too. */
	if (raw_on) {
		(void)tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved);
		raw_on = 0;
	}
}

static void on_winch(int sig)
{
	(void)sig;
	resized = 1;
}

int lm_cli_terminal_raw(void)
{
	struct termios raw;
	struct sigaction sa;

	if (tcgetattr(STDIN_FILENO, &saved) != 0)
		return -1;
	raw = saved;
	cfmakeraw(&raw);
	if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) != 0)
		return -1;
	raw_on = 1;
	/* No SA_RESTART: the library's wait wakes at once and sends the new size. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_winch;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGWINCH, &sa, NULL);
	return 0;
}

void lm_cli_terminal_size(unsigned int *cols, unsigned int *rows)
{
	static const int fds[] = {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO};
	struct winsize ws;
	size_t i;

	*cols = *rows = 0;
	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (ioctl(fds[i], TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0) {
			*cols = ws.ws_col;
			*rows = ws.ws_row;
			return;
		}
}

int lm_cli_window_changed(void *data, unsigned int *cols, unsigned int *rows)
{
	(void)data;
	if (!resized)
		return 0;
	resized = 0;
	lm_cli_terminal_size(cols, rows);
	return *cols > 0;
}
