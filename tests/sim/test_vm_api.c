/* The Lume HTTP API backend against lume-sim (real sshd guests). The simulator's own faithfulness
 * to reference/lume.md is test_sim_api's. */
#include "test_common.h"

static test_env env;

static int group_setup(void **state)
{
	static const char *const args[] = {"--vm", "vm1", "--vm", "vm2", "--vm", "never", "--never-ready", "never",
		"--pulling", "img=42.5", "--boot-delay", "0.2", "--stop-delay", "0.1", NULL};

	(void)state;
	return sim_fixture_start(&env.sim, "vm-api", args);
}

static int group_teardown(void **state)
{
	(void)state;
	return sim_fixture_stop(&env.sim);
}

static lm_vm_manager *open_api(lm_context **ctx, double ready_timeout)
{
	lm_vm_manager *vmm = NULL;

	*ctx = test_context(&env, LM_VM_MANAGER_AUTO, env.sim.url, "/nonexistent/lume", ready_timeout);
	lm_assert_ok(lm_vm_manager_open(&vmm, *ctx));
	assert_string_equal(lm_vm_manager_name(vmm), "lume-api");
	return vmm;
}

static int count(const char *a, const char *b)
{
	const char *const needles[] = {a, b, NULL};
	return sim_fixture_count(&env.sim, needles);
}

static void test_list_and_get(void **state)
{
	lm_context *ctx;
	lm_vm_manager *vmm = open_api(&ctx, 10);
	lm_vm_info *vms = NULL, info;
	size_t n = 0;

	(void)state;
	lm_assert_ok(lm_vm_list(vmm, &vms, &n));
	assert_int_equal(n, 3);
	assert_string_equal(vms[0].name, "vm1");
	assert_string_equal(vms[2].name, "never");
	assert_string_equal(vms[1].status, "stopped");
	assert_string_equal(vms[1].os, "macOS");
	lm_free(vms);
	lm_assert_ok(lm_vm_get(vmm, "vm2", &info));
	assert_string_equal(info.name, "vm2");
	assert_string_equal(info.status, "stopped");
	assert_string_equal(info.ip, "");
	assert_int_equal(info.ssh_available, 0);
	lm_vm_manager_free(vmm);
	lm_context_free(ctx);
}

static void test_get_unknown_vm(void **state)
{
	lm_context *ctx;
	lm_vm_manager *vmm = open_api(&ctx, 10);
	lm_vm_info info;

	(void)state;
	lm_assert_fails(lm_vm_get(vmm, "my-vm", &info), LM_ENOTFOUND);
	assert_string_equal(lm_error_last()->message, "lume: Virtual machine not found: my-vm (HTTP 400)");
	lm_vm_manager_free(vmm);
	lm_context_free(ctx);
}

static void test_start_ready_stop(void **state)
{
	lm_context *ctx;
	lm_vm_manager *vmm = open_api(&ctx, 20);
	const char *address = sim_fixture_address(&env.sim, "vm1");
	lm_vm_info info;

	(void)state;
	lm_assert_ok(lm_vm_start(vmm, "vm1"));
	assert_int_equal(count("\"POST\"", "/lume/vms/vm1/run\""), 1);
	assert_int_equal(count("/lume/vms/vm1/run\"", "\"body\":\"{\\\"noDisplay\\\":true,\\\"vnc\\\":\\\"disabled\\\"}\""), 1);
	lm_assert_ok(lm_vm_wait_ready(vmm, "vm1", 0, &info));
	assert_string_equal(info.status, "running");
	assert_string_equal(info.ip, address);
	assert_int_equal(info.ssh_available, 1);
	assert_real_sshd(address);

	/* Already running: nothing is sent (Lume would rewrite the VM's configuration). */
	lm_assert_ok(lm_vm_start(vmm, "vm1"));
	assert_int_equal(count("\"POST\"", "/lume/vms/vm1/run\""), 1);

	lm_assert_ok(lm_vm_stop(vmm, "vm1"));
	lm_assert_ok(lm_vm_get(vmm, "vm1", &info));
	assert_string_equal(info.status, "stopped");
	assert_true(port22_closed(address));
	/* Stopped already: nothing is sent. */
	lm_assert_ok(lm_vm_stop(vmm, "vm1"));
	assert_int_equal(count("\"POST\"", "/lume/vms/vm1/stop\""), 1);
	lm_vm_manager_free(vmm);
	lm_context_free(ctx);
}

static void test_start_unknown_vm(void **state)
{
	lm_context *ctx;
	lm_vm_manager *vmm = open_api(&ctx, 10);
	lm_vm_info info;

	(void)state;
	lm_assert_fails(lm_vm_start(vmm, "ghost"), LM_ENOTFOUND);
	lm_assert_error_has("Virtual machine not found: ghost");
	/* The wait says so at once instead of using up its timeout. */
	lm_assert_fails(lm_vm_wait_ready(vmm, "ghost", 30, &info), LM_ENOTFOUND);
	lm_assert_error_has("ghost");
	lm_vm_manager_free(vmm);
	lm_context_free(ctx);
}

static void test_never_ready_times_out(void **state)
{
	lm_context *ctx;
	lm_vm_manager *vmm = open_api(&ctx, 10);
	lm_vm_info info;

	(void)state;
	lm_assert_ok(lm_vm_start(vmm, "never"));
	lm_assert_fails(lm_vm_wait_ready(vmm, "never", 1, &info), LM_ETIMEOUT);
	assert_string_equal(lm_error_last()->message, "never: not ready after 1 s: running, no IP address yet");
	lm_assert_ok(lm_vm_stop(vmm, "never"));
	/* A VM nobody started: the message says it is stopped. */
	lm_assert_fails(lm_vm_wait_ready(vmm, "vm2", 0.3, &info), LM_ETIMEOUT);
	assert_string_equal(lm_error_last()->message, "vm2: not ready after 0.3 s: stopped");
	lm_vm_manager_free(vmm);
	lm_context_free(ctx);
}

/* Apple's limit of two running macOS VMs: Lume answers the third start 202 and fails it in the
 * background (reference/lume.md). The wait ends once the host status says available_slots 0 and
 * the VM is still stopped after that, not at its timeout (issue 49). */
static void test_start_at_the_limit(void **state)
{
	lm_context *ctx;
	lm_vm_manager *vmm = open_api(&ctx, 60);
	lm_vm_info info;
	int asked = count("\"GET\"", "/lume/host/status\""), failed = count("\"start-failed\"", "\"vm\":\"vm2\"");

	(void)state;
	lm_assert_ok(lm_vm_start(vmm, "vm1"));
	lm_assert_ok(lm_vm_start(vmm, "never"));
	lm_assert_ok(lm_vm_start(vmm, "vm2")); /* 202 */
	assert_int_equal(count("\"start-failed\"", "\"vm\":\"vm2\""), failed + 1);
	lm_assert_fails(lm_vm_wait_ready(vmm, "vm2", 60, &info), LM_ERROR);
	assert_string_equal(lm_error_last()->message, "vm2: still stopped after lume-api accepted its start: Lume runs its "
	    "maximum of 2 VMs (GET /lume/host/status: vm_count 2, max_vms 2, available_slots 0; Apple allows two macOS "
	    "VMs per host); stop another VM, then start this one again");
	assert_int_equal(count("\"GET\"", "/lume/host/status\""), asked + 1);
	lm_assert_ok(lm_vm_stop(vmm, "vm1"));
	lm_assert_ok(lm_vm_stop(vmm, "never"));
	lm_vm_manager_free(vmm);
	lm_context_free(ctx);
}

/* on_step: at the readiness wait's first report that the VM runs, someone stops it. */
static void stop_when_running(void *data, const lm_step_event *e)
{
	int *stopped = data;
	long status;
	char *body = NULL;

	if (*stopped || e->state != LM_STEP_WAITING || strncmp(e->detail, "running", 7) != 0)
		return;
	*stopped = 1;
	assert_int_equal(sim_fixture_http(&env.sim, "POST", "/lume/vms/never/stop", NULL, &status, &body, NULL, 0), 0);
	free(body);
	assert_int_equal(status, 200);
}

/* A VM stopped while the wait for it runs, after the manager said it ran: the next answer ends the
 * wait, saying so (issue 49: a person, a program, a killed lume-metal's late stop). */
static void test_stopped_during_wait(void **state)
{
	lm_options o;
	lm_context *ctx = NULL;
	lm_vm_manager *vmm = NULL;
	lm_vm_info info;
	int stopped = 0;

	(void)state;
	assert_int_equal(lm_options_init(&o, LM_OPTIONS_VERSION), 0);
	snprintf(env.state_dir, sizeof(env.state_dir), "%s/state", env.sim.dir);
	o.state_dir = env.state_dir;
	o.lume_url = env.sim.url;
	o.lume_program = "/nonexistent/lume";
	o.on_step = stop_when_running;
	o.callback_data = &stopped;
	lm_assert_ok(lm_context_new(&ctx, &o));
	lm_assert_ok(lm_vm_manager_open(&vmm, ctx));
	lm_assert_ok(lm_vm_start(vmm, "never"));
	lm_assert_fails(lm_vm_wait_ready(vmm, "never", 60, &info), LM_ENOTRUNNING);
	assert_int_equal(stopped, 1);
	assert_string_equal(lm_error_last()->message, "never: stopped while waiting for it to be ready: lume-api said "
	    "running, then stopped (something stopped the VM, or its process ended); nothing starts it again by itself");
	lm_vm_manager_free(vmm);
	lm_context_free(ctx);
}

static void set_fault(const char *json)
{
	long status;
	char *body;

	assert_int_equal(sim_fixture_http(&env.sim, "POST", "/_sim/fault", json, &status, &body, NULL, 0), 0);
	free(body);
	assert_int_equal(status, 200);
}

static void test_server_errors(void **state)
{
	lm_context *ctx;
	lm_vm_manager *vmm = open_api(&ctx, 10);
	lm_vm_info info, *vms;
	size_t n;

	(void)state;
	set_fault("{\"mode\":\"500\",\"count\":1}");
	lm_assert_fails(lm_vm_get(vmm, "vm2", &info), LM_ERROR);
	lm_assert_error_has("(HTTP 500)");
	lm_assert_error_has("lume-sim injected failure");
	lm_assert_ok(lm_vm_get(vmm, "vm2", &info)); /* the fault was for one request */

	set_fault("{\"mode\":\"garbage\"}");
	lm_assert_fails(lm_vm_list(vmm, &vms, &n), LM_ERROR);
	lm_assert_error_has("not JSON");
	lm_assert_error_has("GET /lume/vms");
	lm_assert_fails(lm_vm_start(vmm, "vm2"), LM_ERROR);
	lm_assert_error_has("not JSON");
	set_fault("{\"mode\":\"none\"}");
	assert_int_equal(count("\"POST\"", "/lume/vms/vm2/run\""), 0);
	lm_vm_manager_free(vmm);
	lm_context_free(ctx);
}

static void test_invalid_names_send_nothing(void **state)
{
	lm_context *ctx;
	lm_vm_manager *vmm = open_api(&ctx, 10);
	lm_vm_info info;

	(void)state;
	lm_assert_fails(lm_vm_get(vmm, "../etc", &info), LM_EINVALID);
	lm_assert_fails(lm_vm_start(vmm, "a b"), LM_EINVALID);
	assert_int_equal(count("a b", NULL), 0);
	assert_int_equal(count("../etc", NULL), 0);
	lm_vm_manager_free(vmm);
	lm_context_free(ctx);
}

static void test_unreachable_api(void **state)
{
	lm_context *ctx;
	lm_vm_manager *vmm = NULL;
	lm_vm_info *vms;
	size_t n;

	(void)state;
	/* Forced API, nothing listening: a clear network error naming the URL. */
	ctx = test_context(&env, LM_VM_MANAGER_LUME_API, "http://127.0.0.1:1", NULL, 10);
	lm_assert_ok(lm_vm_manager_open(&vmm, ctx));
	lm_assert_fails(lm_vm_list(vmm, &vms, &n), LM_ENETWORK);
	lm_assert_error_has("http://127.0.0.1:1/lume/vms");
	lm_vm_manager_free(vmm);
	lm_context_free(ctx);

	/* Automatic choice with neither the API nor `lume`: says what was tried (the tool adds what to
	 * do, by the code). */
	ctx = test_context(&env, LM_VM_MANAGER_AUTO, "http://127.0.0.1:1", "/nonexistent/lume", 10);
	lm_assert_fails(lm_vm_manager_open(&vmm, ctx), LM_ENOTFOUND);
	assert_null(vmm);
	lm_assert_error_has("nothing accepts connections at http://127.0.0.1:1");
	lm_assert_error_has("/nonexistent/lume");
	lm_context_free(ctx);

	/* A URL that is not one. */
	ctx = test_context(&env, LM_VM_MANAGER_LUME_API, "127.0.0.1:7777", NULL, 10);
	lm_assert_fails(lm_vm_manager_open(&vmm, ctx), LM_EINVALID);
	lm_context_free(ctx);
}

/* Lume's VM objects in every shape parse: a VM being pulled (three keys), a running VM without
 * an address (sshAvailable null); a pulling VM is not started. */
static void test_object_shapes(void **state)
{
	lm_context *ctx;
	lm_vm_manager *vmm = open_api(&ctx, 10);
	lm_vm_info info;

	(void)state;
	lm_assert_ok(lm_vm_get(vmm, "img", &info));
	assert_string_equal(info.name, "img");
	assert_string_equal(info.status, "pulling");
	assert_string_equal(info.ip, "");
	assert_int_equal(info.ssh_available, 0);
	lm_assert_fails(lm_vm_start(vmm, "img"), LM_EUNSUPPORTED);
	lm_assert_error_has("pulling");
	assert_int_equal(count("\"POST\"", "/lume/vms/img/run\""), 0);

	lm_assert_ok(lm_vm_start(vmm, "never"));
	lm_assert_ok(lm_vm_get(vmm, "never", &info));
	assert_string_equal(info.status, "running");
	assert_string_equal(info.ip, "");
	assert_int_equal(info.ssh_available, 0);
	lm_assert_ok(lm_vm_stop(vmm, "never"));
	lm_vm_manager_free(vmm);
	lm_context_free(ctx);
}

/* Anything that accepts connections at the URL is the API: no request decides it (the host status
 * takes seconds per running VM on Lume), and nothing falls back to the CLI. */
static void test_detection_by_connection(void **state)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	lm_context *ctx;
	lm_vm_manager *vmm = NULL;
	lm_vm_info *vms;
	char url[64];
	size_t n;
	int fd, from = count("\"GET\"", "/lume/host/status\"");

	(void)state;
	vmm = open_api(&ctx, 10);
	assert_int_equal(count("\"GET\"", "/lume/host/status\""), from);
	lm_vm_manager_free(vmm);
	lm_context_free(ctx);

	/* A listener that never answers HTTP: still the API (the lume CLI exists here), and a request
	 * that then fails says so instead of quietly using the CLI. */
	fd = socket(AF_INET, SOCK_STREAM, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 4), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", ntohs(sa.sin_port));
	ctx = test_context(&env, LM_VM_MANAGER_AUTO, url, env.sim.lume, 10);
	lm_assert_ok(lm_vm_manager_open(&vmm, ctx));
	assert_string_equal(lm_vm_manager_name(vmm), "lume-api");
	close(fd);
	lm_assert_fails(lm_vm_list(vmm, &vms, &n), LM_ENETWORK);
	lm_assert_error_has(url);
	lm_vm_manager_free(vmm);
	lm_context_free(ctx);
}

/* The process serving the API, from the host's process table. */
static void test_server_lookup(void **state)
{
	lm_context *ctx = test_context(&env, LM_VM_MANAGER_AUTO, env.sim.url, NULL, 10);
	lm_vm_server_info srv;
	lm_host_pref_info pref;
	lm_options o;
	char prefs[PATH_MAX + 16];

	(void)state;
	lm_assert_ok(lm_options_init(&o, LM_OPTIONS_VERSION));
	lm_assert_ok(lm_vm_server_lookup(ctx, &srv));
	assert_int_equal(srv.local, 1);
	assert_int_equal(srv.found, 1);
	assert_int_equal(srv.pid, (long)env.sim.pid);
	assert_int_equal(srv.uid, (long)geteuid());
	lm_assert_contains(srv.command, "lume-sim");
	lm_context_free(ctx);

	/* Whose domain the preference is in: the server's user's (the same user here). */
	snprintf(prefs, sizeof(prefs), "%s/prefs", env.sim.dir);
	snprintf(env.state_dir, sizeof(env.state_dir), "%s/state", env.sim.dir);
	o.state_dir = env.state_dir;
	o.prefs_dir = prefs;
	o.lume_url = env.sim.url;
	lm_assert_ok(lm_context_new(&ctx, &o));
	lm_assert_ok(lm_host_pref_status(ctx, NULL, &pref));
	assert_string_equal(pref.user, pref.server_user);
	assert_int_equal(pref.server_pid, (long)env.sim.pid);
	assert_int_equal(pref.user_mismatch, 0);
	lm_context_free(ctx);

	/* Nothing listening: no server. */
	ctx = test_context(&env, LM_VM_MANAGER_AUTO, "http://127.0.0.1:1", NULL, 10);
	lm_assert_ok(lm_vm_server_lookup(ctx, &srv));
	assert_int_equal(srv.found, 0);
	assert_string_equal(srv.address, "127.0.0.1:1");
	lm_context_free(ctx);
}

/* An HTTP stop of a VM that a `lume run` process holds: the server signals that process, as Lume's
 * stopVM does for a VM it does not run itself. */
static void test_api_stop_of_cli_vm(void **state)
{
	lm_context *cctx, *actx;
	lm_vm_manager *cli = NULL, *api = open_api(&actx, 20);
	lm_vm_info info;
	int runs, signals, stops;

	(void)state;
	/* The log is the whole simulator's: count this test's events from what earlier tests left. */
	runs = count("\"event\":\"run\"", "by lume run (PID ");
	signals = count("\"event\":\"signal\"", "the server sends SIGINT to PID ");
	stops = count("\"event\":\"stopped\"", "\"vm\":\"vm2\"");
	cctx = test_context(&env, LM_VM_MANAGER_LUME_CLI, NULL, env.sim.lume, 20);
	lm_assert_ok(lm_vm_manager_open(&cli, cctx));
	lm_assert_ok(lm_vm_start(cli, "vm2"));
	lm_assert_ok(lm_vm_wait_ready(api, "vm2", 0, &info));
	assert_int_equal(count("\"event\":\"run\"", "by lume run (PID "), runs + 1);
	lm_assert_ok(lm_vm_stop(api, "vm2"));
	assert_int_equal(count("\"event\":\"signal\"", "the server sends SIGINT to PID "), signals + 1);
	assert_int_equal(count("\"event\":\"stopped\"", "\"vm\":\"vm2\""), stops + 1);
	assert_true(port22_closed(sim_fixture_address(&env.sim, "vm2")));
	lm_vm_manager_free(cli);
	lm_vm_manager_free(api);
	lm_context_free(cctx);
	lm_context_free(actx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list_and_get),
		cmocka_unit_test(test_get_unknown_vm),
		cmocka_unit_test(test_start_ready_stop),
		cmocka_unit_test(test_start_unknown_vm),
		cmocka_unit_test(test_never_ready_times_out),
		cmocka_unit_test(test_server_errors),
		cmocka_unit_test(test_invalid_names_send_nothing),
		cmocka_unit_test(test_unreachable_api),
		cmocka_unit_test(test_object_shapes),
		cmocka_unit_test(test_detection_by_connection),
		cmocka_unit_test(test_server_lookup),
		cmocka_unit_test(test_api_stop_of_cli_vm),
		/* Last: the first starts vm2, whose starts test_server_errors counts. */
		cmocka_unit_test(test_start_at_the_limit),
		cmocka_unit_test(test_stopped_during_wait),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
