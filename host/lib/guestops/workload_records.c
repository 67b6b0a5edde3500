/* What a workload's activation records say (docs/activation-format.md): one line per process that
 * loaded the shim, the records as JSON, and -- when no process loaded it, or none had an answer
 * widened -- the likely cause, in words for the person who ran it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "guest_activation.h"
#include "guest_codesign.h"
#include "guest_workload.h"
#include "str.h"
#include "text.h"

void lm_workload_records_dispose(lm_workload_records *r)
{
	size_t i;

	for (i = 0; r->lines != NULL && i < r->count; i++)
		free(r->lines[i]);
	free(r->lines);
	free(r->json);
	lm_strv_free(r->skipped);
	lm_strv_free(r->stock_children);
	memset(r, 0, sizeof(*r));
}

/* Whether the record of a's parent names a among what it started (spawns[], by pid): 1 it does,
 * 0 the parent wrote a record that does not, -1 the parent wrote none. A child the parent's record
 * does not name was started through fork and exec (the forked child's own record says the exec,
 * and is replaced by the program's once it loads the shim: docs/activation-format.md), or while
 * the parent's exec and spawn hooks were off (AMFI can switch interposing off in a process). */
static int parent_names(const lm_activation_list *list, const lm_activation *a)
{
	for (size_t i = 0; i < list->count; i++) {
		const lm_activation *p = &list->items[i];

		if (p->pid != a->ppid || p == a)
			continue;
		for (size_t k = 0; k < p->nspawns; k++)
			if (p->spawns[k].pid == a->pid)
				return 1;
		return 0;
	}
	return -1;
}

/* The reader's line for one process, and what its children got (the record says). */
static int process_line(const lm_activation *a, int named, char **out)
{
	char *sum = NULL;
	size_t n;
	int rc;

	if ((rc = lm_activation_summary(a, &sum)) < 0)
		return rc;
	n = strlen(sum) + 320;
	if ((*out = malloc(n)) == NULL) {
		free(sum);
		return lm_error_nomem();
	}
	if (named == 0)
		snprintf(*out, n, "%s; its children %s; its parent's record (pid %lld) does not name it: started through fork "
		    "and exec, or with the parent's exec and spawn hooks off (AMFI can switch interposing off)", sum,
		    a->inherit ? "keep the shim" : "start without the shim", (long long)a->ppid);
	else
		snprintf(*out, n, "%s; its children %s", sum, a->inherit ? "keep the shim" : "start without the shim");
	free(sum);
	return 0;
}

/* Was path's program one of the processes that wrote a record? The record's exe is the file
 * the kernel ran (links resolved), the spawn's path as given: the same file, or its name. */
static int recorded(const lm_activation_list *list, const char *path)
{
	const char *base = strrchr(path, '/') != NULL ? strrchr(path, '/') + 1 : path;

	for (size_t i = 0; i < list->count; i++) {
		const char *exe = list->items[i].exe, *eb = strrchr(exe, '/') != NULL ? strrchr(exe, '/') + 1 : exe;

		if (strcmp(exe, path) == 0 || strcmp(eb, base) == 0)
			return 1;
	}
	return 0;
}

/* A NULL-terminated vector of n slots. */
static int strv_new(size_t n, char ***out)
{
	if ((*out = calloc(n + 1, sizeof(char *))) == NULL)
		return lm_error_nomem();
	return 0;
}

/* The programs the records say were started with the shim passed on (spawns[], format 1.1) and
 * that wrote no record of their own: what codesign says of each names why it ran stock -- dyld
 * ignores DYLD_* in a hardened program without the dyld entitlement, and skips a library another
 * team signed under library validation (reference/metal.md, 2026-12-02). A question codesign could
 * not answer leaves the note out: it is an explanation, never the run's error. */
static int stock_children(lm_ssh *ssh, const lm_activation_list *list, char ***out)
{
	const char *paths[LM_CODESIGN_MAX_FILES];
	lm_code_signature sigs[LM_CODESIGN_MAX_FILES];
	size_t n = 0, k = 0;
	int rc;

	if ((rc = strv_new(LM_CODESIGN_MAX_FILES, out)) < 0)
		return rc;
	for (size_t i = 0; i < list->count; i++) {
		for (size_t j = 0; j < list->items[i].nspawns && n < LM_CODESIGN_MAX_FILES; j++) {
			const lm_activation_spawn *sp = &list->items[i].spawns[j];
			size_t m;

			if (strcmp(sp->shim, "kept") != 0 || sp->path[0] != '/' || strchr(sp->path, '\n') != NULL ||
			    recorded(list, sp->path))
				continue;
			for (m = 0; m < n && strcmp(paths[m], sp->path) != 0; m++)
				;
			if (m == n)
				paths[n++] = sp->path;
		}
	}
	if (n == 0)
		return 0;
	if ((rc = lm_guest_codesign(ssh, paths, n, sigs)) < 0)
		return rc == LM_ENOMEM ? rc : 0;
	for (size_t i = 0; i < n; i++) {
		const char *base = strrchr(paths[i], '/') + 1;
		lm_buf b;

		if (!lm_codesign_ignores_injection(&sigs[i]) && !lm_codesign_validates_libraries(&sigs[i]))
			continue;
		lm_buf_init(&b, LM_BUF_TEXT_MAX);
		lm_text_sanitize(&b, base, strlen(base), 0);
		if (lm_codesign_ignores_injection(&sigs[i]))
			lm_buf_adds(&b, " is signed with the hardened runtime: it ran stock (");
		else
			lm_buf_adds(&b, " is signed with library validation: library validation refused the shim, it ran stock (");
		lm_text_sanitize(&b, paths[i], strlen(paths[i]), 0);
		lm_buf_addf(&b, ", flags=%s, without the entitlement %s)", sigs[i].flags[0] ? sigs[i].flags : "not shown",
		    lm_codesign_ignores_injection(&sigs[i]) ? "com.apple.security.cs.allow-dyld-environment-variables" :
		    "com.apple.security.cs.disable-library-validation");
		rc = lm_buf_take(&b, &(*out)[k], NULL);
		lm_buf_dispose(&b);
		if (rc < 0)
			return rc;
		k++;
	}
	return 0;
}

int lm_workload_records_read(lm_ssh *ssh, const char *dir, lm_workload_records *out)
{
	lm_activation_list list;
	cJSON *arr = NULL, *item;
	size_t i;
	int rc;

	memset(out, 0, sizeof(*out));
	out->first_took = -1;
	memset(&list, 0, sizeof(list));
	if ((rc = strv_new(LM_ACTIVATION_SKIPPED_KEPT, &out->skipped)) < 0)
		return rc;
	/* The directory itself unreadable is said like a damaged record: never the run's error. */
	if ((rc = lm_activation_fetch(ssh, dir, &list)) < 0) {
		if (rc == LM_ENOMEM || rc == LM_ECANCELED || (out->skipped[0] = strdup(lm_error_last()->message)) == NULL)
			goto out;
		out->nskipped = 1;
		memset(&list, 0, sizeof(list));
	}
	out->dropped = list.dropped;
	for (i = 0; i < list.nskipped && i < LM_ACTIVATION_SKIPPED_KEPT && out->nskipped < LM_ACTIVATION_SKIPPED_KEPT; i++) {
		out->skipped[out->nskipped] = list.skipped[i];
		list.skipped[i] = NULL;
		out->nskipped++;
	}
	out->nskipped += list.nskipped - i;
	if ((list.count > 0 && (out->lines = calloc(list.count, sizeof(char *))) == NULL) ||
	    (arr = cJSON_CreateArray()) == NULL) {
		rc = lm_error_nomem();
		goto out;
	}
	for (i = 0; i < list.count; i++) {
		int named = parent_names(&list, &list.items[i]);
		if ((rc = process_line(&list.items[i], named, &out->lines[i])) < 0)
			goto out;
		out->count++;
		if ((rc = lm_activation_json(&list.items[i], &item)) < 0)
			goto out;
		cJSON_AddItemToArray(arr, item); /* an array takes an item without allocating */
		/* parent_named: true, false, or null when the parent wrote no record. */
		if ((named < 0 ? cJSON_AddNullToObject(item, "parent_named") :
		    cJSON_AddBoolToObject(item, "parent_named", named)) == NULL) {
			rc = lm_error_nomem();
			goto out;
		}
		if (lm_activation_took(&list.items[i]) && out->took++ == 0)
			out->first_took = (long)i;
	}
	if ((rc = stock_children(ssh, &list, &out->stock_children)) < 0)
		goto out;
	if ((out->json = cJSON_PrintUnformatted(arr)) == NULL)
		rc = lm_error_nomem();
out:
	cJSON_Delete(arr);
	lm_activation_list_dispose(&list);
	if (rc < 0)
		lm_workload_records_dispose(out);
	return rc < 0 ? rc : 0;
}

int lm_workload_records_why_not(const lm_workload_records *r, const lm_guest_facts *g, const lm_run_target *t,
    int hardened, const char *const *argv, size_t argc, char **out)
{
	char buf[5 * PATH_MAX + 512], why[4 * PATH_MAX];
	const char *none = "no process of the workload loaded the shim: ";
	size_t i;

	*out = NULL;
	if (r->took > 0)
		return 0;
	for (i = 0; i < argc && strchr(argv[i], '=') != NULL; i++)
		; /* VAR=value words before the program */
	/* One sentence, whole: what the records show first, then the likely cause. */
	if (r->count > 0 && r->dropped > 0)
		snprintf(buf, sizeof(buf), "no answer was widened in the %zu records read: none of those processes was "
		    "given more than stock (%zu more processes loaded the shim; their records were not read)", r->count,
		    r->dropped);
	else if (r->count > 0)
		snprintf(buf, sizeof(buf), "no answer was widened: %zu process%s loaded the shim and %s given more than "
		    "stock (the lines above say what each asked)", r->count, r->count == 1 ? "" : "es",
		    r->count == 1 ? "it was not" : "none was");
	else if (r->nskipped > 0)
		snprintf(buf, sizeof(buf), "no activation record could be read: %zu %s damaged or unreadable (said above), "
		    "so whether the shim widened an answer is not known", r->nskipped, r->nskipped == 1 ? "was" : "were");
	else if (t->program[0] == '\0')
		snprintf(buf, sizeof(buf), "%sthe program was not found in the guest, so nothing ran", none);
	else if (hardened == LM_HARDENED_STOCK)
		snprintf(buf, sizeof(buf), "%sthe program (or its script's interpreter) is signed with the hardened runtime "
		    "without the entitlement com.apple.security.cs.allow-dyld-environment-variables: dyld ignored the shim, "
		    "as it was told it would", none);
	else if (hardened == LM_HARDENED_SIP_OFF)
		/* The sources disagree (codesign.c): the records have now answered for this guest. */
		snprintf(buf, sizeof(buf), "%sthe program (or its script's interpreter) is signed with the hardened runtime "
		    "or library validation, and although macOS is said not to apply those with SIP %s (Apple Developer "
		    "Forums thread 757000), on this guest it did, as Bear issue 232 reports of macOS 10.14: run it as a "
		    "copy re-signed ad hoc", none, g->sip);
	else if (i < argc && lm_codesign_warning(argv[i], t, why, sizeof(why)))
		/* dyld skips an inserted library another team signed ("not valid for use in process using Library
		 * Validation") and the process goes on stock (reference/metal.md, 2026-12-02): not SIP. */
		snprintf(buf, sizeof(buf), "%slibrary validation refused it: %s", none, why);
	else if (i < argc && lm_sip_warning(g, argv[i], t, why, sizeof(why)))
		snprintf(buf, sizeof(buf), "%smost likely System Integrity Protection: %s", none, why);
	else if (t->interpreter[0] != '\0')
		snprintf(buf, sizeof(buf), "%s%s is a script: its interpreter %s did not load the shim (a launcher that "
		    "clears the environment, or one SIP protects further down)", none, t->program, t->interpreter);
	else
		snprintf(buf, sizeof(buf), "%s%s did not load it: it clears its environment before it starts, is not "
		    "dynamically linked, or hands its work to a program that SIP protects", none, t->program);
	if ((*out = strdup(buf)) == NULL)
		return lm_error_nomem();
	return 0;
}

int lm_workload_records_result(lm_ssh *ssh, const lm_guest_facts *g, const lm_run_target *t, int hardened,
    const char *const *argv, size_t argc, lm_run_result *res)
{
	lm_workload_records r;
	int rc;

	if ((rc = lm_workload_records_read(ssh, res->record_dir, &r)) < 0)
		return rc;
	rc = lm_workload_records_why_not(&r, g, t, hardened, argv, argc, &res->no_shim);
	/* The result owns them from here. */
	res->process_lines = r.lines;
	res->nprocesses = r.count;
	res->records_json = r.json;
	res->records_dropped = r.dropped;
	res->records_skipped = r.nskipped;
	res->skipped_lines = r.skipped;
	res->stock_children = r.stock_children;
	res->widened_line = r.first_took;
	return rc;
}

int lm_run_result_new(const char *what, const lm_workload_options *opts, size_t argc, lm_run_result **out)
{
	*out = NULL;
	if (argc == 0)
		return lm_error_set(LM_EINVALID, "%s: no command given", what);
	if (opts != NULL && (opts->version < 1 || opts->version > LM_WORKLOAD_OPTIONS_VERSION))
		return lm_error_set(LM_EINVALID, "%s: workload options of version %u, which this library does not know "
		    "(1 to %d)", what, opts->version, LM_WORKLOAD_OPTIONS_VERSION);
	if ((*out = calloc(1, sizeof(**out))) == NULL)
		return lm_error_nomem();
	(*out)->size = sizeof(**out);
	(*out)->exit_status = 255;
	(*out)->widened_line = -1;
	return 0;
}
