/* The simulator's Lume HTTP API checked directly, with raw requests and nothing of lume-metal: each
 * behaviour docs/simulator.md says it reproduces of Lume 0.5.3 (and each of its test hooks) has a
 * test of its own here, so that a simulator that drifts from Lume fails here instead of letting a
 * lume-metal test pass against the wrong thing. The table in docs/simulator.md names them. */
#include "test_common.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <glob.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>

static sim_fixture sim;
static char *prefs_dir; /* the preferences of the user the simulator plays */

#define PREF_FILE "com.apple.gpusw.ParavirtualizedGraphics.plist"

static int group_setup(void **state)
{
	static const char *const args[] = {"--vm", "vm1", "--vm", "vm2", "--vm", "vm3", "--vm", "never",
		"--never-ready", "never", "--pulling", "img=42.5", "--boot-delay", "0.2", "--stop-delay", "0.1",
		"--status-delay", "0", NULL};

	(void)state;
	prefs_dir = lm_test_tmpdir("sim-api-prefs");
	setenv("LUME_METAL_PREFS_DIR", prefs_dir, 1); /* the simulator's default --prefs-dir */
	return sim_fixture_start(&sim, "sim-api", args);
}

static int group_teardown(void **state)
{
	int rc = sim_fixture_stop(&sim);

	(void)state;
	lm_test_rmtree(prefs_dir);
	free(prefs_dir);
	return rc;
}

/* ---- helpers ------------------------------------------------------------------------------ */

/* One request; the status (fails the test when nothing answered), the body (free) and its type. */
static long http(const char *method, const char *path, const char *data, char **body, char *type, size_t cap)
{
	long status = 0;
	int rc = sim_fixture_http(&sim, method, path, data, &status, body, type, cap);

	if (rc != 0)
		fail_msg("%s %s: no answer (%d)", method, path, rc);
	return status;
}

/* METHOD PATH answers STATUS with a TYPE body containing BODY_HAS. */
static void expect(const char *method, const char *path, const char *data, long status, const char *type,
    const char *body_has)
{
	char *body, ct[64] = "";
	long got = http(method, path, data, &body, ct, sizeof(ct));

	if (got != status || strstr(body, body_has) == NULL || strncmp(ct, type, strlen(type)) != 0)
		fail_msg("%s %s: HTTP %ld %s '%s'; expected %ld %s with '%s'", method, path, got, ct, body, status, type,
		    body_has);
	free(body);
}

/* A JSON answer of STATUS, parsed. */
static cJSON *json_of(const char *method, const char *path, const char *data, long status)
{
	char *body, ct[64] = "";
	long got = http(method, path, data, &body, ct, sizeof(ct));
	cJSON *doc = cJSON_Parse(body);

	if (got != status || doc == NULL || strncmp(ct, "application/json", 16) != 0)
		fail_msg("%s %s: HTTP %ld %s '%s'; expected %ld with a JSON body", method, path, got, ct, body, status);
	free(body);
	return doc;
}

static cJSON *get_vm(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "/lume/vms/%s", name);
	return json_of("GET", path, NULL, 200);
}

static const char *str_of(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Until GET shows the VM in STATUS, and (for "running") booted: an address and SSH answering.
 * A wait for a condition; the bound is a hang guard. */
static void wait_vm(const char *name, const char *status)
{
	int i, ok = 0;

	for (i = 0; i < 1200 && !ok; i++) {
		cJSON *vm = get_vm(name);
		const char *st = str_of(vm, "status");

		ok = st != NULL && strcmp(st, status) == 0 &&
		    (strcmp(status, "running") != 0 || cJSON_IsTrue(cJSON_GetObjectItem(vm, "sshAvailable")));
		cJSON_Delete(vm);
		if (!ok)
			usleep(50 * 1000);
	}
	if (!ok)
		fail_msg("%s never reached '%s'", name, status);
}

static int events(const char *event, const char *vm, const char *detail_has);

/* How many times the simulator logged the guest of `name` booting or resuming. */
static int starts_of(const char *name)
{
	return events("boot", name, NULL) + events("resume", name, NULL);
}

/* POST run, then until the guest is ready: its boot (or resume) event in the simulator's log first,
 * so that no question meets Lume's 2-s check of a silent guest (a second or two each; sim_vm.c
 * lume_ssh_check), then the answer that says running and sshAvailable. */
static void run_vm(const char *name)
{
	int starts = starts_of(name), i;
	char path[256];

	snprintf(path, sizeof(path), "/lume/vms/%s/run", name);
	expect("POST", path, "{\"noDisplay\":true}", 202, "application/json", "VM start initiated");
	for (i = 0; i < 1200 && starts_of(name) <= starts; i++)
		usleep(50 * 1000);
	wait_vm(name, "running");
}

static void stop_vm(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "/lume/vms/%s/stop", name);
	expect("POST", path, "", 200, "application/json", "VM stopped successfully");
}

/* Lines of the request log with every one of these (NULL ends; NULL for detail_has: any). */
static int logged(const char *a, const char *b, const char *c)
{
	const char *const needles[] = {a, b, c, NULL};
	return sim_fixture_count(&sim, needles);
}

/* The simulator's own events for a VM. */
static int events(const char *event, const char *vm, const char *detail_has)
{
	char e[64], v[160];

	snprintf(e, sizeof(e), "\"event\":\"%s\"", event);
	snprintf(v, sizeof(v), "\"vm\":\"%s\"", vm);
	return logged(e, v, detail_has);
}

static const char *vm_dir(const char *name)
{
	int i = sim_fixture_vm(&sim, name);

	assert_true(i >= 0);
	return sim.vm_dirs[i];
}

/* A file of the VM's guest fixture, whole (free). */
static char *guest_file(const char *name, const char *file)
{
	char *path = lm_test_join(vm_dir(name), file), *text = lm_test_slurp(path, NULL);

	if (text == NULL)
		fail_msg("%s: cannot read", path);
	free(path);
	return text;
}

/* The guest fixture's directory of a VM the simulator made (a clone: vms/NAME.N), or NULL. */
static char *made_vm_dir(const char *name)
{
	char pattern[PATH_MAX + 256], *dir = NULL;
	glob_t g;

	snprintf(pattern, sizeof(pattern), "%s/sim/vms/%s.*", sim.dir, name);
	if (glob(pattern, 0, NULL, &g) == 0) {
		if (g.gl_pathc != 1)
			fail_msg("%zu directories match %s", g.gl_pathc, pattern);
		dir = strdup(g.gl_pathv[0]);
	}
	globfree(&g);
	return dir;
}

/* ---- where it listens, and its routes -------------------------------------------------------- */

/* The API is on the literal 127.0.0.1: nothing answers on the same port elsewhere. */
static void test_api_on_127_0_0_1_only(void **state)
{
	struct sockaddr_in sa;
	char other[16];
	int fd;

	(void)state;
	assert_true(strncmp(sim.url, "http://127.0.0.1:", 17) == 0);
	lm_test_address(other, 1);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)atoi(sim.url + 17));
	assert_int_equal(inet_pton(AF_INET, other, &sa.sin_addr), 1);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_not_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
}

/* An unknown route is 404 text/plain "Not found", Lume's other routes among them. */
static void test_unknown_routes_404_text(void **state)
{
	(void)state;
	expect("GET", "/lume/nothing", NULL, 404, "text/plain", "Not found");
	expect("POST", "/lume/vms", "{}", 404, "text/plain", "Not found");          /* create */
	expect("POST", "/lume/pull", "{}", 404, "text/plain", "Not found");
	expect("GET", "/lume/images", NULL, 404, "text/plain", "Not found");
	expect("GET", "/lume/config", NULL, 404, "text/plain", "Not found");
	expect("GET", "/", NULL, 404, "text/plain", "Not found");
}

/* GET /lume/config/locations: an array of {"name", "path"}, the store where the VMs' config.json
 * files are (the `lume` stand-in's `config storage list` names the same one). */
static void test_config_locations(void **state)
{
	cJSON *doc = json_of("GET", "/lume/config/locations", NULL, 200), *loc;
	char *want = lm_test_join(sim.dir, "sim/lume");

	(void)state;
	assert_true(cJSON_IsArray(doc));
	assert_int_equal(cJSON_GetArraySize(doc), 1);
	loc = cJSON_GetArrayItem(doc, 0);
	assert_string_equal(str_of(loc, "name"), "home");
	assert_string_equal(str_of(loc, "path"), want);
	free(want);
	cJSON_Delete(doc);
}

/* Paths are routed as they arrive: no percent-decoding, no query splitting. */
static void test_paths_routed_raw(void **state)
{
	(void)state;
	expect("GET", "/lume/vms/vm%31", NULL, 400, "application/json", "Virtual machine not found: vm%31");
	expect("GET", "/lume/vms?x=1", NULL, 404, "text/plain", "Not found");
	expect("GET", "/lume/host/status?x=1", NULL, 404, "text/plain", "Not found");
}

/* Failures are 400 with a JSON object holding only "message", in Lume's words. */
static void test_failures_400_message(void **state)
{
	cJSON *doc;

	(void)state;
	doc = json_of("GET", "/lume/vms/ghost", NULL, 400);
	assert_int_equal(cJSON_GetArraySize(doc), 1);
	assert_string_equal(str_of(doc, "message"), "Virtual machine not found: ghost");
	cJSON_Delete(doc);
	expect("POST", "/lume/vms/ghost/stop", "", 400, "application/json", "\"Virtual machine not found: ghost\"");
	expect("POST", "/lume/vms/vm2/stop", "", 400, "application/json", "\"Virtual machine not running: vm2\"");
	run_vm("vm2");
	expect("DELETE", "/lume/vms/vm2", NULL, 400, "application/json", "\"Virtual machine already running: vm2\"");
	stop_vm("vm2");
}

/* ---- VM objects -------------------------------------------------------------------------- */

static const char *const vm_keys[] = {"name", "os", "status", "cpuCount", "memorySize", "diskSize", "display",
	"provisioningOperation", "vncUrl", "ipAddress", "sshAvailable", "locationName", "sharedDirectories",
	"networkMode", "downloadProgress"};
#define N_VM_KEYS (sizeof(vm_keys) / sizeof(vm_keys[0]))

static void assert_every_key(const cJSON *vm)
{
	size_t i;

	assert_int_equal(cJSON_GetArraySize(vm), N_VM_KEYS);
	for (i = 0; i < N_VM_KEYS; i++)
		if (!cJSON_HasObjectItem(vm, vm_keys[i]))
			fail_msg("VM object without \"%s\": %s", vm_keys[i], str_of(vm, "name"));
}

/* GET /lume/vms: an array of VM objects with all 15 keys, null when unknown (a stopped VM has no
 * address, no SSH check and no VNC). */
static void test_list_every_key(void **state)
{
	cJSON *list = json_of("GET", "/lume/vms", NULL, 200), *vm;
	int n = 0;

	(void)state;
	assert_true(cJSON_IsArray(list));
	cJSON_ArrayForEach(vm, list) {
		assert_every_key(vm);
		n++;
	}
	assert_int_equal(n, 4); /* vm1 vm2 vm3 never: the pulled image is not listed */
	vm = cJSON_GetArrayItem(list, 0);
	assert_string_equal(str_of(vm, "name"), "vm1");
	assert_string_equal(str_of(vm, "status"), "stopped");
	assert_string_equal(str_of(vm, "os"), "macOS");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(vm, "ipAddress")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(vm, "sshAvailable")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(vm, "vncUrl")));
	cJSON_Delete(list);
}

/* GET /lume/vms/NAME: one object, not an array. */
static void test_get_one_object(void **state)
{
	cJSON *vm = get_vm("vm2");

	(void)state;
	assert_true(cJSON_IsObject(vm));
	assert_every_key(vm);
	assert_string_equal(str_of(vm, "name"), "vm2");
	cJSON_Delete(vm);
}

/* A VM being pulled: only name, status "pulling" and downloadProgress; nothing else knows it. */
static void test_pulling_vm(void **state)
{
	cJSON *vm = get_vm("img");
	char *body;

	(void)state;
	assert_int_equal(cJSON_GetArraySize(vm), 3);
	assert_string_equal(str_of(vm, "name"), "img");
	assert_string_equal(str_of(vm, "status"), "pulling");
	assert_true(cJSON_GetObjectItem(vm, "downloadProgress")->valuedouble == 42.5);
	cJSON_Delete(vm);
	assert_int_equal(http("GET", "/lume/vms", NULL, &body, NULL, 0), 200);
	lm_assert_not_contains(body, "img");
	free(body);
	expect("POST", "/lume/vms/img/stop", "", 400, "application/json", "Virtual machine not found: img");
}

/* ---- run, boot, stop --------------------------------------------------------------------- */

/* POST run answers 202 {"message","name","status":"pending"} at once, whatever happens: the
 * outcome (an unknown VM, one already running) is in the request log only. */
static void test_run_202_whatever_happens(void **state)
{
	cJSON *doc;
	int failed = events("start-failed", "ghost", NULL);

	(void)state;
	doc = json_of("POST", "/lume/vms/ghost/run", "", 202);
	assert_int_equal(cJSON_GetArraySize(doc), 3);
	assert_string_equal(str_of(doc, "message"), "VM start initiated");
	assert_string_equal(str_of(doc, "name"), "ghost");
	assert_string_equal(str_of(doc, "status"), "pending");
	cJSON_Delete(doc);
	assert_int_equal(events("start-failed", "ghost", "Virtual machine not found"), failed + 1);

	run_vm("vm1");
	failed = events("start-failed", "vm1", "already running");
	expect("POST", "/lume/vms/vm1/run", "", 202, "application/json", "\"status\":\"pending\"");
	assert_int_equal(events("start-failed", "vm1", "already running"), failed + 1);
	stop_vm("vm1");
}

/* A run body that does not decode is 400 "Invalid run request body" and starts nothing; no body
 * is every default. `vnc` is "enabled" or "disabled", disabled only with noDisplay true (Lume main
 * since ab957bd, reference/lume.md 2026-12-06). */
static void test_run_body_checked(void **state)
{
	static const char *const bad[] = {"{\"noDisplay\":true", "[]", "\"x\"", "{\"noDisplay\":\"yes\"}",
		"{\"sharedDirectories\":{}}", "{\"noDisplay\":true,\"vnc\":\"off\"}", "{\"vnc\":\"disabled\"}",
		"{\"noDisplay\":false,\"vnc\":\"disabled\"}"};
	int runs = events("run", "vm2", NULL);
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect("POST", "/lume/vms/vm2/run", bad[i], 400, "application/json", "Invalid run request body");
	assert_int_equal(events("run", "vm2", NULL), runs);
	expect("POST", "/lume/vms/vm2/run", "", 202, "application/json", "pending");
	assert_int_equal(events("run", "vm2", NULL), runs + 1);
	wait_vm("vm2", "running");
	stop_vm("vm2");
}

/* "vnc": "disabled" (with noDisplay): the VM runs without a VNC listener, so vncUrl stays null; the
 * next run without it has one again. */
static void test_run_vnc_disabled(void **state)
{
	cJSON *vm;

	(void)state;
	expect("POST", "/lume/vms/vm2/run", "{\"noDisplay\":true,\"vnc\":\"disabled\"}", 202, "application/json",
	    "pending");
	wait_vm("vm2", "running");
	vm = get_vm("vm2");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(vm, "vncUrl")));
	cJSON_Delete(vm);
	stop_vm("vm2");
	expect("POST", "/lume/vms/vm2/run", "{\"noDisplay\":true,\"vnc\":\"enabled\"}", 202, "application/json",
	    "pending");
	wait_vm("vm2", "running");
	vm = get_vm("vm2");
	assert_true(strncmp(str_of(vm, "vncUrl"), "vnc://", 6) == 0);
	cJSON_Delete(vm);
	stop_vm("vm2");
}

/* No "starting" state: running at once, before any address; sshAvailable null without one. A VM
 * that never boots stays so. */
static void test_running_before_address(void **state)
{
	cJSON *vm;

	(void)state;
	expect("POST", "/lume/vms/never/run", "", 202, "application/json", "pending");
	vm = get_vm("never");
	assert_string_equal(str_of(vm, "status"), "running");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(vm, "ipAddress")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(vm, "sshAvailable")));
	assert_non_null(str_of(vm, "vncUrl")); /* VNC runs whatever the display */
	cJSON_Delete(vm);
	assert_int_equal(events("run", "never", "by the server"), 1);
	assert_int_equal(events("boot", "never", NULL), 0);
	stop_vm("never");
}

/* After the boot delay the guest is a real sshd on the VM's address, sshAvailable a real check of
 * its port 22, vncUrl set; the guest's kern.boottime is the moment its sshd started. */
static void test_boot_gives_address_and_ssh(void **state)
{
	const char *address = sim_fixture_address(&sim, "vm1");
	char *boottime, boot_event[64];
	long sec, usec;
	cJSON *vm;

	(void)state;
	run_vm("vm1");
	vm = get_vm("vm1");
	assert_string_equal(str_of(vm, "ipAddress"), address);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(vm, "sshAvailable")));
	assert_true(strncmp(str_of(vm, "vncUrl"), "vnc://", 6) == 0);
	cJSON_Delete(vm);
	assert_real_sshd(address);
	/* The boot event's time is what the guest's sysctl answers, to the microsecond. */
	boottime = guest_file("vm1", "boottime");
	assert_int_equal(sscanf(boottime, "%ld %ld", &sec, &usec), 2);
	snprintf(boot_event, sizeof(boot_event), "\"detail\":\"%ld.%06ld\"", sec, usec);
	free(boottime);
	assert_true(usec >= 0 && usec < 1000000);
	assert_int_equal(logged("\"event\":\"boot\"", "\"vm\":\"vm1\"", boot_event), 1);
	stop_vm("vm1");
}

/* Lume's address is the host's DHCP lease: a restarted VM has it while its guest boots again
 * (held here by the simulator's hook), with sshAvailable false until its sshd listens. */
static void test_restart_keeps_lease_address(void **state)
{
	const char *address = sim_fixture_address(&sim, "vm1");
	cJSON *vm;

	(void)state;
	run_vm("vm1");
	stop_vm("vm1");
	expect("POST", "/_sim/vms/vm1/hold-boot", "{\"hold\": true}", 200, "application/json", "boots held");
	expect("POST", "/lume/vms/vm1/run", "{\"noDisplay\":true}", 202, "application/json", "VM start initiated");
	vm = get_vm("vm1");
	assert_string_equal(str_of(vm, "status"), "running");
	assert_string_equal(str_of(vm, "ipAddress"), address);
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(vm, "sshAvailable")));
	cJSON_Delete(vm);
	assert_true(port22_closed(address));
	expect("POST", "/_sim/vms/vm1/hold-boot", "{\"hold\": false}", 200, "application/json", "boots go on");
	wait_vm("vm1", "running");
	stop_vm("vm1");
}

/* POST stop blocks until the VM is down: when it answers, the guest's port 22 is closed, and the
 * stop is in the log after the VM's "stopped" event. */
static void test_stop_blocks_until_down(void **state)
{
	const char *address = sim_fixture_address(&sim, "vm2");
	char *log, *stopped, *answered;
	cJSON *vm;

	(void)state;
	run_vm("vm2");
	stop_vm("vm2");
	assert_true(port22_closed(address));
	vm = get_vm("vm2");
	assert_string_equal(str_of(vm, "status"), "stopped");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(vm, "sshAvailable")));
	cJSON_Delete(vm);
	log = lm_test_slurp(sim.log, NULL);
	assert_non_null(log);
	stopped = strstr(log, "\"event\":\"stopped\",\"vm\":\"vm2\"");
	answered = stopped != NULL ? strstr(stopped, "\"path\":\"/lume/vms/vm2/stop\",\"status\":200") : NULL;
	if (answered == NULL)
		fail_msg("no 'stopped' event of vm2 before its HTTP stop in: %s", log);
	free(log);
}

/* GET /lume/host/status: healthy, the literal version "1.0.0", two VMs at most, the count of
 * running VMs and the slots left. */
static void test_host_status_document(void **state)
{
	cJSON *doc;

	(void)state;
	doc = json_of("GET", "/lume/host/status", NULL, 200);
	assert_string_equal(str_of(doc, "status"), "healthy");
	assert_string_equal(str_of(doc, "version"), "1.0.0");
	assert_int_equal(cJSON_GetObjectItem(doc, "max_vms")->valueint, 2);
	assert_int_equal(cJSON_GetObjectItem(doc, "vm_count")->valueint, 0);
	assert_int_equal(cJSON_GetObjectItem(doc, "available_slots")->valueint, 2);
	cJSON_Delete(doc);
	run_vm("vm1");
	doc = json_of("GET", "/lume/host/status", NULL, 200);
	assert_int_equal(cJSON_GetObjectItem(doc, "vm_count")->valueint, 1);
	assert_int_equal(cJSON_GetObjectItem(doc, "available_slots")->valueint, 1);
	cJSON_Delete(doc);
	stop_vm("vm1");
}

/* At most two running macOS VMs (Apple's limit): a third start still answers 202 and fails in
 * the background. */
static void test_max_running_two(void **state)
{
	int failed = events("start-failed", "vm3", "maximum number");
	cJSON *vm;

	(void)state;
	run_vm("vm1");
	run_vm("vm2");
	expect("POST", "/lume/vms/vm3/run", "", 202, "application/json", "pending");
	assert_int_equal(events("start-failed", "vm3", "maximum number of macOS VMs already (2)"), failed + 1);
	vm = get_vm("vm3");
	assert_string_equal(str_of(vm, "status"), "stopped");
	cJSON_Delete(vm);
	stop_vm("vm1");
	run_vm("vm3");
	stop_vm("vm3");
	stop_vm("vm2");
}

/* A running VM belongs to the process that keeps its config.json flock()ed: the server, for a VM
 * it runs; nobody once it stopped. */
static void test_server_holds_config_lock(void **state)
{
	const char *config = sim.vm_configs[sim_fixture_vm(&sim, "vm1")];
	int fd;

	(void)state;
	run_vm("vm1");
	fd = open(config, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), -1);
	assert_int_equal(errno, EWOULDBLOCK);
	stop_vm("vm1");
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
	close(fd);
}

/* ---- clone and delete -------------------------------------------------------------------- */

static cJSON *config_of(const char *lume_home_config)
{
	char *text = lm_test_slurp(lume_home_config, NULL);
	cJSON *doc = text != NULL ? cJSON_Parse(text) : NULL;

	if (doc == NULL)
		fail_msg("%s: not JSON: %s", lume_home_config, text != NULL ? text : "(unreadable)");
	free(text);
	return doc;
}

/* POST /lume/vms/clone: 200 with the message, source and destination; the clone is a VM of its own
 * (new macAddress and machineIdentifier, the source's disk and host keys, its own address); an
 * unknown or running source and a taken name are 400 in Lume's words. */
static void test_clone(void **state)
{
	cJSON *doc, *src, *dst;
	char *path, *dir, *src_key, *dst_key;

	(void)state;
	doc = json_of("POST", "/lume/vms/clone", "{\"name\":\"vm2\",\"newName\":\"copy\"}", 200);
	assert_string_equal(str_of(doc, "message"), "VM cloned successfully");
	assert_string_equal(str_of(doc, "source"), "vm2");
	assert_string_equal(str_of(doc, "destination"), "copy");
	cJSON_Delete(doc);
	doc = get_vm("copy");
	assert_every_key(doc);
	cJSON_Delete(doc);
	src = config_of(sim.vm_configs[sim_fixture_vm(&sim, "vm2")]);
	path = lm_test_join(sim.dir, "sim/lume/copy/config.json");
	dst = config_of(path);
	free(path);
	assert_non_null(str_of(dst, "macAddress"));
	assert_non_null(str_of(dst, "machineIdentifier"));
	assert_string_not_equal(str_of(dst, "macAddress"), str_of(src, "macAddress"));
	assert_string_not_equal(str_of(dst, "machineIdentifier"), str_of(src, "machineIdentifier"));
	assert_string_equal(str_of(dst, "os"), str_of(src, "os"));
	cJSON_Delete(src);
	cJSON_Delete(dst);
	/* The guest's host keys came along (a source that never ran got its keys first). */
	src_key = guest_file("vm2", "hostkeys/ssh_host_ed25519_key.pub");
	dir = made_vm_dir("copy");
	assert_non_null(dir);
	path = lm_test_join(dir, "hostkeys/ssh_host_ed25519_key.pub");
	dst_key = lm_test_slurp(path, NULL);
	free(path);
	free(dir);
	assert_non_null(dst_key);
	assert_string_equal(dst_key, src_key);
	free(src_key);
	free(dst_key);
	/* Its own guest address: it boots and answers there. */
	run_vm("copy");
	doc = get_vm("copy");
	assert_string_not_equal(str_of(doc, "ipAddress"), sim_fixture_address(&sim, "vm2"));
	assert_real_sshd(str_of(doc, "ipAddress"));
	cJSON_Delete(doc);

	expect("POST", "/lume/vms/clone", "{\"name\":\"ghost\",\"newName\":\"x\"}", 400, "application/json",
	    "Virtual machine not found: ghost");
	expect("POST", "/lume/vms/clone", "{\"name\":\"copy\",\"newName\":\"x\"}", 400, "application/json",
	    "Virtual machine already running: copy");
	expect("POST", "/lume/vms/clone", "{\"name\":\"vm2\",\"newName\":\"vm3\"}", 400, "application/json",
	    "Virtual machine already exists: vm3");
	stop_vm("copy");
}

/* DELETE /lume/vms/NAME: 200 with an empty body; the VM is gone from every route and its files
 * with it, and the name can be used again; unknown or running: 400. */
static void test_delete(void **state)
{
	char *body, *path;

	(void)state;
	expect("DELETE", "/lume/vms/ghost", NULL, 400, "application/json", "Virtual machine not found: ghost");
	assert_int_equal(http("DELETE", "/lume/vms/copy", NULL, &body, NULL, 0), 200);
	assert_string_equal(body, "");
	free(body);
	expect("GET", "/lume/vms/copy", NULL, 400, "application/json", "Virtual machine not found: copy");
	assert_int_equal(http("GET", "/lume/vms", NULL, &body, NULL, 0), 200);
	lm_assert_not_contains(body, "\"copy\"");
	free(body);
	path = lm_test_join(sim.dir, "sim/lume/copy");
	assert_false(lm_test_exists(path));
	free(path);
	assert_null(made_vm_dir("copy"));
	expect("POST", "/lume/vms/clone", "{\"name\":\"vm2\",\"newName\":\"copy\"}", 200, "application/json",
	    "VM cloned successfully");
	assert_int_equal(http("DELETE", "/lume/vms/copy", NULL, &body, NULL, 0), 200);
	free(body);
}

/* ---- the request log and the test hooks --------------------------------------------------- */

/* One JSON object a line: every request (method, path, status, body when not empty) and the
 * simulator's events, "listening" first. */
static void test_request_log_lines(void **state)
{
	char *log, *line, *save = NULL;
	cJSON *doc;
	int n = 0;

	(void)state;
	expect("POST", "/lume/vms/ghost/stop", "{\"x\":1}", 400, "application/json", "not found");
	log = lm_test_slurp(sim.log, NULL);
	assert_non_null(log);
	for (line = strtok_r(log, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save), n++) {
		const char *source;

		doc = cJSON_Parse(line);
		if (doc == NULL)
			fail_msg("not a JSON object: %s", line);
		assert_true(cJSON_IsNumber(cJSON_GetObjectItem(doc, "time")));
		source = str_of(doc, "source");
		assert_non_null(source);
		if (n == 0)
			assert_string_equal(str_of(doc, "event"), "listening");
		if (strcmp(source, "http") == 0) {
			assert_non_null(str_of(doc, "method"));
			assert_non_null(str_of(doc, "path"));
			assert_true(cJSON_IsNumber(cJSON_GetObjectItem(doc, "status")));
		}
		cJSON_Delete(doc);
	}
	free(log);
	assert_int_equal(logged("\"method\":\"POST\",\"path\":\"/lume/vms/ghost/stop\",\"status\":400",
	                     "\"body\":\"{\\\"x\\\":1}\"", NULL), 1);
}

static void set_fault(const char *json)
{
	expect("POST", "/_sim/fault", json, 200, "application/json", "");
}

/* POST /_sim/fault: the next N requests to /lume/ routes (all without a count) answer 500 with
 * Lume's message shape, or 200 with a body that is not JSON; the hooks themselves are spared. */
static void test_fault_hook(void **state)
{
	char *body;

	(void)state;
	set_fault("{\"mode\":\"500\",\"count\":2}");
	expect("GET", "/lume/vms", NULL, 500, "application/json", "lume-sim injected failure");
	expect("POST", "/_sim/vms/ghost/rekey", "", 400, "application/json", "not found"); /* not counted */
	expect("GET", "/lume/vms/vm1", NULL, 500, "application/json", "\"message\"");
	expect("GET", "/lume/vms/vm1", NULL, 200, "application/json", "\"vm1\"");
	set_fault("{\"mode\":\"garbage\"}");
	assert_int_equal(http("GET", "/lume/host/status", NULL, &body, NULL, 0), 200);
	assert_null(cJSON_Parse(body));
	free(body);
	assert_int_equal(http("GET", "/lume/vms", NULL, &body, NULL, 0), 200);
	assert_null(cJSON_Parse(body));
	free(body);
	set_fault("{\"mode\":\"none\"}");
	expect("GET", "/lume/vms", NULL, 200, "application/json", "vm1");
	expect("POST", "/_sim/fault", "{\"mode\":\"sometimes\"}", 400, "application/json", "unknown fault mode");
}

/* POST /_sim/vms/NAME/rekey: new host keys for the guest, used from its next start. */
static void test_rekey_hook(void **state)
{
	char *before, *after, *served;

	(void)state;
	run_vm("vm3");
	stop_vm("vm3");
	before = guest_file("vm3", "hostkeys/ssh_host_ed25519_key.pub");
	expect("POST", "/_sim/vms/vm3/rekey", "", 200, "application/json", "host keys replaced");
	expect("POST", "/_sim/vms/ghost/rekey", "", 400, "application/json", "Virtual machine not found: ghost");
	assert_int_equal(events("rekey", "vm3", NULL), 1);
	run_vm("vm3");
	after = guest_file("vm3", "hostkeys/ssh_host_ed25519_key.pub");
	assert_string_not_equal(before, after);
	/* What the running guest serves is the new key (ssh-keyscan, an independent client). */
	{
		char *argv[] = {"/usr/bin/ssh-keyscan", "-t", "ed25519", (char *)sim_fixture_address(&sim, "vm3"), NULL};
		static lm_test_result r;
		char *key = strchr(after, ' ');

		lm_test_run(&r, argv, NULL, NULL);
		assert_int_equal(r.status, 0);
		assert_non_null(key);
		key = strtok(key + 1, " \n"); /* the base64 of "type base64 comment" */
		served = r.out;
		lm_assert_contains(served, key);
	}
	free(before);
	free(after);
	stop_vm("vm3");
}

/* ---- the host level a VM starts with ------------------------------------------------------ */

static void write_pref(const char *value_xml)
{
	char *path = lm_test_join(prefs_dir, PREF_FILE), text[1024];

	if (value_xml == NULL) {
		unlink(path);
	} else {
		snprintf(text, sizeof(text), "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\">\n<dict>\n"
		    "\t<key>ForceUnrestrictedDeviceFeatureLevel</key>\n\t%s\n</dict>\n</plist>\n", value_xml);
		lm_test_write_text(path, text);
	}
	free(path);
}

/* The level the guest got at its last start ("unlocked" or "restricted"). */
static void assert_level(const char *vm, const char *level)
{
	char *got = guest_file(vm, "feature_level"), want[32];

	snprintf(want, sizeof(want), "%s\n", level);
	if (strcmp(got, want) != 0)
		fail_msg("%s started at the %.*s level, expected %s", vm, (int)strcspn(got, "\n"), got, level);
	free(got);
}

/* At every start the preference is read as CFPreferencesGetAppBooleanValue reads it; the guest
 * keeps that level until its next start, whatever the preference becomes meanwhile. */
static void test_host_level_read_at_start(void **state)
{
	static const struct {
		const char *xml;
		const char *level;
	} cases[] = {
		{"<true/>", "unlocked"}, {"<integer>1</integer>", "unlocked"}, {"<integer>-3</integer>", "unlocked"},
		{"<string>YES</string>", "unlocked"}, {"<string>true</string>", "unlocked"},
		{"<string>yes</string>", "unlocked"}, {"<false/>", "restricted"}, {"<integer>0</integer>", "restricted"},
		{"<real>0.5</real>", "unlocked"}, {"<string>no</string>", "restricted"}, {"<real>0</real>", "restricted"},
		{"<data>AQ==</data>", "restricted"}, {NULL, "restricted"},
	};
	char detail[64];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		write_pref(cases[i].xml);
		run_vm("vm1");
		assert_level("vm1", cases[i].level);
		snprintf(detail, sizeof(detail), "\"detail\":\"by the server; host level %s\"", cases[i].level);
		if (logged("\"event\":\"run\"", "\"vm\":\"vm1\"", detail) < 1)
			fail_msg("no run event with %s", detail);
		stop_vm("vm1");
	}
	/* Changed while the VM runs: nothing changes for it until it starts again. */
	write_pref("<true/>");
	run_vm("vm1");
	write_pref("<false/>");
	assert_level("vm1", "unlocked");
	stop_vm("vm1");
	run_vm("vm1");
	assert_level("vm1", "restricted");
	stop_vm("vm1");
	write_pref(NULL);
}

/* ---- how it ends ------------------------------------------------------------------------ */

/* SIGTERM, SIGINT and SIGHUP end it with status 0: every guest's sshd stopped and everything it
 * created removed. */
static void test_signals_end_it_cleanly(void **state)
{
	static const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
	char base[16];
	size_t i;

	(void)state;
	lm_test_address(base, 100); /* beside the group's simulator, in the test's own /24 */
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		const char *const args[] = {"--vm", "x", "--boot-delay", "0", "--stop-delay", "0", "--status-delay", "0",
			"--address-base", base, NULL};
		static sim_fixture other;
		char *simdir;
		int status;

		memset(&other, 0, sizeof(other));
		assert_int_equal(sim_fixture_start(&other, "sim-api-end", args), 0);
		{
			long st;
			char *body;

			assert_int_equal(sim_fixture_http(&other, "POST", "/lume/vms/x/run", "", &st, &body, NULL, 0), 0);
			free(body);
			assert_int_equal(st, 202);
		}
		/* Until its guest answers. */
		{
			int k;
			for (k = 0; k < 1200 && port22_closed(other.addresses[0]); k++)
				usleep(50 * 1000);
		}
		assert_real_sshd(other.addresses[0]);
		assert_int_equal(kill(other.pid, sigs[i]), 0);
		assert_int_equal(waitpid(other.pid, &status, 0), other.pid);
		other.pid = 0;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			fail_msg("signal %d: lume-sim ended with status %d", sigs[i], status);
		assert_true(port22_closed(other.addresses[0]));
		simdir = lm_test_join(other.dir, "sim");
		assert_false(lm_test_exists(simdir));
		free(simdir);
		assert_int_equal(sim_fixture_stop(&other), 0);
	}
}

/* ---- the delays (a simulator of their own: Lume's are seconds) ------------------------------ */

static sim_fixture slow;

static long slow_request(const char *method, const char *path, long client_timeout)
{
	long status = 0;
	char *body;
	int rc;

	slow.http_timeout = client_timeout;
	rc = sim_fixture_http(&slow, method, path, "", &status, &body, NULL, 0);
	free(body);
	return rc == -2 ? -2 : rc < 0 ? -1 : status;
}

static int slow_logged(const char *a, const char *b)
{
	const char *const needles[] = {a, b, NULL};
	return sim_fixture_count(&slow, needles);
}

/* POST stop sleeps after the VM is down (Lume's 5 s): with a delay of 10 s the request is not
 * answered within 3 s, yet the VM already reads stopped and its port is closed. The host status
 * takes the delay per running VM (Lume's nc check of each): at once with none running, not within
 * 3 s with one. Shown by a client timeout that fires (a lower bound the sleep guarantees), not by
 * a stopwatch. */
static void test_stop_and_status_delays(void **state)
{
	char base[16];
	const char *const args[] = {"--vm", "d1", "--boot-delay", "0", "--stop-delay", "10", "--status-delay", "10",
		"--address-base", base, NULL};
	int i;

	(void)state;
	lm_test_address(base, 120);
	memset(&slow, 0, sizeof(slow));
	assert_int_equal(sim_fixture_start(&slow, "sim-api-delays", args), 0);
	assert_int_equal(slow_request("GET", "/lume/host/status", 30), 200);
	assert_int_equal(slow_request("POST", "/lume/vms/d1/run", 30), 202);
	for (i = 0; i < 1200 && port22_closed(slow.addresses[0]); i++)
		usleep(50 * 1000);
	assert_real_sshd(slow.addresses[0]);
	assert_int_equal(slow_request("GET", "/lume/host/status", 3), -2);
	assert_int_equal(slow_request("POST", "/lume/vms/d1/stop", 3), -2);
	for (i = 0; i < 1200 && slow_logged("\"event\":\"stopped\"", "\"vm\":\"d1\"") == 0; i++)
		usleep(50 * 1000);
	assert_true(port22_closed(slow.addresses[0]));
	/* The request log has a request's line once it is answered: the stop's comes after its delay. */
	assert_int_equal(slow_logged("/lume/vms/d1/stop", "\"status\":200"), 0);
	for (i = 0; i < 1200 && (slow_logged("/lume/vms/d1/stop", "\"status\":200") == 0 ||
	                         slow_logged("/lume/host/status", "\"status\":200") < 2); i++)
		usleep(50 * 1000);
	assert_int_equal(sim_fixture_stop(&slow), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_api_on_127_0_0_1_only),
		cmocka_unit_test(test_unknown_routes_404_text),
		cmocka_unit_test(test_paths_routed_raw),
		cmocka_unit_test(test_config_locations),
		cmocka_unit_test(test_failures_400_message),
		cmocka_unit_test(test_list_every_key),
		cmocka_unit_test(test_get_one_object),
		cmocka_unit_test(test_pulling_vm),
		cmocka_unit_test(test_run_202_whatever_happens),
		cmocka_unit_test(test_run_body_checked),
		cmocka_unit_test(test_run_vnc_disabled),
		cmocka_unit_test(test_running_before_address),
		cmocka_unit_test(test_boot_gives_address_and_ssh),
		cmocka_unit_test(test_restart_keeps_lease_address),
		cmocka_unit_test(test_stop_blocks_until_down),
		cmocka_unit_test(test_host_status_document),
		cmocka_unit_test(test_max_running_two),
		cmocka_unit_test(test_server_holds_config_lock),
		cmocka_unit_test(test_clone),
		cmocka_unit_test(test_delete),
		cmocka_unit_test(test_request_log_lines),
		cmocka_unit_test(test_fault_hook),
		cmocka_unit_test(test_rekey_hook),
		cmocka_unit_test(test_host_level_read_at_start),
		cmocka_unit_test(test_signals_end_it_cleanly),
		cmocka_unit_test(test_stop_and_status_delays),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
