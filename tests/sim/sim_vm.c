/* lume-sim: the simulated VMs. Each one is a real sshd (the guest fixture) on its own loopback
 * address, started when the boot delay after a run is over and stopped by a stop. */
#include "sim.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define SIM_GUEST_TIMEOUT 60.0

sim_vm *sim_vm_find(sim *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->nvms; i++)
		if (strcmp(s->vms[i].name, name) == 0)
			return &s->vms[i];
	return NULL;
}

/* guest-sshd COMMAND --dir DIR [more...]; logs a failure. Caller holds vm->op_lock. */
static int guest(sim *s, sim_vm *vm, const char *command, const char *const extra[])
{
	const char *argv[24];
	char out[256], err[1024];
	size_t n = 0, i;
	int rc;

	argv[n++] = s->guest;
	argv[n++] = command;
	argv[n++] = "--dir";
	argv[n++] = vm->dir;
	for (i = 0; extra != NULL && extra[i] != NULL && n < 23; i++)
		argv[n++] = extra[i];
	argv[n] = NULL;
	rc = sim_spawn_wait((char *const *)argv, SIM_GUEST_TIMEOUT, out, sizeof(out), err, sizeof(err));
	if (rc != 0) {
		char detail[1400];
		snprintf(detail, sizeof(detail), "guest-sshd %s failed (status %d): %s", command, rc, err);
		fprintf(stderr, "lume-sim: %s: %s\n", vm->name, detail);
		sim_log_event(s, "guest-failed", vm->name, detail);
		return -1;
	}
	return 0;
}

static void boot(sim *s, sim_vm *vm, unsigned generation)
{
	char boot_time[32];
	const char *extra[16];
	size_t n = 0;
	int current;

	pthread_mutex_lock(&vm->op_lock);
	pthread_mutex_lock(&s->lock);
	current = vm->running && vm->generation == generation;
	pthread_mutex_unlock(&s->lock);
	if (!current) {
		pthread_mutex_unlock(&vm->op_lock);
		return;
	}
	if (!vm->sshd_up) {
		/* The guest's kern.boottime: now, to the microsecond as macOS reports it. */
		snprintf(boot_time, sizeof(boot_time), "%.6f", sim_epoch());
		extra[n++] = "--address";
		extra[n++] = vm->address;
		extra[n++] = "--port";
		extra[n++] = "22";
		extra[n++] = "--boot-time";
		extra[n++] = boot_time;
		if (s->os_version != NULL) {
			extra[n++] = "--os-version";
			extra[n++] = s->os_version;
		}
		if (vm->metal_dir != NULL) {
			extra[n++] = "--metal-dir";
			extra[n++] = vm->metal_dir;
		}
		if (s->home_size != NULL) {
			extra[n++] = "--home-size";
			extra[n++] = s->home_size;
		}
		extra[n] = NULL;
		if (guest(s, vm, "start", extra) == 0) {
			vm->sshd_up = 1;
			sim_log_event(s, "boot", vm->name, boot_time);
		}
	}
	pthread_mutex_lock(&s->lock);
	if (vm->running && vm->generation == generation && vm->sshd_up)
		vm->booted = 1;
	pthread_mutex_unlock(&s->lock);
	pthread_mutex_unlock(&vm->op_lock);
}

void *sim_supervisor(void *arg)
{
	sim *s = arg;
	struct timespec until;
	size_t i;

	pthread_mutex_lock(&s->lock);
	while (!s->stopping) {
		for (i = 0; i < s->nvms; i++) {
			sim_vm *vm = &s->vms[i];
			unsigned gen;
			if (!vm->running || vm->booted || vm->never_ready || vm->boot_at < 0 || sim_now() < vm->boot_at)
				continue;
			vm->boot_at = -1; /* one boot per run */
			gen = vm->generation;
			pthread_mutex_unlock(&s->lock);
			boot(s, vm, gen);
			pthread_mutex_lock(&s->lock);
		}
		if (s->parent > 0 && getppid() != s->parent) {
			/* the test that started us is gone: stop as on SIGTERM, once */
			s->parent = 0;
			kill(getpid(), SIGTERM);
		}
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 20 * 1000 * 1000;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&s->wake, &s->lock, &until);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

void sim_vm_run(sim *s, sim_vm *vm)
{
	size_t i, running = 0;

	pthread_mutex_lock(&s->lock);
	if (vm->running) {
		pthread_mutex_unlock(&s->lock);
		sim_log_event(s, "start-failed", vm->name, "Virtual machine already running");
		return;
	}
	for (i = 0; i < s->nvms; i++)
		running += s->vms[i].running ? 1 : 0;
	if ((int)running >= s->max_running) {
		pthread_mutex_unlock(&s->lock);
		sim_log_event(s, "start-failed", vm->name, "the host runs the maximum number of macOS VMs already");
		return;
	}
	vm->running = 1;
	vm->booted = 0;
	vm->generation++;
	vm->boot_at = sim_now() + s->boot_delay;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	sim_log_event(s, "run", vm->name, NULL);
}

int sim_vm_stop(sim *s, sim_vm *vm)
{
	pthread_mutex_lock(&s->lock);
	if (!vm->running) {
		pthread_mutex_unlock(&s->lock);
		return -1;
	}
	vm->running = 0;
	vm->booted = 0;
	vm->boot_at = -1;
	vm->generation++;
	pthread_mutex_unlock(&s->lock);
	pthread_mutex_lock(&vm->op_lock);
	if (vm->sshd_up && guest(s, vm, "stop", NULL) == 0)
		vm->sshd_up = 0;
	pthread_mutex_unlock(&vm->op_lock);
	sim_log_event(s, "stopped", vm->name, NULL);
	return 0;
}

void sim_vm_stop_all(sim *s)
{
	size_t i;

	for (i = 0; i < s->nvms; i++) {
		sim_vm *vm = &s->vms[i];
		pthread_mutex_lock(&s->lock);
		vm->running = 0;
		vm->booted = 0;
		vm->generation++;
		pthread_mutex_unlock(&s->lock);
		pthread_mutex_lock(&vm->op_lock);
		if (vm->sshd_up && guest(s, vm, "stop", NULL) == 0)
			vm->sshd_up = 0;
		pthread_mutex_unlock(&vm->op_lock);
	}
}

int sim_vm_rekey(sim *s, sim_vm *vm)
{
	int rc;

	pthread_mutex_lock(&vm->op_lock);
	rc = guest(s, vm, "rekey", NULL);
	pthread_mutex_unlock(&vm->op_lock);
	if (rc == 0)
		sim_log_event(s, "rekey", vm->name, NULL);
	return rc;
}

int sim_tcp_probe(const char *address, int port, double timeout)
{
	struct sockaddr_in sa;
	struct pollfd p;
	int fd, err = 0, ok = 0;
	socklen_t len = sizeof(err);

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((unsigned short)port);
	if (inet_pton(AF_INET, address, &sa.sin_addr) != 1)
		return 0;
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0)
		return 0;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		ok = 1;
	else if (errno == EINPROGRESS) {
		p.fd = fd;
		p.events = POLLOUT;
		if (poll(&p, 1, (int)(timeout * 1000)) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 &&
		    err == 0)
			ok = 1;
	}
	close(fd);
	return ok;
}

static cJSON *vm_object(sim *s, sim_vm *vm)
{
	cJSON *o = cJSON_CreateObject(), *disk;
	int running, booted;

	pthread_mutex_lock(&s->lock);
	running = vm->running;
	booted = vm->booted;
	pthread_mutex_unlock(&s->lock);
	/* Every key is always present, null when unknown, as Lume does. */
	cJSON_AddStringToObject(o, "name", vm->name);
	cJSON_AddStringToObject(o, "os", "macOS");
	cJSON_AddStringToObject(o, "status", running ? "running" : "stopped");
	cJSON_AddNumberToObject(o, "cpuCount", 4);
	cJSON_AddNumberToObject(o, "memorySize", 8589934592.0);
	disk = cJSON_AddObjectToObject(o, "diskSize");
	cJSON_AddNumberToObject(disk, "allocated", 21474836480.0);
	cJSON_AddNumberToObject(disk, "total", 85899345920.0);
	cJSON_AddStringToObject(o, "display", "1024x768");
	cJSON_AddNullToObject(o, "provisioningOperation");
	cJSON_AddNullToObject(o, "vncUrl");
	if (booted)
		cJSON_AddStringToObject(o, "ipAddress", vm->address);
	else
		cJSON_AddNullToObject(o, "ipAddress");
	if (!running)
		cJSON_AddNullToObject(o, "sshAvailable");
	else /* Lume's own check: a 2-second TCP connect to port 22 */
		cJSON_AddBoolToObject(o, "sshAvailable", booted && sim_tcp_probe(vm->address, 22, 2.0));
	cJSON_AddStringToObject(o, "locationName", "default");
	cJSON_AddNullToObject(o, "sharedDirectories");
	cJSON_AddStringToObject(o, "networkMode", "nat");
	cJSON_AddNullToObject(o, "downloadProgress");
	return o;
}

char *sim_vm_json(sim *s, sim_vm *vm)
{
	cJSON *o = vm_object(s, vm);
	char *text = cJSON_Print(o);

	cJSON_Delete(o);
	return text;
}

char *sim_vms_json(sim *s)
{
	cJSON *a = cJSON_CreateArray();
	char *text;
	size_t i;

	for (i = 0; i < s->nvms; i++)
		cJSON_AddItemToArray(a, vm_object(s, &s->vms[i]));
	text = cJSON_Print(a);
	cJSON_Delete(a);
	return text;
}
