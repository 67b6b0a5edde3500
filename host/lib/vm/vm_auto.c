/* The automatic choice of a VM manager, per VM name: Lume (its HTTP API when anything accepts
 * connections at the URL, else `lume` on PATH) and `tart` on PATH are asked; the one that knows
 * the name is used for that VM from then on. A name two managers know is an error that names them
 * both: which VM was meant cannot be guessed. `utmctl` on PATH is asked last, only when neither
 * knows the name, and not at all while UTM.app is not running: every utmctl command drives UTM.app
 * over Apple Events, launching it (hidden) and possibly asking the user for Automation consent --
 * not something to do for a VM that is Lume's or Tart's. */
#include "vm_internal.h"
#include "vm_gone.h"
#include "text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct lm_vm_choice {
	char name[LM_VM_NAME_MAX];
	const lm_vm_backend *backend;
};

/* UTM is asked only while UTM.app runs (*why says so otherwise). */
static int utm_askable(lm_vm_manager *vmm, int *askable, char *why, size_t cap)
{
	int rc;

	why[0] = '\0';
	if ((rc = lm_vm_utm_app_running(vmm, askable)) < 0)
		return rc;
	if (!*askable)
		snprintf(why, cap, "; utm: not asked, UTM.app is not running (utmctl would launch it; start UTM.app to "
		    "use its VMs)");
	return 0;
}

static const lm_vm_backend *chosen(const lm_vm_manager *vmm, const char *name)
{
	size_t i;

	for (i = 0; i < vmm->nchoices; i++)
		if (strcmp(vmm->choices[i].name, name) == 0)
			return vmm->choices[i].backend;
	return NULL;
}

/* Which manager knows `name`; *info is its answer when it was asked now. */
static int resolve(lm_vm_manager *vmm, const char *name, const lm_vm_backend **out, lm_vm_info *info, int *fresh)
{
	const lm_vm_backend *found[4];
	lm_vm_info answers[4];
	lm_buf asked, errors;
	struct lm_vm_choice *bigger;
	size_t i, n = 0;
	int rc;

	*fresh = 0;
	if ((*out = chosen(vmm, name)) != NULL)
		return 0;
	lm_buf_init(&asked, LM_BUF_TEXT_MAX);
	lm_buf_init(&errors, LM_BUF_TEXT_MAX);
	for (i = 0; i < vmm->ncandidates; i++) {
		const lm_vm_backend *b = vmm->candidates[i];
		if (b == &lm_vm_backend_utm) {
			/* the last candidate: asked only when no other manager knows the name */
			char why[160];
			int askable;
			if (n > 0)
				break;
			if ((rc = utm_askable(vmm, &askable, why, sizeof(why))) < 0) {
				lm_buf_dispose(&asked);
				lm_buf_dispose(&errors);
				return rc;
			}
			if (!askable) {
				lm_buf_adds(&errors, why);
				break;
			}
		}
		lm_buf_addf(&asked, "%s%s", i ? ", " : "", b->name);
		if ((rc = b->get(vmm, name, &answers[n])) == 0) {
			found[n++] = b;
		} else if (rc != LM_ENOTFOUND) {
			/* a manager that cannot answer (UTM.app not running, say) cannot rule the name out */
			lm_buf_addf(&errors, "; %s: %s", b->name, lm_error_last()->message);
			lm_log(vmm->ctx, LM_LOG_DEBUG, "%s: %s could not say whether it knows it: %s", name, b->name,
			    lm_error_last()->message);
		}
	}
	if (n == 0)
		rc = lm_error_set(LM_ENOTFOUND, "%s: no VM manager knows this VM (asked: %s)%s", name, lm_buf_ptr(&asked),
		    lm_buf_ptr(&errors));
	else if (n > 1)
		rc = lm_error_set(LM_EAMBIGUOUS, "%s: more than one VM manager has a VM of this name (%s and %s%s%s); "
		    "which one is meant cannot be told", name, found[0]->name, found[1]->name, n > 2 ? " and " : "",
		    n > 2 ? found[2]->name : "");
	else
		rc = 0;
	lm_buf_dispose(&asked);
	lm_buf_dispose(&errors);
	if (rc < 0)
		return rc;
	if ((bigger = realloc(vmm->choices, (vmm->nchoices + 1) * sizeof(*bigger))) == NULL)
		return lm_error_nomem();
	vmm->choices = bigger;
	snprintf(vmm->choices[vmm->nchoices].name, sizeof(vmm->choices[0].name), "%s", name);
	vmm->choices[vmm->nchoices++].backend = found[0];
	lm_log(vmm->ctx, LM_LOG_DEBUG, "%s: managed by %s", name, found[0]->name);
	*out = found[0];
	*info = answers[0];
	*fresh = 1;
	return 0;
}

static int auto_get(lm_vm_manager *vmm, const char *name, lm_vm_info *out)
{
	const lm_vm_backend *b;
	int fresh, rc;

	if ((rc = resolve(vmm, name, &b, out, &fresh)) < 0)
		return rc;
	if (!fresh && (rc = b->get(vmm, name, out)) < 0)
		return rc;
	lm_vm_fill_identity(out, b);
	return 0;
}

static int auto_start(lm_vm_manager *vmm, const char *name)
{
	const lm_vm_backend *b;
	lm_vm_info info;
	int fresh, rc;

	if ((rc = resolve(vmm, name, &b, &info, &fresh)) < 0)
		return rc;
	return b->start(vmm, name);
}

static int auto_stop(lm_vm_manager *vmm, const char *name)
{
	const lm_vm_backend *b;
	lm_vm_info info;
	int fresh, rc;

	if ((rc = resolve(vmm, name, &b, &info, &fresh)) < 0)
		return rc;
	return b->stop(vmm, name);
}

/* Every manager's VMs; one that cannot list is left out with a warning. */
static int auto_list(lm_vm_manager *vmm, lm_vm_info **out, size_t *count)
{
	lm_vm_info *all = NULL, *part, *bigger;
	size_t n = 0, k, i, j;

	for (i = 0; i < vmm->ncandidates; i++) {
		const lm_vm_backend *b = vmm->candidates[i];
		int askable = 1;
		if (b == &lm_vm_backend_utm && lm_vm_utm_app_running(vmm, &askable) == 0 && !askable) {
			lm_log(vmm->ctx, LM_LOG_INFO, "UTM's VMs are not listed: UTM.app is not running (utmctl would "
			    "launch it; start UTM.app to list them)");
			continue;
		}
		if (b->list(vmm, &part, &k) < 0) {
			lm_log(vmm->ctx, LM_LOG_WARN, "%s: its VMs could not be listed: %s", b->name, lm_error_last()->message);
			continue;
		}
		if (k > 0 && (bigger = realloc(all, (n + k) * sizeof(*all))) == NULL) {
			free(part);
			free(all);
			return lm_error_nomem();
		}
		if (k > 0)
			all = bigger;
		for (j = 0; j < k; j++) {
			all[n] = part[j];
			lm_vm_fill_identity(&all[n++], b);
		}
		free(part);
	}
	*out = all;
	*count = n;
	return 0;
}

static void auto_release(lm_vm_manager *vmm)
{
	size_t i;

	for (i = 0; i < vmm->ncandidates; i++)
		if (vmm->candidates[i]->release != NULL)
			vmm->candidates[i]->release(vmm);
	free(vmm->choices);
	vmm->choices = NULL;
	vmm->nchoices = 0;
}

/* Lume's API and CLI are one manager with two ways in. */
static int same_family(const char *a, const char *b)
{
	return strcmp(a, b) == 0 || (strncmp(a, "lume", 4) == 0 && strncmp(b, "lume", 4) == 0);
}

int lm_vm_gone(lm_vm_manager *vmm, const char *name, const char *manager)
{
	lm_vm_info info;
	size_t i;
	int asked = 0, hinted = manager == NULL || manager[0] == '\0', rc;

	if (vmm->backend != &lm_vm_backend_auto) {
		/* A forced manager answers for its own VMs only. */
		if (!hinted && !same_family(vmm->backend->name, manager))
			return 0;
		rc = vmm->backend->get(vmm, name, &info);
		lm_error_clear();
		return rc == LM_ENOTFOUND && strcmp(vmm->backend->name, "none") != 0;
	}
	for (i = 0; i < vmm->ncandidates; i++) {
		const lm_vm_backend *b = vmm->candidates[i];
		int askable = 1;
		if (b == &lm_vm_backend_utm && lm_vm_utm_app_running(vmm, &askable) == 0 && !askable) {
			/* not asked: it cannot rule out a VM it ran, and is not needed for the others' */
			if (same_family(b->name, manager != NULL ? manager : ""))
				return 0;
			continue;
		}
		rc = b->get(vmm, name, &info);
		lm_error_clear();
		if (rc != LM_ENOTFOUND)
			return 0; /* it knows the VM, or cannot tell */
		asked++;
		hinted = hinted || same_family(b->name, manager);
	}
	return asked > 0 && hinted;
}

const lm_vm_backend lm_vm_backend_auto = {"auto", auto_list, auto_get, auto_start, auto_stop, auto_release, NULL, NULL};

const lm_vm_backend *lm_vm_backend_for(const lm_vm_manager *vmm, const char *name)
{
	if (vmm == NULL || vmm->backend == NULL)
		return NULL;
	if (vmm->backend != &lm_vm_backend_auto)
		return vmm->backend;
	return name != NULL ? chosen(vmm, name) : NULL;
}

const char *lm_vm_manager_name_for(const lm_vm_manager *vmm, const char *name)
{
	const lm_vm_backend *b = lm_vm_backend_for(vmm, name);

	if (vmm == NULL || vmm->backend == NULL)
		return "none";
	return b != NULL ? b->name : "auto";
}

int lm_vm_auto_init(lm_vm_manager *vmm, const char *url, const char *lume_program)
{
	const lm_options *o = lm_context_options(vmm->ctx);
	const char *tart = o->tart_program != NULL && o->tart_program[0] ? o->tart_program : "tart";
	const char *utmctl = o->utmctl_program != NULL && o->utmctl_program[0] ? o->utmctl_program : "utmctl";
	char api_why[512] = "";
	char *found = NULL;
	int rc;

	/* Whatever accepts connections there is taken for the API: a slow answer is still the API
	 * (the first real request says clearly if it is not Lume), never a reason to switch. */
	if ((rc = lm_vm_api_reachable(url, vmm->connect_timeout)) == 0) {
		lm_log(vmm->ctx, LM_LOG_DEBUG, "something accepts connections at %s: Lume's API is a candidate", url);
		if ((rc = lm_vm_api_init(vmm, url)) < 0)
			return rc;
		vmm->candidates[vmm->ncandidates++] = &lm_vm_backend_api;
	} else {
		if (rc == LM_EINVALID)
			return rc;
		lm_text_format_cut(api_why, sizeof(api_why), "%s", lm_error_last()->message);
		if ((rc = lm_proc_find_program(lume_program, &found)) == LM_ENOMEM)
			return rc;
		if (rc == 0) {
			free(found);
			lm_log(vmm->ctx, LM_LOG_DEBUG, "no Lume API (%s); the lume CLI is a candidate", api_why);
			if ((rc = lm_vm_cli_init(vmm, lume_program)) < 0)
				return rc;
			vmm->candidates[vmm->ncandidates++] = &lm_vm_backend_cli;
		}
	}
	if ((rc = lm_proc_find_program(tart, &found)) == LM_ENOMEM)
		return rc;
	if (rc == 0) {
		free(found);
		if ((rc = lm_vm_tart_init(vmm, tart)) < 0)
			return rc;
		vmm->candidates[vmm->ncandidates++] = &lm_vm_backend_tart;
	}
	if ((rc = lm_proc_find_program(utmctl, &found)) == LM_ENOMEM)
		return rc;
	if (rc == 0) {
		free(found);
		if ((rc = lm_vm_utm_init(vmm, utmctl)) < 0)
			return rc;
		vmm->candidates[vmm->ncandidates++] = &lm_vm_backend_utm;
	}
	if (vmm->ncandidates == 0)
		return lm_error_set(LM_ENOTFOUND, "no VM manager found: no Lume API (%s; `lume serve` runs it), and none of "
		    "%s, %s, %s was found (Lume's, Tart's and UTM's programs)", api_why, lume_program, tart, utmctl);
	/* One candidate: it is the manager, with its own name shown. */
	vmm->backend = vmm->ncandidates == 1 ? vmm->candidates[0] : &lm_vm_backend_auto;
	return 0;
}
