/* The automatic choice of a VM manager, per VM name: Lume (its HTTP API when anything accepts
 * connections at the URL, else `lume` on PATH) and `tart` on PATH are asked; the one that knows
 * the name is used for that VM from then on. A name two managers know is an error that names them
 * both: which VM was meant cannot be guessed. `utmctl` on PATH is asked last, only when neither
 * knows the name, and not at all while UTM.app is not running: every utmctl command drives UTM.app
 * over Apple Events, launching it (hidden) and possibly asking the user for Automation consent --
 * not something to do for a VM that is Lume's or Tart's. The candidates are created, asked and
 * released through their tables only (vm_internal.h), each with its own state. */
#include "vm_internal.h"
#include "vm_gone.h"
#include "text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LM_AUTO_MAX 4

typedef struct {
	char name[LM_VM_NAME_MAX];
	lm_vm_instance which;
} auto_choice;

/* The automatic choice's state: which backends answer, and which one knows each VM. */
typedef struct {
	lm_vm_instance candidates[LM_AUTO_MAX];
	size_t ncandidates;
	auto_choice *choices;
	size_t nchoices;
} auto_state;

/* UTM is asked only while UTM.app runs (*why says so otherwise). */
static int utm_askable(lm_vm_manager *vmm, const lm_vm_instance *c, int *askable, char *why, size_t cap)
{
	int rc;

	why[0] = '\0';
	if ((rc = c->backend->askable(vmm, c->state, askable)) < 0)
		return rc;
	if (!*askable)
		snprintf(why, cap, "; utm: not asked, UTM.app is not running (utmctl would launch it; start UTM.app to "
		    "use its VMs)");
	return 0;
}

static lm_vm_instance chosen(const auto_state *a, const char *name)
{
	const lm_vm_instance none = {NULL, NULL};
	size_t i;

	for (i = 0; i < a->nchoices; i++)
		if (strcmp(a->choices[i].name, name) == 0)
			return a->choices[i].which;
	return none;
}

/* Which manager knows `name`; *info is its answer when it was asked now. */
static int resolve(lm_vm_manager *vmm, auto_state *a, const char *name, lm_vm_instance *out, lm_vm_info *info,
    int *fresh)
{
	lm_vm_instance found[LM_AUTO_MAX];
	lm_vm_info answers[LM_AUTO_MAX];
	lm_buf asked, errors;
	auto_choice *bigger;
	size_t i, n = 0;
	int rc;

	*fresh = 0;
	if ((*out = chosen(a, name)).backend != NULL)
		return 0;
	lm_buf_init(&asked, LM_BUF_TEXT_MAX);
	lm_buf_init(&errors, LM_BUF_TEXT_MAX);
	for (i = 0; i < a->ncandidates; i++) {
		const lm_vm_instance *c = &a->candidates[i];
		const lm_vm_backend *b = c->backend;
		if (b == &lm_vm_backend_utm) {
			/* the last candidate: asked only when no other manager knows the name */
			char why[160];
			int askable;
			if (n > 0)
				break;
			if ((rc = utm_askable(vmm, c, &askable, why, sizeof(why))) < 0) {
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
		if ((rc = b->get(vmm, c->state, name, &answers[n])) == 0) {
			found[n++] = *c;
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
		    "which one is meant cannot be told", name, found[0].backend->name, found[1].backend->name,
		    n > 2 ? " and " : "", n > 2 ? found[2].backend->name : "");
	else
		rc = 0;
	lm_buf_dispose(&asked);
	lm_buf_dispose(&errors);
	if (rc < 0)
		return rc;
	if ((bigger = realloc(a->choices, (a->nchoices + 1) * sizeof(*bigger))) == NULL)
		return lm_error_nomem();
	a->choices = bigger;
	snprintf(a->choices[a->nchoices].name, sizeof(a->choices[0].name), "%s", name);
	a->choices[a->nchoices++].which = found[0];
	lm_log(vmm->ctx, LM_LOG_DEBUG, "%s: managed by %s", name, found[0].backend->name);
	*out = found[0];
	*info = answers[0];
	*fresh = 1;
	return 0;
}

static int auto_get(lm_vm_manager *vmm, void *state, const char *name, lm_vm_info *out)
{
	lm_vm_instance b;
	int fresh, rc;

	if ((rc = resolve(vmm, state, name, &b, out, &fresh)) < 0)
		return rc;
	if (!fresh && (rc = b.backend->get(vmm, b.state, name, out)) < 0)
		return rc;
	lm_vm_fill_identity(out, b.backend);
	return 0;
}

static int auto_start(lm_vm_manager *vmm, void *state, const char *name)
{
	lm_vm_instance b;
	lm_vm_info info;
	int fresh, rc;

	if ((rc = resolve(vmm, state, name, &b, &info, &fresh)) < 0)
		return rc;
	return b.backend->start(vmm, b.state, name);
}

static int auto_stop(lm_vm_manager *vmm, void *state, const char *name)
{
	lm_vm_instance b;
	lm_vm_info info;
	int fresh, rc;

	if ((rc = resolve(vmm, state, name, &b, &info, &fresh)) < 0)
		return rc;
	return b.backend->stop(vmm, b.state, name);
}

/* Every manager's VMs; one that cannot list is left out with a warning. */
static int auto_list(lm_vm_manager *vmm, void *state, lm_vm_info **out, size_t *count)
{
	const auto_state *a = state;
	lm_vm_info *all = NULL, *part, *bigger;
	size_t n = 0, k, i, j;

	for (i = 0; i < a->ncandidates; i++) {
		const lm_vm_instance *c = &a->candidates[i];
		const lm_vm_backend *b = c->backend;
		int askable = 1;
		if (b == &lm_vm_backend_utm && b->askable(vmm, c->state, &askable) == 0 && !askable) {
			lm_log(vmm->ctx, LM_LOG_INFO, "UTM's VMs are not listed: UTM.app is not running (utmctl would "
			    "launch it; start UTM.app to list them)");
			continue;
		}
		if (b->list(vmm, c->state, &part, &k) < 0) {
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

static void auto_release(lm_vm_manager *vmm, void *state)
{
	auto_state *a = state;
	size_t i;

	for (i = 0; i < a->ncandidates; i++)
		a->candidates[i].backend->release(vmm, a->candidates[i].state);
	free(a->choices);
	free(a);
}

/* Lume's API and CLI are one manager with two ways in. */
static int same_family(const char *a, const char *b)
{
	return strcmp(a, b) == 0 || (strncmp(a, "lume", 4) == 0 && strncmp(b, "lume", 4) == 0);
}

/* Its own files say the VM exists: nothing to ask (a `get` of a running VM whose guest is silent
 * costs Lume's 2-second check of port 22, reference/lume.md). 1 when b's own files hold the VM, 0
 * when they do not or cannot tell (then the question is asked), LM_ENOMEM (said): memory that ran
 * out is no answer. */
static int stored(lm_vm_manager *vmm, const lm_vm_backend *b, void *state, const char *name)
{
	int rc;

	if (b->stored == NULL)
		return 0;
	if ((rc = b->stored(vmm, state, name)) == LM_ENOMEM)
		return rc;
	lm_error_clear();
	return rc == 1;
}

/* b's answer to `get`: LM_ENOTFOUND (it does not know the VM), 0 (it does, or cannot tell), or
 * LM_ENOMEM (said): memory that ran out is no answer. */
static int known_to(lm_vm_manager *vmm, const lm_vm_backend *b, void *state, const char *name)
{
	lm_vm_info info;
	int rc = b->get(vmm, state, name, &info);

	if (rc == LM_ENOMEM)
		return rc;
	lm_error_clear();
	return rc == LM_ENOTFOUND ? rc : 0;
}

int lm_vm_gone(lm_vm_manager *vmm, const char *name, const char *manager)
{
	size_t i;
	int asked = 0, hinted = manager == NULL || manager[0] == '\0', rc;

	const auto_state *a = vmm->state;

	if (vmm->backend != &lm_vm_backend_auto) {
		/* A forced manager answers for its own VMs only. */
		if (!hinted && !same_family(vmm->backend->name, manager))
			return 0;
		if ((rc = stored(vmm, vmm->backend, vmm->state, name)) != 0)
			return rc < 0 ? rc : 0;
		if ((rc = known_to(vmm, vmm->backend, vmm->state, name)) == LM_ENOMEM)
			return rc;
		return rc == LM_ENOTFOUND && strcmp(vmm->backend->name, "none") != 0;
	}
	for (i = 0; i < a->ncandidates; i++) {
		const lm_vm_instance *c = &a->candidates[i];
		const lm_vm_backend *b = c->backend;
		int askable = 1;
		if (b == &lm_vm_backend_utm && b->askable(vmm, c->state, &askable) == 0 && !askable) {
			/* not asked: it cannot rule out a VM it ran, and is not needed for the others' */
			if (same_family(b->name, manager != NULL ? manager : ""))
				return 0;
			continue;
		}
		if ((rc = stored(vmm, b, c->state, name)) != 0)
			return rc < 0 ? rc : 0;
		if ((rc = known_to(vmm, b, c->state, name)) != LM_ENOTFOUND)
			return rc; /* it knows the VM, or cannot tell (0); or no memory to ask */
		asked++;
		hinted = hinted || same_family(b->name, manager);
	}
	return asked > 0 && hinted;
}

lm_vm_instance lm_vm_backend_for(const lm_vm_manager *vmm, const char *name)
{
	const lm_vm_instance none = {NULL, NULL}, own = {vmm != NULL ? vmm->backend : NULL, vmm != NULL ? vmm->state : NULL};

	if (vmm == NULL || vmm->backend == NULL)
		return none;
	if (vmm->backend != &lm_vm_backend_auto)
		return own;
	return name != NULL ? chosen(vmm->state, name) : none;
}

size_t lm_vm_backends_asked(const lm_vm_manager *vmm, lm_vm_instance *out, size_t cap)
{
	const auto_state *a = vmm->state;
	size_t i;

	if (vmm->backend != &lm_vm_backend_auto) {
		out[0].backend = vmm->backend;
		out[0].state = vmm->state;
		return 1;
	}
	for (i = 0; i < a->ncandidates && i < cap; i++)
		out[i] = a->candidates[i];
	return i;
}

const char *lm_vm_manager_name_for(const lm_vm_manager *vmm, const char *name)
{
	lm_vm_instance b = lm_vm_backend_for(vmm, name);

	if (vmm == NULL || vmm->backend == NULL)
		return "none";
	return b.backend != NULL ? b.backend->name : "auto";
}

/* Make a candidate through its table. */
static int add(lm_vm_manager *vmm, auto_state *a, const lm_vm_backend *b)
{
	lm_vm_instance *c = &a->candidates[a->ncandidates];
	int rc;

	c->backend = b;
	c->state = NULL;
	rc = b->init(vmm, &c->state);
	if (c->state != NULL)
		a->ncandidates++; /* even when its init failed: auto_release frees what it made */
	return rc;
}

static int auto_init(lm_vm_manager *vmm, void **state)
{
	const lm_options *o = lm_context_options(vmm->ctx);
	const char *url = lm_vm_option(o->lume_url, LM_LUME_URL_DEFAULT);
	const char *lume_program = lm_vm_option(o->lume_program, LM_VM_LUME_PROGRAM);
	const char *tart = lm_vm_option(o->tart_program, LM_VM_TART_PROGRAM);
	const char *utmctl = lm_vm_option(o->utmctl_program, LM_VM_UTMCTL_PROGRAM);
	char api_why[512] = "";
	auto_state *a;
	int rc;

	if ((*state = a = calloc(1, sizeof(*a))) == NULL)
		return lm_error_nomem();
	/* Whatever accepts connections there is taken for the API: a slow answer is still the API
	 * (the first real request says clearly if it is not Lume), never a reason to switch. */
	if ((rc = lm_vm_backend_api.present(vmm)) == 0) {
		lm_log(vmm->ctx, LM_LOG_DEBUG, "something accepts connections at %s: Lume's API is a candidate", url);
		if ((rc = add(vmm, a, &lm_vm_backend_api)) < 0)
			return rc;
	} else {
		if (rc == LM_EINVALID)
			return rc;
		lm_text_format_cut(api_why, sizeof(api_why), "%s", lm_error_last()->message);
		if ((rc = lm_vm_backend_cli.present(vmm)) == LM_ENOMEM)
			return rc;
		if (rc == 0) {
			lm_log(vmm->ctx, LM_LOG_DEBUG, "no Lume API (%s); the lume CLI is a candidate", api_why);
			if ((rc = add(vmm, a, &lm_vm_backend_cli)) < 0)
				return rc;
		}
	}
	if ((rc = lm_vm_backend_tart.present(vmm)) == LM_ENOMEM)
		return rc;
	if (rc == 0 && (rc = add(vmm, a, &lm_vm_backend_tart)) < 0)
		return rc;
	if ((rc = lm_vm_backend_utm.present(vmm)) == LM_ENOMEM)
		return rc;
	if (rc == 0 && (rc = add(vmm, a, &lm_vm_backend_utm)) < 0)
		return rc;
	if (a->ncandidates == 0)
		return lm_error_set(LM_ENOTFOUND, "no VM manager found: no Lume API (%s; `lume serve` runs it), and none of "
		    "%s, %s, %s was found (Lume's, Tart's and UTM's programs)", api_why, lume_program, tart, utmctl);
	/* One candidate: it is the manager, with its own name shown. */
	if (a->ncandidates == 1) {
		vmm->backend = a->candidates[0].backend;
		*state = a->candidates[0].state;
		free(a);
	}
	return 0;
}

const lm_vm_backend lm_vm_backend_auto = {.name = "auto", .init = auto_init, .list = auto_list, .get = auto_get,
	.start = auto_start, .stop = auto_stop, .release = auto_release};
