/* lume-metal: the whole flow — enable, status, probe, run, rollback — over one or more VMs.
 *
 * These join the preference store, the state journal, the VM manager, the SSH transport and the
 * guest bundle. Each VM's outcome is reported separately, with the steps it took and how long
 * each took, so that a fleet run can tell which VMs failed and why; while an operation runs, the
 * same steps go to the context's on_step callback.
 *
 * Every function below that reports outcomes sets *out to a result the library allocated, even
 * when it fails (then with the outcomes of the VMs it got to: none when it failed before any VM
 * was handled, e.g. on an invalid name); *out is NULL only when the result itself could not be
 * allocated (LM_ENOMEM). Release it with lm_flow_result_free().
 *
 * The results are read, never allocated, by the caller: lm_flow_result, lm_vm_outcome,
 * lm_flow_step and lm_agent_info each start with `size` (sizeof as the library was built) and grow
 * only at their end, and their arrays are arrays of pointers, so that a program built against an
 * older header reads the fields it knows from a newer library; a field newer than the oldest
 * library a program supports is read when LM_HAS_FIELD(ptr, type, field) (common.h) says the
 * library has it. The structs held by value inside them (lm_vm_info, lm_guest_facts,
 * lm_workload_flags, lm_host_pref_info) are frozen: a new fact goes at the end of the result.
 * docs/embedding.md, "ABI".
 */
#ifndef LUME_METAL_FLOW_H
#define LUME_METAL_FLOW_H

#include "common.h"

#include <stddef.h>

#include "agent.h"
#include "context.h"
#include "exercise.h"
#include "prefs.h"
#include "profile.h"
#include "report.h"
#include "vm.h"
#include "workload.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One step of a VM's outcome, as on_step reported it (context.h). */
typedef struct {
	size_t size;            /* sizeof(lm_flow_step) as the library was built */
	const char *name;       /* "host-preference", "restart", "install", "probe", ... (static) */
	lm_step_state state;    /* LM_STEP_DONE, or LM_STEP_FAILED for the step an error stopped */
	double seconds;
	char *detail;           /* what was done, why nothing was needed, or the error */
} lm_flow_step;

/* The guest as seen over SSH. Each field holds the guest's whole answer: an answer that does not
 * fit fails the operation with an error that names the limit (no silent truncation). */
/* A bundle id is at most this long, terminator included (a longer one is a bad manifest). */
#define LM_BUNDLE_ID_MAX 96

#define LM_GUEST_FIELD_MAX 64
#define LM_GUEST_HOME_MAX 1024
typedef struct {
	char os[LM_GUEST_FIELD_MAX];         /* uname -s: "Darwin", "Linux" */
	char arch[LM_GUEST_FIELD_MAX];       /* uname -m */
	char os_version[LM_GUEST_FIELD_MAX]; /* sw_vers -productVersion */
	double boot_time;                    /* kern.boottime (sec + usec), epoch seconds; 0 when unknown */
	char home[LM_GUEST_HOME_MAX];
	char sip[16];                        /* csrutil status: "enabled", "disabled", "custom"; "" when
	                                        not reported */
	int tart_shim;                       /* the Tart images' own shim is installed (LM_TART_SHIM_PATH) */
} lm_guest_facts;

/* Cirrus Labs' Tart macOS images install their own shim here, configured by TART_METAL_*, without
 * enabling it: no session gets it (their image test fails a build whose guest-agent jobs inject it). */
#define LM_TART_SHIM_PATH "/usr/local/lib/TartMetalCapabilities.dylib"

typedef struct {
	size_t size;                  /* sizeof(lm_vm_outcome) as the library was built */
	char vm[LM_VM_NAME_MAX];      /* validated to fit (lm_vm_name_normalize) */
	int rc;                       /* 0, LM_EUNSUPPORTED (guest unsupported, stock kept), or an error */
	char *message;                /* what happened / what went wrong and what state was left */
	lm_vm_info info;              /* as last seen */
	lm_guest_facts guest;
	int restarted;                /* the VM was stopped/started by this run */
	int started;                  /* the VM was stopped and has been started */
	int files_uploaded;           /* guest files uploaded by this run */
	int already_enabled;          /* nothing needed changing */
	int restart_pending;          /* status: running, and not certainly started after the preference changed */
	int bundle_verified;          /* status/enable: installed files match the manifest */
	char bundle_id[LM_BUNDLE_ID_MAX]; /* installed bundle directory name (validated to fit) */
	char profile[LM_PROFILE_NAME_MAX + 1]; /* the profile's name */
	lm_report *stock;             /* owned; may be NULL */
	lm_report *shimmed;           /* owned; may be NULL */
	lm_report *tart;              /* probe: through the Tart image's own shim, as its guest agent
	                                 configures it (family 1009, 65536 bytes); owned; NULL without one */
	lm_report *exercised;         /* owned; may be NULL: the shimmed probe with --exercise (enable,
	                                 probe --exercise; status and probe: the last one recorded) */
	lm_workload_flags stock_flags, shimmed_flags;
	int gone;                     /* its VM manager says it does not exist: its journal entry and
	                                 host-key pin were forgotten (with dry_run: would be) */
	size_t nsteps;
	lm_flow_step **steps;         /* nsteps entries, in order */
	size_t nagents;
	lm_agent_info **agents;       /* nagents entries. agent list and status: the VM's agents
	                                 (agent.h); agent install and remove: the one agent */
	lm_host_pref_mode pref_mode;  /* enable and status: the mode the VM was enabled with */
	lm_pref_needed pref_needed;   /* ... and whether it needed the host preference */
	const char *journal_status;   /* status: the VM's record in the journal (static): "enabled",
	                                 "enabling" (an enable is under way or did not finish),
	                                 "rolling-back" (a rollback began and did not finish: the next
	                                 rollback finishes it); "" when the journal does not know it; NULL
	                                 in other commands' outcomes */
} lm_vm_outcome;

typedef struct {
	size_t size;                  /* sizeof(lm_flow_result) as the library was built */
	lm_host_pref_info pref;       /* the host preference after the run */
	int pref_changed;             /* this run changed the host preference */
	int pref_restored;            /* rollback restored it */
	size_t count;
	lm_vm_outcome **vms;          /* count entries */
	double seconds;
	lm_host_pref_byhost byhost;   /* status: the preference's -currentHost value, which wins over
	                                 `pref` (size 0 when not read) */
} lm_flow_result;

/* Free a result and everything it holds (outcomes, messages, steps, reports, agents); NULL is fine. */
LM_EXTERN(void) lm_flow_result_free(lm_flow_result *result);

/* enable VM...: see docs/lume-metal.md. Returns 0 when every VM is enabled; otherwise the
 * per-VM rc tells (LM_EUNSUPPORTED: guest unsupported, stock kept). */
LM_EXTERN(int) lm_flow_enable(lm_context *ctx, const char *const *vms, size_t n, const lm_profile *profile,
    int jobs, lm_flow_result **out);

/* rollback VM... (all = every VM the state knows), `jobs` VMs at once (as enable's jobs; 1: one
 * after another). restart: restart running VMs that still carry the unlocked level once the
 * preference is restored. The host preference is restored by the last VM rolled back, whichever
 * it is; a dry run goes one VM at a time (its plan is read in the order named). */
LM_EXTERN(int) lm_flow_rollback(lm_context *ctx, const char *const *vms, size_t n, int all, int restart,
    int jobs, lm_flow_result **out);

/* status [VM...] (n == 0: every VM the state knows). Reads only; checks bundles over SSH when
 * the VM is running. */
LM_EXTERN(int) lm_flow_status(lm_context *ctx, const char *const *vms, size_t n, lm_flow_result **out);

/* gc: forget the VMs their manager no longer knows -- their journal entries and host-key pins.
 * One outcome per VM forgotten (`gone` set; with ctx's dry_run nothing is changed). */
LM_EXTERN(int) lm_flow_gc(lm_context *ctx, lm_flow_result **out);

/* probe VM: stock and shimmed reports (needs the bundle installed, i.e. an enabled VM). */
LM_EXTERN(int) lm_flow_probe(lm_context *ctx, const char *vm, lm_flow_result **out);
/* probe VM --exercise: the same, and the shimmed probe runs the exercise kernels (docs/guest.md);
 * its results go to the outcome's `exercised` and the journal. Reported, not checked: 0 whatever
 * the kernels did. */
LM_EXTERN(int) lm_flow_probe_exercise(lm_context *ctx, const char *vm, lm_flow_result **out);

/* How a workload is started (run, agent install): lm_workload_options_init(&wo,
 * LM_WORKLOAD_OPTIONS_VERSION), then the fields wanted. Fields are only ever added at the end,
 * each bumping the version (as lm_options, context.h). */
#define LM_WORKLOAD_OPTIONS_VERSION 3
typedef struct {
	unsigned int version;
	int run_hardened_stock; /* start a program signed with the hardened runtime without the
	                           dyld-environment entitlement anyway (it runs stock: dyld ignores the
	                           shim); by default such a program is refused with LM_EHARDENED before
	                           anything starts (docs/guest.md) */
	int require_shim;       /* run: no process of the workload had an answer widened (no_shim) is
	                           LM_ENOSHIM (after it ran; its exit status is still given) */
	/* Version 2, run: the workload as `tart exec` runs one (docs/lume-metal.md, "run like tart
	 * exec"). It runs in a process group of its own in the guest; when the run is stopped -- a
	 * signal from pending_signal, or should_cancel (SIGTERM) -- the group gets the signal, SIGKILL
	 * after stop_grace, and the run checks that no process of it is left: LM_ECANCELED saying
	 * how it ended, with its exit status in the result. A workload runs as long as it runs: the
	 * command timeout does not apply to it. */
	int input;              /* 1: input_fd is its standard input, read to its end, then closed (EOF);
	                           0: it reads EOF at once */
	int input_fd;
	int tty;                /* a pseudo-terminal in the guest of tty_cols x tty_rows (0: 80 x 24)
	                           with TERM tty_term (NULL: vt100); its output comes as stdout */
	unsigned int tty_cols, tty_rows;
	const char *tty_term;
	int (*pending_signal)(void *data); /* a signal the caller got that stops the workload (SIGINT,
	                           SIGTERM, SIGHUP; 0: none), asked at least four times a second */
	int (*window_size)(void *data, unsigned int *cols, unsigned int *rows); /* 1 and the new size
	                           when the caller's window changed (tty) */
	void *callback_data;    /* for pending_signal and window_size */
	double stop_grace;      /* seconds from the stop's signal to SIGKILL (0: 5) */
	/* Version 3 (issue 34). */
	int resign_copy;        /* run, agent install: a program dyld would not give the shim (the
	                           hardened runtime without the dyld entitlement, or library validation;
	                           it or an executable shipped beside it) runs as a copy in lume-metal's
	                           folder in the guest, every Mach-O of it re-signed ad hoc with the dyld
	                           entitlements (docs/guest.md); the original is never touched */
	const char *process_type; /* agent install: the plist's ProcessType (NULL: Interactive; launchd
	                           throttles a job that sets none, launchd.plist(5)) */
} lm_workload_options;

/* Every field of that version 0 (only those: a program built with an older header has a shorter
 * struct); LM_EINVALID for a version this library does not know. */
LM_EXTERN(int) lm_workload_options_init(lm_workload_options *opts, unsigned int version);

/* What `run` learnt: the guest command's exit status, the children policy it gave the workload,
 * and what the shim said from inside each process of the workload that loaded it (its activation
 * records, docs/activation-format.md). Allocated by the library (lm_run_result_free), growing only
 * at its end. */
typedef struct {
	size_t size;               /* sizeof(lm_run_result) as the library was built */
	int exit_status;           /* the workload's, as a shell reports it: 128 + N when signal N
	                              ended it; 255 when unknown */
	int inherit;               /* 1 children keep the shim (the shim's spawn rule; inherit_reason
	                              says when protected ones start without it), -1 the workload's
	                              own LUME_METAL_INHERIT decided */
	char inherit_reason[256];  /* why (empty when the workload's own assignment decided) */
	size_t nprocesses;         /* processes that loaded the shim (one activation record each) */
	char **process_lines;      /* nprocesses lines: which process, what it asked, what it was told */
	char *no_shim;             /* NULL when some process had an answer widened (its record shows a
	                              supportsFamily: stock said no and the shim yes, or a raised
	                              maxThreadgroupMemoryLength); else one sentence: what the records
	                              show ("no process of the workload loaded the shim", "no answer was
	                              widened") and the likely cause */
	char *records_json;        /* the records as a JSON array, as read ("[]" when none) */
	char *record_dir;          /* the guest directory the records were written to (removed after) */
	int stopped_by;            /* the signal the workload was stopped with (its process group's);
	                              0: it ended by itself */
	int stop_killed;           /* 1: it did not end within the grace and was killed (SIGKILL) */
	/* Added by issue 34 (the size tells whether the library has them). */
	size_t records_dropped;    /* processes past the first 256 records (by pid) that loaded the
	                              shim: counted, their records not read */
	size_t records_skipped;    /* damaged or unreadable records: skipped and said, never the run's
	                              error */
	char **skipped_lines;      /* NULL-terminated: the first of them, which record and what is wrong */
	char **stock_children;     /* NULL-terminated: programs the workload started with the shim that
	                              ran stock, and why ("llama-server (PATH) is signed with the hardened
	                              runtime: it ran stock") */
	/* Added by issue 48 (the size tells whether the library has them). */
	long widened_line;         /* the index in process_lines of the first process (by pid) that had
	                              an answer widened, which run's summary names (a worker that came
	                              and went before the workload ended too); -1 none */
} lm_run_result;

LM_EXTERN(void) lm_run_result_free(lm_run_result *result);

/* run VM -- argv: one guest command with the shim environment, with options (NULL: the defaults),
 * and what it learnt (*out, NULL when not wanted; set, with what is known, whenever the workload
 * ran: its exit_status is the guest command's). Its output goes to the context's on_output
 * callback as it arrives (nothing is written to the caller's file descriptors). The code signature of the program (and of
 * a script's interpreter) is checked first: LM_EHARDENED when dyld would ignore the shim, unless
 * opts->run_hardened_stock. Each run gets its own record directory in the guest, read after the
 * workload exits and removed. */
LM_EXTERN(int) lm_flow_run_workload(lm_context *ctx, const char *vm, const char *const *argv, size_t argc,
    const lm_workload_options *opts, lm_run_result **out);

/* agent install VM...: the workload's LaunchAgent (agent.h) with the shim's environment — the
 * profile's (NULL: the one the VM was enabled with) — uploaded atomically to the guest's
 * ~/Library/LaunchAgents/LABEL.plist, checked with `plutil -lint`, booted out when loaded, then
 * bootstrapped into gui/UID and kickstarted; recorded in the journal. The VM must be enabled.
 * Options NULL: the defaults; as run, a program dyld would not give the shim is LM_EHARDENED
 * before anything is installed, unless opts->run_hardened_stock.
 * Over several VMs (issue 37), an outcome each, `jobs` VMs at once (as enable's jobs; 1: one after
 * another): a failed VM does not stop the next, result->seconds is the run's time. 0 when every VM
 * succeeded, else the first failed VM's code and message (n == 1: that VM's). */
LM_EXTERN(int) lm_flow_agent_install(lm_context *ctx, const char *const *vms, size_t n,
    const lm_agent_spec *spec, const lm_profile *profile, const lm_workload_options *opts, int jobs,
    lm_flow_result **out);
/* agent remove VM... LABEL: booted out, its plist removed, forgotten; as install over several VMs. */
LM_EXTERN(int) lm_flow_agent_remove(lm_context *ctx, const char *const *vms, size_t n, const char *label,
    int jobs, lm_flow_result **out);
/* agent list VM...: each VM's agents from the journal, with launchd's state when the VM is running
 * (at least one VM). */
LM_EXTERN(int) lm_flow_agent_list(lm_context *ctx, const char *const *vms, size_t n, lm_flow_result **out);
/* agent logs VM LABEL: the agent's stdout and stderr logs (its StandardOutPath and
 * StandardErrorPath in the guest), each given to on_data as it is read: whole (follow 0), or
 * then what is appended to them until ctx is cancelled (follow 1, as `tail -f`; cancelled is a
 * clean end: 0). which is 1 for stdout's, 2 for stderr's. on_data returns 0 when it took the
 * bytes; anything else (its output could not be written) ends the reading at once, following
 * or not, with LM_EIO. LM_ENOTFOUND for a label the journal does not list for the VM. info (NULL:
 * not wanted) gets the agent as launchd shows it. */
typedef int (*lm_agent_log_fn)(void *data, int which, const char *bytes, size_t len);
LM_EXTERN(int) lm_flow_agent_logs(lm_context *ctx, const char *vm, const char *label, int follow,
    lm_agent_log_fn on_data, void *data, lm_agent_info *info);

#ifdef __cplusplus
}
#endif
#endif
