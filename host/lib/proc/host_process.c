/* The host's process table (host_process.h): /proc on Linux, libproc on macOS (compiled there
 * only). Facts a real Mac has: a running VM belongs to the
 * process that keeps its config.json open and locked (Lume's VM.swift; `lume stop` finds it with
 * `lsof -F p config.json`), and `lume serve` is the process listening on the API's port. Without
 * privileges only this user's processes can be inspected; other users' are "not visible". */
#include "host_process.h"
#include "error_internal.h"
#include "text.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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
#include <sys/stat.h>

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

#if defined(__linux__)

static int pid_order(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

/* Every PID in /proc, ascending (readdir's order is not promised). LM_ENOMEM without memory. */
static int all_pids(long **pids, size_t *n)
{
	size_t cap = 0;
	struct dirent *e;
	long pid, *grown;
	char *end;
	DIR *proc;

	*pids = NULL;
	*n = 0;
	if ((proc = opendir("/proc")) == NULL)
		return 0;
	while ((e = readdir(proc)) != NULL) {
		pid = strtol(e->d_name, &end, 10);
		if (*end != '\0' || pid <= 0)
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 512;
			if ((grown = realloc(*pids, cap * sizeof(**pids))) == NULL) {
				closedir(proc);
				free(*pids);
				*pids = NULL;
				return lm_error_nomem();
			}
			*pids = grown;
		}
		(*pids)[(*n)++] = pid;
	}
	closedir(proc);
	qsort(*pids, *n, sizeof(**pids), pid_order);
	return 0;
}

/* The lowest PID with an open file for which match(its stat, arg) holds (0: none), as lsof's
 * lowest `-F p` line: PIDs in ascending order, so the first process that has one ends the search
 * (a long-running server is found among the machine's older processes, not after every one).
 * Another user's process cannot be looked into without privileges (lsof cannot either). */
static int lowest_pid_with(int (*match)(const struct stat *, const void *), const void *arg, long *best)
{
	char dir[48];
	struct dirent *f;
	struct stat st;
	size_t n, i;
	long *pids;
	DIR *fds;
	int rc;

	*best = 0;
	if ((rc = all_pids(&pids, &n)) < 0)
		return rc;
	for (i = 0; i < n && *best == 0; i++) {
		snprintf(dir, sizeof(dir), "/proc/%ld/fd", pids[i]);
		if ((fds = opendir(dir)) == NULL)
			continue;
		while ((f = readdir(fds)) != NULL) {
			if (f->d_name[0] != '.' && fstatat(dirfd(fds), f->d_name, &st, 0) == 0 && match(&st, arg)) {
				*best = pids[i];
				break;
			}
		}
		closedir(fds);
	}
	free(pids);
	return 0;
}

static void fill_process(lm_host_process *out)
{
	char path[64], buf[8192];
	const char *line, *w;
	size_t n, len, wn;
	uint64_t real, eff;
	lm_scan lines, l;
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
		/* "Uid:\treal\teffective\tsaved\tfs": the effective one decides whose files it reads. */
		lm_scan_init(&lines, buf, n);
		while (lm_scan_line(&lines, &line, &len) != 0) {
			lm_scan_init(&l, line, len);
			if (!lm_scan_skip(&l, "Uid:"))
				continue;
			if (lm_scan_word(&l, &w, &wn) == 1 && lm_text_parse_u64(w, wn, UINT32_MAX, &real) == 0 &&
			    lm_scan_word(&l, &w, &wn) == 1 && lm_text_parse_u64(w, wn, UINT32_MAX, &eff) == 0)
				out->uid = (long)eff;
			break;
		}
	}
}

static int is_socket(const struct stat *st, const void *inode)
{
	return S_ISSOCK(st->st_mode) && (unsigned long)st->st_ino == *(const unsigned long *)inode;
}

typedef struct {
	const struct stat *files;
	size_t n;
} file_set;

static int is_one_of(const struct stat *st, const void *arg)
{
	const file_set *set = arg;
	size_t i;

	for (i = 0; i < set->n; i++)
		if (st->st_dev == set->files[i].st_dev && st->st_ino == set->files[i].st_ino)
			return 1;
	return 0;
}

int lm_host_vm_holder(const char *const files[], size_t n, lm_host_process *out)
{
	struct stat *st = calloc(n ? n : 1, sizeof(*st));
	file_set set;
	size_t i, k = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	out->uid = -1;
	if (st == NULL)
		return lm_error_nomem();
	for (i = 0; i < n; i++)
		if (stat(files[i], &st[k]) == 0)
			k++;
	set.files = st;
	set.n = k;
	rc = k > 0 ? lowest_pid_with(is_one_of, &set, &out->pid) : 0;
	if (rc == 0 && out->pid > 0)
		fill_process(out);
	free(st);
	return rc;
}

/* A hex address of /proc/net/tcp{,6} (each 32-bit word as the kernel prints it: in host order)
 * that accepts connections to this host's loopback: 127/8, ::1, the wildcard, or mapped 127/8. */
static int local_address(const char *hex, size_t len)
{
	uint32_t w[4];
	uint64_t v;
	size_t i;

	if (len != 8 && len != 32)
		return 0;
	for (i = 0; i < len / 8; i++) {
		if (lm_text_parse_hex(hex + 8 * i, 8, UINT32_MAX, &v) < 0)
			return 0;
		w[i] = (uint32_t)v;
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

/* One row of /proc/net/tcp{,6}: "sl: local:port rem st tx:rx tr:when retrnsmt uid timeout inode
 * ..." (sl and uid decimal, addresses, port and st hexadecimal); -1 for anything else (the
 * header). */
typedef struct {
	const char *local; /* the local address's hex digits */
	size_t local_len;
	uint64_t port, state, uid, inode;
} tcp_row;

static int tcp_row_parse(const char *line, size_t n, tcp_row *r)
{
	const char *w[10], *colon;
	size_t wn[10], i;
	uint64_t sl;
	int64_t timeout;
	lm_scan s;

	lm_scan_init(&s, line, n);
	for (i = 0; i < 10; i++)
		if (lm_scan_word(&s, &w[i], &wn[i]) == 0)
			return -1;
	if (wn[0] < 2 || w[0][wn[0] - 1] != ':' || lm_text_parse_u64(w[0], wn[0] - 1, UINT64_MAX, &sl) < 0 ||
	    (colon = memchr(w[1], ':', wn[1])) == NULL)
		return -1;
	r->local = w[1];
	r->local_len = (size_t)(colon - w[1]);
	if (lm_text_parse_hex(colon + 1, wn[1] - r->local_len - 1, 0xffff, &r->port) < 0 ||
	    lm_text_parse_hex(w[3], wn[3], 0xff, &r->state) < 0 || lm_text_parse_u64(w[7], wn[7], UINT32_MAX, &r->uid) < 0 ||
	    lm_text_parse_i64(w[8], wn[8], INT64_MIN, INT64_MAX, &timeout) < 0 ||
	    lm_text_parse_u64(w[9], wn[9], ULONG_MAX, &r->inode) < 0)
		return -1;
	return 0;
}

int lm_host_port_listener(int port, int *found, lm_host_process *out)
{
	static const char *const tables[] = {"/proc/net/tcp", "/proc/net/tcp6"};
	char buf[512];
	const char *line;
	unsigned long inode;
	size_t t, n;
	tcp_row r;
	lm_scan chunk;
	int rc = 0;
	FILE *f;

	*found = 0;
	memset(out, 0, sizeof(*out));
	out->uid = -1;
	for (t = 0; t < sizeof(tables) / sizeof(tables[0]) && !*found; t++) {
		if ((f = fopen(tables[t], "r")) == NULL)
			continue;
		/* fgets: one line at a time, at most 511 bytes of it (a row is about 150) */
		while (!*found && fgets(buf, sizeof(buf), f) != NULL) {
			lm_scan_init(&chunk, buf, strlen(buf));
			if (lm_scan_line(&chunk, &line, &n) == 0 || tcp_row_parse(line, n, &r) < 0)
				continue;
			if ((int)r.port != port || r.state != 0x0A /* TCP_LISTEN */ || !local_address(r.local, r.local_len))
				continue;
			*found = 1;
			out->uid = (long)r.uid; /* the socket's owner, known even when its process is not visible */
			inode = (unsigned long)r.inode;
			if ((rc = lowest_pid_with(is_socket, &inode, &out->pid)) == 0 && out->pid > 0)
				fill_process(out);
		}
		fclose(f);
	}
	return rc;
}

int lm_host_program_running(const char *path, int *running)
{
	char exe[64];
	struct stat want, st;
	struct dirent *e;
	long pid;
	char *end;
	DIR *proc;

	*running = 0;
	if (stat(path, &want) < 0 || (proc = opendir("/proc")) == NULL)
		return 0;
	while (!*running && (e = readdir(proc)) != NULL) {
		pid = strtol(e->d_name, &end, 10);
		if (*end != '\0' || pid <= 0)
			continue;
		/* /proc/PID is owned by the process's user; exe is the file it runs (a zombie has none) */
		snprintf(exe, sizeof(exe), "/proc/%ld", pid);
		if (stat(exe, &st) < 0 || st.st_uid != getuid())
			continue;
		snprintf(exe, sizeof(exe), "/proc/%ld/exe", pid);
		*running = stat(exe, &st) == 0 && st.st_dev == want.st_dev && st.st_ino == want.st_ino;
	}
	closedir(proc);
	return 0;
}

/* proc(5): field 22 of /proc/PID/stat, starttime, is the clock ticks (sysconf(_SC_CLK_TCK)) from
 * the system's boot to the process's start, on CLOCK_BOOTTIME's scale (which counts suspended
 * time too). Its epoch time is now minus how long ago that was: the realtime clock less the
 * boottime clock's distance to it -- not /proc/stat's btime, which is whole seconds. */
int lm_host_process_started(long pid, double *at)
{
	char path[48], buf[1024];
	const char *w = NULL;
	struct timespec real, boot;
	uint64_t ticks;
	long hz = sysconf(_SC_CLK_TCK);
	size_t n, close_paren, wn = 0;
	lm_scan fields;
	FILE *f;
	int i;

	*at = 0;
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if (pid <= 0 || hz <= 0 || (f = fopen(path, "r")) == NULL)
		return 0;
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	/* "PID (comm) state ppid ...": comm may hold spaces and parentheses; the last ')' ends it. */
	for (close_paren = n; close_paren > 0 && buf[close_paren - 1] != ')'; close_paren--)
		;
	if (close_paren == 0)
		return 0;
	lm_scan_init(&fields, buf + close_paren, n - close_paren);
	for (i = 3; i <= 22; i++) /* fields 3 (state) to 22 */
		if (lm_scan_word(&fields, &w, &wn) == 0)
			return 0;
	if (lm_text_parse_u64(w, wn, UINT64_MAX, &ticks) < 0 || clock_gettime(CLOCK_REALTIME, &real) < 0 ||
	    clock_gettime(CLOCK_BOOTTIME, &boot) < 0)
		return 0;
	*at = (double)real.tv_sec + (double)real.tv_nsec / 1e9 - ((double)boot.tv_sec + (double)boot.tv_nsec / 1e9) +
	    (double)ticks / (double)hz;
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

int lm_host_vm_holder(const char *const files[], size_t n, lm_host_process *out)
{
	struct vnode_fdinfowithpath vi;
	struct proc_fdinfo *fds;
	struct stat *st = calloc(n ? n : 1, sizeof(*st));
	pid_t *pids;
	size_t f, k = 0;
	int npids, nfds, i, j, found;

	memset(out, 0, sizeof(*out));
	out->uid = -1;
	if (st == NULL)
		return lm_error_nomem();
	for (f = 0; f < n; f++)
		if (stat(files[f], &st[k]) == 0)
			k++;
	if (k == 0 || (pids = all_pids(&npids)) == NULL) {
		free(st);
		return 0;
	}
	for (i = 0; i < npids; i++) {
		if (pids[i] <= 0 || (out->pid != 0 && pids[i] >= out->pid) || (fds = pid_fds(pids[i], &nfds)) == NULL)
			continue;
		for (j = 0, found = 0; j < nfds && !found; j++) {
			if (fds[j].proc_fdtype != PROX_FDTYPE_VNODE ||
			    proc_pidfdinfo(pids[i], fds[j].proc_fd, PROC_PIDFDVNODEPATHINFO, &vi, (int)sizeof(vi)) != (int)sizeof(vi))
				continue;
			for (f = 0; f < k && !found; f++)
				found = (dev_t)vi.pvip.vip_vi.vi_stat.vst_dev == st[f].st_dev &&
				    (ino_t)vi.pvip.vip_vi.vi_stat.vst_ino == st[f].st_ino;
		}
		if (found)
			out->pid = pids[i]; /* the lowest PID, as `lsof -F p` lists first */
		free(fds);
	}
	free(pids);
	free(st);
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

int lm_host_program_running(const char *path, int *running)
{
	struct proc_bsdshortinfo bi;
	char exe[PROC_PIDPATHINFO_MAXSIZE];
	struct stat want, st;
	pid_t *pids;
	int n, i;

	*running = 0;
	if (stat(path, &want) < 0 || (pids = all_pids(&n)) == NULL)
		return 0;
	for (i = 0; i < n && !*running; i++) {
		if (pids[i] <= 0 ||
		    proc_pidinfo(pids[i], PROC_PIDT_SHORTBSDINFO, 0, &bi, (int)sizeof(bi)) != (int)sizeof(bi) ||
		    bi.pbsi_uid != getuid() || proc_pidpath(pids[i], exe, sizeof(exe)) <= 0)
			continue;
		*running = stat(exe, &st) == 0 && st.st_dev == want.st_dev && st.st_ino == want.st_ino;
	}
	free(pids);
	return 0;
}

/* <sys/proc_info.h>: PROC_PIDTBSDINFO's struct proc_bsdinfo has the process's start as
 * pbi_start_tvsec and pbi_start_tvusec (epoch); another user's process answers nothing without
 * privileges (then: not visible). */
int lm_host_process_started(long pid, double *at)
{
	struct proc_bsdinfo bi;

	*at = 0;
	if (pid > 0 && proc_pidinfo((pid_t)pid, PROC_PIDTBSDINFO, 0, &bi, (int)sizeof(bi)) == (int)sizeof(bi))
		*at = (double)bi.pbi_start_tvsec + (double)bi.pbi_start_tvusec / 1e6;
	return 0;
}

#else

int lm_host_vm_holder(const char *const files[], size_t n, lm_host_process *out)
{
	(void)files;
	(void)n;
	memset(out, 0, sizeof(*out));
	out->uid = -1;
	return 0;
}

int lm_host_program_running(const char *path, int *running)
{
	(void)path;
	*running = 0;
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

int lm_host_process_started(long pid, double *at)
{
	(void)pid;
	*at = 0;
	return 0;
}

#endif
