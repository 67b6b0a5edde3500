/* VMs that no longer exist (docs/state-format.md, "Gone VMs"): CI fleets clone a VM per job and
 * delete it afterwards. When its manager says a VM does not exist, what lume-metal remembers of
 * it -- its journal entry, its known_hosts pin, its lock file -- is dropped with one notice, so later
 * commands do not fail on it, the preference's bookkeeping counts only live VMs, and the journal
 * stays as large as the number of VMs that exist. Only a definite "not found" counts: a manager
 * that cannot be reached proves nothing, and nothing is dropped then. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow_internal.h"
#include "ssh_pins.h"
#include "vm_gone.h"
#include "state.h"
#include "str.h"

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

/* Forget the n VMs of `sorted` (lm_strv_sort order): their journal entries in one write, their
 * pins in one more, their lock files; journal[i] and pin[i] say what was (or would be) dropped.
 * One write each, never one per VM: 4,000 VMs took 14.5 s that way. */
static int forget_vms(lm_context *ctx, char **sorted, size_t n, unsigned char *journal, unsigned char *pin)
{
	const int dry = lm_context_options(ctx)->dry_run;
	lm_state *st = NULL;
	size_t i;
	int rc;

	if (n == 0)
		return 0;
	/* A dry run drops them from a read-only copy, never saved. */
	if ((rc = dry ? lm_journal_open(&st, ctx, LM_STATE_READONLY, 0) : lm_journal_open_rw(&st, ctx)) < 0)
		return rc;
	if (lm_journal_forget_vms(st, sorted, n, journal) > 0 && !dry && (rc = lm_state_save(st)) < 0) {
		lm_state_close(st);
		return rc;
	}
	lm_state_close(st);
	if ((rc = lm_ssh_forget_hosts(ctx, sorted, n, pin, dry)) < 0)
		return rc;
	for (i = 0; i < n && !dry; i++) {
		lm_vm_lock_remove(ctx, sorted[i]);
		if (journal[i] || pin[i])
			lm_log(ctx, LM_LOG_INFO, "%s: the VM no longer exists (its VM manager does not know it): forgot its "
			    "%s%s%s", sorted[i], journal[i] ? "journal entry" : "", journal[i] && pin[i] ? " and " : "",
			    pin[i] ? "host-key pin" : "");
	}
	return 0;
}

/* o is a VM found gone: result ok, `gone`, the message saying what was forgotten. LM_ENOMEM (o's
 * result too) when that message cannot be had: a gone VM is never reported without it. */
static int gone_outcome(lm_context *ctx, lm_vm_outcome *o, int journal, int pin, int dry_run)
{
	o->gone = 1;
	return lm_outcome_message(ctx, o, "%s: gone (its VM manager does not know it): %s%s%s%s", o->vm,
	    !journal && !pin ? "nothing remembered of it" : dry_run ? "would forget its " : "forgot its ",
	    journal ? "journal entry" : "", journal && pin ? " and " : "", pin ? "host-key pin" : "");
}

/* The names the journal and known_hosts remember, each once, sorted (NULL-terminated), and the
 * manager the journal recorded for each ("" when none: a pin only, or an older journal). */
static int remembered(lm_context *ctx, char ***out, char ***managers, size_t *count)
{
	lm_state *st = NULL;
	char **pins = NULL, **names = NULL, **mgrs = NULL, **journal = NULL, **jmgrs = NULL;
	const char *name;
	size_t n = 0, nj = 0, np = 0, i = 0, k = 0;
	int rc, c;

	if ((rc = lm_ssh_pinned_vms(ctx, &pins)) < 0 || (rc = lm_journal_open(&st, ctx, LM_STATE_READONLY, 0)) < 0 ||
	    (rc = lm_vm_record_managers(st, &journal, &jmgrs)) < 0)
		goto out;
	while (journal[nj] != NULL)
		nj++;
	while (pins != NULL && pins[np] != NULL)
		np++;
	lm_strv_sort(pins, np);
	rc = LM_ENOMEM; /* said at out, only when it happens */
	if ((names = calloc(nj + np + 1, sizeof(*names))) == NULL || (mgrs = calloc(nj + np + 1, sizeof(*mgrs))) == NULL)
		goto out;
	/* Both sorted: merged in one pass, a name in both taken once, with the journal's manager. */
	for (; i < nj || k < np; i += c <= 0, k += c >= 0) {
		c = i == nj ? 1 : k == np ? -1 : strcmp(journal[i], pins[k]);
		name = c <= 0 ? journal[i] : pins[k];
		if (n > 0 && strcmp(names[n - 1], name) == 0)
			continue;
		if ((mgrs[n] = strdup(c <= 0 ? jmgrs[i] : "")) == NULL || (names[n++] = strdup(name)) == NULL)
			goto out;
	}
	rc = 0;
out:
	lm_state_close(st);
	lm_strv_free(pins);
	lm_strv_free(journal);
	lm_strv_free(jmgrs);
	if (rc < 0) {
		rc = rc == LM_ENOMEM ? lm_error_nomem() : rc;
		lm_strv_free(names);
		lm_strv_free(mgrs);
		names = mgrs = NULL;
	}
	*out = names;
	*managers = mgrs;
	*count = n;
	return rc;
}

int lm_flow_sweep_gone(lm_context *ctx, lm_vm_manager *vmm, const char *const *except, size_t n,
    lm_flow_result *report)
{
	char **names = NULL, **managers = NULL, **gone = NULL;
	unsigned char *skip = NULL, *journal = NULL, *pin = NULL;
	size_t i, count = 0, ngone = 0;
	lm_vm_outcome *o;
	int rc, gone_rc;

	if ((rc = remembered(ctx, &names, &managers, &count)) < 0)
		return rc;
	rc = LM_ENOMEM; /* said at out, only when it happens */
	if ((skip = calloc(count + 1, 1)) == NULL || (journal = calloc(count + 1, 1)) == NULL ||
	    (pin = calloc(count + 1, 1)) == NULL || (gone = calloc(count + 1, sizeof(*gone))) == NULL)
		goto out;
	for (i = 0; i < n; i++)
		skip[lm_strv_find(names, count, except[i])] = 1; /* one not there: the spare byte at count */
	/* A cancel stops the questions; the VMs found gone before it are still forgotten (in the one
	 * write), then the cancel is said. */
	for (i = 0; i < count && lm_context_check_cancel(ctx, "while forgetting VMs that no longer exist") == 0; i++) {
		if (skip[i] || (gone_rc = lm_vm_gone(vmm, names[i], managers[i])) == 0)
			continue;
		if (gone_rc < 0) { /* out of memory asking: nothing is forgotten */
			rc = gone_rc;
			goto out;
		}
		gone[ngone++] = names[i]; /* sorted, as names are */
	}
	if ((rc = forget_vms(ctx, gone, ngone, journal, pin)) < 0)
		goto out;
	for (i = 0; report != NULL && i < ngone && (rc = lm_flow_outcome_add(report, gone[i], &o)) == 0 &&
	     (rc = gone_outcome(ctx, o, journal[i], pin[i], lm_context_options(ctx)->dry_run)) == 0; i++)
		;
	if (rc == 0)
		rc = lm_context_check_cancel(ctx, "while forgetting VMs that no longer exist");
out:
	rc = rc == LM_ENOMEM ? lm_error_nomem() : rc;
	free(skip);
	free(journal);
	free(pin);
	free(gone);
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
	/* The preference first, as status reads it: a result that says ok says what it is (never an
	 * empty one), and nothing is forgotten when it cannot be read. Each failure returns at once,
	 * with its own message: nothing after it may replace or clear it. */
	if ((rc = lm_host_pref_status(ctx, NULL, &result->pref)) < 0 || (rc = lm_vm_manager_open(&vmm, ctx)) < 0)
		return rc;
	rc = lm_flow_sweep_gone(ctx, vmm, NULL, 0, result);
	lm_vm_manager_free(vmm);
	result->seconds = lm_clock_monotonic() - t;
	return rc;
}
