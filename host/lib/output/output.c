/* Results as JSON documents: the envelope and the members of each command, written in one place
 * so that every field has one spelling (docs/json-output.md). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "lume-metal/family.h"
#include "lume-metal/output.h"
#include "lume-metal/workload.h"
#include "error_internal.h"
#include "output_local.h"
#include "text.h"

/* Whole or absent: every cJSON call that adds or creates goes through noted(), which marks the
 * document being built broken when it failed (out of memory: a missing member, a VM's report, a
 * name); finish_as() then renders nothing and fails with LM_ENOMEM. A document is built and
 * finished on one thread, so the mark is the thread's. envelope() starts each document afresh. */
static _Thread_local int broken;

static cJSON *noted(cJSON *item)
{
	if (item == NULL)
		broken = 1;
	return item;
}

static cJSON_bool noted_bool(cJSON_bool added)
{
	if (!added)
		broken = 1;
	return added;
}

#define cJSON_CreateObject() noted(cJSON_CreateObject())
#define cJSON_CreateArray() noted(cJSON_CreateArray())
#define cJSON_CreateNull() noted(cJSON_CreateNull())
#define cJSON_CreateString(s) noted(cJSON_CreateString(s))
#define cJSON_CreateIntArray(...) noted(cJSON_CreateIntArray(__VA_ARGS__))
#define cJSON_CreateDoubleArray(...) noted(cJSON_CreateDoubleArray(__VA_ARGS__))
#define cJSON_AddNullToObject(o, n) noted(cJSON_AddNullToObject(o, n))
#define cJSON_AddBoolToObject(o, n, b) noted(cJSON_AddBoolToObject(o, n, b))
#define cJSON_AddNumberToObject(o, n, v) noted(cJSON_AddNumberToObject(o, n, v))
#define cJSON_AddStringToObject(o, n, v) noted(cJSON_AddStringToObject(o, n, v))
#define cJSON_AddObjectToObject(o, n) noted(cJSON_AddObjectToObject(o, n))
#define cJSON_AddArrayToObject(o, n) noted(cJSON_AddArrayToObject(o, n))
#define cJSON_AddItemToObject(o, n, i) noted_bool(cJSON_AddItemToObject(o, n, i))
#define cJSON_AddItemToArray(a, i) noted_bool(cJSON_AddItemToArray(a, i))
/* Our own text parsed back (a report, records, a profile): NULL is memory that ran out. */
#define cJSON_Parse(t) noted(cJSON_Parse(t))

/* A doctor check's level as the text and JSON outputs name it. */
const char *lm_check_level_name(lm_check_level level)
{
	return level == LM_CHECK_OK ? "ok" : level == LM_CHECK_WARN ? "warn" : "fail";
}

static cJSON *envelope(const lm_json_envelope *env)
{
	cJSON *doc, *err;

	broken = 0;
	doc = cJSON_CreateObject();

	if (doc == NULL)
		return NULL;
	cJSON_AddNumberToObject(doc, "schema", LM_JSON_SCHEMA);
	cJSON_AddStringToObject(doc, "command", env->command != NULL ? env->command : "");
	cJSON_AddBoolToObject(doc, "ok", env->error_code == 0 && env->exit_code == 0);
	cJSON_AddNumberToObject(doc, "exit_code", env->exit_code);
	cJSON_AddBoolToObject(doc, "dry_run", env->dry_run);
	if (env->error_code == 0) {
		cJSON_AddNullToObject(doc, "error");
		return doc;
	}
	err = cJSON_AddObjectToObject(doc, "error");
	cJSON_AddStringToObject(err, "code", lm_error_name(env->error_code));
	cJSON_AddStringToObject(err, "message", env->error_message != NULL ? env->error_message : "");
	if (env->hint != NULL && env->hint[0] != '\0')
		cJSON_AddStringToObject(err, "hint", env->hint);
	else
		cJSON_AddNullToObject(err, "hint");
	return doc;
}

/* Replace *s (cJSON's memory) by its printable form when that differs. */
static int printable_in_place(char **s)
{
	char *clean, *copy;
	size_t n;

	if (*s == NULL)
		return 0;
	if ((clean = lm_text_printable(*s)) == NULL)
		return -1;
	if (strcmp(clean, *s) != 0) {
		n = strlen(clean) + 1;
		if ((copy = cJSON_malloc(n)) == NULL) {
			lm_free(clean);
			return -1;
		}
		memcpy(copy, clean, n);
		cJSON_free(*s);
		*s = copy;
	}
	lm_free(clean);
	return 0;
}

/* Every string and member name through the one sanitiser (lm_text_printable): a document is valid
 * UTF-8 without control bytes, whatever the bytes of argv, a file, Lume or a guest were. */
static int printable_json(cJSON *item)
{
	for (; item != NULL; item = item->next) {
		if (!(item->type & cJSON_StringIsConst) && printable_in_place(&item->string) < 0)
			return -1;
		if (cJSON_IsString(item) && printable_in_place(&item->valuestring) < 0)
			return -1;
		if (item->child != NULL && printable_json(item->child) < 0)
			return -1;
	}
	return 0;
}

/* Print and free the document: indented, or on one line (JSON Lines). */
static int finish_as(cJSON *doc, int one_line, char **out)
{
	char *text = NULL;
	size_t n;

	*out = NULL;
	if (doc != NULL && !broken && printable_json(doc) == 0)
		text = one_line ? cJSON_PrintUnformatted(doc) : cJSON_Print(doc);
	broken = 0;
	cJSON_Delete(doc);
	if (text == NULL)
		return lm_error_nomem();
	n = strlen(text);
	if ((*out = malloc(n + 2)) == NULL) {
		cJSON_free(text);
		return lm_error_nomem();
	}
	memcpy(*out, text, n);
	memcpy(*out + n, "\n", 2);
	cJSON_free(text);
	return 0;
}

static int finish(cJSON *doc, char **out)
{
	return finish_as(doc, 0, out);
}

static void add_string_or_null(cJSON *obj, const char *name, const char *value)
{
	if (value != NULL && value[0] != '\0')
		cJSON_AddStringToObject(obj, name, value);
	else
		cJSON_AddNullToObject(obj, name);
}

/* 2026-11-29T19:00:00Z; -1 for no time (0) or one out of range: a double beyond time_t converted
 * is undefined, and no time of ours lies past the year 9999. */
static int iso_time(double epoch, char *buf, size_t size)
{
	struct tm tm;
	time_t t;

	if (!(epoch > 0 && epoch <= 253402300799.0))
		return -1;
	t = (time_t)epoch;
	if (gmtime_r(&t, &tm) == NULL || strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		return -1;
	return 0;
}

/* The -currentHost value, when it was read (status, host status). */
static void byhost_json(cJSON *pref, const lm_host_pref_byhost *b)
{
	cJSON *o;

	if (b == NULL || b->size == 0 || (o = cJSON_AddObjectToObject(pref, "byhost")) == NULL)
		return;
	cJSON_AddStringToObject(o, "where", b->where);
	cJSON_AddBoolToObject(o, "present", b->present);
	add_string_or_null(o, "value", b->value);
	cJSON_AddBoolToObject(o, "matches", b->matches);
}

static cJSON *pref_json(const lm_host_pref_info *p)
{
	cJSON *o = cJSON_CreateObject();
	char when[32];

	cJSON_AddStringToObject(o, "store", p->store);
	cJSON_AddStringToObject(o, "domain", p->domain);
	cJSON_AddStringToObject(o, "key", p->key);
	cJSON_AddBoolToObject(o, "file_present", p->file_present);
	cJSON_AddBoolToObject(o, "present", p->present);
	add_string_or_null(o, "value", p->value);
	cJSON_AddBoolToObject(o, "matches", p->matches);
	cJSON_AddBoolToObject(o, "managed", p->managed);
	add_string_or_null(o, "managed_value", p->managed_value);
	cJSON_AddBoolToObject(o, "recorded", p->recorded);
	add_string_or_null(o, "original", p->original);
	add_string_or_null(o, "written", p->written);
	if (iso_time(p->changed_at, when, sizeof(when)) == 0) {
		cJSON_AddNumberToObject(o, "changed_at", p->changed_at);
		cJSON_AddStringToObject(o, "changed_at_iso", when);
	} else {
		cJSON_AddNullToObject(o, "changed_at");
		cJSON_AddNullToObject(o, "changed_at_iso");
	}
	cJSON_AddBoolToObject(o, "changed", p->changed);
	/* Who gives the preference back: the last VM's rollback, or only a host disable. */
	add_string_or_null(o, "mode", !p->recorded ? NULL : p->kept ? "kept" : "per-vm");
	/* Whose domain it is, and the Lume server's user (whose VMs read it). */
	add_string_or_null(o, "user", p->user);
	add_string_or_null(o, "server_user", p->server_user);
	if (p->server_pid > 0)
		cJSON_AddNumberToObject(o, "server_pid", (double)p->server_pid);
	else
		cJSON_AddNullToObject(o, "server_pid");
	cJSON_AddBoolToObject(o, "user_mismatch", p->user_mismatch);
	return o;
}

/* The workload flags, spelled as in the capability report's "workloads" (report-format.md). */
static cJSON *flags_json(const lm_workload_flags *f)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddBoolToObject(o, "llama_simdgroup_reduction", f->llama_simdgroup_reduction);
	cJSON_AddBoolToObject(o, "llama_simdgroup_mm", f->llama_simdgroup_mm);
	cJSON_AddBoolToObject(o, "llama_bfloat16", f->llama_bfloat16);
	cJSON_AddBoolToObject(o, "llama_tensor", f->llama_tensor);
	cJSON_AddBoolToObject(o, "mlx_residency_risk", f->mlx_residency_risk);
	return o;
}

static cJSON *report_json(const lm_report *r)
{
	char *text = NULL;
	cJSON *doc;

	if (r == NULL)
		return cJSON_CreateNull();
	if (lm_report_to_json(r, &text) < 0) {
		broken = 1; /* the report is in the document or the document is not printed */
		return NULL;
	}
	doc = cJSON_Parse(text);
	lm_free(text);
	return doc;
}

/* The exercise member of the report the shimmed probe made with --exercise (docs/report-format.md),
 * or null when none was run. */
static cJSON *exercise_json(const lm_report *r)
{
	cJSON *doc, *ex;

	if (r == NULL || !lm_report_has_exercise(r))
		return cJSON_CreateNull();
	doc = report_json(r);
	ex = cJSON_IsObject(doc) ? cJSON_DetachItemFromObjectCaseSensitive(doc, "exercise") : NULL;
	cJSON_Delete(doc);
	return ex != NULL ? ex : cJSON_CreateNull();
}

static cJSON *agents_json(const lm_vm_outcome *o)
{
	cJSON *list = cJSON_CreateArray(), *a;
	char when[32];
	size_t i;

	for (i = 0; list != NULL && i < o->nagents; i++) {
		const lm_agent_info *ag = o->agents[i];
		a = cJSON_CreateObject();
		cJSON_AddStringToObject(a, "label", ag->label);
		add_string_or_null(a, "plist", ag->plist);
		add_string_or_null(a, "program", ag->program);
		cJSON_AddStringToObject(a, "state", ag->state);
		if (ag->pid > 0)
			cJSON_AddNumberToObject(a, "pid", (double)ag->pid);
		else
			cJSON_AddNullToObject(a, "pid");
		add_string_or_null(a, "installed_at", iso_time(ag->installed_at, when, sizeof(when)) == 0 ? when : NULL);
		/* Since issue 23: read only from a library that has them (an older one's struct ends earlier). */
		if (LM_HAS_FIELD(ag, lm_agent_info, shim)) {
			add_string_or_null(a, "record_dir", ag->record_dir);
			if (ag->shim_loaded < 0)
				cJSON_AddNullToObject(a, "shim_loaded");
			else
				cJSON_AddBoolToObject(a, "shim_loaded", ag->shim_loaded);
			add_string_or_null(a, "shim", ag->shim_loaded == 1 || (LM_HAS_FIELD(ag, lm_agent_info, records_pruned) &&
			    ag->shim_widened == 1) ? ag->shim : NULL);
		}
		if (LM_HAS_FIELD(ag, lm_agent_info, records_pruned)) {
			if (ag->shim_widened < 0)
				cJSON_AddNullToObject(a, "shim_widened");
			else
				cJSON_AddBoolToObject(a, "shim_widened", ag->shim_widened);
			cJSON_AddNumberToObject(a, "records_pruned", ag->records_pruned);
		}
		/* Since issue 48: the worker that came and went (an exited process, its record kept while
		 * the process of the agent that started it runs), when only it had an answer widened. */
		if (LM_HAS_FIELD(ag, lm_agent_info, widened_exited_exe)) {
			cJSON *w = ag->widened_exited_pid > 0 ? cJSON_CreateObject() : cJSON_CreateNull();

			if (w != NULL && ag->widened_exited_pid > 0) {
				cJSON_AddNumberToObject(w, "pid", (double)ag->widened_exited_pid);
				add_string_or_null(w, "exe", ag->widened_exited_exe);
				add_string_or_null(w, "at", iso_time(ag->widened_exited_at, when, sizeof(when)) == 0 ? when : NULL);
			}
			cJSON_AddItemToObject(a, "shim_widened_exited", w);
		}
		/* Since issue 37: what `launchctl print` shows of the job (the last exit: null when it never
		 * exited or launchd was not asked; minus the signal that ended it) and its log paths. */
		if (LM_HAS_FIELD(ag, lm_agent_info, stderr_path)) {
			if (ag->last_exit_known)
				cJSON_AddNumberToObject(a, "last_exit_status", ag->last_exit_status);
			else
				cJSON_AddNullToObject(a, "last_exit_status");
			add_string_or_null(a, "stdout_path", ag->stdout_path);
			add_string_or_null(a, "stderr_path", ag->stderr_path);
		}
		cJSON_AddItemToArray(list, a);
	}
	return list;
}

static const char *step_state_word(lm_step_state state)
{
	switch (state) {
	case LM_STEP_STARTED: return "started";
	case LM_STEP_DONE: return "done";
	case LM_STEP_FAILED: return "failed";
	default: return "waiting";
	}
}

int lm_step_event_to_json(const lm_step_event *ev, const char *command, double at, char **out)
{
	cJSON *doc = cJSON_CreateObject();
	char when[32];

	if (doc != NULL) {
		cJSON_AddNumberToObject(doc, "schema", LM_JSON_SCHEMA);
		cJSON_AddStringToObject(doc, "event", "step");
		cJSON_AddStringToObject(doc, "command", command != NULL ? command : "");
		add_string_or_null(doc, "vm", ev->vm);
		cJSON_AddStringToObject(doc, "step", ev->name != NULL ? ev->name : "");
		cJSON_AddStringToObject(doc, "state", step_state_word(ev->state));
		cJSON_AddNumberToObject(doc, "seconds", ev->elapsed);
		cJSON_AddStringToObject(doc, "detail", ev->detail != NULL ? ev->detail : "");
		add_string_or_null(doc, "time", iso_time(at, when, sizeof(when)) == 0 ? when : NULL);
	}
	return finish_as(doc, 1, out);
}

int lm_doctor_to_json(const lm_doctor_result *r, lm_doctor_advice_fn advice, void *data,
    const lm_json_envelope *env, char **out)
{
	cJSON *doc = envelope(env), *checks, *c, *counts;
	const char *hint;
	size_t i;

	if (doc == NULL)
		return finish(NULL, out);
	checks = cJSON_AddArrayToObject(doc, "checks");
	for (i = 0; i < r->count; i++) {
		const lm_doctor_check *k = r->checks[i];
		c = cJSON_CreateObject();
		add_string_or_null(c, "vm", k->vm);
		cJSON_AddStringToObject(c, "check", k->name);
		cJSON_AddStringToObject(c, "level", lm_check_level_name(k->level));
		cJSON_AddStringToObject(c, "message", k->message != NULL ? k->message : "");
		hint = advice != NULL && k->level != LM_CHECK_OK ? advice(data, k) : NULL;
		add_string_or_null(c, "hint", hint);
		cJSON_AddItemToArray(checks, c);
	}
	counts = cJSON_AddObjectToObject(doc, "counts");
	cJSON_AddNumberToObject(counts, "ok", (double)(r->count - r->failed - r->warned));
	cJSON_AddNumberToObject(counts, "warn", (double)r->warned);
	cJSON_AddNumberToObject(counts, "fail", (double)r->failed);
	return finish(doc, out);
}

int lm_json_one_line(const char *doc, char **out)
{
	cJSON *parsed = cJSON_Parse(doc);

	if (parsed == NULL) {
		broken = 0;
		return lm_error_set(LM_EINVALID, "not a JSON document, or out of memory while reading it");
	}
	return finish_as(parsed, 1, out);
}

static const char *result_word(const lm_vm_outcome *o)
{
	if (o->rc == LM_EUNSUPPORTED)
		return "unsupported";
	return o->rc < 0 ? "failed" : "ok";
}

/* status: the journal says a rollback of the VM began and did not finish. */
static int rolling_back(const lm_vm_outcome *o)
{
	return o->journal_status != NULL && strcmp(o->journal_status, "rolling-back") == 0;
}

static cJSON *outcome_json(const lm_vm_outcome *o, lm_outcome_advice_fn advice, void *data)
{
	cJSON *v = cJSON_CreateObject(), *steps, *s, *g, *err;
	size_t i;

	cJSON_AddStringToObject(v, "vm", o->vm);
	cJSON_AddStringToObject(v, "result", result_word(o));
	cJSON_AddStringToObject(v, "message", o->message != NULL ? o->message : "");
	if (o->rc < 0) {
		err = cJSON_AddObjectToObject(v, "error");
		cJSON_AddStringToObject(err, "code", lm_error_name(o->rc));
		cJSON_AddStringToObject(err, "message", o->message != NULL ? o->message : "");
		/* The advice about this VM's own failure (a fleet's VMs fail for different reasons). */
		add_string_or_null(err, "hint", advice != NULL ? advice(data, o) : NULL);
	} else {
		cJSON_AddNullToObject(v, "error");
	}
	add_string_or_null(v, "state", o->info.status);
	add_string_or_null(v, "ip", o->info.ip);
	add_string_or_null(v, "manager", o->info.manager);
	add_string_or_null(v, "profile", o->profile);
	cJSON_AddBoolToObject(v, "enabled", o->already_enabled || (o->rc == 0 && o->bundle_verified));
	cJSON_AddBoolToObject(v, "gone", o->gone);
	cJSON_AddBoolToObject(v, "rolling_back", rolling_back(o));
	add_string_or_null(v, "vm_id", o->info.vm_id);
	add_string_or_null(v, "vm_id_unreadable", o->info.vm_id_why);
	cJSON_AddBoolToObject(v, "restarted", o->restarted);
	cJSON_AddBoolToObject(v, "started", o->started);
	cJSON_AddNumberToObject(v, "files_uploaded", o->files_uploaded);
	cJSON_AddBoolToObject(v, "bundle_verified", o->bundle_verified);
	add_string_or_null(v, "bundle", o->bundle_id);
	cJSON_AddBoolToObject(v, "restart_pending", o->restart_pending);
	/* The mode the VM was (or is being) enabled with, and what its proof showed of the preference's
	 * need (null: not measured); null for a VM the journal does not know. */
	add_string_or_null(v, "host_preference_mode", o->profile[0] != '\0' ? lm_host_pref_mode_name(o->pref_mode) : NULL);
	if (o->pref_needed == LM_PREF_NEEDED_UNKNOWN)
		cJSON_AddNullToObject(v, "host_preference_needed");
	else
		cJSON_AddBoolToObject(v, "host_preference_needed", o->pref_needed == LM_PREF_NEEDED_YES);
	g = cJSON_AddObjectToObject(v, "guest");
	add_string_or_null(g, "os", o->guest.os);
	add_string_or_null(g, "arch", o->guest.arch);
	add_string_or_null(g, "os_version", o->guest.os_version);
	if (o->guest.boot_time > 0)
		cJSON_AddNumberToObject(g, "boot_time", (double)o->guest.boot_time);
	else
		cJSON_AddNullToObject(g, "boot_time");
	add_string_or_null(g, "home", o->guest.home);
	add_string_or_null(g, "sip", o->guest.sip);
	cJSON_AddBoolToObject(g, "tart_shim", o->guest.tart_shim);
	steps = cJSON_AddArrayToObject(v, "steps");
	for (i = 0; i < o->nsteps; i++) {
		const lm_flow_step *st = o->steps[i];
		s = cJSON_CreateObject();
		cJSON_AddStringToObject(s, "name", st->name);
		cJSON_AddStringToObject(s, "state", step_state_word(st->state));
		cJSON_AddNumberToObject(s, "seconds", st->seconds);
		cJSON_AddStringToObject(s, "detail", st->detail != NULL ? st->detail : "");
		cJSON_AddItemToArray(steps, s);
	}
	cJSON_AddItemToObject(v, "stock", report_json(o->stock));
	cJSON_AddItemToObject(v, "shimmed", report_json(o->shimmed));
	if (o->tart != NULL) /* probe, in a Tart image with its own shim */
		cJSON_AddItemToObject(v, "tart_image_shim", report_json(o->tart));
	cJSON_AddItemToObject(v, "exercise", exercise_json(o->exercised));
	cJSON_AddItemToObject(v, "agents", agents_json(o));
	/* Since issue 37: the exercise's own time (the guest's clock), null when not known. */
	if (o->exercised != NULL && lm_report_has_exercise(o->exercised) && lm_report_exercise_seconds(o->exercised) >= 0)
		cJSON_AddNumberToObject(v, "exercise_seconds", lm_report_exercise_seconds(o->exercised));
	else
		cJSON_AddNullToObject(v, "exercise_seconds");
	return v;
}

int lm_json_error(const lm_json_envelope *env, char **out)
{
	return finish(envelope(env), out);
}

/* How many VMs came to each result (the text's recap line: "4 enabled, 0 failed in 2.2 s"). */
static void recap_json(cJSON *doc, const lm_flow_result *r)
{
	cJSON *recap = cJSON_AddObjectToObject(doc, "recap");
	size_t i, ok = 0, failed = 0, unsupported = 0;

	for (i = 0; i < r->count; i++) {
		if (r->vms[i]->rc == LM_EUNSUPPORTED)
			unsupported++;
		else if (r->vms[i]->rc < 0)
			failed++;
		else
			ok++;
	}
	cJSON_AddNumberToObject(recap, "ok", (double)ok);
	cJSON_AddNumberToObject(recap, "failed", (double)failed);
	cJSON_AddNumberToObject(recap, "unsupported", (double)unsupported);
}

int lm_flow_result_to_json_advised(const lm_flow_result *r, lm_outcome_advice_fn advice, void *data,
    const lm_json_envelope *env, char **out)
{
	cJSON *doc = envelope(env), *vms;
	size_t i;

	if (doc == NULL)
		return finish(NULL, out);
	cJSON_AddNumberToObject(doc, "seconds", r->seconds);
	cJSON_AddItemToObject(doc, "host_preference", r->pref.domain[0] != '\0' ? pref_json(&r->pref) : cJSON_CreateNull());
	if (r->pref.domain[0] != '\0' && LM_HAS_FIELD(r, lm_flow_result, byhost))
		byhost_json(cJSON_GetObjectItemCaseSensitive(doc, "host_preference"), &r->byhost);
	cJSON_AddBoolToObject(doc, "host_preference_changed", r->pref_changed);
	cJSON_AddBoolToObject(doc, "host_preference_restored", r->pref_restored);
	vms = cJSON_AddArrayToObject(doc, "vms");
	for (i = 0; i < r->count; i++)
		cJSON_AddItemToArray(vms, outcome_json(r->vms[i], advice, data));
	recap_json(doc, r);
	return finish(doc, out);
}

/* A guest's output, every byte of it (NUL included), through the one sanitiser. */
static char *printable_bytes(const char *bytes, size_t len)
{
	return lm_text_sanitized(bytes, len, LM_TEXT_LINES);
}

/* A NULL-terminated vector (NULL: none) as an array of strings. */
static void add_strv(cJSON *o, const char *key, char *const *v)
{
	cJSON *arr = cJSON_AddArrayToObject(o, key);

	for (size_t i = 0; arr != NULL && v != NULL && v[i] != NULL; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateString(v[i]));
}

static cJSON *activation_json(const lm_run_result *r)
{
	cJSON *a, *lines, *records;
	size_t i;

	if (r == NULL || r->record_dir == NULL)
		return cJSON_CreateNull();
	if ((a = cJSON_CreateObject()) == NULL)
		return NULL;
	cJSON_AddStringToObject(a, "record_dir", r->record_dir);
	if (r->inherit < 0) {
		cJSON_AddNullToObject(a, "children_inherit");
		cJSON_AddNullToObject(a, "children_reason");
	} else {
		cJSON_AddBoolToObject(a, "children_inherit", r->inherit);
		cJSON_AddStringToObject(a, "children_reason", r->inherit_reason);
	}
	lines = cJSON_AddArrayToObject(a, "processes");
	for (i = 0; lines != NULL && i < r->nprocesses; i++)
		cJSON_AddItemToArray(lines, cJSON_CreateString(r->process_lines[i]));
	if (r->no_shim != NULL)
		cJSON_AddStringToObject(a, "no_shim", r->no_shim);
	else
		cJSON_AddNullToObject(a, "no_shim");
	records = r->records_json != NULL ? cJSON_Parse(r->records_json) : cJSON_CreateArray();
	cJSON_AddItemToObject(a, "records", records != NULL ? records : cJSON_CreateArray());
	cJSON_AddNumberToObject(a, "records_dropped", (double)r->records_dropped);
	cJSON_AddNumberToObject(a, "records_skipped", (double)r->records_skipped);
	add_strv(a, "skipped", r->skipped_lines);
	add_strv(a, "stock_children", r->stock_children);
	/* Since issue 48: the process the answers were widened in (the first by pid), as run's summary
	 * names it -- often a worker that came and went before the workload ended; null when none. */
	if (LM_HAS_FIELD(r, lm_run_result, widened_line)) {
		cJSON *rec = records != NULL && r->widened_line >= 0 ? cJSON_GetArrayItem(records, (int)r->widened_line) : NULL;
		cJSON *pid = cJSON_GetObjectItem(rec, "pid"), *exe = cJSON_GetObjectItem(rec, "exe"), *w;

		if (cJSON_IsNumber(pid) && (w = cJSON_AddObjectToObject(a, "widened_in")) != NULL) {
			cJSON_AddNumberToObject(w, "pid", pid->valuedouble);
			add_string_or_null(w, "exe", cJSON_IsString(exe) ? exe->valuestring : NULL);
		} else {
			cJSON_AddNullToObject(a, "widened_in");
		}
	}
	return a;
}

int lm_run_result_to_json(const char *vm, const lm_run_result *result, const char *out_bytes, size_t out_len,
    const char *err_bytes, size_t err_len, const lm_json_envelope *env, char **out)
{
	cJSON *doc = envelope(env), *a = NULL;
	char *o = printable_bytes(out_bytes, out_len), *e = printable_bytes(err_bytes, err_len);

	if (doc != NULL && o != NULL && e != NULL && (a = activation_json(result)) != NULL) {
		cJSON_AddStringToObject(doc, "vm", vm);
		cJSON_AddNumberToObject(doc, "exit_status", result != NULL ? result->exit_status : 255);
		cJSON_AddStringToObject(doc, "stdout", o);
		cJSON_AddStringToObject(doc, "stderr", e);
		cJSON_AddItemToObject(doc, "activation", a);
	} else {
		cJSON_Delete(doc);
		doc = NULL;
	}
	free(o);
	free(e);
	return finish(doc, out);
}

int lm_host_pref_status_to_json(const lm_host_pref_info *info, const lm_host_pref_byhost *byhost,
    const lm_json_envelope *env, char **out)
{
	cJSON *doc = envelope(env), *pref;

	if (doc != NULL) {
		pref = info != NULL && info->domain[0] != '\0' ? pref_json(info) : cJSON_CreateNull();
		if (cJSON_IsObject(pref))
			byhost_json(pref, byhost);
		cJSON_AddItemToObject(doc, "host_preference", pref);
	}
	return finish(doc, out);
}

int lm_host_status_to_json(const lm_host_pref_info *info, const lm_host_pref_byhost *byhost,
    lm_host_pref_vm *const *vms, size_t nvms, const lm_json_envelope *env, char **out)
{
	cJSON *doc = envelope(env), *pref, *arr, *v;
	size_t i;

	if (doc == NULL)
		return finish(NULL, out);
	pref = info != NULL && info->domain[0] != '\0' ? pref_json(info) : cJSON_CreateNull();
	if (cJSON_IsObject(pref))
		byhost_json(pref, byhost);
	cJSON_AddItemToObject(doc, "host_preference", pref);
	arr = cJSON_AddArrayToObject(doc, "vms");
	for (i = 0; arr != NULL && i < nvms; i++) {
		if ((v = cJSON_CreateObject()) == NULL || !cJSON_AddItemToArray(arr, v))
			break;
		cJSON_AddStringToObject(v, "vm", vms[i]->vm);
		cJSON_AddStringToObject(v, "host_preference_mode", lm_host_pref_mode_name(vms[i]->mode));
		if (vms[i]->needed == LM_PREF_NEEDED_UNKNOWN)
			cJSON_AddNullToObject(v, "host_preference_needed");
		else
			cJSON_AddBoolToObject(v, "host_preference_needed", vms[i]->needed == LM_PREF_NEEDED_YES);
		cJSON_AddBoolToObject(v, "keeps_preference", vms[i]->keeps);
	}
	return finish(doc, out);
}

int lm_selftest_result_to_json(const lm_selftest_result *r, const lm_json_envelope *env, char **out)
{
	cJSON *doc = envelope(env), *arr, *c, *sum;
	size_t i;

	if (doc == NULL)
		return finish(NULL, out);
	add_string_or_null(doc, "dir", r->dir);
	cJSON_AddBoolToObject(doc, "simulator", r->simulator);
	arr = cJSON_AddArrayToObject(doc, "checks");
	for (i = 0; arr != NULL && i < r->count; i++) {
		if ((c = cJSON_CreateObject()) == NULL || !cJSON_AddItemToArray(arr, c))
			break;
		cJSON_AddStringToObject(c, "name", r->checks[i]->name);
		cJSON_AddStringToObject(c, "question", r->checks[i]->question);
		cJSON_AddStringToObject(c, "assumed", r->checks[i]->assumed);
		cJSON_AddStringToObject(c, "seen", r->checks[i]->seen != NULL ? r->checks[i]->seen : "");
		cJSON_AddStringToObject(c, "verdict", lm_selftest_verdict_name(r->checks[i]->verdict));
		cJSON_AddStringToObject(c, "raw", r->checks[i]->raw != NULL ? r->checks[i]->raw : "");
	}
	if ((sum = cJSON_AddObjectToObject(doc, "summary")) != NULL) {
		cJSON_AddNumberToObject(sum, "agree", (double)r->agree);
		cJSON_AddNumberToObject(sum, "disagree", (double)r->disagree);
		cJSON_AddNumberToObject(sum, "not_measured", (double)r->not_measured);
	}
	return finish(doc, out);
}

/* The verdict's one spelling: this document, bench's selftest.json and README, the tool's lines. */
const char *lm_selftest_verdict_name(lm_selftest_verdict v)
{
	return v == LM_SELFTEST_AGREES ? "agrees" : v == LM_SELFTEST_DISAGREES ? "disagrees" : "not-measured";
}

int lm_profile_list_to_json(const lm_json_envelope *env, char **out)
{
	cJSON *doc = envelope(env), *arr, *o;
	const char *dflt = lm_profile_default_name();
	const lm_profile_capabilities *caps;
	lm_profile *p;
	size_t i;

	if (doc == NULL)
		return finish(NULL, out);
	cJSON_AddStringToObject(doc, "default", dflt);
	arr = cJSON_AddArrayToObject(doc, "profiles");
	for (i = 0; i < lm_profile_builtin_count(); i++) {
		const char *name = lm_profile_builtin_name(i);
		int rc;

		if ((rc = lm_profile_builtin(&p, name)) < 0) {
			cJSON_Delete(doc);
			return rc;
		}
		caps = lm_profile_caps(p);
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", name);
		cJSON_AddBoolToObject(o, "default", strcmp(name, dflt) == 0);
		cJSON_AddStringToObject(o, "description", lm_profile_description(p));
		cJSON_AddNumberToObject(o, "apple_family_max", caps->apple_family_max);
		cJSON_AddNumberToObject(o, "max_threadgroup_memory", (double)caps->max_threadgroup_memory);
		if (caps->has_recommended_working_set_size)
			cJSON_AddNumberToObject(o, "recommended_working_set_size", (double)caps->recommended_working_set_size);
		else
			cJSON_AddNullToObject(o, "recommended_working_set_size");
		cJSON_AddBoolToObject(o, "validated", lm_profile_validated(p));
		cJSON_AddItemToArray(arr, o);
		lm_profile_free(p);
	}
	return finish(doc, out);
}

int lm_profile_show_to_json(const lm_profile *p, int builtin, int is_default, const lm_json_envelope *env,
    char **out)
{
	lm_env_entry envv[LM_PROFILE_ENV_MAX];
	cJSON *doc = envelope(env), *prof, *envo;
	char *json = NULL;
	size_t i, n = 0;
	int rc;

	if (doc == NULL)
		return finish(NULL, out);
	if ((rc = lm_profile_to_json(p, &json)) < 0 || (rc = lm_profile_render_env(p, envv, &n)) < 0) {
		lm_free(json);
		cJSON_Delete(doc);
		return rc;
	}
	cJSON_AddBoolToObject(doc, "builtin", builtin);
	cJSON_AddBoolToObject(doc, "default", is_default);
	prof = cJSON_Parse(json);
	lm_free(json);
	cJSON_AddItemToObject(doc, "profile", prof != NULL ? prof : cJSON_CreateNull());
	envo = cJSON_AddObjectToObject(doc, "environment");
	for (i = 0; i < n; i++)
		cJSON_AddStringToObject(envo, envv[i].name, envv[i].value);
	return finish(doc, out);
}

int lm_profile_lint_to_json(const lm_profile *p, const char *source, int host_family,
    const lm_profile_lint_result *r, const lm_json_envelope *env, char **out)
{
	cJSON *doc = envelope(env), *w, *warnings, *notes, *o;
	size_t k;

	if (doc == NULL)
		return finish(NULL, out);
	cJSON_AddStringToObject(doc, "name", lm_profile_name(p));
	cJSON_AddStringToObject(doc, "source", source);
	cJSON_AddBoolToObject(doc, "valid", 1);
	if (host_family != 0)
		cJSON_AddNumberToObject(doc, "host_family", host_family);
	else
		cJSON_AddNullToObject(doc, "host_family");
	cJSON_AddBoolToObject(doc, "validated", lm_profile_validated(p));
	w = cJSON_AddObjectToObject(doc, "workloads");
	cJSON_AddItemToObject(w, "stock", flags_json(&r->stock));
	cJSON_AddItemToObject(w, "with_profile", flags_json(&r->shimmed));
	warnings = cJSON_AddArrayToObject(doc, "warnings");
	notes = cJSON_AddArrayToObject(doc, "notes");
	for (k = 0; k < r->count; k++) {
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "code", r->items[k].code);
		cJSON_AddStringToObject(o, "message", r->items[k].message);
		cJSON_AddItemToArray(r->items[k].level == LM_LINT_WARNING ? warnings : notes, o);
	}
	return finish(doc, out);
}

int lm_version_to_json(const char *program_version, const lm_json_envelope *env, char **out)
{
	cJSON *doc = envelope(env);

	if (doc != NULL) {
		cJSON_AddStringToObject(doc, "version", program_version != NULL ? program_version : lm_version());
		cJSON_AddStringToObject(doc, "library_version", lm_version());
	}
	return finish(doc, out);
}

int lm_forget_host_to_json(const char *vm, int forgotten, const char *state_dir, const lm_json_envelope *env,
    char **out)
{
	cJSON *doc = envelope(env);

	if (doc != NULL) {
		cJSON_AddStringToObject(doc, "vm", vm);
		cJSON_AddNumberToObject(doc, "forgotten", forgotten);
		cJSON_AddStringToObject(doc, "state_dir", state_dir);
	}
	return finish(doc, out);
}

int lm_local_install_to_json(const lm_local_install_result *result, const lm_json_envelope *env, char **out)
{
	cJSON *doc = envelope(env);

	if (doc != NULL && result != NULL) {
		cJSON_AddStringToObject(doc, "dir", result->dir);
		cJSON_AddStringToObject(doc, "bundle_id", result->bundle_id);
		if (result->previous[0] != '\0')
			cJSON_AddStringToObject(doc, "previous", result->previous);
		else
			cJSON_AddNullToObject(doc, "previous");
		cJSON_AddBoolToObject(doc, "changed", result->changed);
		cJSON_AddBoolToObject(doc, "repaired", result->repaired);
		cJSON_AddNumberToObject(doc, "files", result->files);
		cJSON_AddNumberToObject(doc, "removed", result->removed);
	}
	return finish(doc, out);
}

int lm_output_local_env(const lm_json_envelope *env, const char *bundle_id, size_t n, char *const *names,
    char *const *values, char **out)
{
	cJSON *doc = envelope(env), *vars;
	size_t i;

	if (doc != NULL && bundle_id != NULL) {
		cJSON_AddStringToObject(doc, "bundle_id", bundle_id);
		if ((vars = cJSON_AddObjectToObject(doc, "variables")) != NULL)
			for (i = 0; i < n; i++)
				cJSON_AddStringToObject(vars, names[i], values[i]);
	}
	return finish(doc, out);
}

static cJSON *metal_json(const lm_bench_metal *m)
{
	cJSON *o;

	if (!m->found)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
#define INT_OR_NULL(k, v) ((v) > 0 ? (void)cJSON_AddNumberToObject(o, k, v) : (void)cJSON_AddNullToObject(o, k))
#define FLAG_OR_NULL(k, v) ((v) >= 0 ? (void)cJSON_AddBoolToObject(o, k, v) : (void)cJSON_AddNullToObject(o, k))
	INT_OR_NULL("apple", m->apple);
	INT_OR_NULL("common", m->common);
	INT_OR_NULL("metal", m->metal);
	FLAG_OR_NULL("simdgroup_reduction", m->simdgroup_reduction);
	FLAG_OR_NULL("simdgroup_mm", m->simdgroup_mm);
	FLAG_OR_NULL("bfloat16", m->bfloat);
#undef INT_OR_NULL
#undef FLAG_OR_NULL
	return o;
}

static cJSON *doubles_json(const double *v, int n)
{
	return v != NULL ? cJSON_CreateDoubleArray(v, n) : cJSON_CreateArray();
}

int lm_bench_result_to_json(const lm_bench_result *r, const lm_json_envelope *env, char **out)
{
	cJSON *doc = envelope(env), *tests, *t, *ex;
	size_t i;
	int k;

	if (doc == NULL)
		return finish(NULL, out);
	cJSON_AddStringToObject(doc, "vm", r->vm);
	if (r->dir != NULL)
		cJSON_AddStringToObject(doc, "folder", r->dir);
	else
		cJSON_AddNullToObject(doc, "folder");
	cJSON_AddNumberToObject(doc, "rounds", r->rounds);
	cJSON_AddBoolToObject(doc, "bare_metal", r->bare_metal);
	cJSON_AddStringToObject(doc, "parser", r->parser == LM_BENCH_PARSER_NONE ? "none" : "llama-bench");
	cJSON_AddNumberToObject(doc, "seconds", r->seconds);
	tests = cJSON_AddArrayToObject(doc, "tests");
	for (i = 0; i < r->ntests; i++) {
		const lm_bench_test *bt = r->tests[i];
		t = cJSON_CreateObject();
		cJSON_AddStringToObject(t, "test", bt->name);
		cJSON_AddNumberToObject(t, "n_prompt", (double)bt->n_prompt);
		cJSON_AddNumberToObject(t, "n_gen", (double)bt->n_gen);
		cJSON_AddNumberToObject(t, "n_depth", (double)bt->n_depth);
		cJSON_AddStringToObject(t, "unit", r->parser == LM_BENCH_PARSER_NONE ? "s" : "t/s");
		cJSON_AddNumberToObject(t, "stock", bt->stock_median);
		cJSON_AddNumberToObject(t, "shimmed", bt->shimmed_median);
		if (bt->ratio > 0)
			cJSON_AddNumberToObject(t, "ratio", bt->ratio);
		else
			cJSON_AddNullToObject(t, "ratio");
		cJSON_AddNumberToObject(t, "stock_samples", (double)bt->stock_samples);
		cJSON_AddNumberToObject(t, "shimmed_samples", (double)bt->shimmed_samples);
		cJSON_AddItemToArray(tests, t);
	}
	cJSON_AddItemToObject(doc, "stock_metal", metal_json(r->stock_metal));
	cJSON_AddItemToObject(doc, "shimmed_metal", metal_json(r->shimmed_metal));
	cJSON_AddBoolToObject(doc, "kernel_choice_changed", r->kernel_choice_changed);
	add_string_or_null(doc, "llama_build", r->llama_build[0] ? r->llama_build : NULL);
	if (r->ablation)
		cJSON_AddItemToObject(doc, "preference_needed", r->preference_needed < 0 ? cJSON_CreateNull()
		    : cJSON_CreateBool(r->preference_needed));
	cJSON_AddItemToObject(doc, "stock_seconds", doubles_json(r->stock_seconds, r->stock_seconds ? r->rounds : 0));
	cJSON_AddItemToObject(doc, "shimmed_seconds", doubles_json(r->shimmed_seconds, r->shimmed_seconds ? r->rounds : 0));
	ex = cJSON_AddArrayToObject(doc, "exit_statuses");
	for (k = 0; r->stock_exit != NULL && k < r->rounds; k++) {
		cJSON *pair = cJSON_CreateIntArray((const int[2]){r->stock_exit[k], r->shimmed_exit[k]}, 2);
		cJSON_AddItemToArray(ex, pair);
	}
	return finish(doc, out);
}

static void number_or_null(cJSON *o, const char *name, double v)
{
	if (v > 0)
		cJSON_AddNumberToObject(o, name, v);
	else
		cJSON_AddNullToObject(o, name);
}

int lm_bench_compare_to_json(const lm_bench_comparison *c, const lm_json_envelope *env, char **out)
{
	cJSON *doc = envelope(env), *rows, *o;
	size_t i;

	if (doc == NULL)
		return finish(NULL, out);
	rows = cJSON_AddArrayToObject(doc, "rows");
	for (i = 0; c != NULL && i < c->count; i++) {
		const lm_bench_comparison_row *row = c->rows[i];
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "source", row->source);
		cJSON_AddStringToObject(o, "vm", row->vm);
		cJSON_AddStringToObject(o, "host", row->host);
		cJSON_AddStringToObject(o, "test", row->test);
		cJSON_AddStringToObject(o, "unit", row->unit);
		number_or_null(o, "stock", row->stock);
		number_or_null(o, "unlocked", row->unlocked);
		number_or_null(o, "unlocked_over_stock", row->unlocked_over_stock);
		number_or_null(o, "bare_metal", row->bare_metal);
		number_or_null(o, "unlocked_over_bare_metal", row->unlocked_over_bare_metal);
		if (row->provenance != NULL)
			cJSON_AddStringToObject(o, "provenance", row->provenance);
		if (row->proven < 0)
			cJSON_AddNullToObject(o, "proven_by_activation_records");
		else
			cJSON_AddBoolToObject(o, "proven_by_activation_records", row->proven);
		add_string_or_null(o, "llama_build", row->llama_build);
		add_string_or_null(o, "note", row->note);
		cJSON_AddItemToArray(rows, o);
	}
	return finish(doc, out);
}

/* local: the probe's document with the VM's members replaced by "machine" -- the outcome's
 * members less those only a VM has, and what this machine says of itself (docs/json-output.md). */
static void add_tristate(cJSON *o, const char *name, int v)
{
	if (v < 0)
		cJSON_AddNullToObject(o, name);
	else
		cJSON_AddBoolToObject(o, name, v);
}

int lm_local_result_to_json(const lm_local_result *r, const lm_json_envelope *env, char **out)
{
	static const char *const vm_only[] = {"vm", "state", "ip", "manager", "enabled", "gone", "rolling_back", "vm_id",
	    "vm_id_unreadable", "restarted", "started", "files_uploaded", "restart_pending", "host_preference_mode",
	    "host_preference_needed"};
	cJSON *doc = envelope(env), *m;
	size_t i;

	if (doc == NULL)
		return finish(NULL, out);
	cJSON_AddNumberToObject(doc, "seconds", r->seconds);
	/* Never read nor written by local: inside a VM the host is out of reach. */
	cJSON_AddNullToObject(doc, "host_preference");
	cJSON_AddBoolToObject(doc, "host_preference_changed", 0);
	cJSON_AddBoolToObject(doc, "host_preference_restored", 0);
	m = outcome_json(r->machine, NULL, NULL);
	for (i = 0; m != NULL && i < sizeof(vm_only) / sizeof(vm_only[0]); i++)
		cJSON_DeleteItemFromObjectCaseSensitive(m, vm_only[i]);
	if (m != NULL) {
		add_string_or_null(m, "bundle_dir", r->bundle_dir);
		add_tristate(m, "hv_vmm_present", r->hv_vmm_present);
		add_tristate(m, "paravirtual_device", r->paravirtual_device);
		add_tristate(m, "looks_like_vm", r->looks_like_vm);
		add_string_or_null(m, "device", r->machine->stock != NULL ? lm_report_device(r->machine->stock) : NULL);
		add_tristate(m, "answers_hold", r->answers_hold);
		add_tristate(m, "kernels_ran", r->kernels_ran);
		add_string_or_null(m, "kernels_note", r->kernels_note);
	}
	cJSON_AddItemToObject(doc, "machine", m != NULL ? m : cJSON_CreateNull());
	return finish(doc, out);
}
