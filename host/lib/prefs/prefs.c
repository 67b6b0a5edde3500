/* The host preference manager: set the preference, record the exact previous state in the
 * journal the first time, restore it exactly (docs/preferences.md).
 *
 * Crash ordering: enable records the original in the journal before it writes the preference;
 * disable restores the preference before it drops the record. So after a kill at any point the
 * journal either has no record and the preference is untouched, or has the record and the
 * preference holds the original or our value — the next enable or disable finishes the job. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "text.h"
#include "context_internal.h"
#include "error_internal.h"
#include "fs.h"
#include "pref_default.h"
#include "prefs_store.h"
#include "record.h"
#include "str.h"


void lm_host_pref_default(lm_pref_setting *out)
{
	memset(out, 0, sizeof(*out));
	out->domain = LM_PREF_DEFAULT_DOMAIN;
	out->key = LM_PREF_DEFAULT_KEY;
	out->value.type = LM_PREF_BOOL;
	out->value.boolean = 1;
}

/* The journal's record of the change (record.h), with its values as property lists: the
 * decoded form this module works on; owns copies (the document may change under it). */
typedef struct {
	lm_pref_record rec;
	plist_t original; /* LM_PREF_ORIGINAL_VALUE */
	plist_t written;
} pref_record;

static void record_clear(pref_record *r)
{
	lm_pref_record_dispose(&r->rec);
	plist_free(r->original);
	plist_free(r->written);
	memset(r, 0, sizeof(*r));
}

/* *have = 0 when the journal has no record. A damaged record is LM_ECORRUPT (via the journal). */
static int record_load(lm_state *st, pref_record *r, int *have)
{
	int rc;

	memset(r, 0, sizeof(*r));
	if ((rc = lm_pref_record_get(st, &r->rec, have)) < 0 || !*have)
		return rc;
	/* Out of memory is that, not a damaged journal. */
	if (r->rec.original_state == LM_PREF_ORIGINAL_VALUE &&
	    (rc = lm_pref_plist_decode(r->rec.original.plist, &r->original)) < 0) {
		record_clear(r);
		*have = 0;
		return rc == LM_ENOMEM ? rc :
		    lm_state_corrupt(st, "\"preference.original.plist\" is not a base64 one-value binary plist");
	}
	if ((rc = lm_pref_plist_decode(r->rec.written.plist, &r->written)) < 0) {
		record_clear(r);
		*have = 0;
		return rc == LM_ENOMEM ? rc :
		    lm_state_corrupt(st, "\"preference.written.plist\" is not a base64 one-value binary plist");
	}
	return 0;
}

static void value_clear(lm_pref_record_value *v)
{
	free(v->type);
	free(v->display);
	free(v->plist);
	memset(v, 0, sizeof(*v));
}

/* A value as the journal keeps it; the caller frees its strings with value_clear (also after a
 * failure, which leaves nothing to free twice). */
static int value_of(plist_t v, lm_pref_record_value *out)
{
	char display[512];

	memset(out, 0, sizeof(*out));
	if (lm_pref_plist_encode(v, &out->plist) < 0)
		return lm_error_nomem();
	lm_pref_plist_describe(v, display, sizeof(display));
	if ((out->type = strdup(lm_pref_plist_type(v))) == NULL || (out->display = strdup(display)) == NULL) {
		value_clear(out);
		return lm_error_nomem();
	}
	return 0;
}

/* Put a new record in the journal document (not saved). */
static int record_put(lm_state *st, const lm_prefs_store *store, const char *domain, const char *key,
    int file_present, plist_t original, plist_t written, char **created_dirs, double changed_at)
{
	lm_pref_record rec;
	int rc;

	memset(&rec, 0, sizeof(rec));
	rec.store = (char *)lm_prefs_store_id(store);
	rec.domain = (char *)domain;
	rec.key = (char *)key;
	rec.original_state = original != NULL ? LM_PREF_ORIGINAL_VALUE :
	    file_present ? LM_PREF_ORIGINAL_ABSENT_KEY : LM_PREF_ORIGINAL_ABSENT_FILE;
	rec.created_dirs = created_dirs;
	rec.changed_at = changed_at;
	if ((original == NULL || (rc = value_of(original, &rec.original)) == 0) &&
	    (rc = value_of(written, &rec.written)) == 0)
		rc = lm_pref_record_put(st, &rec);
	value_clear(&rec.original);
	value_clear(&rec.written);
	return rc;
}

/* Replace only the "written" value of the record (the profile now wants another value). */
static int record_set_written(lm_state *st, plist_t written)
{
	lm_pref_record_value v;
	int rc;

	if ((rc = value_of(written, &v)) < 0)
		return rc;
	rc = lm_pref_record_set_written(st, &v);
	value_clear(&v);
	return rc;
}

/* Display fields of lm_host_pref_info: a value too long for one ends in "...". */
static void copy_str(char *dst, size_t size, const char *src)
{
	lm_text_format_cut(dst, size, "%s", src != NULL ? src : "");
}

static void describe_original(const pref_record *rec, char *buf, size_t size)
{
	if (rec->rec.original_state == LM_PREF_ORIGINAL_ABSENT_FILE)
		copy_str(buf, size, "absent file");
	else if (rec->rec.original_state == LM_PREF_ORIGINAL_ABSENT_KEY)
		copy_str(buf, size, "absent key");
	else
		lm_pref_plist_describe(rec->original, buf, size);
}

static void info_record(lm_host_pref_info *info, const pref_record *rec)
{
	info->recorded = 1;
	describe_original(rec, info->original, sizeof(info->original));
	lm_pref_plist_describe(rec->written, info->written, sizeof(info->written));
	info->changed_at = rec->rec.changed_at;
	info->kept = rec->rec.kept;
}

static void info_no_record(lm_host_pref_info *info)
{
	info->recorded = 0;
	info->original[0] = '\0';
	info->written[0] = '\0';
	info->changed_at = 0;
	info->kept = 0;
}

static void info_current(lm_host_pref_info *info, int file_present, plist_t cur, plist_t want)
{
	info->file_present = file_present;
	info->present = cur != NULL;
	lm_pref_plist_describe(cur, info->value, sizeof(info->value));
	info->matches = want != NULL && lm_pref_plist_equal(cur, want);
}

/* What the store holds now, and whether a configuration profile forces the key. */
typedef struct {
	lm_prefs_store *store;
	int file_present;
	plist_t value;
	int managed;
	plist_t forced;
} observation;

static void observation_clear(observation *o)
{
	lm_prefs_store_free(o->store);
	plist_free(o->value);
	plist_free(o->forced);
	memset(o, 0, sizeof(*o));
}

static int observe(lm_state *st, const char *domain, const char *key, observation *o,
    lm_host_pref_info *info)
{
	int rc;

	memset(o, 0, sizeof(*o));
	if ((rc = lm_prefs_store_open(&o->store, lm_state_context(st), domain)) < 0)
		return rc;
	if (strlen(lm_prefs_store_id(o->store)) >= sizeof(info->store))
		return lm_error_set(LM_EINVALID, "the preference store %s is named by more than %zu bytes (the limit "
		    "of lm_host_pref_info)", lm_prefs_store_id(o->store), sizeof(info->store) - 1);
	copy_str(info->store, sizeof(info->store), lm_prefs_store_id(o->store));
	/* Under the journal lock no other lume-metal process writes the file: leftovers are stale. */
	if (!lm_state_is_readonly(st))
		lm_prefs_store_cleanup(o->store);
	if ((rc = lm_prefs_store_read(o->store, key, &o->file_present, &o->value)) < 0 ||
	    (rc = lm_prefs_store_managed(o->store, key, &o->managed, &o->forced)) < 0) {
		observation_clear(o);
		return rc;
	}
	info->managed = o->managed;
	lm_pref_plist_describe(o->forced, info->managed_value, sizeof(info->managed_value));
	return 0;
}

static int check_setting(const lm_pref_setting *want)
{
	int rc;

	if (want == NULL || want->key == NULL || want->key[0] == '\0' || strlen(want->key) > 255)
		return lm_error_set(LM_EINVALID, "the host preference needs a key of 1 to 255 characters");
	if ((rc = lm_prefs_validate_domain(want->domain)) < 0)
		return rc;
	if (want->value.type == LM_PREF_STRING && want->value.string == NULL)
		return lm_error_set(LM_EINVALID, "the host preference %s %s has no string value", want->domain,
		    want->key);
	if (want->value.type != LM_PREF_BOOL && want->value.type != LM_PREF_INTEGER &&
	    want->value.type != LM_PREF_STRING)
		return lm_error_set(LM_EINVALID, "the host preference %s %s has an unknown value type", want->domain,
		    want->key);
	return 0;
}

static int is_dry_run(lm_state *st)
{
	return lm_context_options(lm_state_context(st))->dry_run || lm_state_is_readonly(st);
}

/* Where the user can look at the value, for messages. */
static const char *where(const observation *o)
{
	const char *path = lm_prefs_store_path(o->store);

	return path != NULL ? path : "CFPreferences (current user)";
}

int lm_host_pref_recorded(lm_state *st)
{
	pref_record rec;
	int have = 0;

	if (record_load(st, &rec, &have) < 0)
		return 0;
	record_clear(&rec);
	return have;
}

int lm_host_pref_enable_locked(lm_state *st, const lm_pref_setting *want, lm_host_pref_info *info)
{
	observation o;
	pref_record rec;
	plist_t wantp = NULL;
	char **missing = NULL, wantdesc[512];
	double now = lm_clock_epoch(); /* with its fraction: the restart rule compares to the microsecond */
	int keep = lm_context_options(lm_state_context(st))->keep_host, have = 0, rc;

	memset(info, 0, sizeof(*info));
	if ((rc = check_setting(want)) < 0)
		return rc;
	copy_str(info->domain, sizeof(info->domain), want->domain);
	copy_str(info->key, sizeof(info->key), want->key);
	/* Before anything is read or written: whose domain this is. */
	if ((rc = lm_prefs_check_user(lm_state_context(st), info, 1)) < 0)
		return rc;
	if ((rc = record_load(st, &rec, &have)) < 0)
		return rc;
	memset(&o, 0, sizeof(o));
	if (have && (strcmp(rec.rec.domain, want->domain) != 0 || strcmp(rec.rec.key, want->key) != 0)) {
		rc = lm_error_set(LM_ECONFLICT, "the state journal records a change of %s %s that is still in "
		    "effect; this profile wants %s %s; the recorded one must be restored first", rec.rec.domain, rec.rec.key, want->domain, want->key);
		goto out;
	}
	if ((wantp = lm_pref_value_to_plist(&want->value)) == NULL) {
		rc = lm_error_nomem();
		goto out;
	}
	lm_pref_plist_describe(wantp, wantdesc, sizeof(wantdesc));
	if ((rc = observe(st, want->domain, want->key, &o, info)) < 0)
		goto out;
	if (have && strcmp(rec.rec.store, lm_prefs_store_id(o.store)) != 0) {
		rc = lm_error_set(LM_ECONFLICT, "the state journal records a change of %s %s made in %s, but this "
		    "run uses %s; only the same preferences location can continue or restore it",
		    rec.rec.domain, rec.rec.key, rec.rec.store, lm_prefs_store_id(o.store));
		goto out;
	}
	info_current(info, o.file_present, o.value, wantp);
	if (have)
		info_record(info, &rec);
	if (o.value != NULL && !lm_pref_plist_is_flag_type(o.value)) {
		rc = lm_error_set(LM_EINVALID, "%s: %s holds %s, a value of an unexpected type (a bool, integer or "
		    "string was expected); nothing was written. Remove the key (defaults delete %s %s) or fix "
		    "the file, then try again", where(&o), want->key, info->value, want->domain, want->key);
		goto out;
	}
	if (o.managed && !lm_pref_plist_equal(o.forced, wantp)) {
		rc = lm_error_set(LM_EMANAGED, "%s %s is forced to %s by a configuration profile; lume-metal does "
		    "not override managed preferences. Ask your administrator to set it to %s or to remove it "
		    "from the profile", want->domain, want->key, info->managed_value, wantdesc);
		goto out;
	}
	if (info->matches) {
		/* Already in effect. A record stays as it is, except the value we would write now and the
		 * fleet's mark. Without a record there is nothing of ours to keep or restore. */
		if (have && (!lm_pref_plist_equal(rec.written, wantp) || (keep && !rec.rec.kept)) && !is_dry_run(st)) {
			if ((rc = record_set_written(st, wantp)) < 0 || (keep && (rc = lm_pref_record_set_kept(st)) < 0) ||
			    (rc = lm_state_save(st)) < 0)
				goto out;
			copy_str(info->written, sizeof(info->written), wantdesc);
		}
		info->kept = have && (rec.rec.kept || keep);
		rc = 0;
		goto out;
	}
	info->changed = 1;
	info->kept = keep || (have && rec.rec.kept);
	if (is_dry_run(st)) {
		if (!have) {
			copy_str(info->written, sizeof(info->written), wantdesc);
			if (o.value != NULL)
				copy_str(info->original, sizeof(info->original), info->value);
			else
				copy_str(info->original, sizeof(info->original), o.file_present ? "absent key" : "absent file");
		}
		rc = 0;
		goto out;
	}
	/* Record the original first (never overwriting an existing record), then write. */
	if (!have) {
		if ((rc = lm_prefs_store_missing_dirs(o.store, &missing)) < 0 ||
		    (rc = record_put(st, o.store, want->domain, want->key, o.file_present, o.value, wantp, missing,
		        now)) < 0 ||
		    (keep && (rc = lm_pref_record_set_kept(st)) < 0) || (rc = lm_state_save(st)) < 0)
			goto out;
		info->recorded = 1;
		if (o.value != NULL)
			copy_str(info->original, sizeof(info->original), info->value);
		else
			copy_str(info->original, sizeof(info->original), o.file_present ? "absent key" : "absent file");
		info->changed_at = now;
	} else if (!lm_pref_plist_equal(rec.written, wantp) || (keep && !rec.rec.kept)) {
		if ((rc = record_set_written(st, wantp)) < 0 || (keep && (rc = lm_pref_record_set_kept(st)) < 0) ||
		    (rc = lm_state_save(st)) < 0)
			goto out;
	}
	copy_str(info->written, sizeof(info->written), wantdesc);
	if ((rc = lm_prefs_store_set(o.store, want->key, wantp)) < 0)
		goto out;
	lm_log(lm_state_context(st), LM_LOG_INFO, "set %s %s to %s in %s (was %s)", want->domain, want->key,
	    wantdesc, where(&o), info->original);
	info->present = 1;
	info->file_present = 1;
	info->matches = 1;
	copy_str(info->value, sizeof(info->value), wantdesc);
out:
	lm_strv_free(missing);
	plist_free(wantp);
	observation_clear(&o);
	record_clear(&rec);
	if (rc < 0)
		info->changed = 0;
	return rc;
}

/* Remove the directories the first change created, innermost first, while they are empty. */
static void remove_created_dirs(const pref_record *rec)
{
	char **dirs = rec->rec.created_dirs;
	size_t i = 0;

	if (dirs == NULL)
		return;
	while (dirs[i] != NULL)
		i++;
	while (i-- > 0) {
		if (rmdir(dirs[i]) != 0 && errno != ENOENT)
			break;
		lm_fs_sync_parent(dirs[i]);
	}
	lm_error_clear();
}

/* Forget the record and save the journal. */
static int drop_record(lm_state *st)
{
	lm_pref_record_remove(st);
	return lm_state_save(st);
}

int lm_host_pref_disable_locked(lm_state *st, lm_host_pref_info *info)
{
	const lm_options *opts = lm_context_options(lm_state_context(st));
	lm_pref_setting def;
	observation o;
	pref_record rec;
	int have = 0, restored, rc;

	memset(info, 0, sizeof(*info));
	memset(&o, 0, sizeof(o));
	if ((rc = record_load(st, &rec, &have)) < 0)
		return rc;
	if (!have) {
		/* Nothing of ours is in effect: report the default preference as it is. */
		lm_host_pref_default(&def);
		return lm_host_pref_status_locked(st, &def, info);
	}
	copy_str(info->domain, sizeof(info->domain), rec.rec.domain);
	copy_str(info->key, sizeof(info->key), rec.rec.key);
	if ((rc = lm_prefs_check_user(lm_state_context(st), info, 1)) < 0)
		goto out;
	if ((rc = observe(st, rec.rec.domain, rec.rec.key, &o, info)) < 0)
		goto out;
	if (strcmp(rec.rec.store, lm_prefs_store_id(o.store)) != 0) {
		rc = lm_error_set(LM_ECONFLICT, "the state journal records a change of %s %s made in %s, but this "
		    "run uses %s; only the same preferences location can restore it",
		    rec.rec.domain, rec.rec.key, rec.rec.store, lm_prefs_store_id(o.store));
		goto out;
	}
	info_current(info, o.file_present, o.value, rec.written);
	info_record(info, &rec);
	restored = rec.rec.original_state == LM_PREF_ORIGINAL_VALUE ? lm_pref_plist_equal(o.value, rec.original) : o.value == NULL;
	if (restored) {
		/* Already as it was (an earlier run stopped before dropping the record, or before writing). */
		if (!is_dry_run(st)) {
			if (rec.rec.original_state == LM_PREF_ORIGINAL_ABSENT_FILE && o.file_present &&
			    (rc = lm_prefs_store_delete(o.store, rec.rec.key, 1)) < 0)
				goto out;
			if (rec.rec.original_state == LM_PREF_ORIGINAL_ABSENT_FILE)
				remove_created_dirs(&rec);
			if ((rc = drop_record(st)) < 0)
				goto out;
			info_no_record(info);
		}
		rc = 0;
		goto out;
	}
	if (!info->matches && !opts->force) {
		rc = lm_error_set(LM_ECONFLICT, "%s %s now holds %s, not %s as lume-metal set it: someone else "
		    "changed it, so it is left alone (restoring anyway needs force). Before lume-metal it was %s",
		    rec.rec.domain, rec.rec.key,
		    info->present ? info->value : "nothing (absent)", info->written, info->original);
		goto out;
	}
	info->changed = 1;
	if (is_dry_run(st)) {
		rc = 0;
		goto out;
	}
	if (rec.rec.original_state == LM_PREF_ORIGINAL_VALUE)
		rc = lm_prefs_store_set(o.store, rec.rec.key, rec.original);
	else
		rc = lm_prefs_store_delete(o.store, rec.rec.key, rec.rec.original_state == LM_PREF_ORIGINAL_ABSENT_FILE);
	if (rc < 0) {
		info->changed = 0;
		goto out;
	}
	if (rec.rec.original_state == LM_PREF_ORIGINAL_ABSENT_FILE)
		remove_created_dirs(&rec);
	lm_log(lm_state_context(st), LM_LOG_INFO, "restored %s %s in %s to %s", rec.rec.domain, rec.rec.key, where(&o),
	    info->original);
	/* Only now that the preference is back may the record go. */
	if ((rc = drop_record(st)) < 0)
		goto out;
	info_no_record(info);
	/* Report what is there now, as read back. */
	plist_free(o.value);
	o.value = NULL;
	if ((rc = lm_prefs_store_read(o.store, rec.rec.key, &o.file_present, &o.value)) < 0)
		goto out;
	info_current(info, o.file_present, o.value, NULL);
out:
	observation_clear(&o);
	record_clear(&rec);
	return rc;
}

int lm_host_pref_status_locked(lm_state *st, const lm_pref_setting *want, lm_host_pref_info *info)
{
	lm_pref_setting def;
	observation o;
	pref_record rec;
	plist_t wantp = NULL;
	int have = 0, rc;

	memset(info, 0, sizeof(*info));
	if ((rc = record_load(st, &rec, &have)) < 0)
		return rc;
	if (want == NULL) {
		lm_host_pref_default(&def);
		want = &def;
	}
	if ((rc = check_setting(want)) < 0)
		goto out;
	copy_str(info->domain, sizeof(info->domain), have ? rec.rec.domain : want->domain);
	copy_str(info->key, sizeof(info->key), have ? rec.rec.key : want->key);
	if ((wantp = lm_pref_value_to_plist(&want->value)) == NULL) {
		rc = lm_error_nomem();
		goto out;
	}
	if ((rc = observe(st, info->domain, info->key, &o, info)) < 0)
		goto out;
	info_current(info, o.file_present, o.value, wantp);
	if (have)
		info_record(info, &rec);
	observation_clear(&o);
	/* Whose domain this is; a lookup that fails (a malformed Lume URL) leaves it unsaid here and is
	 * reported by whatever needs Lume. Memory that ran out is this call's failure: a server_pid or
	 * server_user left unsaid for that would be a false answer. */
	if ((rc = lm_prefs_check_user(lm_state_context(st), info, 0)) == LM_ENOMEM)
		goto out;
	if (rc < 0)
		lm_log(lm_state_context(st), LM_LOG_DEBUG, "whose preference domain: %s", lm_error_last()->message);
	rc = 0;
out:
	plist_free(wantp);
	record_clear(&rec);
	return rc;
}

int lm_host_pref_byhost_status(lm_context *ctx, const lm_pref_setting *want, lm_host_pref_byhost *out)
{
	lm_pref_setting def;
	lm_prefs_store *store = NULL;
	plist_t value = NULL, wantp = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	out->size = sizeof(*out);
	if (want == NULL) {
		lm_host_pref_default(&def);
		want = &def;
	}
	if ((rc = check_setting(want)) < 0 || (rc = lm_prefs_store_open(&store, ctx, want->domain)) < 0)
		return rc;
	if ((rc = lm_prefs_store_byhost(store, want->key, &value, out->where, sizeof(out->where))) == 0) {
		if ((wantp = lm_pref_value_to_plist(&want->value)) == NULL) {
			rc = lm_error_nomem();
		} else {
			out->present = value != NULL;
			lm_pref_plist_describe(value, out->value, sizeof(out->value));
			out->matches = value != NULL && lm_pref_plist_equal(value, wantp);
		}
	}
	plist_free(value);
	plist_free(wantp);
	lm_prefs_store_free(store);
	return rc;
}

/* The public calls: take the journal (read-only for a dry run or a status), then do the above. */
static int with_state(lm_context *ctx, int readonly, lm_state **st)
{
	return lm_journal_open(st, ctx, readonly ? LM_STATE_READONLY : 0, 0);
}

int lm_host_pref_enable(lm_context *ctx, const lm_pref_setting *want, lm_host_pref_info *info)
{
	lm_state *st;
	int rc;

	memset(info, 0, sizeof(*info));
	if ((rc = with_state(ctx, lm_context_options(ctx)->dry_run, &st)) < 0)
		return rc;
	rc = lm_host_pref_enable_locked(st, want, info);
	lm_state_close(st);
	return rc;
}

int lm_host_pref_unneeded_locked(lm_state *st, const char *leaving, const char *why)
{
	char names[512];
	int live;

	if (lm_context_options(lm_state_context(st))->force)
		return 0;
	if ((live = lm_vm_record_live(st, leaving, names, sizeof(names))) <= 0)
		return live;
	return lm_error_set(LM_ECONFLICT, "%d %sVM%s still enabled (%s) and need%s the preference: %s", live,
	    leaving != NULL ? "other " : "", live == 1 ? " is" : "s are", names, live == 1 ? "s" : "", why);
}

int lm_host_pref_last_out_locked(lm_state *st, lm_host_pref_info *before, lm_host_pref_info *after,
    lm_pref_fate *fate)
{
	int live = lm_vm_record_live(st, NULL, NULL, 0), rc;

	*fate = LM_PREF_NEEDED;
	if (live != 0)
		return live < 0 ? live : 0;
	if ((rc = lm_host_pref_status_locked(st, NULL, before)) < 0)
		return rc;
	*fate = !before->recorded ? LM_PREF_NOT_OURS : before->kept &&
	    !lm_context_options(lm_state_context(st))->restore_host ? LM_PREF_KEPT : LM_PREF_RESTORED;
	if (*fate != LM_PREF_RESTORED)
		return 0;
	if ((rc = lm_host_pref_disable_locked(st, after)) < 0)
		return rc;
	after->changed_at = before->changed_at; /* when the unlocked level began */
	return 0;
}

int lm_host_pref_disable(lm_context *ctx, lm_host_pref_info *info)
{
	lm_state *st;
	int rc;

	memset(info, 0, sizeof(*info));
	if ((rc = with_state(ctx, lm_context_options(ctx)->dry_run, &st)) < 0)
		return rc;
	/* Enabled VMs still need the preference; taking it away under them needs force. */
	if ((rc = lm_host_pref_unneeded_locked(st, NULL, "rolling back the last one restores it (restoring now needs "
	    "force)")) < 0) {
		char said[1024];

		/* The refusal stays the error: the status read for the caller's info sets its own. */
		snprintf(said, sizeof(said), "%s", lm_error_last()->message);
		lm_state_close(st);
		(void)lm_host_pref_status(ctx, NULL, info);
		return lm_error_set(rc, "%s", said);
	}
	rc = lm_host_pref_disable_locked(st, info);
	lm_state_close(st);
	return rc;
}

int lm_host_pref_status(lm_context *ctx, const lm_pref_setting *want, lm_host_pref_info *info)
{
	lm_state *st;
	int rc;

	memset(info, 0, sizeof(*info));
	if ((rc = with_state(ctx, 1, &st)) < 0)
		return rc;
	rc = lm_host_pref_status_locked(st, want, info);
	lm_state_close(st);
	return rc;
}

int lm_host_pref_vms(lm_context *ctx, lm_host_pref_vm ***out, size_t *count)
{
	lm_state *st;
	lm_vm_record rec;
	char **names = NULL;
	size_t n = 0, i;
	int rc;

	*out = NULL;
	*count = 0;
	if ((rc = with_state(ctx, 1, &st)) < 0)
		return rc;
	if ((rc = lm_journal_vm_names(st, &names)) < 0)
		goto out;
	while (names[n] != NULL)
		n++;
	if ((*out = calloc(n + 1, sizeof(**out))) == NULL) {
		rc = lm_error_nomem();
		goto out;
	}
	for (i = 0; i < n; i++) {
		lm_host_pref_vm *v;

		if ((rc = lm_vm_record_get(st, names[i], &rec)) < 0)
			goto out;
		if (rec.status != LM_VM_STATUS_NONE) {
			if ((v = calloc(1, sizeof(*v))) == NULL) {
				lm_vm_record_dispose(&rec);
				rc = lm_error_nomem();
				goto out;
			}
			v->size = sizeof(*v);
			snprintf(v->vm, sizeof(v->vm), "%s", rec.name);
			v->mode = rec.pref_mode;
			v->needed = rec.pref_needed;
			v->keeps = lm_vm_record_uses_preference(&rec);
			v->journal_status = lm_vm_record_status_name(rec.status);
			(*out)[(*count)++] = v;
		}
		lm_vm_record_dispose(&rec);
	}
out:
	lm_strv_free(names);
	lm_state_close(st);
	if (rc < 0) {
		lm_host_pref_vms_free(*out);
		*out = NULL;
		*count = 0;
	}
	return rc;
}

void lm_host_pref_vms_free(lm_host_pref_vm **vms)
{
	size_t i;

	for (i = 0; vms != NULL && vms[i] != NULL; i++)
		free(vms[i]);
	free(vms);
}
