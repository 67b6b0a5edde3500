/* The host-preference ablation (issue 35, docs/bench.md): does this host and guest need the
 * preference? Metal.jl's maintainers ran kernels in VMs with no preference mentioned (JuliaGPU/
 * Metal.jl PR #789), and MLX passes on GitHub's hosted runners, whose hosts nobody changes; Cua's
 * recipe sets it for every run. So it is measured: the same bench twice in one folder, with the
 * preference off and on, the VM restarted between them (a VM reads the preference when it starts:
 * reference/lume.md), the exercise run in each, and the preference put back as it was.
 *
 * The preference is changed through the preference manager on the journal (prefs_internal.h), as
 * enable and rollback do: turning it off restores the original state the journal recorded,
 * turning it on records it again (with the same kept mark). The arm that matches the preference
 * as found runs last, so the folder ends with the host and the VM as they were: no restart after.
 * A failure or a cancel between them gives the preference back and restarts the VM at that level
 * with the VM manager's undo calls, which are not cancelable (vm_undo.h), as enable's undo. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_internal.h"
#include "clock.h"
#include "context_internal.h"
#include "error_internal.h"
#include "file.h"
#include "flow_level.h"
#include "flow_session.h"
#include "prefs_internal.h"
#include "record.h"
#include "str.h"
#include "text.h"
#include "lume-metal/exercise.h"
#include "lume-metal/flow.h"
#include "lume-metal/prefs.h"
#include "lume-metal/profile.h"
#include "lume-metal/version.h"

typedef struct {
	lm_context *ctx;
	lm_context *pref_ctx;          /* ctx's options with keep_host as the recorded change had it */
	const char *vm;
	lm_pref_setting want;
	lm_host_pref_info before;
	int was_on;                    /* the preference held the profile's value when found */
	int is_on;                     /* what it holds now (after this run's changes) */
	lm_vm_manager *vmm;
	lm_profile *profile;           /* the VM's, whose preference `want` points into */
} ablation;

/* Off: the original the journal recorded, given back; on: the profile's value, recorded again; the
 * VM restarted at that level either way. flow changes the host (lm_flow_host_level), as enable and
 * rollback do; undo: with the calls no cancel stops. */
static int set_level(ablation *a, int on, int undo)
{
	int set = 0, rc;

	rc = lm_flow_host_level(a->pref_ctx, a->vmm, a->vm, &a->want, on, undo, &set);
	if (set)
		a->is_on = on;
	return rc;
}

/* The exercise of one arm, as `probe --exercise` runs it, into meta: the verdict against the VM's
 * profile (what its guest's macOS cannot run waived, as enable does), each kernel's result, the
 * known defects seen. *passed: 1 passed, 0 failed, -1 not run. */
static int exercise(ablation *a, cJSON *arm, int *passed)
{
	lm_flow_result *fr = NULL;
	lm_profile *p = NULL;
	const lm_vm_outcome *o;
	cJSON *ex = cJSON_AddObjectToObject(arm, "exercise"), *results, *defects;
	const char *msg;
	int rc, k;

	*passed = -1;
	if (ex == NULL)
		return lm_error_nomem();
	if ((rc = lm_flow_probe_exercise(a->ctx, a->vm, &fr)) < 0 || fr->count != 1 || fr->vms[0]->exercised == NULL) {
		if (rc == 0)
			rc = lm_error_set(LM_ERROR, "%s: the exercise gave no report", a->vm);
		lm_flow_result_free(fr);
		return rc;
	}
	o = fr->vms[0];
	results = cJSON_AddObjectToObject(ex, "results");
	defects = cJSON_AddArrayToObject(ex, "defects");
	for (k = 0; k < LM_EXERCISE_COUNT; k++) {
		lm_exercise_result res = lm_report_exercise(o->exercised, (lm_exercise)k, &msg);
		cJSON_AddStringToObject(results, lm_exercise_name((lm_exercise)k), lm_exercise_result_name(res));
		if (lm_exercise_is_defect((lm_exercise)k) && (res == LM_EXERCISE_FAIL || res == LM_EXERCISE_ERROR)) {
			char *line = lm_format("%s: %s%s%s", lm_exercise_name((lm_exercise)k), lm_exercise_result_name(res),
			    msg != NULL && msg[0] ? ": " : "", msg != NULL ? msg : "");
			cJSON_AddItemToArray(defects, cJSON_CreateString(line != NULL ? line : lm_exercise_name((lm_exercise)k)));
			free(line);
		}
	}
	if ((rc = lm_profile_resolve(&p, o->profile[0] ? o->profile : "default")) == 0) {
		unsigned waived = lm_exercise_waived(o->guest.os_version, NULL, 0);
		rc = lm_profile_check_exercise_waived(p, o->exercised, waived);
		*passed = rc == 0;
		cJSON_AddStringToObject(ex, "verdict", rc == 0 ? "passed" : "failed");
		cJSON_AddStringToObject(ex, "message", rc == 0 ? "the kernels the profile needs compile and compute "
		    "correctly on this device" : lm_error_last()->message);
		rc = rc == LM_ENOTPROVEN ? 0 : rc;
	}
	lm_profile_free(p);
	lm_flow_result_free(fr);
	return rc;
}

static const char *arm_dir(int on)
{
	return on ? LM_BENCH_ABLATION_ON : LM_BENCH_ABLATION_OFF;
}

/* A member of the arm's own record, copied into the folder's metadata (the VM, guest, workload
 * and profile are the same for both arms). */
static void copy_sections(const char *dir, const char *sub, cJSON *meta)
{
	static const char *const sections[] = {"vm", "guest", "profile", "workload"};
	char *path = lm_format("%s/%s/metadata.json", dir, sub), *data = NULL;
	cJSON *arm;
	size_t len, i;

	if (path == NULL || lm_fs_read_file(path, 16u << 20, &data, &len) < 0) {
		lm_error_clear();
		free(path);
		return;
	}
	free(path);
	arm = cJSON_ParseWithLength(data, len);
	free(data);
	for (i = 0; arm != NULL && i < sizeof(sections) / sizeof(sections[0]); i++) {
		cJSON *v = cJSON_DetachItemFromObjectCaseSensitive(arm, sections[i]);
		if (v != NULL) {
			cJSON_DeleteItemFromObjectCaseSensitive(meta, sections[i]);
			cJSON_AddItemToObject(meta, sections[i], v);
		}
	}
	cJSON_Delete(arm);
}

static const char *verdict_of(const cJSON *arm)
{
	const char *v = lm_bench_meta_str(arm, "exercise.verdict");

	return v != NULL ? v : "not run";
}

/* README.md and results.csv of the folder: the answer first (or the failure), then each arm. */
static int write_summary(const char *dir, const cJSON *meta, lm_bench_result *const *arms, const int *order)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(meta, "arms"), *failure = cJSON_GetObjectItemCaseSensitive(meta,
	    "failure"), *needed = cJSON_GetObjectItemCaseSensitive(meta, "preference_needed");
	const char *build = "build not printed";
	char *readme = NULL, *csv = NULL;
	lm_buf b, c;
	size_t i;
	int k, rc;

	for (k = 0; k < 2; k++)
		if (arms[k] != NULL && arms[k]->llama_build[0])
			build = arms[k]->llama_build;
	lm_buf_init(&b, LM_BUF_TEXT_MAX);
	lm_buf_init(&c, LM_BUF_TEXT_MAX);
	lm_buf_addf(&b, "# lume-metal bench: %s, host-preference ablation, llama.cpp %s\n\n",
	    lm_bench_meta_str(meta, "vm.name") ? lm_bench_meta_str(meta, "vm.name") : "unknown", build);
	/* As a failed record's README (record.c): said first, what failed quoted in a code block. */
	if (cJSON_IsString(failure)) {
		lm_buf_addf(&b, "**This record FAILED.** The arms below are what was made before; the preference was put "
		    "back as it was (%s). What failed:\n\n",
		    lm_bench_meta_str(meta, "preference.before") ? lm_bench_meta_str(meta, "preference.before") : "unknown");
		lm_bench_md_code_block(&b, failure->valuestring);
		lm_buf_adds(&b, "\n");
	}
	lm_buf_addf(&b, "**Host preference needed: %s.** %s\n\n", cJSON_IsTrue(needed) ? "yes" : cJSON_IsFalse(needed) ?
	    "no" : "not told", cJSON_IsTrue(needed) ? "The kernels the profile needs failed with the preference off "
	    "and ran with it on." : cJSON_IsFalse(needed) ? "The kernels the profile needs ran with the preference off: "
	    "this host and guest do not need it (enable --host-preference never)." : "An arm failed or was not run, or "
	    "the kernels failed in both.");
	lm_buf_adds(&b, "Each arm is a complete bench record of its own (its README, raw runs, activation records and "
	    "SHA256SUMS); the VM was restarted before each so that it ran at the level the preference gave, and the "
	    "preference was put back as it was found at the end.\n\n"
	    "| preference | exercise | test | stock t/s | shimmed t/s | shimmed / stock |\n|---|---|---|---:|---:|---:|\n");
	lm_buf_adds(&c, "preference,exercise,test,stock_median,shimmed_median,ratio\n");
	for (k = 0; k < 2; k++) {
		const lm_bench_result *r = arms[k];
		const int on = order[k];
		const cJSON *arm = cJSON_GetArrayItem(arr, k);
		for (i = 0; r != NULL && i < r->ntests; i++) {
			const lm_bench_test *t = r->tests[i];
			lm_buf_addf(&b, "| [%s](%s/README.md) | %s | %s | %.2f | %.2f | %.2f× |\n", on ? "on" : "off", arm_dir(on),
			    verdict_of(arm), t->name, t->stock_median, t->shimmed_median, t->ratio);
			lm_buf_addf(&c, "%s,%s,%s,%.2f,%.2f,%.3f\n", on ? "on" : "off", verdict_of(arm), t->name, t->stock_median,
			    t->shimmed_median, t->ratio);
		}
		if (r == NULL || r->ntests == 0)
			lm_buf_addf(&b, "| %s | %s | not run | – | – | – |\n", on ? "on" : "off", verdict_of(arm));
	}
	lm_buf_adds(&b, "\n## Charts\n\n");
	for (k = 0; k < 2; k++) {
		lm_bench_chart ch[16];
		char heading[64];
		size_t n = 0;
		for (i = 0; arms[k] != NULL && i < arms[k]->ntests && n < 16; i++, n++) {
			memset(&ch[n], 0, sizeof(ch[n]));
			ch[n].title = arms[k]->tests[i]->name;
			ch[n].unit = "t/s";
			ch[n].labels[0] = "stock";
			ch[n].labels[1] = "shimmed";
			ch[n].labels[2] = "bare metal";
			ch[n].values[0] = arms[k]->tests[i]->stock_median;
			ch[n].values[1] = arms[k]->tests[i]->shimmed_median;
		}
		snprintf(heading, sizeof(heading), "preference %s", order[k] ? "on" : "off");
		lm_bench_chart_mermaid(&b, heading, ch, n);
	}
	lm_buf_adds(&b, "## Files\n\n- `metadata.json`, `metadata.md`: the host, the VM, the preference as found, each "
	    "arm's exercise\n- `results.csv`: per arm and test, the medians and the ratio\n- `preference-off/`, "
	    "`preference-on/`: the two bench records\n- `SHA256SUMS`: every other file, those of the two records too\n");
	if ((rc = lm_buf_take(&b, &readme, NULL)) < 0 || (rc = lm_buf_take(&c, &csv, NULL)) < 0) {
		lm_buf_dispose(&c);
		free(readme);
		return rc;
	}
	rc = lm_bench_write_file(dir, "README.md", readme, strlen(readme));
	if (rc == 0)
		rc = lm_bench_write_file(dir, "results.csv", csv, strlen(csv));
	free(readme);
	free(csv);
	return rc;
}

static int write_folder(const char *dir, cJSON *meta, lm_bench_result *const *arms, const int *order)
{
	char *json = cJSON_Print(meta), *md = lm_bench_metadata_md(meta);
	int rc;

	if (json == NULL || md == NULL)
		rc = lm_error_nomem();
	else if ((rc = lm_bench_write_file(dir, "metadata.json", json, strlen(json))) == 0 &&
	    (rc = lm_bench_write_file(dir, "metadata.md", md, strlen(md))) == 0 &&
	    (rc = write_summary(dir, meta, arms, order)) == 0)
		rc = lm_bench_write_sums(dir);
	cJSON_free(json);
	free(md);
	return rc;
}

/* The preference is the host's: every VM the journal has enabled with it reads it when its process
 * starts, and one restarted while the ablation has it off comes back stock. Turning it off under
 * them needs force, as host disable does: prefs' one rule (lm_host_pref_unneeded_locked). */
static int others_use_preference(ablation *a)
{
	lm_state *st;
	int rc;

	if ((rc = lm_journal_open(&st, a->ctx, LM_STATE_READONLY, 0)) < 0)
		return rc;
	rc = lm_host_pref_unneeded_locked(st, a->vm, "the ablation turns it off for its stock arm, and one restarted "
	    "meanwhile would come back stock; forced, the ablation runs anyway");
	lm_state_close(st);
	return rc;
}

/* The VM as bench finds it: enabled, running, its profile's preference; a manager that can restart
 * it; a preference this run may turn off and on and give back exactly. */
static int check_start(ablation *a)
{
	lm_flow_session *s = NULL;
	const lm_pref_setting *want;
	int rc;

	if ((rc = lm_flow_session_open(&s, a->ctx, a->vm)) < 0)
		return rc;
	rc = lm_profile_resolve(&a->profile, lm_profile_name(lm_flow_session_profile(s)));
	lm_flow_session_close(s);
	if (rc < 0)
		return rc;
	if ((want = lm_profile_host_preference(a->profile)) != NULL)
		a->want = *want;
	else
		lm_host_pref_default(&a->want);
	if ((rc = lm_vm_manager_open(&a->vmm, a->ctx)) < 0)
		return rc;
	if (!lm_vm_manager_can_start(a->vmm))
		return lm_error_set(LM_EUNSUPPORTED, "%s: the ablation restarts the VM between its arms, and without a VM "
		    "manager lume-metal cannot restart it", a->vm);
	if ((rc = lm_host_pref_status(a->ctx, &a->want, &a->before)) < 0)
		return rc;
	if (a->before.managed)
		return lm_error_set(LM_EMANAGED, "%s.%s is forced by a configuration profile (%s): the ablation cannot turn it "
		    "off", a->want.domain, a->want.key, a->before.managed_value);
	a->was_on = a->is_on = a->before.matches;
	if (a->was_on && !a->before.recorded)
		return lm_error_set(LM_ECONFLICT, "%s.%s is set (%s) but not by lume-metal (the journal records no original "
		    "state): turning it off would lose how it was set, so the ablation does not", a->want.domain,
		    a->want.key, a->before.value);
	if (!a->was_on && a->before.recorded)
		return lm_error_set(LM_ECONFLICT, "%s.%s holds %s, not the value lume-metal wrote (%s): someone changed it "
		    "since; the ablation would not know what to put back", a->want.domain, a->want.key,
		    a->before.present ? a->before.value : "nothing", a->before.written);
	return a->was_on ? others_use_preference(a) : 0;
}

int lm_bench_run_ablation(lm_context *ctx, const lm_bench_options *opts, lm_bench_result **out)
{
	ablation a;
	lm_bench_result *arms[2] = {NULL, NULL}, *r;
	lm_options po;
	char *dir = NULL, *sub = NULL, when[32], why[1024] = "";
	cJSON *meta = NULL, *arr, *pref;
	int order[2], passed[2] = {-1, -1}, k, rc, undo_rc = 0;

	*out = NULL;
	memset(&a, 0, sizeof(a));
	a.ctx = ctx;
	if (opts == NULL || opts->bare_metal || opts->vm == NULL)
		return lm_error_set(LM_EINVALID, "bench: the host-preference ablation needs a VM (not bare metal)");
	a.vm = opts->vm;
	po = *lm_context_options(ctx);
	po.should_cancel = NULL; /* the preference given back is never canceled (vm_undo.h) */
	if ((rc = check_start(&a)) < 0)
		goto done;
	po.keep_host = a.before.kept;
	if ((rc = lm_context_new(&a.pref_ctx, &po)) < 0 || (rc = lm_bench_make_folder(opts->out_dir, &dir)) < 0)
		goto done;
	/* The arm that matches the preference as found runs last: nothing to restart after it. */
	order[0] = !a.was_on;
	order[1] = a.was_on;
	if ((meta = cJSON_CreateObject()) == NULL) {
		rc = lm_error_nomem();
		goto done;
	}
	cJSON_AddStringToObject(meta, "record", "lume-metal bench 1");
	cJSON_AddStringToObject(meta, "kind", "ablation");
	lm_bench_iso_time(lm_clock_epoch(), when, sizeof(when));
	cJSON_AddStringToObject(meta, "started_at", when);
	cJSON_AddStringToObject(cJSON_AddObjectToObject(meta, "lume_metal"), "version", LUME_METAL_VERSION);
	cJSON_AddItemToObject(meta, "host", lm_bench_host_facts());
	pref = cJSON_AddObjectToObject(meta, "preference");
	cJSON_AddStringToObject(pref, "domain", a.want.domain);
	cJSON_AddStringToObject(pref, "key", a.want.key);
	cJSON_AddStringToObject(pref, "store", a.before.store);
	cJSON_AddStringToObject(pref, "before", a.was_on ? a.before.value : a.before.present ? a.before.value : "absent");
	cJSON_AddStringToObject(pref, "order", a.was_on ? "off, then on (as found)" : "on, then off (as found)");
	arr = cJSON_AddArrayToObject(meta, "arms");
	for (k = 0; k < 2; k++) {
		lm_bench_options o = *opts;
		cJSON *arm = cJSON_CreateObject();
		cJSON_AddItemToArray(arr, arm);
		cJSON_AddStringToObject(arm, "preference", order[k] ? "on" : "off");
		cJSON_AddStringToObject(arm, "folder", arm_dir(order[k]));
		lm_context_step(ctx, a.vm, order[k] ? "preference-on" : "preference-off", LM_STEP_STARTED, 0, "");
		if ((rc = lm_context_check_cancel(ctx, "the ablation")) < 0 || (rc = set_level(&a, order[k], 0)) < 0)
			break;
		cJSON_AddBoolToObject(arm, "restarted", 1);
		if ((rc = exercise(&a, arm, &passed[k])) < 0)
			break;
		free(sub);
		if ((sub = lm_format("%s/%s", dir, arm_dir(order[k]))) == NULL) {
			rc = lm_error_nomem();
			break;
		}
		o.out_dir = sub;
		rc = lm_bench_run(ctx, &o, &arms[k]);
		copy_sections(dir, arm_dir(order[k]), meta);
		if (rc < 0) {
			cJSON_AddStringToObject(arm, "failure", lm_error_last()->message);
			/* A workload that fails in an arm (the kernels refused at the stock level) is that arm's
			 * evidence, recorded in its folder; the other arm still runs. */
			if (rc == LM_ECANCELED || arms[k] == NULL || arms[k]->dir == NULL)
				break;
			lm_log(ctx, LM_LOG_WARN, "%s: the preference-%s arm failed: %s", a.vm, order[k] ? "on" : "off",
			    lm_error_last()->message);
			rc = 0;
		} else {
			cJSON_AddNullToObject(arm, "failure");
		}
		lm_context_step(ctx, a.vm, order[k] ? "preference-on" : "preference-off", LM_STEP_DONE, 0,
		    passed[k] > 0 ? "exercise passed" : "exercise failed");
	}
done:
	if (rc < 0)
		snprintf(why, sizeof(why), "%s", lm_error_last()->message);
	/* Given back, whatever happened: the preference as found, the VM at its level. */
	if (a.pref_ctx != NULL && a.is_on != a.was_on) {
		undo_rc = set_level(&a, a.was_on, 1);
		if (undo_rc < 0)
			snprintf(why + strlen(why), sizeof(why) - strlen(why), "%sthe preference could NOT be put back: %s",
			    why[0] ? "; " : "", lm_error_last()->message);
	}
	if (meta != NULL) {
		const int off = order[0] ? 1 : 0, on = !off;
		lm_bench_iso_time(lm_clock_epoch(), when, sizeof(when));
		cJSON_AddStringToObject(meta, "ended_at", when);
		cJSON_AddBoolToObject(cJSON_GetObjectItemCaseSensitive(meta, "preference"), "restored", undo_rc == 0);
		/* Needed: the kernels failed with it off and ran with it on; not needed: they ran with it off. */
		if (rc == 0 && passed[off] == 0 && passed[on] == 1)
			cJSON_AddBoolToObject(meta, "preference_needed", 1);
		else if (rc == 0 && passed[off] == 1)
			cJSON_AddBoolToObject(meta, "preference_needed", 0);
		else
			cJSON_AddNullToObject(meta, "preference_needed");
		if (why[0])
			cJSON_AddStringToObject(meta, "failure", why);
		else
			cJSON_AddNullToObject(meta, "failure");
		if (write_folder(dir, meta, arms, order) < 0 && rc == 0 && undo_rc == 0) {
			rc = lm_error_last()->code;
			snprintf(why, sizeof(why), "%s", lm_error_last()->message);
		}
	}
	/* The result: the last arm's (or the first's when the last was not made), the folder the whole. */
	r = arms[1] != NULL ? arms[1] : arms[0];
	if (r == NULL && lm_bench_result_new(&r) == 0)
		snprintf(r->vm, sizeof(r->vm), "%s", a.vm);
	if (r != NULL) {
		const cJSON *needed = cJSON_GetObjectItemCaseSensitive(meta, "preference_needed");
		free(r->dir);
		r->dir = dir;
		dir = NULL;
		r->ablation = 1;
		r->preference_needed = cJSON_IsBool(needed) ? cJSON_IsTrue(needed) : -1;
	}
	if (arms[0] != r)
		lm_bench_result_free(arms[0]);
	if (arms[1] != r)
		lm_bench_result_free(arms[1]);
	*out = r;
	free(dir);
	free(sub);
	cJSON_Delete(meta);
	lm_vm_manager_free(a.vmm);
	lm_profile_free(a.profile);
	lm_context_free(a.pref_ctx);
	if (rc < 0 || undo_rc < 0)
		return lm_error_set(rc < 0 ? rc : undo_rc, "%s", why);
	return 0;
}
