/* Internal (for the modules that depend on proc): this host's processes (host/lib/proc/
 * host_process.c) -- /proc on Linux, libproc on macOS. Only this user's processes are visible
 * without privileges. The VM managers ask who holds a VM, who serves Lume's API, whether UTM.app
 * runs. */
#ifndef LM_HOST_PROCESS_H
#define LM_HOST_PROCESS_H

#include <stddef.h>

typedef struct {
	long pid;            /* 0: none (visible) */
	long uid;            /* effective uid, -1 unknown */
	char command[160];   /* its arguments, space-separated, shortened; "" unknown */
	char subcommand[32]; /* its first argument after the program that is not an option ("run") */
} lm_host_process;

/* The process that has one of `files` open (a VM's config.json in each of Lume's storage
 * locations): the VM's owner for Lume, whose `lume stop` signals it (`lsof -F p`: the lowest PID).
 * pid 0 when none is visible. */
int lm_host_vm_holder(const char *const files[], size_t n, lm_host_process *out);
/* The process listening on TCP `port` at a loopback or wildcard address. *found is 1 when a
 * socket listens, even when its process is not visible (then pid is 0, uid maybe known). */
int lm_host_port_listener(int port, int *found, lm_host_process *out);
/* A process of this user runs the program file at `path` (the same file: device and inode,
 * whatever path it was started by). */
int lm_host_program_running(const char *path, int *running);
/* When process `pid` started, in epoch seconds with fractions: *at 0 when it is not visible (gone,
 * or not this OS's to tell). The restart rule's evidence of when a VM process read the host
 * preference (record/level.c): a guest reboot changes the guest's boot time, not this. */
int lm_host_process_started(long pid, double *at);

#endif
