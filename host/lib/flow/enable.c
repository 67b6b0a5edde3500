/* lume-metal enable: the host preference, the VM at the right level, the bundle, the proof. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow_internal.h"
#include "vm_level.h"
#include "prefs_internal.h"
#include "random.h"
#include "vm_held.h"
#include "vm_process.h"
#include "vm_ready.h"
#include "guest_bundle.h"
#include "guest_machine.h"
#include "guest_shim.h"
#include "test_hooks.h"
#include "text.h"

/* Everything enable_one() learns and may need to undo. */
typedef struct {
	lm_context *ctx;
	lm_vm_manager *vmm;
	const lm_profile *profile;
	const lm_guest_owner *self; /* this state directory, as the guest files' owner */
	lm_flow_result *res;
	lm_vm_outcome *o;
	lm_ssh *ssh;
	lm_bundle *bundle;
	lm_guest_facts facts;
	char current[128];
	char run_id[33];    /* this run's mark on the VM's journal entry (see step_record) */
	char *seen;         /* an enabled VM's entry as step 1 left it, unmarked (see step_record) */
	int was_enabled;    /* the VM was enabled before this run: its install is left alone */
	int touched_guest;  /* this run created or changed guest files */
	double started_at;  /* when this tool last asked for the VM to start (journal, or this run) */
	int started_now;    /* ... and that was this run: the journal gets it */
	int stopped_running; /* this run stopped the running VM to restart it */
	int user_restart;   /* no VM manager: the user restarts the VM; the preference and the VM's
	                       "enabling" entry are kept for the next enable after that restart */
	int pref_set;       /* this run set the host preference (a failure from there on is undone) */
	int launched;       /* its start failed or was canceled after it launched the VM (lm_vm_start_launched) */
	lm_guest_facts known; /* an enabled VM's guest as the journal recorded it ... */
	int known_ok;         /* ... when it recorded one */
	int confirmed;      /* one round trip confirmed it all: facts, bundle hashes, probe, exercise */
	double seen_at;     /* when the manager's answer in o->info had arrived (epoch) */
	double process;     /* when the running VM's process started (lm_vm_process_started): 0 not
	                       visible, LM_VM_PROCESS_NO_MANAGER without a manager */
	double created;     /* when the VM's own files were created (lm_vm_created_at): 0 not known */
	lm_journal_gate *gate; /* the fleet's first round, not yet met there (step_preference_gated) */
	lm_host_pref_mode mode; /* the host preference mode (lm_options) */
	int as_is;          /* prove the VM as it is: the preference not touched, no restart for it
	                       (never; auto's first proof) */
	lm_pref_needed needed; /* what the proof showed of the preference's need */
	lm_guest_owner_seen owner_seen; /* the guest files' owner record as found (check_owner) ... */
	lm_guest_owner_verdict verdict; /* ... what this run does with it */
	int owner_checked;
	int owner_changed;  /* this run wrote its own record over owner_seen (undo puts that back) */
} enable_run;

/* Ask for the VM to start, noting the time first: its process starts after that moment. */
static int start_vm(enable_run *r)
{
	double t = lm_clock_epoch();
	int rc;

	if ((rc = lm_vm_start(r->vmm, r->o->vm)) < 0)
		return rc;
	r->started_at = t;
	r->started_now = 1;
	return 0;
}

/* fresh: r->o->info is the manager's answer of a moment ago, and when that said ready there is
 * nothing to wait for (after a start it still describes the VM from before). */
static int wait_ready(enable_run *r, const char *what, int fresh)
{
	const lm_options *opts = lm_context_options(r->ctx);
	char before[sizeof(r->o->info.ip)];
	double t;
	int rc;

	if ((rc = lm_step_begin(r->ctx, r->o, "ready", &t)) < 0)
		return rc;
	/* After a start, the address the VM had (its lease) is tried first (vm_ready.h). */
	snprintf(before, sizeof(before), "%s", r->started_now ? r->o->info.ip : "");
	if (!(fresh && lm_vm_info_ready(&r->o->info)) &&
	    (rc = lm_vm_wait_ready_at(r->vmm, r->o->vm, opts->ready_timeout, before, &r->o->info)) < 0)
		return rc;
	lm_step_add(r->ctx, r->o, "ready", t, "%s at %s, SSH reachable", what, r->o->info.ip);
	return 0;
}

/* An enabled VM whose guest the journal knows, re-enabled in one command (lm_guest_confirm): its
 * boot time, the bundle `current` names with every hash, and the probe stock and with the shim
 * and its exercise. Confirmed only when it is the boot the journal recorded (so the OS, its
 * version, the architecture and SIP, which change only across a reboot, are the recorded ones),
 * the home is the recorded one, `current` is this tool's bundle for that guest with every hash
 * right, and the probe ran stock and with an active shim; the profile's checks follow in the
 * steps as always. Anything else and the steps ask again, one question at a time, as for a VM
 * seen for the first time. Returns 1 when confirmed, 0 when not, < 0 when SSH failed. */
static int confirm_guest(enable_run *r)
{
	lm_guest_confirmation c;
	lm_shim_env se;
	int rc;

	if (!r->was_enabled || !r->known_ok || lm_context_options(r->ctx)->dry_run)
		return 0;
	if ((rc = lm_bundle_open(&r->bundle, r->ctx, &r->known)) < 0 ||
	    (rc = lm_shim_env_make(&se, &r->known, r->bundle->injection, r->bundle->shim, r->bundle->probe,
	    r->profile)) < 0) {
		lm_bundle_free(r->bundle);
		r->bundle = NULL;
		/* The steps meet the same error, and report it; out of memory need not recur there, and a
		 * run that went the long way for it would say other things than the confirmed one. */
		return rc == LM_ENOMEM ? rc : 0;
	}
	if ((rc = lm_guest_confirm(r->ssh, &r->known, r->bundle, &se, &c)) < 0)
		return rc;
	/* The same boot as recorded: the OS, its version, the architecture and SIP (which change only
	 * across a reboot) are the journal's. */
	if (c.facts_ok && c.facts.boot_time == r->known.boot_time && strcmp(c.facts.home, r->known.home) == 0 &&
	    strcmp(c.current, r->bundle->id) == 0 && c.sums_ok && c.stock != NULL && c.shimmed != NULL &&
	    lm_report_shim_active(c.shimmed)) {
		r->facts = c.facts;
		snprintf(r->current, sizeof(r->current), "%s", c.current);
		r->o->stock = c.stock;
		r->o->shimmed = c.shimmed;
		r->o->exercised = c.exercised;
		r->confirmed = 1;
		return 1;
	}
	lm_guest_confirmation_dispose(&c);
	lm_bundle_free(r->bundle); /* opened for the recorded guest: step_bundle opens this one's */
	r->bundle = NULL;
	return 0;
}

/* Forget what a proof (or confirm_guest) read: the VM is restarted, everything is asked again. */
static void forget_proof(enable_run *r)
{
	r->o->bundle_verified = 0;
	lm_report_free(r->o->stock);
	lm_report_free(r->o->shimmed);
	lm_report_free(r->o->exercised);
	r->o->stock = r->o->shimmed = r->o->exercised = NULL;
	lm_bundle_free(r->bundle);
	r->bundle = NULL;
	r->confirmed = 0;
}

/* Whose guest files these are (guest_owner.h), asked at the first contact: another state
 * directory's are refused before anything in the guest changes, and before a restart for them.
 * r->verdict says what step_bundle records. */
static int check_owner(enable_run *r)
{
	int rc;

	lm_guest_owner_seen_dispose(&r->owner_seen);
	if ((rc = lm_guest_owner_read(r->ssh, &r->facts, &r->owner_seen)) < 0 ||
	    (rc = lm_guest_owner_judge(&r->owner_seen, r->self, r->current[0] != '\0',
	    lm_context_options(r->ctx)->take_over, r->o->vm, "Nothing was changed in the guest.", &r->verdict)) < 0)
		return rc;
	r->owner_checked = 1;
	return 0;
}

/* What this run does to the owner record, for the bundle step's detail ("" when it stays). */
static void owner_said(const enable_run *r, char *buf, size_t len)
{
	char who[1400];
	int dry = lm_context_options(r->ctx)->dry_run;

	buf[0] = '\0';
	if (r->verdict == LM_GUEST_OWNER_OURS)
		return;
	lm_guest_owner_seen_describe(&r->owner_seen, who, sizeof(who));
	if (r->verdict == LM_GUEST_OWNER_ADOPT)
		lm_text_format_cut(buf, len, "; %s: %s this state directory's", who, dry ? "would be recorded as" :
		    "recorded as");
	else
		lm_text_format_cut(buf, len, "; %staken over from %s", dry ? "would be " : "", who);
}

static int connect_guest(enable_run *r, int try_confirm)
{
	double t;
	int rc = 0;

	lm_ssh_free(r->ssh);
	r->ssh = NULL;
	if ((rc = lm_step_begin(r->ctx, r->o, "guest", &t)) < 0)
		return rc;
	if ((rc = lm_flow_connect(r->ctx, r->o->vm, &r->o->info, &r->ssh)) < 0)
		return rc;
	if (try_confirm && (rc = confirm_guest(r)) < 0)
		return rc;
	if (rc == 0 && (rc = lm_guest_facts_read(r->ssh, &r->facts, r->current, sizeof(r->current))) < 0)
		return rc;
	if (!r->owner_checked && (rc = check_owner(r)) < 0)
		return rc;
	r->o->guest = r->facts;
	lm_step_add(r->ctx, r->o, "guest", t, "%s %s %s, booted at %.6f", r->facts.os, r->facts.os_version,
	    r->facts.arch, r->facts.boot_time);
	return 0;
}

/* The host preference itself, in the open journal: set (or found set), or, when the VM is proven
 * as it is, only read. */
static int preference_part(enable_run *r, lm_state *st)
{
	const lm_pref_setting *want = lm_profile_host_preference(r->profile);
	int rc;

	if (r->as_is)
		return lm_host_pref_status_locked(st, want, &r->res->pref);
	if ((rc = lm_host_pref_enable_locked(st, want, &r->res->pref)) < 0)
		return rc;
	if (r->res->pref.changed)
		r->res->pref_changed = r->pref_set = !lm_context_options(r->ctx)->dry_run;
	return 0;
}

/* Step 1's work inside the open journal: what the journal knows of the VM, the host preference set
 * (or found set), and the VM marked "enabling" so that a crash from here on is something the next
 * enable or rollback knows to finish. Nothing is saved here. */
static int preference_locked(enable_run *r, lm_state *st)
{
	lm_context *ctx = r->ctx;
	lm_vm_record rec;
	int rc;

	memset(&rec, 0, sizeof(rec));
	if ((rc = lm_vm_record_get(st, r->o->vm, &rec)) < 0)
		goto out;
	r->was_enabled = rec.known && rec.status == LM_VM_STATUS_ENABLED;
	r->started_at = rec.vm_started_at;
	r->known_ok = r->was_enabled && rec.guest.home[0] == '/';
	if (r->known_ok)
		r->known = rec.guest;
	if ((rc = preference_part(r, st)) < 0)
		goto out;
	if (!lm_context_options(ctx)->dry_run) {
		/* An enabled VM keeps its recorded profile (and mode) until this run has proven the new one. */
		if (!r->was_enabled) {
			lm_vm_record_set_status(&rec, LM_VM_STATUS_ENABLING);
			lm_vm_record_set_host_preference(&rec, r->mode, LM_PREF_NEEDED_UNKNOWN);
			if ((rc = lm_vm_record_set_profile(&rec, r->profile)) < 0)
				goto out;
		}
		/* Who runs it: only that manager's "no such VM" makes it gone (gc.c). A VM being enabled
		 * carries this run's mark; an enabled one is left unmarked and its entry remembered as it
		 * is, so that a re-enable that changes nothing here writes nothing (step_record). */
		if ((!r->was_enabled && (rc = lm_vm_record_set_mark(&rec, r->run_id)) < 0) ||
		    (rc = lm_vm_record_set_manager(&rec, r->o->info.manager)) < 0 || (rc = lm_vm_record_put(st, &rec)) < 0 ||
		    (r->was_enabled && (rc = lm_journal_vm_print(st, r->o->vm, &r->seen)) < 0))
			goto out;
	}
out:
	lm_vm_record_dispose(&rec);
	return rc;
}

static void preference_said(enable_run *r, double t)
{
	if (r->as_is)
		lm_step_add(r->ctx, r->o, "host-preference", t, "%s %s %s, not touched (%s): %s", r->res->pref.domain,
		    r->res->pref.key, r->res->pref.present ? r->res->pref.value : "absent",
		    lm_host_pref_mode_name(r->mode), r->mode == LM_HOST_PREF_NEVER ? "the shim alone" :
		    "the VM is proven as it is first; the preference is set, and the VM restarted, only if the "
		    "kernels the profile needs fail");
	else if (r->res->pref.changed)
		lm_step_add(r->ctx, r->o, "host-preference", t, "%s %s %s to %s (was: %s)", r->res->pref.domain,
		    r->res->pref.key, lm_context_options(r->ctx)->dry_run ? "would be set" : "set",
		    r->res->pref.written[0] ? r->res->pref.written : "the profile's value", r->res->pref.original);
	else
		lm_step_add(r->ctx, r->o, "host-preference", t, "%s %s already %s", r->res->pref.domain, r->res->pref.key,
		    r->res->pref.value);
}

/* Step 1 for one VM: its own journal transaction (locked: preference_locked, or preference_part
 * alone for auto's second proof, whose VM is already marked). */
static int step_preference(enable_run *r, int (*locked)(enable_run *, lm_state *))
{
	lm_state *st = NULL;
	double t;
	int rc;

	if ((rc = lm_step_begin(r->ctx, r->o, "host-preference", &t)) < 0)
		return rc;
	if ((rc = lm_journal_open_rw(&st, r->ctx)) < 0)
		return rc;
	if ((rc = locked(r, st)) == 0 && !lm_context_options(r->ctx)->dry_run)
		rc = lm_state_save(st);
	lm_state_close(st);
	if (rc == 0)
		preference_said(r, t);
	return rc;
}

/* A fleet's first round meets before step 1: each worker's first VM, locked and just asked for its
 * state. The last to come runs step 1 for all of them in one journal transaction (one locked,
 * synced write instead of one each in turn, which kept the last VM's restart waiting for the
 * other fifteen), and every one of them was seen running before the preference changed: none
 * needs its guest asked its boot time before the restart (step_vm_level). A worker whose VM
 * another process holds, or that failed before step 1, leaves the gate instead. */
static int preference_item(void *run, lm_state *st)
{
	return preference_locked(run, st);
}

static int step_preference_gated(enable_run *r)
{
	double t;
	int rc;

	if ((rc = lm_step_begin(r->ctx, r->o, "host-preference", &t)) < 0)
		return rc;
	rc = lm_journal_gate_pass(r->gate, r);
	r->gate = NULL;
	if (rc < 0)
		return rc;
	preference_said(r, t);
	return 0;
}

static void leave_gate(enable_run *r)
{
	lm_journal_gate_leave(r->gate);
	r->gate = NULL;
}

/* The restart rule's started_at: no process of the VM started before this tool's last start of it,
 * nor before its files were created (a clone made for a CI job after the change, vm_process.h). */
static double started_since(const enable_run *r)
{
	return r->started_at > r->created ? r->started_at : r->created;
}

/* Why a running VM is restarted, for the step's detail (the words are record/level.c's). */
#define restart_reason(r) lm_vm_restart_reason(lm_vm_status_held((r)->o->info.status), (r)->facts.boot_time, \
	(r)->process, (r)->res->pref.changed_at, (r)->seen_at)

/* Step 2: running, ready, and started after the preference took effect. */
static int step_vm_level(enable_run *r)
{
	const lm_host_pref_info *pref = &r->res->pref;
	int dry = lm_context_options(r->ctx)->dry_run;
	double t;
	int rc;

	/* r->o->info: enable_one's answer from the manager, a moment before the preference step. A
	 * paused or suspended VM counts as running since before the change (vm_held.h). */
	int held = lm_vm_status_held(r->o->info.status);
	if (strcmp(r->o->info.status, "running") != 0 && !held) {
		if ((rc = lm_step_begin(r->ctx, r->o, "start", &t)) < 0)
			return rc;
		if (dry) {
			lm_step_add(r->ctx, r->o, "start", t, "would start the VM (now %s)", r->o->info.status);
			return 0;
		}
		/* A stopped VM boots at the new level: no restart needed afterwards. A start that fails
		 * or is canceled after it launched the VM (a `tart run` spawned, Lume or UTM asked) is
		 * stopped again by the undo all the same (issue 48, item 6). */
		if ((rc = start_vm(r)) < 0) {
			r->launched = lm_vm_start_launched(r->vmm, r->o->vm);
			return rc;
		}
		r->o->started = 1;
		lm_step_add(r->ctx, r->o, "start", t, "started (was %s)", r->o->info.status);
		lm_test_kill_point("after-start");
		if ((rc = wait_ready(r, "booted", 0)) < 0)
			return rc;
		return connect_guest(r, 0);
	}
	/* The preference changed after the manager said the VM was running (this run, or another
	 * worker of it, changed it a moment ago): its guest booted before the change, the restart
	 * rule's clearest case, told by this machine's clock alone. Asking the guest its boot time
	 * would change nothing; the restarted guest is asked everything. */
	if (!held && (r->as_is || !(pref->changed_at > r->seen_at && !dry && lm_vm_manager_can_start(r->vmm)))) {
		if ((rc = wait_ready(r, "running", 1)) < 0 || (rc = connect_guest(r, 1)) < 0)
			return rc;
		/* The guest's boot time cannot tell a guest reboot from a VM restart; its process can,
		 * where its manager shows it (vm_process.h). */
		if ((rc = lm_vm_process_started(r->vmm, r->o->vm, &r->process)) < 0 ||
		    (rc = lm_vm_created_at(r->vmm, r->o->vm, &r->created)) < 0)
			return rc;
		/* Proven as it is: the level it runs at is the one to prove (the restart rule is the
		 * preference's, and the preference is not this proof's). */
		/* A dry run that would set the preference now plans the restart a real run makes: this VM
		 * runs already, so its process started before that change (the rule's clearest case). */
		if (!r->as_is && dry && pref->changed) {
			if ((rc = lm_step_begin(r->ctx, r->o, "restart", &t)) < 0)
				return rc;
			lm_step_add(r->ctx, r->o, "restart", t, "would restart: the VM runs already and the preference "
			    "would change now, after its process started");
			return 0;
		}
		if (r->as_is || !lm_vm_restart_needed(pref, r->facts.boot_time, started_since(r), r->process,
		    lm_context_options(r->ctx)->boot_margin))
			return 0;
		if (r->confirmed)
			forget_proof(r);
	}
	if ((rc = lm_step_begin(r->ctx, r->o, "restart", &t)) < 0)
		return rc;
	if (dry) {
		lm_step_add(r->ctx, r->o, "restart", t, "would restart%s%s%s: %s", held ? " the " : "",
		    held ? r->o->info.status : "", held ? " VM" : "", restart_reason(r));
		return 0;
	}
	if (!lm_vm_manager_can_start(r->vmm)) {
		/* No manager: the restart is the user's; nothing is installed in a guest that still runs
		 * at the stock level, and the preference stays set for the restart. */
		r->user_restart = 1;
		return lm_error_set(LM_ERROR, "%s: restart the VM now: %s, and without a VM manager lume-metal "
		    "cannot restart it; then enable it again", r->o->vm, restart_reason(r));
	}
	lm_ssh_free(r->ssh);
	r->ssh = NULL;
	r->stopped_running = 1; /* before: a stop that fails or is canceled may have stopped it all the same */
	if ((rc = lm_vm_stop(r->vmm, r->o->vm)) < 0)
		return rc;
	lm_test_kill_point("after-stop");
	if ((rc = start_vm(r)) < 0)
		return rc;
	r->o->restarted = 1;
	lm_step_add(r->ctx, r->o, "restart", t, "restarted%s%s%s: %s", held ? " the " : "", held ? r->o->info.status : "",
	    held ? " VM" : "", restart_reason(r));
	if ((rc = wait_ready(r, "rebooted", 0)) < 0)
		return rc;
	return connect_guest(r, 0);
}

/* Step 3: the bundle for this guest, verified in place or installed atomically. */
static int step_bundle(enable_run *r)
{
	double t;
	char why[512] = "", owner[1600];
	int ok = 0, rc;

	if ((rc = lm_step_begin(r->ctx, r->o, "bundle", &t)) < 0)
		return rc;
	if (!r->confirmed && (rc = lm_bundle_open(&r->bundle, r->ctx, &r->facts)) < 0)
		return rc;
	snprintf(r->o->bundle_id, sizeof(r->o->bundle_id), "%s", r->bundle->id);
	if (r->confirmed)
		ok = 1; /* every hash checked by confirm_guest */
	else if (strcmp(r->current, r->bundle->id) == 0 &&
	    (rc = lm_guest_bundle_verify(r->ssh, &r->facts, r->bundle, &ok, why, sizeof(why))) < 0)
		return rc;
	owner_said(r, owner, sizeof(owner));
	if (ok) {
		r->o->bundle_verified = 1;
		/* Files without a record (an older lume-metal's), or taken over: this state directory's now. */
		if (r->verdict != LM_GUEST_OWNER_OURS && !lm_context_options(r->ctx)->dry_run) {
			r->owner_changed = 1;
			if ((rc = lm_guest_owner_write(r->ssh, &r->facts, r->self)) < 0)
				return rc;
		}
		lm_step_add(r->ctx, r->o, "bundle", t, "%s installed and verified (%zu files), nothing uploaded%s",
		    r->bundle->id, r->bundle->nfiles + 1, owner);
		return 0;
	}
	if (lm_context_options(r->ctx)->dry_run) {
		lm_step_add(r->ctx, r->o, "bundle", t, "would install %s (%zu files)%s%s", r->bundle->id,
		    r->bundle->nfiles + 1, r->current[0] ? ", replacing the installed one" : "", owner);
		return 0;
	}
	lm_step_add(r->ctx, r->o, "bundle", t, "%s to install (%zu files)%s%s%s%s", r->bundle->id, r->bundle->nfiles + 1,
	    r->current[0] ? ", replacing the installed one" : "", why[0] ? ": " : "", why, owner);
	if ((rc = lm_step_begin(r->ctx, r->o, "install", &t)) < 0)
		return rc;
	r->touched_guest = 1;
	r->owner_changed = r->verdict != LM_GUEST_OWNER_OURS;
	if ((rc = lm_guest_bundle_install(r->ssh, &r->facts, r->bundle, r->self, &r->o->files_uploaded)) < 0)
		return rc;
	r->o->bundle_verified = 1;
	lm_step_add(r->ctx, r->o, "install", t, "%s: %d files uploaded and verified by SHA-256", r->bundle->id,
	    r->o->files_uploaded);
	lm_test_kill_point("after-install");
	return 0;
}

/* Step 4: the probe, stock and shimmed, against the profile's expectations. */
static int step_probe(enable_run *r)
{
	lm_guest_confirmation c;
	lm_shim_env se;
	char diag[512];
	double t;
	int rc, at_once = 0;

	if (!r->o->bundle_verified)
		return 0; /* dry run before installation: nothing to probe yet */
	if ((rc = lm_step_begin(r->ctx, r->o, "probe", &t)) < 0)
		return rc;
	if ((rc = lm_shim_env_make(&se, &r->facts, r->bundle->injection, r->bundle->shim, r->bundle->probe,
	    r->profile)) < 0)
		return rc;
	diag[0] = '\0';
	/* Stock, shimmed and the exercise in one command; when that does not answer in full, one
	 * question at a time, each failure said as its own (and the exercise as its own step). */
	if (!r->confirmed && (rc = lm_guest_probe_exercise(r->ssh, &se, &c)) < 0)
		return rc;
	if (!r->confirmed && c.stock != NULL && c.shimmed != NULL && lm_report_shim_active(c.shimmed)) {
		r->o->stock = c.stock;
		r->o->shimmed = c.shimmed;
		r->o->exercised = c.exercised;
		at_once = 1;
	} else if (!r->confirmed) {
		lm_guest_confirmation_dispose(&c);
		if ((rc = lm_guest_probe(r->ssh, &se, 0, &r->o->stock, NULL, 0)) < 0 ||
		    (rc = lm_guest_probe(r->ssh, &se, 1, &r->o->shimmed, diag, sizeof(diag))) < 0)
			return rc;
	}
	lm_workload_derive(r->o->stock, &r->o->stock_flags);
	lm_workload_derive(r->o->shimmed, &r->o->shimmed_flags);
	if (!lm_report_shim_active(r->o->shimmed))
		return lm_error_set(LM_EUNSUPPORTED, "guest unsupported, stock kept: the shim did not activate in "
		    "this guest (%s %s)%s%s. Its Metal no longer has what the shim hooks (a new macOS release "
		    "may have removed the private device class); no process is changed.", r->facts.os,
		    r->facts.os_version, diag[0] ? ": " : "", diag);
	if ((rc = lm_profile_check(r->profile, r->o->stock, r->o->shimmed)) < 0)
		return lm_error_prefix("the probe does not confirm profile %s: ", lm_profile_name(r->profile));
	lm_step_add(r->ctx, r->o, "probe", t, "stock Apple%d, %llu bytes; shimmed Apple%d, %llu bytes",
	    lm_report_apple_family(r->o->stock) - 1000,
	    (unsigned long long)lm_report_max_threadgroup_memory(r->o->stock),
	    lm_report_apple_family(r->o->shimmed) - 1000,
	    (unsigned long long)lm_report_max_threadgroup_memory(r->o->shimmed));
	/* The answers can come from the shim alone: believe the unlock only when its kernels run. */
	if (r->confirmed || at_once)
		return lm_flow_step_exercised(r->ctx, r->profile, r->o);
	return lm_flow_step_exercise(r->ctx, r->ssh, &se, r->profile, r->o);
}

/* Steps 2 to 4, by the mode (docs/lume-metal.md, "The host preference, measured"): always sets
 * the preference first (step 1) and proves once; never proves the VM as it is, the host left
 * alone; auto proves it as it is and, only when the kernels fail there, sets the preference,
 * restarts the VM and proves again. Whether the preference was needed goes to r->needed. */
static int prove(enable_run *r)
{
	int dry = lm_context_options(r->ctx)->dry_run, stock, rc;

	if ((rc = step_vm_level(r)) < 0 || (r->ssh != NULL && (rc = step_bundle(r)) < 0))
		return rc;
	if (r->ssh == NULL || !r->o->bundle_verified)
		return 0; /* no manager to restart it, or a dry run before installation */
	stock = r->as_is && lm_vm_at_stock_level(&r->res->pref, r->facts.boot_time, started_since(r), r->process,
	    lm_context_options(r->ctx)->boot_margin);
	if ((rc = step_probe(r)) == 0) {
		r->needed = stock ? LM_PREF_NEEDED_NO : LM_PREF_NEEDED_UNKNOWN;
		return 0;
	}
	if (rc != LM_ENOTPROVEN || !r->as_is)
		return rc;
	if (r->mode == LM_HOST_PREF_NEVER)
		return lm_error_prefix("%s: the shim alone (host preference mode never: the host was not touched): ",
		    r->o->vm);
	/* auto: the kernels fail on the VM as it is. The exercise step says so; then the preference. */
	lm_step_settle(r->ctx, r->o, "not proven with the shim alone: %s; %s", lm_error_last()->message,
	    dry ? "the host preference would be set and the VM restarted" :
	    "the host preference is set and the VM restarted");
	lm_error_clear();
	forget_proof(r);
	r->as_is = 0;
	if ((rc = lm_vm_get(r->vmm, r->o->vm, &r->o->info)) < 0)
		return rc;
	r->seen_at = lm_clock_epoch();
	if ((rc = step_preference(r, preference_part)) < 0 || (rc = step_vm_level(r)) < 0 || dry || r->ssh == NULL ||
	    (rc = step_bundle(r)) < 0 || (rc = step_probe(r)) < 0)
		return rc;
	r->needed = stock ? LM_PREF_NEEDED_YES : LM_PREF_NEEDED_UNKNOWN;
	return 0;
}

/* Whether the VM's entry (rec, just read) is still this run's: marked by it, or (an enabled VM,
 * left unmarked) printed as step 1 left it. */
static int entry_unchanged(enable_run *r, lm_state *st, const lm_vm_record *rec, int *same)
{
	char *now = NULL;
	int rc;

	*same = 0;
	if (r->seen == NULL) {
		*same = lm_vm_record_marked(rec, r->run_id);
		return 0;
	}
	if ((rc = lm_journal_vm_print(st, r->o->vm, &now)) < 0)
		return rc;
	*same = strcmp(now, r->seen) == 0;
	free(now);
	return 0;
}

/* Step 5: the journal says the VM is enabled, with what was installed and what the probe saw. */
static int step_record(enable_run *r)
{
	lm_state *st = NULL;
	lm_vm_record rec;
	double t;
	int rc, same;

	memset(&rec, 0, sizeof(rec));
	if (lm_context_options(r->ctx)->dry_run)
		return 0;
	if ((rc = lm_step_begin(r->ctx, r->o, "record", &t)) < 0)
		return rc;
	if ((rc = lm_journal_open_rw(&st, r->ctx)) < 0)
		return rc;
	/* Only over the record this run marked, or over an enabled VM's entry exactly as step 1 left
	 * it: had anything else removed or replaced it meanwhile (a rollback that restored the
	 * preference), recording "enabled" would lose that update. */
	if ((rc = lm_vm_record_get(st, r->o->vm, &rec)) < 0 || (rc = entry_unchanged(r, st, &rec, &same)) < 0)
		goto out;
	if (!same) {
		rc = lm_error_set(LM_ECONFLICT, "the state journal's entry for %s changed while this enable ran "
		    "(another process rolled it back); nothing was recorded", r->o->vm);
		goto out;
	}
	lm_vm_record_set_status(&rec, LM_VM_STATUS_ENABLED);
	lm_vm_record_set_enabled_at(&rec, lm_clock_epoch());
	lm_vm_record_set_guest(&rec, &r->facts);
	/* A re-enable by auto that measured nothing (the VM already at the level the preference gives)
	 * keeps what its earlier proof measured. */
	if (r->needed == LM_PREF_NEEDED_UNKNOWN && r->was_enabled && r->mode == LM_HOST_PREF_AUTO &&
	    rec.pref_mode == r->mode)
		r->needed = rec.pref_needed;
	lm_vm_record_set_host_preference(&rec, r->mode, r->needed);
	if (r->started_now)
		lm_vm_record_set_started_at(&rec, r->started_at);
	if ((rc = lm_vm_record_set_mark(&rec, "")) < 0 || (rc = lm_vm_record_set_profile(&rec, r->profile)) < 0 ||
	    (rc = lm_vm_record_set_address(&rec, r->o->info.ip)) < 0 ||
	    (rc = lm_vm_record_set_bundle(&rec, r->bundle->id, r->bundle->platform, r->bundle->injection,
	        r->bundle->shim, r->bundle->probe)) < 0 ||
	    (rc = lm_vm_record_set_probe(&rec, lm_clock_epoch(), r->o->stock, r->o->shimmed, r->o->exercised)) < 0 ||
	    (rc = lm_vm_record_put(st, &rec)) < 0)
		goto out;
	rc = lm_state_save(st);
	lm_step_add(r->ctx, r->o, "record", t, "state journal updated");
out:
	lm_vm_record_dispose(&rec);
	lm_state_close(st);
	return rc;
}

/* The session an undo works through, never asked to cancel: the one this run had, or, when a
 * canceled or failed command left it unusable, a new connection (the guest is still running; only
 * this session is lost). */
static int undo_session(enable_run *r)
{
	int rc;

	if (!lm_ssh_usable(r->ssh)) {
		lm_ssh_free(r->ssh);
		r->ssh = NULL;
		if ((rc = lm_flow_connect(r->ctx, r->o->vm, &r->o->info, &r->ssh)) < 0)
			return rc;
	}
	lm_ssh_set_cancelable(r->ssh, 0);
	return 0;
}

/* The guest files this run put there go, even when the run was canceled. */
static int remove_guest_files(enable_run *r, char *said, size_t said_len)
{
	int rc;

	if ((rc = undo_session(r)) < 0)
		return rc;
	return lm_guest_remove_all(r->ssh, &r->facts, r->bundle, said, said_len);
}

/* The owner record as this run found it (its files stay): another state directory's again, or none. */
static void restore_owner(enable_run *r)
{
	if (undo_session(r) == 0 && lm_guest_owner_restore(r->ssh, &r->facts, &r->owner_seen) == 0)
		lm_outcome_append(r->o, "; the guest files' owner record put back as it was");
	else
		lm_outcome_append(r->o, "; the guest files' owner record could NOT be put back (%s)", lm_error_last()->message);
}

/* A failed or interrupted enable leaves the VM as it was found: no half-installed guest, a VM it
 * started stopped again, one it stopped running again, and a preference that no enabled VM needs
 * any more given back. The outcome's message ends with what was left. */
static void undo(enable_run *r)
{
	lm_state *st = NULL;
	lm_vm_record rec;
	lm_host_pref_info before, restored;
	lm_pref_fate fate;
	char said[2048];
	int pref_restored = 0, rc;

	if (lm_context_options(r->ctx)->dry_run)
		return;
	if (!r->was_enabled && r->touched_guest && r->ssh != NULL) {
		if ((rc = remove_guest_files(r, said, sizeof(said))) >= 0)
			lm_outcome_append(r->o, "; guest files%s%s", rc == 0 ? " removed" : ": ", rc == 0 ? "" : said);
		else
			lm_outcome_append(r->o, "; guest files could NOT be removed (%s)", lm_error_last()->message);
	} else {
		if (r->was_enabled)
			lm_outcome_append(r->o, "; the previous installation is kept");
		if (r->owner_changed)
			restore_owner(r);
	}
	lm_ssh_free(r->ssh);
	r->ssh = NULL;
	if (lm_journal_open_rw(&st, r->ctx) == 0) {
		/* Only this run's own mark is taken back (see step_record). */
		if (lm_vm_record_get(st, r->o->vm, &rec) == 0 && lm_vm_record_marked(&rec, r->run_id)) {
			if (!(r->was_enabled || r->user_restart))
				lm_journal_forget_vm(st, r->o->vm);
			else if (lm_vm_record_set_mark(&rec, "") < 0 || lm_vm_record_put(st, &rec) < 0)
				lm_outcome_append(r->o, "; the state journal still carries this run's mark (%s)",
				    lm_error_last()->message);
		}
		lm_vm_record_dispose(&rec);
		if (r->as_is) {
			/* never, or auto before the preference was needed: the host was not touched */
		} else if (r->user_restart && r->res->pref.recorded) {
			lm_outcome_append(r->o, "; host preference kept for the restart (a rollback of %s gives it back)",
			    r->o->vm);
		} else if (r->res->pref.recorded) {
			/* prefs' one "last VM out" rule, as rollback's. */
			if (lm_host_pref_last_out_locked(st, &before, &restored, &fate) < 0) {
				lm_outcome_append(r->o, "; host preference NOT restored (%s)", lm_error_last()->message);
			} else if (fate == LM_PREF_RESTORED) {
				/* The original as this run saw it recorded (the restored info has no record left). */
				lm_outcome_append(r->o, "; host preference restored (%s)",
				    r->res->pref.original[0] ? r->res->pref.original : "as it was");
				r->res->pref = restored;
				pref_restored = 1;
			} else if (fate == LM_PREF_KEPT) {
				lm_outcome_append(r->o, "; host preference kept (the fleet keeps the host unlocked)");
			} else if (fate == LM_PREF_NEEDED) {
				lm_outcome_append(r->o, "; host preference kept (other VMs are enabled)");
			}
		}
		if (lm_state_save(st) < 0)
			lm_outcome_append(r->o, "; state not saved (%s)", lm_error_last()->message);
		lm_state_close(st);
	} else {
		lm_outcome_append(r->o, "; state journal not updated (%s)", lm_error_last()->message);
	}
	/* The VM itself, after the preference: a VM started again boots at the level now in effect. */
	if (r->o->started || r->launched) {
		rc = lm_vm_launch_undo(r->vmm, r->o->vm, said, sizeof(said));
		if (rc == 0)
			lm_outcome_append(r->o, "; VM stopped again (it was stopped%s%s%s)",
			    r->launched ? "; its start was under way when the command ended" : "", said[0] ? "; " : "",
			    said);
		else
			lm_outcome_append(r->o, "; the VM could NOT be stopped again (%s)%s%s", lm_error_last()->message,
			    said[0] ? "; " : "", said);
	} else if (r->stopped_running && !r->o->restarted) {
		if (lm_vm_start_undo(r->vmm, r->o->vm) == 0)
			lm_outcome_append(r->o, "; VM running again (it was running)");
		else
			lm_outcome_append(r->o, "; the VM could NOT be started again (%s)", lm_error_last()->message);
	} else if (r->o->restarted && pref_restored) {
		if (lm_vm_stop_undo(r->vmm, r->o->vm) == 0 && lm_vm_start_undo(r->vmm, r->o->vm) == 0)
			lm_outcome_append(r->o, "; VM restarted again off the unlocked level");
		else
			lm_outcome_append(r->o, "; the VM still runs at the unlocked level (restart failed: %s)",
			    lm_error_last()->message);
	}
}

static int enable_one(lm_context *ctx, lm_vm_manager *vmm, const lm_profile *profile, const lm_guest_owner *self,
    lm_flow_result *res, lm_vm_outcome *o, lm_journal_gate *gate)
{
	enable_run r;
	lm_vm_lock *lock = NULL;
	int rc;

	memset(&r, 0, sizeof(r));
	r.ctx = ctx;
	r.vmm = vmm;
	r.profile = profile;
	r.self = self;
	r.res = res;
	r.o = o;
	snprintf(o->profile, sizeof(o->profile), "%s", lm_profile_name(profile));
	r.gate = gate;
	r.mode = o->pref_mode = lm_context_options(ctx)->host_preference;
	r.as_is = r.mode != LM_HOST_PREF_ALWAYS;
	/* The whole operation under the VM's lock: a concurrent enable or rollback of the same VM waits
	 * (at the fleet's gate, a VM another process holds is waited for alone). */
	if ((rc = lm_context_check_cancel(ctx, "before anything was changed")) == 0 && gate != NULL &&
	    (rc = lm_vm_lock_take(&lock, ctx, o->vm, "enable", LM_VM_LOCK_TRY)) == LM_ELOCKED) {
		leave_gate(&r);
		rc = 0;
	}
	if (rc < 0 || (lock == NULL && (rc = lm_vm_lock_take(&lock, ctx, o->vm, "enable", 0)) < 0) ||
	    (rc = lm_random_hex(r.run_id, 16)) < 0 || (rc = lm_vm_get(vmm, o->vm, &o->info)) < 0 ||
	    (r.seen_at = lm_clock_epoch(), rc = r.gate != NULL ? step_preference_gated(&r) :
	    step_preference(&r, preference_locked)) < 0) {
		leave_gate(&r);
		lm_outcome_fail(ctx, o, rc);
		if (r.pref_set)
			undo(&r); /* the step failed after it set the preference */
		goto out;
	}
	lm_test_kill_point("after-preference");
	/* Each step begins by asking should_cancel (lm_step_begin); a canceled step is undone below. */
	if ((rc = prove(&r)) < 0 || (r.ssh != NULL && (rc = step_record(&r)) < 0)) {
		lm_outcome_fail(ctx, o, rc);
		undo(&r);
		goto out;
	}
	o->already_enabled = r.was_enabled && !o->restarted && !o->started && o->files_uploaded == 0 &&
	    !res->pref_changed && !r.owner_changed;
	o->pref_needed = r.needed;
	/* Enabled and recorded, but not to be reported without its message: out of memory fails it. */
	rc = lm_outcome_message(ctx, o, "%s: %s%s", o->vm,
	    lm_context_options(ctx)->dry_run ? "plan ready (dry run: nothing changed)" :
	    o->already_enabled ? "already enabled, verified" : "enabled",
	    lm_context_options(ctx)->dry_run ? "" : r.needed == LM_PREF_NEEDED_NO ?
	    " with the shim alone (the host preference was not needed)" : r.needed == LM_PREF_NEEDED_YES ?
	    " (the host preference was needed: the kernels failed with the shim alone)" : "");
out:
	free(r.seen);
	lm_guest_owner_seen_dispose(&r.owner_seen);
	lm_bundle_free(r.bundle);
	lm_ssh_free(r.ssh);
	lm_vm_lock_release(lock);
	return rc;
}

/* One worker of a fleet run (parts.c's pool): its own view of the preference, merged into the
 * result when every worker is done, and the gate its first VM meets the others' at. */
typedef struct {
	lm_journal_gate *gate; /* NULL: a worker alone, or its first VM has come */
	lm_flow_result local;  /* pref and pref_changed only */
} enable_worker;

typedef struct {
	const lm_profile *profile;
	const lm_guest_owner *self;
	lm_context *ctx;
	enable_worker *workers;
} enable_fleet;

static void enable_worker_one(void *data, size_t worker, lm_vm_manager *vmm, size_t i, lm_vm_outcome *o)
{
	enable_fleet *f = data;
	enable_worker *w = &f->workers[worker];

	(void)i;
	(void)enable_one(f->ctx, vmm, f->profile, f->self, &w->local, o, w->gate);
	w->gate = NULL;
}

/* A worker that never came to a VM is not waited for at the gate. */
static void enable_worker_gone(void *data, size_t worker)
{
	enable_fleet *f = data;

	lm_journal_gate_leave(f->workers[worker].gate);
	f->workers[worker].gate = NULL;
}

int lm_flow_enable(lm_context *ctx, const char *const *vms, size_t n, const lm_profile *profile,
    int jobs, lm_flow_result **out)
{
	lm_flow_result *result;
	enable_worker workers[LM_FLOW_MAX_JOBS];
	enable_fleet fleet;
	lm_vm_manager *vmm = NULL;
	lm_journal_gate *gate = NULL;
	lm_guest_owner self;
	char id[LM_STATE_ID_SIZE];
	double t = lm_clock_monotonic();
	size_t i, nworkers;
	int rc;

	if ((rc = lm_flow_result_new(out)) < 0)
		return rc;
	result = *out;
	if ((rc = lm_flow_open_outcomes(result, vms, n)) < 0)
		return rc;
	if (n == 0)
		return lm_error_set(LM_EINVALID, "enable: name at least one VM");
	/* A given bundle is checked before any VM is touched; so is this state directory's identity,
	 * which the guest files record as their owner (made now, unless in a dry run). */
	if ((rc = lm_bundle_check(ctx)) < 0 ||
	    (rc = lm_state_identity(ctx, !lm_context_options(ctx)->dry_run, id)) < 0 ||
	    (rc = lm_guest_owner_make(&self, id, lm_context_state_dir(ctx))) < 0)
		return lm_flow_fail_all(ctx, result, rc);
	nworkers = lm_flow_pool_size(jobs, n);
	memset(workers, 0, sizeof(workers));
	/* A preference no VM would read is refused once, before any VM is touched (never writes none). */
	if (!lm_context_options(ctx)->force_user_mismatch &&
	    lm_context_options(ctx)->host_preference != LM_HOST_PREF_NEVER &&
	    lm_host_pref_status(ctx, lm_profile_host_preference(profile), &result->pref) == 0 &&
	    (rc = lm_prefs_check_user(ctx, &result->pref, 1)) < 0)
		return lm_flow_fail_all(ctx, result, rc);
	/* The first worker's manager is opened here, so that an unreachable Lume is one clear error. */
	if ((rc = lm_vm_manager_open(&vmm, ctx)) < 0)
		return lm_flow_fail_all(ctx, result, rc);
	lm_flow_sweep_others(ctx, vmm, result);
	/* Without a gate (no memory), each worker writes its own transaction. */
	if (nworkers > 1)
		(void)lm_journal_gate_new(&gate, ctx, nworkers, preference_item, !lm_context_options(ctx)->dry_run);
	for (i = 0; i < nworkers; i++)
		workers[i].gate = gate;
	fleet.profile = profile;
	fleet.self = &self;
	fleet.ctx = ctx;
	fleet.workers = workers;
	(void)lm_flow_pool_run(ctx, result, nworkers, vmm, enable_worker_one, enable_worker_gone, &fleet);
	lm_journal_gate_free(gate);
	for (i = 0; i < nworkers; i++)
		result->pref_changed |= workers[i].local.pref_changed;
	lm_vm_manager_free(vmm);
	if ((rc = lm_host_pref_status(ctx, lm_profile_host_preference(profile), &result->pref)) == LM_ENOMEM)
		return rc; /* the document would show no preference: out of memory, not a preference gone */
	if (rc < 0)
		lm_log(ctx, LM_LOG_WARN, "could not read the host preference back: %s", lm_error_last()->message);
	result->seconds = lm_clock_monotonic() - t;
	return lm_flow_summary_rc(result);
}
