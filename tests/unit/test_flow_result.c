/* Flow results as host/lib/flow/parts.c builds them (flow.h): the result, each outcome, each step
 * and each agent allocated by the library, each carrying its size, in arrays of pointers; a failed
 * open leaves no outcome; lm_flow_result_free() frees it all (the asan build checks that). What an
 * embedder built against other headers reads from them: tests/embed/abi_outcome.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "flow_internal.h"
#include "lume-metal/output.h"
#include "test_hooks.h"

static void test_outcomes(void **state)
{
	static const char *const names[] = {"vm-one", "vm-two"};
	static const char *const bad[] = {"vm-ok", "bad/name"};
	lm_flow_result *r = NULL;

	(void)state;
	assert_int_equal(lm_flow_result_new(&r), 0);
	assert_int_equal(r->size, sizeof(lm_flow_result));
	assert_int_equal(r->count, 0);
	assert_int_equal(lm_flow_open_outcomes(r, names, 2), 0);
	assert_int_equal(r->count, 2);
	assert_int_equal(r->vms[0]->size, sizeof(lm_vm_outcome));
	assert_string_equal(r->vms[0]->vm, "vm-one");
	assert_int_equal(r->vms[1]->size, sizeof(lm_vm_outcome));
	assert_string_equal(r->vms[1]->vm, "vm-two");
	lm_flow_result_free(r);

	/* One invalid name: no outcome at all, and the message says which. */
	assert_int_equal(lm_flow_result_new(&r), 0);
	assert_int_equal(lm_flow_open_outcomes(r, bad, 2), LM_EINVALID);
	assert_non_null(strstr(lm_error_last()->message, "bad/name"));
	assert_int_equal(r->count, 0);
	assert_null(r->vms);
	lm_flow_result_free(r);
	lm_flow_result_free(NULL);
}

static void test_steps_and_agents(void **state)
{
	static const char *const names[] = {"vm-one"};
	lm_options opts;
	lm_json_envelope env;
	lm_context *ctx = NULL;
	lm_flow_result *r = NULL;
	lm_vm_outcome *o;
	lm_agent_info a;
	char *doc = NULL;
	double t;
	size_t i;

	(void)state;
	assert_int_equal(lm_options_init(&opts, LM_OPTIONS_VERSION), 0);
	assert_int_equal(lm_context_new(&ctx, &opts), 0);
	assert_int_equal(lm_flow_result_new(&r), 0);
	assert_int_equal(lm_flow_open_outcomes(r, names, 1), 0);
	o = r->vms[0];
	assert_int_equal(lm_step_begin(ctx, o, "probe", &t), 0);
	lm_step_add(ctx, o, "probe", t, "stock and shimmed reports");
	lm_step_add(ctx, o, "record", t, "%s", "recorded");
	assert_int_equal(lm_step_begin(ctx, o, "exercise", &t), 0);
	lm_error_set(LM_ERROR, "the kernels did not run");
	assert_int_equal(lm_outcome_fail(ctx, o, LM_ERROR), LM_ERROR);
	assert_int_equal(o->nsteps, 3);
	for (i = 0; i < o->nsteps; i++)
		assert_int_equal(o->steps[i]->size, sizeof(lm_flow_step));
	assert_string_equal(o->steps[0]->name, "probe");
	assert_int_equal(o->steps[0]->state, LM_STEP_DONE);
	assert_string_equal(o->steps[0]->detail, "stock and shimmed reports");
	assert_string_equal(o->steps[1]->name, "record");
	assert_string_equal(o->steps[2]->name, "exercise");
	assert_int_equal(o->steps[2]->state, LM_STEP_FAILED);
	assert_string_equal(o->steps[2]->detail, "the kernels did not run");
	assert_string_equal(o->message, "vm-one: the kernels did not run");

	memset(&a, 0, sizeof(a)); /* size 0: the outcome's copy gets it */
	snprintf(a.label, sizeof(a.label), "org.example.one");
	snprintf(a.state, sizeof(a.state), "running");
	a.pid = 42;
	assert_int_equal(lm_outcome_add_agent(o, &a), 0);
	snprintf(a.label, sizeof(a.label), "org.example.two");
	assert_int_equal(lm_outcome_add_agent(o, &a), 0);
	assert_int_equal(o->nagents, 2);
	assert_int_equal(o->agents[0]->size, sizeof(lm_agent_info));
	assert_int_equal(o->agents[1]->size, sizeof(lm_agent_info));
	assert_string_equal(o->agents[0]->label, "org.example.one");
	assert_string_equal(o->agents[1]->label, "org.example.two");
	assert_int_equal(o->agents[1]->pid, 42);

	/* The JSON document reads them through the pointers. */
	memset(&env, 0, sizeof(env));
	env.command = "status";
	assert_int_equal(lm_flow_result_to_json_advised(r, NULL, NULL, &env, &doc), 0);
	assert_non_null(strstr(doc, "\"detail\":\t\"the kernels did not run\""));
	assert_non_null(strstr(doc, "\"label\":\t\"org.example.two\""));
	lm_free(doc);
	lm_flow_result_free(r);
	lm_context_free(ctx);
}

/* A failure's message names its VM once (issue 50): the SSH transport's "VM 'vm1' (ADDRESS:PORT):
 * ..." was "vm1: VM 'vm1' (...): ..."; its step's detail, under the VM's name, does not repeat it. */
static void test_vm_named_once(void **state)
{
	static const char *const names[] = {"vm1", "vm12"};
	static const struct {
		const char *error, *message, *detail;
	} cases[] = {
		{"VM 'vm1' (127.0.0.2:22): cannot connect to its SSH server: Connection refused",
		 "vm1 (127.0.0.2:22): cannot connect to its SSH server: Connection refused",
		 "127.0.0.2:22: cannot connect to its SSH server: Connection refused"},
		{"VM 'vm1': its address 'x' is not an IP address", "vm1: its address 'x' is not an IP address",
		 "its address 'x' is not an IP address"},
		{"vm1: already says its name", "vm1: already says its name", "vm1: already says its name"},
		{"no name at all", "vm1: no name at all", "no name at all"},
		/* Another VM's name, or a longer one that starts with it: left as it is. */
		{"VM 'vm12' (127.0.0.3:22): refused", "vm1: VM 'vm12' (127.0.0.3:22): refused",
		 "VM 'vm12' (127.0.0.3:22): refused"},
		{"VM 'vm1' is busy: another process", "vm1: VM 'vm1' is busy: another process",
		 "VM 'vm1' is busy: another process"},
	};
	lm_options opts;
	lm_context *ctx = NULL;
	lm_flow_result *r = NULL;
	double t;
	size_t i;

	(void)state;
	assert_int_equal(lm_options_init(&opts, LM_OPTIONS_VERSION), 0);
	assert_int_equal(lm_context_new(&ctx, &opts), 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(lm_flow_result_new(&r), 0);
		assert_int_equal(lm_flow_open_outcomes(r, names, 2), 0);
		assert_int_equal(lm_step_begin(ctx, r->vms[0], "ready", &t), 0);
		lm_error_set(LM_ENETWORK, "%s", cases[i].error);
		assert_int_equal(lm_outcome_fail(ctx, r->vms[0], LM_ENETWORK), LM_ENETWORK);
		assert_string_equal(r->vms[0]->message, cases[i].message);
		assert_string_equal(r->vms[0]->steps[0]->detail, cases[i].detail);
		lm_flow_result_free(r);
	}
	lm_context_free(ctx);
}

/* A VM's result without its message is no result (steps.h): its message failing for want of
 * memory fails the VM, out of memory, with that said. It once left the VM "done" and the message
 * NULL, and a fleet's line read "(null) (0.13 s)" (the rotating sampled sweep of agent install,
 * CI of stop 57). The allocator is armed for the message's allocation alone (test_hooks.h). */
static void test_message_needs_memory(void **state)
{
	static const char *const names[] = {"vm1"};
	lm_options opts;
	lm_context *ctx = NULL;
	lm_flow_result *r = NULL;
	double t;

	(void)state;
#if !LM_FAULT_ALLOC_WRAPPED
	skip(); /* this linker has no --wrap (Apple's): CMake said so when it configured */
#endif
	assert_int_equal(lm_options_init(&opts, LM_OPTIONS_VERSION), 0);
	assert_int_equal(lm_context_new(&ctx, &opts), 0);
	assert_int_equal(lm_flow_result_new(&r), 0);
	assert_int_equal(lm_flow_open_outcomes(r, names, 1), 0);
	assert_int_equal(lm_step_begin(ctx, r->vms[0], "agent-load", &t), 0);
	lm_step_add(ctx, r->vms[0], "agent-load", t, "running (pid known)");
	assert_int_equal(lm_outcome_message(ctx, r->vms[0], "%s: agent %s installed", "vm1", "org.example.one"), 0);
	assert_string_equal(r->vms[0]->message, "vm1: agent org.example.one installed");
	assert_int_equal(r->vms[0]->rc, 0);

	lm_test_alloc_fail_next(1);
	assert_int_equal(lm_outcome_message(ctx, r->vms[0], "%s: agent %s installed and started (pid %ld)", "vm1",
	    "org.example.one", 42L), LM_ENOMEM);
	assert_int_equal(lm_test_alloc_failures(), 1);
	assert_int_equal(r->vms[0]->rc, LM_ENOMEM);
	/* Never an earlier message in its place, nor none: the failure's own. */
	assert_string_equal(r->vms[0]->message, "vm1: out of memory");
	assert_int_equal(r->vms[0]->steps[0]->state, LM_STEP_DONE); /* the step that was done stays done */
	lm_flow_result_free(r);
	lm_context_free(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_outcomes),
		cmocka_unit_test(test_steps_and_agents),
		cmocka_unit_test(test_vm_named_once),
		cmocka_unit_test(test_message_needs_memory),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
