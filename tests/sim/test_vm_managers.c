/* The Tart, UTM, none and automatic backends against lume-sim's `tart` and `utmctl` stand-ins
 * (real sshd guests; docs/vm-managers.md). */
#include "test_common.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

static test_env env;
static char bin_dir[PATH_MAX];
static char tart_home[PATH_MAX + 32];
static char home[PATH_MAX + 16];

static int group_setup(void **state)
{
	static const char *const args[] = {"--vm", "lvm", "--tart-vm", "tvm", "--tart-vm", "tvm2", "--utm-vm", "uvm",
		"--utm-headless", "uhead", "--boot-delay", "0.2", "--stop-delay", "0.1", "--utm-request-delay", "0.1", NULL};
	char docs[PATH_MAX + 128], target[PATH_MAX + 32], *slash;

	(void)state;
	if (sim_fixture_start(&env.sim, "vm-managers", args) < 0)
		return -1;
	snprintf(bin_dir, sizeof(bin_dir), "%s", env.sim.lume);
	if ((slash = strrchr(bin_dir, '/')) != NULL)
		*slash = '\0';
	/* Tart's home and UTM's Documents, where the host looks for them. */
	snprintf(tart_home, sizeof(tart_home), "%s/sim/tart", env.sim.dir);
	setenv("TART_HOME", tart_home, 1);
	snprintf(home, sizeof(home), "%s/home", env.sim.dir);
	setenv("HOME", home, 1);
	snprintf(docs, sizeof(docs), "%s/Library/Containers/com.utmapp.UTM/Data", home);
	if (lm_test_mkdir_p(docs, 0755) < 0)
		return -1;
	snprintf(target, sizeof(target), "%s/sim/utm", env.sim.dir);
	strncat(docs, "/Documents", sizeof(docs) - strlen(docs) - 1);
	return symlink(target, docs);
}

static int group_teardown(void **state)
{
	(void)state;
	return sim_fixture_stop(&env.sim);
}

static lm_vm_manager *open_kind(lm_context **ctx, lm_vm_manager_kind kind, const char *address)
{
	lm_options o;
	char tart[PATH_MAX + 8], utmctl[PATH_MAX + 8];
	lm_vm_manager *vmm = NULL;

	assert_int_equal(lm_options_init(&o, LM_OPTIONS_VERSION), 0);
	snprintf(env.state_dir, sizeof(env.state_dir), "%s/state", env.sim.dir);
	snprintf(tart, sizeof(tart), "%s/tart", bin_dir);
	snprintf(utmctl, sizeof(utmctl), "%s/utmctl", bin_dir);
	o.state_dir = env.state_dir;
	o.vm_manager = kind;
	o.lume_url = env.sim.url;
	o.lume_program = env.sim.lume;
	o.tart_program = tart;
	o.utmctl_program = utmctl;
	o.vm_address = address;
	o.ready_timeout = 20;
	o.command_timeout = 20;
	o.connect_timeout = 5;
	lm_assert_ok(lm_context_new(ctx, &o));
	lm_assert_ok(lm_vm_manager_open(&vmm, *ctx));
	return vmm;
}

static int calls(const char *source, const char *argv_json)
{
	char s[64];
	const char *const needles[] = {s, argv_json, NULL};

	snprintf(s, sizeof(s), "\"source\":\"%s\"", source);
	return sim_fixture_count(&env.sim, needles);
}

static void test_tart_list_get_unknown(void **state)
{
	lm_context *ctx;
	lm_vm_manager *vmm = open_kind(&ctx, LM_VM_MANAGER_TART, NULL);
	lm_vm_info *vms = NULL, info;
	size_t n = 0;

	(void)state;
	assert_string_equal(lm_vm_manager_name(vmm), "tart");
	lm_assert_ok(lm_vm_list(vmm, &vms, &n));
	assert_int_equal(n, 2); /* Tart's own store only: not Lume's or UTM's VMs */
	assert_string_equal(vms[0].name, "tvm");
	assert_string_equal(vms[1].name, "tvm2");
	assert_string_equal(vms[0].status, "stopped");
	assert_string_equal(vms[0].manager, "tart");
	assert_string_equal(vms[0].account, "admin");
	lm_free(vms);
	lm_assert_ok(lm_vm_get(vmm, "tvm", &info));
	assert_string_equal(info.os, "macOS");
	assert_string_equal(info.ip, "");
	lm_assert_fails(lm_vm_get(vmm, "nope", &info), LM_ENOTFOUND);
	lm_assert_error_has("Tart has no such VM");
	lm_assert_error_has("the specified VM \"nope\" does not exist (exit 2)");
	lm_assert_fails(lm_vm_start(vmm, "nope"), LM_ENOTFOUND);
	assert_int_equal(calls("tart", "\"argv\":[\"run\""), 0);
	lm_vm_manager_free(vmm);
	lm_context_free(ctx);
}

static void test_tart_start_ready_stop(void **state)
{
	lm_context *ctx;
	lm_vm_manager *vmm = open_kind(&ctx, LM_VM_MANAGER_TART, NULL);
	const char *address = sim_fixture_address(&env.sim, "tvm");
	char log[PATH_MAX + 64];
	struct stat st;
	lm_vm_info info;

	(void)state;
	lm_assert_ok(lm_vm_start(vmm, "tvm"));
	lm_assert_ok(lm_vm_wait_ready(vmm, "tvm", 0, &info));
	assert_string_equal(info.ip, address);
	assert_string_equal(info.status, "running");
	assert_real_sshd(address);
	/* `tart run` blocks: its output goes to a log under the state directory. */
	snprintf(log, sizeof(log), "%s/logs/tart-run-tvm.log", env.state_dir);
	assert_int_equal(stat(log, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_true(calls("tart", "\"argv\":[\"ip\",\"tvm\",\"--wait\",\"1\"]") >= 1);
	/* Running: never started again. */
	lm_assert_ok(lm_vm_start(vmm, "tvm"));
	lm_assert_ok(lm_vm_stop(vmm, "tvm"));
	assert_true(calls("tart", "\"argv\":[\"stop\",\"tvm\",\"--timeout\",\"20\"],\"exit\":0") == 1);
	lm_assert_ok(lm_vm_get(vmm, "tvm", &info));
	assert_string_equal(info.status, "stopped");
	assert_true(port22_closed(address));
	/* its `tart run` ended with exit 0 after powering the guest off (recorded when it ends) */
	assert_int_equal(calls("tart", "\"argv\":[\"run\",\"--no-graphics\",\"tvm\"],\"exit\":0"), 1);
	/* A stopped VM: nothing to stop, nothing sent. */
	lm_assert_ok(lm_vm_stop(vmm, "tvm"));
	assert_int_equal(calls("tart", "\"argv\":[\"stop\",\"tvm\""), 1);
	lm_vm_manager_free(vmm);
	lm_context_free(ctx);
}

/* Another process holds tvm2's config.json lock (as a `tart run` does): it is running, and no
 * `tart run` is ever sent for it. */
static void test_tart_lock_held(void **state)
{
	lm_context *ctx;
	lm_vm_manager *vmm;
	char path[PATH_MAX + 64];
	int ready[2], status;
	lm_vm_info info;
	pid_t pid;

	(void)state;
	snprintf(path, sizeof(path), "%s/vms/tvm2/config.json", tart_home);
	assert_int_equal(pipe(ready), 0);
	if ((pid = fork()) == 0) {
		struct flock fl;
		int fd = open(path, O_RDWR);
		memset(&fl, 0, sizeof(fl));
		fl.l_type = F_WRLCK;
		fl.l_whence = SEEK_SET;
		if (fd < 0 || fcntl(fd, F_SETLK, &fl) < 0)
			_exit(1);
		if (write(ready[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(ready[1]);
	assert_int_equal(read(ready[0], path, 1), 1); /* the lock is held */
	close(ready[0]);
	vmm = open_kind(&ctx, LM_VM_MANAGER_TART, NULL);
	lm_assert_ok(lm_vm_get(vmm, "tvm2", &info));
	assert_string_equal(info.status, "running");
	lm_assert_ok(lm_vm_start(vmm, "tvm2"));
	assert_int_equal(calls("tart", "\"argv\":[\"run\",\"--no-graphics\",\"tvm2\"]"), 0);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	lm_assert_ok(lm_vm_get(vmm, "tvm2", &info));
	assert_string_equal(info.status, "stopped");
	lm_vm_manager_free(vmm);
	lm_context_free(ctx);
}

static void test_utm_list_start_stop(void **state)
{
	lm_context *ctx;
	lm_vm_manager *vmm = open_kind(&ctx, LM_VM_MANAGER_UTM, NULL);
	const char *address = sim_fixture_address(&env.sim, "uvm");
	lm_vm_info *vms = NULL, info;
	size_t n = 0;

	(void)state;
	lm_assert_ok(lm_vm_list(vmm, &vms, &n));
	assert_int_equal(n, 2);
	assert_string_equal(vms[0].name, "uvm");
	assert_string_equal(vms[1].name, "uhead");
	assert_string_equal(vms[0].status, "stopped");
	lm_free(vms);
	lm_assert_fails(lm_vm_get(vmm, "lvm", &info), LM_ENOTFOUND);
	lm_assert_error_has("UTM has no such VM");
	/* No display configured: no paravirtual GPU; refused before anything is started. */
	lm_assert_fails(lm_vm_start(vmm, "uhead"), LM_ERROR);
	lm_assert_error_has("no display configured");
	lm_assert_error_has("uhead.utm/config.plist");
	assert_int_equal(calls("utmctl", "\"argv\":[\"start\",\"uhead\"]"), 0);
	lm_assert_ok(lm_vm_start(vmm, "uvm"));
	lm_assert_ok(lm_vm_wait_ready(vmm, "uvm", 0, &info));
	assert_string_equal(info.ip, address);
	assert_real_sshd(address);
	/* A clean shutdown first; this guest obeys, so no power-off. */
	lm_assert_ok(lm_vm_stop(vmm, "uvm"));
	assert_int_equal(calls("utmctl", "\"argv\":[\"stop\",\"uvm\",\"--request\"]"), 1);
	assert_int_equal(calls("utmctl", "\"argv\":[\"stop\",\"uvm\",\"--force\"]"), 0);
	assert_true(port22_closed(address));
	lm_vm_manager_free(vmm);
	lm_context_free(ctx);
}

static void test_none(void **state)
{
	const char *address = sim_fixture_address(&env.sim, "lvm");
	lm_context *ctx;
	lm_vm_manager *vmm = open_kind(&ctx, LM_VM_MANAGER_NONE, address);
	lm_vm_info info;

	(void)state;
	assert_string_equal(lm_vm_manager_name(vmm), "none");
	lm_assert_ok(lm_vm_manager_can_start(vmm));
	lm_assert_ok(lm_vm_get(vmm, "whatever", &info));
	assert_string_equal(info.status, "unreachable");
	assert_string_equal(info.ip, address);
	lm_assert_fails(lm_vm_start(vmm, "whatever"), LM_ERROR);
	lm_assert_error_has("start it yourself");
	lm_vm_manager_free(vmm);
	lm_context_free(ctx);
	/* An address is required, and must be one. */
	{
		lm_options o;
		assert_int_equal(lm_options_init(&o, LM_OPTIONS_VERSION), 0);
		o.vm_manager = LM_VM_MANAGER_NONE;
		o.state_dir = env.state_dir;
		o.vm_address = "my-vm.local";
		lm_assert_ok(lm_context_new(&ctx, &o));
		lm_assert_fails(lm_vm_manager_open(&vmm, ctx), LM_EINVALID);
		lm_assert_error_has("not an IPv4 address");
		lm_context_free(ctx);
		o.vm_address = NULL;
		lm_assert_ok(lm_context_new(&ctx, &o));
		lm_assert_fails(lm_vm_manager_open(&vmm, ctx), LM_ENOADDRESS);
		assert_string_equal(lm_error_name(LM_ENOADDRESS), "no-address");
		lm_context_free(ctx);
	}
}

/* Automatic: each name with the manager that knows it; a name two know is an error. */
static void test_auto_choice_and_ambiguity(void **state)
{
	char *path = getenv("PATH") != NULL ? strdup(getenv("PATH")) : NULL, newpath[PATH_MAX * 2], dir[PATH_MAX + 64];
	lm_context *ctx;
	lm_vm_manager *vmm;
	lm_vm_info info;
	int fd;

	(void)state;
	snprintf(newpath, sizeof(newpath), "%s:%s", bin_dir, path != NULL ? path : "/usr/bin:/bin");
	setenv("PATH", newpath, 1);
	vmm = open_kind(&ctx, LM_VM_MANAGER_AUTO, NULL);
	assert_string_equal(lm_vm_manager_name(vmm), "auto");
	lm_assert_ok(lm_vm_get(vmm, "lvm", &info));
	assert_string_equal(info.manager, "lume-api");
	lm_assert_ok(lm_vm_get(vmm, "tvm", &info));
	assert_string_equal(info.manager, "tart");
	assert_string_equal(info.account, "admin");
	lm_assert_ok(lm_vm_get(vmm, "uvm", &info));
	assert_string_equal(info.manager, "utm");
	assert_string_equal(lm_vm_manager_name_for(vmm, "tvm"), "tart");
	assert_string_equal(lm_vm_manager_name_for(vmm, "other"), "auto");
	/* Each VM's manager tells its version as its program does: Lume's API by `lume --version`
	 * (its server says 1.0.0 whatever it is), Tart by `tart --version`, UTM by `utmctl version`. */
	{
		char version[64];
		lm_assert_ok(lm_vm_manager_version(vmm, "lvm", version, sizeof(version)));
		assert_string_equal(version, "0.5.3"); /* the simulator's SIM_VERSION */
		lm_assert_ok(lm_vm_manager_version(vmm, "tvm", version, sizeof(version)));
		assert_string_equal(version, "2.28.0");
		lm_assert_ok(lm_vm_manager_version(vmm, "uvm", version, sizeof(version)));
		assert_string_equal(version, "5.0.3");
		lm_assert_fails(lm_vm_manager_version(vmm, "other", version, sizeof(version)), LM_ENOTFOUND);
		lm_assert_error_has("no VM manager is known for other yet");
		lm_assert_ok(lm_vm_manager_versions(vmm, version, sizeof(version)));
		assert_string_equal(version, "lume-api 0.5.3, tart 2.28.0, utm 5.0.3");
	}
	lm_assert_fails(lm_vm_get(vmm, "nope", &info), LM_ENOTFOUND);
	lm_assert_error_has("no VM manager knows this VM (asked: lume-api, tart, utm)");
	lm_vm_manager_free(vmm);
	lm_context_free(ctx);

	/* lvm in Tart's store too */
	snprintf(dir, sizeof(dir), "%s/vms/lvm", tart_home);
	assert_int_equal(lm_test_mkdir_p(dir, 0755), 0);
	strncat(dir, "/config.json", sizeof(dir) - strlen(dir) - 1);
	assert_true((fd = open(dir, O_WRONLY | O_CREAT, 0644)) >= 0);
	assert_int_equal(write(fd, "{}", 2), 2);
	close(fd);
	snprintf(dir, sizeof(dir), "%s/vms/lvm/disk.img", tart_home);
	close(open(dir, O_WRONLY | O_CREAT, 0644));
	snprintf(dir, sizeof(dir), "%s/vms/lvm/nvram.bin", tart_home);
	close(open(dir, O_WRONLY | O_CREAT, 0644));
	vmm = open_kind(&ctx, LM_VM_MANAGER_AUTO, NULL);
	lm_assert_fails(lm_vm_get(vmm, "lvm", &info), LM_EAMBIGUOUS);
	lm_assert_error_has("more than one VM manager has a VM of this name (lume-api and tart)");
	lm_assert_fails(lm_vm_start(vmm, "lvm"), LM_EAMBIGUOUS);
	lm_vm_manager_free(vmm);
	lm_context_free(ctx);
	if (path != NULL)
		setenv("PATH", path, 1);
	free(path);
}

/* Tart's stacked layout (openai/tart 16d186c, VMDirectory.swift Layout.stackedLocal;
 * reference/vm-managers-and-bench.md, 2026-12-06): config.json, nvram.bin, manifest.json and
 * overlay.asif, no disk.img, is a VM; without its overlay it is not. */
static void test_tart_stacked_layout(void **state)
{
	static const char *const files[] = {"nvram.bin", "manifest.json", "overlay.asif"};
	char dir[PATH_MAX + 64], *path, *config;
	lm_context *ctx;
	lm_vm_manager *vmm;
	lm_vm_info info;
	size_t i, len;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/vms/tvm/config.json", tart_home);
	assert_non_null(config = lm_test_slurp(dir, &len));
	snprintf(dir, sizeof(dir), "%s/vms/stacked", tart_home);
	assert_int_equal(lm_test_mkdir_p(dir, 0755), 0);
	path = lm_test_join(dir, "config.json");
	lm_test_write(path, config, len);
	free(path);
	free(config);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		path = lm_test_join(dir, files[i]);
		lm_test_write_text(path, "{}");
		free(path);
	}
	vmm = open_kind(&ctx, LM_VM_MANAGER_TART, NULL);
	lm_assert_ok(lm_vm_get(vmm, "stacked", &info));
	assert_string_equal(info.status, "stopped");
	assert_string_equal(info.manager, "tart");
	path = lm_test_join(dir, "overlay.asif");
	assert_int_equal(unlink(path), 0);
	free(path);
	lm_assert_fails(lm_vm_get(vmm, "stacked", &info), LM_ENOTFOUND);
	lm_vm_manager_free(vmm);
	lm_context_free(ctx);
	assert_int_equal(lm_test_rmtree(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tart_list_get_unknown),
		cmocka_unit_test(test_tart_start_ready_stop),
		cmocka_unit_test(test_tart_lock_held),
		cmocka_unit_test(test_utm_list_start_stop),
		cmocka_unit_test(test_none),
		cmocka_unit_test(test_auto_choice_and_ambiguity),
		cmocka_unit_test(test_tart_stacked_layout),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
