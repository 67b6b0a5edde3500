/* VMs that no longer exist (docs/state-format.md, "Gone VMs"): CI fleets clone a VM per job and
 * delete it afterwards. When its manager says a VM does not exist, what lume-metal remembers of
 * it -- its journal entry and its known_hosts pin -- is dropped with one notice, so that later
 * commands do not fail on it, the preference's bookkeeping counts only live VMs, and the journal
 * stays as large as the number of VMs that exist. Only a definite "not found" counts: a manager
 * that cannot be reached proves nothing, and nothing is dropped then. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow_internal.h"
#include "ssh_pins.h"
#include "vm_gone.h"
#include "str.h"

/* Whether `name` is in the NULL-terminated list (NULL: empty). */
static int listed(char **list, const char *name)
{
	for (; list != NULL && *list != NULL; list++)
		if (strcmp(*list, name) == 0)
			return 1;
	return 0;
}

/* The manager a VM's record names ("" when none, or when its record cannot be read: then every
 * manager asked must say it is gone). */
static void recorded_manager(lm_state *st, const char *vm, char *buf, size_t size)
{
	lm_vm_record r;

	buf[0] = '\0';
	if (lm_vm_record_get(st, vm, &r) == 0)
		snprintf(buf, size, "%s", r.manager);
	else
		lm_error_clear();
	lm_vm_record_dispose(&r);
}

int lm_flow_journal_manager(lm_context *ctx, const char *vm, char *buf, size_t size)
{
	lm_state *st = NULL;
	int rc;

	buf[0] = '\0';
	if ((rc = lm_journal_open(&st, ctx, LM_STATE_READONLY, 0)) < 0)
		return rc;
	recorded_manager(st, vm, buf, size);
	lm_state_close(st);
	return 0;
}

int lm_flow_forget_vm(lm_context *ctx, const char *vm, int *journal, int *pin)
{
	lm_state *st = NULL;
	int rc;

	*journal = *pin = 0;
	if (lm_context_options(ctx)->dry_run) {
		char **pins = NULL;
		if ((rc = lm_journal_open(&st, ctx, LM_STATE_READONLY, 0)) < 0)
			return rc;
		*journal = lm_journal_has_vm(st, vm);
		lm_state_close(st);
		if ((rc = lm_ssh_pinned_vms(ctx, &pins)) < 0)
			return rc;
		*pin = listed(pins, vm);
		lm_strv_free(pins);
		return 0;
	}
	if ((rc = lm_journal_open_rw(&st, ctx)) < 0)
		return rc;
	if (lm_journal_has_vm(st, vm)) {
		lm_journal_forget_vm(st, vm);
		if ((rc = lm_state_save(st)) < 0) {
			lm_state_close(st);
			return rc;
		}
		*journal = 1;
	}
	lm_state_close(st);
	if ((rc = lm_ssh_forget_host(ctx, vm)) < 0)
		return rc;
	*pin = rc > 0;
	if (*journal || *pin)
		lm_log(ctx, LM_LOG_INFO, "%s: the VM no longer exists (its VM manager does not know it): forgot its %s%s%s",
		    vm, *journal ? "journal entry" : "", *journal && *pin ? " and " : "", *pin ? "host-key pin" : "");
	return 0;
}

void lm_flow_gone_outcome(lm_vm_outcome *o, int journal, int pin, int dry_run)
{
	o->gone = 1;
	o->rc = 0;
	lm_outcome_message(o, "%s: gone (its VM manager does not know it): %s%s%s%s", o->vm,
	    !journal && !pin ? "nothing remembered of it" : dry_run ? "would forget its " : "forgot its ",
	    journal ? "journal entry" : "", journal && pin ? " and " : "", pin ? "host-key pin" : "");
}

static int excepted(const char *const *except, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(except[i], name) == 0)
			return 1;
	return 0;
}

/* The names the journal and known_hosts remember, each once (NULL-terminated), and the manager
 * the journal recorded for each ("" when none: a pin only, or an older journal). */
static int remembered(lm_context *ctx, char ***out, char ***managers)
{
	lm_state *st = NULL;
	char **pins = NULL, **names = NULL, **mgrs = NULL, **journal = NULL, manager[32];
	size_t n = 0, cap = 1, i;
	int rc;

	*out = *managers = NULL;
	if ((rc = lm_ssh_pinned_vms(ctx, &pins)) < 0)
		return rc;
	if ((rc = lm_journal_open(&st, ctx, LM_STATE_READONLY, 0)) < 0) {
		lm_strv_free(pins);
		return rc;
	}
	if ((rc = lm_journal_vm_names(st, &journal)) < 0) {
		lm_state_close(st);
		lm_strv_free(pins);
		return rc;
	}
	for (i = 0; journal[i] != NULL; i++)
		cap++;
	for (i = 0; pins != NULL && pins[i] != NULL; i++)
		cap++;
	if ((names = calloc(cap, sizeof(*names))) == NULL || (mgrs = calloc(cap, sizeof(*mgrs))) == NULL)
		goto nomem;
	for (i = 0; journal[i] != NULL; i++) {
		recorded_manager(st, journal[i], manager, sizeof(manager));
		if ((mgrs[n] = strdup(manager)) == NULL || (names[n++] = strdup(journal[i])) == NULL)
			goto nomem;
	}
	for (i = 0; pins != NULL && pins[i] != NULL; i++)
		if (!listed(names, pins[i]) && ((mgrs[n] = strdup("")) == NULL || (names[n++] = strdup(pins[i])) == NULL))
			goto nomem;
	lm_state_close(st);
	lm_strv_free(pins);
	lm_strv_free(journal);
	*out = names;
	*managers = mgrs;
	return 0;
nomem:
	lm_state_close(st);
	lm_strv_free(pins);
	lm_strv_free(journal);
	lm_strv_free(names);
	lm_strv_free(mgrs);
	return lm_error_nomem();
}

int lm_flow_sweep_gone(lm_context *ctx, lm_vm_manager *vmm, const char *const *except, size_t n,
    lm_flow_result *report)
{
	char **names = NULL, **managers = NULL;
	size_t i;
	int rc, journal, pin;

	if ((rc = remembered(ctx, &names, &managers)) < 0)
		return rc;
	for (i = 0; names != NULL && names[i] != NULL; i++) {
		if ((rc = lm_context_check_cancel(ctx, "while forgetting VMs that no longer exist")) < 0)
			break;
		if (excepted(except, n, names[i]) || !lm_vm_gone(vmm, names[i], managers[i]))
			continue;
		if ((rc = lm_flow_forget_vm(ctx, names[i], &journal, &pin)) < 0)
			break;
		if (report != NULL) {
			lm_vm_outcome *o;
			if ((rc = lm_flow_outcome_add(report, names[i], &o)) < 0)
				break;
			lm_flow_gone_outcome(o, journal, pin, lm_context_options(ctx)->dry_run);
		}
	}
	lm_strv_free(names);
	lm_strv_free(managers);
	return rc;
}

void lm_flow_sweep_others(lm_context *ctx, lm_vm_manager *vmm, const lm_flow_result *result)
{
	const char **names = calloc(result->count + 1, sizeof(*names));
	size_t i;

	if (names == NULL || lm_context_options(ctx)->dry_run) {
		free(names);
		return;
	}
	for (i = 0; i < result->count; i++)
		names[i] = result->vms[i]->vm;
	if (lm_flow_sweep_gone(ctx, vmm, names, result->count, NULL) < 0)
		lm_log(ctx, LM_LOG_DEBUG, "looking for VMs that no longer exist: %s", lm_error_last()->message);
	lm_error_clear();
	free(names);
}

int lm_flow_gc(lm_context *ctx, lm_flow_result **out)
{
	lm_flow_result *result;
	lm_vm_manager *vmm = NULL;
	double t = lm_clock_monotonic();
	int rc;

	if ((rc = lm_flow_result_new(out)) < 0)
		return rc;
	result = *out;
	if ((rc = lm_vm_manager_open(&vmm, ctx)) < 0)
		return rc;
	rc = lm_flow_sweep_gone(ctx, vmm, NULL, 0, result);
	lm_vm_manager_free(vmm);
	if (lm_host_pref_status(ctx, NULL, &result->pref) < 0)
		lm_log(ctx, LM_LOG_WARN, "could not read the host preference: %s", lm_error_last()->message);
	result->seconds = lm_clock_monotonic() - t;
	return rc;
}
