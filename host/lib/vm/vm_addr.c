/* What every backend's answer for a VM's address goes through, and Lume's readiness check (a
 * 2-second TCP connect to port 22) for the managers that have none: Tart, UTM, none. */
#include "vm_internal.h"
#include "text.h"


#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define LM_SSH_PROBE_TIMEOUT 2.0 /* Lume's isSSHAvailable: 2 s */

int lm_vm_is_ipv4(const char *s)
{
	struct in_addr a;

	return s != NULL && inet_pton(AF_INET, s, &a) == 1;
}

int lm_vm_address_answer(const char *who, const char *vm, const char *answer, char *out, size_t size)
{
	char shown[96];

	out[0] = '\0';
	if (answer == NULL || answer[0] == '\0')
		return 0; /* none yet */
	if (lm_vm_is_ipv4(answer)) {
		if (strlen(answer) >= size)
			return lm_error_set(LM_EINVALID, "%s: no room for the address %s", who, answer);
		memcpy(out, answer, strlen(answer) + 1);
		return 0;
	}
	/* A name would be looked up, and with first-contact key acceptance a lying manager could then
	 * send the password anywhere: only an address is an address. */
	lm_text_quote(shown, sizeof(shown), answer, strlen(answer), 64);
	return lm_error_set(LM_ERROR, "%s: %s%s%sthe address it gave, '%s', is not an IPv4 address; lume-metal "
	    "connects only to the IP address a VM manager gives and never looks a name up", who, vm ? "VM '" : "",
	    vm ? vm : "", vm ? "': " : "", shown);
}

/* 0 when address:port accepts a connection within timeout, else why not (an errno value). */
static int tcp_probe(const char *address, int port, double timeout)
{
	struct sockaddr_in sa;
	struct pollfd p;
	int fd, err = 0, why = EINVAL, pr;
	socklen_t len = sizeof(err);

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((unsigned short)port);
	if (inet_pton(AF_INET, address, &sa.sin_addr) != 1)
		return EINVAL;
	/* Close-on-exec by fcntl: macOS has no SOCK_CLOEXEC (shared/reference/toolchain.md). The
	 * socket lives inside this call, so no other thread's exec can come between. */
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) < 0)
		return errno;
	if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 || fcntl(fd, F_SETFL, O_NONBLOCK) < 0) {
		why = errno;
		close(fd);
		return why;
	}
	/* The error is kept: a refused or unreachable address (macOS 15's Local Network privacy
	 * answers EHOSTUNREACH) is not a guest that is still booting. */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		why = 0;
	} else if ((why = errno) == EINPROGRESS) {
		p.fd = fd;
		p.events = POLLOUT;
		if ((pr = poll(&p, 1, (int)(timeout * 1000))) == 0)
			why = ETIMEDOUT;
		else if (pr < 0)
			why = errno;
		else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
			why = errno;
		else
			why = err;
	}
	close(fd);
	return why;
}

int lm_vm_port_answers(const char *address, int port, double timeout)
{
	return tcp_probe(address, port, timeout) == 0;
}

int lm_vm_probe_ssh(lm_vm_info *info)
{
	int why = info->ip[0] != '\0' ? tcp_probe(info->ip, 22, LM_SSH_PROBE_TIMEOUT) : 0;

	info->ssh_available = info->ip[0] != '\0' && why == 0;
	return why;
}
