/* A session's failures, which every file of the transport says the same way: the message made
 * from libssh2's own error, and the session marked broken so that later calls fail fast. Its own
 * file so that session.c, auth.c and known_hosts.c all use it without needing each other. */
#include "ssh_internal.h"

#include <sys/socket.h>

static int is_transport_error(int rc)
{
	return rc == LIBSSH2_ERROR_SOCKET_SEND || rc == LIBSSH2_ERROR_SOCKET_RECV ||
	    rc == LIBSSH2_ERROR_SOCKET_DISCONNECT || rc == LIBSSH2_ERROR_SOCKET_TIMEOUT ||
	    rc == LIBSSH2_ERROR_TIMEOUT || rc == LIBSSH2_ERROR_SOCKET_NONE || rc == LIBSSH2_ERROR_BANNER_RECV ||
	    rc == LIBSSH2_ERROR_BANNER_SEND || rc == LIBSSH2_ERROR_KEX_FAILURE || rc == LIBSSH2_ERROR_DECRYPT ||
	    rc == LIBSSH2_ERROR_PROTO || rc == LIBSSH2_ERROR_CHANNEL_CLOSED;
}

void lm_ssh_mark_broken(lm_ssh *ssh)
{
	/* The transport is unusable (hung or gone): shut the socket so that libssh2 sees it closed and
	 * frees channels and the session without waiting for a peer that will not answer. */
	ssh->broken = 1;
	if (ssh->fd >= 0)
		shutdown(ssh->fd, SHUT_RDWR);
}

int lm_ssh_fail(lm_ssh *ssh, int libssh2_rc, const char *what)
{
	char *msg = NULL;
	int code;

	if (ssh->session != NULL)
		libssh2_session_last_error(ssh->session, &msg, NULL, 0);
	/* A signal interrupts libssh2's own blocking wait (authentication, a blocking read), which then
	 * says "timeout": the cause is the cancel, and saying so is what tells the user. */
	if (!ssh->uncancelable && ssh->ctx != NULL && lm_context_check_cancel(ssh->ctx, what) < 0) {
		lm_ssh_mark_broken(ssh);
		return lm_error_prefix("VM '%s' (%s:%d): ", ssh->vm, ssh->address, ssh->port);
	}
	if (libssh2_rc == LIBSSH2_ERROR_TIMEOUT || libssh2_rc == LIBSSH2_ERROR_SOCKET_TIMEOUT) {
		lm_ssh_mark_broken(ssh);
		return lm_error_set(LM_ETIMEOUT,
		    "VM '%s' (%s:%d): %s: no answer from the SSH server within %.0f s; the VM may be hung "
		    "or unreachable",
		    ssh->vm, ssh->address, ssh->port, what, ssh->command_timeout > 0 ? ssh->command_timeout : ssh->connect_timeout);
	}
	code = LM_EREMOTE;
	if (is_transport_error(libssh2_rc)) {
		lm_ssh_mark_broken(ssh);
		code = LM_ENETWORK;
	}
	return lm_error_set(code, "VM '%s' (%s:%d): %s: %s%s", ssh->vm, ssh->address, ssh->port, what,
	    msg != NULL && msg[0] ? msg : "SSH error",
	    code == LM_ENETWORK ? " (the connection to the guest was lost)" : "");
}

int lm_ssh_check_usable(lm_ssh *ssh)
{
	if (ssh == NULL)
		return lm_error_set(LM_EINVALID, "no SSH session (lm_ssh_connect failed or was not called)");
	if (ssh->broken)
		return lm_error_set(LM_ENETWORK,
		    "VM '%s' (%s:%d): the SSH connection was lost earlier in this operation; connect again",
		    ssh->vm, ssh->address, ssh->port);
	return 0;
}
