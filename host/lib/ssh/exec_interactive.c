/* One guest command run as `tart exec` runs one (ssh_session.h). One non-blocking loop moves every
 * direction at once: the command's output as it arrives, the local input while the channel takes
 * it (read only once the last piece was sent, so a workload that never reads its input stops the
 * input, never the output), the window's size, and the stop. */
#include "ssh_internal.h"
#include "ssh_session.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHUNK 32768
/* After the stop has ended the workload, how long its channel may take to say so. */
#define DRAIN_SECONDS 5.0

int lm_ssh_signal_status(const char *name)
{
	static const struct {
		const char *name;
		int sig;
	} sigs[] = {
		{"ABRT", SIGABRT}, {"ALRM", SIGALRM}, {"FPE", SIGFPE}, {"HUP", SIGHUP}, {"ILL", SIGILL},
		{"INT", SIGINT}, {"KILL", SIGKILL}, {"PIPE", SIGPIPE}, {"QUIT", SIGQUIT}, {"SEGV", SIGSEGV},
		{"TERM", SIGTERM}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"BUS", SIGBUS}, {"TRAP", SIGTRAP},
		{"SYS", SIGSYS}, {"XCPU", SIGXCPU}, {"XFSZ", SIGXFSZ},
	};
	size_t i;

	for (i = 0; name != NULL && i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (strcmp(name, sigs[i].name) == 0)
			return 128 + sigs[i].sig;
	return 255;
}

typedef struct {
	lm_ssh *ssh;
	LIBSSH2_CHANNEL *ch;
	const lm_ssh_session_io *io;
	char *buf;          /* the output's chunk */
	char *in;           /* input read and not yet sent: in[in_off..in_len) */
	size_t in_off, in_len;
	int in_open;        /* the input fd has more to give */
	int eof_sent;
} session;

/* Input: send what is pending; EOF once the input has ended and everything went. */
static int feed(session *s, int fd_ready, int *progressed)
{
	ssize_t n;
	int rc;

	if (s->in_off == s->in_len && s->in_open && fd_ready) {
		n = read(s->io->input_fd, s->in, CHUNK);
		if (n < 0 && errno != EINTR && errno != EAGAIN)
			return lm_error_set(LM_EIO, "VM '%s': reading the input for the guest command: %s", s->ssh->vm,
			    strerror(errno));
		if (n == 0)
			s->in_open = 0;
		s->in_off = 0;
		s->in_len = n > 0 ? (size_t)n : 0;
	}
	while (s->in_off < s->in_len) {
		n = libssh2_channel_write(s->ch, s->in + s->in_off, s->in_len - s->in_off);
		if (n == LIBSSH2_ERROR_EAGAIN)
			return 0;
		if (n < 0)
			return lm_ssh_fail(s->ssh, (int)n, "sending the input to the guest command");
		s->in_off += (size_t)n;
		*progressed = 1;
	}
	if (!s->in_open && !s->eof_sent) {
		if ((rc = libssh2_channel_send_eof(s->ch)) == LIBSSH2_ERROR_EAGAIN)
			return 0;
		if (rc < 0)
			return lm_ssh_fail(s->ssh, rc, "closing the guest command's input");
		s->eof_sent = 1;
	}
	return 0;
}

/* Output: both streams, as they come. */
static int drain(session *s, int *progressed)
{
	ssize_t n;
	int stream;

	for (stream = 1; stream <= 2; stream++) {
		n = libssh2_channel_read_ex(s->ch, stream == 1 ? 0 : SSH_EXTENDED_DATA_STDERR, s->buf, CHUNK);
		if (n > 0) {
			*progressed = 1;
			if (s->io->out != NULL)
				s->io->out(s->io->out_data, stream, s->buf, (size_t)n);
		} else if (n < 0 && n != LIBSSH2_ERROR_EAGAIN) {
			return lm_ssh_fail(s->ssh, (int)n, "reading the command's output");
		}
	}
	return 0;
}

/* The signal to stop with, if the embedder wants the workload stopped: its own, or SIGTERM when
 * only should_cancel says so. */
static int stop_wanted(const session *s)
{
	int sig = s->io->pending_signal != NULL ? s->io->pending_signal(s->io->data) : 0;

	if (sig == 0 && lm_context_check_cancel(s->ssh->ctx, "the guest command") < 0)
		sig = SIGTERM;
	return sig;
}

static int set_up(session *s, const char *command, double deadline)
{
	const lm_ssh_session_io *io = s->io;
	const char *term = io->term != NULL && io->term[0] ? io->term : "vt100";
	int rc, werr;

	while ((s->ch = libssh2_channel_open_session(s->ssh->session)) == NULL) {
		if ((rc = libssh2_session_last_errno(s->ssh->session)) != LIBSSH2_ERROR_EAGAIN)
			return lm_ssh_fail(s->ssh, rc, "opening a session channel");
		if ((rc = lm_ssh_wait(s->ssh, deadline, "opening a channel")) < 0)
			return rc;
	}
	if (io->tty) {
		RETRY(s->ssh, deadline, "asking for a pseudo-terminal", libssh2_channel_request_pty_ex(s->ch, term,
		    (unsigned int)strlen(term), NULL, 0, io->cols > 0 ? (int)io->cols : 80, io->rows > 0 ? (int)io->rows : 24,
		    0, 0), rc, werr);
		if (werr < 0)
			return werr;
		if (rc != 0)
			return lm_ssh_fail(s->ssh, rc, "asking for a pseudo-terminal (pty-req)");
	}
	RETRY(s->ssh, deadline, "starting the command", libssh2_channel_exec(s->ch, command), rc, werr);
	if (werr < 0)
		return werr;
	return rc != 0 ? lm_ssh_fail(s->ssh, rc, "starting a command") : 0;
}

/* The exit status once the channel has ended: the command's, or 128 + N when signal N ended it. */
static int finish(session *s, double deadline, lm_ssh_session_end *end)
{
	char *signal_name = NULL;
	int rc, werr;

	RETRY(s->ssh, deadline, "closing the channel", libssh2_channel_close(s->ch), rc, werr);
	if (werr == 0 && rc == 0)
		RETRY(s->ssh, deadline, "closing the channel", libssh2_channel_wait_closed(s->ch), rc, werr);
	if (werr < 0)
		return werr;
	if (rc != 0)
		return lm_ssh_fail(s->ssh, rc, "closing the channel");
	end->exit_status = libssh2_channel_get_exit_status(s->ch);
	if (libssh2_channel_get_exit_signal(s->ch, &signal_name, NULL, NULL, NULL, NULL, NULL) == 0 &&
	    signal_name != NULL) {
		end->exit_status = lm_ssh_signal_status(signal_name);
		libssh2_free(s->ssh->session, signal_name);
	}
	return 0;
}

static int loop(session *s, lm_ssh_session_end *end)
{
	const lm_ssh_session_io *io = s->io;
	unsigned int cols, rows;
	unsigned long queued;
	double drain_until = 0;
	int rc, progressed, fd_ready = 0, sig;

	for (;;) {
		if (end->stopped_by == 0 && (sig = stop_wanted(s)) != 0) {
			end->stopped_by = sig;
			s->ssh->uncancelable = 1;
			libssh2_session_set_blocking(s->ssh->session, 1);
			rc = io->stop != NULL ? io->stop(io->stop_data, s->ssh, sig) : 0;
			libssh2_session_set_blocking(s->ssh->session, 0);
			if (rc < 0)
				return rc;
			/* The workload is gone: what it wrote is still read, and no more input is sent. */
			s->in_open = 0;
			s->in_off = s->in_len = 0;
			drain_until = lm_clock_monotonic() + DRAIN_SECONDS;
		}
		if (io->tty && io->window != NULL && io->window(io->data, &cols, &rows)) {
			while ((rc = libssh2_channel_request_pty_size_ex(s->ch, (int)cols, (int)rows, 0, 0)) ==
			    LIBSSH2_ERROR_EAGAIN)
				if ((rc = lm_ssh_wait(s->ssh, lm_clock_monotonic() + s->ssh->command_timeout,
				    "changing the terminal's size")) < 0)
					return rc;
			if (rc < 0)
				return lm_ssh_fail(s->ssh, rc, "changing the terminal's size (window-change)");
		}
		progressed = 0;
		if ((rc = drain(s, &progressed)) < 0 || (rc = feed(s, fd_ready, &progressed)) < 0)
			return rc;
		fd_ready = 0;
		if (progressed)
			continue;
		if (libssh2_channel_eof(s->ch))
			return 0;
		/* As in exec.c: data already taken off the socket for this channel is read first. */
		queued = 0;
		(void)libssh2_channel_window_read_ex(s->ch, &queued, NULL);
		if (queued > 0)
			continue;
		/* A channel that does not end after the stop ended the workload: its status is unknown. */
		if (drain_until > 0 && lm_clock_monotonic() >= drain_until)
			return 1;
		if ((rc = lm_ssh_wait_io(s->ssh, 0, "the guest command",
		    s->in_open && s->in_off == s->in_len ? io->input_fd : -1, &fd_ready, 250)) < 0)
			return rc;
	}
}

/* The session failed by itself with the connection up (ssh_session.h): the stop, over another
 * channel while this one is still open; the session's error stays the one returned. */
static void stop_after_failure(session *s, lm_ssh_session_end *end)
{
	char saved[2048];
	int code = lm_error_last()->code;

	snprintf(saved, sizeof(saved), "%s", lm_error_last()->message);
	end->failure_stop = 1;
	libssh2_session_set_blocking(s->ssh->session, 1);
	(void)s->io->stop(s->io->stop_data, s->ssh, SIGTERM);
	lm_error_set(code, "%s", saved);
}

int lm_ssh_exec_session(lm_ssh *ssh, const char *command, const lm_ssh_session_io *io, lm_ssh_session_end *end)
{
	session s;
	double setup_deadline;
	int rc, cancelable;

	if ((rc = lm_ssh_check_usable(ssh)) < 0)
		return rc;
	if (command == NULL || io == NULL || end == NULL)
		return lm_error_set(LM_EINVALID, "lm_ssh_exec_session: a command, its input and output, and an end are "
		    "required");
	end->exit_status = 255;
	end->stopped_by = 0;
	end->failure_stop = 0;
	memset(&s, 0, sizeof(s));
	s.ssh = ssh;
	s.io = io;
	s.in_open = io->input_fd >= 0;
	if ((s.buf = malloc(CHUNK)) == NULL || (s.in = malloc(CHUNK)) == NULL) {
		free(s.buf);
		return lm_error_nomem();
	}
	lm_log(ssh->ctx, LM_LOG_DEBUG, "ssh: VM '%s'%s: %s", ssh->vm, io->tty ? " (pseudo-terminal)" : "", command);
	/* The stop is this loop's to decide (it asks should_cancel itself): a wait that was canceled
	 * would leave the session broken, with no channel left to stop the workload through. */
	cancelable = !ssh->uncancelable;
	ssh->uncancelable = 1;
	setup_deadline = ssh->command_timeout > 0 ? lm_clock_monotonic() + ssh->command_timeout : 0;
	libssh2_session_set_blocking(ssh->session, 0);
	if ((rc = set_up(&s, command, setup_deadline)) == 0 && (rc = loop(&s, end)) == 0)
		rc = finish(&s, ssh->command_timeout > 0 ? lm_clock_monotonic() + ssh->command_timeout : 0, end);
	else if (rc == 1)
		rc = 0;
	if (rc < 0 && end->stopped_by == 0 && s.ch != NULL && io->stop != NULL && lm_ssh_usable(ssh))
		stop_after_failure(&s, end);
	libssh2_session_set_blocking(ssh->session, 1);
	if (s.ch != NULL) {
		libssh2_session_set_timeout(ssh->session, ssh->broken ? 200 : 2000);
		libssh2_channel_free(s.ch);
	}
	lm_ssh_set_blocking_timeout(ssh, ssh->command_timeout);
	if (end->stopped_by == 0 && cancelable)
		ssh->uncancelable = 0;
	free(s.buf);
	free(s.in);
	return rc;
}
