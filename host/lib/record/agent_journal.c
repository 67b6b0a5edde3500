/* A VM's agents in the state journal, each change its own transaction (record.h): what agent
 * install records before anything reaches the guest, what remove and a failed install's undo
 * forget or put back (docs/state-format.md, "agents"). */
#include <stdlib.h>
#include <string.h>

#include "error_internal.h"
#include "record.h"

/* Record (create) or forget (!create) one agent in the VM's entry. */
static int agent_update(lm_context *ctx, const char *vm, const lm_agent_spec *spec, const lm_agent_info *a,
    int create)
{
	lm_state *st = NULL;
	lm_vm_record r;
	int rc;

	if ((rc = lm_journal_open_rw(&st, ctx)) < 0)
		return rc;
	if ((rc = lm_vm_record_get(st, vm, &r)) == 0 && !r.known && create)
		rc = lm_error_set(LM_ENOTENABLED, "%s is not enabled", vm);
	if (rc == 0 && r.known) {
		if (create)
			rc = lm_vm_record_add_agent(&r, spec, a);
		else
			(void)lm_vm_record_remove_agent(&r, a->label);
		if (rc == 0 && (rc = lm_vm_record_put(st, &r)) == 0)
			rc = lm_state_save(st);
	}
	lm_vm_record_dispose(&r);
	lm_state_close(st);
	return rc;
}

int lm_journal_agent_add(lm_context *ctx, const char *vm, const lm_agent_spec *spec, const lm_agent_info *a)
{
	return agent_update(ctx, vm, spec, a, 1);
}

int lm_journal_agent_forget(lm_context *ctx, const char *vm, const lm_agent_info *a)
{
	lm_agent_spec none;

	memset(&none, 0, sizeof(none));
	return agent_update(ctx, vm, &none, a, 0);
}

int lm_journal_agent_put_back(lm_context *ctx, const char *vm, const lm_vm_record_agent *was, const lm_agent_info *a)
{
	lm_agent_spec spec;
	lm_agent_info info;
	const char **argv;
	size_t n = 0;
	int rc;

	if (was == NULL)
		return lm_journal_agent_forget(ctx, vm, a);
	while (was->argv != NULL && was->argv[n] != NULL)
		n++;
	if ((argv = calloc(n + 2, sizeof(*argv))) == NULL)
		return lm_error_nomem();
	argv[0] = was->program;
	if (n > 0)
		memcpy(argv + 1, was->argv, n * sizeof(*argv));
	memset(&spec, 0, sizeof(spec));
	spec.label = was->label;
	spec.argv = argv;
	spec.argc = n + 1;
	spec.keep_alive = was->keep_alive;
	spec.run_at_load = was->run_at_load;
	lm_vm_record_agent_info(was, &info);
	rc = agent_update(ctx, vm, &spec, &info, 1);
	free(argv);
	return rc;
}
