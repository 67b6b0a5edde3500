/* What a workload's activation records say (docs/activation-format.md): one line per process that
 * loaded the shim, the records as JSON, and -- when no process loaded it, or none had an answer
 * widened -- the likely cause, in words for the person who ran it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guestops.h"

void lm_workload_records_dispose(lm_workload_records *r)
{
	size_t i;

	for (i = 0; r->lines != NULL && i < r->count; i++)
		free(r->lines[i]);
	free(r->lines);
	free(r->json);
	memset(r, 0, sizeof(*r));
}

/* The reader's line for one process, and what its children got (the record says). */
static int process_line(const lm_activation *a, char **out)
{
	char *sum = NULL;
	size_t n;
	int rc;

	if ((rc = lm_activation_summary(a, &sum)) < 0)
		return rc;
	n = strlen(sum) + 64;
	if ((*out = malloc(n)) == NULL) {
		free(sum);
		return lm_error_nomem();
	}
	snprintf(*out, n, "%s; its children %s", sum, a->inherit ? "keep the shim" : "start without the shim");
	free(sum);
	return 0;
}

int lm_workload_records_read(lm_ssh *ssh, const char *dir, lm_workload_records *out)
{
	lm_activation_list list;
	cJSON *arr = NULL, *item;
	size_t i;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&list, 0, sizeof(list));
	if ((rc = lm_activation_fetch(ssh, dir, &list)) < 0)
		return rc;
	if ((list.count > 0 && (out->lines = calloc(list.count, sizeof(char *))) == NULL) ||
	    (arr = cJSON_CreateArray()) == NULL) {
		rc = lm_error_nomem();
		goto out;
	}
	for (i = 0; i < list.count; i++) {
		if ((rc = process_line(&list.items[i], &out->lines[i])) < 0)
			goto out;
		out->count++;
		if ((rc = lm_activation_json(&list.items[i], &item)) < 0)
			goto out;
		cJSON_AddItemToArray(arr, item); /* an array takes an item without allocating */
		out->took += lm_activation_took(&list.items[i]) != 0;
	}
	if ((out->json = cJSON_PrintUnformatted(arr)) == NULL)
		rc = lm_error_nomem();
out:
	cJSON_Delete(arr);
	lm_activation_list_dispose(&list);
	if (rc < 0)
		lm_workload_records_dispose(out);
	return rc;
}

int lm_workload_records_why_not(const lm_workload_records *r, const lm_guest_facts *g, const lm_run_target *t,
    int hardened, const char *const *argv, size_t argc, char **out)
{
	char buf[4 * PATH_MAX + 512], sip[4 * PATH_MAX];
	size_t i;

	*out = NULL;
	if (r->count > 0 && r->took > 0)
		return 0;
	for (i = 0; i < argc && strchr(argv[i], '=') != NULL; i++)
		; /* VAR=value words before the program */
	if (r->count > 0)
		snprintf(buf, sizeof(buf), "%zu process%s loaded the shim, and it widened nothing in %s (the lines "
		    "above say why)", r->count, r->count == 1 ? "" : "es", r->count == 1 ? "it" : "any of them");
	else if (t->program[0] == '\0')
		snprintf(buf, sizeof(buf), "the program was not found in the guest, so nothing ran");
	else if (hardened)
		snprintf(buf, sizeof(buf), "the program (or its script's interpreter) is signed with the hardened runtime "
		    "without the entitlement com.apple.security.cs.allow-dyld-environment-variables: dyld ignored the shim, "
		    "as it was told it would");
	else if (i < argc && lm_sip_warning(g, argv[i], t, sip, sizeof(sip)))
		snprintf(buf, sizeof(buf), "most likely System Integrity Protection: %s", sip);
	else if (t->interpreter[0] != '\0')
		snprintf(buf, sizeof(buf), "%s is a script: its interpreter %s did not load the shim (a launcher that "
		    "clears the environment, or one SIP protects further down)", t->program, t->interpreter);
	else
		snprintf(buf, sizeof(buf), "%s did not load it: it clears its environment before it starts, is not "
		    "dynamically linked, or hands its work to a program that SIP protects", t->program);
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
	return 0;
}
