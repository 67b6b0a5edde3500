/* The UTM backend: `utmctl` run with posix_spawn, never a shell (utmctl/UTMCtl.swift in
 * utmapp/UTM). utmctl drives UTM.app over Apple Events: UTM.app must run in a logged-in GUI
 * session, and it does not work from SSH sessions or before login; an event that fails is
 * printed ("Error from event: ...") rather than reported by the exit status, so stderr is read.
 *   state  `utmctl status NAME`: one word (stopped, starting, started, pausing, paused, resuming,
 *          stopping; "started" is our "running"); `utmctl list`: a fixed text table. A VM stopped
 *          with its state saved (`suspend --save-state`, Data/vmstate in its bundle) is "stopped"
 *          to utmctl and "suspended" to us: its next start restores that state;
 *   address `utmctl ip-address NAME` (Apple VMs since UTM 5.0.3: the host's ARP cache, which NAT
 *          traffic does not reach), else the host's DHCP lease of the MAC in the VM's
 *          config.plist (Network[0].MacAddress), else the address the user gives;
 *   start  `utmctl start NAME`, only for a VM whose config.plist configures a display: UTM gives
 *          a macOS guest the paravirtual GPU only then (Configuration/UTMAppleConfiguration.swift);
 *   stop   `utmctl stop NAME --request` (the guest shuts down), `--force` (power off) when it is
 *          still running after a while; a paused VM is powered off at once with `--kill` (UTM
 *          refuses every other stop of a VM that is not started), and a saved state is
 *          restored and powered off, which discards it (utmctl has no other way to). A refusal
 *          ("Error from event: ...") is reported at once in UTM's words.
 * From an SSH session (or before login) every Apple Event fails with -1743, yet `utmctl status`
 * says only "Virtual machine not found": its lookup runs with error reporting off. Only `utmctl
 * list` prints the note, so a VM that is not found is checked against `list`. */
#include "vm_internal.h"
#include "host_process.h"
#include "plist_read.h"
#include "text.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <limits.h>
#include <plist/plist.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define LM_UTM_QUERY_TIMEOUT 60.0
#define LM_UTM_REQUEST_WAIT 30.0 /* a guest asked to shut down gets this long before a power-off */
#define LM_UTM_APP "/Applications/UTM.app/Contents/MacOS/utmctl"
#define LM_UTM_APP_SUFFIX ".app/Contents/MacOS"
#define LM_DHCP_LEASES "/var/db/dhcpd_leases"

/* The backend's state. */
typedef struct {
	char *program;     /* `utmctl` */
	char *documents;   /* UTM's sandboxed Documents: NAME.utm/config.plist */
	char *app;         /* UTM.app's executable: next to utmctl (its real path), else /Applications' */
	char *dhcp_leases; /* the host's DHCP leases (test builds: $LUME_METAL_DHCPD_LEASES first) */
	char *address;     /* --vm-manager utm with the guest's address given: used as is */
} utm_state;

static int utm_config(const utm_state *u, const char *name, char **path, void **root);

static int utm_cmd(lm_vm_manager *vmm, utm_state *u, const char *const args[], double timeout, lm_proc_result *res)
{
	static const char *const env[] = {"LUME_METAL_CHILD=1", NULL};
	const lm_proc_options o = {.env = env, .timeout = timeout, .cancel = lm_vm_cancel_ctx(vmm)};

	if (lm_proc_run(u->program, args, &o, res) < 0)
		return lm_error_prefix("utmctl: ");
	return 0;
}

static int has(const lm_proc_result *res, const char *needle)
{
	return (res->err != NULL && strstr(res->err, needle) != NULL) ||
	    (res->out != NULL && strstr(res->out, needle) != NULL);
}

/* Did `utmctl WHAT` fail? Its exit status, or an Apple event's failure printed on stderr. */
static int utm_failed(const lm_proc_result *res)
{
	return res->timed_out || res->exit_code != 0 || has(res, "Error from event") ||
	    has(res, "utmctl does not work from SSH");
}

/* `utmctl list`: do Apple Events fail in this session? Asked when a VM is not found, since
 * that is all `status NAME` says then. */
static int utm_events_fail(lm_vm_manager *vmm, utm_state *u)
{
	const char *args[] = {"list", NULL};
	lm_proc_result res;
	int fail;

	if (utm_cmd(vmm, u, args, LM_UTM_QUERY_TIMEOUT, &res) < 0)
		return 0; /* the original answer stands */
	fail = has(&res, "utmctl does not work from SSH") || has(&res, "-1743");
	lm_proc_result_dispose(&res);
	return fail;
}

static int utm_error(lm_vm_manager *vmm, utm_state *u, const lm_proc_result *res, const char *what, const char *name)
{
	char line[200];

	if (res->timed_out)
		return lm_error_set(LM_ETIMEOUT, "utmctl %s: no answer in time; the utmctl process was killed", what);
	lm_vm_failure_line(res, line, sizeof(line));
	if (has(res, "utmctl does not work from SSH") || has(res, "-1743") || has(res, "-600") || has(res, "-1712") ||
	    has(res, "Connection is invalid"))
		return lm_error_set(LM_ENETWORK, "utmctl %s: UTM.app could not be driven over Apple Events (%s). utmctl "
		    "needs UTM.app running in a logged-in GUI session of this user; it does not work from SSH "
		    "sessions or before logging in", what, line);
	if (has(res, "Virtual machine not found") && utm_events_fail(vmm, u))
		return lm_error_set(LM_ENETWORK, "utmctl %s: \"%s\", but that is not UTM's answer: UTM.app cannot be "
		    "driven from this session (`utmctl list` says: utmctl does not work from SSH sessions or before "
		    "logging in; every Apple Event fails with -1743). utmctl needs a logged-in GUI session of this user: "
		    "run lume-metal in it (a LaunchAgent of that user, say), or without UTM for this VM", what, line);
	if (has(res, "Virtual machine not found"))
		return lm_error_set(LM_ENOTFOUND, "%s: UTM has no such VM (utmctl %s: %s)", name, what, line);
	if (has(res, "Application not found"))
		return lm_error_set(LM_ENOTFOUND, "utmctl %s: UTM.app was not found (%s)", what, line);
	/* Any other error raised inside UTM.app is its answer to this request, a refusal: reported at
	 * once, in UTM's words, never waited out. */
	if (has(res, "Error from event"))
		return lm_error_set(LM_ERROR, "%s: UTM refused `utmctl %s`: %s", name, what, line);
	return lm_error_set(LM_ERROR, "utmctl %s: %s (exit %d)", what, line[0] ? line : "failed without a message",
	    res->exit_code);
}

/* UTM's status word -> ours: "started" is "running", the others are shown as UTM says them. */
static void set_status(lm_vm_info *out, const char *word)
{
	snprintf(out->status, sizeof(out->status), "%s", strcmp(word, "started") == 0 ? "running" : word);
}

/* The same from a word of utmctl's output: its first 31 bytes, as the status field holds. */
static void set_status_word(lm_vm_info *out, const char *w, size_t n)
{
	char word[32];

	if (n >= sizeof(word))
		n = sizeof(word) - 1;
	memcpy(word, w, n);
	word[n] = '\0';
	set_status(out, word);
}

/* The VM's lease in the host's DHCP leases, by the MAC of its first NIC (config.plist's
 * Network[0].MacAddress); nothing when either is not there. */
static int lease_address(lm_vm_manager *vmm, utm_state *u, const char *name, lm_vm_info *out)
{
	plist_t root, net, nic, mac;
	char *path, *value = NULL;
	int rc;

	if ((rc = utm_config(u, name, &path, (void **)&root)) < 0 || path == NULL)
		return rc;
	net = plist_dict_get_item(root, "Network");
	nic = net != NULL && plist_get_node_type(net) == PLIST_ARRAY && plist_array_get_size(net) > 0 ?
	    plist_array_get_item(net, 0) : NULL;
	mac = nic != NULL && plist_get_node_type(nic) == PLIST_DICT ? plist_dict_get_item(nic, "MacAddress") : NULL;
	if (mac != NULL && plist_get_node_type(mac) == PLIST_STRING)
		plist_get_string_val(mac, &value);
	if (value != NULL && (rc = lm_vm_dhcp_lease_lookup(u->dhcp_leases, value, out->ip, sizeof(out->ip))) == LM_EINVALID) {
		lm_log(vmm->ctx, LM_LOG_DEBUG, "%s: %s: %s", name, path, lm_error_last()->message);
		rc = 0;
	}
	if (rc == 0 && out->ip[0] != '\0')
		lm_log(vmm->ctx, LM_LOG_DEBUG, "%s: %s from the host's DHCP lease of %s (%s)", name, out->ip, value,
		    u->dhcp_leases);
	free(value);
	free(path);
	plist_free(root);
	return rc;
}

/* `utmctl ip-address NAME`: the first IPv4 line. UTM before 5.0.3 cannot tell an Apple VM's
 * address ("Operation not supported by the backend."; older utmctl lacks the command). Either
 * way a guest on UTM's shared (NAT) network has its address in the host's DHCP leases. */
static int utm_address(lm_vm_manager *vmm, utm_state *u, const char *name, lm_vm_info *out)
{
	const char *args[] = {"ip-address", name, NULL};
	lm_proc_result res;
	struct in6_addr in6;
	char addr[256];
	const char *line;
	size_t n;
	lm_scan lines;
	int rc;

	if (u->address != NULL) {
		snprintf(out->ip, sizeof(out->ip), "%s", u->address);
		return 0;
	}
	if ((rc = utm_cmd(vmm, u, args, LM_UTM_QUERY_TIMEOUT, &res)) < 0)
		return rc;
	if (has(&res, "not supported") || has(&res, "Unexpected argument") || res.exit_code == 64) {
		lm_proc_result_dispose(&res);
		if ((rc = lease_address(vmm, u, name, out)) < 0 || out->ip[0] != '\0')
			return rc;
		return lm_error_set(LM_ENOADDRESS, "%s: this UTM cannot tell a macOS VM's address (`utmctl ip-address` "
		    "works for Apple VMs from UTM 5.0.3 on); the address has to be given", name);
	}
	if (utm_failed(&res)) {
		/* a VM that is not started has no address yet: nothing to report */
		rc = has(&res, "not running") ? 0 : utm_error(vmm, u, &res, "ip-address", name);
		lm_proc_result_dispose(&res);
		return rc;
	}
	lm_scan_init(&lines, res.out, strlen(res.out));
	while (lm_scan_token(&lines, "\r\n", &line, &n) == 1) {
		while (n > 0 && (*line == ' ' || *line == '\t'))
			line++, n--;
		/* An address is at most 45 bytes and a refusal shows 64 (lm_vm_address_answer): a longer
		 * line reads as its first 255 bytes to the same effect. */
		if (n >= sizeof(addr))
			n = sizeof(addr) - 1;
		memcpy(addr, line, n);
		addr[n] = '\0';
		/* IPv4 before IPv6, one per line; a line that is neither is refused, never looked up */
		if (addr[0] != '\0' && inet_pton(AF_INET6, addr, &in6) != 1) {
			rc = lm_vm_address_answer("utmctl ip-address", name, addr, out->ip, sizeof(out->ip));
			break;
		}
	}
	lm_proc_result_dispose(&res);
	/* Nothing in the ARP cache: a NAT guest's traffic never reaches it (Lume's DHCPLeaseParser) */
	return rc == 0 && out->ip[0] == '\0' ? lease_address(vmm, u, name, out) : rc;
}

/* A UTM VM stopped with its state saved: Data/vmstate in its bundle (UTMAppleConfigurationBoot's
 * vmSavedStateURL), which UTM restores at the next start and deletes once restored. */
static int saved_state(const utm_state *u, const char *name, int *saved)
{
	char *path, *state = NULL, *slash;
	void *root;
	struct stat st;
	int rc;

	*saved = 0;
	if ((rc = utm_config(u, name, &path, &root)) < 0 || path == NULL)
		return rc;
	plist_free((plist_t)root);
	if ((slash = strrchr(path, '/')) != NULL)
		*slash = '\0';
	if ((rc = lm_path_join(&state, path, "Data", "vmstate", NULL)) == 0)
		*saved = stat(state, &st) == 0;
	free(state);
	free(path);
	return rc;
}

static int utm_get(lm_vm_manager *vmm, void *state, const char *name, lm_vm_info *out)
{
	utm_state *u = state;
	const char *args[] = {"status", name, NULL};
	char what[LM_VM_NAME_MAX + 8];
	const char *word;
	size_t n;
	lm_proc_result res;
	lm_scan s;
	int rc;

	snprintf(what, sizeof(what), "status %s", name);
	if ((rc = utm_cmd(vmm, u, args, LM_UTM_QUERY_TIMEOUT, &res)) < 0)
		return rc;
	lm_scan_init(&s, res.out, strlen(res.out));
	if (utm_failed(&res) || lm_scan_token(&s, LM_SCAN_SPACE, &word, &n) == 0) {
		rc = utm_failed(&res) ? utm_error(vmm, u, &res, what, name) :
		    lm_error_set(LM_ERROR, "utmctl %s: printed no status", what);
		lm_proc_result_dispose(&res);
		return rc;
	}
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", name);
	snprintf(out->os, sizeof(out->os), "macOS");
	set_status_word(out, word, n);
	lm_proc_result_dispose(&res);
	if (strcmp(out->status, "stopped") == 0) {
		int saved;
		if ((rc = saved_state(u, name, &saved)) < 0)
			return rc;
		if (saved)
			snprintf(out->status, sizeof(out->status), "suspended");
	}
	if (strcmp(out->status, "running") == 0 && (rc = utm_address(vmm, u, name, out)) < 0)
		return rc;
	vmm->ssh_probe_err = lm_vm_probe_ssh(out);
	return 0;
}

/* `utmctl list`: "UUID                                 Status   Name", then "UUID STATUS NAME" rows
 * (the status padded to 8 characters, the name the rest of the line, spaces and all). Parsed by
 * words, whatever the padding; lines that are not rows are skipped. */
int lm_vm_utm_parse_list(const char *text, lm_vm_info **out, size_t *count)
{
	lm_vm_info *list = NULL;
	const char *line, *uuid, *word, *name;
	size_t n = 0, cap = 0, len, un, wn;
	lm_scan lines, l;

	*out = NULL;
	*count = 0;
	lm_scan_init(&lines, text, strlen(text));
	while (lm_scan_token(&lines, "\r\n", &line, &len) == 1) {
		lm_scan_init(&l, line, len);
		if (lm_scan_token(&l, LM_SCAN_SPACE, &uuid, &un) == 0 || lm_scan_token(&l, LM_SCAN_SPACE, &word, &wn) == 0 ||
		    un != 36 || uuid[8] != '-' || uuid[13] != '-' || uuid[18] != '-' || uuid[23] != '-')
			continue; /* the header, blank or foreign lines */
		lm_scan_span(&l, LM_SCAN_SPACE);
		lm_scan_rest(&l, &name, &len);
		for (; len > 0 && (name[len - 1] == ' ' || name[len - 1] == '\t'); len--)
			;
		if (len == 0 || len >= LM_VM_NAME_MAX)
			continue;
		if (n == cap) {
			lm_vm_info *bigger = realloc(list, (cap = cap ? cap * 2 : 8) * sizeof(*list));
			if (bigger == NULL) {
				free(list);
				return lm_error_nomem();
			}
			list = bigger;
		}
		memset(&list[n], 0, sizeof(list[n]));
		snprintf(list[n].name, sizeof(list[n].name), "%.*s", (int)len, name);
		snprintf(list[n].os, sizeof(list[n].os), "macOS");
		set_status_word(&list[n], word, wn);
		n++;
	}
	*out = list;
	*count = n;
	return 0;
}

static int utm_list(lm_vm_manager *vmm, void *state, lm_vm_info **out, size_t *count)
{
	utm_state *u = state;
	const char *args[] = {"list", NULL};
	lm_proc_result res;
	lm_vm_info *list = NULL;
	size_t n = 0, i;
	int rc;

	if ((rc = utm_cmd(vmm, u, args, LM_UTM_QUERY_TIMEOUT, &res)) < 0)
		return rc;
	if (utm_failed(&res)) {
		rc = utm_error(vmm, u, &res, "list", "");
		lm_proc_result_dispose(&res);
		return rc;
	}
	rc = lm_vm_utm_parse_list(res.out, &list, &n);
	lm_proc_result_dispose(&res);
	if (rc < 0)
		return rc;
	for (i = 0; i < n; i++) {
		char valid[LM_VM_NAME_MAX];
		if (strcmp(list[i].status, "running") == 0 && lm_vm_name_normalize(list[i].name, valid) == 0 &&
		    utm_address(vmm, u, list[i].name, &list[i]) < 0)
			lm_log(vmm->ctx, LM_LOG_DEBUG, "%s: no address: %s", list[i].name, lm_error_last()->message);
		(void)lm_vm_probe_ssh(&list[i]);
	}
	*out = list;
	*count = n;
	return 0;
}

/* The VM's config.plist in UTM's Documents: the bundle whose Information.Name is `name`.
 * *path NULL when none was found (the sandbox container may not be readable). */
static int utm_config(const utm_state *u, const char *name, char **path, void **root)
{
	DIR *d;
	struct dirent *e;
	char *p, *data;
	size_t len;
	FILE *f;
	long size;
	int rc;

	*path = NULL;
	*root = NULL;
	if ((d = opendir(u->documents)) == NULL)
		return 0;
	while ((e = readdir(d)) != NULL && *path == NULL) {
		size_t l = strlen(e->d_name);
		plist_t doc, info, node;
		char *value = NULL;
		if (l < 5 || strcmp(e->d_name + l - 4, ".utm") != 0)
			continue;
		if ((rc = lm_path_join(&p, u->documents, e->d_name, "config.plist", NULL)) < 0) {
			closedir(d);
			return rc;
		}
		if ((f = fopen(p, "rb")) == NULL || fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) <= 0 || size > (1 << 22) ||
		    fseek(f, 0, SEEK_SET) != 0) {
			if (f != NULL)
				fclose(f);
			free(p);
			continue;
		}
		if ((data = malloc((size_t)size)) == NULL) {
			fclose(f);
			free(p);
			closedir(d);
			return lm_error_nomem();
		}
		len = fread(data, 1, (size_t)size, f);
		fclose(f);
		/* UTM writes XML; a binary one is read too. One that cannot be read (damaged, nested too
		 * deep) is not the VM's: it is passed over like any other. */
		rc = lm_plist_read(data, len, "UTM's config.plist", &doc, NULL);
		free(data);
		if (rc == LM_ENOMEM) {
			free(p);
			closedir(d);
			return rc;
		}
		if (rc < 0)
			lm_error_clear();
		info = doc != NULL && plist_get_node_type(doc) == PLIST_DICT ? plist_dict_get_item(doc, "Information") : NULL;
		node = info != NULL && plist_get_node_type(info) == PLIST_DICT ? plist_dict_get_item(info, "Name") : NULL;
		if (node != NULL && plist_get_node_type(node) == PLIST_STRING)
			plist_get_string_val(node, &value);
		if (value != NULL && strcmp(value, name) == 0) {
			*path = p;
			*root = doc;
		} else {
			free(p);
			plist_free(doc);
		}
		free(value);
	}
	closedir(d);
	return 0;
}

/* UTM attaches VZMacGraphicsDeviceConfiguration -- the paravirtual GPU -- to a macOS guest only
 * when the VM configures at least one display (UTMAppleConfiguration.swift). */
static int check_display(lm_vm_manager *vmm, utm_state *u, const char *name)
{
	char *path;
	plist_t root, displays, backend;
	char *value = NULL;
	int rc;

	if ((rc = utm_config(u, name, &path, (void **)&root)) < 0)
		return rc;
	if (path == NULL) {
		lm_log(vmm->ctx, LM_LOG_WARN, "%s: its config.plist was not found in %s; whether it has a display (which "
		    "the paravirtual GPU needs) is not checked", name, u->documents);
		return 0;
	}
	backend = plist_dict_get_item(root, "Backend");
	if (backend != NULL && plist_get_node_type(backend) == PLIST_STRING)
		plist_get_string_val(backend, &value);
	displays = plist_dict_get_item(root, "Display");
	if (value != NULL && strcmp(value, "Apple") != 0)
		rc = lm_error_set(LM_ERROR, "%s: a UTM VM with the %s backend (%s): the unlock is for macOS guests on "
		    "Apple's Virtualization backend", name, value, path);
	else if (displays == NULL || plist_get_node_type(displays) != PLIST_ARRAY || plist_array_get_size(displays) == 0)
		rc = lm_error_set(LM_ERROR, "%s: the VM has no display configured (%s has no Display entry). UTM "
		    "gives a macOS guest the paravirtual GPU only when a display is configured, so without one the "
		    "guest has no Metal device to unlock; add a display to the VM in UTM and start it again", name,
		    path);
	free(value);
	free(path);
	plist_free(root);
	return rc;
}

/* `utmctl start NAME`: boots a stopped VM, resumes a paused one, restores a saved state. */
static int utm_start_cmd(lm_vm_manager *vmm, utm_state *u, const char *name)
{
	const char *args[] = {"start", name, NULL};
	char what[LM_VM_NAME_MAX + 8];
	lm_proc_result res;
	int rc;

	snprintf(what, sizeof(what), "start %s", name);
	/* UTM.app starts the VM once the Apple Event is sent, whether or not `utmctl start` lives to
	 * hear the reply: launched until UTM answers that it did not start it. */
	lm_vm_note_launch(vmm, 0, NULL);
	if ((rc = utm_cmd(vmm, u, args, LM_UTM_QUERY_TIMEOUT, &res)) < 0)
		return rc;
	if (utm_failed(&res) && !res.timed_out && res.exit_code < 128) /* an answer, not a kill */
		memset(&vmm->launch, 0, sizeof(vmm->launch));
	if (utm_failed(&res))
		rc = utm_error(vmm, u, &res, what, name);
	lm_proc_result_dispose(&res);
	return rc;
}

static int utm_start(lm_vm_manager *vmm, void *state, const char *name)
{
	utm_state *u = state;
	int rc;

	if ((rc = check_display(vmm, u, name)) < 0)
		return rc;
	return utm_start_cmd(vmm, u, name);
}

static int utm_stop_by(lm_vm_manager *vmm, utm_state *u, const char *name, const char *how)
{
	const char *args[] = {"stop", name, how, NULL};
	char what[LM_VM_NAME_MAX + 24];
	lm_proc_result res;
	lm_vm_info info;
	int rc;

	snprintf(what, sizeof(what), "stop %s %s", name, how);
	if ((rc = utm_cmd(vmm, u, args, LM_UTM_QUERY_TIMEOUT, &res)) < 0)
		return rc;
	/* UTM refuses any stop but --kill of a VM that is not started (UTMScriptingVirtualMachineImpl
	 * .swift: `guard vm.state == .started || stopMethod == .kill`, "The virtual machine is not
	 * running."; reference/vm-managers-and-bench.md, 2026-12): what we wanted when it is stopped,
	 * UTM's refusal when it is paused or between states. */
	if (has(&res, "is not running") && !res.timed_out && utm_get(vmm, u, name, &info) == 0 &&
	    (strcmp(info.status, "stopped") == 0 || strcmp(info.status, "suspended") == 0))
		rc = 0;
	else if (utm_failed(&res))
		rc = utm_error(vmm, u, &res, what, name);
	lm_proc_result_dispose(&res);
	return rc;
}

/* Until the VM is `want` (our word), within the command timeout. */
static int utm_wait_status(lm_vm_manager *vmm, utm_state *u, const char *name, const char *want, lm_vm_info *info)
{
	double deadline = lm_clock_monotonic() + vmm->command_timeout;
	int rc;

	for (;;) {
		if ((rc = utm_get(vmm, u, name, info)) < 0)
			return rc;
		if (strcmp(info->status, want) == 0)
			return 0;
		if (lm_clock_monotonic() >= deadline)
			return lm_error_set(LM_ETIMEOUT, "%s: still %s %g s after UTM was asked to make it %s", name,
			    info->status, vmm->command_timeout, want);
		if ((rc = lm_vm_check_cancel(vmm, "while waiting for UTM")) < 0)
			return lm_error_prefix("%s: ", name);
		lm_clock_sleep(0.2);
	}
}

/* A paused VM is powered off (its guest cannot be asked anything) with --kill, the one stop UTM
 * takes for a VM that is not started; a saved state is discarded the only way utmctl has:
 * restored by a start (which deletes it), then powered off. */
static int utm_stop_held(lm_vm_manager *vmm, utm_state *u, const char *name, lm_vm_info *info)
{
	int rc;

	if (strcmp(info->status, "suspended") != 0 && ((rc = utm_stop_by(vmm, u, name, "--kill")) < 0 ||
	    (rc = utm_get(vmm, u, name, info)) < 0))
		return rc;
	if (strcmp(info->status, "suspended") != 0)
		return 0;
	lm_log(vmm->ctx, LM_LOG_INFO, "%s: its saved state is restored and powered off, which discards it", name);
	if ((rc = utm_start_cmd(vmm, u, name)) < 0 || (rc = utm_wait_status(vmm, u, name, "running", info)) < 0 ||
	    (rc = utm_stop_by(vmm, u, name, "--force")) < 0)
		return rc;
	return utm_wait_status(vmm, u, name, "stopped", info);
}

static int utm_stop(lm_vm_manager *vmm, void *state, const char *name)
{
	utm_state *u = state;
	double wait = vmm->command_timeout / 2 < LM_UTM_REQUEST_WAIT ? vmm->command_timeout / 2 : LM_UTM_REQUEST_WAIT;
	double deadline;
	lm_vm_info info;
	int rc;

	if ((rc = utm_get(vmm, u, name, &info)) < 0)
		return rc;
	if (strcmp(info.status, "paused") == 0 || strcmp(info.status, "pausing") == 0 ||
	    strcmp(info.status, "resuming") == 0 || strcmp(info.status, "suspended") == 0)
		return utm_stop_held(vmm, u, name, &info);

	/* A clean shutdown first: the guest's requestStop() ... */
	if ((rc = utm_stop_by(vmm, u, name, "--request")) < 0)
		return rc;
	for (deadline = lm_clock_monotonic() + wait; lm_clock_monotonic() < deadline; lm_clock_sleep(0.2)) {
		if ((rc = utm_get(vmm, u, name, &info)) < 0)
			return rc;
		if (strcmp(info.status, "stopped") == 0)
			return 0;
		if ((rc = lm_vm_check_cancel(vmm, "while waiting for the guest to shut down")) < 0)
			return lm_error_prefix("%s: ", name);
	}
	/* ... then a power-off for a guest that did not shut down. */
	lm_log(vmm->ctx, LM_LOG_INFO, "%s: still running %.0f s after UTM asked the guest to shut down: powering it off",
	    name, wait);
	return utm_stop_by(vmm, u, name, "--force");
}

/* NAME.utm/config.plist: `Information.UUID`, new for every `utmctl clone` (vm_id.c). */
static int utm_identity(lm_vm_manager *vmm, void *state, const char *name, lm_vm_info *info)
{
	const utm_state *u = state;
	char *path = NULL, *uuid = NULL;
	void *root = NULL;
	plist_t inf, node;
	int rc;

	(void)vmm;
	if ((rc = utm_config(u, name, &path, &root)) == LM_ENOMEM)
		return rc;
	if (rc < 0 || path == NULL) {
		lm_vm_id_why(info, "no config.plist for %s in UTM's Documents (%s)", name, u->documents);
		lm_error_clear();
		return 0;
	}
	inf = plist_dict_get_item((plist_t)root, "Information");
	node = inf != NULL && plist_get_node_type(inf) == PLIST_DICT ? plist_dict_get_item(inf, "UUID") : NULL;
	if (node != NULL && plist_get_node_type(node) == PLIST_STRING)
		plist_get_string_val(node, &uuid);
	if (uuid != NULL && uuid[0] != '\0')
		lm_vm_id_set(info, "utm", uuid, "");
	else
		lm_vm_id_why(info, "%s has no Information.UUID", path);
	free(uuid);
	free(path);
	plist_free((plist_t)root);
	return 0;
}

/* UTM.app runs (a process of this user runs its executable): utmctl would otherwise launch it,
 * which the automatic choice must not do for a VM that is not UTM's. */
static int utm_askable(lm_vm_manager *vmm, void *state, int *askable)
{
	const utm_state *u = state;

	(void)vmm;
	return lm_host_program_running(u->app, askable);
}

/* `utmctl version`: UTM's own version. As one of the automatic choice's candidates (the manager's
 * backend is not this one) not while UTM.app is not running: utmctl would launch it. */
static int utm_version(lm_vm_manager *vmm, void *state, char *buf, size_t len)
{
	const char *args[] = {"version", NULL};
	utm_state *u = state;
	lm_proc_result res;
	int running, rc;

	if (vmm->backend != &lm_vm_backend_utm) {
		if ((rc = utm_askable(vmm, u, &running)) < 0)
			return rc;
		if (!running)
			return lm_error_set(LM_ENOTFOUND, "not asked: UTM.app (%s) is not running, and utmctl would launch it",
			    u->app);
	}

	return lm_vm_version_answer(utm_cmd(vmm, u, args, LM_UTM_QUERY_TIMEOUT, &res), &res, buf, len);
}

/* UTM.app's executable: utmctl is UTM.app/Contents/MacOS/utmctl, or a link to it (Homebrew's cask),
 * and the app's own executable is beside it; else the app in /Applications, where utmctl looks. */
static int app_path(utm_state *u)
{
	char real[PATH_MAX], *slash;
	size_t n, k = strlen(LM_UTM_APP_SUFFIX);

	if (realpath(u->program, real) != NULL && (slash = strrchr(real, '/')) != NULL) {
		*slash = '\0';
		n = strlen(real);
		if (n > k && strcmp(real + n - k, LM_UTM_APP_SUFFIX) == 0)
			return lm_path_join(&u->app, real, "UTM", NULL);
	}
	return (u->app = strdup("/Applications/UTM.app/Contents/MacOS/UTM")) != NULL ? 0 : lm_error_nomem();
}

/* The host's DHCP leases: /var/db/dhcpd_leases; in test builds the simulated host's when
 * LUME_METAL_DHCPD_LEASES names one (an absolute path). */
static const char *leases_path(void)
{
#ifdef LM_TEST_HOOKS
	const char *leases = getenv("LUME_METAL_DHCPD_LEASES");

	if (leases != NULL && leases[0] == '/')
		return leases;
#endif
	return LM_DHCP_LEASES;
}

static const char *option_program(const lm_vm_manager *vmm)
{
	return lm_vm_option(lm_context_options(vmm->ctx)->utmctl_program, LM_VM_UTMCTL_PROGRAM);
}

static int utm_present(lm_vm_manager *vmm)
{
	return lm_vm_program_present(option_program(vmm));
}

static int utm_init(lm_vm_manager *vmm, void **state)
{
	const lm_options *o = lm_context_options(vmm->ctx);
	const char *home = NULL, *program = option_program(vmm);
	char why[512];
	utm_state *u;
	int rc;

	if ((*state = u = calloc(1, sizeof(*u))) == NULL)
		return lm_error_nomem();
	if ((rc = lm_proc_find_program(program, &u->program)) < 0) {
		if (rc == LM_ENOMEM)
			return rc;
		lm_text_format_cut(why, sizeof(why), "%s", lm_error_last()->message);
		/* The app ships it; Homebrew's cask links it onto PATH. */
		if (strchr(program, '/') == NULL && (rc = lm_proc_find_program(LM_UTM_APP, &u->program)) == LM_ENOMEM)
			return rc;
		if (strchr(program, '/') != NULL || rc < 0)
			return lm_error_set(LM_ENOTFOUND, "the utmctl program was not found (%s), nor %s", why, LM_UTM_APP);
	}
	if (lm_paths_home(&home) < 0)
		return lm_error_set(LM_ENOTFOUND, "UTM's documents are unknown: HOME is not set");
	/* UTM is sandboxed: its VMs are bundles in its container's Documents (UTMData.swift). */
	if ((rc = lm_path_join(&u->documents, home, "Library/Containers/com.utmapp.UTM/Data/Documents", NULL)) < 0)
		return rc;
	if ((rc = app_path(u)) < 0)
		return rc;
	if ((u->dhcp_leases = strdup(leases_path())) == NULL)
		return lm_error_nomem();
	/* The address given is UTM's when UTM is the manager asked for, not in the automatic choice. */
	if (o->vm_manager == LM_VM_MANAGER_UTM && o->vm_address != NULL && o->vm_address[0] != '\0') {
		if (!lm_vm_is_ipv4(o->vm_address))
			return lm_error_set(LM_EINVALID, "'%s' is not an IPv4 address", o->vm_address);
		if ((u->address = strdup(o->vm_address)) == NULL)
			return lm_error_nomem();
	}
	return 0;
}

static void utm_release(lm_vm_manager *vmm, void *state)
{
	utm_state *u = state;

	(void)vmm;
	free(u->program);
	free(u->documents);
	free(u->app);
	free(u->dhcp_leases);
	free(u->address);
	free(u);
}

const lm_vm_backend lm_vm_backend_utm = {.name = "utm", .present = utm_present, .init = utm_init, .list = utm_list,
	.get = utm_get, .start = utm_start, .stop = utm_stop, .version = utm_version, .identity = utm_identity,
	.askable = utm_askable, .release = utm_release};
