/* Internal: one guest command run as `tart exec` runs one (run): the local input forwarded and
 * closed at its end, a pseudo-terminal with the local window's size on request, the output
 * streamed while the input is fed, the exit status as a shell reports it, and a stop when the
 * embedder is stopped.
 *
 * Threat: the workload may never read its input, or write without end: the loop never blocks on
 * one direction while the other waits (the channel is non-blocking, input is read only while the
 * last piece has been sent). Rule: a workload runs as long as it runs (no command timeout; setting
 * the channel up and closing it keep theirs); a stop is asked of the caller's `stop`, which ends
 * the workload by other means than this channel (its process group, ssh_session's caller knows
 * how). Errors: the session's transport errors; LM_ENOMEM. */
#ifndef LM_SSH_SESSION_H
#define LM_SSH_SESSION_H

#include "lume-metal/sys/ssh.h"

typedef struct {
	int input_fd;            /* read until its end, then EOF is sent; -1: EOF at once */
	int tty;                 /* a pseudo-terminal in the guest (stdout and stderr are then one) */
	unsigned int cols, rows; /* its size (0: 80 x 24) */
	const char *term;        /* its TERM (NULL or "": vt100) */
	lm_ssh_output_fn out;
	void *out_data;
	/* Asked each time the loop wakes (at least four times a second, and after every signal), all
	 * optional: a signal to stop the workload with (SIGINT, SIGTERM, SIGHUP; 0: none); the local
	 * window's new size (1) when it changed. The context's should_cancel stops it with SIGTERM. */
	int (*pending_signal)(void *data);
	int (*window)(void *data, unsigned int *cols, unsigned int *rows);
	/* The stop: called once, with the session blocking and no longer cancelable (it stays so
	 * after, for the caller's clean-up); its error is the run's. NULL: the channel is closed.
	 * Also asked (SIGTERM) when the session fails by itself with the connection up (its local input
	 * unreadable, a window change refused), before the channel closes: closing it first closes the
	 * workload's pipes (OpenSSH's sshd closes a freed channel's descriptors), so a workload that
	 * then writes dies of SIGPIPE and its children go to launchd, where no stop finds them by
	 * ancestry. The session's error is returned then, not the stop's. */
	int (*stop)(void *stop_data, lm_ssh *ssh, int sig);
	void *data;              /* for pending_signal and window */
	void *stop_data;
} lm_ssh_session_io;

typedef struct {
	int exit_status; /* the status, 128 + N after signal N (as a shell reports it), 255 unknown */
	int stopped_by;  /* the signal the stop was asked with; 0: the workload ended by itself */
	int failure_stop; /* the session failed by itself and the stop was asked (SIGTERM): 1 */
} lm_ssh_session_end;

int lm_ssh_exec_session(lm_ssh *ssh, const char *command, const lm_ssh_session_io *io, lm_ssh_session_end *end);

/* A signal's name as SSH's exit-signal gives it ("INT", "KILL", RFC 4254 6.10) as a shell's
 * status: 128 + its number here; 255 for a name this system does not know. */
int lm_ssh_signal_status(const char *name);

#endif
