/* Internal (guestops): a workload in the guest -- what its records say for people
 * (workload_records.c) and run's workload in a process group of its own, stopped as a whole
 * (workload_session.c). */
#ifndef LM_GUEST_WORKLOAD_H
#define LM_GUEST_WORKLOAD_H

#include <stddef.h>

#include "lume-metal/flow.h"
#include "lume-metal/sys/ssh.h"
#include "context_internal.h"
#include "guest_codesign.h"

/* ---- workload_records.c: what a workload's records say, for people ---- */
typedef struct {
	char **lines;  /* one per process that loaded the shim: what it asked, what it was told */
	size_t count;  /* processes that loaded the shim (records read) */
	size_t took;   /* of them, those that had an answer widened (lm_activation_took) */
	long first_took; /* the index in lines of the first of those; -1 none */
	char *json;    /* the records, a JSON array ("[]" when none) */
	size_t dropped; /* records past the reader's limit: counted, not read */
	size_t nskipped; /* damaged or unreadable records, skipped */
	char **skipped;  /* NULL-terminated: the first of them said */
	char **stock_children; /* NULL-terminated: programs started with the shim that ran stock, and why */
} lm_workload_records;
/* Read dir's records (lm_activation_fetch) into r; nothing to dispose on failure. */
int lm_workload_records_read(lm_ssh *ssh, const char *dir, lm_workload_records *r);
void lm_workload_records_dispose(lm_workload_records *r);
/* *out: NULL when some process had its answers widened; else why no process loaded the shim (or
 * why it widened nothing), the likely cause first -- the program t, hardened (LM_HARDENED_*) or not, argv
 * as run. */
int lm_workload_records_why_not(const lm_workload_records *r, const lm_guest_facts *g, const lm_run_target *t,
    int hardened, const char *const *argv, size_t argc, char **out);
/* After a run: res->record_dir's records into res -- one line per process that loaded the shim, the
 * records as JSON, or why none did (no_shim) -- for the program t (hardened or not), argv as run. */
int lm_workload_records_result(lm_ssh *ssh, const lm_guest_facts *g, const lm_run_target *t, int hardened,
    const char *const *argv, size_t argc, lm_run_result *res);
/* A run's result before it runs (exit status 255 until it has one), once opts (NULL: the defaults)
 * and argv are checked; `what` names the command in messages ("run", "local run"). */
int lm_run_result_new(const char *what, const lm_workload_options *opts, size_t argc, lm_run_result **out);

/* ---- workload_session.c: run's workload as `tart exec` runs one ---- */
/* opts (NULL: the defaults) as this library's version of the struct, the fields it lacks 0;
 * LM_EINVALID for an unknown version or values out of range. */
int lm_workload_options_copy(lm_workload_options *dst, const lm_workload_options *opts);
/* Version 3's fields of opts (NULL, or of an older version: the defaults): --resign-copy, and the
 * agent's ProcessType ("Interactive" unless set). */
int lm_workload_resign_copy(const lm_workload_options *opts);
const char *lm_workload_process_type(const lm_workload_options *opts);
/* The mark lm_workload_group_command's wrapper prints on stdout before the exec: ESC ] WORD ;
 * TARGET BEL (an operating-system command a terminal ignores, should one ever get through). */
#define LM_WORKLOAD_MARK_WORD "lume-metal-group"
#define LM_WORKLOAD_MARK_HOLD 4096 /* output held while looking for it: a pseudo-terminal's echo of early input */
enum { LM_WORKLOAD_MARK_LOOKING, LM_WORKLOAD_MARK_FOUND, LM_WORKLOAD_MARK_ABSENT };
/* Reading the mark out of a stdout that arrives in pieces (workload_mark.c). */
typedef struct {
	int state;             /* LM_WORKLOAD_MARK_* */
	char launcher[16];     /* the workload's first process, as the mark said it ("" none or not believed) */
	int launcher_leads;    /* ... and it leads its process group (the mark's "-") */
	char hold[LM_WORKLOAD_MARK_HOLD]; /* stdout held while looking */
	size_t held;
} lm_workload_mark;
typedef void (*lm_workload_mark_emit)(void *data, const char *bytes, size_t len);
void lm_workload_mark_init(lm_workload_mark *m);
/* The next piece of stdout: what is not the mark goes to emit, in order, once it is known not to be
 * part of it. */
void lm_workload_mark_feed(lm_workload_mark *m, const char *bytes, size_t len, lm_workload_mark_emit emit, void *data);
/* The output ended: what is still held goes to emit. */
void lm_workload_mark_end(lm_workload_mark *m, lm_workload_mark_emit emit, void *data);
/* cmd (a command line from lm_shim_command) run so that the guest first says the kill target of
 * its process group ("-PGID") on stdout (ESC ] lume-metal-group;TARGET BEL, which
 * lm_guest_workload_run cuts out) and writes it to record_dir/process-group, then execs it
 * (free()). */
int lm_workload_group_command(const char *record_dir, const char *cmd, char **out);
/* The stop's script (workload_session.c says what it does), run as `/bin/sh -c SCRIPT
 * lume-metal-stop GROUP-FILE SIGNAL GRACE-TENTHS BEFORE LAUNCHER LEADS`; here for its tests. */
extern const char lm_workload_stop_script[];
/* The grace between a stop's signal and SIGKILL when the options give none (seconds). */
#define LM_WORKLOAD_STOP_GRACE 5.0
/* What a stop said (the script's lines): its exit status (outcome: 0 ended, 1 killed, 2 processes
 * left, 3 no group file, 4 nothing found; -1 not run) and the PIDs it named, space-separated. */
typedef struct {
	int outcome;
	int foreign;          /* the group file named something else than what was found */
	char target[32];      /* what the group file said ("-1234"; "invalid") */
	char groups[64];      /* the workload's process group(s), as found */
	char others[192];     /* found processes outside the group(s), signalled one by one */
	char left[192];       /* still running after SIGKILL */
	char records[192];    /* the run's activation records' PIDs still running, not found as its */
	char unverified[192]; /* nothing found: the processes of the group the file names */
} lm_workload_stopped;
/* The one stop of a workload and of its processes that left its group, found by their ancestry:
 * lm_workload_stop_script run over ssh -- a guest's connection, or ssh/'s local transport for
 * `lume-metal local run` -- with sig, grace seconds before SIGKILL, the connection's sessions from
 * before the workload's (before; "" for none), and the launching process (launcher, "" unknown;
 * launcher_leads when it leads its group). record_dir holds the group file. */
int lm_workload_stop(lm_ssh *ssh, const char *record_dir, int sig, double grace, const char *before,
    const char *launcher, int launcher_leads, lm_workload_stopped *out);
/* Run cmd in its own process group (recorded in res->record_dir) with o's input, pseudo-terminal
 * and signals, its output to ctx's on_output for vm; res->exit_status as a shell reports it. A
 * stop ends the group and the workload's processes that left it (found by their ancestry in the
 * guest's ps table). After a stop (res->stopped_by, res->stop_killed) LM_ECANCELED saying how the
 * workload ended and, when some may remain, their PIDs; LM_EREMOTE when processes of it are left
 * (the session then no longer asks should_cancel, so that what follows can clean up). */
int lm_guest_workload_run(lm_context *ctx, lm_ssh *ssh, const char *vm, const char *cmd, const lm_workload_options *o,
    lm_run_result *res);

#endif
