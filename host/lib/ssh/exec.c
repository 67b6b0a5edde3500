/* Remote commands. The channel is driven non-blocking so that stdout and stderr are read as they
 * arrive (a command that fills one stream while we wait on the other cannot stall), and so that
 * the command timeout is one deadline for the whole command. */
#include "ssh_internal.h"

#include "buf.h"
#include "ssh_deadline.h"
#include "text.h"
#include "trace.h"

#include <stdlib.h>
#include <string.h>

#define READ_CHUNK 32768

/* The deadline passed: the message names the command (its start: ours run to kilobytes) and the
 * time it had, so that a hung guest is told from a slow network. */
static int no_answer(lm_ssh *ssh, const char *command, double timeout)
{
	char shown[96];

	lm_text_quote(shown, sizeof(shown), command, strlen(command), 72);
	return lm_error_set(LM_ETIMEOUT, "VM '%s' (%s:%d): guest command `%s` gave no answer in %.0f s (its timeout); "
	    "the guest may be hung", ssh->vm, ssh->address, ssh->port, shown, timeout);
}

/* timeout: seconds the whole command may take (0: no limit). */
static int run(lm_ssh *ssh, const char *command, double timeout, lm_ssh_output_fn out, void *data, int *exit_status)
{
	LIBSSH2_CHANNEL *ch = NULL;
	char *buf = NULL, *signal_name = NULL;
	double deadline = timeout > 0 ? lm_clock_monotonic() + timeout : 0;
	int rc = 0, werr, progressed, stream;
	unsigned long queued;
	ssize_t n;

	if ((buf = malloc(READ_CHUNK)) == NULL)
		return lm_error_nomem();
	libssh2_session_set_blocking(ssh->session, 0);
	for (;;) {
		ch = libssh2_channel_open_session(ssh->session);
		if (ch != NULL)
			break;
		if ((rc = libssh2_session_last_errno(ssh->session)) != LIBSSH2_ERROR_EAGAIN) {
			rc = lm_ssh_fail(ssh, rc, "opening a session channel");
			goto out;
		}
		if ((rc = lm_ssh_wait(ssh, deadline, "opening a channel")) < 0)
			goto out;
	}
	RETRY(ssh, deadline, "starting the command", libssh2_channel_exec(ch, command), rc, werr);
	if (werr < 0) {
		rc = werr;
		goto out;
	}
	if (rc != 0) {
		rc = lm_ssh_fail(ssh, rc, "starting a command");
		goto out;
	}
	for (;;) {
		progressed = 0;
		for (stream = 1; stream <= 2; stream++) {
			n = libssh2_channel_read_ex(ch, stream == 1 ? 0 : SSH_EXTENDED_DATA_STDERR, buf, READ_CHUNK);
			if (n > 0) {
				progressed = 1;
				if (out != NULL)
					out(data, stream, buf, (size_t)n);
			} else if (n < 0 && n != LIBSSH2_ERROR_EAGAIN) {
				rc = lm_ssh_fail(ssh, (int)n, "reading the command's output");
				goto out;
			}
		}
		if (progressed)
			continue;
		if (libssh2_channel_eof(ch))
			break;
		/* Reading stderr can take stdout's next packets (and the EOF after them) off the socket
		 * into libssh2's queue: waiting on the socket then would wait for data that has already
		 * arrived, until the command timeout. Read again while anything is queued. */
		queued = 0;
		(void)libssh2_channel_window_read_ex(ch, &queued, NULL);
		if (queued > 0)
			continue;
		if ((rc = lm_ssh_wait(ssh, deadline, "the remote command")) < 0)
			goto out;
	}
	RETRY(ssh, deadline, "closing the channel", libssh2_channel_close(ch), rc, werr);
	if (werr == 0 && rc == 0)
		RETRY(ssh, deadline, "closing the channel", libssh2_channel_wait_closed(ch), rc, werr);
	if (werr < 0) {
		rc = werr;
		goto out;
	}
	if (rc != 0) {
		rc = lm_ssh_fail(ssh, rc, "closing the channel");
		goto out;
	}
	*exit_status = libssh2_channel_get_exit_status(ch);
	if (libssh2_channel_get_exit_signal(ch, &signal_name, NULL, NULL, NULL, NULL, NULL) == 0 && signal_name != NULL) {
		lm_log(ssh->ctx, LM_LOG_DEBUG, "ssh: VM '%s': the command was killed by signal %s", ssh->vm, signal_name);
		*exit_status = 255;
		libssh2_free(ssh->session, signal_name);
	}
	rc = 0;
out:
	if (rc == LM_ETIMEOUT && deadline > 0 && lm_clock_monotonic() >= deadline)
		rc = no_answer(ssh, command, timeout);
	/* Back to blocking; freeing the channel waits briefly at most (never clobbering the error). */
	libssh2_session_set_blocking(ssh->session, 1);
	if (ch != NULL) {
		libssh2_session_set_timeout(ssh->session, ssh->broken ? 200 : 2000);
		libssh2_channel_free(ch);
	}
	lm_ssh_set_blocking_timeout(ssh, ssh->command_timeout);
	free(buf);
	return rc;
}

static int exec_within(lm_ssh *ssh, const char *command, double timeout, lm_ssh_output_fn out, void *data,
    int *exit_status)
{
	double start = lm_clock_monotonic();
	int rc, status = -1;

	if ((rc = lm_ssh_check_usable(ssh)) < 0)
		return rc;
	if (command == NULL || exit_status == NULL)
		return lm_error_set(LM_EINVALID, "lm_ssh_exec: a command and an exit_status are required");
	*exit_status = -1;
	lm_log(ssh->ctx, LM_LOG_DEBUG, "ssh: VM '%s': %s", ssh->vm, command);
	if ((rc = ssh->local ? lm_ssh_local_exec(ssh, command, timeout, out, data, &status) :
	    run(ssh, command, timeout, out, data, &status)) < 0)
		return rc;
	lm_trace(ssh->ctx, ssh->vm, "ssh-command", start);
	*exit_status = status;
	return 0;
}

int lm_ssh_exec(lm_ssh *ssh, const char *command, lm_ssh_output_fn out, void *data, int *exit_status)
{
	return exec_within(ssh, command, ssh != NULL ? ssh->command_timeout : 0, out, data, exit_status);
}

/* Each stream the caller wants into a buffer of at most max bytes (one it does not want is read
 * and dropped). Past max the rest is still read, so that the command is never blocked on a full
 * channel and runs to its end as it would otherwise; the capture is then an error, never a cut
 * result. */
typedef struct {
	lm_buf buf[2];
	int want[2];
} capture;

static void capture_out(void *data, int stream, const char *bytes, size_t len)
{
	capture *c = data;
	int i = stream == 1 ? 0 : 1;

	if (c->want[i])
		lm_buf_add(&c->buf[i], bytes, len);
}

static int capture_within(lm_ssh *ssh, const char *command, double timeout, size_t max, char **out_stdout,
    char **out_stderr, int *exit_status)
{
	static const char *const names[2] = {"standard output", "standard error"};
	char **dst[2] = {out_stdout, out_stderr};
	capture c;
	int rc, i;

	for (i = 0; i < 2; i++) {
		lm_buf_init(&c.buf[i], max);
		if ((c.want[i] = dst[i] != NULL))
			*dst[i] = NULL;
	}
	rc = exec_within(ssh, command, timeout, capture_out, &c, exit_status);
	for (i = 0; i < 2 && rc == 0; i++) {
		if (lm_buf_error(&c.buf[i]) == LM_ETOOLARGE)
			rc = lm_error_set(LM_ETOOLARGE, "VM '%s': the command wrote more than %zu bytes (the limit) to its %s; "
			    "nothing of it was kept", ssh->vm, max, names[i]);
		else if (lm_buf_error(&c.buf[i]) != 0)
			rc = lm_error_nomem();
	}
	for (i = 0; i < 2; i++) {
		if (rc == 0 && dst[i] != NULL)
			rc = lm_buf_take(&c.buf[i], dst[i], NULL);
		lm_buf_dispose(&c.buf[i]);
	}
	if (rc < 0)
		for (i = 0; i < 2; i++)
			if (dst[i] != NULL) {
				free(*dst[i]);
				*dst[i] = NULL;
			}
	return rc;
}

int lm_ssh_exec_capture(lm_ssh *ssh, const char *command, size_t max, char **out_stdout, char **out_stderr,
    int *exit_status)
{
	return capture_within(ssh, command, ssh != NULL ? ssh->command_timeout : 0, max, out_stdout, out_stderr,
	    exit_status);
}

int lm_ssh_ask(lm_ssh *ssh, const char *command, size_t max, char **out_stdout, char **out_stderr,
    int *exit_status)
{
	double timeout = LM_SSH_ASK_SECONDS;

	if (ssh != NULL && ssh->command_timeout > 0 && ssh->command_timeout < timeout)
		timeout = ssh->command_timeout;
	return capture_within(ssh, command, timeout, max, out_stdout, out_stderr, exit_status);
}

int lm_ssh_ask_argv(lm_ssh *ssh, const char *const *argv, size_t argc, size_t max, char **out_stdout,
    char **out_stderr, int *exit_status)
{
	char *cmd = NULL;
	int rc;

	*out_stdout = *out_stderr = NULL;
	*exit_status = 0;
	if ((rc = lm_shell_quote_argv(argv, argc, &cmd)) < 0)
		return rc;
	rc = lm_ssh_ask(ssh, cmd, max, out_stdout, out_stderr, exit_status);
	lm_free(cmd);
	return rc;
}
