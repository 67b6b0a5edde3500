/* The timed steps of a VM's outcome and its message (interface/steps.h): what every command
 * reports through on_step and in its result. Durations are measured on the monotonic clock
 * (docs/design.md, "Time"). Here, below flow, so that flow/ stays the commands. */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "context_internal.h"
#include "error_internal.h"
#include "steps.h"
#include "str.h"
#include "text.h"

/* Each step is allocated on its own: the outcome holds pointers (flow.h). */
/* A step's detail is written into room reserved when the step is listed, so that saying what was
 * done cannot fail for want of memory once the step runs (a longer detail is allocated then, and
 * is what fits, ending in "...", when it cannot be). */
#define STEP_DETAIL_RESERVE 256

/* A step with the moment it began, so that a step an error stops says how long it ran (a wait
 * that timed out after 15 s is not a step of 0 s). The public part comes first: the outcome's
 * pointers are to it, and freeing it frees the whole. */
typedef struct {
	lm_flow_step pub;
	double started;
} timed_step;

static lm_flow_step *step_push(lm_vm_outcome *o, const char *name, double started)
{
	lm_flow_step **steps;
	timed_step *t;

	if ((t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	if ((t->pub.detail = calloc(1, STEP_DETAIL_RESERVE)) == NULL ||
	    (steps = realloc(o->steps, (o->nsteps + 1) * sizeof(*steps))) == NULL) {
		free(t->pub.detail);
		free(t);
		return NULL;
	}
	t->pub.size = sizeof(t->pub);
	t->pub.name = name;
	t->started = started;
	o->steps = steps;
	steps[o->nsteps++] = &t->pub;
	return &t->pub;
}

static void step_detail(lm_flow_step *s, const char *fmt, va_list ap) LM_PRINTF(2, 0);
static void step_detail(lm_flow_step *s, const char *fmt, va_list ap)
{
	va_list again;
	char *full;
	int n;

	va_copy(again, ap);
	n = vsnprintf(s->detail, STEP_DETAIL_RESERVE, fmt, ap);
	if (n >= STEP_DETAIL_RESERVE) {
		if ((full = lm_vformat(fmt, again)) != NULL) {
			free(s->detail);
			s->detail = full;
		} else {
			lm_text_mark_cut(s->detail, STEP_DETAIL_RESERVE, n);
		}
	}
	va_end(again);
}

static void step_detailf(lm_flow_step *s, const char *fmt, ...) LM_PRINTF(2, 3);
static void step_detailf(lm_flow_step *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	step_detail(s, fmt, ap);
	va_end(ap);
}

/* The step begun and not yet done, if any. */
static lm_flow_step *step_running(lm_vm_outcome *o)
{
	if (o->nsteps > 0 && o->steps[o->nsteps - 1]->state == LM_STEP_STARTED)
		return o->steps[o->nsteps - 1];
	return NULL;
}

int lm_step_begin(lm_context *ctx, lm_vm_outcome *o, const char *name, double *started)
{
	int rc;

	*started = lm_clock_monotonic();
	if ((rc = lm_context_check_cancel(ctx, "before the next step")) < 0)
		return lm_error_prefix("%s: ", name);
	if (step_push(o, name, *started) == NULL)
		return lm_error_nomem();
	lm_context_step(ctx, o->vm, name, LM_STEP_STARTED, 0, "");
	return 0;
}

int lm_step_add(lm_context *ctx, lm_vm_outcome *o, const char *name, double started, const char *fmt, ...)
{
	lm_flow_step *s = step_running(o);
	va_list ap;

	if ((s == NULL || strcmp(s->name, name) != 0) && (s = step_push(o, name, started)) == NULL)
		return lm_error_nomem(); /* a step not begun: not listed */
	s->state = LM_STEP_DONE;
	s->seconds = lm_clock_monotonic() - started;
	va_start(ap, fmt);
	step_detail(s, fmt, ap);
	va_end(ap);
	lm_context_step(ctx, o->vm, s->name, LM_STEP_DONE, s->seconds, s->detail);
	return 0;
}

int lm_step_settle(lm_context *ctx, lm_vm_outcome *o, const char *fmt, ...)
{
	lm_flow_step *s = step_running(o);
	va_list ap;

	if (s == NULL)
		return 0;
	s->state = LM_STEP_DONE;
	s->seconds = lm_clock_monotonic() - ((timed_step *)(void *)s)->started;
	va_start(ap, fmt);
	step_detail(s, fmt, ap);
	va_end(ap);
	lm_context_step(ctx, o->vm, s->name, LM_STEP_DONE, s->seconds, s->detail);
	return 0;
}

int lm_outcome_message(lm_context *ctx, lm_vm_outcome *o, const char *fmt, ...)
{
	va_list ap;
	char *m;

	va_start(ap, fmt);
	m = lm_vformat(fmt, ap);
	va_end(ap);
	/* Done, but not to be reported without its message: a fleet's line, a JSON result with no
	 * message, once printed "(null)" (found by the allocation sweep of agent install). */
	if (m == NULL)
		return lm_outcome_fail(ctx, o, lm_error_nomem());
	free(o->message);
	o->message = m;
	return 0;
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
	const char *why = lm_error_last()->message, *rest = NULL, *close;
	size_t n = strlen(o->vm);
	char *m, *detail = NULL;

	o->rc = rc;
	/* Never an earlier message in its place: none at all, when this one cannot be had. The VM's
	 * name once: many of the library's messages already begin with it ("vm1: ..."), and the SSH
	 * transport's with "VM 'vm1' (ADDRESS:PORT): ..." or "VM 'vm1': ...", which become
	 * "vm1 (ADDRESS:PORT): ..." and "vm1: ..." -- the step's detail, under the VM's name, without it. */
	if (strncmp(why, "VM '", 4) == 0 && strncmp(why + 4, o->vm, n) == 0 && why[4 + n] == '\'' &&
	    (why[5 + n] == ':' || (why[5 + n] == ' ' && why[6 + n] == '(' && strstr(why + 6 + n, "): ") != NULL)))
		rest = why + 5 + n;
	if (rest != NULL) {
		m = lm_format("%s%s", o->vm, rest);
		if (rest[0] == ':')
			detail = lm_format("%s", rest + 2);
		else if ((close = strstr(rest, "): ")) != NULL)
			detail = lm_format("%.*s%s", (int)(close - rest - 2), rest + 2, close + 1);
	} else if (strncmp(why, o->vm, n) == 0 && why[n] == ':' && why[n + 1] == ' ') {
		m = lm_format("%s", why);
	} else {
		m = lm_format("%s: %s", o->vm, why);
	}
	free(o->message);
	o->message = m;
	if (s != NULL) {
		s->state = LM_STEP_FAILED;
		s->seconds = lm_clock_monotonic() - ((timed_step *)(void *)s)->started;
		step_detailf(s, "%s", detail != NULL ? detail : why);
		lm_context_step(ctx, o->vm, s->name, LM_STEP_FAILED, s->seconds, detail != NULL ? detail : why);
	}
	free(detail);
	return rc;
}

