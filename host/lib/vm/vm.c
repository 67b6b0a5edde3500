/* The VM manager's public entry points: choosing a backend, and the rules every backend follows
 * (never start a VM that is already running, stop only a running one, readiness only by polling).
 * Backends are reached through their tables only (vm_internal.h). */
#include "vm_internal.h"
#include "vm_held.h"
#include "vm_process.h"
#include "str.h"
#include "text.h"
#include "net_words.h"
#include "vm_probe.h"
#include "vm_undo.h"
#include "vm_ready.h"
#include "trace.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static lm_vm_manager *manager_new(lm_context *ctx)
{
	const lm_options *o = lm_context_options(ctx);
	lm_vm_manager *vmm = calloc(1, sizeof(*vmm));

	if (vmm == NULL)
		return NULL;
	vmm->ctx = ctx;
	vmm->connect_timeout = o->connect_timeout > 0 ? o->connect_timeout : 10;
	vmm->command_timeout = o->command_timeout > 0 ? o->command_timeout : 120;
	vmm->ready_timeout = o->ready_timeout > 0 ? o->ready_timeout : 300;
	return vmm;
}

/* The backend the options ask for; any other value is the automatic choice. */
static const lm_vm_backend *backend_of(lm_vm_manager_kind kind)
{
	switch (kind) {
	case LM_VM_MANAGER_LUME_API:
		return &lm_vm_backend_api;
	case LM_VM_MANAGER_LUME_CLI:
		return &lm_vm_backend_cli;
	case LM_VM_MANAGER_TART:
		return &lm_vm_backend_tart;
	case LM_VM_MANAGER_UTM:
		return &lm_vm_backend_utm;
	case LM_VM_MANAGER_NONE:
		return &lm_vm_backend_none;
	default:
		return &lm_vm_backend_auto;
	}
}

int lm_vm_manager_open(lm_vm_manager **out, lm_context *ctx)
{
	lm_vm_manager *vmm;
	int rc;

	*out = NULL;
	if (ctx == NULL)
		return lm_error_set(LM_EINVALID, "lm_vm_manager_open: no context");
	if ((vmm = manager_new(ctx)) == NULL)
		return lm_error_nomem();
	/* auto's init makes its one candidate the manager's backend when only one is there */
	vmm->backend = backend_of(lm_context_options(ctx)->vm_manager);
	if ((rc = vmm->backend->init(vmm, &vmm->state)) < 0) {
		lm_vm_manager_free(vmm);
		return rc;
	}
	*out = vmm;
	return 0;
}

void lm_vm_manager_free(lm_vm_manager *vmm)
{
	if (vmm == NULL)
		return;
	if (vmm->state != NULL)
		vmm->backend->release(vmm, vmm->state);
	lm_vm_reap_children(vmm); /* those still running keep their VM up; they are reaped when they end */
	free(vmm);
}

/* The VM's identity from the files of the backend that answers for it (vm_id.c). */
static int identity_read(lm_vm_manager *vmm, const char *name, lm_vm_info *info)
{
	lm_vm_instance b = lm_vm_backend_for(vmm, name);

	if (b.backend == NULL || b.backend->identity == NULL) {
		lm_vm_id_why(info, "no VM manager runs this VM (%s): lume-metal knows only its address", info->manager);
		return 0;
	}
	return b.backend->identity(vmm, b.state, name, info);
}

int lm_vm_manager_version(lm_vm_manager *vmm, const char *name, char *buf, size_t len)
{
	lm_vm_instance b = lm_vm_backend_for(vmm, name);

	if (len == 0)
		return lm_error_set(LM_EINVALID, "lm_vm_manager_version: no room for the answer");
	buf[0] = '\0';
	if (b.backend == NULL)
		return lm_error_set(LM_ENOTFOUND, "no VM manager is known for %s yet: look the VM up first "
		    "(lm_vm_get)", name != NULL ? name : "(no name)");
	if (b.backend->version == NULL)
		return lm_error_set(LM_ENOTFOUND, "the VM manager %s has no version to tell", b.backend->name);
	return b.backend->version(vmm, b.state, buf, len);
}

int lm_vm_manager_versions(lm_vm_manager *vmm, char *buf, size_t len)
{
	lm_vm_instance list[4];
	size_t i, n = lm_vm_backends_asked(vmm, list, 4), used;
	char version[64];

	buf[0] = '\0';
	for (i = 0; i < n; i++) {
		const lm_vm_backend *b = list[i].backend;
		version[0] = '\0';
		if (b->version != NULL && b->version(vmm, list[i].state, version, sizeof(version)) < 0)
			lm_text_format_cut(version, sizeof(version), "not answering: %s", lm_error_last()->message);
		used = strlen(buf);
		lm_text_format_cut(buf + used, len - used, "%s%s%s%s", i > 0 ? ", " : "", b->name,
		    version[0] ? " " : "", version);
	}
	return 0;
}

const char *lm_vm_manager_name(const lm_vm_manager *vmm)
{
	return (vmm != NULL && vmm->backend != NULL) ? vmm->backend->name : "none";
}

int lm_vm_manager_can_start(const lm_vm_manager *vmm)
{
	return vmm != NULL && vmm->backend != &lm_vm_backend_none;
}

int lm_vm_list(lm_vm_manager *vmm, lm_vm_info **out, size_t *count)
{
	size_t i;
	int rc;

	*out = NULL;
	*count = 0;
	if ((rc = vmm->backend->list(vmm, vmm->state, out, count)) < 0)
		return rc;
	for (i = 0; i < *count; i++)
		lm_vm_fill_identity(&(*out)[i], vmm->backend);
	return 0;
}

int lm_vm_names(lm_context *ctx, char ***out, size_t *count)
{
	lm_vm_manager *vmm = NULL;
	lm_vm_info *vms = NULL;
	char **names = NULL;
	size_t i, n = 0;
	int rc;

	*out = NULL;
	*count = 0;
	if ((rc = lm_vm_manager_open(&vmm, ctx)) < 0 || (rc = lm_vm_list(vmm, &vms, &n)) < 0)
		goto out;
	if ((names = calloc(n + 1, sizeof(*names))) == NULL) {
		rc = lm_error_nomem();
		goto out;
	}
	for (i = 0; i < n; i++)
		if ((names[i] = strdup(vms[i].name)) == NULL) {
			lm_strv_free(names);
			names = NULL;
			rc = lm_error_nomem();
			goto out;
		}
	*out = names;
	*count = n;
out:
	free(vms);
	lm_vm_manager_free(vmm);
	return rc;
}

void lm_vm_names_free(char **names)
{
	lm_strv_free(names);
}

/* What the readiness wait knows of the VM it waits for (vmm->watch): whether this manager's start
 * of it was accepted, and the status of an answer since that said it was not "stopped". Lume
 * answers 202 to every start and starts the VM in the background, with no "starting" state
 * (reference/lume.md): a "stopped" after an accepted start may be the moment before Lume has
 * registered the VM, or a start that failed. The reference does not say how long that moment
 * lasts, so the rule is the conservative one: "stopped" ends the wait only after an answer since
 * the start (or, with no start, since this manager last looked) said the VM was up, or when the
 * manager itself says the host runs as many VMs as it may and the VM is still stopped when asked
 * after that (wait_stopped). Lume-metal's own stop forgets what was seen: that "stopped" is ours. */
static void watch_set(lm_vm_manager *vmm, const char *vm, int started, const char *up)
{
	snprintf(vmm->watch.vm, sizeof(vmm->watch.vm), "%s", vm);
	vmm->watch.started = started;
	snprintf(vmm->watch.up, sizeof(vmm->watch.up), "%s", up);
	vmm->watch.child = 0;
	vmm->watch.child_what = NULL;
}

/* An answer of the manager about vm: its status, when not "stopped", is what was seen up. */
static void watch_seen(lm_vm_manager *vmm, const char *vm, const char *status)
{
	if (strcmp(vmm->watch.vm, vm) != 0)
		watch_set(vmm, vm, 0, "");
	if (status[0] != '\0' && strcmp(status, "stopped") != 0)
		snprintf(vmm->watch.up, sizeof(vmm->watch.up), "%s", status);
}

int lm_vm_get(lm_vm_manager *vmm, const char *name, lm_vm_info *out)
{
	char vm[LM_VM_NAME_MAX];
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = lm_vm_name_normalize(name, vm)) < 0)
		return rc;
	vmm->ssh_probe_err = 0;
	if ((rc = vmm->backend->get(vmm, vmm->state, vm, out)) < 0)
		return rc;
	watch_seen(vmm, vm, out->status);
	lm_vm_fill_identity(out, vmm->backend);
	return identity_read(vmm, vm, out);
}

int lm_vm_start(lm_vm_manager *vmm, const char *name)
{
	char vm[LM_VM_NAME_MAX];
	lm_vm_info info;
	int rc;

	if ((rc = lm_vm_name_normalize(name, vm)) < 0)
		return rc;
	/* Lume answers 202 to every start and rewrites the configuration of a VM that is already
	 * running: look first. */
	if ((rc = vmm->backend->get(vmm, vmm->state, vm, &info)) < 0)
		return rc;
	if (strcmp(info.status, "running") == 0) {
		lm_log(vmm->ctx, LM_LOG_DEBUG, "%s: already running, not started again", vm);
		watch_set(vmm, vm, 0, info.status);
		return 0;
	}
	if (strncmp(info.status, "provisioning", 12) == 0 || strcmp(info.status, "pulling") == 0 ||
	    strcmp(info.status, "stopping") == 0 || strcmp(info.status, "starting") == 0)
		return lm_error_set(LM_EUNSUPPORTED, "%s: cannot start a VM that is %s; its manager has not finished", vm,
		    info.status);
	lm_log(vmm->ctx, LM_LOG_INFO, "%s: starting (%s)", vm, vmm->backend->name);
	memset(&vmm->launch, 0, sizeof(vmm->launch));
	/* A start that fails or is canceled after it launched the VM is watched all the same: the VM
	 * may be coming up (lm_vm_start_launched), and the process it spawned is known to the undo. */
	if ((rc = vmm->backend->start(vmm, vmm->state, vm)) < 0 && !vmm->launch.done)
		return rc;
	watch_set(vmm, vm, 1, "");
	vmm->watch.child = vmm->launch.child;
	vmm->watch.child_what = vmm->launch.what;
	return rc;
}

int lm_vm_start_launched(const lm_vm_manager *vmm, const char *name)
{
	char vm[LM_VM_NAME_MAX];

	if (vmm == NULL || lm_vm_name_normalize(name, vm) < 0)
		return 0;
	return vmm->watch.started && strcmp(vmm->watch.vm, vm) == 0;
}

int lm_vm_process_started(lm_vm_manager *vmm, const char *name, double *at)
{
	lm_vm_instance b;
	char vm[LM_VM_NAME_MAX];

	*at = 0;
	if (!lm_vm_manager_can_start(vmm)) {
		*at = LM_VM_PROCESS_NO_MANAGER;
		return 0;
	}
	b = lm_vm_backend_for(vmm, name);
	if (b.backend == NULL || b.backend->process_started == NULL || lm_vm_name_normalize(name, vm) < 0)
		return 0;
	return b.backend->process_started(vmm, b.state, vm, at);
}

int lm_vm_created_at(lm_vm_manager *vmm, const char *name, double *at)
{
	lm_vm_instance b = lm_vm_backend_for(vmm, name);
	char vm[LM_VM_NAME_MAX];

	*at = 0;
	if (b.backend == NULL || b.backend->created == NULL || lm_vm_name_normalize(name, vm) < 0)
		return 0;
	return b.backend->created(vmm, b.state, vm, at);
}

int lm_vm_status_held(const char *status)
{
	return strcmp(status, "paused") == 0 || strcmp(status, "pausing") == 0 || strcmp(status, "resuming") == 0 ||
	    strcmp(status, "suspended") == 0;
}

int lm_vm_stop(lm_vm_manager *vmm, const char *name)
{
	char vm[LM_VM_NAME_MAX];
	lm_vm_info info;
	double deadline;
	int rc;

	if ((rc = lm_vm_name_normalize(name, vm)) < 0)
		return rc;
	if ((rc = vmm->backend->get(vmm, vmm->state, vm, &info)) < 0)
		return rc;
	/* A paused or suspended VM is stopped too: its saved state goes, and its next start boots. */
	if (strcmp(info.status, "running") != 0 && !lm_vm_status_held(info.status)) {
		lm_log(vmm->ctx, LM_LOG_DEBUG, "%s: %s, nothing to stop", vm, info.status);
		watch_set(vmm, vm, 0, "");
		return 0;
	}
	lm_log(vmm->ctx, LM_LOG_INFO, "%s: stopping (%s, %s)", vm, vmm->backend->name, info.status);
	if ((rc = vmm->backend->stop(vmm, vmm->state, vm)) < 0)
		return rc;
	/* Both of Lume's stops block until the VM is down; confirm it anyway, as long as a command may
	 * take (the VM's process may take a moment to let go of it). */
	deadline = lm_clock_monotonic() + vmm->command_timeout;
	for (;;) {
		if ((rc = vmm->backend->get(vmm, vmm->state, vm, &info)) < 0)
			return rc;
		if (strcmp(info.status, "running") != 0 && !lm_vm_status_held(info.status)) {
			watch_set(vmm, vm, 0, "");
			return 0;
		}
		if (lm_clock_monotonic() >= deadline)
			return lm_error_set(LM_ETIMEOUT, "%s: still %s %g s after its manager said it stopped it", vm,
			    info.status, vmm->command_timeout);
		if ((rc = lm_vm_check_cancel(vmm, "while waiting for the VM to report stopped")) < 0)
			return lm_error_prefix("%s: ", vm);
		lm_clock_sleep(0.2);
	}
}

static int uncancelable(lm_vm_manager *vmm, int (*op)(lm_vm_manager *, const char *), const char *name)
{
	int rc;

	vmm->uncancelable++;
	rc = op(vmm, name);
	vmm->uncancelable--;
	return rc;
}

int lm_vm_stop_undo(lm_vm_manager *vmm, const char *name)
{
	return uncancelable(vmm, lm_vm_stop, name);
}

int lm_vm_start_undo(lm_vm_manager *vmm, const char *name)
{
	return uncancelable(vmm, lm_vm_start, name);
}

/* The stop every manager's own stop sends the process that runs a VM (`tart stop`: SIGINT, SIGKILL
 * after its --timeout, Stop.swift; `lume stop`: SIGINT, SIGKILL after 10 s, VM.swift). */
#define LM_VM_CHILD_GRACE 10.0

int lm_vm_launch_undo(lm_vm_manager *vmm, const char *name, char *said, size_t cap)
{
	char vm[LM_VM_NAME_MAX];
	pid_t child = 0;
	const char *what = "";
	int rc, ended;

	said[0] = '\0';
	if ((rc = lm_vm_name_normalize(name, vm)) < 0)
		return rc;
	if (vmm->watch.started && strcmp(vmm->watch.vm, vm) == 0 && vmm->watch.child > 0) {
		child = vmm->watch.child; /* lm_vm_stop forgets it */
		what = vmm->watch.child_what != NULL ? vmm->watch.child_what : "the VM's process";
	}
	rc = lm_vm_stop_undo(vmm, vm);
	if (child <= 0)
		return rc;
	/* The process it spawned ends once the VM is down; one that has not taken the VM yet (a start
	 * canceled at once) gets what its manager's own stop sends it. */
	ended = lm_vm_child_wait(vmm, child, rc == 0 ? LM_VM_CHILD_GRACE : 0);
	if (!ended) {
		lm_log(vmm->ctx, LM_LOG_DEBUG, "%s: `%s` (PID %ld) still runs: SIGINT, as its manager's stop sends", vm, what,
		    (long)child);
		kill(child, SIGINT);
		if (!(ended = lm_vm_child_wait(vmm, child, LM_VM_CHILD_GRACE))) {
			kill(child, SIGKILL);
			ended = lm_vm_child_wait(vmm, child, LM_VM_CHILD_GRACE);
		}
	}
	snprintf(said, cap, "its `%s` process (PID %ld) %s", what, (long)child,
	    ended ? "ended" : "did NOT end, even after SIGKILL");
	if (rc == 0 && !ended)
		rc = lm_error_set(LM_ERROR, "%s: `%s` (PID %ld) did not end after SIGINT and SIGKILL; end it by hand "
		    "(kill -KILL %ld)", vm, what, (long)child, (long)child);
	return rc;
}

int lm_vm_ssh_probe_error(const lm_vm_manager *vmm)
{
	return vmm != NULL ? vmm->ssh_probe_err : 0;
}

/* What is missing, for the timeout message: the probe's error by name when port 22 refused or
 * could not be reached (not "not reachable yet": that is a boot still going on). */
static void describe_not_ready(const lm_vm_info *info, int probe_err, char *buf, size_t cap)
{
	char words[256];

	if (probe_err != 0 && probe_err != ETIMEDOUT && info->ip[0] != '\0') {
		lm_connect_error_words(probe_err, words, sizeof(words));
		snprintf(buf, cap, "%s at %s, SSH (port 22): %s", info->status[0] ? info->status : "no status", info->ip,
		    words);
	} else if (strcmp(info->status, "running") != 0)
		snprintf(buf, cap, "%s", info->status[0] ? info->status : "no status");
	else if (info->ip[0] == '\0')
		snprintf(buf, cap, "running, no IP address yet");
	else
		snprintf(buf, cap, "running at %s, SSH (port 22) not reachable yet", info->ip);
}

int lm_vm_info_ready(const lm_vm_info *info)
{
	return info != NULL && strcmp(info->status, "running") == 0 && info->ip[0] != '\0' && info->ssh_available;
}

/* While a guest boots again, Lume's answer already has its address (its old DHCP lease) and its
 * check of port 22 is a 2-second TCP connect that the silent guest does not answer
 * (reference/lume.md): each question then costs up to 2 s, during which nothing else is looked
 * at. So once an address is known and SSH is not yet available, the guest's port 22 is tried
 * every 20 ms and the manager is asked again only after BOOT_ASK_SECONDS of that (to notice a VM
 * that stopped or moved); when the port answers, one question (quick now: Lume's own check
 * answers at once) confirms it. */
#define BOOT_ASK_SECONDS 5.0

/* What each wait of the readiness loop shows and asks (lm_context_waiting, should_cancel). */
typedef struct {
	lm_vm_manager *vmm;
	const char *vm;
	double start, reported;
	const char *why;
} ready_wait;

/* One wait of the readiness loop: port 22 of `address` tried every 20 ms for up to `seconds`
 * (1 when it answered), the wait shown and should_cancel asked as at each question. A port that
 * refuses costs the guest nothing (no sshd child); the one that answers is what the manager's own
 * check would find a moment later. NULL or no IPv4 address: the pause alone. */
static int port_within(ready_wait *w, const char *address, double seconds)
{
	double until = lm_clock_monotonic() + seconds, left;
	int probe = address != NULL && lm_vm_is_ipv4(address);

	while ((left = until - lm_clock_monotonic()) > 0) {
		if (probe && lm_vm_port_answers(address, 22, left < 0.02 ? left : 0.02))
			return 1;
		lm_context_waiting(w->vmm->ctx, w->vm, "wait-ready", w->start, &w->reported, w->why);
		if (lm_vm_check_cancel(w->vmm, "while waiting for the VM to be ready") < 0)
			return lm_error_prefix("%s: ", w->vm);
		left = until - lm_clock_monotonic();
		lm_clock_sleep(left < 0.02 ? (left > 0 ? left : 0) : 0.02);
	}
	return 0;
}

/* How often, at most, the manager is asked whether the host runs as many VMs as it may while a VM
 * whose start it accepted stays stopped: Lume's GET /lume/host/status lists its VMs for that,
 * checking port 22 of each running one for up to 2 s, twice for a silent guest
 * (reference/lume.md, corrections of 2026-11). */
#define FULL_ASK_SECONDS 10.0

/* What the wait learnt from the manager about the host's room for one more VM. */
typedef struct {
	double asked;  /* when it was last asked (0: never) */
	int full;      /* it said the host is full: the next answer "stopped" ends the wait */
	char why[400]; /* what it said */
} full_watch;

/* An answer "stopped" in the readiness wait (the rule: watch_set): 0 to wait on, < 0 when the wait
 * ends. Seen up before: something stopped the VM (a person, another program, a stop an earlier
 * lume-metal sent before it was killed), or its process ended. Started and not seen up since: the
 * manager is asked whether the host is full (Lume at Apple's limit answers the start 202 and fails
 * it in the background; reference/lume.md), and the answer after that decides: still stopped, the
 * start failed there; running, it was the moment before Lume registered the VM. */
static int wait_stopped(lm_vm_manager *vmm, const char *vm, full_watch *fw)
{
	lm_vm_instance b;
	int rc;

	if (vmm->watch.up[0] != '\0')
		return lm_error_set(LM_ENOTRUNNING, "%s: stopped while waiting for it to be ready: %s said %s, then stopped "
		    "(something stopped the VM, or its process ended); nothing starts it again by itself", vm,
		    lm_vm_manager_name_for(vmm, vm), vmm->watch.up);
	if (!vmm->watch.started)
		return 0;
	if (fw->full)
		return lm_error_set(LM_ERROR, "%s: still stopped after %s accepted its start: %s; stop another VM, then "
		    "start this one again", vm, lm_vm_manager_name_for(vmm, vm), fw->why);
	b = lm_vm_backend_for(vmm, vm);
	if (b.backend == NULL || b.backend->full == NULL ||
	    (fw->asked > 0 && lm_clock_monotonic() - fw->asked < FULL_ASK_SECONDS))
		return 0;
	fw->asked = lm_clock_monotonic();
	if ((rc = b.backend->full(vmm, b.state, fw->why, sizeof(fw->why))) == LM_ENOMEM)
		return rc;
	if (rc == LM_ECANCELED)
		return lm_error_prefix("%s: ", vm);
	if (rc < 0) {
		lm_log(vmm->ctx, LM_LOG_DEBUG, "%s: stopped after its start; %s could not tell whether the host has room for "
		    "it: %s", vm, b.backend->name, lm_error_last()->message);
		lm_error_clear();
		return 0;
	}
	fw->full = rc;
	return 0;
}

/* Booting at an address its port can be tried at: running, an IPv4 address, SSH not available (yet). */
static int info_booting(const lm_vm_info *info)
{
	return strcmp(info->status, "running") == 0 && lm_vm_is_ipv4(info->ip) && !info->ssh_available;
}

int lm_vm_wait_ready(lm_vm_manager *vmm, const char *name, double timeout, lm_vm_info *out)
{
	return lm_vm_wait_ready_at(vmm, name, timeout, NULL, out);
}

int lm_vm_wait_ready_at(lm_vm_manager *vmm, const char *name, double timeout, const char *address,
    lm_vm_info *out)
{
	char vm[LM_VM_NAME_MAX], why[400];
	full_watch fw = {0, 0, ""};
	lm_vm_info info;
	ready_wait w;
	double start, deadline, delay = 0.05, left, asked;
	int rc;

	if (out != NULL)
		memset(out, 0, sizeof(*out));
	if ((rc = lm_vm_name_normalize(name, vm)) < 0)
		return rc;
	if (timeout <= 0)
		timeout = vmm->ready_timeout;
	start = lm_clock_monotonic();
	deadline = start + timeout;
	if (strcmp(vmm->watch.vm, vm) != 0)
		watch_set(vmm, vm, 0, ""); /* nothing known of it: "stopped" is waited out (watch_set) */
	/* Just started, at the address it had before (its lease): its port first, the manager once
	 * it answers (or after BOOT_ASK_SECONDS), rather than a first question that waits out a
	 * silent guest's 2-second check. */
	w.vmm = vmm;
	w.vm = vm;
	w.start = start;
	w.reported = 0;
	w.why = why;
	if (address != NULL && lm_vm_is_ipv4(address)) {
		snprintf(why, sizeof(why), "started, SSH (port 22) at %s not reachable yet", address);
		left = deadline - start;
		if ((rc = port_within(&w, address, BOOT_ASK_SECONDS < left ? BOOT_ASK_SECONDS : left)) < 0)
			return rc;
	}
	for (;;) {
		vmm->ssh_probe_err = 0;
		asked = lm_clock_monotonic();
		if ((rc = vmm->backend->get(vmm, vmm->state, vm, &info)) < 0)
			return rc;
		lm_trace(vmm->ctx, vm, "ready-ask", asked);
		if (lm_vm_info_ready(&info)) {
			lm_trace(vmm->ctx, vm, "ready-wait", start);
			lm_log(vmm->ctx, LM_LOG_DEBUG, "%s: ready at %s after %.1f s", vm, info.ip, lm_clock_monotonic() - start);
			lm_vm_fill_identity(&info, vmm->backend);
			if ((rc = identity_read(vmm, vm, &info)) < 0)
				return rc;
			if (out != NULL)
				*out = info;
			return 0;
		}
		if (strcmp(info.status, "stopped") == 0) {
			if ((rc = wait_stopped(vmm, vm, &fw)) < 0)
				return rc;
		} else {
			watch_seen(vmm, vm, info.status);
			fw.full = 0;
		}
		describe_not_ready(&info, vmm->ssh_probe_err, why, sizeof(why));
		if (strcmp(info.status, "stopped") == 0 && vmm->watch.started)
			snprintf(why, sizeof(why), "stopped; its start was accepted and it has not run since");
		lm_context_waiting(vmm->ctx, vm, "wait-ready", start, &w.reported, why);
		if ((rc = lm_vm_check_cancel(vmm, "while waiting for the VM to be ready")) < 0)
			return lm_error_prefix("%s: ", vm);
		left = deadline - lm_clock_monotonic();
		if (left <= 0)
			return lm_error_set(LM_ETIMEOUT, "%s: not ready after %g s: %s", vm, timeout, why);
		/* Booting at a known address: its port until it answers (then one quick question), the
		 * manager again after BOOT_ASK_SECONDS. Otherwise (stopped, no address yet) at most a
		 * tenth of a second between questions: each moment between the guest's SSH answering and
		 * the next question is time the user waits for nothing, and such a question is light
		 * (no address, no port check). */
		if (info_booting(&info))
			rc = port_within(&w, info.ip, BOOT_ASK_SECONDS < left ? BOOT_ASK_SECONDS : left);
		else
			rc = port_within(&w, NULL, delay < left ? delay : left);
		if (rc < 0)
			return rc;
		delay = delay * 1.5 > 0.1 ? 0.1 : delay * 1.5;
	}
}
