/* The Tart backend: `tart` run with posix_spawn, never a shell (Sources/tart/Commands/ in
 * cirruslabs/tart, now openai/tart).
 *   state  `tart get NAME --format json`: one object, PascalCase keys, State "running" |
 *          "suspended" | "stopped"; the address from `tart ip NAME` (exit 1: none yet);
 *   start  `tart run --no-graphics NAME` blocks for the VM's life and has no detach flag: it runs
 *          as a detached child in its own session, its output in a log under the state directory,
 *          then `tart ip NAME --wait N`. A VM whose config.json lock is held is never started:
 *          that lock is how Tart itself knows a VM runs (PIDLock.swift);
 *   stop   `tart stop NAME --timeout N`: SIGINT to the `tart run` process, which powers the VM
 *          off (VZVirtualMachine.stop, not a guest shutdown), SIGKILL after N seconds.
 * Exit codes as Tart's: 2 for an unknown VM and for a VM that is not running, 1 for "no IP
 * address found" and everything else. Cirrus Labs' images log in as admin/admin. */
#include "vm_internal.h"
#include "host_process.h"
#include "text.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define LM_TART_QUERY_TIMEOUT 60.0
#define LM_TART_STOP_TIMEOUT 30   /* `tart stop`'s own default before SIGKILL */
#define LM_TART_IP_WAIT 1         /* seconds per `tart ip --wait` while the child is watched */

/* The backend's state. */
typedef struct {
	char *program; /* `tart` */
	char *home;    /* $TART_HOME, else ~/.tart: vms/NAME/config.json is the VM's lock */
} tart_state;

/* Tart prunes its OCI cache on some commands; a query must not do that behind the user's back. */
static const char *const tart_env[] = {"TART_NO_AUTO_PRUNE=1", NULL};
#define TART_ENV .env = tart_env

static int tart_run_cmd(lm_vm_manager *vmm, const tart_state *t, const char *const args[], double timeout, lm_proc_result *res)
{
	const lm_proc_options o = {TART_ENV, .timeout = timeout, .cancel = lm_vm_cancel_ctx(vmm)};

	lm_vm_reap_children(vmm);
	if (lm_proc_run(t->program, args, &o, res) < 0)
		return lm_error_prefix("tart: ");
	return 0;
}

static int has(const lm_proc_result *res, const char *needle)
{
	return (res->err != NULL && strstr(res->err, needle) != NULL) ||
	    (res->out != NULL && strstr(res->out, needle) != NULL);
}

/* A failed `tart WHAT` as an error, by Tart's exit codes and texts (VMStorageHelper.swift). */
static int tart_error(const tart_state *t, const lm_proc_result *res, const char *what, const char *name)
{
	char line[200];

	if (res->timed_out)
		return lm_error_set(LM_ETIMEOUT, "tart %s: no answer in time; the tart process was killed", what);
	lm_vm_failure_line(res, line, sizeof(line));
	if (has(res, "does not exist"))
		return lm_error_set(LM_ENOTFOUND, "%s: Tart has no such VM (its VMs are in %s/vms): tart %s: %s (exit %d)",
		    name, t->home, what, line, res->exit_code);
	return lm_error_set(LM_ERROR, "tart %s: %s (exit %d)", what, line[0] ? line : "failed without a message",
	    res->exit_code);
}

/* Tart's State -> ours ("running" is the word the shared rules look for). */
static void set_state(lm_vm_info *out, const cJSON *obj)
{
	const cJSON *state = cJSON_GetObjectItemCaseSensitive(obj, "State");
	const cJSON *running = cJSON_GetObjectItemCaseSensitive(obj, "Running");

	if (cJSON_IsString(state))
		snprintf(out->status, sizeof(out->status), "%s", state->valuestring);
	else /* older Tart: only the Running bool */
		snprintf(out->status, sizeof(out->status), "%s", cJSON_IsTrue(running) ? "running" : "stopped");
}

/* `tart ip NAME` (no wait): the address, or nothing yet (exit 1). */
static int tart_ip(lm_vm_manager *vmm, const tart_state *t, const char *name, lm_vm_info *out)
{
	const char *args[] = {"ip", name, NULL};
	lm_proc_result res;
	const char *w;
	char addr[64];
	size_t n;
	lm_scan s;
	int rc;

	if ((rc = tart_run_cmd(vmm, t, args, LM_TART_QUERY_TIMEOUT, &res)) < 0)
		return rc;
	lm_scan_init(&s, res.out, strlen(res.out));
	if (res.exit_code == 0 && !res.timed_out && lm_scan_token(&s, LM_SCAN_SPACE, &w, &n) == 1) {
		/* its first word, cut at 63 bytes as ever: an IPv4 address is at most 15 */
		if (n >= sizeof(addr))
			n = sizeof(addr) - 1;
		memcpy(addr, w, n);
		addr[n] = '\0';
		rc = lm_vm_address_answer("tart ip", name, addr, out->ip, sizeof(out->ip));
	}
	lm_proc_result_dispose(&res);
	return rc;
}

static int tart_get(lm_vm_manager *vmm, void *state, const char *name, lm_vm_info *out)
{
	const tart_state *t = state;
	const char *args[] = {"get", name, "--format", "json", NULL};
	char what[LM_VM_NAME_MAX + 8], excerpt[120];
	const cJSON *os;
	lm_proc_result res;
	cJSON *doc = NULL;
	int rc;

	snprintf(what, sizeof(what), "get %s", name);
	if ((rc = tart_run_cmd(vmm, t, args, LM_TART_QUERY_TIMEOUT, &res)) < 0)
		return rc;
	if (res.exit_code != 0 || res.timed_out) {
		rc = tart_error(t, &res, what, name);
		lm_proc_result_dispose(&res);
		return rc;
	}
	/* `tart get` prints one object, not an array (Get.swift). */
	if (lm_vm_json_find(res.out, cJSON_Object, &doc) < 0) {
		lm_vm_excerpt(res.out, excerpt, sizeof(excerpt));
		lm_proc_result_dispose(&res);
		return lm_error_set(LM_ERROR, "tart %s: expected a JSON object on its output, found %s%s%s", what,
		    excerpt[0] ? "'" : "nothing", excerpt, excerpt[0] ? "'" : "");
	}
	lm_proc_result_dispose(&res);
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", name);
	set_state(out, doc);
	if (cJSON_IsString(os = cJSON_GetObjectItemCaseSensitive(doc, "OS")))
		snprintf(out->os, sizeof(out->os), "%s", strcmp(os->valuestring, "darwin") == 0 ? "macOS" : os->valuestring);
	lm_vm_display_from_json(doc, "Display", out);
	cJSON_Delete(doc);
	if (strcmp(out->status, "running") == 0 && (rc = tart_ip(vmm, t, name, out)) < 0)
		return rc;
	vmm->ssh_probe_err = lm_vm_probe_ssh(out);
	return 0;
}

static int tart_list(lm_vm_manager *vmm, void *state, lm_vm_info **out, size_t *count)
{
	const tart_state *t = state;
	const char *args[] = {"list", "--source", "local", "--format", "json", NULL};
	lm_proc_result res;
	const cJSON *item, *name;
	cJSON *doc = NULL;
	lm_vm_info *list;
	size_t n = 0;
	int rc;

	if ((rc = tart_run_cmd(vmm, t, args, LM_TART_QUERY_TIMEOUT, &res)) < 0)
		return rc;
	if (res.exit_code != 0 || res.timed_out) {
		rc = tart_error(t, &res, "list", "");
		lm_proc_result_dispose(&res);
		return rc;
	}
	rc = lm_vm_json_find(res.out, cJSON_Array, &doc);
	lm_proc_result_dispose(&res);
	if (rc < 0)
		return lm_error_set(LM_ERROR, "tart list: expected a JSON array on its output");
	if ((list = calloc((size_t)cJSON_GetArraySize(doc) + 1, sizeof(*list))) == NULL) {
		cJSON_Delete(doc);
		return lm_error_nomem();
	}
	cJSON_ArrayForEach(item, doc) {
		name = cJSON_GetObjectItemCaseSensitive(item, "Name");
		if (!cJSON_IsString(name) || strlen(name->valuestring) >= LM_VM_NAME_MAX)
			continue;
		snprintf(list[n].name, sizeof(list[n].name), "%s", name->valuestring);
		set_state(&list[n], item);
		if (strcmp(list[n].status, "running") == 0 && (rc = tart_ip(vmm, t, list[n].name, &list[n])) < 0)
			break;
		(void)lm_vm_probe_ssh(&list[n]);
		n++;
	}
	cJSON_Delete(doc);
	if (rc < 0) {
		free(list);
		return rc;
	}
	*out = list;
	*count = n;
	return 0;
}

/* The PID holding the VM's config.json lock (F_GETLK, as VMDirectory.running() asks), 0: none. */
static long lock_holder(const tart_state *t, const char *name)
{
	struct flock fl;
	char *path;
	long pid = 0;
	int fd;

	if (lm_path_join(&path, t->home, "vms", name, "config.json", NULL) < 0)
		return 0;
	if ((fd = open(path, O_RDWR | O_CLOEXEC)) >= 0) {
		memset(&fl, 0, sizeof(fl));
		fl.l_type = F_WRLCK;
		fl.l_whence = SEEK_SET;
		if (fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK)
			pid = fl.l_pid > 0 ? (long)fl.l_pid : -1;
		close(fd);
	}
	free(path);
	return pid;
}

/* The `tart run` process holding the VM's lock is the VM's process (Tart's Run.swift runs the
 * VZVirtualMachine in it): its start, as the host's process table says. */
static int tart_process_started(lm_vm_manager *vmm, void *state, const char *name, double *at)
{
	long pid = lock_holder(state, name);

	(void)vmm;
	*at = 0;
	return pid > 0 ? lm_host_process_started(pid, at) : 0;
}

/* The last non-empty line of the `tart run` log, for a child that ended at once. */
static void log_tail(const char *path, char *buf, size_t cap)
{
	lm_proc_result fake;
	FILE *f = fopen(path, "r");
	char *text;
	long len;

	buf[0] = '\0';
	if (f == NULL)
		return;
	if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) > 0 && fseek(f, len > 4096 ? len - 4096 : 0, SEEK_SET) == 0 &&
	    (text = calloc(1, 4097)) != NULL) {
		size_t n = fread(text, 1, 4096, f);
		text[n] = '\0';
		memset(&fake, 0, sizeof(fake));
		fake.out = text;
		fake.err = "";
		lm_vm_failure_line(&fake, buf, cap);
		free(text);
	}
	fclose(f);
}

static int tart_start(lm_vm_manager *vmm, void *state, const char *name)
{
	const tart_state *t = state;
	const char *args[] = {"run", "--no-graphics", name, NULL};
	char wait_s[16], what[LM_VM_NAME_MAX + 24], line[200], file[LM_VM_NAME_MAX + 16];
	const char *ip_args[] = {"ip", name, "--wait", wait_s, NULL};
	char *logs = NULL, *log = NULL;
	lm_proc_result res;
	double deadline = lm_clock_monotonic() + vmm->ready_timeout;
	lm_proc_options o = {TART_ENV};
	long holder;
	pid_t pid;
	int status, rc;

	if ((holder = lock_holder(t, name)) != 0)
		return lm_error_set(LM_EVMOWNER, "%s: its config.json (%s/vms/%s) is locked by %s%ld: the VM runs already "
		    "(a `tart run` process holds that lock while the VM runs); not started again", name, t->home,
		    name, holder > 0 ? "PID " : "", holder > 0 ? holder : 0);
	snprintf(file, sizeof(file), "tart-run-%s.log", name); /* a valid name: it fits */
	if ((rc = lm_path_join(&logs, lm_context_state_dir(vmm->ctx), "logs", NULL)) < 0 ||
	    (rc = lm_path_join(&log, logs, file, NULL)) < 0) {
		free(logs);
		return rc;
	}
	/* Private, like the state directory it is in (created here when nothing else has yet). */
	if ((mkdir(lm_context_state_dir(vmm->ctx), 0700) < 0 && errno != EEXIST) || (mkdir(logs, 0700) < 0 && errno != EEXIST)) {
		rc = lm_error_set(LM_EIO, "%s: cannot create it: %s", logs, strerror(errno));
		goto out;
	}
	lm_vm_reap_children(vmm);
	o.log = log;
	if ((rc = lm_proc_spawn_detached(t->program, args, &o, &pid)) < 0) {
		rc = lm_error_prefix("tart run %s: ", name);
		goto out;
	}
	/* Launched: a start canceled from here on is undone by stopping the VM and waiting for this
	 * process to end (lm_vm_launch_undo); in a session of its own, it never sees the terminal's ^C
	 * and would outlive us, running the VM. */
	lm_vm_note_launch(vmm, pid, "tart run");
	lm_log(vmm->ctx, LM_LOG_DEBUG, "%s: `tart run --no-graphics` running as PID %ld, its output in %s", name,
	    (long)pid, log);
	snprintf(wait_s, sizeof(wait_s), "%d", LM_TART_IP_WAIT);
	snprintf(what, sizeof(what), "ip %s --wait %d", name, LM_TART_IP_WAIT);
	for (;;) {
		/* `tart run` that ends fails to start (an unknown VM, the lock taken meanwhile, the
		 * host's VM limit): its own words are in the log. */
		if (waitpid(pid, &status, WNOHANG) == pid) {
			memset(&vmm->launch, 0, sizeof(vmm->launch)); /* it ran nothing */
			log_tail(log, line, sizeof(line));
			rc = lm_error_set(LM_ERROR, "tart run --no-graphics %s ended at once (exit %d): %s (log: %s)", name,
			    WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
			    line[0] ? line : "no message", log);
			goto out;
		}
		if ((rc = tart_run_cmd(vmm, t, ip_args, LM_TART_QUERY_TIMEOUT, &res)) < 0)
			break;
		if (res.exit_code == 0 && !res.timed_out) {
			lm_proc_result_dispose(&res);
			break;
		}
		if (res.exit_code != 1 || res.timed_out) { /* 1: no IP address yet; anything else is an answer */
			rc = tart_error(t, &res, what, name);
			lm_proc_result_dispose(&res);
			break;
		}
		lm_proc_result_dispose(&res);
		if ((rc = lm_vm_check_cancel(vmm, "while waiting for the Tart VM's address")) < 0)
			break;
		if (lm_clock_monotonic() >= deadline)
			break; /* the shared readiness wait reports what is missing */
	}
	lm_vm_adopt_child(vmm, pid);
out:
	free(logs);
	free(log);
	return rc;
}

static int tart_stop(lm_vm_manager *vmm, void *state, const char *name)
{
	const tart_state *t = state;
	int seconds = vmm->command_timeout < LM_TART_STOP_TIMEOUT ? (int)vmm->command_timeout : LM_TART_STOP_TIMEOUT;
	char timeout[16], what[LM_VM_NAME_MAX + 24];
	const char *args[] = {"stop", name, "--timeout", timeout, NULL};
	lm_proc_result res;
	int rc;

	snprintf(timeout, sizeof(timeout), "%d", seconds > 0 ? seconds : 1);
	snprintf(what, sizeof(what), "stop %s --timeout %s", name, timeout);
	if ((rc = tart_run_cmd(vmm, t, args, (double)seconds + LM_TART_QUERY_TIMEOUT, &res)) < 0)
		return rc;
	if (res.exit_code == 2 && has(&res, "is not running"))
		rc = 0; /* stopped meanwhile: what was asked for */
	else if (res.exit_code != 0 || res.timed_out)
		rc = tart_error(t, &res, what, name);
	lm_proc_result_dispose(&res);
	lm_vm_reap_children(vmm);
	return rc;
}

static void tart_release(lm_vm_manager *vmm, void *state)
{
	tart_state *t = state;

	(void)vmm;
	free(t->program);
	free(t->home);
	free(t);
}

static int tart_version(lm_vm_manager *vmm, void *state, char *buf, size_t len)
{
	const char *args[] = {"--version", NULL};
	lm_proc_result res;

	return lm_vm_version_answer(tart_run_cmd(vmm, state, args, vmm->command_timeout, &res), &res, buf, len);
}

/* TART_HOME/vms/NAME/config.json: `ecid` (the machine identifier's data) alone (vm_id.c). */
static int tart_identity(lm_vm_manager *vmm, void *state, const char *name, lm_vm_info *info)
{
	const tart_state *t = state;
	char *path;
	int rc;

	(void)vmm;
	if ((rc = lm_path_join(&path, t->home, "vms", name, "config.json", NULL)) < 0) {
		if (rc == LM_ENOMEM)
			return rc;
		lm_vm_id_why(info, "%s", lm_error_last()->message);
		lm_error_clear();
		return 0;
	}
	if ((rc = lm_vm_id_from_json(info, "tart", path, NULL, "ecid")) == 0)
		lm_vm_id_why(info, "%s does not exist", path);
	free(path);
	return rc == LM_ENOMEM ? rc : 0;
}

static const char *option_program(const lm_vm_manager *vmm)
{
	return lm_vm_option(lm_context_options(vmm->ctx)->tart_program, LM_VM_TART_PROGRAM);
}

static int tart_present(lm_vm_manager *vmm)
{
	return lm_vm_program_present(option_program(vmm));
}

static int tart_init(lm_vm_manager *vmm, void **state)
{
	const char *home = getenv("TART_HOME"), *user_home = NULL;
	char why[512];
	tart_state *t;
	int rc;

	if ((*state = t = calloc(1, sizeof(*t))) == NULL)
		return lm_error_nomem();
	if ((rc = lm_proc_find_program(option_program(vmm), &t->program)) < 0) {
		if (rc == LM_ENOMEM)
			return rc;
		lm_text_format_cut(why, sizeof(why), "%s", lm_error_last()->message);
		return lm_error_set(LM_ENOTFOUND, "the tart program was not found (%s)", why);
	}
	/* Tart's home: $TART_HOME, else ~/.tart (Config.swift). */
	if (home != NULL && home[0] != '\0') {
		if ((t->home = strdup(home)) == NULL)
			return lm_error_nomem();
	} else if (lm_paths_home(&user_home) == 0) {
		if ((rc = lm_path_join(&t->home, user_home, ".tart", NULL)) < 0)
			return rc;
	} else {
		return lm_error_set(LM_ENOTFOUND, "Tart's home is unknown: neither TART_HOME nor HOME is set");
	}
	return 0;
}

const lm_vm_backend lm_vm_backend_tart = {.name = "tart", .account = "admin", .present = tart_present,
	.init = tart_init, .list = tart_list, .get = tart_get, .start = tart_start, .stop = tart_stop,
	.version = tart_version, .identity = tart_identity, .process_started = tart_process_started,
	.release = tart_release};
