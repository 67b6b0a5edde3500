/* The Lume CLI backend: `lume` run with posix_spawn (never a shell), quiet and without telemetry
 * (lm_vm_lume_env), its JSON found among the log lines it prints on stdout. It never stops a VM that
 * Lume's server runs: `lume stop` would end the server (see cli_stop). */
#include "vm_internal.h"
#include "host_process.h"
#include "lume_common.h"
#include "text.h"
#include "trace.h"
#include "str.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define LM_CLI_QUERY_TIMEOUT 60.0 /* ls/get: Lume probes SSH of running VMs (2 s each) */
#define LM_CLI_STOP_MIN 60.0
#define LM_CLI_STOP_GRACE 10.0    /* Lume's stop: SIGINT, then SIGKILL after 10 s (VM.swift) */
#define LM_LUME_MAX_VMS 2         /* Apple's limit of macOS VMs per host; Lume's server says max_vms 2
                                     (reference/lume.md) */

/* The backend's state. */
typedef struct {
	char *program;              /* absolute or relative path of `lume` */
	int old_lume;               /* -1 unknown, 0 has `run --detach`, 1 older than 0.5.0 */
	lm_vm_lume_storage storage; /* `lume config storage list`, asked once */
} cli_state;

/* Run `lume ARGS...`; argv excludes the program. vm_owner: it leaves a VM's owner behind (proc.h). */
static int cli_run_as(lm_vm_manager *vmm, const cli_state *s, const char *const args[], double timeout, int vm_owner,
    lm_proc_result *res)
{
	const lm_proc_options o = {.env = lm_vm_lume_env, .timeout = timeout, .vm_owner = vm_owner,
	    .cancel = lm_vm_cancel_ctx(vmm)};

	double t0 = lm_clock_monotonic();
	int rc;

	lm_vm_reap_children(vmm);
	rc = lm_proc_run(s->program, args, &o, res);
	lm_trace_request(vmm->ctx, "vm-command", "lume", args[0], t0);
	return rc < 0 ? lm_error_prefix("lume: ") : 0;
}

static int cli_run(lm_vm_manager *vmm, const cli_state *s, const char *const args[], double timeout,
    lm_proc_result *res)
{
	return cli_run_as(vmm, s, args, timeout, 0, res);
}

static int contains(const lm_proc_result *res, const char *needle)
{
	return (res->out != NULL && strstr(res->out, needle) != NULL) ||
	    (res->err != NULL && strstr(res->err, needle) != NULL);
}

/* A failed command as an error: "lume get my-vm: Virtual machine not found: my-vm (exit 1)". */
static int cli_error(const lm_proc_result *res, const char *what)
{
	char line[200];

	if (res->timed_out)
		return lm_error_set(LM_ETIMEOUT, "lume %s: no answer in time; the lume process was killed", what);
	lm_vm_failure_line(res, line, sizeof(line));
	return lm_error_set(contains(res, "not found") ? LM_ENOTFOUND : LM_ERROR, "lume %s: %s (exit %d)", what,
	    line[0] ? line : "failed without a message", res->exit_code);
}

static int cli_json(lm_vm_manager *vmm, const cli_state *s, const char *const args[], const char *what, cJSON **doc)
{
	lm_proc_result res;
	char excerpt[120];
	int rc;

	if ((rc = cli_run(vmm, s, args, LM_CLI_QUERY_TIMEOUT, &res)) < 0)
		return rc;
	if (res.exit_code != 0 || res.timed_out) {
		rc = cli_error(&res, what);
	} else if (lm_vm_json_find(res.out, cJSON_Array, doc) < 0) {
		lm_vm_excerpt(res.out, excerpt, sizeof(excerpt));
		rc = lm_error_set(LM_ERROR, "lume %s: expected a JSON array on its output, found %s%s%s", what,
		    excerpt[0] ? "'" : "nothing", excerpt, excerpt[0] ? "'" : "");
	}
	lm_proc_result_dispose(&res);
	return rc;
}

static int cli_list(lm_vm_manager *vmm, void *state, lm_vm_info **out, size_t *count)
{
	const char *args[] = {"ls", "--format", "json", NULL};
	cJSON *doc;
	int rc;

	if ((rc = cli_json(vmm, state, args, "ls", &doc)) < 0)
		return rc;
	rc = lm_vm_info_array_from_json(doc, out, count, "lume ls");
	cJSON_Delete(doc);
	return rc;
}

/* Is the host full? The CLI has no host status (the server's GET /lume/host/status): `lume ls`
 * counts Lume's running VMs, which are at most those that run (Tart's and UTM's are not listed),
 * so a count that reaches Apple's limit is certain and a lower one says nothing. Asked only when a
 * VM whose `lume run --detach` was accepted stays stopped (vm.c): that relaunched `lume run`
 * fails in the background, and `--detach` exits 0 whatever happens (reference/lume.md). */
static int cli_full(lm_vm_manager *vmm, void *state, char *why, size_t cap)
{
	lm_vm_info *vms = NULL;
	char names[256] = "";
	size_t i, n = 0, used;
	int running = 0, rc;

	why[0] = '\0';
	if ((rc = cli_list(vmm, state, &vms, &n)) < 0)
		return rc;
	for (i = 0; i < n; i++)
		if (strcmp(vms[i].status, "running") == 0) {
			used = strlen(names);
			lm_text_format_cut(names + used, sizeof(names) - used, "%s%s", running > 0 ? ", " : "", vms[i].name);
			running++;
		}
	free(vms);
	if (running < LM_LUME_MAX_VMS)
		return 0;
	lm_text_format_cut(why, cap, "`lume ls` shows %d VMs running (%s): Apple's limit of %d macOS VMs per host, "
	    "no slot available", running, names, LM_LUME_MAX_VMS);
	return 1;
}

static int cli_get(lm_vm_manager *vmm, void *state, const char *name, lm_vm_info *out)
{
	const char *args[] = {"get", name, "--format", "json", NULL};
	char what[LM_VM_NAME_MAX + 8];
	cJSON *doc;
	int rc;

	snprintf(what, sizeof(what), "get %s", name);
	if ((rc = cli_json(vmm, state, args, what, &doc)) < 0)
		return rc;
	/* `lume get` prints a one-element array. */
	if (cJSON_GetArraySize(doc) != 1)
		rc = lm_error_set(LM_ERROR, "lume %s: expected one VM, found %d", what, cJSON_GetArraySize(doc));
	else
		rc = lm_vm_info_from_json(cJSON_GetArrayItem(doc, 0), out, "lume get");
	cJSON_Delete(doc);
	if (rc == 0 && strcmp(out->name, name) != 0)
		rc = lm_error_set(LM_ERROR, "lume %s: answered about another VM ('%s')", what, out->name);
	return rc;
}

/* "lume 0.4.1": MAJOR.MINOR, the first number of the answer and the one after its dot; -1 when
 * that is not there (or past INT_MAX). */
static int version_pair(const char *out, uint64_t *major, uint64_t *minor)
{
	size_t len = strlen(out), i = 0;
	lm_scan s;

	while (i < len && (out[i] < '0' || out[i] > '9'))
		i++;
	lm_scan_init(&s, out + i, len - i);
	return lm_scan_u64(&s, INT_MAX, major) == 0 && lm_scan_skip(&s, ".") && lm_scan_u64(&s, INT_MAX, minor) == 0 ?
	    0 : -1;
}

/* Is this `lume` older than 0.5.0 (no `run --detach`)? Asks `lume --version` once. */
static int cli_is_old(lm_vm_manager *vmm, cli_state *s)
{
	const char *args[] = {"--version", NULL};
	lm_proc_result res;
	uint64_t major, minor;

	if (s->old_lume >= 0)
		return s->old_lume;
	if (cli_run(vmm, s, args, LM_CLI_QUERY_TIMEOUT, &res) < 0)
		return 0;
	if (res.exit_code == 0 && version_pair(res.out, &major, &minor) == 0)
		s->old_lume = (major == 0 && minor < 5) ? 1 : 0;
	lm_proc_result_dispose(&res);
	return s->old_lume == 1;
}

/* Lume < 0.5.0: `lume run NAME --no-display` blocks while the VM runs, so it becomes a detached
 * child in its own session. A child that fails at once is reported. */
static int cli_start_child(lm_vm_manager *vmm, const cli_state *s, const char *name)
{
	const char *args[] = {"run", name, "--no-display", NULL};
	const lm_proc_options o = {.env = lm_vm_lume_env};
	pid_t pid;
	double deadline;
	int status, rc;

	lm_vm_reap_children(vmm);
	if ((rc = lm_proc_spawn_detached(s->program, args, &o, &pid)) < 0)
		return lm_error_prefix("lume run %s: ", name);
	lm_vm_note_launch(vmm, pid, "lume run"); /* its own session: the terminal's ^C never reaches it */
	lm_log(vmm->ctx, LM_LOG_DEBUG, "%s: `lume run --no-display` running as PID %ld", name, (long)pid);
	deadline = lm_clock_monotonic() + 0.5;
	while (lm_clock_monotonic() < deadline) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			memset(&vmm->launch, 0, sizeof(vmm->launch)); /* it holds nothing now */
			if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
				return 0;
			return lm_error_set(LM_ERROR, "lume run %s --no-display: exited at once (status %d); try it by hand",
			    name, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
		}
		lm_clock_sleep(0.05);
	}
	lm_vm_adopt_child(vmm, pid);
	return 0;
}

static int cli_start(lm_vm_manager *vmm, void *state, const char *name)
{
	cli_state *s = state;
	const char *args[] = {"run", name, "--detach", NULL};
	lm_proc_result res;
	char what[LM_VM_NAME_MAX + 16];
	int rc;

	if (s->old_lume == 1)
		return cli_start_child(vmm, s, name);
	snprintf(what, sizeof(what), "run %s --detach", name);
	/* Its relaunched `lume run` holds the VM: it must outlive a CI job (proc.h). It may have been
	 * relaunched before `lume run --detach` is canceled or times out: launched until it answers
	 * that it failed (DetachedRun.swift exits non-zero only when it could not relaunch). */
	lm_vm_note_launch(vmm, 0, NULL);
	if ((rc = cli_run_as(vmm, s, args, LM_CLI_QUERY_TIMEOUT, 1, &res)) < 0)
		return rc;
	if (res.exit_code == 0 && !res.timed_out) {
		s->old_lume = 0;
		lm_proc_result_dispose(&res);
		return 0;
	}
	if (!res.timed_out && res.exit_code < 128) /* an answer, not a kill */
		memset(&vmm->launch, 0, sizeof(vmm->launch));
	/* Lume < 0.5.0 refuses the unknown option (exit 64, bad arguments). */
	if (!res.timed_out && (res.exit_code == 64 || contains(&res, "--detach")) && cli_is_old(vmm, s)) {
		lm_proc_result_dispose(&res);
		lm_log(vmm->ctx, LM_LOG_INFO, "%s: this lume has no `run --detach` (older than 0.5.0); running it in the "
		    "background instead", name);
		return cli_start_child(vmm, s, name);
	}
	rc = cli_error(&res, what);
	lm_proc_result_dispose(&res);
	return rc;
}

/* One of our own `lume run` children (Lume < 0.5.0) holds the VM: end it as `lume stop` would
 * (SIGINT, SIGKILL after 10 s), reaping it. `lume stop` itself would wait out its ten seconds on
 * the zombie, which only we can reap. */
static int stop_own_child(lm_vm_manager *vmm, size_t slot, const char *name)
{
	pid_t pid = vmm->children[slot];
	double deadline = lm_clock_monotonic() + LM_CLI_STOP_GRACE;
	int status;

	lm_log(vmm->ctx, LM_LOG_DEBUG, "%s: held by our `lume run` child (PID %ld): SIGINT", name, (long)pid);
	kill(pid, SIGINT);
	while (waitpid(pid, &status, WNOHANG) == 0) {
		/* Canceled: it is stopped at once rather than after its grace. */
		if (lm_clock_monotonic() >= deadline || lm_vm_check_cancel(vmm, "while stopping it") < 0) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			break;
		}
		lm_clock_sleep(0.05);
	}
	vmm->children[slot] = 0;
	return 0;
}

/* Lume's VM storage directories, as `lume config storage list` prints them
 * ("  - NAME: PATH (default)"), asked once; without an answer, Lume's default ~/.lume. */
static int cli_locations(lm_vm_manager *vmm, cli_state *s)
{
	const char *args[] = {"config", "storage", "list", NULL};
	lm_proc_result res;
	const char *line, *path, *end;
	char *copy;
	size_t n, pn;
	lm_scan lines;
	int rc = 0;

	if (s->storage.locations != NULL)
		return 0;
	if ((rc = lm_vm_lume_storage_add(&s->storage, NULL)) < 0)
		return rc;
	if ((rc = cli_run(vmm, s, args, LM_CLI_QUERY_TIMEOUT, &res)) < 0) {
		if (rc == LM_ENOMEM)
			return rc;
		lm_text_format_cut(s->storage.why, sizeof(s->storage.why), "%s", lm_error_last()->message);
		lm_error_clear();
		rc = 0;
	} else {
		if (res.exit_code != 0)
			lm_text_format_cut(s->storage.why, sizeof(s->storage.why), "`lume config storage list` "
			    "exited %d", res.exit_code);
		/* "  - NAME: PATH", " (default)" after one */
		lm_scan_init(&lines, res.out, res.exit_code == 0 ? strlen(res.out) : 0);
		while (rc == 0 && lm_scan_line(&lines, &line, &n) != 0) {
			if (n < 4 || memcmp(line, "  - ", 4) != 0 || (path = lm_text_find(line, n, ": ")) == NULL)
				continue;
			path += 2;
			pn = n - (size_t)(path - line);
			if ((end = lm_text_find(path, pn, " (default)")) != NULL && end + 10 == path + pn)
				pn -= 10;
			if ((copy = lm_text_dupn(path, pn)) == NULL)
				rc = lm_error_nomem();
			else
				rc = lm_vm_lume_storage_add(&s->storage, copy);
			free(copy);
		}
		lm_proc_result_dispose(&res);
	}
	return rc < 0 ? rc : lm_vm_lume_storage_default(&s->storage);
}

static int cli_identity(lm_vm_manager *vmm, void *state, const char *name, lm_vm_info *info)
{
	cli_state *s = state;
	int rc;

	if ((rc = cli_locations(vmm, s)) < 0)
		return rc;
	return lm_vm_lume_identity(&s->storage, name, info, "`lume config storage list`");
}

static int cli_created(lm_vm_manager *vmm, void *state, const char *name, double *at)
{
	cli_state *s = state;
	int rc;

	*at = 0;
	if ((rc = cli_locations(vmm, s)) < 0)
		return rc;
	return lm_vm_lume_created(&s->storage, name, at);
}

static int cli_stored(lm_vm_manager *vmm, void *state, const char *name)
{
	cli_state *s = state;
	int rc;

	if ((rc = cli_locations(vmm, s)) < 0)
		return rc;
	return lm_vm_lume_stored(&s->storage, name);
}

/* The process that holds `name` (its config.json in any of Lume's storage locations). */
static int cli_holder(lm_vm_manager *vmm, cli_state *s, const char *name, lm_host_process *holder)
{
	const char *files[LM_VM_MAX_LOCATIONS] = {NULL}; /* none when Lume has no location */
	char *paths[LM_VM_MAX_LOCATIONS];
	size_t n, i;
	int rc;

	if ((rc = cli_locations(vmm, s)) < 0)
		return rc;
	for (n = 0; s->storage.locations[n] != NULL; n++) {
		if ((rc = lm_path_join(&paths[n], s->storage.locations[n], name, "config.json", NULL)) < 0) {
			for (i = 0; i < n; i++)
				free(paths[i]);
			return rc;
		}
		files[n] = paths[n];
	}
	rc = lm_host_vm_holder(files, n, holder);
	for (i = 0; i < n; i++)
		free(paths[i]);
	return rc;
}

/* A VM the CLI started is run by its own `lume run` process (VM.swift run(), which holds
 * config.json while the VM runs): that process's start is the VM's. A VM held by `lume serve`
 * shares that server's process with every VM it started since: its start says nothing of this
 * one's (0, not visible). */
static int cli_process_started(lm_vm_manager *vmm, void *state, const char *name, double *at)
{
	lm_host_process holder;
	int rc;

	*at = 0;
	if ((rc = cli_holder(vmm, state, name, &holder)) < 0)
		return rc;
	return holder.pid > 0 && strcmp(holder.subcommand, "run") == 0 ? lm_host_process_started(holder.pid, at) : 0;
}

static int cli_stop(lm_vm_manager *vmm, void *state, const char *name)
{
	cli_state *s = state;
	const char *args[] = {"stop", name, NULL};
	double timeout = vmm->command_timeout > LM_CLI_STOP_MIN ? vmm->command_timeout : LM_CLI_STOP_MIN;
	char what[LM_VM_NAME_MAX + 8];
	lm_host_process holder;
	lm_proc_result res;
	size_t i;
	int rc;

	/* `lume stop` signals whatever holds the VM (VM.swift): only a `lume run` process, which runs
	 * this one VM, may get that signal. Lume's server runs every VM started over HTTP; it has
	 * no SIGINT handler and would end, and every VM with it. */
	if ((rc = cli_holder(vmm, s, name, &holder)) < 0)
		return rc;
	if (holder.pid > 0 && strcmp(holder.subcommand, "run") != 0)
		return lm_error_set(LM_EVMOWNER, "%s is held by PID %ld (%s), not by a `lume run` process of its own: "
		    "`lume stop %s` would send that process SIGINT, and it would end with every VM it runs. %s was "
		    "not stopped; the Lume API of that server stops it alone", name, holder.pid,
		    holder.command[0] ? holder.command : "command line not visible", name, name);
	for (i = 0; holder.pid > 0 && i < LM_VM_MAX_CHILDREN; i++)
		if (vmm->children[i] == (pid_t)holder.pid)
			return stop_own_child(vmm, i, name);
	snprintf(what, sizeof(what), "stop %s", name);
	if ((rc = cli_run(vmm, s, args, timeout, &res)) < 0)
		return rc;
	/* Its `lume run` ended between our look and the stop (a terminal's ^C reaches the `lume run`
	 * that `run --detach` relaunched in our process group): stopped, what was asked for. */
	if (res.exit_code != 0 && !res.timed_out && contains(&res, "not running"))
		rc = 0;
	else if (res.exit_code != 0 || res.timed_out)
		rc = cli_error(&res, what);
	lm_proc_result_dispose(&res);
	lm_vm_reap_children(vmm);
	return rc;
}

static void cli_release(lm_vm_manager *vmm, void *state)
{
	cli_state *s = state;

	(void)vmm;
	lm_vm_lume_storage_dispose(&s->storage);
	free(s->program);
	free(s);
}

static int cli_version(lm_vm_manager *vmm, void *state, char *buf, size_t len)
{
	const char *args[] = {"--version", NULL};
	lm_proc_result res;

	return lm_vm_version_answer(cli_run(vmm, state, args, LM_CLI_QUERY_TIMEOUT, &res), &res, buf, len);
}

static const char *option_program(const lm_vm_manager *vmm)
{
	return lm_vm_option(lm_context_options(vmm->ctx)->lume_program, LM_VM_LUME_PROGRAM);
}

static int cli_present(lm_vm_manager *vmm)
{
	return lm_vm_program_present(option_program(vmm));
}

static int cli_init(lm_vm_manager *vmm, void **state)
{
	char why[512];
	cli_state *s;
	int rc;

	if ((*state = s = calloc(1, sizeof(*s))) == NULL)
		return lm_error_nomem();
	s->old_lume = -1;
	if ((rc = lm_proc_find_program(option_program(vmm), &s->program)) < 0) {
		if (rc == LM_ENOMEM)
			return rc;
		lm_text_format_cut(why, sizeof(why), "%s", lm_error_last()->message);
		return lm_error_set(LM_ENOTFOUND,
		    "the lume program was not found (%s); Lume: https://github.com/trycua/cua (libs/lume)",
		    why);
	}
	return 0;
}

const lm_vm_backend lm_vm_backend_cli = {.name = "lume-cli", .account = "lume", .present = cli_present,
	.init = cli_init, .list = cli_list, .get = cli_get, .start = cli_start, .stop = cli_stop,
	.version = cli_version, .identity = cli_identity, .stored = cli_stored, .full = cli_full,
	.process_started = cli_process_started, .created = cli_created, .release = cli_release};
