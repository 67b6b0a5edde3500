/* Who holds a VM and who serves the Lume API, from the host's process table: /proc on Linux,
 * libproc on macOS (compiled there only). Facts a real Mac has: a running VM belongs to the
 * process that keeps its config.json open and locked (Lume's VM.swift; `lume stop` finds it with
 * `lsof -F p config.json`), and `lume serve` is the process listening on the API's port. Without
 * privileges only this user's processes can be inspected; other users' are "not visible". */
#include "vm_internal.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__APPLE__)
#include <arpa/inet.h>
#include <libproc.h>
#include <netinet/in.h>
#include <sys/proc_info.h>
#include <sys/sysctl.h>
#elif defined(__linux__)
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#endif

/* NUL-separated arguments [p, end) -> command line (shortened) and subcommand: the first argument
 * after the program that is not an option ("run" for `lume run`, "serve" for `lume serve`). */
static void describe_args(const char *p, const char *end, int max_args, lm_host_process *out)
{
	size_t n = 0, cap = sizeof(out->command);
	int i;

	out->command[0] = out->subcommand[0] = '\0';
	for (i = 0; p < end && *p != '\0' && (max_args < 0 || i < max_args); i++) {
		size_t len = strnlen(p, (size_t)(end - p));
		if (i > 0 && out->subcommand[0] == '\0' && p[0] != '-' && len < sizeof(out->subcommand))
			memcpy(out->subcommand, p, len + 1);
		if (n + (i > 0) + len < cap) {
			n += (size_t)snprintf(out->command + n, cap - n, "%s%.*s", i > 0 ? " " : "", (int)len, p);
		} else if (n + 4 < cap) {
			memcpy(out->command + n, "...", 4);
			n = cap;
		}
		p += len + 1;
	}
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

#if defined(__linux__)

/* Calls match(link, arg) for each open file of pid (the target of /proc/PID/fd/N); 1 on a match.
 * Another user's process cannot be looked into without privileges: 0. */
static int pid_has_fd(long pid, int (*match)(const char *, const void *), const void *arg)
{
	char dir[48], path[64 + 256], link[4096];
	struct dirent *e;
	ssize_t n;
	DIR *d;
	int found = 0;

	snprintf(dir, sizeof(dir), "/proc/%ld/fd", pid);
	if ((d = opendir(dir)) == NULL)
		return 0;
	while (!found && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if ((n = readlink(path, link, sizeof(link) - 1)) <= 0)
			continue;
		link[n] = '\0';
		found = match(link, arg);
	}
	closedir(d);
	return found;
}

/* The lowest PID with a matching open file, or 0. */
static long lowest_pid_with(int (*match)(const char *, const void *), const void *arg)
{
	struct dirent *e;
	long best = 0, pid;
	char *end;
	DIR *proc;

	if ((proc = opendir("/proc")) == NULL)
		return 0;
	while ((e = readdir(proc)) != NULL) {
		pid = strtol(e->d_name, &end, 10);
		if (*end != '\0' || pid <= 0 || (best != 0 && pid >= best))
			continue;
		if (pid_has_fd(pid, match, arg))
			best = pid;
	}
	closedir(proc);
	return best;
}

static void fill_process(lm_host_process *out)
{
	char path[64], buf[8192], *uid;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/cmdline", out->pid);
	if ((f = fopen(path, "r")) != NULL) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		describe_args(buf, buf + n, -1, out);
	}
	snprintf(path, sizeof(path), "/proc/%ld/status", out->pid);
	if ((f = fopen(path, "r")) != NULL) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		/* "Uid:\treal\teffective\tsaved\tfs": the effective one decides whose files it reads. */
		if ((uid = strstr(buf, "\nUid:")) != NULL) {
			long real, eff;
			if (sscanf(uid + 5, "%ld %ld", &real, &eff) == 2)
				out->uid = eff;
		}
	}
}

static int is_config_of(const char *link, const void *suffix)
{
	return ends_with(link, suffix);
}

static int is_socket(const char *link, const void *inode)
{
	char want[48];

	snprintf(want, sizeof(want), "socket:[%lu]", *(const unsigned long *)inode);
	return strcmp(link, want) == 0;
}

int lm_host_vm_holder(const char *vm, lm_host_process *out)
{
	char suffix[LM_VM_NAME_MAX + 16];

	memset(out, 0, sizeof(*out));
	out->uid = -1;
	snprintf(suffix, sizeof(suffix), "/%s/config.json", vm);
	if ((out->pid = lowest_pid_with(is_config_of, suffix)) > 0)
		fill_process(out);
	return 0;
}

/* A hex address of /proc/net/tcp{,6} (each 32-bit word as the kernel prints it: in host order)
 * that accepts connections to this host's loopback: 127/8, ::1, the wildcard, or mapped 127/8. */
static int local_address(const char *hex)
{
	size_t len = strlen(hex), i;
	uint32_t w[4];
	char word[9];

	if (len != 8 && len != 32)
		return 0;
	for (i = 0; i < len / 8; i++) {
		memcpy(word, hex + 8 * i, 8);
		word[8] = '\0';
		w[i] = (uint32_t)strtoul(word, NULL, 16);
	}
	if (len == 8) {
		uint32_t h = ntohl(w[0]);
		return h == 0 || (h >> 24) == 127;
	} else {
		struct in6_addr a;
		memcpy(&a, w, sizeof(a));
		return IN6_IS_ADDR_LOOPBACK(&a) || IN6_IS_ADDR_UNSPECIFIED(&a) ||
		    (IN6_IS_ADDR_V4MAPPED(&a) && a.s6_addr[12] == 127);
	}
}

int lm_host_port_listener(int port, int *found, lm_host_process *out)
{
	static const char *const tables[] = {"/proc/net/tcp", "/proc/net/tcp6"};
	char line[512], local[64];
	unsigned int lport, state;
	unsigned long inode;
	long uid;
	size_t t;
	FILE *f;

	*found = 0;
	memset(out, 0, sizeof(*out));
	out->uid = -1;
	for (t = 0; t < sizeof(tables) / sizeof(tables[0]) && !*found; t++) {
		if ((f = fopen(tables[t], "r")) == NULL)
			continue;
		while (!*found && fgets(line, sizeof(line), f) != NULL) {
			/* "sl local rem st tx:rx tr:when retrnsmt uid timeout inode ..." (the header does not scan) */
			if (sscanf(line, " %*d: %63[0-9A-Fa-f]:%x %*s %x %*s %*s %*s %ld %*d %lu", local, &lport, &state,
			        &uid, &inode) != 5)
				continue;
			if ((int)lport != port || state != 0x0A /* TCP_LISTEN */ || !local_address(local))
				continue;
			*found = 1;
			out->uid = uid; /* the socket's owner, known even when its process is not visible */
			if ((out->pid = lowest_pid_with(is_socket, &inode)) > 0)
				fill_process(out);
		}
		fclose(f);
	}
	return 0;
}

#elif defined(__APPLE__)

static pid_t *all_pids(int *count)
{
	int n = proc_listallpids(NULL, 0);
	pid_t *pids;

	*count = 0;
	if (n <= 0)
		return NULL;
	n += 64; /* processes started meanwhile */
	if ((pids = calloc((size_t)n, sizeof(*pids))) == NULL)
		return NULL;
	if ((n = proc_listallpids(pids, n * (int)sizeof(*pids))) <= 0) {
		free(pids);
		return NULL;
	}
	*count = n;
	return pids;
}

/* The open files of pid; NULL for another user's process (not ours to look at) or a gone one. */
static struct proc_fdinfo *pid_fds(pid_t pid, int *count)
{
	int size = proc_pidinfo(pid, PROC_PIDLISTFDS, 0, NULL, 0);
	struct proc_fdinfo *fds;

	*count = 0;
	if (size <= 0 || (fds = malloc((size_t)size)) == NULL)
		return NULL;
	if ((size = proc_pidinfo(pid, PROC_PIDLISTFDS, 0, fds, size)) <= 0) {
		free(fds);
		return NULL;
	}
	*count = size / (int)PROC_PIDLISTFD_SIZE;
	return fds;
}

static void fill_process(lm_host_process *out)
{
	struct proc_bsdshortinfo bi;
	int mib[3] = {CTL_KERN, KERN_PROCARGS2, (int)out->pid}, argmax = 0, argc;
	int argmax_mib[2] = {CTL_KERN, KERN_ARGMAX};
	size_t size = sizeof(argmax);
	char *buf, *p, *end;

	if (proc_pidinfo((pid_t)out->pid, PROC_PIDT_SHORTBSDINFO, 0, &bi, (int)sizeof(bi)) == (int)sizeof(bi))
		out->uid = (long)bi.pbsi_uid;
	if (sysctl(argmax_mib, 2, &argmax, &size, NULL, 0) < 0 || argmax <= 0 ||
	    (buf = malloc((size_t)argmax)) == NULL)
		return;
	size = (size_t)argmax;
	/* argc, the executable's path, NUL padding, then argv[0..argc-1], NUL-separated. */
	if (sysctl(mib, 3, buf, &size, NULL, 0) == 0 && size > sizeof(int)) {
		memcpy(&argc, buf, sizeof(argc));
		end = buf + size;
		for (p = buf + sizeof(int); p < end && *p != '\0'; p++)
			;
		while (p < end && *p == '\0')
			p++;
		describe_args(p, end, argc, out);
	}
	free(buf);
}

int lm_host_vm_holder(const char *vm, lm_host_process *out)
{
	char suffix[LM_VM_NAME_MAX + 16];
	struct vnode_fdinfowithpath vi;
	struct proc_fdinfo *fds;
	pid_t *pids;
	int npids, nfds, i, k;

	memset(out, 0, sizeof(*out));
	out->uid = -1;
	snprintf(suffix, sizeof(suffix), "/%s/config.json", vm);
	if ((pids = all_pids(&npids)) == NULL)
		return 0;
	for (i = 0; i < npids; i++) {
		if (pids[i] <= 0 || (out->pid != 0 && pids[i] >= out->pid) || (fds = pid_fds(pids[i], &nfds)) == NULL)
			continue;
		for (k = 0; k < nfds; k++)
			if (fds[k].proc_fdtype == PROX_FDTYPE_VNODE &&
			    proc_pidfdinfo(pids[i], fds[k].proc_fd, PROC_PIDFDVNODEPATHINFO, &vi, (int)sizeof(vi)) ==
			        (int)sizeof(vi) &&
			    ends_with(vi.pvip.vip_path, suffix)) {
				out->pid = pids[i]; /* the lowest PID, as `lsof -F p` lists first */
				break;
			}
		free(fds);
	}
	free(pids);
	if (out->pid > 0)
		fill_process(out);
	return 0;
}

/* A TCP socket listening on `port` of the loopback or wildcard address. */
static int listens_on(const struct socket_fdinfo *si, int port)
{
	const struct in_sockinfo *in = &si->psi.soi_proto.pri_tcp.tcpsi_ini;

	if (si->psi.soi_kind != SOCKINFO_TCP || si->psi.soi_proto.pri_tcp.tcpsi_state != TSI_S_LISTEN ||
	    ntohs((uint16_t)in->insi_lport) != port)
		return 0;
	if (in->insi_vflag & INI_IPV4) {
		uint32_t h = ntohl(in->insi_laddr.ina_46.i46a_addr4.s_addr);
		return h == 0 || (h >> 24) == 127;
	}
	return IN6_IS_ADDR_LOOPBACK(&in->insi_laddr.ina_6) || IN6_IS_ADDR_UNSPECIFIED(&in->insi_laddr.ina_6);
}

int lm_host_port_listener(int port, int *found, lm_host_process *out)
{
	struct socket_fdinfo si;
	struct proc_fdinfo *fds;
	pid_t *pids;
	int npids, nfds, i, k;

	*found = 0;
	memset(out, 0, sizeof(*out));
	out->uid = -1;
	if ((pids = all_pids(&npids)) == NULL)
		return 0;
	for (i = 0; i < npids && !*found; i++) {
		if (pids[i] <= 0 || (fds = pid_fds(pids[i], &nfds)) == NULL)
			continue;
		for (k = 0; k < nfds && !*found; k++)
			if (fds[k].proc_fdtype == PROX_FDTYPE_SOCKET &&
			    proc_pidfdinfo(pids[i], fds[k].proc_fd, PROC_PIDFDSOCKETINFO, &si, (int)sizeof(si)) ==
			        (int)sizeof(si) &&
			    listens_on(&si, port)) {
				*found = 1;
				out->pid = pids[i];
			}
		free(fds);
	}
	free(pids);
	if (out->pid > 0)
		fill_process(out);
	return 0;
}

#else

int lm_host_vm_holder(const char *vm, lm_host_process *out)
{
	(void)vm;
	memset(out, 0, sizeof(*out));
	out->uid = -1;
	return 0;
}

int lm_host_port_listener(int port, int *found, lm_host_process *out)
{
	(void)port;
	*found = 0;
	memset(out, 0, sizeof(*out));
	out->uid = -1;
	return 0;
}

#endif

/* host and port of a Lume URL; *local when the host is this machine's loopback. */
static int url_endpoint(const char *url, char *address, size_t cap, int *port, int *local)
{
	CURLU *u = curl_url();
	char *host = NULL, *portstr = NULL;
	int rc = 0;

	*local = 0;
	*port = 0;
	if (u == NULL)
		return lm_error_nomem();
	if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK || curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_PORT, &portstr, CURLU_DEFAULT_PORT) != CURLUE_OK) {
		rc = lm_error_set(LM_EINVALID, "Lume URL '%s': expected http://HOST:PORT (default %s)", url,
		    LM_LUME_URL_DEFAULT);
	} else {
		*port = atoi(portstr);
		snprintf(address, cap, "%s:%d", host, *port);
		*local = strcmp(host, "localhost") == 0 || strncmp(host, "127.", 4) == 0 || strcmp(host, "[::1]") == 0;
	}
	curl_free(host);
	curl_free(portstr);
	curl_url_cleanup(u);
	return rc;
}

int lm_vm_server_lookup(lm_context *ctx, lm_vm_server_info *out)
{
	const lm_options *o = lm_context_options(ctx);
	const char *url = (o->lume_url != NULL && o->lume_url[0] != '\0') ? o->lume_url : LM_LUME_URL_DEFAULT;
	lm_host_process p;
	int port, local, found, rc;

	memset(out, 0, sizeof(*out));
	out->uid = -1;
	if ((rc = url_endpoint(url, out->address, sizeof(out->address), &port, &local)) < 0)
		return rc;
	out->local = local;
	if (!local)
		return 0; /* another machine's server: its users are not ours to compare */
	if ((rc = lm_host_port_listener(port, &found, &p)) < 0)
		return rc;
	/* Not in the table this user can see, but answering: another user's process (macOS). */
	if (!found && lm_vm_api_reachable(url, 2.0) == 0)
		found = 1;
	out->found = found;
	out->pid = p.pid;
	out->uid = p.uid;
	snprintf(out->command, sizeof(out->command), "%s", p.command);
	if (found)
		lm_paths_user_name(p.uid, out->user, sizeof(out->user));
	return 0;
}
