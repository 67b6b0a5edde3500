/* A LaunchAgent's plist, built with libplist (the agent-label rule is core's agent_label.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lm_plist_api.h" /* libplist, across its versions */
#include "plist_read.h"

#include "buf.h"
#include "guest_activation.h"
#include "guest_agents.h"
#include "guest_machine.h"
#include "guest_shim.h"
#include "ssh_deadline.h"
#include "ssh_files.h"
#include "str.h"
#include "text.h"

int lm_agent_spec_check(const lm_agent_spec *spec)
{
	int rc;

	if (spec != NULL && (rc = lm_agent_label_check(spec->label)) < 0)
		return rc;
	if (spec == NULL || spec->argc == 0 || spec->argv == NULL || spec->argv[0] == NULL || spec->argv[0][0] == '\0')
		return lm_error_set(LM_EINVALID, "agent install: no workload command given");
	if (strchr(spec->argv[0], '=') != NULL)
		return lm_error_set(LM_EINVALID, "agent install: '%s' is a variable assignment; the agent's "
		    "environment is the profile's (start the command with its program)", spec->argv[0]);
	return 0;
}

int lm_agent_paths(const char *home, const char *label, lm_agent_paths_t *p)
{
	int a = snprintf(p->plist, sizeof(p->plist), "%s/" LM_AGENT_DIR "/%s.plist", home, label);
	int b = snprintf(p->out_log, sizeof(p->out_log), "%s/" LM_AGENT_LOG_DIR "/%s.out.log", home, label);
	int c = snprintf(p->err_log, sizeof(p->err_log), "%s/" LM_AGENT_LOG_DIR "/%s.err.log", home, label);
	int d = snprintf(p->record_dir, sizeof(p->record_dir), "%s/" LM_AGENT_LOG_DIR "/%s.activation", home, label);

	if (a < 0 || b < 0 || c < 0 || d < 0 || (size_t)a >= sizeof(p->plist) || (size_t)b >= sizeof(p->out_log) ||
	    (size_t)c >= sizeof(p->err_log) || (size_t)d >= sizeof(p->record_dir))
		return lm_error_set(LM_EINVALID, "the guest home '%s' with agent label '%s' makes paths longer than %d bytes",
		    home, label, LM_AGENT_PATH_MAX - 1);
	return 0;
}

void lm_agent_log_paths(const char *home, lm_agent_info *a)
{
	lm_agent_paths_t paths;

	if (home == NULL || home[0] == '\0' || lm_agent_paths(home, a->label, &paths) < 0)
		return; /* longer than a path can be: never installed under it */
	memcpy(a->stdout_path, paths.out_log, sizeof(a->stdout_path));
	memcpy(a->stderr_path, paths.err_log, sizeof(a->stderr_path));
}

static void dict_string(plist_t dict, const char *key, const char *value)
{
	plist_dict_set_item(dict, key, plist_new_string(value));
}

int lm_agent_process_type_check(const char *type)
{
	static const char *const types[] = { "Background", "Standard", "Adaptive", "Interactive", NULL };

	for (size_t i = 0; type != NULL && types[i] != NULL; i++) {
		if (strcmp(type, types[i]) == 0)
			return 0;
	}
	return lm_error_set(LM_EINVALID, "'%s' is not a launchd ProcessType: Interactive, Adaptive, Standard or "
	    "Background", type != NULL ? type : "");
}

int lm_agent_plist_build(const lm_agent_spec *spec, const char *program, const lm_shim_env *se, const char *home,
    const char *process_type, char **xml, size_t *len)
{
	lm_agent_paths_t paths;
	plist_t root, args, env;
	char path[PATH_MAX + 64];
	char *text = NULL;
	const char *names[LM_SHIM_WORKLOAD_VARS], *values[LM_SHIM_WORKLOAD_VARS];
	uint32_t n = 0;
	size_t i, nvars;
	int rc;

	*xml = NULL;
	*len = 0;
	if (process_type == NULL)
		process_type = "Interactive";
	if ((rc = lm_agent_label_check(spec->label)) < 0 || (rc = lm_agent_paths(home, spec->label, &paths)) < 0 ||
	    (rc = lm_agent_process_type_check(process_type)) < 0)
		return rc;
	if (spec->argc == 0 || program == NULL || program[0] != '/')
		return lm_error_set(LM_EINVALID, "agent %s: the workload's program must be an absolute path in the guest",
		    spec->label);
	if ((root = plist_new_dict()) == NULL)
		return lm_error_nomem();
	dict_string(root, "Label", spec->label);
	/* The program itself, never a launcher (/usr/bin/env, a shell): SIP purges DYLD_* variables
	 * from protected programs, and the shim would not reach the workload. */
	args = plist_new_array();
	plist_array_append_item(args, plist_new_string(program));
	for (i = 1; i < spec->argc; i++)
		plist_array_append_item(args, plist_new_string(spec->argv[i]));
	plist_dict_set_item(root, "ProgramArguments", args);
	env = plist_new_dict();
	dict_string(env, se->injection, se->shim_path);
	for (i = 0; i < se->nenv; i++)
		dict_string(env, se->env[i].name, se->env[i].value);
	nvars = lm_shim_env_workload_vars(se, names, values);
	for (i = 0; i < nvars; i++)
		dict_string(env, names[i], values[i]);
	/* launchd's default PATH is the system's alone: the bundle's tools and Homebrew's first, as `run`. */
	snprintf(path, sizeof(path), "%.*s:" LM_GUEST_HOMEBREW_PATH ":/usr/bin:/bin:/usr/sbin:/sbin",
	    (int)(strrchr(se->probe_path, '/') != NULL ? strrchr(se->probe_path, '/') - se->probe_path : 0), se->probe_path);
	dict_string(env, "PATH", path);
	plist_dict_set_item(root, "EnvironmentVariables", env);
	dict_string(root, "StandardOutPath", paths.out_log);
	dict_string(root, "StandardErrorPath", paths.err_log);
	/* Without it launchd "applies light resource limits, throttling CPU usage and I/O bandwidth"
	 * (launchd.plist(5); reference/lume.md, 2026-12-02): an inference server is Interactive. */
	dict_string(root, "ProcessType", process_type);
	if (spec->keep_alive)
		plist_dict_set_item(root, "KeepAlive", plist_new_bool(1));
	if (spec->run_at_load)
		plist_dict_set_item(root, "RunAtLoad", plist_new_bool(1));
	plist_to_xml(root, &text, &n);
	plist_free(root);
	if (text == NULL)
		return lm_error_nomem();
	if ((*xml = malloc((size_t)n + 1)) == NULL) {
		lm_plist_mem_free(text);
		return lm_error_nomem();
	}
	memcpy(*xml, text, n);
	(*xml)[n] = '\0';
	*len = n;
	lm_plist_mem_free(text);
	return 0;
}

/* What a look found of one record of an agent's folder. */
typedef struct {
	int live;     /* its pid runs and the record is of this boot */
	int kept;     /* it has exited, but a live process of the agent started it, or started one that did */
	double mtime; /* the record's last write, epoch seconds (0: not asked) */
} record_look;

/* child's process was started by parent's: parent's spawns[] name child's pid (format 1.1), or
 * parent is child's parent at load (ppid). */
static int started_by(const lm_activation *child, const lm_activation *parent)
{
	if (child == parent)
		return 0;
	if (child->ppid > 0 && child->ppid == parent->pid)
		return 1;
	for (size_t s = 0; s < parent->nspawns; s++) {
		if (parent->spawns[s].pid > 0 && parent->spawns[s].pid == child->pid)
			return 1;
	}
	return 0;
}

/* Which records of the exited are kept: a worker that came and went. Ollama starts a short
 * discovery runner at start (ollama discover/llama_server.go) and an inference runner per model
 * load, which exits after OLLAMA_KEEP_ALIVE (5 minutes, envconfig/config.go) idle
 * (llm/llama_server.go): the runner's record is the proof that the worker got the unlock, and it
 * stays while the server that started it runs. looks[i].kept for each record of the list whose
 * process has exited and that has an ancestor in the records (spawns[] or ppid) that is live, or
 * was started by the agent's running process (agent_pid, 0 when it does not run). A pid reused by
 * another process of the same boot can keep a record (and its answers counted) longer than the
 * process that started it ran; a record of an earlier boot never (prune_records). */
static int keep_started(const lm_activation_list *list, long agent_pid, record_look *looks)
{
	size_t n = list->count;
	unsigned char *by; /* by[i * n + j]: i was started by j (at most 256 x 256) */
	int changed = 1;

	if (n == 0)
		return 0;
	if ((by = calloc(n * n, 1)) == NULL)
		return lm_error_nomem();
	for (size_t i = 0; i < n; i++) {
		looks[i].kept = !looks[i].live && agent_pid > 0 && list->items[i].pid != agent_pid &&
		    list->items[i].ppid == agent_pid;
		for (size_t j = 0; j < n; j++)
			by[i * n + j] = (unsigned char)started_by(&list->items[i], &list->items[j]);
	}
	/* To a fixed point: each pass reaches one generation further (at most n passes). */
	for (size_t pass = 0; changed && pass < n; pass++) {
		changed = 0;
		for (size_t i = 0; i < n; i++) {
			if (looks[i].live || looks[i].kept)
				continue;
			for (size_t j = 0; j < n; j++) {
				if (by[i * n + j] && (looks[j].live || looks[j].kept)) {
					looks[i].kept = changed = 1;
					break;
				}
			}
		}
	}
	free(by);
	return 0;
}

/* Whether the guest's answer (its boot time's line, then one running pid a line) lists pid. */
static int pid_listed(const char *out, int64_t pid)
{
	char want[24];
	const char *line;
	size_t n;
	lm_scan lines;

	snprintf(want, sizeof(want), "%lld", (long long)pid);
	lm_scan_init(&lines, out, strlen(out));
	if (lm_scan_line(&lines, &line, &n) != 1)
		return 0;
	while (lm_scan_line(&lines, &line, &n) == 1) /* whole lines: each ends with its newline */
		if (lm_text_is(line, n, want))
			return 1;
	return 0;
}

/* The record of pid in the list (sorted by pid), or -1. */
static long record_of(const lm_activation_list *list, int64_t pid)
{
	for (size_t i = 0; i < list->count; i++) {
		if (list->items[i].pid == pid)
			return (long)i;
	}
	return -1;
}

/* The folder's records pruned to the agent's live processes and the exited ones they started
 * (lm_guest_agents_activation), by their names (<pid>.json: a damaged one too): one guest command
 * asks the boot time and which of the pids still run (kill -0: the agent's processes are the
 * account's own); a record of the exited is kept while a live process of the agent started it
 * (keep_started: its ancestry in the parsed records, list), the others are removed, and every
 * record written before the boot. A damaged record, or one past the reader's limit, has no
 * ancestry: kept only while its own pid runs. list is left with the records kept, looks[] beside
 * them. */
static int prune_records(lm_ssh *ssh, const char *dir, long agent_pid, lm_activation_list *list, record_look *looks,
    int *pruned)
{
	lm_buf cmd;
	char **names = NULL, *line = NULL, *out = NULL, *err = NULL, path[LM_AGENT_PATH_MAX + 32];
	double boot, mtime;
	size_t i, k, n = 0;
	int rc, status = 0;

	*pruned = 0;
	if ((rc = lm_ssh_list_dir(ssh, dir, LM_ACTIVATION_MAX_LISTED, &names)) < 0)
		return rc;
	lm_buf_init(&cmd, 1024 * 1024);
	lm_buf_adds(&cmd, "(sysctl -n kern.boottime) 2>/dev/null || echo; for p in");
	for (i = 0; names[i] != NULL; i++) {
		if (lm_activation_file_name_ok(names[i])) { /* digits: nothing to quote */
			lm_buf_addf(&cmd, " %.*s", (int)(strlen(names[i]) - strlen(".json")), names[i]);
			n++;
		}
	}
	lm_buf_adds(&cmd, "; do kill -0 \"$p\" 2>/dev/null && echo \"$p\"; done; :");
	if (n == 0) { /* every record gone since it was read */
		lm_activation_list_dispose(list);
		goto done;
	}
	if ((rc = lm_buf_take(&cmd, &line, NULL)) < 0)
		goto done;
	rc = lm_ssh_ask(ssh, line, 1024 * 1024, &out, &err, &status);
	if (rc == 0 && status != 0)
		rc = lm_error_set(LM_EREMOTE, "which of the agent's processes run (in %s) failed (exit %d)", dir, status);
	if (rc < 0)
		goto done;
	/* SFTP gives whole seconds: a record of this boot's first second is not older than it. */
	boot = (double)(long long)lm_guest_boot_time_parse(out);
	/* First the live: a running pid whose record is of this boot. */
	for (i = 0; i < list->count; i++) {
		looks[i].live = pid_listed(out, list->items[i].pid);
		snprintf(path, sizeof(path), "%s/%s", dir, list->items[i].file);
		if (!looks[i].live)
			continue;
		if ((rc = lm_ssh_mtime(ssh, path, &looks[i].mtime)) < 0 && rc != LM_ENOTFOUND)
			goto done;
		looks[i].live = rc == 0 && (boot <= 0 || looks[i].mtime >= boot);
	}
	/* Then the exited that a live one started, of this boot too. */
	if ((rc = keep_started(list, agent_pid, looks)) < 0)
		goto done;
	for (i = 0; i < list->count; i++) {
		if (!looks[i].kept)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, list->items[i].file);
		if ((rc = lm_ssh_mtime(ssh, path, &looks[i].mtime)) < 0 && rc != LM_ENOTFOUND)
			goto done;
		looks[i].kept = rc == 0 && (boot <= 0 || looks[i].mtime >= boot);
	}
	for (i = 0; names[i] != NULL; i++) {
		int64_t pid;
		long at;
		int keep;

		if (!lm_activation_file_name_ok(names[i]))
			continue;
		pid = strtoll(names[i], NULL, 10);
		at = record_of(list, pid);
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (at >= 0) {
			keep = looks[at].live || looks[at].kept;
		} else { /* damaged, or past the reader's limit: its own pid alone */
			keep = pid_listed(out, pid);
			if (keep && boot > 0) {
				if ((rc = lm_ssh_mtime(ssh, path, &mtime)) == LM_ENOTFOUND)
					continue;
				if (rc < 0)
					goto done;
				keep = mtime >= boot;
			}
		}
		if (keep)
			continue;
		if ((rc = lm_ssh_remove(ssh, path)) < 0 && rc != LM_ENOTFOUND)
			goto done;
		(*pruned)++;
	}
	/* The list as the folder is now. */
	for (i = k = 0; i < list->count; i++) {
		if (!looks[i].live && !looks[i].kept) {
			free(list->items[i].text);
			continue;
		}
		if (k != i) {
			list->items[k] = list->items[i];
			looks[k] = looks[i];
		}
		k++;
	}
	list->count = k;
	rc = 0;
done:
	lm_buf_dispose(&cmd);
	lm_strv_free(names);
	free(line);
	lm_free(out);
	lm_free(err);
	return rc;
}

/* The line without "pid N PROGRAM: " (the agent's own line shows them) for the agent's process;
 * for another process of it, whole; for one that has exited (a worker that came and went),
 * "widened in a worker that has exited (pid N, at T): PROGRAM: ...". */
static int agent_line(const lm_activation *a, int own, double exited_at, char *buf, size_t len, size_t *used)
{
	char *line = NULL, when[32] = "";
	const char *p;
	struct tm tm;
	time_t t = (time_t)exited_at;
	int rc;

	if ((rc = lm_activation_summary(a, &line)) < 0)
		return rc;
	p = own && strstr(line, ": ") != NULL ? strstr(line, ": ") + 2 : line;
	if (exited_at > 0) {
		/* "pid N " is in the words before it */
		p = strchr(line + 4, ' ') != NULL ? strchr(line + 4, ' ') + 1 : line;
		if (gmtime_r(&t, &tm) == NULL || strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
			snprintf(when, sizeof(when), "an unknown time");
		lm_text_format_cut(buf + *used, len - *used, "%swidened in a worker that has exited (pid %lld, at %s): %s",
		    *used > 0 ? "; " : "", (long long)a->pid, when, p);
	} else {
		lm_text_format_cut(buf + *used, len - *used, "%s%s", *used > 0 ? "; " : "", p);
	}
	*used = strlen(buf);
	free(line);
	return 0;
}

/* launchd answered for the agent (lm_guest_agents_query): its folder may be pruned. */
static int launchd_known(const lm_agent_info *a)
{
	return strcmp(a->state, "running") == 0 || strcmp(a->state, "loaded") == 0 || strcmp(a->state, "not loaded") == 0;
}

int lm_guest_agents_activation(lm_ssh *ssh, const char *home, lm_agent_info *const *agents, size_t n)
{
	lm_agent_paths_t paths;
	lm_activation_list list;
	record_look *looks = NULL;
	size_t i, k, used;
	int rc;

	for (i = 0; i < n; i++) {
		lm_agent_info *a = agents[i];
		const lm_activation *own = NULL, *other = NULL, *exited = NULL;
		double exited_at = 0;
		int running = strcmp(a->state, "running") == 0 && a->pid > 0;

		a->shim_loaded = -1;
		a->shim_widened = -1;
		a->records_pruned = 0;
		a->shim[0] = '\0';
		a->widened_exited_pid = 0;
		a->widened_exited_at = 0;
		a->widened_exited_exe[0] = '\0';
		if ((rc = lm_agent_paths(home, a->label, &paths)) < 0)
			return rc;
		snprintf(a->record_dir, sizeof(a->record_dir), "%s", paths.record_dir);
		/* A stopped agent's folder is pruned too (its workers' records go with the server's). */
		if (!launchd_known(a))
			continue;
		memset(&list, 0, sizeof(list));
		rc = lm_activation_fetch(ssh, paths.record_dir, &list);
		if (rc == 0 && list.count > 0 && (looks = calloc(list.count, sizeof(*looks))) == NULL)
			rc = lm_error_nomem();
		if (rc == 0)
			rc = prune_records(ssh, paths.record_dir, running ? a->pid : 0, &list, looks, &a->records_pruned);
		if (rc < 0 && rc != LM_ENOTFOUND) {
			lm_activation_list_dispose(&list);
			free(looks);
			return rc;
		}
		if (rc == LM_ENOTFOUND) /* no folder (or gone since): no record */
			lm_activation_list_dispose(&list);
		rc = 0;
		/* Only this pid's record is its own: one of an earlier start (KeepAlive, kickstart) is
		 * not this process's; the others left are the live processes it started, and the exited
		 * ones a live one started (the newest of those that had an answer widened is named). */
		for (k = 0; running && k < list.count; k++) {
			if (list.items[k].pid == a->pid)
				own = &list.items[k];
			else if (!lm_activation_took(&list.items[k]))
				continue;
			else if (looks[k].live && other == NULL)
				other = &list.items[k];
			else if (!looks[k].live && (exited == NULL || looks[k].mtime > exited_at)) {
				exited = &list.items[k];
				exited_at = looks[k].mtime > 0 ? looks[k].mtime : 1;
			}
		}
		if (running) {
			a->shim_loaded = own != NULL;
			a->shim_widened = (own != NULL && lm_activation_took(own)) || other != NULL || exited != NULL;
			used = 0;
			if (own != NULL)
				rc = agent_line(own, 1, 0, a->shim, sizeof(a->shim), &used);
			if (rc >= 0 && other != NULL && (own == NULL || !lm_activation_took(own)))
				rc = agent_line(other, 0, 0, a->shim, sizeof(a->shim), &used);
			else if (rc >= 0 && exited != NULL && (own == NULL || !lm_activation_took(own))) {
				rc = agent_line(exited, 0, exited_at, a->shim, sizeof(a->shim), &used);
				a->widened_exited_pid = (long)exited->pid;
				a->widened_exited_at = exited_at;
				snprintf(a->widened_exited_exe, sizeof(a->widened_exited_exe), "%s", exited->exe);
			}
		}
		lm_activation_list_dispose(&list);
		free(looks);
		looks = NULL;
		if (rc < 0)
			return rc;
	}
	return 0;
}

int lm_agent_plist_program(lm_ssh *ssh, const char *plist_path, char *program, size_t size)
{
	plist_t root = NULL, args, first;
	char *xml = NULL, *value = NULL;
	size_t len = 0;
	int rc;

	program[0] = '\0';
	/* A plist of ours is small; a larger one is not ours to read. */
	if ((rc = lm_ssh_read_file(ssh, plist_path, 256 * 1024, &xml, &len)) < 0)
		return rc;
	/* Ours is XML; one that cannot be read (damaged, nested too deep) names no program. */
	rc = lm_plist_read(xml, len, "the LaunchAgent plist", &root, NULL);
	free(xml);
	if (rc == LM_ENOMEM)
		return rc;
	if (rc < 0)
		lm_error_clear();
	args = root != NULL ? plist_dict_get_item(root, "ProgramArguments") : NULL;
	first = args != NULL && plist_get_node_type(args) == PLIST_ARRAY ? plist_array_get_item(args, 0) : NULL;
	if (first != NULL && plist_get_node_type(first) == PLIST_STRING)
		plist_get_string_val(first, &value);
	if (value != NULL && lm_text_format(program, size, "%s", value) < 0)
		program[0] = '\0';
	free(value);
	plist_free(root);
	return 0;
}
