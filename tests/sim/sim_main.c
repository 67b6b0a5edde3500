/* lume-sim: start a Lume-compatible simulator with N VMs and print where everything is.
 * Usage: lume-sim --help (and docs/simulator.md). */
#include "sim.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef LUME_SIM_GUEST_DEFAULT
#define LUME_SIM_GUEST_DEFAULT "guest-sshd"
#endif
#ifndef LUME_SIM_CLI_DEFAULT
#define LUME_SIM_CLI_DEFAULT "lume-sim-cli"
#endif
#ifndef LUME_SIM_TART_DEFAULT
#define LUME_SIM_TART_DEFAULT "lume-sim-tart"
#endif
#ifndef LUME_SIM_UTMCTL_DEFAULT
#define LUME_SIM_UTMCTL_DEFAULT "lume-sim-utmctl"
#endif
#ifndef LUME_SIM_TART_SHIM_DEFAULT
#define LUME_SIM_TART_SHIM_DEFAULT NULL
#endif

/* --vm, --vms and the like: enough for bench-enable's fleets of 1, 4, 16 and 64 VMs on one simulator. */
#define MAX_LIST 128

typedef struct {
	const char *names[MAX_LIST];
	size_t n;
} name_list;

static void usage(FILE *out)
{
	fprintf(out,
	    "usage: lume-sim [OPTIONS]\n"
	    "A Lume-compatible HTTP API and `lume` CLI stand-in whose VMs are real OpenSSH servers.\n\n"
	    "  --port N                 listen on port N (0: a free port; default 7777, as Lume)\n"
	    "  --api-address A          the API's IPv4 address (default 127.0.0.1, as Lume): another loopback\n"
	    "                           address lets simulators, the demo and the suite run side by side\n"
	    "  --vms N                  N VMs named vm1..vmN (default 1)\n"
	    "  --vm NAME                a VM with this name (repeatable; replaces --vms)\n"
	    "  --dir DIR                where VM fixtures, Lume's VM store (lume/), the request log and\n"
	    "                           bin/lume go\n"
	    "                           (default: a new temporary directory, removed at exit)\n"
	    "  --boot-delay S           seconds from run to a reachable guest (default 1)\n"
	    "  --stop-delay S           Lume's fixed delay after a stop (default 5)\n"
	    "  --run-answer-delay S     POST .../run answers its 202 S after the start began (default 0: at\n"
	    "                           once, as Lume; a busy host's late answer, to cancel a start under way)\n"
	    "  --stop-grace S           a stop's SIGINT is followed by SIGKILL after S (default 10, as Lume)\n"
	    "  --status-delay S         GET /lume/host/status takes S per running VM, 2S when its SSH does\n"
	    "                           not answer (default 2, Lume's nc check; 0: instant)\n"
	    "  --max-running N          concurrent running VMs (default 2, Apple's limit)\n"
	    "  --address-base A         first guest address (default 127.0.0.2; busy ones are skipped)\n"
	    "  --metal-dir DIR          fake Metal library directory passed to every guest\n"
	    "  --prefs-dir DIR          the server user's preferences, read at every VM start for the\n"
	    "                           host level its guest's Metal gets (default: $LUME_METAL_PREFS_DIR,\n"
	    "                           else $HOME/Library/Preferences)\n"
	    "  --lume-home DIR          Lume's VM store, ~/.lume (default DIR/lume): NAME/config.json per VM\n"
	    "  --unsupported-vm NAME    this VM gets --unsupported-metal-dir instead (repeatable)\n"
	    "  --unsupported-metal-dir DIR\n"
	    "  --never-ready NAME       this VM runs but never gets an IP address (repeatable)\n"
	    "  --metal-defects NAME=LIST  this VM's fake Metal has these known defects of the paravirtual\n"
	    "                           device (nocopy_buffer, indirect_command_buffer; comma-separated;\n"
	    "                           repeatable; docs/guest.md)\n"
	    "  --stock-kernels NAME=MODE  what this VM's unlocked kernels do at the restricted level: fail\n"
	    "                           (the default), zeros (a wrong result) or run (repeatable; docs/guest.md)\n"
	    "  --pulling NAME[=PERCENT] a VM being pulled: GET /lume/vms/NAME says \"pulling\" (repeatable)\n"
	    "  --tart-vm NAME           a VM of Tart's (store: --tart-home), admin/admin, the Tart shim installed\n"
	    "  --utm-vm NAME            a VM of UTM's (bundles: --utm-documents)\n"
	    "  --utm-headless NAME      a UTM VM whose config.plist has no display (repeatable)\n"
	    "  --tart-home DIR          Tart's home (default DIR/tart; the host's TART_HOME must match)\n"
	    "  --utm-documents DIR      UTM's Documents (default DIR/utm; the host's is\n"
	    "                           ~/Library/Containers/com.utmapp.UTM/Data/Documents)\n"
	    "  --tart-shim FILE         the Tart image's TartMetalCapabilities.dylib (default: the built one)\n"
	    "  --tart-version V, --utm-version V   what the stand-ins report (UTM < 5.0.3: no ip-address)\n"
	    "  --utm-no-gui             utmctl's Apple Events fail (no logged-in GUI session)\n"
	    "  --utm-ignore-request     guests ignore `utmctl stop --request`\n"
	    "  --utm-request-delay S    a guest asked to shut down is down after S (default 0.5)\n"
	    "  --utm-no-arp             `utmctl ip-address` finds nothing (NAT traffic is not in the ARP cache)\n"
	    "  --utm-app-not-running    UTM.app is not running at the start (utmctl launches it)\n"
	    "  --dhcpd-leases FILE      the host's /var/db/dhcpd_leases (default DIR/dhcpd_leases)\n"
	    "  --tart-cli PROGRAM, --utmctl-cli PROGRAM   the built stand-ins to install as DIR/bin/tart, utmctl\n"
	    "  --os-version V           guest macOS version (sw_vers), passed to the guest fixture\n"
	    "  --home-size SIZE         passed to the guest fixture\n"
	    "  --fault 500|garbage      answer every Lume route this way (see POST /_sim/fault)\n"
	    "  --cli-version V          version the lume stand-in reports (below 0.5.0: no run --detach)\n"
	    "  --guest PROGRAM          the guest fixture (default: tests/support/guest-sshd)\n"
	    "  --lume-cli PROGRAM       the built lume stand-in to install as DIR/bin/lume\n"
	    "  --info FILE              write the summary as JSON to FILE once listening\n"
	    "  --keep                   leave DIR's contents at exit\n"
	    "  --exit-with-parent       stop (as on SIGTERM) when the process that started it exits\n"
	    "Stops on SIGTERM/SIGINT: stops every guest and removes what it created.\n");
}

static int parse_double(const char *opt, const char *arg, double *out)
{
	char *end;

	*out = strtod(arg, &end);
	if (end == arg || *end != '\0' || *out < 0) {
		fprintf(stderr, "lume-sim: %s: expected seconds, found '%s'\n", opt, arg);
		return -1;
	}
	return 0;
}

static int in_list(const name_list *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->names[i], name) == 0)
			return 1;
	return 0;
}

static int add_name(name_list *l, const char *opt, const char *name);

/* A per-VM setting, NAME=VALUE (--metal-defects, --stock-kernels): VALUE not empty. */
static int add_setting(name_list *l, const char *opt, const char *what, const char *arg)
{
	if (strchr(arg, '=') == NULL || strchr(arg, '=')[1] == '\0') {
		fprintf(stderr, "lume-sim: %s %s: expected NAME=%s\n", opt, arg, what);
		return -1;
	}
	return add_name(l, opt, arg);
}

/* VM name's value in a list of settings (the last one given), or NULL. */
static const char *setting_of(const name_list *l, const char *name)
{
	const char *v = NULL;
	size_t n = strlen(name);

	for (size_t i = 0; i < l->n; i++)
		if (strncmp(l->names[i], name, n) == 0 && l->names[i][n] == '=')
			v = l->names[i] + n + 1;
	return v;
}

static int add_name(name_list *l, const char *opt, const char *name)
{
	if (l->n == MAX_LIST) {
		fprintf(stderr, "lume-sim: too many %s\n", opt);
		return -1;
	}
	l->names[l->n++] = name;
	return 0;
}

static int assign_addresses(sim *s, const char *base)
{
	struct in_addr a;
	uint32_t h;
	size_t i;
	int free_;

	if (inet_pton(AF_INET, base, &a) != 1 || (ntohl(a.s_addr) >> 24) != 127) {
		fprintf(stderr, "lume-sim: --address-base %s: expected an address in 127.0.0.0/8\n", base);
		return -1;
	}
	h = ntohl(a.s_addr);
	s->address_base = h;
	for (i = 0; i < s->nvms; i++) {
		for (;; h++) {
			struct in_addr cand;
			if ((h & 0xff) == 0 || (h & 0xff) == 255 || h == 0x7f000001u)
				continue;
			if ((h >> 24) != 127) {
				fprintf(stderr, "lume-sim: no free loopback address for the guests\n");
				return -1;
			}
			cand.s_addr = htonl(h);
			inet_ntop(AF_INET, &cand, s->vms[i].address, sizeof(s->vms[i].address));
			if ((free_ = sim_address_free(s->vms[i].address)) < 0) {
				fprintf(stderr, "lume-sim: cannot listen on %s:22 for the guests: %s%s\n", s->vms[i].address,
				    strerror(errno), errno == EACCES ? " (port 22 needs root: run lume-sim as root)" : "");
				return -1;
			}
			if (free_)
				break;
		}
		h++;
	}
	return 0;
}

int sim_copy_file(const char *from, const char *to)
{
	char buf[65536];
	ssize_t r;
	int in, out, rc = 0;

	if ((in = open(from, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	if ((out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755)) < 0) {
		close(in);
		return -1;
	}
	while ((r = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)r) != r) {
			rc = -1;
			break;
		}
	if (r < 0 || close(out) < 0)
		rc = -1;
	close(in);
	return rc;
}

int sim_write_json_file(const char *path, cJSON *doc)
{
	char tmp[PATH_MAX + 8];
	char *text = cJSON_Print(doc);
	FILE *f;
	int rc = 0;

	if (text == NULL)
		return -1;
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if ((f = fopen(tmp, "w")) == NULL) {
		free(text);
		return -1;
	}
	if (fputs(text, f) < 0 || fputc('\n', f) < 0)
		rc = -1;
	if (fclose(f) != 0)
		rc = -1;
	free(text);
	if (rc == 0 && rename(tmp, path) < 0)
		rc = -1;
	return rc;
}

/* DIR/bin/lume (a link to or copy of the stand-in) and DIR/bin/lume-sim.json, which it reads. */
static int install_cli(sim *s)
{
	cJSON *cfg;
	char path[PATH_MAX + 32], logs[PATH_MAX + 16];
	int rc;

	snprintf(s->bin_dir, sizeof(s->bin_dir), "%s/bin", s->dir);
	snprintf(s->lume_path, sizeof(s->lume_path), "%s/lume", s->bin_dir);
	snprintf(logs, sizeof(logs), "%s/logs", s->dir);
	if (lm_test_mkdir_p(s->bin_dir, 0755) < 0 || lm_test_mkdir_p(logs, 0755) < 0)
		return -1;
	unlink(s->lume_path);
	if (link(s->cli_program, s->lume_path) < 0 && sim_copy_file(s->cli_program, s->lume_path) < 0) {
		fprintf(stderr, "lume-sim: cannot install %s as %s: %s\n", s->cli_program, s->lume_path, strerror(errno));
		return -1;
	}
	cfg = cJSON_CreateObject();
	cJSON_AddStringToObject(cfg, "url", s->url);
	cJSON_AddStringToObject(cfg, "log", s->log_path);
	cJSON_AddStringToObject(cfg, "logs_dir", logs);
	cJSON_AddStringToObject(cfg, "version", s->cli_version);
	cJSON_AddStringToObject(cfg, "home", s->home);
	cJSON_AddNumberToObject(cfg, "stop_grace", s->stop_grace);
	if (sim_managers_install(s, cfg) < 0) {
		cJSON_Delete(cfg);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/lume-sim.json", s->bin_dir);
	rc = sim_write_json_file(path, cfg);
	cJSON_Delete(cfg);
	return rc;
}

static int listen_on(sim *s)
{
	char address[INET_ADDRSTRLEN];
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int one = 1;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((unsigned short)s->port);
	/* 127.0.0.1 by default, as Lume (Server/Server.swift: bind(host: "127.0.0.1")); --api-address
	 * moves it, one address per simulator. */
	sa.sin_addr = s->api_address;
	inet_ntop(AF_INET, &s->api_address, address, sizeof(address));
	if ((s->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	setsockopt(s->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(s->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(s->listen_fd, 64) < 0) {
		fprintf(stderr, "lume-sim: cannot listen on %s:%d: %s\n", address, s->port, strerror(errno));
		return -1;
	}
	getsockname(s->listen_fd, (struct sockaddr *)&sa, &len);
	s->port = ntohs(sa.sin_port);
	snprintf(s->url, sizeof(s->url), "http://%s:%d", address, s->port);
	return 0;
}

static cJSON *summary_json(sim *s)
{
	cJSON *o = cJSON_CreateObject(), *vms, *v;
	size_t i;

	cJSON_AddStringToObject(o, "url", s->url);
	cJSON_AddNumberToObject(o, "port", s->port);
	cJSON_AddNumberToObject(o, "pid", (double)getpid());
	cJSON_AddStringToObject(o, "dir", s->dir);
	cJSON_AddStringToObject(o, "lume", s->lume_path);
	cJSON_AddStringToObject(o, "bin_dir", s->bin_dir);
	cJSON_AddStringToObject(o, "log", s->log_path);
	cJSON_AddStringToObject(o, "home", s->home);
	cJSON_AddStringToObject(o, "tart_home", s->tart_home);
	cJSON_AddStringToObject(o, "utm_documents", s->utm_documents);
	cJSON_AddStringToObject(o, "utm_app", s->utm_app);
	cJSON_AddStringToObject(o, "dhcpd_leases", s->leases);
	vms = cJSON_AddArrayToObject(o, "vms");
	for (i = 0; i < s->nvms; i++) {
		v = cJSON_CreateObject();
		cJSON_AddStringToObject(v, "name", s->vms[i].name);
		cJSON_AddStringToObject(v, "address", s->vms[i].address);
		cJSON_AddStringToObject(v, "dir", s->vms[i].dir);
		cJSON_AddStringToObject(v, "config", s->vms[i].config);
		cJSON_AddBoolToObject(v, "never_ready", s->vms[i].never_ready);
		cJSON_AddStringToObject(v, "manager", s->vms[i].manager == SIM_MGR_TART ? "tart" :
		    s->vms[i].manager == SIM_MGR_UTM ? "utm" : "lume");
		if (s->vms[i].metal_dir != NULL)
			cJSON_AddStringToObject(v, "metal_dir", s->vms[i].metal_dir);
		cJSON_AddItemToArray(vms, v);
	}
	return o;
}

static void print_summary(sim *s)
{
	size_t i;

	printf("lume-sim %s (pid %ld): Lume API at %s\n", SIM_VERSION, (long)getpid(), s->url);
	printf("  lume CLI stand-in: %s\n", s->lume_path);
	printf("  request log:       %s\n", s->log_path);
	printf("  VM store:          %s\n", s->home);
	printf("  Tart home:         %s (TART_HOME)\n", s->tart_home);
	printf("  UTM documents:     %s\n", s->utm_documents);
	for (i = 0; i < s->nvms; i++)
		printf("  VM %-16s %-15s %s%s\n", s->vms[i].name, s->vms[i].address, s->vms[i].dir,
		    s->vms[i].never_ready ? " (never ready)" : "");
	printf("Stop with SIGTERM or ^C.\n");
	fflush(stdout);
}

int sim_vm_name_ok(const char *n)
{
	size_t i, len = strlen(n);

	if (len == 0 || len >= SIM_NAME_MAX || strcmp(n, ".") == 0 || strcmp(n, "..") == 0 || n[0] == '-')
		return 0;
	for (i = 0; i < len; i++)
		if (!((n[i] >= 'a' && n[i] <= 'z') || (n[i] >= 'A' && n[i] <= 'Z') || (n[i] >= '0' && n[i] <= '9') ||
		        n[i] == '.' || n[i] == '_' || n[i] == '-'))
			return 0;
	return 1;
}

enum {
	O_PORT = 256, O_VMS, O_VM, O_DIR, O_BOOT, O_STOP, O_MAXRUN, O_ADDR, O_METAL, O_UNSUP_VM, O_UNSUP_DIR,
	O_NEVER, O_OSV, O_HOME, O_FAULT, O_CLIV, O_GUEST, O_CLI, O_INFO, O_KEEP, O_PARENT, O_HELP, O_GRACE,
	O_STATUS_DELAY, O_PULLING, O_TART_VM, O_UTM_VM, O_UTM_HEADLESS, O_TART_HOME, O_UTM_DOCS, O_TART_SHIM,
	O_TART_VERSION, O_UTM_VERSION, O_UTM_NO_GUI, O_UTM_IGNORE, O_UTM_DELAY, O_TART_CLI, O_UTMCTL_CLI, O_PREFS,
	O_LUME_HOME, O_DEFECTS, O_STOCK_KERNELS, O_UTM_NO_ARP, O_UTM_APP_OFF, O_LEASES, O_API_ADDR, O_RUN_ANSWER
};

/* NAME or NAME=PERCENT. */
static int add_pull(sim_pull *pulls, size_t *n, char *arg)
{
	char *eq = strchr(arg, '='), *end;

	if (*n == MAX_LIST) {
		fprintf(stderr, "lume-sim: too many --pulling\n");
		return -1;
	}
	pulls[*n].progress = 0;
	if (eq != NULL) {
		*eq = '\0';
		pulls[*n].progress = strtod(eq + 1, &end);
		if (end == eq + 1 || *end != '\0' || pulls[*n].progress < 0 || pulls[*n].progress > 100) {
			fprintf(stderr, "lume-sim: --pulling %s=%s: expected a percentage 0..100\n", arg, eq + 1);
			return -1;
		}
	}
	if (!sim_vm_name_ok(arg)) {
		fprintf(stderr, "lume-sim: --pulling '%s': use letters, digits, '.', '_', '-'\n", arg);
		return -1;
	}
	pulls[(*n)++].name = arg;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"port", required_argument, NULL, O_PORT}, {"vms", required_argument, NULL, O_VMS},
		{"api-address", required_argument, NULL, O_API_ADDR},
		{"vm", required_argument, NULL, O_VM}, {"dir", required_argument, NULL, O_DIR},
		{"boot-delay", required_argument, NULL, O_BOOT}, {"stop-delay", required_argument, NULL, O_STOP},
		{"run-answer-delay", required_argument, NULL, O_RUN_ANSWER},
		{"max-running", required_argument, NULL, O_MAXRUN}, {"address-base", required_argument, NULL, O_ADDR},
		{"metal-dir", required_argument, NULL, O_METAL}, {"unsupported-vm", required_argument, NULL, O_UNSUP_VM},
		{"unsupported-metal-dir", required_argument, NULL, O_UNSUP_DIR},
		{"never-ready", required_argument, NULL, O_NEVER}, {"os-version", required_argument, NULL, O_OSV},
		{"home-size", required_argument, NULL, O_HOME}, {"fault", required_argument, NULL, O_FAULT},
		{"cli-version", required_argument, NULL, O_CLIV}, {"guest", required_argument, NULL, O_GUEST},
		{"lume-cli", required_argument, NULL, O_CLI}, {"info", required_argument, NULL, O_INFO},
		{"keep", no_argument, NULL, O_KEEP}, {"exit-with-parent", no_argument, NULL, O_PARENT},
		{"stop-grace", required_argument, NULL, O_GRACE}, {"status-delay", required_argument, NULL, O_STATUS_DELAY},
		{"pulling", required_argument, NULL, O_PULLING}, {"help", no_argument, NULL, O_HELP},
		{"tart-vm", required_argument, NULL, O_TART_VM}, {"utm-vm", required_argument, NULL, O_UTM_VM},
		{"utm-headless", required_argument, NULL, O_UTM_HEADLESS}, {"tart-home", required_argument, NULL, O_TART_HOME},
		{"utm-documents", required_argument, NULL, O_UTM_DOCS}, {"tart-shim", required_argument, NULL, O_TART_SHIM},
		{"tart-version", required_argument, NULL, O_TART_VERSION}, {"utm-version", required_argument, NULL, O_UTM_VERSION},
		{"utm-no-gui", no_argument, NULL, O_UTM_NO_GUI}, {"utm-no-arp", no_argument, NULL, O_UTM_NO_ARP},
		{"utm-app-not-running", no_argument, NULL, O_UTM_APP_OFF}, {"dhcpd-leases", required_argument, NULL, O_LEASES}, {"utm-ignore-request", no_argument, NULL, O_UTM_IGNORE},
		{"utm-request-delay", required_argument, NULL, O_UTM_DELAY}, {"tart-cli", required_argument, NULL, O_TART_CLI},
		{"utmctl-cli", required_argument, NULL, O_UTMCTL_CLI}, {"prefs-dir", required_argument, NULL, O_PREFS},
		{"lume-home", required_argument, NULL, O_LUME_HOME}, {"metal-defects", required_argument, NULL, O_DEFECTS},
		{"stock-kernels", required_argument, NULL, O_STOCK_KERNELS},
		{NULL, 0, NULL, 0}};
	sim_pull pulls[MAX_LIST];
	sim s;
	name_list names = {{0}, 0}, unsupported = {{0}, 0}, never = {{0}, 0};
	name_list tart_names = {{0}, 0}, utm_names = {{0}, 0}, headless = {{0}, 0}, defects = {{0}, 0}, stock_kernels = {{0}, 0};
	const char *tart_home_opt = NULL, *utm_docs_opt = NULL, *lume_home_opt = NULL, *leases_opt = NULL;
	const char *address_base = "127.0.0.2", *metal_dir = NULL, *unsupported_dir = NULL, *dir_opt = NULL;
	char numbered[MAX_LIST][16];
	long nvms = 1;
	pthread_t accept_thread, supervisor;
	sigset_t sigs;
	cJSON *info;
	size_t i;
	int c, sig, rc = 1;
	char *end;

	memset(&s, 0, sizeof(s));
	s.port = 7777;
	s.boot_delay = 1.0;
	s.stop_delay = 5.0;
	s.stop_grace = 10.0;
	s.status_delay = 2.0;
	s.max_running = 2;
	s.guest = LUME_SIM_GUEST_DEFAULT;
	s.cli_program = LUME_SIM_CLI_DEFAULT;
	s.cli_version = SIM_VERSION;
	s.fault_count = -1;
	s.tart_program = LUME_SIM_TART_DEFAULT;
	s.utmctl_program = LUME_SIM_UTMCTL_DEFAULT;
	s.tart_shim = LUME_SIM_TART_SHIM_DEFAULT;
	s.tart_version = "2.28.0";
	s.utm_version = "5.0.3";
	s.utm_request_delay = 0.5;
	s.utm_app_at_start = 1;
	s.listen_fd = -1;
	s.log_fd = -1;
	s.api_address.s_addr = htonl(INADDR_LOOPBACK);
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case O_PORT:
			s.port = (int)strtol(optarg, &end, 10);
			if (*end != '\0' || s.port < 0 || s.port > 65535) {
				fprintf(stderr, "lume-sim: --port: expected 0..65535\n");
				return 64;
			}
			break;
		case O_VMS:
			nvms = strtol(optarg, &end, 10);
			if (*end != '\0' || nvms < 1 || nvms > MAX_LIST) {
				fprintf(stderr, "lume-sim: --vms: expected 1..%d\n", MAX_LIST);
				return 64;
			}
			break;
		case O_VM:
			if (!sim_vm_name_ok(optarg)) {
				fprintf(stderr, "lume-sim: --vm '%s': use letters, digits, '.', '_', '-'\n", optarg);
				return 64;
			}
			if (add_name(&names, "--vm", optarg) < 0)
				return 64;
			break;
		case O_DIR: dir_opt = optarg; break;
		case O_BOOT: if (parse_double("--boot-delay", optarg, &s.boot_delay) < 0) return 64; break;
		case O_STOP: if (parse_double("--stop-delay", optarg, &s.stop_delay) < 0) return 64; break;
		case O_RUN_ANSWER:
			if (parse_double("--run-answer-delay", optarg, &s.run_answer_delay) < 0)
				return 64;
			break;
		case O_GRACE: if (parse_double("--stop-grace", optarg, &s.stop_grace) < 0) return 64; break;
		case O_STATUS_DELAY: if (parse_double("--status-delay", optarg, &s.status_delay) < 0) return 64; break;
		case O_PULLING: if (add_pull(pulls, &s.npulls, optarg) < 0) return 64; break;
		case O_MAXRUN: s.max_running = atoi(optarg); break;
		case O_ADDR: address_base = optarg; break;
		case O_API_ADDR:
			if (inet_pton(AF_INET, optarg, &s.api_address) != 1) {
				fprintf(stderr, "lume-sim: --api-address %s: expected an IPv4 address (127.0.0.1)\n", optarg);
				return 64;
			}
			break;
		case O_METAL: metal_dir = optarg; break;
		case O_PREFS: s.prefs_dir = optarg; break;
		case O_LUME_HOME: lume_home_opt = optarg; break;
		case O_UNSUP_VM: if (add_name(&unsupported, "--unsupported-vm", optarg) < 0) return 64; break;
		case O_UNSUP_DIR: unsupported_dir = optarg; break;
		case O_NEVER: if (add_name(&never, "--never-ready", optarg) < 0) return 64; break;
		case O_DEFECTS: /* NAME=LIST: the list is checked by guest-sshd, which gives it to the guest */
			if (add_setting(&defects, "--metal-defects", "LIST", optarg) < 0)
				return 64;
			break;
		case O_STOCK_KERNELS: /* NAME=MODE: likewise */
			if (add_setting(&stock_kernels, "--stock-kernels", "MODE", optarg) < 0)
				return 64;
			break;
		case O_TART_VM:
		case O_UTM_VM:
		case O_UTM_HEADLESS:
			if (!sim_vm_name_ok(optarg)) {
				fprintf(stderr, "lume-sim: '%s': use letters, digits, '.', '_', '-'\n", optarg);
				return 64;
			}
			if (add_name(&names, "VM names", optarg) < 0 ||
			    add_name(c == O_TART_VM ? &tart_names : &utm_names, "VM names", optarg) < 0 ||
			    (c == O_UTM_HEADLESS && add_name(&headless, "--utm-headless", optarg) < 0))
				return 64;
			break;
		case O_TART_HOME: tart_home_opt = optarg; break;
		case O_UTM_DOCS: utm_docs_opt = optarg; break;
		case O_TART_SHIM: s.tart_shim = optarg; break;
		case O_TART_VERSION: s.tart_version = optarg; break;
		case O_UTM_VERSION: s.utm_version = optarg; break;
		case O_UTM_NO_GUI: s.utm_no_gui = 1; break;
		case O_UTM_NO_ARP: s.utm_no_arp = 1; break;
		case O_UTM_APP_OFF: s.utm_app_at_start = 0; break;
		case O_LEASES: leases_opt = optarg; break;
		case O_UTM_IGNORE: s.utm_ignore_request = 1; break;
		case O_UTM_DELAY: if (parse_double("--utm-request-delay", optarg, &s.utm_request_delay) < 0) return 64; break;
		case O_TART_CLI: s.tart_program = optarg; break;
		case O_UTMCTL_CLI: s.utmctl_program = optarg; break;
		case O_OSV: s.os_version = optarg; break;
		case O_HOME: s.home_size = optarg; break;
		case O_FAULT:
			if (strcmp(optarg, "500") == 0)
				s.fault = SIM_FAULT_500;
			else if (strcmp(optarg, "garbage") == 0)
				s.fault = SIM_FAULT_GARBAGE;
			else {
				fprintf(stderr, "lume-sim: --fault: expected 500 or garbage\n");
				return 64;
			}
			break;
		case O_CLIV: s.cli_version = optarg; break;
		case O_GUEST: s.guest = optarg; break;
		case O_CLI: s.cli_program = optarg; break;
		case O_INFO: s.info_file = optarg; break;
		case O_KEEP: s.keep = 1; break;
		case O_PARENT: s.parent = getppid(); break;
		case O_HELP: usage(stdout); return 0;
		default: usage(stderr); return 64;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "lume-sim: unexpected argument '%s'\n", argv[optind]);
		return 64;
	}
	if (unsupported.n > 0 && unsupported_dir == NULL) {
		fprintf(stderr, "lume-sim: --unsupported-vm needs --unsupported-metal-dir DIR\n");
		return 64;
	}
	if (s.prefs_dir == NULL) {
		/* The server user's domain: where lume-metal writes it off macOS (its --prefs-dir, else ~). */
		static char prefs_default[SIM_DIR_MAX];
		const char *env = getenv("LUME_METAL_PREFS_DIR"), *home = getenv("HOME");
		if (env != NULL && env[0] != '\0')
			s.prefs_dir = env;
		else if (home != NULL && home[0] != '\0' &&
		    snprintf(prefs_default, sizeof(prefs_default), "%s/Library/Preferences", home) < (int)sizeof(prefs_default))
			s.prefs_dir = prefs_default;
	}
	if (access(s.guest, X_OK) != 0) {
		fprintf(stderr, "lume-sim: the guest fixture %s is not executable (--guest PROGRAM)\n", s.guest);
		return 1;
	}
	if (names.n == 0)
		for (i = 0; i < (size_t)nvms; i++) {
			snprintf(numbered[i], sizeof(numbered[i]), "vm%d", (int)i + 1);
			names.names[names.n++] = numbered[i];
		}

	/* The working directory. */
	if (dir_opt == NULL) {
		const char *tmp = getenv("TMPDIR");
		snprintf(s.dir, sizeof(s.dir), "%s/lume-sim.XXXXXX", tmp != NULL && tmp[0] == '/' ? tmp : "/tmp");
		if (mkdtemp(s.dir) == NULL) {
			fprintf(stderr, "lume-sim: cannot create %s: %s\n", s.dir, strerror(errno));
			return 1;
		}
		s.dir_created = 1;
	} else {
		struct stat st;
		char real[PATH_MAX];
		s.dir_created = stat(dir_opt, &st) != 0;
		if (lm_test_mkdir_p(dir_opt, 0755) < 0 || realpath(dir_opt, real) == NULL) {
			fprintf(stderr, "lume-sim: cannot use --dir %s: %s\n", dir_opt, strerror(errno));
			return 1;
		}
		if (strlen(real) >= sizeof(s.dir)) {
			fprintf(stderr, "lume-sim: --dir %s: path too long\n", dir_opt);
			return 1;
		}
		memcpy(s.dir, real, strlen(real) + 1);
	}
	snprintf(s.log_path, sizeof(s.log_path), "%s/requests.log", s.dir);
	snprintf(s.home, sizeof(s.home), "%s/lume", s.dir);
	if (lume_home_opt != NULL)
		snprintf(s.home, sizeof(s.home), "%s", lume_home_opt);
	snprintf(s.tart_home, sizeof(s.tart_home), "%s", tart_home_opt != NULL ? tart_home_opt : "");
	if (tart_home_opt == NULL)
		snprintf(s.tart_home, sizeof(s.tart_home), "%s/tart", s.dir);
	snprintf(s.utm_documents, sizeof(s.utm_documents), "%s", utm_docs_opt != NULL ? utm_docs_opt : "");
	if (utm_docs_opt == NULL)
		snprintf(s.utm_documents, sizeof(s.utm_documents), "%s/utm", s.dir);
	snprintf(s.leases, sizeof(s.leases), "%s", leases_opt != NULL ? leases_opt : "");
	if (leases_opt == NULL)
		snprintf(s.leases, sizeof(s.leases), "%s/dhcpd_leases", s.dir);
	s.pulls = pulls;

	pthread_mutex_init(&s.lock, NULL);
	pthread_cond_init(&s.wake, NULL);
	pthread_cond_init(&s.idle, NULL);
	pthread_cond_init(&s.booted, NULL);
	pthread_mutex_init(&s.store_lock, NULL);
	s.nvms = names.n;
	s.cap = names.n + SIM_CLONES_MAX;
	if ((s.vms = calloc(s.cap, sizeof(*s.vms))) == NULL)
		goto out;
	for (i = 0; i < s.nvms; i++) {
		sim_vm *vm = &s.vms[i];
		snprintf(vm->name, sizeof(vm->name), "%s", names.names[i]);
		snprintf(vm->dir, sizeof(vm->dir), "%s/vms/%s", s.dir, vm->name);
		vm->metal_dir = in_list(&unsupported, vm->name) ? unsupported_dir : metal_dir;
		vm->never_ready = in_list(&never, vm->name);
		vm->metal_defects = setting_of(&defects, vm->name);
		vm->stock_kernels = setting_of(&stock_kernels, vm->name);
		vm->manager = in_list(&tart_names, vm->name) ? SIM_MGR_TART : in_list(&utm_names, vm->name) ? SIM_MGR_UTM :
		    SIM_MGR_LUME;
		vm->no_display = in_list(&headless, vm->name);
		vm->boot_at = -1;
		vm->lock_fd = -1;
		vm->vnc_port = 59000 + (int)i;
		pthread_mutex_init(&vm->op_lock, NULL);
		if (lm_test_mkdir_p(vm->dir, 0755) < 0) {
			fprintf(stderr, "lume-sim: cannot create %s: %s\n", vm->dir, strerror(errno));
			goto out;
		}
		sim_vm_new_identity(vm, (long)i);
		if (vm->manager == SIM_MGR_LUME && sim_lume_config_write(&s, vm) < 0)
			goto out;
		if (sim_pull_find(&s, vm->name) != NULL) {
			fprintf(stderr, "lume-sim: %s is both a VM and --pulling\n", vm->name);
			goto out;
		}
	}
	for (i = 0; i < never.n; i++)
		if (sim_vm_find(&s, never.names[i]) == NULL)
			fprintf(stderr, "lume-sim: warning: --never-ready %s: no such VM\n", never.names[i]);
	if (sim_managers_prepare(&s) < 0 || assign_addresses(&s, address_base) < 0)
		goto out;
	if ((s.log_fd = open(s.log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) < 0) {
		fprintf(stderr, "lume-sim: cannot open %s: %s\n", s.log_path, strerror(errno));
		goto out;
	}
	if (listen_on(&s) < 0 || install_cli(&s) < 0)
		goto out;
	if (s.utm_app_at_start && sim_utm_app_launch(&s, 1) < 0) {
		fprintf(stderr, "lume-sim: cannot run %s: %s\n", s.utm_app, strerror(errno));
		goto out;
	}

	/* Signals are taken by sigwait() below, never by a handler; whatever started us may have
	 * left them ignored (a shell's background job ignores SIGINT), Lume's server does not. */
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (pthread_create(&supervisor, NULL, sim_supervisor, &s) != 0)
		goto out;
	if (pthread_create(&accept_thread, NULL, sim_accept_loop, &s) != 0) {
		pthread_mutex_lock(&s.lock);
		s.stopping = 1;
		pthread_cond_broadcast(&s.wake);
		pthread_mutex_unlock(&s.lock);
		pthread_join(supervisor, NULL);
		goto out;
	}
	sim_log_event(&s, "listening", NULL, s.url);
	info = summary_json(&s);
	if (s.info_file != NULL && sim_write_json_file(s.info_file, info) < 0)
		fprintf(stderr, "lume-sim: cannot write %s: %s\n", s.info_file, strerror(errno));
	cJSON_Delete(info);
	print_summary(&s);

	sigwait(&sigs, &sig);
	/* SIGINT is also what `lume stop` sends the process that holds a VM: Lume's server has no
	 * handler for it and ends, and every VM it runs goes down. */
	fprintf(stderr, "lume-sim: signal %d: stopping every guest\n", sig);
	{
		char detail[64];
		snprintf(detail, sizeof(detail), "signal %d (%s)", sig, sig == SIGINT ? "SIGINT" : sig == SIGTERM ?
		    "SIGTERM" : "SIGHUP");
		sim_log_event(&s, "exit", NULL, detail);
	}

	pthread_mutex_lock(&s.lock);
	s.stopping = 1;
	pthread_cond_broadcast(&s.wake);
	pthread_mutex_unlock(&s.lock);
	shutdown(s.listen_fd, SHUT_RDWR);
	pthread_join(accept_thread, NULL);
	pthread_join(supervisor, NULL);
	/* Requests in flight (a stop sleeping its delay) end before the state goes away. */
	pthread_mutex_lock(&s.lock);
	while (s.active > 0) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 1;
		pthread_cond_timedwait(&s.idle, &s.lock, &until);
	}
	pthread_mutex_unlock(&s.lock);
	rc = 0;
out:
	if (s.listen_fd >= 0)
		close(s.listen_fd);
	if (s.vms != NULL)
		sim_vm_stop_all(&s);
	sim_utm_app_quit(&s);
	if (s.log_fd >= 0)
		close(s.log_fd);
	s.log_fd = -1;
	if (s.info_file != NULL)
		unlink(s.info_file);
	if (!s.keep && s.dir[0] != '\0') {
		if (lume_home_opt != NULL)
			lm_test_rmtree(s.home);
		if (s.dir_created)
			lm_test_rmtree(s.dir);
		else {
			char p[PATH_MAX + 16];
			snprintf(p, sizeof(p), "%s/vms", s.dir);
			lm_test_rmtree(p);
			snprintf(p, sizeof(p), "%s/bin", s.dir);
			lm_test_rmtree(p);
			snprintf(p, sizeof(p), "%s/logs", s.dir);
			lm_test_rmtree(p);
			lm_test_rmtree(s.home);
			lm_test_rmtree(s.log_path);
			if (leases_opt == NULL)
				unlink(s.leases);
			if (tart_home_opt == NULL)
				lm_test_rmtree(s.tart_home);
			if (utm_docs_opt == NULL)
				lm_test_rmtree(s.utm_documents);
		}
	}
	free(s.vms);
	return rc;
}
