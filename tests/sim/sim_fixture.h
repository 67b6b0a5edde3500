/* Tests: start lume-sim on a port it picks, in a directory of the test's own, and stop it by its
 * PID whatever happens (group teardown, atexit, and the simulator's --exit-with-parent). */
#ifndef LM_SIM_FIXTURE_H
#define LM_SIM_FIXTURE_H

#include <limits.h>
#include <sys/types.h>

#define SIM_FIXTURE_MAX_VMS 8

typedef struct {
	pid_t pid;
	char dir[PATH_MAX];   /* the test's own directory (removed at stop) */
	char url[128];
	char lume[PATH_MAX];  /* the `lume` stand-in */
	char log[PATH_MAX];   /* the request log */
	char names[SIM_FIXTURE_MAX_VMS][128];
	char addresses[SIM_FIXTURE_MAX_VMS][16];
	char vm_dirs[SIM_FIXTURE_MAX_VMS][PATH_MAX];    /* the guest fixture's directory */
	char vm_configs[SIM_FIXTURE_MAX_VMS][PATH_MAX]; /* the manager's config file of the VM */
	int nvms;
	long http_timeout;    /* seconds for sim_fixture_http (0: 30) */
} sim_fixture;

/* Start lume-sim with `args` (NULL-terminated, besides --port/--dir/--info/--exit-with-parent and
 * --address-base, the test's /24 from the address plan, which are added) and wait until it
 * listens. 0 or -1 with a message on stderr. */
int sim_fixture_start(sim_fixture *f, const char *tag, const char *const args[]);
/* SIGTERM, then SIGKILL after 15 s; -1 when it did not exit with status 0. */
int sim_fixture_stop(sim_fixture *f);
/* Lines of the request log that contain every one of the NULL-terminated needles. */
int sim_fixture_count(const sim_fixture *f, const char *const needles[]);
/* One raw HTTP request to the simulator; *body (malloc'ed) and the status. 0, -1 on failure, -2
 * when no answer came within the fixture's http_timeout. */
int sim_fixture_http(const sim_fixture *f, const char *method, const char *path, const char *data, long *status,
    char **body, char *content_type, size_t ct_cap);
/* The address of a VM by name ("" when unknown). */
const char *sim_fixture_address(const sim_fixture *f, const char *name);
/* The index of a VM by name in names[] and the arrays beside it (-1 when unknown). */
int sim_fixture_vm(const sim_fixture *f, const char *name);

#endif
