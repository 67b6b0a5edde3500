/* lume-metal: per-workload LaunchAgents in a guest (`agent install|remove|list`).
 *
 * An agent is a launchd job in the guest account's gui domain whose plist carries the shim's
 * environment (EnvironmentVariables), so that one long-running workload — an inference server —
 * gets the unlocked answers while the rest of the login session stays stock. lume-metal never
 * uses `launchctl setenv`. The flows that install, remove and list agents are in flow.h.
 */
#ifndef LUME_METAL_AGENT_H
#define LUME_METAL_AGENT_H

#include <stddef.h>

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A label is at most this long, terminator included. */
#define LM_AGENT_LABEL_MAX 128
/* A guest path (plist, log) is at most this long, terminator included. */
#define LM_AGENT_PATH_MAX 1280

/* What to install. */
typedef struct {
	const char *label;        /* reverse-DNS: [A-Za-z0-9.-], starting with a letter or digit */
	const char *const *argv;  /* the workload: its program (looked up in the guest as `run` does) and arguments */
	size_t argc;
	int keep_alive;           /* launchd restarts it when it exits (KeepAlive) */
	int run_at_load;          /* launchd starts it when loaded, at each login too (RunAtLoad) */
} lm_agent_spec;

/* One installed agent, as the journal records it and launchd reports it: part of a flow result,
 * allocated by the library, growing only at its end (flow.h). */
typedef struct {
	size_t size;                    /* sizeof(lm_agent_info) as the library was built */
	char label[LM_AGENT_LABEL_MAX];
	char plist[LM_AGENT_PATH_MAX];  /* ~/Library/LaunchAgents/LABEL.plist in the guest */
	char program[LM_AGENT_PATH_MAX];/* the workload's program as resolved in the guest */
	char state[32];                 /* launchd's: "running", "loaded" (not running), "not loaded";
	                                   "unknown" when the guest was not reached */
	long pid;                       /* running: its pid; else 0 */
	double installed_at;            /* epoch seconds */
	char record_dir[LM_AGENT_PATH_MAX]; /* the guest directory its process writes its activation
	                                   record to (docs/activation-format.md) */
	int shim_loaded;                /* running: 1 when its process (this pid) loaded the shim since it
	                                   last started, 0 when not; -1 unknown (not running, not asked) */
	char shim[508];                 /* with shim_loaded 1: what it asked and was told (one line; the
	                                   size keeps the struct without trailing padding) */
	/* Added by issue 34 (the size tells whether the library has them). */
	int shim_widened;               /* running: 1 when its process, or one it started, had an answer
	                                   widened (a supportsFamily: stock said no and the shim yes, or a
	                                   raised maxThreadgroupMemoryLength); 0 when not; -1 unknown */
	int records_pruned;             /* records of processes no longer running (or of an earlier
	                                   boot) removed from record_dir by this look */
	/* Added by issue 37 (the size tells whether the library has them): what `brew services info`
	 * and `launchctl print` show of a job. */
	int last_exit_known;            /* 1 when launchd reported how the job last ended; 0 when it
	                                   never exited since it was loaded, or launchd was not asked */
	int last_exit_status;           /* with last_exit_known: its exit code, or minus the signal that
	                                   ended it (launchctl list's convention: -15 for SIGTERM) */
	char stdout_path[LM_AGENT_PATH_MAX]; /* the job's StandardOutPath in the guest ("" unknown) */
	char stderr_path[LM_AGENT_PATH_MAX]; /* its StandardErrorPath */
	/* Added by issue 48 (the size tells whether the library has them): a worker that came and
	 * went -- Ollama's inference runner, which exits after OLLAMA_KEEP_ALIVE idle. Its record is
	 * kept while a process of the agent that started it runs. */
	long widened_exited_pid;        /* shim_widened 1 by a process that has exited since (none of
	                                   the agent's live processes had an answer widened): its pid;
	                                   0 otherwise */
	double widened_exited_at;       /* ... its record's last write (epoch seconds): when it exited,
	                                   or its last news before */
	char widened_exited_exe[LM_AGENT_PATH_MAX]; /* ... its program ("" unknown) */
} lm_agent_info;

/* 0 when type is one of launchd's ProcessType values (Background, Standard, Adaptive,
 * Interactive); LM_EINVALID with a message naming them. */
LM_EXTERN(int) lm_agent_process_type_check(const char *type);

/* 0 when label is a valid agent label; LM_EINVALID with a message saying what is wrong. */
LM_EXTERN(int) lm_agent_label_check(const char *label);

#ifdef __cplusplus
}
#endif
#endif
