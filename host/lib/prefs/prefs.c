/* The host preference manager: set the preference, record the exact previous state in the
 * journal the first time, restore it exactly (docs/preferences.md).
 *
 * Crash ordering: enable records the original in the journal before it writes the preference;
 * disable restores the preference before it drops the record. So after a kill at any point the
 * journal either has no record and the preference is untouched, or has the record and the
 * preference holds the original or our value — the next enable or disable finishes the job. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "text.h"
#include "context_internal.h"
#include "error_internal.h"
#include "fs.h"
#include "prefs_store.h"

#define DEFAULT_DOMAIN "com.apple.gpusw.ParavirtualizedGraphics"
#define DEFAULT_KEY "ForceUnrestrictedDeviceFeatureLevel"

void lm_host_pref_default(lm_pref_setting *out)
{
	memset(out, 0, sizeof(*out));
	out->domain = DEFAULT_DOMAIN;
	out->key = DEFAULT_KEY;
	out->value.type = LM_PREF_BOOL;
	out->value.boolean = 1;
}

typedef enum { ORIG_ABSENT_FILE, ORIG_ABSENT_KEY, ORIG_VALUE } orig_kind;

/* The journal's "preference" object, decoded; owns copies (the document may change under it). */
typedef struct {
	char *store;
	char *domain;
	char *key;
	orig_kind kind;
	plist_t original; /* ORIG_VALUE */
	plist_t written;
	cJSON *created_dirs; /* array of strings, or NULL */
	double changed_at;
	int kept;            /* "kept": the fleet keeps the host unlocked (keep_host) */
} pref_record;

static void record_clear(pref_record *rec)
{
	free(rec->store);
	free(rec->domain);
	free(rec->key);
	cJSON_Delete(rec->created_dirs);
	plist_free(rec->original);
	plist_free(rec->written);
	memset(rec, 0, sizeof(*rec));
}

static const char *json_string(const cJSON *obj, const char *name)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, name);

	return cJSON_IsString(item) && item->valuestring[0] != '\0' ? item->valuestring : NULL;
}

/* LM_EINVALID for a value that is not one, LM_ENOMEM (set) when out of memory. */
static int decode_value(const cJSON *obj, plist_t *out)
{
	const char *text = json_string(obj, "plist");
	int rc;

	*out = NULL;
	if (!cJSON_IsObject(obj) || text == NULL)
		return LM_EINVALID;
	if ((rc = lm_pref_plist_decode(text, out)) < 0)
		return rc == LM_ENOMEM ? rc : LM_EINVALID;
	return 0;
}

/* *have = 0 when the journal has no record. A damaged record is LM_ECORRUPT (via the journal). */
static int record_load(lm_state *st, pref_record *rec, int *have)
{
	cJSON *pref = cJSON_GetObjectItemCaseSensitive(lm_state_doc(st), "preference");
	const cJSON *orig, *changed, *dirs, *d, *kept;
	const char *state, *why = NULL;
	int rc;

	memset(rec, 0, sizeof(*rec));
	*have = 0;
	if (pref == NULL || cJSON_IsNull(pref))
		return 0;
	if (!cJSON_IsObject(pref)) {
		why = "\"preference\" is not an object";
		goto bad;
	}
	if (json_string(pref, "store") == NULL || json_string(pref, "domain") == NULL ||
	    json_string(pref, "key") == NULL) {
		why = "\"preference\" lacks \"store\", \"domain\" or \"key\"";
		goto bad;
	}
	if ((rec->store = strdup(json_string(pref, "store"))) == NULL ||
	    (rec->domain = strdup(json_string(pref, "domain"))) == NULL ||
	    (rec->key = strdup(json_string(pref, "key"))) == NULL)
		goto nomem;
	orig = cJSON_GetObjectItemCaseSensitive(pref, "original");
	state = json_string(orig, "state");
	if (state != NULL && strcmp(state, "absent-file") == 0) {
		rec->kind = ORIG_ABSENT_FILE;
	} else if (state != NULL && strcmp(state, "absent-key") == 0) {
		rec->kind = ORIG_ABSENT_KEY;
	} else if (state != NULL && strcmp(state, "value") == 0) {
		rec->kind = ORIG_VALUE;
		if ((rc = decode_value(orig, &rec->original)) == LM_ENOMEM)
			goto nomem;
		if (rc < 0) {
			why = "\"preference.original.plist\" is not a base64 one-value binary plist";
			goto bad;
		}
	} else {
		why = "\"preference.original.state\" is not absent-file, absent-key or value";
		goto bad;
	}
	if ((rc = decode_value(cJSON_GetObjectItemCaseSensitive(pref, "written"), &rec->written)) == LM_ENOMEM)
		goto nomem;
	if (rc < 0) {
		why = "\"preference.written.plist\" is not a base64 one-value binary plist";
		goto bad;
	}
	changed = cJSON_GetObjectItemCaseSensitive(pref, "changed_at");
	/* Bounded here, so that turning it into a time_t later (for display) is always defined. */
	if (!cJSON_IsNumber(changed) || !(changed->valuedouble >= 0 && changed->valuedouble <= (double)LM_JSON_INT_MAX)) {
		why = "\"preference.changed_at\" is not a number of seconds since 1970";
		goto bad;
	}
	rec->changed_at = changed->valuedouble;
	/* Absent in journals written before the mode existed: per VM, as they were. */
	kept = cJSON_GetObjectItemCaseSensitive(pref, "kept");
	if (kept != NULL && !cJSON_IsBool(kept)) {
		why = "\"preference.kept\" is not true or false";
		goto bad;
	}
	rec->kept = cJSON_IsTrue(kept);
	dirs = cJSON_GetObjectItemCaseSensitive(pref, "created_dirs");
	if (dirs != NULL) {
		if (!cJSON_IsArray(dirs)) {
			why = "\"preference.created_dirs\" is not an array";
			goto bad;
		}
		cJSON_ArrayForEach(d, dirs) {
			if (!cJSON_IsString(d) || d->valuestring[0] != '/') {
				why = "\"preference.created_dirs\" holds something other than absolute paths";
				goto bad;
			}
		}
		if ((rec->created_dirs = cJSON_Duplicate(dirs, 1)) == NULL)
			goto nomem;
	}
	*have = 1;
	return 0;
nomem:
	record_clear(rec);
	return lm_error_nomem();
bad:
	record_clear(rec);
	return lm_state_corrupt(st, why);
}

static cJSON *value_json(plist_t v)
{
	char display[512], *text = NULL;
	cJSON *obj = cJSON_CreateObject();

	if (obj == NULL || lm_pref_plist_encode(v, &text) < 0) {
		cJSON_Delete(obj);
		return NULL;
	}
	lm_pref_plist_describe(v, display, sizeof(display));
	if (cJSON_AddStringToObject(obj, "type", lm_pref_plist_type(v)) == NULL ||
	    cJSON_AddStringToObject(obj, "display", display) == NULL ||
	    cJSON_AddStringToObject(obj, "plist", text) == NULL) {
		cJSON_Delete(obj);
		obj = NULL;
	}
	free(text);
	return obj;
}

/* Put a new record in the journal document (not saved). */
static int record_put(lm_state *st, const lm_prefs_store *store, const char *domain, const char *key,
    int file_present, plist_t original, plist_t written, char **created_dirs, double changed_at)
{
	cJSON *pref = cJSON_CreateObject(), *orig, *w, *dirs;
	size_t i;

	if (pref == NULL)
		return lm_error_nomem();
	if (cJSON_AddStringToObject(pref, "store", lm_prefs_store_id(store)) == NULL ||
	    cJSON_AddStringToObject(pref, "domain", domain) == NULL ||
	    cJSON_AddStringToObject(pref, "key", key) == NULL)
		goto nomem;
	if (original != NULL) {
		if ((orig = value_json(original)) == NULL)
			goto nomem;
		cJSON_AddItemToObject(pref, "original", orig);
		if (cJSON_AddStringToObject(orig, "state", "value") == NULL)
			goto nomem;
	} else {
		if ((orig = cJSON_AddObjectToObject(pref, "original")) == NULL ||
		    cJSON_AddStringToObject(orig, "state", file_present ? "absent-key" : "absent-file") == NULL)
			goto nomem;
	}
	if ((w = value_json(written)) == NULL)
		goto nomem;
	cJSON_AddItemToObject(pref, "written", w);
	if (created_dirs != NULL) {
		if ((dirs = cJSON_AddArrayToObject(pref, "created_dirs")) == NULL)
			goto nomem;
		for (i = 0; created_dirs[i] != NULL; i++)
			cJSON_AddItemToArray(dirs, cJSON_CreateString(created_dirs[i]));
		if ((size_t)cJSON_GetArraySize(dirs) != i)
			goto nomem;
	}
	if (cJSON_AddNumberToObject(pref, "changed_at", changed_at) == NULL)
		goto nomem;
	cJSON_DeleteItemFromObjectCaseSensitive(lm_state_doc(st), "preference");
	cJSON_AddItemToObject(lm_state_doc(st), "preference", pref);
	return 0;
nomem:
	cJSON_Delete(pref);
	return lm_error_nomem();
}

/* Replace only the "written" value of the record (the profile now wants another value). */
static int record_set_written(lm_state *st, plist_t written)
{
	cJSON *pref = cJSON_GetObjectItemCaseSensitive(lm_state_doc(st), "preference");
	cJSON *w = value_json(written);

	if (w == NULL)
		return lm_error_nomem();
	cJSON_ReplaceItemInObjectCaseSensitive(pref, "written", w);
	return 0;
}

/* Mark the record as kept by the fleet (not saved). */
static int record_set_kept(lm_state *st)
{
	cJSON *pref = cJSON_GetObjectItemCaseSensitive(lm_state_doc(st), "preference");

	cJSON_DeleteItemFromObjectCaseSensitive(pref, "kept");
	return cJSON_AddTrueToObject(pref, "kept") != NULL ? 0 : lm_error_nomem();
}

/* Display fields of lm_host_pref_info: a value too long for one ends in "...". */
static void copy_str(char *dst, size_t size, const char *src)
{
	lm_text_format_cut(dst, size, "%s", src != NULL ? src : "");
}

static void describe_original(const pref_record *rec, char *buf, size_t size)
{
	if (rec->kind == ORIG_ABSENT_FILE)
		copy_str(buf, size, "absent file");
	else if (rec->kind == ORIG_ABSENT_KEY)
		copy_str(buf, size, "absent key");
	else
		lm_pref_plist_describe(rec->original, buf, size);
}

static void info_record(lm_host_pref_info *info, const pref_record *rec)
{
	info->recorded = 1;
	describe_original(rec, info->original, sizeof(info->original));
	lm_pref_plist_describe(rec->written, info->written, sizeof(info->written));
	info->changed_at = rec->changed_at;
	info->kept = rec->kept;
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
	if (have && (strcmp(rec.domain, want->domain) != 0 || strcmp(rec.key, want->key) != 0)) {
		rc = lm_error_set(LM_ECONFLICT, "the state journal records a change of %s %s that is still in "
		    "effect; this profile wants %s %s; the recorded one must be restored first", rec.domain, rec.key, want->domain, want->key);
		goto out;
	}
	if ((wantp = lm_pref_value_to_plist(&want->value)) == NULL) {
		rc = lm_error_nomem();
		goto out;
	}
	lm_pref_plist_describe(wantp, wantdesc, sizeof(wantdesc));
	if ((rc = observe(st, want->domain, want->key, &o, info)) < 0)
		goto out;
	if (have && strcmp(rec.store, lm_prefs_store_id(o.store)) != 0) {
		rc = lm_error_set(LM_ECONFLICT, "the state journal records a change of %s %s made in %s, but this "
		    "run uses %s; only the same preferences location can continue or restore it",
		    rec.domain, rec.key, rec.store, lm_prefs_store_id(o.store));
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
		if (have && (!lm_pref_plist_equal(rec.written, wantp) || (keep && !rec.kept)) && !is_dry_run(st)) {
			if ((rc = record_set_written(st, wantp)) < 0 || (keep && (rc = record_set_kept(st)) < 0) ||
			    (rc = lm_state_save(st)) < 0)
				goto out;
			copy_str(info->written, sizeof(info->written), wantdesc);
		}
		info->kept = have && (rec.kept || keep);
		rc = 0;
		goto out;
	}
	info->changed = 1;
	info->kept = keep || (have && rec.kept);
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
		    (keep && (rc = record_set_kept(st)) < 0) || (rc = lm_state_save(st)) < 0)
			goto out;
		info->recorded = 1;
		if (o.value != NULL)
			copy_str(info->original, sizeof(info->original), info->value);
		else
			copy_str(info->original, sizeof(info->original), o.file_present ? "absent key" : "absent file");
		info->changed_at = now;
	} else if (!lm_pref_plist_equal(rec.written, wantp) || (keep && !rec.kept)) {
		if ((rc = record_set_written(st, wantp)) < 0 || (keep && (rc = record_set_kept(st)) < 0) ||
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
	int i;

	if (rec->created_dirs == NULL)
		return;
	for (i = cJSON_GetArraySize(rec->created_dirs) - 1; i >= 0; i--) {
		const cJSON *d = cJSON_GetArrayItem(rec->created_dirs, i);

		if (rmdir(d->valuestring) != 0 && errno != ENOENT)
			break;
		lm_fs_sync_parent(d->valuestring);
	}
	lm_error_clear();
}

/* Forget the record and save the journal. */
static int drop_record(lm_state *st)
{
	cJSON_DeleteItemFromObjectCaseSensitive(lm_state_doc(st), "preference");
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
	copy_str(info->domain, sizeof(info->domain), rec.domain);
	copy_str(info->key, sizeof(info->key), rec.key);
	if ((rc = lm_prefs_check_user(lm_state_context(st), info, 1)) < 0)
		goto out;
	if ((rc = observe(st, rec.domain, rec.key, &o, info)) < 0)
		goto out;
	if (strcmp(rec.store, lm_prefs_store_id(o.store)) != 0) {
		rc = lm_error_set(LM_ECONFLICT, "the state journal records a change of %s %s made in %s, but this "
		    "run uses %s; only the same preferences location can restore it",
		    rec.domain, rec.key, rec.store, lm_prefs_store_id(o.store));
		goto out;
	}
	info_current(info, o.file_present, o.value, rec.written);
	info_record(info, &rec);
	restored = rec.kind == ORIG_VALUE ? lm_pref_plist_equal(o.value, rec.original) : o.value == NULL;
	if (restored) {
		/* Already as it was (an earlier run stopped before dropping the record, or before writing). */
		if (!is_dry_run(st)) {
			if (rec.kind == ORIG_ABSENT_FILE && o.file_present &&
			    (rc = lm_prefs_store_delete(o.store, rec.key, 1)) < 0)
				goto out;
			if (rec.kind == ORIG_ABSENT_FILE)
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
		    rec.domain, rec.key,
		    info->present ? info->value : "nothing (absent)", info->written, info->original);
		goto out;
	}
	info->changed = 1;
	if (is_dry_run(st)) {
		rc = 0;
		goto out;
	}
	if (rec.kind == ORIG_VALUE)
		rc = lm_prefs_store_set(o.store, rec.key, rec.original);
	else
		rc = lm_prefs_store_delete(o.store, rec.key, rec.kind == ORIG_ABSENT_FILE);
	if (rc < 0) {
		info->changed = 0;
		goto out;
	}
	if (rec.kind == ORIG_ABSENT_FILE)
		remove_created_dirs(&rec);
	lm_log(lm_state_context(st), LM_LOG_INFO, "restored %s %s in %s to %s", rec.domain, rec.key, where(&o),
	    info->original);
	/* Only now that the preference is back may the record go. */
	if ((rc = drop_record(st)) < 0)
		goto out;
	info_no_record(info);
	/* Report what is there now, as read back. */
	plist_free(o.value);
	o.value = NULL;
	if ((rc = lm_prefs_store_read(o.store, rec.key, &o.file_present, &o.value)) < 0)
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
	copy_str(info->domain, sizeof(info->domain), have ? rec.domain : want->domain);
	copy_str(info->key, sizeof(info->key), have ? rec.key : want->key);
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
	 * reported by whatever needs Lume. */
	if (lm_prefs_check_user(lm_state_context(st), info, 0) < 0)
		lm_log(lm_state_context(st), LM_LOG_DEBUG, "whose preference domain: %s", lm_error_last()->message);
out:
	plist_free(wantp);
	record_clear(&rec);
	return rc;
}

/* The public calls: take the journal (read-only for a dry run or a status), then do the above. */
static int with_state(lm_context *ctx, int readonly, lm_state **st)
{
	return lm_state_open_ex(st, ctx, readonly ? LM_STATE_READONLY : 0, 0);
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

int lm_host_pref_disable(lm_context *ctx, lm_host_pref_info *info)
{
	lm_state *st;
	int rc;

	memset(info, 0, sizeof(*info));
	char names[512];
	int live;

	if ((rc = with_state(ctx, lm_context_options(ctx)->dry_run, &st)) < 0)
		return rc;
	/* Enabled VMs still need the preference; taking it away under them needs force. */
	if ((live = lm_state_live_vms(st, NULL, names, sizeof(names))) > 0 && !lm_context_options(ctx)->force) {
		lm_state_close(st);
		(void)lm_host_pref_status(ctx, NULL, info);
		return lm_error_set(LM_ECONFLICT, "%d VM%s still enabled (%s) and need%s the preference; rolling "
		    "back the last one restores it (restoring now needs force)", live, live == 1 ? " is" : "s are",
		    names, live == 1 ? "s" : "");
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
