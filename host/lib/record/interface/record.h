/* Internal: the state journal's records, typed (docs/state-format.md).
 *
 * The journal is one JSON document that the state module keeps locked and writes atomically;
 * this module is the only one that knows its layout and its keys. Every key of a VM's record is
 * in one table (vm_record.c), decoded and encoded side by side; the host preference's record
 * likewise (pref_record.c). Other modules read a record into a struct, change it through the
 * setters (which enforce the rules and note what changed), and put it back: only the parts a
 * setter changed are written, so keys this version does not know stay as they were.
 *
 * The journal document (schema 1):
 *   { "schema": 1, "preference": { ... } | absent, "vms": { "<name>": { ... } } }
 */
#ifndef LM_RECORD_H
#define LM_RECORD_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "lume-metal/agent.h"
#include "lume-metal/flow.h"
#include "lume-metal/prefs.h"
#include "lume-metal/profile.h"
#include "lume-metal/report.h"
#include "state.h"

/* ---- journal.c: the document ---- */

/* lm_state_open_ex() and the document's layout checked: a "schema" this version knows (a newer
 * one is LM_ENEWER, none LM_ECORRUPT with the state module's copy), "vms" and "preference"
 * objects when present, every VM's name valid (else LM_ECORRUPT). A missing journal reads as
 * the empty document. */
int lm_journal_open(lm_state **out, lm_context *ctx, unsigned flags, double lock_timeout);
/* The same with the default timeout, exclusive (changes are saved with lm_state_save). */
int lm_journal_open_rw(lm_state **out, lm_context *ctx);

/* The VMs the journal records, in its order (NULL-terminated; lm_strv_free). */
int lm_journal_vm_names(lm_state *st, char ***out);
int lm_journal_has_vm(lm_state *st, const char *name);
/* Drop a VM's record (nothing when there is none). */
void lm_journal_forget_vm(lm_state *st, const char *name);
/* A VM's record as the journal holds it, printed (*out: free; "" when there is none): two prints
 * are the same exactly when nothing changed the record in between. */
int lm_journal_vm_print(lm_state *st, const char *name, char **out);
/* Drop the records of the n VMs in `sorted` (lm_strv_sort order) in one pass over the journal;
 * present[i] (when not NULL) is set for each that had one. How many were dropped. */
size_t lm_journal_forget_vms(lm_state *st, char *const *sorted, size_t n, unsigned char *present);
/* ---- journal_gate.c: several threads' changes in one transaction ---- */

/* `workers` threads each come once (lm_journal_gate_pass) or leave (lm_journal_gate_leave); the
 * last of them opens the journal, makes every change that came with fn(item, st) in the order
 * they came, saves once (when `save`) and lets them all go on. pass returns fn's result for its
 * item, with its error message set in the caller's thread; a journal that cannot be opened or
 * saved, or a cancel first, fails every item. A gate is used once. */
typedef struct lm_journal_gate lm_journal_gate;
typedef int (*lm_journal_gate_fn)(void *item, lm_state *st);
int lm_journal_gate_new(lm_journal_gate **out, lm_context *ctx, size_t workers, lm_journal_gate_fn fn, int save);
int lm_journal_gate_pass(lm_journal_gate *g, void *item);
void lm_journal_gate_leave(lm_journal_gate *g); /* NULL is fine */
size_t lm_journal_gate_waiting(lm_journal_gate *g); /* items that came and wait for the transaction */
void lm_journal_gate_free(lm_journal_gate *g);  /* NULL is fine */

/* ---- vm_record.c: one VM's record ---- */

typedef enum {
	LM_VM_STATUS_NONE = 0,   /* no status, or one this version does not know */
	LM_VM_STATUS_ENABLING,   /* an enable is under way (or was interrupted) */
	LM_VM_STATUS_ENABLED,
	LM_VM_STATUS_ROLLING_BACK /* a rollback is under way (or did not finish): written before it
	                             touches the guest, so the next rollback knows to finish it */
} lm_vm_status;

/* One LaunchAgent installed by `agent install` (docs/state-format.md, "agents"). */
typedef struct {
	char label[LM_AGENT_LABEL_MAX];
	char plist[LM_AGENT_PATH_MAX];   /* its path in the guest */
	char program[LM_AGENT_PATH_MAX]; /* the workload as resolved in the guest */
	char **argv;                     /* its arguments after the program (NULL-terminated) */
	int keep_alive, run_at_load;
	double installed_at;
} lm_vm_record_agent;

#define LM_VM_RECORD_MARK_MAX 33
typedef struct {
	char name[LM_VM_NAME_MAX];
	int known;                       /* the journal has a record of the VM */
	lm_vm_status status;
	char profile_name[LM_PROFILE_NAME_MAX + 1];
	lm_profile *profile;             /* the profile it was enabled with (its JSON, parsed); owned */
	char enable_run[LM_VM_RECORD_MARK_MAX]; /* the mark of the enable working on it ("" none) */
	char manager[32];                /* the VM manager that ran it ("" unknown) */
	double enabled_at;               /* when it was first enabled (0: never) */
	char address[64];                /* its IPv4 address when last enabled */
	double vm_started_at;            /* when lume-metal last asked for it to start (0: never) */
	lm_guest_facts guest;            /* its guest when last seen (empty: never seen) */
	struct {
		char id[LM_BUNDLE_ID_MAX];
		char platform[64];
		char injection[64];          /* "DYLD_INSERT_LIBRARIES", "LD_PRELOAD" */
		char shim[256];
		char probe[256];
	} bundle;                        /* the installed bundle */
	double probed_at;                /* the last probe, and its reports (each may be NULL) */
	lm_report *stock, *shimmed, *exercised;
	size_t nagents;
	lm_vm_record_agent *agents;
	lm_host_pref_mode pref_mode;     /* the host preference mode it was enabled with (absent: always) */
	lm_pref_needed pref_needed;      /* whether it needed the preference (absent: unknown) */
	unsigned changed;                /* the parts the setters changed (vm_record.c) */
} lm_vm_record;

/* The record of VM `name` in an open journal (r->known 0 when there is none). A value that does
 * not fit its field or breaks its rule is LM_ECORRUPT, never cut; a stored report that no longer
 * parses reads as absent. lm_vm_record_dispose() frees what it holds. */
int lm_vm_record_get(lm_state *st, const char *name, lm_vm_record *r);
/* Write what the setters changed into the journal document (creating the VM's record); the
 * caller saves. */
int lm_vm_record_put(lm_state *st, const lm_vm_record *r);
/* lm_vm_record_get() through a read-only open of the journal. */
int lm_vm_record_load(lm_context *ctx, const char *name, lm_vm_record *r);
void lm_vm_record_dispose(lm_vm_record *r);

/* VMs whose record is "enabled", "enabling" or "rolling-back", other than `except` (may be NULL), and that may
 * need the host preference: all but those proven without it (pref_needed LM_PREF_NEEDED_NO). Their names, ", " between them, go to names (when not
 * NULL; a list too long ends in "..."). */
int lm_vm_record_live(lm_state *st, const char *except, char *names, size_t len);

/* The same on one record's JSON object (tests and fuzzing; `name` only names it). */
int lm_vm_record_decode(const cJSON *entry, const char *name, lm_vm_record *r);
int lm_vm_record_encode(const lm_vm_record *r, cJSON *entry);

/* "enabling", "enabled", "rolling-back"; "" for none. */
const char *lm_vm_record_status_name(lm_vm_status status);
/* The status alone, from a record's JSON object (a record damaged elsewhere still has one). */
lm_vm_status lm_vm_record_status_of(const cJSON *entry);
/* The manager alone, likewise ("" when none or unreadable). */
void lm_vm_record_manager_of(const cJSON *entry, char *buf, size_t size);
/* The VMs the journal records, sorted (lm_strv_sort order), with the manager each record names
 * ("" none or unreadable) at the same index (NULL-terminated; lm_strv_free both). */
int lm_vm_record_managers(lm_state *st, char ***names, char ***managers);

/* Setters: each checks its rule and marks its part changed. */
void lm_vm_record_set_status(lm_vm_record *r, lm_vm_status status);
int lm_vm_record_set_profile(lm_vm_record *r, const lm_profile *profile);
/* An enable's mark (a fresh random hex string), or "" to take it away. */
int lm_vm_record_set_mark(lm_vm_record *r, const char *mark);
/* Whether the record carries this mark. */
int lm_vm_record_marked(const lm_vm_record *r, const char *mark);
/* "" leaves the recorded manager as it is (an unknown manager proves nothing). */
int lm_vm_record_set_manager(lm_vm_record *r, const char *manager);
/* Only the first enable's time is kept. */
void lm_vm_record_set_enabled_at(lm_vm_record *r, double when);
int lm_vm_record_set_address(lm_vm_record *r, const char *address);
void lm_vm_record_set_started_at(lm_vm_record *r, double when);
void lm_vm_record_set_guest(lm_vm_record *r, const lm_guest_facts *guest);
int lm_vm_record_set_bundle(lm_vm_record *r, const char *id, const char *platform, const char *injection,
    const char *shim, const char *probe);
/* The host preference mode it was enabled with, and whether the preference was needed. */
void lm_vm_record_set_host_preference(lm_vm_record *r, lm_host_pref_mode mode, lm_pref_needed needed);
/* Whether the record says the VM may rely on the host preference (not proven without it). */
int lm_vm_record_uses_preference(const lm_vm_record *r);
/* The last probe: copies of the reports (NULL: none). */
int lm_vm_record_set_probe(lm_vm_record *r, double at, const lm_report *stock, const lm_report *shimmed,
    const lm_report *exercised);
/* Record an agent (replacing one with the same label) / forget one (0 when it was not listed). */
int lm_vm_record_add_agent(lm_vm_record *r, const lm_agent_spec *spec, const lm_agent_info *info);
int lm_vm_record_remove_agent(lm_vm_record *r, const char *label);
const lm_vm_record_agent *lm_vm_record_find_agent(const lm_vm_record *r, const char *label);
/* An agent's public view (state "unknown": launchd not asked). */
void lm_vm_record_agent_info(const lm_vm_record_agent *a, lm_agent_info *info);

/* ---- agent_journal.c: a VM's agents in the journal, each call one transaction ---- */

/* Record the agent in the VM's entry (replacing one with its label); LM_ENOTENABLED when the
 * journal does not know the VM. */
int lm_journal_agent_add(lm_context *ctx, const char *vm, const lm_agent_spec *spec, const lm_agent_info *a);
/* Forget the agent a->label names (a VM the journal does not know: nothing to do). */
int lm_journal_agent_forget(lm_context *ctx, const char *vm, const lm_agent_info *a);
/* The entry as it was before an install (a copy read under the VM's lock), or forgotten when
 * there was none (was NULL). */
int lm_journal_agent_put_back(lm_context *ctx, const char *vm, const lm_vm_record_agent *was, const lm_agent_info *a);

/* ---- pref_record.c: the host preference's record ---- */

typedef enum { LM_PREF_ORIGINAL_ABSENT_FILE, LM_PREF_ORIGINAL_ABSENT_KEY, LM_PREF_ORIGINAL_VALUE } lm_pref_original;

/* A value as the journal keeps it: its type and a readable form for people, and the base64 of a
 * one-value binary plist, which is what is restored. */
typedef struct {
	char *type, *display, *plist;
} lm_pref_record_value;

typedef struct {
	char *store;                 /* "cfpreferences" or "plist:PATH" */
	char *domain, *key;
	lm_pref_original original_state;
	lm_pref_record_value original; /* LM_PREF_ORIGINAL_VALUE */
	lm_pref_record_value written;
	char **created_dirs;         /* absolute paths, outermost first (NULL-terminated), or NULL */
	double changed_at;
	int kept;                    /* the fleet keeps the host unlocked */
} lm_pref_record;

/* *have = 0 when the journal has none. A damaged record is LM_ECORRUPT through the state module
 * (the file kept, a copy made). */
int lm_pref_record_get(lm_state *st, lm_pref_record *rec, int *have);
/* Replace the record (not saved). */
int lm_pref_record_put(lm_state *st, const lm_pref_record *rec);
/* Only its "written" value / its "kept" flag. */
int lm_pref_record_set_written(lm_state *st, const lm_pref_record_value *written);
int lm_pref_record_set_kept(lm_state *st);
void lm_pref_record_remove(lm_state *st);
/* Whether the journal holds one (a damaged one counts). */
int lm_pref_record_present(lm_state *st);
void lm_pref_record_dispose(lm_pref_record *rec);

#endif
