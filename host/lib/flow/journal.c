/* Per-VM entries in the state journal (docs/state-format.md, "vms"), and the per-VM outcomes and
 * timed steps every flow command reports. */
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "flow_internal.h"
#include "ssh_pins.h"
#include "json.h"
#include "str.h"
#include "text.h"

int lm_flow_open_known(lm_context *ctx, lm_flow_result *result)
{
	lm_state *st = NULL;
	const cJSON *vm;
	const char **names;
	size_t count, i = 0;
	int rc;

	if ((rc = lm_state_open_ex(&st, ctx, LM_STATE_READONLY, 10)) < 0)
		return rc;
	count = (size_t)cJSON_GetArraySize(lm_state_vms(st));
	if ((names = calloc(count + 1, sizeof(*names))) == NULL) {
		lm_state_close(st);
		return lm_error_nomem();
	}
	/* The names point into the document, which stays alive until the outcomes copied them. */
	cJSON_ArrayForEach(vm, lm_state_vms(st))
		names[i++] = vm->string;
	rc = lm_flow_open_outcomes(result, names, count);
	free(names);
	lm_state_close(st);
	return rc;
}

void lm_journal_set_string(cJSON *obj, const char *key, const char *value)
{
	cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
	cJSON_AddStringToObject(obj, key, value != NULL ? value : "");
}

void lm_journal_set_number(cJSON *obj, const char *key, double value)
{
	cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
	cJSON_AddNumberToObject(obj, key, value);
}

const char *lm_journal_string(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

double lm_journal_number(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

int lm_journal_store_report(cJSON *vm, const char *key, const lm_report *report)
{
	char *json = NULL;
	cJSON *parsed;
	int rc;

	cJSON_DeleteItemFromObjectCaseSensitive(vm, key);
	if (report == NULL)
		return 0;
	if ((rc = lm_report_to_json(report, &json)) < 0)
		return rc;
	parsed = cJSON_Parse(json);
	lm_free(json);
	if (parsed == NULL)
		return lm_error_nomem();
	cJSON_AddItemToObject(vm, key, parsed);
	return 0;
}

int lm_journal_load_report(const cJSON *vm, const char *key, lm_report **out)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(vm, key);
	char *json;
	int rc;

	*out = NULL;
	if (!cJSON_IsObject(item))
		return LM_ENOTFOUND;
	if ((json = cJSON_PrintUnformatted(item)) == NULL)
		return lm_error_nomem();
	rc = lm_report_from_json(out, json, strlen(json));
	free(json);
	return rc;
}

void lm_journal_store_facts(cJSON *vm, const lm_guest_facts *f)
{
	cJSON *g;

	cJSON_DeleteItemFromObjectCaseSensitive(vm, "guest");
	g = cJSON_AddObjectToObject(vm, "guest");
	cJSON_AddStringToObject(g, "os", f->os);
	cJSON_AddStringToObject(g, "arch", f->arch);
	cJSON_AddStringToObject(g, "os_version", f->os_version);
	cJSON_AddNumberToObject(g, "boot_time", f->boot_time);
	cJSON_AddStringToObject(g, "home", f->home);
	if (f->sip[0] != '\0')
		cJSON_AddStringToObject(g, "sip", f->sip);
}

int lm_journal_copy_string(const cJSON *obj, const char *key, char *out, size_t len)
{
	const char *s = lm_journal_string(obj, key);

	if (lm_text_format(out, len, "%s", s != NULL ? s : "") < 0)
		return lm_error_set(LM_ECORRUPT, "state journal: \"%s\" is longer than %zu bytes (the limit); the journal "
		    "was changed by hand or is damaged (docs/state-format.md)", key, len - 1);
	return 0;
}

int lm_journal_load_facts(const cJSON *vm, lm_guest_facts *f)
{
	const cJSON *g = cJSON_GetObjectItemCaseSensitive(vm, "guest"), *bt;
	const char *s;
	int rc;

	memset(f, 0, sizeof(*f));
	if (!cJSON_IsObject(g))
		return 0;
	if ((rc = lm_journal_copy_string(g, "os", f->os, sizeof(f->os))) < 0 ||
	    (rc = lm_journal_copy_string(g, "arch", f->arch, sizeof(f->arch))) < 0 ||
	    (rc = lm_journal_copy_string(g, "os_version", f->os_version, sizeof(f->os_version))) < 0 ||
	    (rc = lm_journal_copy_string(g, "home", f->home, sizeof(f->home))) < 0)
		return rc;
	if ((s = lm_journal_string(g, "sip")) != NULL)
		lm_sip_status_parse(s, f->sip, sizeof(f->sip));
	/* A boot time outside what an epoch second can be reads as unknown (0), as a missing one. */
	bt = cJSON_GetObjectItemCaseSensitive(g, "boot_time");
	if (cJSON_IsNumber(bt) && bt->valuedouble > 0 && bt->valuedouble < 1e11)
		f->boot_time = bt->valuedouble;
	return 0;
}

static lm_flow_step *step_push(lm_vm_outcome *o, const char *name)
{
	lm_flow_step *steps = realloc(o->steps, (o->nsteps + 1) * sizeof(*steps));

	if (steps == NULL)
		return NULL;
	o->steps = steps;
	memset(&steps[o->nsteps], 0, sizeof(*steps));
	steps[o->nsteps].name = name;
	return &steps[o->nsteps++];
}

/* The step begun and not yet done, if any. */
static lm_flow_step *step_running(lm_vm_outcome *o)
{
	if (o->nsteps > 0 && o->steps[o->nsteps - 1].state == LM_STEP_STARTED)
		return &o->steps[o->nsteps - 1];
	return NULL;
}

int lm_step_begin(lm_context *ctx, lm_vm_outcome *o, const char *name, double *started)
{
	int rc;

	*started = lm_clock_epoch();
	if ((rc = lm_context_check_cancel(ctx, "before the next step")) < 0)
		return lm_error_prefix("%s: ", name);
	if (step_push(o, name) == NULL)
		return lm_error_nomem();
	lm_context_step(ctx, o->vm, name, LM_STEP_STARTED, 0, "");
	return 0;
}

void lm_step_add(lm_context *ctx, lm_vm_outcome *o, const char *name, double started, const char *fmt, ...)
{
	lm_flow_step *s = step_running(o);
	va_list ap;

	if ((s == NULL || strcmp(s->name, name) != 0) && (s = step_push(o, name)) == NULL)
		return; /* out of memory: the step is not listed, the operation goes on */
	s->state = LM_STEP_DONE;
	s->seconds = lm_clock_epoch() - started;
	va_start(ap, fmt);
	s->detail = lm_vformat(fmt, ap);
	va_end(ap);
	lm_context_step(ctx, o->vm, s->name, LM_STEP_DONE, s->seconds, s->detail);
}

void lm_outcome_message(lm_vm_outcome *o, const char *fmt, ...)
{
	va_list ap;
	char *m;

	va_start(ap, fmt);
	m = lm_vformat(fmt, ap);
	va_end(ap);
	if (m == NULL)
		return; /* out of memory: the previous message stays */
	free(o->message);
	o->message = m;
}

void lm_outcome_append(lm_vm_outcome *o, const char *fmt, ...)
{
	va_list ap;
	char *tail, *m;

	va_start(ap, fmt);
	tail = lm_vformat(fmt, ap);
	va_end(ap);
	if (tail == NULL)
		return; /* out of memory: the message stays as it was */
	if ((m = lm_format("%s%s", o->message != NULL ? o->message : "", tail)) != NULL) {
		free(o->message);
		o->message = m;
	}
	free(tail);
}

int lm_outcome_fail(lm_context *ctx, lm_vm_outcome *o, int rc)
{
	lm_flow_step *s = step_running(o);
	const char *why = lm_error_last()->message;

	o->rc = rc;
	lm_outcome_message(o, "%s: %s", o->vm, why);
	if (s != NULL) {
		s->state = LM_STEP_FAILED;
		s->detail = strdup(why);
		lm_context_step(ctx, o->vm, s->name, LM_STEP_FAILED, s->seconds, why);
	}
	return rc;
}

lm_vm_level lm_vm_level_of(double changed_at, double boot_time, double started_at, double margin)
{
	if (changed_at <= 0)
		return LM_VM_LEVEL_UNSURE;
	/* Started by us after the change: its process can only have read the new value. */
	if (started_at > changed_at)
		return LM_VM_LEVEL_AFTER;
	if (boot_time <= 0)
		return LM_VM_LEVEL_UNSURE;
	/* The process starts before the kernel boots: a kernel that booted before the change belongs
	 * to a process that started before it too. */
	if (boot_time < changed_at)
		return LM_VM_LEVEL_BEFORE;
	/* After the change, but its process may have started up to `margin` earlier than its kernel. */
	if (boot_time > changed_at + margin)
		return LM_VM_LEVEL_AFTER;
	return LM_VM_LEVEL_UNSURE;
}

int lm_vm_restart_needed(const lm_host_pref_info *pref, double boot_time, double started_at, double margin)
{
	return pref->recorded && lm_vm_level_of(pref->changed_at, boot_time, started_at, margin) != LM_VM_LEVEL_AFTER;
}

#ifdef LM_TEST_HOOKS
static atomic_int test_stopped;
void lm_flow_test_kill_point(const char *step)
{
	const char *at = getenv("LUME_METAL_TEST_KILL_AT");

	if (at != NULL && strcmp(at, step) == 0)
		kill(getpid(), SIGKILL);
	/* Once: a step reached again (every uploaded file) runs on after the first stop. */
	at = getenv("LUME_METAL_TEST_STOP_AT");
	if (at != NULL && strcmp(at, step) == 0 && atomic_exchange(&test_stopped, 1) == 0)
		kill(getpid(), SIGSTOP);
}
#endif

void lm_flow_result_dispose(lm_flow_result *result)
{
	size_t i, k;

	if (result == NULL)
		return;
	for (i = 0; i < result->count; i++) {
		lm_vm_outcome *o = &result->vms[i];

		lm_report_free(o->stock);
		lm_report_free(o->shimmed);
		lm_report_free(o->tart);
		lm_report_free(o->exercised);
		free(o->message);
		for (k = 0; k < o->nsteps; k++)
			free(o->steps[k].detail);
		free(o->steps);
		free(o->agents);
	}
	free(result->vms);
	result->vms = NULL;
	result->count = 0;
}

int lm_flow_open_outcomes(lm_flow_result *result, const char *const *vms, size_t n)
{
	size_t i;

	result->vms = NULL;
	result->count = 0;
	if (n == 0)
		return 0;
	if ((result->vms = calloc(n, sizeof(*result->vms))) == NULL)
		return lm_error_nomem();
	result->count = n;
	for (i = 0; i < n; i++) {
		char name[LM_VM_NAME_MAX];
		if (lm_vm_name_normalize(vms[i], name) < 0) {
			lm_flow_result_dispose(result);
			return lm_error_last()->code; /* the message names the VM, sanitised */
		}
		snprintf(result->vms[i].vm, sizeof(result->vms[i].vm), "%s", name);
	}
	return 0;
}

int lm_flow_fail_all(lm_context *ctx, lm_flow_result *result, int rc)
{
	size_t i;

	for (i = 0; i < result->count; i++)
		lm_outcome_fail(ctx, &result->vms[i], rc);
	return rc;
}

int lm_flow_summary_rc(const lm_flow_result *result)
{
	size_t i;

	for (i = 0; i < result->count; i++)
		if (result->vms[i].rc < 0)
			return lm_error_set(result->vms[i].rc, "%s", result->vms[i].message);
	return 0;
}

int lm_flow_connect(lm_context *ctx, const char *vm, const lm_vm_info *info, lm_ssh **out)
{
	if (info->ip[0] == '\0')
		return lm_error_set(LM_ERROR, "%s has no IP address (is it running?)", vm);
	return lm_ssh_connect_vm(out, ctx, vm, info->ip, 22, info->account, info->vm_id);
}
