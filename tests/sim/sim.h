/* lume-sim: a Lume-compatible simulator whose VMs are real OpenSSH servers (see
 * docs/simulator.md). Internal to the simulator. */
#ifndef LUME_SIM_H
#define LUME_SIM_H

#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#include "lm_test.h" /* lm_test_rmtree, lm_test_mkdir_p */

#define SIM_NAME_MAX 128
#define SIM_CLONES_MAX 256 /* VMs that clones may add while it runs */
#define SIM_VERSION "0.5.3"
#define SIM_STATUS_VERSION "1.0.0" /* what Lume's GET /lume/host/status says, whatever its version */
#define SIM_DIR_MAX 3072 /* leaves room for what goes below it */

typedef enum { SIM_FAULT_NONE = 0, SIM_FAULT_500, SIM_FAULT_GARBAGE } sim_fault;

/* Which VM manager has the VM (sim_managers.c): Lume's API and CLI know only SIM_MGR_LUME's. */
typedef enum { SIM_MGR_LUME = 0, SIM_MGR_TART, SIM_MGR_UTM } sim_manager;

/* Who runs a VM, that is who holds its config.json (see lume_lock.c). */
typedef enum { SIM_OWNER_NONE = 0, SIM_OWNER_SERVER, SIM_OWNER_CLI } sim_owner;

typedef struct {
	char name[SIM_NAME_MAX];
	char address[16];       /* 127.0.0.N */
	char address_answer[64]; /* what every manager gives as its address once booted, when not "" (a
	                            lying manager: POST /_sim/vms/NAME/address) */
	char dir[PATH_MAX];     /* the guest fixture's directory */
	char config[PATH_MAX];  /* HOME/NAME/config.json: its holder runs the VM */
	const char *metal_dir;  /* NULL: none */
	const char *metal_defects; /* the fake Metal's known defects (LM_FAKE_METAL_DEFECTS); NULL: none */
	const char *stock_kernels; /* what its unlocked kernels do at the restricted level (fail, zeros,
	                              run: LM_FAKE_METAL_STOCK_KERNELS); NULL: fail */
	int unlocked;           /* the host preference was on when this VM last started (under sim.lock) */
	int never_ready;        /* runs but never gets an address */
	int vnc_port;           /* what vncUrl shows while running */
	int vnc_off;            /* under sim.lock: run with "vnc": "disabled" (Lume main since ab957bd,
	                           reference/lume.md 2026-12-06): no VNC listener, vncUrl null */
	sim_manager manager;
	int no_display;         /* UTM: config.plist has no Display entry */
	char uuid[40];          /* UTM: Information.UUID */
	char mac[24];           /* config.json's macAddress: new for every clone */
	char machine_id[48];    /* Lume's machineIdentifier, Tart's ecid (base64): new for every clone */
	_Atomic int deleted;    /* deleted (sim_store.c): unknown to everything, its slot never reused */
	/* under sim.lock */
	int running;            /* Lume's "running": set at once by run */
	int booted;             /* the guest is up: ipAddress filled */
	double boot_at;         /* when the boot delay ends (monotonic) */
	unsigned generation;    /* bumped by every run and stop */
	sim_owner owner;
	pid_t owner_pid;        /* SIM_OWNER_CLI: the `lume run` process */
	int lock_fd;            /* SIM_OWNER_SERVER: our flock()ed config.json, else -1 */
	/* under op_lock: the guest's sshd */
	pthread_mutex_t op_lock;
	int sshd_up;
	int stopping;           /* under sim.lock: a guest shutdown was requested (UTM "stopping") */
	/* under sim.lock: paused and saved VMs (UTM's suspend, Tart's suspend). Resuming either keeps
	 * the guest that was running -- its boot time and the GPU level its process read at its start */
	int paused;             /* UTM "paused": the VM's process lives, the guest is frozen */
	int saved;              /* a saved state (UTM's Data/vmstate; Tart's state.vzvmsave is the stand-in's) */
	int resuming;           /* the next boot restores the guest of boot_epoch, not a new one */
	double boot_epoch;      /* the running (or saved) guest's kern.boottime */
	int leased;             /* its guest has taken a DHCP lease (the host's dhcpd_leases) */
} sim_vm;

/* A VM being pulled (--pulling): only GET /lume/vms/NAME knows it. */
typedef struct {
	const char *name;
	double progress;
} sim_pull;

typedef struct {
	/* options */
	int port;
	char dir[SIM_DIR_MAX];
	int dir_created;        /* we made dir: remove it all at exit */
	int keep;
	double boot_delay;
	double stop_delay;
	double run_answer_delay; /* POST .../run: the 202 this long after the start began (0: Lume's at once) */
	double stop_grace;      /* SIGINT, then SIGKILL after this (Lume: 10 s) */
	double status_delay;    /* GET /lume/host/status: per running VM (Lume's `nc -w 2`) */
	int max_running;
	const char *guest;      /* tests/support/guest-sshd */
	const char *prefs_dir;  /* the server user's preferences (plist files); NULL: none */
	const char *cli_program;/* the built lume stand-in */
	const char *os_version;
	const char *home_size;
	const char *info_file;
	const char *cli_version;
	sim_fault fault;        /* from --fault; changed by POST /_sim/fault */
	int fault_count;        /* -1: until changed */
	sim_pull *pulls;
	size_t npulls;
	/* derived */
	char home[SIM_DIR_MAX + 8]; /* DIR/lume: Lume's ~/.lume, one NAME/config.json per VM */
	char log_path[PATH_MAX];
	char bin_dir[SIM_DIR_MAX + 8];
	char lume_path[PATH_MAX];
	char url[64];
	struct in_addr api_address; /* --api-address: where the API listens (default 127.0.0.1) */
	int listen_fd;
	int log_fd;
	sim_vm *vms;
	_Atomic size_t nvms;    /* grows when a VM is cloned (sim_store.c); slots never move */
	size_t cap;             /* slots allocated */
	uint32_t address_base;  /* --address-base, host order: clones take the lowest free one */
	pthread_mutex_t store_lock; /* one clone or delete at a time */
	pthread_mutex_t lock;   /* VM states, fault, log writes */
	pthread_cond_t wake;    /* the supervisor's sleep */
	int stopping;
	int booting;            /* under lock: boots under way, each on its own thread (sim_vm.c) */
	pthread_cond_t booted;  /* booting dropped */
	pid_t parent;           /* --exit-with-parent: stop when this process is gone */
	int active;             /* connections being served */
	pthread_cond_t idle;    /* active dropped to 0 */
	/* Tart and UTM (sim_managers.c) */
	char tart_home[SIM_DIR_MAX + 8];      /* Tart's ~/.tart: vms/NAME/{config.json,disk.img,nvram.bin} */
	char utm_documents[SIM_DIR_MAX + 8];  /* UTM's Documents: NAME.utm/config.plist */
	const char *tart_program;  /* the built `tart` stand-in */
	const char *utmctl_program;/* the built `utmctl` stand-in */
	const char *tart_shim;     /* the Tart image's TartMetalCapabilities.dylib, put in every Tart guest */
	const char *tart_version;
	const char *utm_version;
	int utm_no_gui;            /* Apple Events fail: no logged-in GUI session */
	int utm_ignore_request;    /* guests ignore `utmctl stop --request` */
	double utm_request_delay;  /* a guest asked to shut down is down after this */
	int utm_no_arp;            /* `utmctl ip-address` finds nothing in the ARP cache (NAT traffic) */
	char utm_app[SIM_DIR_MAX + 64]; /* UTM.app's executable: bin/UTM.app/Contents/MacOS/UTM */
	pid_t utm_app_pid;         /* under lock: UTM.app's process while it runs, else 0 */
	int utm_app_at_start;      /* UTM.app runs from the start (no --utm-app-not-running) */
	char leases[SIM_DIR_MAX + 32]; /* the host's /var/db/dhcpd_leases: DIR/dhcpd_leases */
} sim;

/* Work on one VM for a thread of its own (a boot, a guest's requested shutdown): not done when the
 * VM's generation changed meanwhile (stopped or started again). */
typedef struct {
	sim *s;
	sim_vm *vm;
	unsigned generation;
} sim_vm_job;

/* sim_vm.c */
sim_vm *sim_vm_find(sim *s, const char *name);
const sim_pull *sim_pull_find(const sim *s, const char *name);
/* boots VMs whose boot delay is over; takes down VMs whose `lume run` process is gone */
void *sim_supervisor(void *arg);
/* Start a VM run by the server (owner_pid 0: it takes the VM's lock) or by the `lume run`
 * process owner_pid (which holds it). -1 with the reason in why (also in the request log). */
int sim_vm_run(sim *s, sim_vm *vm, pid_t owner_pid, char *why, size_t cap);
/* Lume's stop: the server's own VM is stopped; one held by a `lume run` process is stopped by
 * signalling that process (SIGINT, SIGKILL after stop_grace). Blocks until the guest is down.
 * -1 when it is not running. */
int sim_vm_stop(sim *s, sim_vm *vm);
void sim_vm_stop_all(sim *s);              /* the server exits: every VM goes down */
int sim_vm_rekey(sim *s, sim_vm *vm);
int sim_tcp_probe(const char *address, int port, double timeout);
/* A VM object as Lume renders it (every key present). Caller holds no lock. */
char *sim_vm_json(sim *s, sim_vm *vm);
char *sim_vms_json(sim *s);
/* A VM being pulled: {"name","status":"pulling","downloadProgress"}, nothing else. */
char *sim_pull_json(const sim_pull *p);

/* A VM with saved state (Tart's `tart run` of a suspended VM, UTM's start of one) or a paused one
 * (UTM's start) resumes: the guest it had, at the level its process read when it first started. */
int sim_vm_resume(sim *s, sim_vm *vm, pid_t owner_pid, char *why, size_t cap);
/* UTM's pause (the guest frozen, its process kept) and Tart's suspend (the state saved, the
 * process gone): the guest's sshd goes down, what it was is kept for a resume. -1 when not running. */
int sim_vm_pause(sim *s, sim_vm *vm, int save, int keep_process);
/* A guest reboot (Lume 0.5's `lume restart`: `sudo shutdown -r now` in the guest over SSH,
 * GuestPower.swift; a guest `sudo reboot`; a macOS update): the guest's sshd goes down and the
 * guest boots again with a new kern.boottime, in the same VM process -- its owner, its lock and
 * the host level it read at its start stay. -1 when it is not running and booted. */
int sim_vm_guest_reboot(sim *s, sim_vm *vm);
/* The host's DHCP server gave the guest its address: dhcpd_leases rewritten (bootpd's format). */
void sim_leases_write(sim *s);

/* The VM goes down now, as its manager's power-off does (VZVirtualMachine.stop): blocks until the
 * guest's sshd is down. */
void sim_vm_power_off(sim *s, sim_vm *vm, const char *detail);

/* sim_managers.c: Tart's and UTM's stores, the stand-ins' hooks. */
int sim_managers_prepare(sim *s);                     /* the VM directories and bundles */
int sim_managers_install(sim *s, void *cli_config);   /* bin/tart, bin/utmctl; fields of lume-sim.json */
/* UTM.app's process: launched (utmctl launches it when it is not running) and quit. */
int sim_utm_app_launch(sim *s, int quiet); /* quiet: at the start, not logged */
void sim_utm_app_quit(sim *s);
/* GET/POST /_sim/... of the Tart and UTM stand-ins: 1 when handled (*status, *body malloc'ed
 * JSON), 0 when the path is not theirs. */
int sim_managers_route(sim *s, const char *method, const char *path, const char *body, int *status, char **json);
/* The VM, when Lume knows it (Lume's routes and its CLI see only Lume's VMs). */
sim_vm *sim_lume_vm_find(sim *s, const char *name);
/* sim_prefs.c: whether the host preference is on now, as a VM process starting now reads it. */
int sim_host_level_unlocked(const sim *s);

/* sim_store.c: clone and delete (Lume's routes and CLI, `tart clone|delete`, `utmctl
 * clone|delete`). -1 with the manager's message in why. */
int sim_vm_clone(sim *s, sim_manager mgr, const char *src, const char *dst, char *why, size_t cap);
int sim_vm_delete(sim *s, sim_manager mgr, const char *name, char *why, size_t cap);
/* A VM's macAddress and machine identifier: fixed by its startup index, or random (index < 0). */
void sim_vm_new_identity(sim_vm *vm, long index);
int sim_lume_config_write(sim *s, sim_vm *vm); /* HOME/NAME/config.json */
int sim_address_free(const char *address);     /* can sshd bind ADDRESS:22? 1, 0, -1 (errno) */
/* sim_managers.c: a clone's Tart config.json (with the clone's mac/ecid) or UTM bundle (new UUID). */
int sim_managers_clone(sim *s, sim_vm *src, sim_vm *dst, size_t index);
/* sim_main.c */
int sim_vm_name_ok(const char *name);
int sim_write_json_file(const char *path, cJSON *doc);
/* A copy of a program (mode 0755): a file of its own, not a link. 0 or -1 (errno). */
int sim_copy_file(const char *from, const char *to);

/* sim_http.c */
void *sim_accept_loop(void *arg);

/* sim_util.c */
double sim_now(void);       /* monotonic */
double sim_epoch(void);     /* wall clock */
void sim_sleep(double seconds);
void sim_log_json(sim *s, const char *json_line); /* one line to the request log */
void sim_log_event(sim *s, const char *event, const char *vm, const char *detail);
/* posix_spawn argv, wait up to timeout, stdout into out (may be NULL). Returns the exit status
 * or -1. */
int sim_spawn_wait(char *const argv[], double timeout, char *out, size_t outcap, char *err, size_t errcap);

/* lume_lock.c: Lume's VM lock (shared by lume-sim and its `lume` stand-in). */
pid_t sim_lock_owner(const char *config);  /* lowest PID with the file open (lsof -F p); 0: none */
int sim_process_exited(pid_t pid);         /* gone or a zombie: its files and locks are released */
/* VM.swift stop(): SIGINT, then SIGKILL when still there after `grace` s. Returns the last
 * signal sent (SIGINT or SIGKILL), 0 when the process was already gone, -1 on other errors. */
int sim_signal_owner(pid_t pid, double grace);

#endif
