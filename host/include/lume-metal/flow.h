/* lume-metal: the whole flow — enable, status, probe, run, rollback — over one or more VMs.
 *
 * These join the preference store, the state journal, the VM manager, the SSH transport and the
 * guest bundle. Each VM's outcome is reported separately, with the steps it took and how long
 * each took, so that a fleet run can tell which VMs failed and why.
 */
#ifndef LUME_METAL_FLOW_H
#define LUME_METAL_FLOW_H

#include <stddef.h>

#include "lume-metal/context.h"
#include "lume-metal/exercise.h"
#include "lume-metal/prefs.h"
#include "lume-metal/profile.h"
#include "lume-metal/report.h"
#include "lume-metal/vm.h"
#include "lume-metal/workload.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LM_FLOW_MAX_STEPS 24

typedef struct {
	char name[40];      /* "host-preference", "restart", "install", "probe", ... */
	double seconds;
	char detail[256];   /* what was done or why nothing was needed */
} lm_flow_step;

/* The guest as seen over SSH. */
typedef struct {
	char os[32];            /* uname -s: "Darwin", "Linux" */
	char arch[32];          /* uname -m */
	char os_version[64];    /* sw_vers -productVersion */
	double boot_time;       /* kern.boottime (sec + usec), epoch seconds; 0 when unknown */
	char home[512];
	char sip[16];           /* csrutil status: "enabled", "disabled", "custom"; "" when not reported */
} lm_guest_facts;

typedef struct {
	char vm[LM_VM_NAME_MAX];
	int rc;                       /* 0, LM_EUNSUPPORTED (guest unsupported, stock kept), or an error */
	char message[2048];           /* what happened / what went wrong and what state was left */
	lm_vm_info info;              /* as last seen */
	lm_guest_facts guest;
	int restarted;                /* the VM was stopped/started by this run */
	int started;                  /* the VM was stopped and has been started */
	int files_uploaded;           /* guest files uploaded by this run */
	int already_enabled;          /* nothing needed changing */
	int restart_pending;          /* status: running, and not certainly started after the preference changed */
	int bundle_verified;          /* status/enable: installed files match the manifest */
	char bundle_id[96];           /* installed bundle directory name */
	char profile[128];
	lm_report *stock;             /* owned; may be NULL */
	lm_report *shimmed;           /* owned; may be NULL */
	lm_report *exercised;         /* owned; may be NULL: the shimmed probe with --exercise (enable,
	                                 probe --exercise; status and probe: the last one recorded) */
	lm_workload_flags stock_flags, shimmed_flags;
	size_t nsteps;
	lm_flow_step steps[LM_FLOW_MAX_STEPS];
} lm_vm_outcome;

typedef struct {
	lm_host_pref_info pref;       /* the host preference after the run */
	int pref_changed;             /* this run changed the host preference */
	int pref_restored;            /* rollback restored it */
	size_t count;
	lm_vm_outcome *vms;           /* count entries */
	double seconds;
} lm_flow_result;

void lm_flow_result_free(lm_flow_result *result); /* frees the contents, not the struct */

/* enable VM...: see docs/lume-metal.md. Returns 0 when every VM is enabled; otherwise the
 * per-VM rc tells (LM_EUNSUPPORTED: guest unsupported, stock kept). */
int lm_flow_enable(lm_context *ctx, const char *const *vms, size_t n, const lm_profile *profile,
    int jobs, lm_flow_result *result);

/* rollback VM... (all = every VM the state knows). restart: restart running VMs that still
 * carry the unlocked level once the preference is restored. */
int lm_flow_rollback(lm_context *ctx, const char *const *vms, size_t n, int all, int restart,
    lm_flow_result *result);

/* status [VM...] (n == 0: every VM the state knows). Reads only; checks bundles over SSH when
 * the VM is running. */
int lm_flow_status(lm_context *ctx, const char *const *vms, size_t n, lm_flow_result *result);

/* probe VM: stock and shimmed reports (needs the bundle installed, i.e. an enabled VM). */
int lm_flow_probe(lm_context *ctx, const char *vm, lm_flow_result *result);
/* probe VM --exercise: the same, and the shimmed probe runs the exercise kernels (docs/guest.md);
 * its results go to the outcome's `exercised` and the journal. Reported, not checked: 0 whatever
 * the kernels did. */
int lm_flow_probe_exercise(lm_context *ctx, const char *vm, lm_flow_result *result);

/* run VM -- argv: one guest command with the shim environment, output streamed to fd 1/2.
 * *exit_status gets the guest command's exit status. */
int lm_flow_run(lm_context *ctx, const char *vm, const char *const *argv, size_t argc, int *exit_status);

#ifdef __cplusplus
}
#endif
#endif
