/* The SSH session: TCP connection, handshake, host-key check, authentication, timeouts, and the
 * session freed (either transport's: local.c's fields too). */
#include "ssh_internal.h"
#include "ssh_pins.h"
#include "net_words.h"
#include "str.h"
#include "vm_name.h"
#include "clock.h"
#include "trace.h"

#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

void lm_ssh_set_blocking_timeout(lm_ssh *ssh, double seconds)
{
	long ms = seconds > 0 ? (long)(seconds * 1000.0) : 0;

	if (ssh->session == NULL) /* the local transport: its commands keep their own deadline */
		return;
	libssh2_session_set_timeout(ssh->session, ms);
}

/* The one wait: the socket in the directions libssh2 is blocked on (and fd, when not -1, for
 * reading), until the deadline; with wake_ms > 0 it also returns 0 after that long, or when a
 * signal interrupts it, so that a caller with more to watch (lm_ssh_exec_session) looks again. */
static int wait_socket(lm_ssh *ssh, double deadline, const char *what, int fd, int *fd_ready, int wake_ms)
{
	struct pollfd pfd[2];
	int dirs, timeout_ms, rc;
	double left;

	for (;;) {
		pfd[0].fd = ssh->fd;
		pfd[0].events = 0;
		pfd[0].revents = 0;
		pfd[1].fd = fd;
		pfd[1].events = POLLIN;
		pfd[1].revents = 0;
		dirs = libssh2_session_block_directions(ssh->session);
		if (dirs & LIBSSH2_SESSION_BLOCK_INBOUND)
			pfd[0].events |= POLLIN;
		if (dirs & LIBSSH2_SESSION_BLOCK_OUTBOUND)
			pfd[0].events |= POLLOUT;
		if (pfd[0].events == 0)
			pfd[0].events = POLLIN;
		timeout_ms = -1;
		if (deadline > 0) {
			left = deadline - lm_clock_monotonic();
			if (left <= 0) {
				lm_ssh_mark_broken(ssh);
				return lm_error_set(LM_ETIMEOUT,
				    "VM '%s' (%s:%d): %s did not finish within the command timeout (%.0f s); the "
				    "guest may be hung",
				    ssh->vm, ssh->address, ssh->port, what, ssh->command_timeout);
			}
			timeout_ms = (int)(left * 1000.0) + 1;
		}
		/* The embedder's should_cancel is asked at least four times a second. */
		if (!ssh->uncancelable && ssh->ctx != NULL && lm_context_options(ssh->ctx)->should_cancel != NULL &&
		    (timeout_ms < 0 || timeout_ms > 250))
			timeout_ms = 250;
		if (wake_ms > 0 && (timeout_ms < 0 || timeout_ms > wake_ms))
			timeout_ms = wake_ms;
		rc = poll(pfd, fd >= 0 ? 2 : 1, timeout_ms);
		if (fd_ready != NULL)
			*fd_ready = rc > 0 && fd >= 0 && pfd[1].revents != 0;
		if (rc > 0 || (wake_ms > 0 && (rc == 0 || errno == EINTR)))
			return 0;
		if (rc == 0 && !ssh->uncancelable && lm_context_check_cancel(ssh->ctx, what) < 0) {
			lm_ssh_mark_broken(ssh);
			return lm_error_prefix("VM '%s' (%s:%d): ", ssh->vm, ssh->address, ssh->port);
		}
		if (rc < 0 && errno != EINTR) {
			lm_ssh_mark_broken(ssh);
			return lm_error_set(LM_ENETWORK, "VM '%s' (%s:%d): %s: waiting for the connection failed: %s",
			    ssh->vm, ssh->address, ssh->port, what, strerror(errno));
		}
	}
}

int lm_ssh_wait(lm_ssh *ssh, double deadline, const char *what)
{
	return wait_socket(ssh, deadline, what, -1, NULL, 0);
}

int lm_ssh_wait_io(lm_ssh *ssh, double deadline, const char *what, int fd, int *fd_ready, int wake_ms)
{
	return wait_socket(ssh, deadline, what, fd, fd_ready, wake_ms);
}

/* TCP connect with a deadline (non-blocking connect + poll), trying every address given. */
static int tcp_connect(lm_ssh *ssh)
{
	struct addrinfo hints, *res = NULL, *ai;
	char port[16], words[256];
	int fd = -1, rc, err = 0, flags, timed_out = 0, no_socket = 0;
	double deadline = lm_clock_monotonic() + ssh->connect_timeout;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	/* An address, never a name to look up (the VM managers' answers are checked, this is the
	 * last line of defence). */
	hints.ai_flags = AI_NUMERICSERV | AI_NUMERICHOST;
	snprintf(port, sizeof(port), "%d", ssh->port);
	if ((rc = getaddrinfo(ssh->address, port, &hints, &res)) != 0)
		return lm_error_set(LM_ENETWORK, "VM '%s': its address '%s' is not an IP address, and lume-metal never "
		    "looks a name up: %s", ssh->vm, ssh->address,
		    gai_strerror(rc));
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		struct pollfd pfd;
		socklen_t len = sizeof(err);
		double left;

		if ((fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol)) < 0) {
			err = errno;
			no_socket = 1;
			continue;
		}
		no_socket = 0;
		fcntl(fd, F_SETFD, FD_CLOEXEC);
#ifdef SO_NOSIGPIPE
		{
			int one = 1;
			setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof(one));
		}
#endif
		/* SSH sends small packets one after another (a channel request, then its data): with
		 * Nagle's algorithm each would wait for the peer's delayed ACK, about 40 ms a command on
		 * Linux. OpenSSH's sshd sets the same on its side. */
		{
			int one = 1;
			(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		}
		flags = fcntl(fd, F_GETFL);
		fcntl(fd, F_SETFL, flags | O_NONBLOCK);
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		err = errno;
		if (err == EINPROGRESS) {
			rc = 0;
			while ((left = deadline - lm_clock_monotonic()) > 0) {
				pfd.fd = fd;
				pfd.events = POLLOUT;
				pfd.revents = 0;
				/* A quarter of a second at a time: a cancel is heard while a guest does not answer. */
				rc = poll(&pfd, 1, left > 0.25 ? 250 : (int)(left * 1000.0) + 1);
				if (rc > 0 || (rc < 0 && errno != EINTR))
					break;
				if (!ssh->uncancelable && ssh->ctx != NULL &&
				    lm_context_check_cancel(ssh->ctx, "connecting to its SSH server") < 0) {
					close(fd);
					freeaddrinfo(res);
					return lm_error_prefix("VM '%s' (%s:%d): ", ssh->vm, ssh->address, ssh->port);
				}
				rc = 0;
			}
			if (rc == 0) {
				timed_out = 1;
				err = ETIMEDOUT;
			} else if (rc > 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0) {
				break;
			} else if (rc < 0) {
				err = errno;
			}
		}
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		if (timed_out)
			return lm_error_set(LM_ETIMEOUT,
			    "VM '%s' (%s:%d): no TCP connection to its SSH server within %.0f s (connect timeout); "
			    "is the VM running and its SSH server (Remote Login) on?",
			    ssh->vm, ssh->address, ssh->port, ssh->connect_timeout);
		/* This machine's failure, not the guest's (too many open files): LM_EIO, as a local file
		 * that cannot be opened, so that status does not list it as the guest's (issue 49, 9). */
		if (no_socket)
			return lm_error_set(LM_EIO, "VM '%s' (%s:%d): this process cannot make a socket: %s", ssh->vm,
			    ssh->address, ssh->port, strerror(err));
		lm_connect_error_words(err, words, sizeof(words));
		return lm_error_set(LM_ENETWORK, "VM '%s' (%s:%d): cannot connect to its SSH server: %s", ssh->vm,
		    ssh->address, ssh->port, words);
	}
	ssh->fd = fd;
	return 0;
}

#ifdef TCP_QUICKACK
/* libssh2's own receive, plus an immediate ACK for what arrives. After authentication OpenSSH's
 * sshd sends its host keys (hostkeys-00@openssh.com) unasked, and it leaves Nagle's algorithm on
 * for a session without a terminal: its answer to our next request (the channel's confirmation)
 * then waits for the ACK of those host keys, which Linux delays by 40 ms when we have nothing to
 * send. That stall was most of a re-enable's one command. Linux leaves quick-ACK mode on its own,
 * so it is asked again at every receive. */
static LIBSSH2_RECV_FUNC(recv_quickack)
{
	static const int one = 1;
	ssize_t n;

	(void)abstract;
	n = recv(socket, buffer, length, flags);
	(void)setsockopt(socket, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof(one));
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	return n;
}

static void set_quickack_recv(LIBSSH2_SESSION *session)
{
#if LIBSSH2_VERSION_NUM >= 0x010b01
	(void)libssh2_session_callback_set2(session, LIBSSH2_CALLBACK_RECV, (libssh2_cb_generic *)recv_quickack);
#else
	(void)libssh2_session_callback_set(session, LIBSSH2_CALLBACK_RECV, (void *)recv_quickack);
#endif
}
#else
/* Elsewhere (macOS) there is no per-socket quick-ACK: the system's delayed-ACK rule applies. */
static void set_quickack_recv(LIBSSH2_SESSION *session)
{
	(void)session;
}
#endif

/* libssh2's global initialisation (its crypto backend) is not safe to race: do it exactly once,
 * whichever thread connects first. */
static pthread_once_t lm_ssh_once = PTHREAD_ONCE_INIT;

static void lm_ssh_init_once(void)
{
	(void)libssh2_init(0);
}

void lm_ssh_global_init(void)
{
	pthread_once(&lm_ssh_once, lm_ssh_init_once);
}

/* The handshake in the trace, with what was negotiated: the key exchange and host-key algorithms
 * decide its cost (one curve25519 exchange against a finite-field Diffie-Hellman). */
static void trace_kex(const lm_ssh *ssh, double since)
{
	const char *kex = libssh2_session_methods(ssh->session, LIBSSH2_METHOD_KEX);
	const char *hostkey = libssh2_session_methods(ssh->session, LIBSSH2_METHOD_HOSTKEY);
	char what[160];

	snprintf(what, sizeof(what), "ssh-kex %s %s", kex != NULL ? kex : "?", hostkey != NULL ? hostkey : "?");
	lm_trace(ssh->ctx, ssh->vm, what, since);
}

int lm_ssh_connect(lm_ssh **out, lm_context *ctx, const char *vm_name, const char *address, int port)
{
	return lm_ssh_connect_as(out, ctx, vm_name, address, port, NULL);
}

int lm_ssh_connect_as(lm_ssh **out, lm_context *ctx, const char *vm_name, const char *address, int port,
    const char *account)
{
	return lm_ssh_connect_vm(out, ctx, vm_name, address, port, account, NULL);
}

int lm_ssh_connect_vm(lm_ssh **out, lm_context *ctx, const char *vm_name, const char *address, int port,
    const char *account, const char *vm_id)
{
	const lm_options *opts;
	lm_ssh *ssh;
	char prefs[256];
	double step;
	int rc;

	if (out == NULL)
		return lm_error_set(LM_EINVALID, "lm_ssh_connect: out is NULL");
	*out = NULL;
	if (ctx == NULL || address == NULL || address[0] == '\0')
		return lm_error_set(LM_EINVALID, "lm_ssh_connect: a context and an address are required");
	if ((rc = lm_vm_name_check(vm_name, vm_name != NULL ? strlen(vm_name) : 0)) < 0)
		return rc;
	if (port < 0 || port > 65535)
		return lm_error_set(LM_EINVALID, "VM '%s': SSH port %d is out of range (1-65535)", vm_name, port);
	opts = lm_context_options(ctx);
	if ((rc = lm_ssh_check_key_option(ctx)) < 0 || (rc = lm_ssh_check_password_option(ctx)) < 0)
		return rc;
	if ((ssh = calloc(1, sizeof(*ssh))) == NULL)
		return lm_error_nomem();
	/* The user's ~/.ssh/config for this address, as ssh(1) and Ansible read it: its User and
	 * IdentityFile (auth.c; an explicit --ssh-user or --ssh-key wins), its Port where the caller
	 * gave none (0), and a ProxyJump refused: lume-metal reaches its VMs directly. */
	if ((rc = lm_ssh_config_read(address, &ssh->config)) < 0) {
		free(ssh);
		return lm_error_prefix("VM '%s' (%s): ", vm_name, address);
	}
	if (ssh->config.proxy_jump[0] != '\0') {
		rc = lm_error_set(LM_EUNSUPPORTED, "VM '%s' (%s): %s line %d sets ProxyJump %s for this address, and "
		    "lume-metal connects to its VMs directly, never through a jump host; give the address a Host section "
		    "with `ProxyJump none` before that line (ssh_config(5): the first value wins)", vm_name, address,
		    ssh->config.path, ssh->config.proxy_line, ssh->config.proxy_jump);
		free(ssh);
		return rc;
	}
	if (port == 0)
		port = ssh->config.port > 0 ? ssh->config.port : 22;
	if (ssh->config.port > 0 || ssh->config.user[0] || ssh->config.identity[0])
		lm_log(ctx, LM_LOG_DEBUG, "ssh: VM '%s' (%s): %s gives%s%s%s%s%s%s", vm_name, address, ssh->config.path,
		    ssh->config.port > 0 ? " a port" : "", ssh->config.user[0] ? " User " : "", ssh->config.user,
		    ssh->config.identity[0] ? " IdentityFile " : "", ssh->config.identity, "");
	ssh->fd = -1;
	ssh->ctx = ctx;
	snprintf(ssh->account, sizeof(ssh->account), "%s", account != NULL && account[0] ? account : "lume");
	if (vm_id != NULL && strlen(vm_id) < sizeof(ssh->vm_id) && vm_id[strspn(vm_id, "sha256:0123456789abcdef")] == '\0')
		memcpy(ssh->vm_id, vm_id, strlen(vm_id) + 1);
	ssh->port = port;
	ssh->connect_timeout = opts->connect_timeout > 0 ? opts->connect_timeout : 10;
	ssh->command_timeout = opts->command_timeout > 0 ? opts->command_timeout : 120;
	if ((ssh->vm = strdup(vm_name)) == NULL || (ssh->address = strdup(address)) == NULL) {
		lm_ssh_free(ssh);
		return lm_error_nomem();
	}
	step = lm_clock_monotonic();
	if ((rc = tcp_connect(ssh)) < 0)
		goto fail;
	lm_trace(ctx, vm_name, "ssh-connect", step);
	lm_ssh_global_init();
	if ((ssh->session = libssh2_session_init()) == NULL) {
		rc = lm_error_set(LM_ENOMEM, "VM '%s': cannot create an SSH session (libssh2)", vm_name);
		goto fail;
	}
	set_quickack_recv(ssh->session);
	libssh2_session_set_blocking(ssh->session, 1);
	lm_ssh_set_blocking_timeout(ssh, ssh->connect_timeout);
	if ((rc = lm_ssh_hostkey_prefs(ssh, prefs, sizeof(prefs))) < 0)
		goto fail;
	if (libssh2_session_method_pref(ssh->session, LIBSSH2_METHOD_HOSTKEY, prefs) != 0) {
		rc = lm_ssh_fail(ssh, LIBSSH2_ERROR_METHOD_NOT_SUPPORTED, "choosing host-key algorithms");
		goto fail;
	}
	step = lm_clock_monotonic();
	if ((rc = libssh2_session_handshake(ssh->session, ssh->fd)) != 0) {
		if (rc == LIBSSH2_ERROR_TIMEOUT || rc == LIBSSH2_ERROR_SOCKET_TIMEOUT)
			rc = lm_error_set(LM_ETIMEOUT,
			    "VM '%s' (%s:%d): its SSH server accepted the connection but did not complete the SSH "
			    "handshake within %.0f s (connect timeout); the guest may be hung or still booting",
			    vm_name, address, port, ssh->connect_timeout);
		else
			rc = lm_ssh_fail(ssh, rc, "SSH handshake");
		goto fail;
	}
	trace_kex(ssh, step);
	step = lm_clock_monotonic();
	if ((rc = lm_ssh_verify_host_key(ssh)) < 0)
		goto fail;
	lm_trace(ctx, vm_name, "ssh-hostkey-check", step);
	step = lm_clock_monotonic();
	if ((rc = lm_ssh_authenticate(ssh)) < 0)
		goto fail;
	lm_trace(ctx, vm_name, "ssh-auth", step);
	lm_ssh_set_blocking_timeout(ssh, ssh->command_timeout);
	lm_log(ctx, LM_LOG_DEBUG, "ssh: connected to VM '%s' (%s:%d)", vm_name, address, port);
	*out = ssh;
	return 0;
fail:
	lm_ssh_free(ssh);
	return rc;
}

int lm_ssh_usable(const lm_ssh *ssh)
{
	return ssh != NULL && !ssh->broken;
}

void lm_ssh_set_cancelable(lm_ssh *ssh, int cancelable)
{
	if (ssh != NULL)
		ssh->uncancelable = !cancelable;
}

int lm_ssh_set_command_timeout(lm_ssh *ssh, double seconds)
{
	if (ssh == NULL || !(seconds >= 0 && seconds <= LM_TIMEOUT_MAX))
		return lm_error_set(LM_EINVALID, "lm_ssh_set_command_timeout: a session and a timeout between 0 and %.0f "
		    "seconds are required", LM_TIMEOUT_MAX);
	ssh->command_timeout = seconds;
	lm_ssh_set_blocking_timeout(ssh, seconds);
	return 0;
}

void lm_ssh_free(lm_ssh *ssh)
{
	if (ssh == NULL)
		return;
	if (ssh->session != NULL) {
		/* A short, bounded goodbye: never hang on a dead guest while disconnecting. */
		libssh2_session_set_blocking(ssh->session, 1);
		libssh2_session_set_timeout(ssh->session, ssh->broken ? 200 : 2000);
		if (ssh->sftp != NULL)
			libssh2_sftp_shutdown(ssh->sftp);
		if (!ssh->broken)
			libssh2_session_disconnect(ssh->session, "lume-metal done");
		libssh2_session_free(ssh->session);
	}
	if (ssh->fd >= 0)
		close(ssh->fd);
	lm_strv_free(ssh->local_env);
	free(ssh->local_shell);
	free(ssh->local_home);
	free(ssh->vm);
	free(ssh->address);
	free(ssh);
}
