/* Scale without surprises (issue 25, item 7): `gc` of many gone VMs writes the journal once and
 * known_hosts once (it wrote each once per VM: 4,000 VMs took 14.5 s), removes their lock files
 * and keeps what a live VM has; 100,000 known_hosts lines are read in bounded memory (513 MB
 * before). Writes are counted at rename(2), which every atomic write ends with (ld --wrap);
 * timings are the benchmark's (tests/bench/bench_scale.c), never asserted. */
#include "test_common.h"

#include <stdio.h>
#include <sys/wait.h>

#include "scale_state.h"
#include "ssh_pins.h"
#include "str.h"

/* 128 MB: the lines are 12 MB; a key buffer of the largest size per line was 500 MB. Under
 * AddressSanitizer every block has its red zones and freed ones stay in quarantine (256 MB):
 * only the old 500 MB, which it doubles, stays out of reach. */
#if defined(__SANITIZE_ADDRESS__)
#define KNOWN_HOSTS_MAX_MB 1024
#else
#define KNOWN_HOSTS_MAX_MB 128
#endif

static test_env env;
static size_t journal_writes, pin_writes;

int __real_rename(const char *from, const char *to);
int __wrap_rename(const char *from, const char *to);
int __wrap_rename(const char *from, const char *to)
{
	size_t n = strlen(to);

	journal_writes += n >= 11 && strcmp(to + n - 11, "/state.json") == 0;
	pin_writes += n >= 12 && strcmp(to + n - 12, "/known_hosts") == 0;
	return __real_rename(from, to);
}

static int group_setup(void **state)
{
	static const char *const args[] = {"--vm", "vm1", NULL};

	(void)state;
	return sim_fixture_start(&env.sim, "scale", args);
}

static int group_teardown(void **state)
{
	(void)state;
	return sim_fixture_stop(&env.sim);
}

static void test_gc_writes_once(void **state)
{
	static const char *const live[] = {"vm1", NULL};
	const size_t n = 300;
	lm_context *ctx = test_context(&env, LM_VM_MANAGER_LUME_API, env.sim.url, "/nonexistent/lume", 10);
	lm_flow_result *result = NULL;
	char **pins = NULL, name[32];
	size_t i;

	(void)state;
	assert_int_equal(scale_state_make(ctx, n, live, 1), 0);
	assert_int_equal(scale_lock_files(ctx), n + 1);
	journal_writes = pin_writes = 0;
	lm_assert_ok(lm_flow_gc(ctx, &result));
	assert_int_equal(result->count, n);
	for (i = 0; i < n; i++) {
		scale_gone_name(i, name, sizeof(name));
		assert_string_equal(result->vms[i]->vm, name); /* in name order */
		assert_true(result->vms[i]->gone);
		assert_non_null(strstr(result->vms[i]->message, "forgot its journal entry and host-key pin"));
	}
	/* One write of each file for all 300, not one per VM. */
	assert_int_equal(journal_writes, 1);
	assert_int_equal(pin_writes, 1);
	/* What the live VM has stays: its pin, its record, its lock file. */
	lm_assert_ok(lm_ssh_pinned_vms(ctx, &pins));
	assert_non_null(pins);
	assert_string_equal(pins[0], "vm1");
	assert_null(pins[1]);
	lm_strv_free(pins);
	assert_int_equal(scale_lock_files(ctx), 1);
	lm_flow_result_free(result);

	/* Nothing left to forget: nothing written at all. */
	journal_writes = pin_writes = 0;
	lm_assert_ok(lm_flow_gc(ctx, &result));
	assert_int_equal(result->count, 0);
	assert_int_equal(journal_writes + pin_writes, 0);
	lm_flow_result_free(result);
	lm_context_free(ctx);
}

/* 100,000 pins read in a child of its own, whose peak resident size is its own. */
static void test_known_hosts_memory(void **state)
{
	const size_t n = 100000;
	lm_context *ctx = test_context(&env, LM_VM_MANAGER_NONE, NULL, NULL, 10);
	char **pins = NULL;
	int status;
	pid_t pid;

	(void)state;
	assert_int_equal(scale_state_make(ctx, n, NULL, 0), 0);
	fflush(NULL);
	if ((pid = fork()) == 0) {
		double before = scale_peak_mb(), peak;
		size_t k = 0;
		if (lm_ssh_pinned_vms(ctx, &pins) < 0)
			_exit(2);
		while (pins != NULL && pins[k] != NULL)
			k++;
		peak = scale_peak_mb();
		printf("known_hosts: %zu pins read; peak resident size %.0f MB (%.0f MB before)\n", k, peak, before);
		fflush(stdout); /* _exit does not */
		_exit(k == n && peak - before < KNOWN_HOSTS_MAX_MB ? 0 : 1);
	}
	lm_context_free(ctx);
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gc_writes_once),
		cmocka_unit_test(test_known_hosts_memory),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
