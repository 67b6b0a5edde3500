/* lume-sim: VMs made and removed while it runs, as Lume does for ephemeral CI VMs
 * (reference/lume.md, "Clone and delete"): a clone copies the source's VM directory -- in the
 * simulator the guest's disk (home) and its SSH host keys -- under a new name, with a new
 * `macAddress` and `machineIdentifier` in its config.json; a deleted VM is gone from every
 * listing, its files removed. One clone or delete at a time (store_lock). Slots are never reused
 * or moved: other threads keep pointers to VMs; a deleted one is only marked. */
#include "sim.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static void b64(const unsigned char *in, size_t n, char *out)
{
	static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t i, o = 0;

	for (i = 0; i + 2 < n; i += 3) {
		out[o++] = a[in[i] >> 2];
		out[o++] = a[((in[i] & 3) << 4) | (in[i + 1] >> 4)];
		out[o++] = a[((in[i + 1] & 15) << 2) | (in[i + 2] >> 6)];
		out[o++] = a[in[i + 2] & 63];
	}
	if (i < n) {
		out[o++] = a[in[i] >> 2];
		out[o++] = a[((in[i] & 3) << 4) | (i + 1 < n ? in[i + 1] >> 4 : 0)];
		out[o++] = i + 1 < n ? a[(in[i + 1] & 15) << 2] : '=';
		out[o++] = '=';
	}
	out[o] = '\0';
}

void sim_vm_new_identity(sim_vm *vm, long index)
{
	unsigned char id[24], mac[3];
	size_t i;

	if (index >= 0) {
		/* Fixed per startup index: the VMs given on the command line. */
		for (i = 0; i < sizeof(id); i++)
			id[i] = (unsigned char)(index * 131 + (long)i * 7);
		mac[0] = 0;
		mac[1] = (unsigned char)((unsigned long)index >> 8);
		mac[2] = (unsigned char)index;
	} else if (getrandom(id, sizeof(id), 0) != (ssize_t)sizeof(id) || getrandom(mac, sizeof(mac), 0) != 3) {
		memset(id, 0x5a, sizeof(id));
		memset(mac, 0x5a, sizeof(mac));
	}
	snprintf(vm->mac, sizeof(vm->mac), "7a:6d:5f:%02x:%02x:%02x", mac[0], mac[1], mac[2]);
	b64(id, sizeof(id), vm->machine_id);
}

int sim_lume_config_write(sim *s, sim_vm *vm)
{
	static const char *const empty[] = {"disk.img", "nvram.bin"};
	char dir[sizeof(s->home) + SIM_NAME_MAX + 2], path[sizeof(dir) + 16];
	cJSON *c = cJSON_CreateObject();
	size_t i;
	int rc, fd;

	snprintf(dir, sizeof(dir), "%s/%s", s->home, vm->name);
	snprintf(vm->config, sizeof(vm->config), "%s/config.json", dir);
	cJSON_AddStringToObject(c, "os", "macOS");
	cJSON_AddNumberToObject(c, "cpuCount", 4);
	cJSON_AddNumberToObject(c, "memorySize", 8589934592.0);
	cJSON_AddNumberToObject(c, "diskSize", 85899345920.0);
	cJSON_AddStringToObject(c, "macAddress", vm->mac);
	cJSON_AddStringToObject(c, "display", "1024x768");
	cJSON_AddStringToObject(c, "hardwareModel", "YnBsaXN0MDDTAQIDBAUGXxAZRGF0YVJlcHJlc2VudGF0aW9uVmVyc2lvbg==");
	cJSON_AddStringToObject(c, "machineIdentifier", vm->machine_id);
	rc = lm_test_mkdir_p(dir, 0755) < 0 ? -1 : sim_write_json_file(vm->config, c);
	cJSON_Delete(c);
	/* Lume takes a directory for a VM when it holds config.json, disk.img and nvram.bin
	 * (VMDirectory.initialized(), trycua/cua libs/lume 0.5.3): the simulator's VMs have all three
	 * (the guest's files are in vm->dir; these two stand for Lume's, empty). */
	for (i = 0; rc == 0 && i < sizeof(empty) / sizeof(empty[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, empty[i]);
		if ((fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) < 0)
			rc = -1;
		else
			close(fd);
	}
	if (rc < 0)
		fprintf(stderr, "lume-sim: cannot write %s's files in %s: %s\n", vm->name, dir, strerror(errno));
	return rc;
}

int sim_address_free(const char *address)
{
	struct sockaddr_in sa;
	int fd, one = 1, ok, err;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(22);
	if (inet_pton(AF_INET, address, &sa.sin_addr) != 1)
		return 0;
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	ok = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	err = errno;
	close(fd);
	if (!ok && err != EADDRINUSE && err != EADDRNOTAVAIL) {
		errno = err;
		return -1;
	}
	return ok;
}

/* The lowest address from the base that no VM that exists holds and sshd can bind (a deleted
 * VM's is free again). Caller holds store_lock. */
static int take_address(sim *s, char out[16])
{
	uint32_t h = s->address_base;
	size_t i;

	for (; (h >> 24) == 127; h++) {
		struct in_addr cand;
		int used = 0;
		if ((h & 0xff) == 0 || (h & 0xff) == 255 || h == 0x7f000001u)
			continue;
		cand.s_addr = htonl(h);
		inet_ntop(AF_INET, &cand, out, 16);
		for (i = 0; i < s->nvms && !used; i++)
			used = !s->vms[i].deleted && strcmp(s->vms[i].address, out) == 0;
		if (!used && sim_address_free(out) == 1)
			return 0;
	}
	return -1;
}

/* The VM `name` of manager `mgr` that exists, or NULL. */
static sim_vm *find_of(sim *s, sim_manager mgr, const char *name)
{
	sim_vm *vm = sim_vm_find(s, name);

	return vm != NULL && vm->manager == mgr ? vm : NULL;
}

/* Copy what a VM's directory holds (its disk, its host keys) into a new one: cp -a, no shell. */
static int copy_disk(sim *s, sim_vm *src, sim_vm *dst)
{
	static const char *const parts[] = {"hostkeys", "home", "usr-local-bin", "opt", "usr-local-lib"};
	char from[PATH_MAX + 32], err[512];
	size_t i;
	struct stat st;

	if (stat(src->dir, &st) == 0 && access(src->dir, F_OK) == 0) {
		snprintf(from, sizeof(from), "%s/hostkeys", src->dir);
		/* A source that never ran has no keys yet: it gets its own now, and the clone a copy. */
		if (stat(from, &st) != 0 && sim_vm_rekey(s, src) < 0)
			return -1;
	}
	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		const char *argv[] = {"/bin/cp", "-a", from, dst->dir, NULL};
		snprintf(from, sizeof(from), "%s/%s", src->dir, parts[i]);
		if (stat(from, &st) != 0)
			continue;
		if (sim_spawn_wait((char *const *)argv, 120, NULL, 0, err, sizeof(err)) != 0) {
			fprintf(stderr, "lume-sim: cp -a %s %s: %s\n", from, dst->dir, err);
			return -1;
		}
	}
	return 0;
}

int sim_vm_clone(sim *s, sim_manager mgr, const char *src_name, const char *dst_name, char *why, size_t cap)
{
	sim_vm *src, *dst;
	int running, rc = -1;

	pthread_mutex_lock(&s->store_lock);
	if ((src = find_of(s, mgr, src_name)) == NULL) {
		snprintf(why, cap, "Virtual machine not found: %s", src_name);
		goto out;
	}
	if (!sim_vm_name_ok(dst_name)) {
		snprintf(why, cap, "Invalid VM name: %s", dst_name);
		goto out;
	}
	if (sim_vm_find(s, dst_name) != NULL) {
		snprintf(why, cap, "Virtual machine already exists: %s", dst_name);
		goto out;
	}
	pthread_mutex_lock(&s->lock);
	running = src->running;
	pthread_mutex_unlock(&s->lock);
	if (running) {
		snprintf(why, cap, "Virtual machine already running: %s", src_name);
		goto out;
	}
	if (s->nvms == s->cap) {
		snprintf(why, cap, "lume-sim: no room for another VM (%zu at most)", s->cap);
		goto out;
	}
	dst = &s->vms[s->nvms];
	memset(dst, 0, sizeof(*dst));
	snprintf(dst->name, sizeof(dst->name), "%s", dst_name);
	snprintf(dst->dir, sizeof(dst->dir), "%s/vms/%s.%zu", s->dir, dst_name, s->nvms);
	dst->metal_dir = src->metal_dir;
	dst->metal_defects = src->metal_defects;
	dst->stock_kernels = src->stock_kernels;
	dst->manager = mgr;
	dst->boot_at = -1;
	dst->lock_fd = -1;
	dst->vnc_port = 59000 + (int)s->nvms;
	pthread_mutex_init(&dst->op_lock, NULL);
	sim_vm_new_identity(dst, -1);
	if (take_address(s, dst->address) < 0) {
		snprintf(why, cap, "lume-sim: no free loopback address for %s", dst_name);
		goto out;
	}
	if (lm_test_mkdir_p(dst->dir, 0755) < 0 || copy_disk(s, src, dst) < 0 ||
	    (mgr == SIM_MGR_LUME ? sim_lume_config_write(s, dst) : sim_managers_clone(s, src, dst, s->nvms)) < 0) {
		snprintf(why, cap, "lume-sim: cannot write %s's files", dst_name);
		lm_test_rmtree(dst->dir);
		goto out;
	}
	/* Published last: every field is set before another thread can see the slot. */
	s->nvms = s->nvms + 1;
	sim_log_event(s, "clone", dst_name, src_name);
	rc = 0;
out:
	pthread_mutex_unlock(&s->store_lock);
	return rc;
}

int sim_vm_delete(sim *s, sim_manager mgr, const char *name, char *why, size_t cap)
{
	char dir[PATH_MAX];
	sim_vm *vm;
	int running, rc = -1;

	pthread_mutex_lock(&s->store_lock);
	if ((vm = find_of(s, mgr, name)) == NULL) {
		snprintf(why, cap, "Virtual machine not found: %s", name);
		goto out;
	}
	pthread_mutex_lock(&s->lock);
	running = vm->running;
	if (!running)
		vm->deleted = 1;
	pthread_mutex_unlock(&s->lock);
	if (running) {
		snprintf(why, cap, "Virtual machine already running: %s", name);
		goto out;
	}
	/* The manager's files: Lume's ~/.lume/NAME, Tart's vms/NAME, UTM's NAME.utm. */
	snprintf(dir, sizeof(dir), "%s", vm->config);
	if (strrchr(dir, '/') != NULL)
		*strrchr(dir, '/') = '\0';
	lm_test_rmtree(dir);
	lm_test_rmtree(vm->dir);
	sim_log_event(s, "delete", name, NULL);
	rc = 0;
out:
	pthread_mutex_unlock(&s->store_lock);
	return rc;
}
