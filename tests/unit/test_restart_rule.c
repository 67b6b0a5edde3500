/* The restart rule (host/lib/record/level.c, docs/lume-metal.md "When a VM is restarted"): one
 * table of cases, each a test; the simulator rows of the issue are e2e_restart_* / e2e_keep_*, and
 * a guest reboot against a VM restart per manager e2e_managers_*_guest_reboot (issue 48, item 3).
 * The rule's evidence from the OS, when a process started, is tests/proc's (test_proc_host_process). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "record.h"
#include "vm_level.h"
#include "vm_process.h"
#include "lm_test.h"

#define C 1796000000.25 /* the recorded change of the preference */

#define NOMGR LM_VM_PROCESS_NO_MANAGER /* no VM manager: the boot time is all there is */

typedef struct {
	const char *what;
	double boot_time, started_at, process, margin;
	int recorded;         /* this tool changed the preference */
	double changed_at;
	int restart;          /* enable/status: restart (pending) */
	lm_vm_level level;
} rule_case;

static const rule_case cases[] = {
	/* The guest's boot time: before the change is before (its process started earlier still). */
	{"booted 0.5 s before", C - 0.5, 0, 0, 30, 1, C, 1, LM_VM_LEVEL_BEFORE},
	{"booted 1.2 s before", C - 1.2, 0, 0, 30, 1, C, 1, LM_VM_LEVEL_BEFORE},
	{"booted 2.5 s before", C - 2.5, 0, 0, 30, 1, C, 1, LM_VM_LEVEL_BEFORE},
	{"booted 1 us before", C - 0.000001, 0, 0, 30, 1, C, 1, LM_VM_LEVEL_BEFORE},
	{"booted at the change", C, 0, 0, 30, 1, C, 1, LM_VM_LEVEL_UNSURE},
	/* ... after it, and no process to see (Lume's server, UTM.app): a guest reboot is not a VM
	 * restart (issue 48, item 3), however long after. */
	{"booted 5 s after, process not visible", C + 5, 0, 0, 30, 1, C, 1, LM_VM_LEVEL_UNSURE},
	{"booted just past the margin, process not visible", C + 30.001, 0, 0, 30, 1, C, 1, LM_VM_LEVEL_UNSURE},
	{"booted 40 s after, process not visible", C + 40, 0, 0, 30, 1, C, 1, LM_VM_LEVEL_UNSURE},
	{"booted an hour after, process not visible", C + 3600, 0, 0, 30, 1, C, 1, LM_VM_LEVEL_UNSURE},
	{"booted 5 s after, margin 2, process not visible", C + 5, 0, 0, 2, 1, C, 1, LM_VM_LEVEL_UNSURE},
	/* The VM's process (`lume run`, `tart run`): its start decides. */
	{"process started after, booted inside the margin", C + 3, 0, C + 1, 30, 1, C, 0, LM_VM_LEVEL_AFTER},
	{"process started 1 ms after, boot time unknown", 0, 0, C + 0.001, 30, 1, C, 0, LM_VM_LEVEL_AFTER},
	{"process started after, booted 40 s after", C + 40, 0, C + 35, 30, 1, C, 0, LM_VM_LEVEL_AFTER},
	{"process started at the change", C + 5, 0, C, 30, 1, C, 1, LM_VM_LEVEL_UNSURE},
	{"process started an hour before, guest rebooted 40 s after", C + 40, 0, C - 3600, 30, 1, C, 1,
	    LM_VM_LEVEL_BEFORE},
	{"process started an hour before, guest rebooted, margin 2", C + 5, 0, C - 3600, 2, 1, C, 1, LM_VM_LEVEL_BEFORE},
	{"process started 10 s before, guest rebooted after: within the margin", C + 40, 0, C - 10, 30, 1, C, 1,
	    LM_VM_LEVEL_UNSURE},
	{"process started 10 s before, guest rebooted after, margin 2", C + 40, 0, C - 10, 2, 1, C, 1,
	    LM_VM_LEVEL_BEFORE},
	{"process started 10 s before, booted before", C - 5, 0, C - 10, 30, 1, C, 1, LM_VM_LEVEL_BEFORE},
	{"process started an hour before, boot time unknown", 0, 0, C - 3600, 30, 1, C, 1, LM_VM_LEVEL_BEFORE},
	/* Started by us: the journal's word stays. */
	{"started by us after, booted inside the margin", C + 1, C + 0.5, 0, 30, 1, C, 0, LM_VM_LEVEL_AFTER},
	{"started by us after, boot time unknown", 0, C + 0.001, 0, 30, 1, C, 0, LM_VM_LEVEL_AFTER},
	{"started by us after, process seen before", C + 1, C + 0.5, C - 100, 30, 1, C, 0, LM_VM_LEVEL_AFTER},
	{"started by us before, booted inside the margin", C + 5, C - 10, 0, 30, 1, C, 1, LM_VM_LEVEL_UNSURE},
	{"started by us before, booted 40 s after, process not visible", C + 40, C - 10, 0, 30, 1, C, 1,
	    LM_VM_LEVEL_UNSURE},
	{"started by us at the change", C + 5, C, 0, 30, 1, C, 1, LM_VM_LEVEL_UNSURE},
	/* No VM manager: the boot time past the margin is the user's restart, the only evidence. */
	{"no manager, booted 5 s after: inside the margin", C + 5, 0, NOMGR, 30, 1, C, 1, LM_VM_LEVEL_UNSURE},
	{"no manager, booted exactly the margin after", C + 30, 0, NOMGR, 30, 1, C, 1, LM_VM_LEVEL_UNSURE},
	{"no manager, booted just past the margin", C + 30.001, 0, NOMGR, 30, 1, C, 0, LM_VM_LEVEL_AFTER},
	{"no manager, booted 5 s after, margin 2", C + 5, 0, NOMGR, 2, 1, C, 0, LM_VM_LEVEL_AFTER},
	{"no manager, booted before", C - 0.5, 0, NOMGR, 30, 1, C, 1, LM_VM_LEVEL_BEFORE},
	{"no manager, boot time unknown", 0, 0, NOMGR, 30, 1, C, 1, LM_VM_LEVEL_UNSURE},
	{"boot time unknown", 0, 0, 0, 30, 1, C, 1, LM_VM_LEVEL_UNSURE},
	{"change time unknown", C + 40, C + 1, C + 1, 30, 1, 0, 1, LM_VM_LEVEL_UNSURE},
	{"preference not changed by us", C - 100, 0, 0, 30, 0, 0, 0, LM_VM_LEVEL_UNSURE},
};

static void test_case(void **state)
{
	const rule_case *c = *state;
	lm_host_pref_info pref;

	memset(&pref, 0, sizeof(pref));
	pref.recorded = c->recorded;
	pref.changed_at = c->changed_at;
	print_message("%s\n", c->what);
	assert_int_equal(lm_vm_restart_needed(&pref, c->boot_time, c->started_at, c->process, c->margin), c->restart);
	assert_int_equal(lm_vm_level_of(c->changed_at, c->boot_time, c->started_at, c->process, c->margin), c->level);
}

/* The words enable's restart step gives for each reason (lm_vm_restart_reason), in the order it
 * tells them apart: held first, then the clock alone, then the guest's boot time and its VM's
 * process. */
static void test_reasons(void **state)
{
	(void)state;
	assert_non_null(strstr(lm_vm_restart_reason(1, C - 5, 0, C, C - 1), "resuming it keeps the GPU level"));
	assert_string_equal(lm_vm_restart_reason(0, 0, 0, C, C - 1), "the VM was already running when the preference changed");
	assert_string_equal(lm_vm_restart_reason(0, 0, 0, C, C + 1), "the guest's boot time is unknown");
	assert_string_equal(lm_vm_restart_reason(0, C - 0.5, 0, C, C + 1), "the guest booted before the preference changed");
	assert_string_equal(lm_vm_restart_reason(0, C - 0.5, C - 10, C, C + 1),
	    "the guest booted before the preference changed");
	assert_non_null(strstr(lm_vm_restart_reason(0, C + 5, NOMGR, C, C + 1), "within the boot margin after the preference"));
	assert_non_null(strstr(lm_vm_restart_reason(0, C + 40, 0, C, C + 1),
	    "its VM process's start is not visible with this VM manager: a guest reboot"));
	assert_non_null(strstr(lm_vm_restart_reason(0, C + 40, C - 10, C, C + 1),
	    "its VM process started before the preference changed; its guest has rebooted since, and a guest reboot "
	    "is not a VM restart"));
	assert_string_equal(lm_vm_restart_reason(0, 0, C - 10, C, C + 1), "its VM process started before the preference changed");
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
