/* The one way text reaches a stream: through the sanitiser (lm_text_printable), so that echoed
 * input can neither drive a terminal nor hide what it says. Below every other file that prints
 * (output, progress, colour, the interruption's line), none of which it needs.
 *
 * It also owns the rule for a stdout that cannot be written (a full disk, a closed stdout, a pipe
 * whose reader has gone while SIGPIPE is ignored): the first failed write is recorded, nothing
 * more is written there, and the command ends at once with exit 1 and one line on stderr saying
 * why. The tool's own lines end it from the writer (lm_cli_puts and the rest); the library's
 * callbacks (a run's output, an agent's logs, step events) only record it with lm_cli_output_write,
 * for the library must be left at a safe point: the command ends as soon as the library returns
 * (and `run` first stops its workload). main.c flushes and closes stdout last, so that output
 * still buffered when the command returns is checked too. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* The first failed write of the tool's output: its errno (0: none) and stream (1 stdout, 2 stderr:
 * run's guest stderr). Process-wide, as the process's stdout is. */
static int failed_errno, failed_stream;

static void note_failed(int stream, int err)
{
	if (failed_errno != 0)
		return;
	failed_errno = err != 0 ? err : EIO;
	failed_stream = stream;
}

int lm_cli_output_failed(int *stream)
{
	if (stream != NULL)
		*stream = failed_stream;
	return failed_errno;
}

/* The line on stderr (what happened to the command: `done`), then exit 1. */
_Noreturn static void end_with(const char *done)
{
	const char *where = failed_stream == 2 ? "stderr" : "stdout";
	const char *why = failed_errno == EBADF && failed_stream != 2 && fcntl(STDOUT_FILENO, F_GETFL) < 0 ?
	    " (stdout is closed)" : "";

	lm_cli_terminal_restore(); /* run's raw mode, if it was on */
	/* Whatever is still buffered for stdout is lost with it; stderr may fail too: then just exit. */
	fprintf(stderr, "lume-metal: cannot write the output to %s: %s%s; %s: give it a %s that takes the output "
	    "(a file on a disk with room, a pipe whose reader stays, or /dev/null)\n", where, strerror(failed_errno),
	    why, done, where);
	fflush(stderr);
	_exit(LM_EXIT_FAILURE);
}

void lm_cli_output_end(void)
{
	end_with("the command ended there and the rest of its output is lost");
}

void lm_cli_output_stdout_open(void)
{
	if (fcntl(STDOUT_FILENO, F_GETFL) >= 0 || errno != EBADF)
		return;
	note_failed(1, EBADF);
	end_with("nothing was done");
}

/* After a write of text to out: a failed write of stdout ends the command (err: the write's
 * errno, 0 when it did not fail itself; the stream's error flag counts as well). */
static void written(FILE *out, int err)
{
	if (out != stdout)
		return;
	if (err == 0 && ferror(stdout))
		err = EIO;
	if (err != 0)
		note_failed(1, err);
	if (failed_errno != 0)
		lm_cli_output_end();
}

/* 0, or the errno of the write that failed (a write of nothing counts as EIO). */
static int write_all(int fd, const char *bytes, size_t len)
{
	ssize_t n;

	while (len > 0) {
		n = write(fd, bytes, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? errno : EIO;
		bytes += n;
		len -= (size_t)n;
	}
	return 0;
}

int lm_cli_output_write(int stream, const char *bytes, size_t len)
{
	FILE *f = stream == 2 ? stderr : stdout;
	int err;

	if (failed_errno != 0)
		return -1;
	/* What stdio holds for the stream goes first, so that the bytes keep their order. */
	errno = 0;
	if (fflush(f) != 0 || ferror(f)) {
		note_failed(stream, errno);
		return -1;
	}
	if ((err = write_all(stream == 2 ? STDERR_FILENO : STDOUT_FILENO, bytes, len)) != 0) {
		note_failed(stream, err);
		return -1;
	}
	return 0;
}

int lm_cli_output_close(int exit_code)
{
	int earlier = failed_errno;

	errno = 0;
	if (fflush(stdout) != 0 || ferror(stdout))
		note_failed(1, errno);
	errno = 0;
	if (fclose(stdout) != 0)
		note_failed(1, errno);
	if (failed_errno == 0)
		return exit_code;
	/* A command that failed on it has said so (run: the workload stopped, its own message). */
	if (earlier != 0 && exit_code != LM_EXIT_OK)
		return exit_code;
	lm_cli_output_end();
}

void lm_cli_flush(void)
{
	errno = 0;
	written(stdout, fflush(stdout) != 0 ? errno : 0);
}

void lm_cli_put_raw(FILE *out, const char *text)
{
	errno = 0;
	written(out, fputs(text, out) == EOF ? errno : 0);
}

void lm_cli_puts(FILE *out, const char *text)
{
	char *clean;
	int err = 0;

	if (out == stdout && failed_errno != 0)
		lm_cli_output_end();
	if (text == NULL)
		text = "";
	errno = 0;
	if ((clean = lm_text_printable(text)) != NULL) {
		if (fputs(clean, out) == EOF)
			err = errno;
		lm_free(clean);
		written(out, err);
		return;
	}
	/* Out of memory (the message may say so): the text all the same, never raw, allocating
	 * nothing; every byte outside printable ASCII, lines and tabs shown as \xNN. */
	for (; *text != '\0' && err == 0; text++) {
		unsigned char c = (unsigned char)*text;

		errno = 0;
		if ((c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t' ? fputc(c, out) == EOF :
		    fprintf(out, "\\x%02x", c) < 0)
			err = errno;
	}
	written(out, err);
}

/* The line formatted: on the stack when it fits, else allocated (*heap set), else cut visibly. */
static char *format_line(char *line, size_t size, int *heap, const char *fmt, va_list ap) LM_CLI_PRINTF(4, 0);
static char *format_line(char *line, size_t size, int *heap, const char *fmt, va_list ap)
{
	char *text = line;
	va_list again;
	int n;

	*heap = 0;
	va_copy(again, ap);
	n = vsnprintf(line, size, fmt, ap);
	if (n >= 0 && (size_t)n >= size) {
		if ((text = malloc((size_t)n + 1)) != NULL) {
			vsnprintf(text, (size_t)n + 1, fmt, again);
			*heap = 1;
		} else {
			text = line; /* what fits, marked as cut */
			memcpy(line + size - 5, "...\n", 5);
		}
	}
	va_end(again);
	return n < 0 ? NULL : text;
}

void lm_cli_printf(FILE *out, const char *fmt, ...)
{
	char line[1024], *text;
	va_list ap;
	int heap;

	/* Most lines fit on the stack: an error line is printed even when memory has run out. */
	va_start(ap, fmt);
	text = format_line(line, sizeof(line), &heap, fmt, ap);
	va_end(ap);
	if (text == NULL)
		return;
	lm_cli_puts(out, text);
	if (heap)
		free(text);
}

int lm_cli_output_printf(int stream, const char *fmt, ...)
{
	char line[1024], *text, *clean;
	va_list ap;
	int heap, rc;

	va_start(ap, fmt);
	text = format_line(line, sizeof(line), &heap, fmt, ap);
	va_end(ap);
	if (text == NULL)
		return 0;
	/* Out of memory: printable ASCII only, the rest left out (a header's path, never raw). */
	if ((clean = lm_text_printable(text)) == NULL) {
		for (clean = text; *clean != '\0'; clean++)
			if (!((unsigned char)*clean >= 0x20 && (unsigned char)*clean < 0x7f) && *clean != '\n')
				*clean = '?';
		rc = lm_cli_output_write(stream, text, strlen(text));
	} else {
		rc = lm_cli_output_write(stream, clean, strlen(clean));
		lm_free(clean);
	}
	if (heap)
		free(text);
	return rc;
}
