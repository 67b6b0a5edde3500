/* The Lume CLI backend against lume-sim's `lume` stand-in (real sshd guests). */
#include "test_common.h"

#include <signal.h>
#include <sys/stat.h>

static test_env env;

static int group_setup(void **state)
{
	static const char *const args[] = {"--vm", "vm1", "--vm", "old", "--vm", "img_latest", "--vm", "never",
		"--never-ready", "never", "--boot-delay", "0.2", "--stop-delay", "0.1", NULL};

	(void)state;
	return sim_fixture_start(&env.sim, "vm-cli", args);
}

static int group_teardown(void **state)
{
	(void)state;
	return sim_fixture_stop(&env.sim);
}

static lm_vm_manager *open_cli(lm_context **ctx)
{
	lm_vm_manager *vmm = NULL;

	*ctx = test_context(&env, LM_VM_MANAGER_LUME_CLI, NULL, env.sim.lume, 20);
	lm_assert_ok(lm_vm_manager_open(&vmm, *ctx));
	assert_string_equal(lm_vm_manager_name(vmm), "lume-cli");
	return vmm;
}

/* Log lines of the stand-in whose argv starts like this. */
static int cli_calls(const char *argv_json)
{
	const char *const needles[] = {"\"source\":\"lume-cli\"", argv_json, NULL};
	return sim_fixture_count(&env.sim, needles);
}

static int http_calls(const char *method, const char *path)
{
	const char *const needles[] = {method, path, NULL};
	return sim_fixture_count(&env.sim, needles);
}

/* The simulator's own events ("run", "stopped") for a VM, with `detail_has` in them. */
static int sim_events(const char *event, const char *vm, const char *detail_has)
{
	char e[64], v[160];
	const char *const needles[] = {"\"source\":\"sim\"", e, v, detail_has, NULL};

	snprintf(e, sizeof(e), "\"event\":\"%s\"", event);
	snprintf(v, sizeof(v), "\"vm\":\"%s\"", vm);
	return sim_fixture_count(&env.sim, needles);
}

/* Wait until the simulator says the VM runs (started by someone else than the manager). */
static void wait_running(lm_vm_manager *vmm, const char *vm)
{
	lm_vm_info info;
	int i;

	for (i = 0; i < 500; i++) {
		lm_assert_ok(lm_vm_get(vmm, vm, &info));
		if (strcmp(info.status, "running") == 0)
			return;
		usleep(20 * 1000);
	}
	fail_msg("%s never ran", vm);
}

static void test_auto_picks_cli_without_api(void **state)
{
	lm_context *ctx = test_context(&env, LM_VM_MANAGER_AUTO, "http://127.0.0.1:1", env.sim.lume, 10);
	lm_vm_manager *vmm = NULL;

	(void)state;
	lm_assert_ok(lm_vm_manager_open(&vmm, ctx));
	assert_string_equal(lm_vm_manager_name(vmm), "lume-cli");
	lm_vm_manager_free(vmm);
	lm_context_free(ctx);
}

static void test_list_and_get(void **state)
{
	lm_context *ctx;
	lm_vm_manager *vmm = open_cli(&ctx);
	lm_vm_info *vms = NULL, info;
	size_t n = 0;

	(void)state;
	/* The stand-in prints log lines around its JSON even with LUME_LOG_LEVEL=error. */
	lm_assert_ok(lm_vm_list(vmm, &vms, &n));
	assert_int_equal(n, 4);
	assert_string_equal(vms[0].name, "vm1");
	assert_string_equal(vms[0].status, "stopped");
	lm_free(vms);
	assert_int_equal(cli_calls("\"argv\":[\"ls\",\"--format\",\"json\"]"), 1);
	lm_assert_ok(lm_vm_get(vmm, "vm1", &info));
	assert_string_equal(info.name, "vm1");
	assert_string_equal(info.os, "macOS");
	assert_int_equal(cli_calls("\"argv\":[\"get\",\"vm1\",\"--format\",\"json\"]"), 1);
	/* NAME:TAG is Lume's NAME_TAG. */
	lm_assert_ok(lm_vm_get(vmm, "img:latest", &info));
	assert_string_equal(info.name, "img_latest");
	lm_vm_manager_free(vmm);
	lm_context_free(ctx);
}

static void test_get_unknown_vm(void **state)
{
	lm_context *ctx;
	lm_vm_manager *vmm = open_cli(&ctx);
	lm_vm_info info;

	(void)state;
	lm_assert_fails(lm_vm_get(vmm, "my-vm", &info), LM_ENOTFOUND);
	assert_string_equal(lm_error_last()->message, "lume get my-vm: Error: Virtual machine not found: my-vm (exit 1)");
	lm_assert_fails(lm_vm_start(vmm, "my-vm"), LM_ENOTFOUND);
	lm_assert_error_has("my-vm");
	assert_int_equal(cli_calls("\"argv\":[\"run\""), 0);
	lm_vm_manager_free(vmm);
	lm_context_free(ctx);
}

static void test_start_ready_stop(void **state)
{
	lm_context *ctx;
	lm_vm_manager *vmm = open_cli(&ctx);
	const char *address = sim_fixture_address(&env.sim, "vm1");
	lm_vm_info info;
	int asked;

	(void)state;
	lm_assert_ok(lm_vm_start(vmm, "vm1"));
	assert_int_equal(cli_calls("\"argv\":[\"run\",\"vm1\",\"--detach\"],\"exit\":0"), 1);
	lm_assert_ok(lm_vm_wait_ready(vmm, "vm1", 0, &info));
	assert_string_equal(info.ip, address);
	assert_int_equal(info.ssh_available, 1);
	/* Its identity, from config.json in the storage location `lume config storage list` gives. */
	assert_int_equal(strncmp(info.vm_id, "sha256:", 7), 0);
	assert_string_equal(info.vm_id_why, "");
	asked = cli_calls("\"argv\":[\"config\",\"storage\",\"list\"]");
	assert_true(asked >= 1);
	assert_real_sshd(address);
	lm_assert_ok(lm_vm_start(vmm, "vm1")); /* running: not started again */
	assert_int_equal(cli_calls("\"argv\":[\"run\",\"vm1\""), 1);
	/* Run by the detached `lume run` process, which holds the VM; the server was not asked. */
	assert_int_equal(sim_events("run", "vm1", "by lume run (PID "), 1);
	assert_int_equal(http_calls("\"POST\"", "/lume/vms/vm1/run\""), 0);

	/* `lume stop` signals that process (not the server), and the VM ends with it. */
	lm_assert_ok(lm_vm_stop(vmm, "vm1"));
	/* Where Lume keeps VMs: asked once by this manager (for the identity above), not again. */
	assert_int_equal(cli_calls("\"argv\":[\"config\",\"storage\",\"list\"]"), asked);
	assert_int_equal(cli_calls("\"argv\":[\"stop\",\"vm1\"],\"exit\":0"), 1);
	assert_int_equal(cli_calls("\"note\":\"SIGINT to PID "), 1);
	assert_int_equal(sim_events("stopped", "vm1", "its lume run process (PID "), 1);
	assert_int_equal(http_calls("\"POST\"", "/lume/vms/vm1/stop\""), 0);
	lm_assert_ok(lm_vm_get(vmm, "vm1", &info));
	assert_string_equal(info.status, "stopped");
	assert_true(port22_closed(address));
	lm_assert_ok(lm_vm_stop(vmm, "vm1")); /* stopped: nothing to do */
	assert_int_equal(cli_calls("\"argv\":[\"stop\",\"vm1\"],\"exit\":0"), 1);
	lm_vm_manager_free(vmm);
	lm_context_free(ctx);
}

static void test_old_lume_without_detach(void **state)
{
	lm_context *ctx;
	lm_vm_manager *vmm;
	lm_vm_info info;

	(void)state;
	setenv("LUME_SIM_VERSION", "0.4.2", 1); /* the stand-in behaves like Lume 0.4 */
	vmm = open_cli(&ctx);
	lm_assert_ok(lm_vm_start(vmm, "old"));
	assert_int_equal(cli_calls("\"argv\":[\"run\",\"old\",\"--detach\"],\"exit\":64"), 1);
	assert_int_equal(cli_calls("\"argv\":[\"--version\"]"), 1);
	lm_assert_ok(lm_vm_wait_ready(vmm, "old", 0, &info));
	assert_string_equal(info.status, "running");
	assert_real_sshd(info.ip);
	lm_assert_ok(lm_vm_stop(vmm, "old"));
	lm_assert_ok(lm_vm_get(vmm, "old", &info));
	assert_string_equal(info.status, "stopped");
	/* Lume's own run --no-display child was started exactly once, and ended by us (our child:
	 * only we can reap it), not by `lume stop`. */
	assert_int_equal(sim_events("run", "old", "by lume run (PID "), 1);
	assert_int_equal(sim_events("stopped", "old", "its lume run process (PID "), 1);
	assert_int_equal(cli_calls("\"argv\":[\"stop\",\"old\"]"), 0);
	unsetenv("LUME_SIM_VERSION");
	lm_vm_manager_free(vmm);
	lm_context_free(ctx);
}

static void test_never_ready_times_out(void **state)
{
	lm_context *ctx;
	lm_vm_manager *vmm = open_cli(&ctx);
	lm_vm_info info;

	(void)state;
	lm_assert_ok(lm_vm_start(vmm, "never"));
	lm_assert_fails(lm_vm_wait_ready(vmm, "never", 1, &info), LM_ETIMEOUT);
	assert_string_equal(lm_error_last()->message, "never: not ready after 1 s: running, no IP address yet");
	lm_assert_ok(lm_vm_stop(vmm, "never"));
	lm_vm_manager_free(vmm);
	lm_context_free(ctx);
}

static void test_server_error_through_cli(void **state)
{
	lm_context *ctx;
	lm_vm_manager *vmm = open_cli(&ctx);
	lm_vm_info info;
	long status;
	char *body;

	(void)state;
	assert_int_equal(sim_fixture_http(&env.sim, "POST", "/_sim/fault", "{\"mode\":\"500\",\"count\":1}", &status,
	                     &body, NULL, 0),
	    0);
	free(body);
	lm_assert_fails(lm_vm_get(vmm, "vm1", &info), LM_ERROR);
	lm_assert_error_has("lume get vm1: ");
	lm_assert_error_has("lume-sim injected failure");
	lm_assert_error_has("(exit 1)");
	lm_vm_manager_free(vmm);
	lm_context_free(ctx);
}

/* A VM the server runs: `lume stop` would end the server and every VM in it. Refused, said why,
 * nothing sent; the API stops it. */
static void test_never_stops_a_server_vm(void **state)
{
	lm_context *ctx;
	lm_vm_manager *vmm = open_cli(&ctx);
	lm_vm_info info;
	long status;
	char *body;

	(void)state;
	assert_int_equal(sim_fixture_http(&env.sim, "POST", "/lume/vms/vm1/run", "{\"noDisplay\":true}", &status, &body,
	                     NULL, 0),
	    0);
	free(body);
	assert_int_equal(status, 202);
	wait_running(vmm, "vm1");
	lm_assert_fails(lm_vm_stop(vmm, "vm1"), LM_EVMOWNER);
	lm_assert_error_has("vm1 is held by PID ");
	lm_assert_error_has("not by a `lume run` process of its own");
	lm_assert_error_has("every VM it runs");
	lm_assert_error_has("vm1 was not stopped");
	assert_int_equal(cli_calls("\"argv\":[\"stop\",\"vm1\"]"), 2); /* test_start_ready_stop's only */
	assert_int_equal(kill(env.sim.pid, 0), 0);
	/* Still up: "running" comes before the guest has booted, so wait for it to answer first. */
	lm_assert_ok(lm_vm_wait_ready(vmm, "vm1", 0, &info));
	assert_real_sshd(sim_fixture_address(&env.sim, "vm1"));
	assert_int_equal(sim_fixture_http(&env.sim, "POST", "/lume/vms/vm1/stop", NULL, &status, &body, NULL, 0), 0);
	free(body);
	assert_int_equal(status, 200);
	lm_vm_manager_free(vmm);
	lm_context_free(ctx);
}

static void test_lume_missing(void **state)
{
	lm_context *ctx;
	lm_vm_manager *vmm = NULL;
	char *path = getenv("PATH") != NULL ? strdup(getenv("PATH")) : NULL;
	char empty[PATH_MAX + 16];

	(void)state;
	ctx = test_context(&env, LM_VM_MANAGER_LUME_CLI, NULL, "/nonexistent/lume", 10);
	lm_assert_fails(lm_vm_manager_open(&vmm, ctx), LM_ENOTFOUND);
	assert_null(vmm);
	lm_assert_error_has("/nonexistent/lume");
	lm_assert_error_has("https://github.com/trycua/cua");
	lm_context_free(ctx);

	/* `lume` looked up on a PATH that does not have it. */
	snprintf(empty, sizeof(empty), "%s/empty-bin", env.sim.dir);
	mkdir(empty, 0755);
	setenv("PATH", empty, 1);
	ctx = test_context(&env, LM_VM_MANAGER_LUME_CLI, NULL, NULL, 10);
	lm_assert_fails(lm_vm_manager_open(&vmm, ctx), LM_ENOTFOUND);
	lm_assert_error_has("lume: not found on PATH");
	lm_context_free(ctx);
	if (path != NULL)
		setenv("PATH", path, 1);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_auto_picks_cli_without_api),
		cmocka_unit_test(test_list_and_get),
		cmocka_unit_test(test_get_unknown_vm),
		cmocka_unit_test(test_start_ready_stop),
		cmocka_unit_test(test_old_lume_without_detach),
		cmocka_unit_test(test_never_ready_times_out),
		cmocka_unit_test(test_server_error_through_cli),
		cmocka_unit_test(test_never_stops_a_server_vm),
		cmocka_unit_test(test_lume_missing),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
