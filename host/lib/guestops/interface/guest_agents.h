/* Internal (guestops): per-workload LaunchAgents in a guest -- their plists (agent_plist.c),
 * launchd driven as reference/lume.md's recipe does (launchd.c), and their logs (agent_logs.c). */
#ifndef LM_GUEST_AGENTS_H
#define LM_GUEST_AGENTS_H

#include <stddef.h>

#include "lume-metal/agent.h"
#include "lume-metal/sys/ssh.h"
#include "context_internal.h"
#include "guest_shim.h"

/* ---- agent_plist.c: per-workload LaunchAgents (agent.h) ---- */

/* Where agents and their logs live in the guest, relative to its home. */
#define LM_AGENT_DIR "Library/LaunchAgents"
#define LM_AGENT_LOG_DIR "Library/Logs/lume-metal"

typedef struct {
	char plist[LM_AGENT_PATH_MAX];   /* HOME/Library/LaunchAgents/LABEL.plist */
	char out_log[LM_AGENT_PATH_MAX]; /* HOME/Library/Logs/lume-metal/LABEL.out.log */
	char err_log[LM_AGENT_PATH_MAX];
	char record_dir[LM_AGENT_PATH_MAX]; /* HOME/Library/Logs/lume-metal/LABEL.activation */
} lm_agent_paths_t;

/* The agent's guest paths; LM_EINVALID when they would not fit. */
int lm_agent_paths(const char *home, const char *label, lm_agent_paths_t *paths);
/* a->stdout_path and a->stderr_path as lume-metal's plists name them (the plist's
 * StandardOutPath/StandardErrorPath under home); unchanged when home is unknown. */
void lm_agent_log_paths(const char *home, lm_agent_info *a);
/* An install's spec: a good label (lm_agent_label_check) and a workload command whose first word
 * is a program, not a variable assignment. */
int lm_agent_spec_check(const lm_agent_spec *spec);
/* The agent's plist (XML, NUL-terminated, free()): Label, ProgramArguments (program — the
 * workload's resolved absolute path — then spec's arguments after argv[0]), EnvironmentVariables
 * (the shim's injection variable, the profile's LUME_METAL_*, a PATH with the bundle's tools and
 * Homebrew's), StandardOutPath and StandardErrorPath, ProcessType (process_type, checked by
 * lm_agent_process_type_check; NULL: Interactive), KeepAlive and RunAtLoad when asked. */
int lm_agent_plist_build(const lm_agent_spec *spec, const char *program, const lm_shim_env *se, const char *home,
    const char *process_type, char **xml, size_t *len);
/* The program (ProgramArguments' first) of the plist at plist_path ("" when it names none). */
int lm_agent_plist_program(lm_ssh *ssh, const char *plist_path, char *program, size_t size);

/* ---- launchd.c: launchd in the guest, as reference/lume.md's recipe drives it ---- */

/* The guest account's launchd domain, "gui/501". */
int lm_launchd_domain(lm_ssh *ssh, char *domain, size_t len);
/* launchd's view of one agent (`launchctl print DOMAIN/LABEL`): a->state "not loaded", "loaded"
 * or "running", a->pid when running. */
int lm_launchd_query(lm_ssh *ssh, const char *domain, lm_agent_info *a);
/* How long a reload waits for launchd to let go of a booted-out label and accept the bootstrap
 * again: past launchd's own ExitTimeOut (20 s by default, then SIGKILL for a job that has not
 * ended) and the about 5 s measured after that (reference/vm-managers-and-bench.md, "launchd").
 * lm_launchd_release_wait() is it, or the test hook's LUME_METAL_TEST_LAUNCHD_WAIT. */
#define LM_LAUNCHD_RELEASE_WAIT 30.0
double lm_launchd_release_wait(void);
/* A bounded launchd wait: until `deadline` (lm_clock_monotonic), reported as vm's step `step`. */
typedef struct {
	double deadline;
	const char *vm;
	const char *step;
} lm_launchd_wait;
/* Until `launchctl print DOMAIN/LABEL` says the label is gone, asked again every 0.25 s:
 * LM_ETIMEOUT (saying launchd still holds it) past the deadline, LM_ECANCELED on ctx's request. */
int lm_launchd_wait_gone(lm_context *ctx, lm_ssh *ssh, const char *domain, const char *label, const lm_launchd_wait *w);
/* `launchctl bootstrap DOMAIN PLIST`, again every 0.25 s while it fails with 5 (Input/output
 * error: launchd still holds the label): LM_ETIMEOUT with launchd's message past the deadline,
 * LM_EREMOTE at once for any other failure, LM_ECANCELED on ctx's request. */
int lm_launchd_bootstrap(lm_context *ctx, lm_ssh *ssh, const char *domain, const char *plist, const lm_launchd_wait *w);
/* A copy of the plist at `plist` kept aside as DIR/.NAME.lume-metal-previous (into backup, even
 * when there is none: *had says whether there was), so that a failed re-install can put it back;
 * the original stays until the new one is uploaded over it. */
int lm_launchd_plist_keep(lm_ssh *ssh, const char *plist, char *backup, size_t size, int *had);
/* The plist kept aside (lm_launchd_plist_keep) back at a->plist, and launchd as it was before
 * (`was`: "not loaded", "loaded" or "running") when an install touched it (the new one booted
 * out first); a->state and a->pid launchd's answer after. vm and its step "agent-restore" for
 * the waits. */
int lm_launchd_plist_put_back(lm_context *ctx, lm_ssh *ssh, const char *domain, const char *vm, const char *backup,
    int launchd_touched, const char *was, lm_agent_info *a);
/* Out of launchd if it is in (bootout), and its plist (under home) gone. */
int lm_launchd_unload(lm_ssh *ssh, const char *domain, const char *home, lm_agent_info *a);
/* Every agent of agents[n] out of launchd and its plist gone (rollback, before the guest files:
 * the agents name the shim); `labels` gets their labels, ", " between them. */
int lm_guest_agents_remove(lm_ssh *ssh, const lm_guest_facts *facts, const lm_agent_info *agents, size_t n,
    char *labels, size_t len);
/* launchd's state of each of the n agents (in place; a flow outcome's array of pointers). */
int lm_guest_agents_query(lm_ssh *ssh, lm_agent_info *const *agents, size_t n);
/* agent_logs.c: a's stdout and stderr logs (a->stdout_path, a->stderr_path) given to on_data as
 * read, then (follow) what they gain until ctx is cancelled: 0 then; on_data refusing bytes ends it
 * at once: LM_EIO (lm_flow_agent_logs). */
int lm_guest_agent_logs(lm_context *ctx, lm_ssh *ssh, const lm_agent_info *a, int follow, lm_agent_log_fn on_data,
    void *data);
/* For each running agent of the n (after lm_guest_agents_query): whether its process loaded the
 * shim since it last started -- its activation record, <record_dir>/<pid>.json -- whether it or a
 * process it started, running or exited since, had an answer widened (lm_activation_took; the
 * folder is the agent's alone), and the line (shim_loaded, shim_widened, shim, record_dir, and
 * widened_exited_* when only an exited worker's answers were widened, set in place; home: the
 * guest's). The folder of every agent launchd knows is first pruned to the live processes and the
 * exited ones a live process of the agent started (their ancestry in the records: spawns[], ppid;
 * or the agent's running pid): a record whose pid is gone and that no live one started, or written
 * before the guest's boot (a pid of an earlier boot is never this process), is removed
 * (records_pruned); once the agent stops, all of them are, at the next look. */
int lm_guest_agents_activation(lm_ssh *ssh, const char *home, lm_agent_info *const *agents, size_t n);

#endif
