/* The restart rule (host/lib/record/level.c, docs/lume-metal.md "When a VM is restarted"): one
 * table of cases, each a test; the simulator rows of the issue are e2e_restart_* / e2e_keep_*. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "record.h"
#include "lm_test.h"

#define C 1796000000.25 /* the recorded change of the preference */

typedef struct {
	const char *what;
	double boot_time, started_at, margin;
	int recorded;         /* this tool changed the preference */
	double changed_at;
	int restart;          /* enable/status: restart (pending) */
	lm_vm_level level;
} rule_case;

static const rule_case cases[] = {
	{"booted 0.5 s before", C - 0.5, 0, 30, 1, C, 1, LM_VM_LEVEL_BEFORE},
	{"booted 1.2 s before", C - 1.2, 0, 30, 1, C, 1, LM_VM_LEVEL_BEFORE},
	{"booted 2.5 s before", C - 2.5, 0, 30, 1, C, 1, LM_VM_LEVEL_BEFORE},
	{"booted 1 us before", C - 0.000001, 0, 30, 1, C, 1, LM_VM_LEVEL_BEFORE},
	{"booted at the change", C, 0, 30, 1, C, 1, LM_VM_LEVEL_UNSURE},
	{"booted 5 s after: inside the margin", C + 5, 0, 30, 1, C, 1, LM_VM_LEVEL_UNSURE},
	{"booted exactly the margin after", C + 30, 0, 30, 1, C, 1, LM_VM_LEVEL_UNSURE},
	{"booted just past the margin", C + 30.001, 0, 30, 1, C, 0, LM_VM_LEVEL_AFTER},
	{"booted 40 s after", C + 40, 0, 30, 1, C, 0, LM_VM_LEVEL_AFTER},
	{"booted 5 s after, margin 2", C + 5, 0, 2, 1, C, 0, LM_VM_LEVEL_AFTER},
	{"started by us after, booted inside the margin", C + 1, C + 0.5, 30, 1, C, 0, LM_VM_LEVEL_AFTER},
	{"started by us after, boot time unknown", 0, C + 0.001, 30, 1, C, 0, LM_VM_LEVEL_AFTER},
	{"started by us before, booted inside the margin", C + 5, C - 10, 30, 1, C, 1, LM_VM_LEVEL_UNSURE},
	{"started by us before, booted 40 s after", C + 40, C - 10, 30, 1, C, 0, LM_VM_LEVEL_AFTER},
	{"started by us at the change", C + 5, C, 30, 1, C, 1, LM_VM_LEVEL_UNSURE},
	{"boot time unknown", 0, 0, 30, 1, C, 1, LM_VM_LEVEL_UNSURE},
	{"change time unknown", C + 40, C + 1, 30, 1, 0, 1, LM_VM_LEVEL_UNSURE},
	{"preference not changed by us", C - 100, 0, 30, 0, 0, 0, LM_VM_LEVEL_UNSURE},
};

static void test_case(void **state)
{
	const rule_case *c = *state;
	lm_host_pref_info pref;

	memset(&pref, 0, sizeof(pref));
	pref.recorded = c->recorded;
	pref.changed_at = c->changed_at;
	print_message("%s\n", c->what);
	assert_int_equal(lm_vm_restart_needed(&pref, c->boot_time, c->started_at, c->margin), c->restart);
	assert_int_equal(lm_vm_level_of(c->changed_at, c->boot_time, c->started_at, c->margin), c->level);
}

/* The words enable's restart step gives for each reason (lm_vm_restart_reason), in the order it
 * tells them apart: held first, then the clock alone, then the guest's boot time. */
static void test_reasons(void **state)
{
	(void)state;
	assert_non_null(strstr(lm_vm_restart_reason(1, C - 5, C, C - 1), "resuming it keeps the GPU level"));
	assert_string_equal(lm_vm_restart_reason(0, 0, C, C - 1), "the VM was already running when the preference changed");
	assert_string_equal(lm_vm_restart_reason(0, 0, C, C + 1), "the guest's boot time is unknown");
	assert_string_equal(lm_vm_restart_reason(0, C - 0.5, C, C + 1), "the guest booted before the preference changed");
	assert_non_null(strstr(lm_vm_restart_reason(0, C + 5, C, C + 1), "within the boot margin after the preference"));
}

int main(void)
{
	struct CMUnitTest tests[sizeof(cases) / sizeof(cases[0]) + 1];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&tests[i], 0, sizeof(tests[i]));
		tests[i].name = cases[i].what;
		tests[i].test_func = test_case;
		tests[i].initial_state = (void *)&cases[i];
	}
	memset(&tests[i], 0, sizeof(tests[i]));
	tests[i].name = "restart reasons in words";
	tests[i].test_func = test_reasons;
	return _cmocka_run_group_tests("restart_rule", tests, i + 1, NULL, NULL);
}
