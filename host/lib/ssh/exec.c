/* Remote commands. The channel is driven non-blocking so that stdout and stderr are read as they
 * arrive (a command that fills one stream while we wait on the other cannot stall), and so that
 * the command timeout is one deadline for the whole command. */
#include "ssh_internal.h"

#include "buf.h"
#include "str.h"
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

/* timeout: seconds the whole command may take (0: no limit); shown: the command as messages name it. */
static int run(lm_ssh *ssh, const char *command, const char *shown, double timeout, lm_ssh_output_fn out, void *data,
    int *exit_status)
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
		rc = no_answer(ssh, shown, timeout);
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

/* shown: the command as the log and messages name it (command without what capture_within puts
 * before it); NULL: command itself. */
static int exec_within(lm_ssh *ssh, const char *command, const char *shown, double timeout, lm_ssh_output_fn out,
    void *data, int *exit_status)
{
	double start = lm_clock_monotonic();
	int rc, status = -1;

	if ((rc = lm_ssh_check_usable(ssh)) < 0)
		return rc;
	if (command == NULL || exit_status == NULL)
		return lm_error_set(LM_EINVALID, "lm_ssh_exec: a command and an exit_status are required");
	*exit_status = -1;
	if (shown == NULL)
		shown = command;
	lm_log(ssh->ctx, LM_LOG_DEBUG, "ssh: VM '%s': %s", ssh->vm, shown);
	if ((rc = ssh->local ? lm_ssh_local_exec(ssh, command, timeout, out, data, &status) :
	    run(ssh, command, shown, timeout, out, data, &status)) < 0)
		return rc;
	lm_trace(ssh->ctx, ssh->vm, "ssh-command", start);
	*exit_status = status;
	return 0;
}

int lm_ssh_exec(lm_ssh *ssh, const char *command, lm_ssh_output_fn out, void *data, int *exit_status)
{
	return exec_within(ssh, command, NULL, ssh != NULL ? ssh->command_timeout : 0, out, data, exit_status);
}

/* A login shell's startup files run before every command sshd starts with it (zsh reads ~/.zshenv
 * for each `zsh -c`: zsh(1), STARTUP/SHUTDOWN FILES; bash ~/.bashrc when started by sshd:
 * bash(1), INVOCATION), and what they print comes first on the command's streams. A captured
 * command is an answer lume-metal reads, so it prints this line on both streams first, and what
 * came before it is dropped: a greeting in ~/.zshenv is not the guest's OS name (issue 49, 9).
 * The RS control character keeps it apart from anything a person's dotfiles print. */
#define ANSWER_MARK "\036lume-metal\n"
#define ANSWER_MARK_COMMAND "printf '\\036lume-metal\\n'; printf '\\036lume-metal\\n' >&2; "
/* What a login shell may print before the mark; more is an error that says so. */
#define BEFORE_MARK_MAX ((size_t)64 * 1024)

/* Each stream the caller wants into a buffer of at most max bytes (one it does not want is read
 * and dropped), from after the answer mark. Past max the rest is still read, so that the command
 * is never blocked on a full channel and runs to its end as it would otherwise; the capture is
 * then an error, never a cut result. A stream without the mark at its end (the shell never ran the
 * command) is kept whole: it is what the shell said, and errors show it. */
typedef struct {
	lm_buf buf[2];
	lm_buf before[2]; /* a stream up to its mark, while it is looked for */
	int want[2];
	int marked[2];
} capture;

/* The end of the answer mark in before's bytes, or NULL. */
static const char *mark_end(const lm_buf *before)
{
	const size_t mlen = sizeof(ANSWER_MARK) - 1;
	const char *p = lm_buf_ptr(before);
	size_t i, len = lm_buf_len(before);

	for (i = 0; p != NULL && i + mlen <= len; i++)
		if (memcmp(p + i, ANSWER_MARK, mlen) == 0)
			return p + i + mlen;
	return NULL;
}

static void capture_out(void *data, int stream, const char *bytes, size_t len)
{
	capture *c = data;
	int i = stream == 1 ? 0 : 1;
	const char *end = NULL;

	if (!c->marked[i]) {
		lm_buf_add(&c->before[i], bytes, len);
		if ((end = mark_end(&c->before[i])) == NULL)
			return;
		c->marked[i] = 1;
		bytes = end;
		len = lm_buf_len(&c->before[i]) - (size_t)(end - lm_buf_ptr(&c->before[i]));
	}
	if (c->want[i])
		lm_buf_add(&c->buf[i], bytes, len);
	if (bytes == end)
		lm_buf_reset(&c->before[i]);
}

static int capture_within(lm_ssh *ssh, const char *command, double timeout, size_t max, char **out_stdout,
    char **out_stderr, int *exit_status)
{
	static const char *const names[2] = {"standard output", "standard error"};
	char **dst[2] = {out_stdout, out_stderr};
	char *marked = NULL;
	capture c;
	int rc, i;

	for (i = 0; i < 2; i++) {
		lm_buf_init(&c.buf[i], max);
		lm_buf_init(&c.before[i], BEFORE_MARK_MAX + sizeof(ANSWER_MARK));
		c.marked[i] = 0;
		if ((c.want[i] = dst[i] != NULL))
			*dst[i] = NULL;
	}
	if (command == NULL || (marked = lm_format("%s%s", ANSWER_MARK_COMMAND, command)) != NULL)
		rc = exec_within(ssh, marked, command, timeout, capture_out, &c, exit_status);
	else
		rc = lm_error_nomem();
	free(marked);
	for (i = 0; i < 2 && rc == 0; i++) {
		if (lm_buf_error(&c.before[i]) == LM_ETOOLARGE)
			rc = lm_error_set(LM_ETOOLARGE, "VM '%s': the guest's login shell wrote more than %zu bytes to its %s "
			    "before the command's answer (its startup files, such as ~/.zshenv, print that much)", ssh->vm,
			    BEFORE_MARK_MAX, names[i]);
		else if (lm_buf_error(&c.before[i]) != 0)
			rc = lm_error_nomem();
		else if (!c.marked[i] && c.want[i]) /* the shell never ran the command: what it said, whole */
			lm_buf_add(&c.buf[i], lm_buf_ptr(&c.before[i]), lm_buf_len(&c.before[i]));
	}
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
		lm_buf_dispose(&c.before[i]);
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
