/* The per-VM outcomes every flow command reports (flow.h); their timed steps are core's (steps.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow_internal.h"
#include "str.h"
#include "text.h"
#include "guest_agents.h"

/* A result grows only at its end, and LM_HAS_FIELD tells a field from its offset and size: a field
 * added into the old struct's trailing padding would look present in a library without it. So
 * every result ends without padding; adding a field at the end moves its line here. */
#define LM_ENDS_WITH(type, field) \
	_Static_assert(sizeof(type) == offsetof(type, field) + sizeof(((type *)0)->field), \
	    #type " ends with " #field ", without padding")
LM_ENDS_WITH(lm_flow_result, byhost);
LM_ENDS_WITH(lm_vm_outcome, pref_needed);
LM_ENDS_WITH(lm_flow_step, detail);
LM_ENDS_WITH(lm_agent_info, stderr_path);
LM_ENDS_WITH(lm_run_result, stock_children);

int lm_flow_open_known(lm_context *ctx, lm_flow_result *result)
{
	lm_state *st = NULL;
	char **names = NULL;
	size_t count = 0;
	int rc;

	if ((rc = lm_journal_open(&st, ctx, LM_STATE_READONLY, 10)) < 0)
		return rc;
	rc = lm_journal_vm_names(st, &names);
	lm_state_close(st);
	if (rc < 0)
		return rc;
	while (names[count] != NULL)
		count++;
	rc = lm_flow_open_outcomes(result, (const char *const *)names, count);
	lm_strv_free(names);
	return rc;
}

int lm_flow_fail_all(lm_context *ctx, lm_flow_result *result, int rc)
{
	size_t i;

	for (i = 0; i < result->count; i++)
		lm_outcome_fail(ctx, result->vms[i], rc);
	return rc;
}

int lm_flow_summary_rc(const lm_flow_result *result)
{
	size_t i;

	for (i = 0; i < result->count; i++)
		if (result->vms[i]->rc < 0)
			return result->vms[i]->message != NULL ? lm_error_set(result->vms[i]->rc, "%s", result->vms[i]->message) :
			    /* no message: there was no memory for it */
			    lm_error_set(result->vms[i]->rc, "%s: %s", result->vms[i]->vm,
			        result->vms[i]->rc == LM_ENOMEM ? "out of memory" : lm_error_name(result->vms[i]->rc));
	return 0;
}

/* o->agents from the record, with launchd's state when the guest is reached (ssh). */
int lm_flow_agents_status(lm_ssh *ssh, const lm_vm_record *r, lm_vm_outcome *o)
{
	lm_agent_info a;
	size_t i;
	int rc;

	for (i = 0; i < r->nagents; i++) {
		lm_vm_record_agent_info(&r->agents[i], &a);
		lm_agent_log_paths(r->guest.home, &a);
		if ((rc = lm_outcome_add_agent(o, &a)) < 0)
			return rc;
	}
	if (ssh == NULL || (rc = lm_guest_agents_query(ssh, o->agents, o->nagents)) < 0)
		return ssh == NULL ? 0 : rc;
	return lm_guest_agents_activation(ssh, r->guest.home, o->agents, o->nagents);
}
