/* A flow result and its per-VM outcomes as data (steps.h): made, grown and freed here, beside
 * the steps that fill them; the commands that report them are flow/'s. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lume-metal/report.h"
#include "steps.h"
#include "vm_name.h"

int lm_flow_result_new(lm_flow_result **out)
{
	if ((*out = calloc(1, sizeof(**out))) == NULL)
		return lm_error_nomem();
	(*out)->size = sizeof(**out);
	return 0;
}

static void outcome_free(lm_vm_outcome *o)
{
	size_t k;

	lm_report_free(o->stock);
	lm_report_free(o->shimmed);
	lm_report_free(o->tart);
	lm_report_free(o->exercised);
	free(o->message);
	for (k = 0; k < o->nsteps; k++) {
		free(o->steps[k]->detail);
		free(o->steps[k]);
	}
	free(o->steps);
	for (k = 0; k < o->nagents; k++)
		free(o->agents[k]);
	free(o->agents);
	free(o);
}

/* No outcome left: result is as lm_flow_result_new() made it, but for pref. */
static void outcomes_free(lm_flow_result *result)
{
	size_t i;

	for (i = 0; i < result->count; i++)
		outcome_free(result->vms[i]);
	free(result->vms);
	result->vms = NULL;
	result->count = 0;
}

void lm_flow_result_free(lm_flow_result *result)
{
	if (result == NULL)
		return;
	outcomes_free(result);
	free(result);
}

int lm_flow_outcome_add(lm_flow_result *result, const char *vm, lm_vm_outcome **out)
{
	lm_vm_outcome **vms, *o;

	if ((o = calloc(1, sizeof(*o))) == NULL)
		return lm_error_nomem();
	if ((vms = realloc(result->vms, (result->count + 1) * sizeof(*vms))) == NULL) {
		free(o);
		return lm_error_nomem();
	}
	o->size = sizeof(*o);
	snprintf(o->vm, sizeof(o->vm), "%s", vm);
	result->vms = vms;
	vms[result->count++] = o;
	if (out != NULL)
		*out = o;
	return 0;
}

int lm_flow_open_outcomes(lm_flow_result *result, const char *const *vms, size_t n)
{
	char name[LM_VM_NAME_MAX];
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		if ((rc = lm_vm_name_normalize(vms[i], name)) < 0 || (rc = lm_flow_outcome_add(result, name, NULL)) < 0) {
			outcomes_free(result);
			return rc; /* the message names the VM, sanitised */
		}
	}
	return 0;
}

int lm_outcome_add_agent(lm_vm_outcome *o, const lm_agent_info *a)
{
	lm_agent_info **agents, *copy;

	if ((copy = malloc(sizeof(*copy))) == NULL)
		return lm_error_nomem();
	if ((agents = realloc(o->agents, (o->nagents + 1) * sizeof(*agents))) == NULL) {
		free(copy);
		return lm_error_nomem();
	}
	*copy = *a;
	copy->size = sizeof(*copy);
	o->agents = agents;
	agents[o->nagents++] = copy;
	return 0;
}
