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
#include <sys/file.h>
#include <sys/socket.h>
#include <unistd.h>

#define SIM_GUEST_TIMEOUT 60.0

static void wait_down(sim *s, sim_vm *vm);

sim_vm *sim_lume_vm_find(sim *s, const char *name)
{
	sim_vm *vm = sim_vm_find(s, name);

	return vm != NULL && vm->manager == SIM_MGR_LUME ? vm : NULL;
}

sim_vm *sim_vm_find(sim *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->nvms; i++)
		if (!s->vms[i].deleted && strcmp(s->vms[i].name, name) == 0)
			return &s->vms[i];
	return NULL;
}

const sim_pull *sim_pull_find(const sim *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->npulls; i++)
		if (strcmp(s->pulls[i].name, name) == 0)
			return &s->pulls[i];
	return NULL;
}

/* guest-sshd COMMAND --dir DIR [more...]; logs a failure. Caller holds vm->op_lock. */
static int guest(sim *s, sim_vm *vm, const char *command, const char *const extra[])
{
	const char *argv[32];
	char out[256], err[1024];
	size_t n = 0, i;
	int rc;

	argv[n++] = s->guest;
	argv[n++] = command;
	argv[n++] = "--dir";
	argv[n++] = vm->dir;
	for (i = 0; extra != NULL && extra[i] != NULL && n < 31; i++)
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
	const char *extra[24];
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
	/* A stop that failed left the previous run's guest behind (its log says why): on a Mac, a VM
	 * that stopped has no guest left, so power that one off before this run boots a new one. */
	if (vm->sshd_up && guest(s, vm, "stop", NULL) == 0)
		vm->sshd_up = 0;
	if (!vm->sshd_up) {
		/* The guest's kern.boottime: now, to the microsecond as macOS reports it; a resumed guest
		 * keeps the one it had (it never rebooted). */
		pthread_mutex_lock(&s->lock);
		if (!vm->resuming)
			vm->boot_epoch = sim_epoch();
		snprintf(boot_time, sizeof(boot_time), "%.6f", vm->boot_epoch);
		pthread_mutex_unlock(&s->lock);
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
		if (vm->metal_defects != NULL) {
			extra[n++] = "--metal-defects";
			extra[n++] = vm->metal_defects;
		}
		if (vm->stock_kernels != NULL) {
			extra[n++] = "--stock-kernels";
			extra[n++] = vm->stock_kernels;
		}
		/* The level this VM's process read when it started (sim_vm_run), not today's value. */
		pthread_mutex_lock(&s->lock);
		extra[n++] = "--feature-level";
		extra[n++] = vm->unlocked ? "unlocked" : "restricted";
		pthread_mutex_unlock(&s->lock);
		if (s->home_size != NULL) {
			extra[n++] = "--home-size";
			extra[n++] = s->home_size;
		}
		if (vm->manager == SIM_MGR_TART) { /* Cirrus Labs' images: admin/admin, and their shim */
			extra[n++] = "--user";
			extra[n++] = "admin";
			if (s->tart_shim != NULL) {
				extra[n++] = "--tart-shim";
				extra[n++] = s->tart_shim;
			}
		}
		extra[n] = NULL;
		/* A booting guest asks for its address (DHCP) before its sshd listens: the lease is in
		 * the file by the time port 22 answers, as on a Mac. */
		pthread_mutex_lock(&s->lock);
		current = vm->running && vm->generation == generation && !vm->leased;
		vm->leased |= current;
		pthread_mutex_unlock(&s->lock);
		if (current) /* the guest's first DHCP request since the simulator started */
			sim_leases_write(s);
		if (guest(s, vm, "start", extra) == 0) {
			vm->sshd_up = 1;
			sim_log_event(s, vm->resuming ? "resume" : "boot", vm->name, boot_time);
		}
	}
	pthread_mutex_lock(&s->lock);
	if (vm->running && vm->generation == generation && vm->sshd_up) {
		vm->booted = 1;
		vm->resuming = 0;
	}
	pthread_mutex_unlock(&s->lock);
	pthread_mutex_unlock(&vm->op_lock);
}

/* bootpd's /var/db/dhcpd_leases: one block per lease, the newest first, hw_address with the
 * hardware type and the MAC's octets without leading zeros, lease the expiry in hex seconds. */
void sim_leases_write(sim *s)
{
	char tmp[sizeof(s->leases) + 8];
	FILE *f;
	size_t i;

	if (s->leases[0] == '\0')
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", s->leases);
	if ((f = fopen(tmp, "w")) == NULL)
		return;
	pthread_mutex_lock(&s->lock);
	for (i = s->nvms; i-- > 0;) {
		sim_vm *vm = &s->vms[i];
		unsigned o[6];
		if (!vm->leased || vm->deleted || sscanf(vm->mac, "%x:%x:%x:%x:%x:%x", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5]) != 6)
			continue;
		fprintf(f, "{\n\tname=%s\n\tip_address=%s\n\thw_address=1,%x:%x:%x:%x:%x:%x\n"
		    "\tidentifier=1,%x:%x:%x:%x:%x:%x\n\tlease=0x%lx\n}\n", vm->name, vm->address, o[0], o[1], o[2], o[3],
		    o[4], o[5], o[0], o[1], o[2], o[3], o[4], o[5], (unsigned long)sim_epoch() + 86400UL);
	}
	pthread_mutex_unlock(&s->lock);
	if (fclose(f) != 0 || rename(tmp, s->leases) != 0)
		unlink(tmp);
}

/* The VM goes down (its process ended, or the server stopped it): no owner, the guest's sshd
 * stopped, and only then "stopped", so that whoever sees "stopped" finds port 22 closed. Nothing
 * when another run or stop came first (the generation changed). */
static void vm_down(sim *s, sim_vm *vm, unsigned generation, const char *detail)
{
	pthread_mutex_lock(&s->lock);
	if (!vm->running || vm->generation != generation || vm->owner == SIM_OWNER_NONE) {
		pthread_mutex_unlock(&s->lock);
		return;
	}
	vm->generation++; /* no boot of the old run goes ahead */
	vm->boot_at = -1;
	vm->owner = SIM_OWNER_NONE; /* going down */
	vm->owner_pid = 0;
	if (vm->lock_fd >= 0)
		close(vm->lock_fd); /* releases the flock: the VM is no longer ours */
	vm->lock_fd = -1;
	pthread_mutex_unlock(&s->lock);
	pthread_mutex_lock(&vm->op_lock);
	if (vm->sshd_up && guest(s, vm, "stop", NULL) == 0)
		vm->sshd_up = 0;
	pthread_mutex_unlock(&vm->op_lock);
	pthread_mutex_lock(&s->lock);
	vm->running = 0;
	vm->booted = 0;
	vm->stopping = 0;
	vm->paused = 0; /* a saved state outlives the stop (UTM's registry keeps isSuspended) */
	vm->resuming = 0;
	pthread_mutex_unlock(&s->lock);
	sim_log_event(s, "stopped", vm->name, detail);
}

void sim_vm_power_off(sim *s, sim_vm *vm, const char *detail)
{
	unsigned gen;

	pthread_mutex_lock(&s->lock);
	gen = vm->generation;
	pthread_mutex_unlock(&s->lock);
	vm_down(s, vm, gen, detail);
	wait_down(s, vm);
}

static void *boot_thread(void *arg)
{
	sim_vm_job *j = arg;

	boot(j->s, j->vm, j->generation);
	pthread_mutex_lock(&j->s->lock);
	j->s->booting--;
	pthread_cond_broadcast(&j->s->booted);
	pthread_mutex_unlock(&j->s->lock);
	free(j);
	return NULL;
}

/* Each VM boots on its own, as on a Mac (one process per VM): sixteen VMs whose boot delay ends at
 * the same moment are up together, not one after another. The supervisor waits for none of them;
 * it counts them (s->booting) so that it ends only after the last. */
static void boot_async(sim *s, sim_vm *vm, unsigned generation)
{
	sim_vm_job *j = malloc(sizeof(*j));
	pthread_attr_t attr;
	pthread_t t;
	int started = 0;

	if (j != NULL) {
		*j = (sim_vm_job){s, vm, generation};
		pthread_mutex_lock(&s->lock);
		s->booting++;
		pthread_mutex_unlock(&s->lock);
		if (pthread_attr_init(&attr) == 0) {
			pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
			started = pthread_create(&t, &attr, boot_thread, j) == 0;
			pthread_attr_destroy(&attr);
		}
		if (!started) {
			pthread_mutex_lock(&s->lock);
			s->booting--;
			pthread_mutex_unlock(&s->lock);
			free(j);
		}
	}
	if (!started)
		boot(s, vm, generation); /* no thread to spare: this one boots it */
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
			if (vm->running && vm->owner == SIM_OWNER_CLI && sim_process_exited(vm->owner_pid)) {
				/* Its `lume run` process ended (a signal, a crash): its VM ends with it. */
				char detail[96];
				snprintf(detail, sizeof(detail), "its lume run process (PID %ld) ended", (long)vm->owner_pid);
				gen = vm->generation;
				pthread_mutex_unlock(&s->lock);
				vm_down(s, vm, gen, detail);
				pthread_mutex_lock(&s->lock);
				continue;
			}
			if (!vm->running || vm->booted || vm->never_ready || vm->boot_at < 0 || sim_now() < vm->boot_at)
				continue;
			vm->boot_at = -1; /* one boot per run */
			gen = vm->generation;
			pthread_mutex_unlock(&s->lock);
			boot_async(s, vm, gen);
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
	/* The boots under way end before the supervisor does: joining it means no boot is left. */
	while (s->booting > 0)
		pthread_cond_wait(&s->booted, &s->lock);
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

static int vm_run(sim *s, sim_vm *vm, pid_t owner_pid, int restore, char *why, size_t cap)
{
	size_t i, running = 0;
	char detail[200];
	int fd = -1, unlocked;

	why[0] = '\0';
	/* Read as the VM process starts, like Virtualization.framework: kept until its next start. */
	unlocked = sim_host_level_unlocked(s);
	pthread_mutex_lock(&s->lock);
	if (restore && !vm->saved)
		snprintf(why, cap, "%s has no saved state to restore", vm->name);
	/* A restored VM gets the devices of the configuration it was saved with: the GPU level its
	 * process read when it first started, not today's. */
	if (restore)
		unlocked = vm->unlocked;
	if (why[0] != '\0') {
		/* said above */
	} else if (vm->running) {
		snprintf(why, cap, "Virtual machine already running: %s", vm->name);
	} else {
		for (i = 0; i < s->nvms; i++)
			running += s->vms[i].running ? 1 : 0;
		if ((int)running >= s->max_running)
			snprintf(why, cap, "the host runs the maximum number of macOS VMs already (%d)", s->max_running);
	}
	/* The server runs the VM itself: like VM.run(), it takes the lock on config.json and keeps it
	 * (O_CLOEXEC: the guest fixture it spawns must not hold the VM). */
	if (why[0] == '\0' && owner_pid == 0 &&
	    ((fd = open(vm->config, O_WRONLY | O_CLOEXEC)) < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0))
		snprintf(why, cap, "Virtual machine already running: %s (cannot lock %s: %s)", vm->name, vm->config,
		    strerror(errno));
	if (why[0] != '\0') {
		pthread_mutex_unlock(&s->lock);
		if (fd >= 0)
			close(fd);
		sim_log_event(s, "start-failed", vm->name, why);
		return -1;
	}
	vm->running = 1;
	vm->vnc_off = 0; /* a run body that asks for none sets it after (sim_http.c) */
	vm->booted = 0;
	vm->generation++;
	vm->boot_at = sim_now() + s->boot_delay;
	vm->owner = owner_pid == 0 ? SIM_OWNER_SERVER : SIM_OWNER_CLI;
	vm->owner_pid = owner_pid;
	vm->lock_fd = fd;
	vm->unlocked = unlocked;
	vm->resuming = restore;
	vm->saved = 0; /* restored, or discarded by a cold start */
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	if (owner_pid == 0)
		snprintf(detail, sizeof(detail), "by the server; host level %s%s", unlocked ? "unlocked" : "restricted",
		    restore ? " (restored from its saved state)" : "");
	else
		snprintf(detail, sizeof(detail), "by lume run (PID %ld); host level %s%s", (long)owner_pid,
		    unlocked ? "unlocked" : "restricted", restore ? " (restored from its saved state)" : "");
	sim_log_event(s, "run", vm->name, detail);
	return 0;
}

int sim_vm_run(sim *s, sim_vm *vm, pid_t owner_pid, char *why, size_t cap)
{
	return vm_run(s, vm, owner_pid, 0, why, cap);
}

int sim_vm_resume(sim *s, sim_vm *vm, pid_t owner_pid, char *why, size_t cap)
{
	pthread_mutex_lock(&s->lock);
	if (vm->running && vm->paused) {
		/* VZVirtualMachine.resume(): the same process, the same guest */
		vm->paused = 0;
		vm->resuming = 1;
		vm->boot_at = sim_now();
		pthread_cond_signal(&s->wake);
		pthread_mutex_unlock(&s->lock);
		sim_log_event(s, "run", vm->name, "resumed from paused; its level unchanged");
		return 0;
	}
	pthread_mutex_unlock(&s->lock);
	return vm_run(s, vm, owner_pid, 1, why, cap);
}

int sim_vm_pause(sim *s, sim_vm *vm, int save, int keep_process)
{
	unsigned gen;

	pthread_mutex_lock(&s->lock);
	if (!vm->running || vm->paused) {
		pthread_mutex_unlock(&s->lock);
		return -1;
	}
	if (!vm->booted && vm->boot_at >= 0)
		vm->boot_epoch = sim_epoch(); /* its boot had not begun: it begins now, and is frozen */
	vm->saved = vm->saved || save;
	gen = vm->generation;
	if (!keep_process) {
		pthread_mutex_unlock(&s->lock);
		/* Tart: the state saved, `tart run` ends; the VM is down until it is restored */
		vm_down(s, vm, gen, "suspended: its state saved");
		wait_down(s, vm);
		return 0;
	}
	vm->paused = 1;
	vm->booted = 0;
	vm->boot_at = -1;
	vm->generation++;
	pthread_mutex_unlock(&s->lock);
	pthread_mutex_lock(&vm->op_lock);
	if (vm->sshd_up && guest(s, vm, "stop", NULL) == 0)
		vm->sshd_up = 0; /* a frozen guest answers nothing */
	pthread_mutex_unlock(&vm->op_lock);
	sim_log_event(s, "paused", vm->name, save ? "its state saved" : NULL);
	return 0;
}

int sim_vm_guest_reboot(sim *s, sim_vm *vm)
{
	unsigned gen;

	pthread_mutex_lock(&s->lock);
	if (!vm->running || vm->paused || !vm->booted) {
		pthread_mutex_unlock(&s->lock);
		return -1;
	}
	/* A new generation: a boot or stop of the previous one that is still under way counts for
	 * nothing. No boot until the old guest is down (boot_at < 0 meanwhile). */
	vm->booted = 0;
	vm->resuming = 0;
	vm->boot_at = -1;
	vm->generation++;
	gen = vm->generation;
	pthread_mutex_unlock(&s->lock);
	pthread_mutex_lock(&vm->op_lock);
	if (vm->sshd_up && guest(s, vm, "stop", NULL) == 0)
		vm->sshd_up = 0; /* `shutdown -r now`: the guest's sshd goes, its kernel with it */
	pthread_mutex_unlock(&vm->op_lock);
	pthread_mutex_lock(&s->lock);
	if (vm->running && vm->generation == gen) {
		vm->boot_at = sim_now() + s->boot_delay; /* the guest's own boot: a new kern.boottime */
		pthread_cond_signal(&s->wake);
	}
	pthread_mutex_unlock(&s->lock);
	/* Not a "run": the VM's process, its owner and the host level it read at its start stay. */
	sim_log_event(s, "guest-reboot", vm->name, vm->unlocked ? "the VM process keeps host level unlocked" :
	    "the VM process keeps host level restricted");
	return 0;
}

/* Until the VM is down, whoever takes it down (the supervisor may, once its process is gone). */
static void wait_down(sim *s, sim_vm *vm)
{
	pthread_mutex_lock(&s->lock);
	while (vm->running && vm->owner == SIM_OWNER_NONE) {
		pthread_mutex_unlock(&s->lock);
		sim_sleep(0.02);
		pthread_mutex_lock(&s->lock);
	}
	pthread_mutex_unlock(&s->lock);
}

int sim_vm_stop(sim *s, sim_vm *vm)
{
	char detail[128];
	unsigned gen;
	sim_owner owner;
	pid_t pid;
	int sig;

	pthread_mutex_lock(&s->lock);
	if (!vm->running) {
		pthread_mutex_unlock(&s->lock);
		return -1;
	}
	gen = vm->generation;
	owner = vm->owner;
	pthread_mutex_unlock(&s->lock);
	if (owner == SIM_OWNER_SERVER) {
		vm_down(s, vm, gen, "stopped by the server");
	} else if (owner == SIM_OWNER_CLI) {
		/* Not the server's: LumeController.stopVM() -> VM.stop() signals whoever holds the lock. */
		if ((pid = sim_lock_owner(vm->config)) > 0) {
			snprintf(detail, sizeof(detail), "the server sends SIGINT to PID %ld, which holds it", (long)pid);
			sim_log_event(s, "signal", vm->name, detail);
			if ((sig = sim_signal_owner(pid, s->stop_grace)) == SIGKILL)
				sim_log_event(s, "signal", vm->name, "SIGKILL: still there after the grace period");
		}
		/* Usually the supervisor has seen the process go first. */
		vm_down(s, vm, gen, pid > 0 ? "its process was signalled by the server" : "nobody held it");
	}
	wait_down(s, vm);
	return 0;
}

typedef struct {
	sim *s;
	sim_vm *vm;
} down_job;

static void *down_all(void *arg)
{
	down_job *j = arg;
	unsigned gen;

	pthread_mutex_lock(&j->s->lock);
	gen = j->vm->generation;
	pthread_mutex_unlock(&j->s->lock);
	vm_down(j->s, j->vm, gen, "the server exited");
	pthread_mutex_lock(&j->vm->op_lock);
	if (j->vm->sshd_up && guest(j->s, j->vm, "stop", NULL) == 0)
		j->vm->sshd_up = 0; /* a boot that raced the exit */
	pthread_mutex_unlock(&j->vm->op_lock);
	return NULL;
}

void sim_vm_stop_all(sim *s)
{
	down_job *jobs = calloc(s->nvms, sizeof(*jobs));
	pthread_t *threads = calloc(s->nvms, sizeof(*threads));
	size_t i, started = 0;

	/* The server ends: the VMs it runs go down with it, at once (in parallel: a `lume stop` that
	 * ended the server waits for it only so long). So do those of `lume run` processes: here the
	 * simulator is their whole world (on a Mac they would keep running). */
	for (i = 0; i < s->nvms; i++) {
		down_job one = {s, &s->vms[i]};
		if (jobs == NULL || threads == NULL) {
			down_all(&one);
			continue;
		}
		jobs[started] = one;
		if (pthread_create(&threads[started], NULL, down_all, &jobs[started]) == 0)
			started++;
		else
			down_all(&one);
	}
	for (i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	free(jobs);
	free(threads);
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

/* Lume's sshAvailable: `nc -z -w 2` against port 22 of the VM's address (reference/lume.md, the
 * VM object and the 2026-11 corrections). On loopback a closed port refuses at once; a Mac guest
 * that boots again with its old DHCP lease gives the address before its network answers, so the
 * SYN gets no answer at all: the check ends when the guest answers a retransmitted SYN (the first
 * one a second later, RFC 6298 2.1's initial RTO; the next at 3 s, after nc's timeout) or at the
 * 2-second timeout. Modelled as that: a check begun while the guest has not booted waits a second,
 * answers then if the guest has booted meanwhile, else waits out the second second and says no. */
static int lume_ssh_check(sim *s, sim_vm *vm)
{
	double t = sim_now(), left;
	int silent, booted;

	/* Silent: not booted by the simulator's account and its sshd not listening yet (the port can
	 * answer a moment before the boot is noted: then the guest answers, as a Mac's would). */
	pthread_mutex_lock(&s->lock);
	silent = vm->running && !vm->booted;
	pthread_mutex_unlock(&s->lock);
	if (silent && !sim_tcp_probe(vm->address, 22, 0.05)) {
		if ((left = t + 1.0 - sim_now()) > 0)
			sim_sleep(left);
		pthread_mutex_lock(&s->lock);
		booted = vm->booted;
		pthread_mutex_unlock(&s->lock);
		if (!booted && !sim_tcp_probe(vm->address, 22, 0.05)) {
			if ((left = t + 2.0 - sim_now()) > 0)
				sim_sleep(left);
			return 0;
		}
	}
	return sim_tcp_probe(vm->address, 22, 2.0);
}

static cJSON *vm_object(sim *s, sim_vm *vm)
{
	cJSON *o = cJSON_CreateObject(), *disk;
	int running, booted, addressed, vnc_off;

	pthread_mutex_lock(&s->lock);
	running = vm->running;
	booted = vm->booted;
	vnc_off = vm->vnc_off;
	/* Lume's address is the host's DHCP lease for the VM's MAC: a guest that took one before (a
	 * restart) has it there while it boots again, before its sshd listens. */
	addressed = booted || (running && vm->leased);
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
	if (running && !vnc_off) { /* the VM's VNC server runs whatever the display (noDisplay too) */
		char vnc[64];
		snprintf(vnc, sizeof(vnc), "vnc://:lume-sim@127.0.0.1:%d", vm->vnc_port);
		cJSON_AddStringToObject(o, "vncUrl", vnc);
	} else {
		cJSON_AddNullToObject(o, "vncUrl");
	}
	if (addressed)
		cJSON_AddStringToObject(o, "ipAddress", vm->address_answer[0] ? vm->address_answer : vm->address);
	else
		cJSON_AddNullToObject(o, "ipAddress");
	if (!addressed) /* no address, no probe: null, running or not */
		cJSON_AddNullToObject(o, "sshAvailable");
	else /* Lume's own check: a 2-second TCP connect to port 22 */
		cJSON_AddBoolToObject(o, "sshAvailable", lume_ssh_check(s, vm));
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
		if (s->vms[i].manager == SIM_MGR_LUME && !s->vms[i].deleted) /* Lume knows its own VMs only */
			cJSON_AddItemToArray(a, vm_object(s, &s->vms[i]));
	text = cJSON_Print(a);
	cJSON_Delete(a);
	return text;
}

char *sim_pull_json(const sim_pull *p)
{
	cJSON *o = cJSON_CreateObject();
	char *text;

	cJSON_AddStringToObject(o, "name", p->name);
	cJSON_AddStringToObject(o, "status", "pulling");
	cJSON_AddNumberToObject(o, "downloadProgress", p->progress);
	text = cJSON_Print(o);
	cJSON_Delete(o);
	return text;
}
