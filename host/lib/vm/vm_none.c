/* The manager-less backend (`--vm-manager none`): a VM that something else started, known only by
 * its address. Everything that runs in the guest works; starting and stopping are the user's job,
 * and saying so is all this backend does for them. Also the helpers every non-Lume backend shares:
 * Lume's readiness check (a 2-second TCP connect to port 22) for managers that have none. */
#include "vm_internal.h"
#include "net_words.h"
#include "text.h"

#include <stdarg.h>

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

char *lm_vm_strf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || (s = malloc((size_t)n + 1)) == NULL)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

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
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return errno;
	if (fcntl(fd, F_SETFL, O_NONBLOCK) < 0) {
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

static int none_get(lm_vm_manager *vmm, const char *name, lm_vm_info *out)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", name);
	snprintf(out->ip, sizeof(out->ip), "%s", vmm->address);
	vmm->ssh_probe_err = lm_vm_probe_ssh(out);
	/* Nothing says whether the VM runs: it is "running" while its SSH answers. */
	snprintf(out->status, sizeof(out->status), "%s", out->ssh_available ? "running" : "unreachable");
	return 0;
}

static int none_list(lm_vm_manager *vmm, lm_vm_info **out, size_t *count)
{
	(void)vmm;
	*out = NULL;
	*count = 0; /* no manager, no list: only the VMs named on the command line are known */
	return 0;
}

static int none_start(lm_vm_manager *vmm, const char *name)
{
	char words[256];

	/* What the probe of the get before this one answered, by name: a refused port 22 is most
	 * likely a VM that is off, an unreachable address may be macOS 15's Local Network privacy. */
	if (vmm->ssh_probe_err != 0 && vmm->ssh_probe_err != ETIMEDOUT)
		lm_connect_error_words(vmm->ssh_probe_err, words, sizeof(words));
	else
		snprintf(words, sizeof(words), "does not answer");
	return lm_error_set(LM_ERROR, "%s: no VM manager is in use, so the VM cannot be started from here; "
	    "start it yourself if it is off: SSH at %s (port 22): %s", name, vmm->address, words);
}

static int none_stop(lm_vm_manager *vmm, const char *name)
{
	(void)vmm;
	return lm_error_set(LM_ERROR, "%s: no VM manager is in use, so the VM cannot be stopped or restarted "
	    "from here; restarting it is the user's job", name);
}

const lm_vm_backend lm_vm_backend_none = {"none", none_list, none_get, none_start, none_stop, NULL, NULL, NULL};

int lm_vm_none_init(lm_vm_manager *vmm, const char *address)
{
	if (address == NULL || address[0] == '\0')
		return lm_error_set(LM_ENOADDRESS, "without a VM manager the guest's address is needed, and none was given");
	if (!lm_vm_is_ipv4(address))
		return lm_error_set(LM_EINVALID, "'%s' is not an IPv4 address", address);
	if ((vmm->address = strdup(address)) == NULL)
		return lm_error_nomem();
	vmm->backend = &lm_vm_backend_none;
	return 0;
}
