/* The shim's activation records (docs/activation-format.md): fetched from a guest directory over
 * SFTP, checked member by member, and told back as a typed list, one line per process, and JSON.
 *
 * The records are written by the shim inside processes the user runs: they are the guest's
 * word, read with the care of any input from it -- a bounded count of bounded files, every member
 * of the version present with its type and within the shim's own limits, nothing else in 1.0,
 * the pid in the text the one in the file name. A damaged record is refused with a message naming
 * the file and the member; nothing of it is half-returned, and a directory's read skips it (said)
 * and keeps the others.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "guest_activation.h"
#include "guest_bundle.h"
#include "json.h"
#include "path.h"
#include "lume-metal/family.h"
#include "lume-metal/family_list.h"
#include "ssh_files.h"
#include "str.h"
#include "text.h"
#include "ssh_deadline.h"

#define FORMAT_PREFIX "lume-metal-activation/"
#define PID_MAX 9999999999LL

int lm_activation_file_name_ok(const char *name)
{
	size_t n = 0;

	if (name == NULL || name[0] < '1' || name[0] > '9')
		return 0;
	while (name[n] >= '0' && name[n] <= '9')
		n++;
	return n <= 10 && strcmp(name + n, ".json") == 0;
}

/* ---- typed members ---------------------------------------------------------------------- */

/* The parse of one record: its source for messages, and whether unknown members are allowed (a
 * newer minor version). */
typedef struct {
	const char *source;
	int minor;
} reader;

static const cJSON *member(const cJSON *obj, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(obj, key);
}

static int need_object(const reader *r, const cJSON *item, const lm_json_path *path, const char *const known[])
{
	char found[96];

	if (!cJSON_IsObject(item))
		return lm_json_fail(r->source, path, "expected an object, found %s",
		    item != NULL ? lm_json_describe(item, found, sizeof(found)) : "nothing (the member is missing)");
	return r->minor == 0 ? lm_json_check_members(item, r->source, path, known) : 0;
}

static int need_array(const reader *r, const cJSON *item, const lm_json_path *path, size_t max)
{
	char found[96];

	if (!cJSON_IsArray(item))
		return lm_json_fail(r->source, path, "expected an array, found %s",
		    item != NULL ? lm_json_describe(item, found, sizeof(found)) : "nothing (the member is missing)");
	if ((size_t)cJSON_GetArraySize(item) > max)
		return lm_json_fail(r->source, path, "has %d entries, more than the shim records (%zu)",
		    cJSON_GetArraySize(item), max);
	return 0;
}

/* A string of at most cap - 1 bytes into out, or null (out "") when nullable. */
static int get_text(const reader *r, const cJSON *obj, const lm_json_path *parent, const char *key, int nullable,
    char *out, size_t cap)
{
	lm_json_path path = LM_JSON_PATH_KEY(parent, key);
	const cJSON *item = member(obj, key);
	char found[96];
	size_t n;

	out[0] = '\0';
	if (nullable && cJSON_IsNull(item))
		return 0;
	if (!cJSON_IsString(item))
		return lm_json_fail(r->source, &path, "expected %s, found %s", nullable ? "a string or null" : "a string",
		    item != NULL ? lm_json_describe(item, found, sizeof(found)) : "nothing (the member is missing)");
	n = strlen(item->valuestring);
	if (n == 0 || n >= cap)
		return lm_json_fail(r->source, &path, "expected 1 to %zu bytes, found %zu", cap - 1, n);
	memcpy(out, item->valuestring, n + 1);
	return 0;
}

/* One of words[] (NULL-terminated) into out. */
static int get_word(const reader *r, const cJSON *obj, const lm_json_path *parent, const char *key,
    const char *const words[], char *out, size_t cap)
{
	lm_json_path path = LM_JSON_PATH_KEY(parent, key);
	int rc;

	if ((rc = get_text(r, obj, parent, key, 0, out, cap)) != 0)
		return rc;
	for (size_t i = 0; words[i] != NULL; i++) {
		if (strcmp(out, words[i]) == 0)
			return 0;
	}
	return lm_json_fail(r->source, &path, "\"%s\" is not one of the values this version knows", out);
}

static int get_uint(const reader *r, const cJSON *obj, const lm_json_path *parent, const char *key, uint64_t min,
    uint64_t max, uint64_t *out)
{
	lm_json_path path = LM_JSON_PATH_KEY(parent, key);

	return lm_json_get_uint(member(obj, key), r->source, &path, min, max, out);
}

/* An integer or null (*has 0). */
static int get_uint_or_null(const reader *r, const cJSON *obj, const lm_json_path *parent, const char *key,
    uint64_t min, uint64_t max, int *has, uint64_t *out)
{
	*has = 0;
	*out = 0;
	if (cJSON_IsNull(member(obj, key)))
		return 0;
	*has = 1;
	return get_uint(r, obj, parent, key, min, max, out);
}

static int get_bool(const reader *r, const cJSON *obj, const lm_json_path *parent, const char *key, int *out)
{
	lm_json_path path = LM_JSON_PATH_KEY(parent, key);

	return lm_json_get_bool(member(obj, key), r->source, &path, out);
}

/* ---- the record ------------------------------------------------------------------------- */

static int parse_format(reader *r, const cJSON *doc, const lm_json_path *root)
{
	lm_json_path path = LM_JSON_PATH_KEY(root, "format");
	const cJSON *item = member(doc, "format");
	const char *v, *dot;
	uint64_t major, minor = 0;
	char found[96];

	if (!cJSON_IsString(item) || strncmp(item->valuestring, FORMAT_PREFIX, strlen(FORMAT_PREFIX)) != 0)
		return lm_json_fail(r->source, &path, "expected \"" FORMAT_PREFIX "1\", found %s (not an activation record)",
		    item != NULL ? lm_json_describe(item, found, sizeof(found)) : "nothing");
	v = item->valuestring + strlen(FORMAT_PREFIX);
	dot = strchr(v, '.');
	if (lm_text_parse_u64(v, dot != NULL ? (size_t)(dot - v) : strlen(v), 999, &major) != 0 ||
	    (dot != NULL && lm_text_parse_u64(dot + 1, strlen(dot + 1), 999, &minor) != 0))
		return lm_json_fail(r->source, &path, "\"%s\" is not a version (MAJOR or MAJOR.MINOR)", item->valuestring);
	if (major != 1)
		return lm_error_set(LM_EUNSUPPORTED, "%s: format %s is not version 1: written by another shim than this "
		    "lume-metal reads; install the same version on the host and in the guest", r->source, item->valuestring);
	r->minor = (int)minor;
	return 0;
}

static int parse_profile(const reader *r, const cJSON *doc, const lm_json_path *root, lm_activation *a)
{
	static const char *const known[] = { "active", "why_stock", "apple_family_max", "max_threadgroup_memory",
		"recommended_working_set_size", NULL };
	lm_json_path path = LM_JSON_PATH_KEY(root, "profile");
	const cJSON *p = member(doc, "profile");
	uint64_t v;
	int rc, has;

	if ((rc = need_object(r, p, &path, known)) != 0 || (rc = get_bool(r, p, &path, "active", &a->active)) != 0 ||
	    (rc = get_text(r, p, &path, "why_stock", 1, a->why_stock, sizeof(a->why_stock))) != 0 ||
	    (rc = get_uint_or_null(r, p, &path, "apple_family_max", LM_FAMILY_APPLE_FIRST, LM_FAMILY_APPLE_LAST_VALID,
	         &has, &v)) != 0)
		return rc;
	a->apple_family_max = (int64_t)v;
	if (a->active != has || a->active != (a->why_stock[0] == '\0'))
		return lm_json_fail(r->source, &path, "active is %s but apple_family_max is %s and why_stock %s",
		    a->active ? "true" : "false", has ? "set" : "null", a->why_stock[0] != '\0' ? "set" : "null");
	if ((rc = get_uint_or_null(r, p, &path, "max_threadgroup_memory", 0, UINT64_MAX, &has,
	         &a->max_threadgroup_memory)) != 0)
		return rc;
	if (has != a->active)
		return lm_json_fail(r->source, &path, "max_threadgroup_memory must be set exactly when active");
	if ((rc = get_uint_or_null(r, p, &path, "recommended_working_set_size", 0, UINT64_MAX, &a->has_working_set,
	         &a->working_set)) != 0)
		return rc;
	if (a->has_working_set && !a->active)
		return lm_json_fail(r->source, &path, "recommended_working_set_size is set but the profile is not active");
	return 0;
}

/* {"installed", "why_not"}: why_not null exactly when installed. */
static int parse_hook(const reader *r, const cJSON *h, const lm_json_path *path, int *installed, char *why, size_t cap)
{
	int rc;

	if ((rc = get_bool(r, h, path, "installed", installed)) != 0 ||
	    (rc = get_text(r, h, path, "why_not", 1, why, cap)) != 0)
		return rc;
	if (*installed != (why[0] == '\0'))
		return lm_json_fail(r->source, path, "why_not must be null exactly when installed is true");
	return 0;
}

static int parse_hooks(const reader *r, const cJSON *doc, const lm_json_path *root, lm_activation *a)
{
	static const char *const known[] = { "init_gpu_family_support", "device_classes", NULL };
	static const char *const known_init[] = { "installed", "why_not", NULL };
	static const char *const known_class[] = { "class", "installed", "why_not", "device", NULL };
	lm_json_path path = LM_JSON_PATH_KEY(root, "hooks");
	lm_json_path ipath = LM_JSON_PATH_KEY(&path, "init_gpu_family_support");
	lm_json_path cpath = LM_JSON_PATH_KEY(&path, "device_classes");
	const cJSON *h = member(doc, "hooks"), *init, *classes, *c;
	int rc, i = 0;

	if ((rc = need_object(r, h, &path, known)) != 0)
		return rc;
	init = member(h, "init_gpu_family_support");
	if ((rc = need_object(r, init, &ipath, known_init)) != 0 ||
	    (rc = parse_hook(r, init, &ipath, &a->init_installed, a->init_why_not, sizeof(a->init_why_not))) != 0)
		return rc;
	classes = member(h, "device_classes");
	if ((rc = need_array(r, classes, &cpath, LM_ACTIVATION_CLASSES)) != 0)
		return rc;
	cJSON_ArrayForEach(c, classes) {
		lm_json_path epath = LM_JSON_PATH_INDEX(&cpath, i);
		lm_activation_class *k = &a->classes[i++];

		if ((rc = need_object(r, c, &epath, known_class)) != 0 ||
		    (rc = get_text(r, c, &epath, "class", 0, k->name, sizeof(k->name))) != 0 ||
		    (rc = parse_hook(r, c, &epath, &k->installed, k->why_not, sizeof(k->why_not))) != 0 ||
		    (rc = get_text(r, c, &epath, "device", 1, k->device, sizeof(k->device))) != 0)
			return rc;
	}
	a->nclasses = (size_t)i;
	return 0;
}

static int get_class_index(const reader *r, const cJSON *obj, const lm_json_path *path, const lm_activation *a,
    int *out)
{
	lm_json_path kpath = LM_JSON_PATH_KEY(path, "device_class");
	uint64_t v;
	int rc;

	if ((rc = get_uint(r, obj, path, "device_class", 0, LM_ACTIVATION_CLASSES - 1, &v)) != 0)
		return rc;
	if (v >= a->nclasses)
		return lm_json_fail(r->source, &kpath, "class %llu is not in hooks.device_classes (%zu entries)",
		    (unsigned long long)v, a->nclasses);
	*out = (int)v;
	return 0;
}

static int parse_questions(const reader *r, const cJSON *doc, const lm_json_path *root, lm_activation *a)
{
	static const char *const known[] = { "device_class", "family", "stock", "given", NULL };
	lm_json_path path = LM_JSON_PATH_KEY(root, "questions");
	const cJSON *qs = member(doc, "questions"), *q;
	int rc, i = 0;

	if ((rc = need_array(r, qs, &path, LM_ACTIVATION_QUESTIONS)) != 0)
		return rc;
	cJSON_ArrayForEach(q, qs) {
		lm_json_path epath = LM_JSON_PATH_INDEX(&path, i);
		lm_json_path fpath = LM_JSON_PATH_KEY(&epath, "family");
		lm_activation_question *x = &a->questions[i++];
		char found[96];

		if ((rc = need_object(r, q, &epath, known)) != 0 || (rc = get_class_index(r, q, &epath, a, &x->device_class)) != 0)
			return rc;
		if (lm_json_int(member(q, "family"), -(int64_t)LM_JSON_INT_MAX, (int64_t)LM_JSON_INT_MAX, &x->family) != 0)
			return lm_json_fail(r->source, &fpath, "expected an integer, found %s",
			    member(q, "family") != NULL ? lm_json_describe(member(q, "family"), found, sizeof(found)) : "nothing");
		if ((rc = get_bool(r, q, &epath, "stock", &x->stock)) != 0 || (rc = get_bool(r, q, &epath, "given", &x->given)) != 0)
			return rc;
		for (int k = 0; k < i - 1; k++) {
			if (a->questions[k].device_class == x->device_class && a->questions[k].family == x->family)
				return lm_json_fail(r->source, &epath, "family %lld is asked twice for class %d (the shim records "
				    "the first only)", (long long)x->family, x->device_class);
		}
	}
	a->nquestions = (size_t)i;
	return 0;
}

static int parse_threadgroup(const reader *r, const cJSON *doc, const lm_json_path *root, lm_activation *a)
{
	static const char *const known[] = { "device_class", "stock", "given", NULL };
	lm_json_path path = LM_JSON_PATH_KEY(root, "threadgroup_memory_reads");
	const cJSON *reads = member(doc, "threadgroup_memory_reads"), *t;
	int rc, i = 0;

	if ((rc = need_array(r, reads, &path, LM_ACTIVATION_TG_READS)) != 0)
		return rc;
	cJSON_ArrayForEach(t, reads) {
		lm_json_path epath = LM_JSON_PATH_INDEX(&path, i);
		lm_activation_tg_read *x = &a->tg[i++];

		if ((rc = need_object(r, t, &epath, known)) != 0 || (rc = get_class_index(r, t, &epath, a, &x->device_class)) != 0 ||
		    (rc = get_uint(r, t, &epath, "stock", 0, UINT64_MAX, &x->stock)) != 0 ||
		    (rc = get_uint(r, t, &epath, "given", 0, UINT64_MAX, &x->given)) != 0)
			return rc;
		if (x->given < x->stock)
			return lm_json_fail(r->source, &epath, "given %llu is below stock %llu (the shim only raises it)",
			    (unsigned long long)x->given, (unsigned long long)x->stock);
	}
	a->ntg = (size_t)i;
	return 0;
}

static int parse_children(const reader *r, const cJSON *doc, const lm_json_path *root, lm_activation *a)
{
	static const char *const known[] = { "inherit", "variable", "setting", "why", "host_reason", NULL };
	static const char *const variables[] = { "DYLD_INSERT_LIBRARIES", "LD_PRELOAD", NULL };
	static const char *const settings[] = { "0", "1", "invalid", NULL };
	lm_json_path path = LM_JSON_PATH_KEY(root, "children");
	const cJSON *c = member(doc, "children");
	int rc;

	if ((rc = need_object(r, c, &path, known)) != 0 || (rc = get_bool(r, c, &path, "inherit", &a->inherit)) != 0 ||
	    (rc = get_word(r, c, &path, "variable", variables, a->variable, sizeof(a->variable))) != 0 ||
	    (rc = get_text(r, c, &path, "why", 0, a->children_why, sizeof(a->children_why))) != 0 ||
	    (rc = get_text(r, c, &path, "host_reason", 1, a->host_reason, sizeof(a->host_reason))) != 0)
		return rc;
	if (cJSON_IsNull(member(c, "setting"))) {
		a->setting[0] = '\0';
		return 0;
	}
	return get_word(r, c, &path, "setting", settings, a->setting, sizeof(a->setting));
}

/* 1.1's spawns[] and spawns_dropped (the shim writes both from 1.1 on; a 1.0 record has neither).
 * Either absent reads as none, so that a record of any 1.x is read; present, each is checked. */
static int parse_spawns(const reader *r, const cJSON *doc, const lm_json_path *root, lm_activation *a)
{
	static const char *const known[] = { "call", "path", "protected", "shim", "why", NULL };
	static const char *const calls[] = { "execve", "posix_spawn", "posix_spawnp", "posix_spawn_setexec", NULL };
	static const char *const shims[] = { "kept", "removed", "absent", NULL };
	lm_json_path path = LM_JSON_PATH_KEY(root, "spawns");
	const cJSON *spawns = member(doc, "spawns"), *e;
	uint64_t pid = 0;
	int rc, has = 0, i = 0;

	if (r->minor < 1 || (spawns == NULL && member(doc, "spawns_dropped") == NULL))
		return 0;
	if ((rc = need_array(r, spawns, &path, LM_ACTIVATION_SPAWNS)) != 0)
		return rc;
	cJSON_ArrayForEach(e, spawns) {
		lm_json_path epath = LM_JSON_PATH_INDEX(&path, i);
		lm_activation_spawn *x = &a->spawns[i++];

		if ((rc = need_object(r, e, &epath, known)) != 0 ||
		    (rc = get_word(r, e, &epath, "call", calls, x->call, sizeof(x->call))) != 0 ||
		    (rc = get_text(r, e, &epath, "path", 0, x->path, sizeof(x->path))) != 0 ||
		    (rc = get_bool(r, e, &epath, "protected", &x->protected_)) != 0 ||
		    (rc = get_word(r, e, &epath, "shim", shims, x->shim, sizeof(x->shim))) != 0 ||
		    (rc = get_text(r, e, &epath, "why", 0, x->why, sizeof(x->why))) != 0)
			return rc;
		/* The child's pid (null for an exec or a failed call): what ties a worker's record to the
		 * process that started it (an agent's pruning). Absent reads as null. */
		has = 0;
		if (member(e, "pid") != NULL && (rc = get_uint_or_null(r, e, &epath, "pid", 1, PID_MAX, &has, &pid)) != 0)
			return rc;
		x->pid = has ? (int64_t)pid : 0;
	}
	a->nspawns = (size_t)i;
	if ((rc = get_uint(r, doc, root, "spawns_dropped", 0, LM_JSON_INT_MAX, &a->spawns_dropped)) != 0)
		return rc;
	if (a->spawns_dropped > 0 && !a->incomplete) {
		lm_json_path dpath = LM_JSON_PATH_KEY(root, "spawns_dropped");

		return lm_json_fail(r->source, &dpath, "is %llu but the record is not marked incomplete",
		    (unsigned long long)a->spawns_dropped);
	}
	return 0;
}

int lm_activation_parse(const char *source, const char *text, size_t len, lm_activation *out)
{
	static const char *const known[] = { "format", "pid", "ppid", "exe", "arch", "shim_version", "written",
		"sequence", "incomplete", "profile", "hooks", "questions", "threadgroup_memory_reads", "children", NULL };
	static const char *const arches[] = { "arm64", "arm64e", "x86_64", NULL };
	static const char *const writes[] = { "load", "update", "exit", NULL };
	const lm_json_path *root = NULL; /* "$" */
	reader r = { source, 0 };
	lm_activation *a;
	uint64_t v;
	cJSON *doc = NULL;
	int rc;

	if (source == NULL || (text == NULL && len > 0) || out == NULL)
		return lm_error_set(LM_EINVALID, "lm_activation_parse: a source, a text and an output are required");
	if ((a = calloc(1, sizeof(*a))) == NULL)
		return lm_error_nomem();
	if ((rc = lm_json_parse_object(&doc, text, len, source, LM_ACTIVATION_MAX_BYTES)) != 0)
		goto done;
	if ((rc = parse_format(&r, doc, root)) != 0 ||
	    (r.minor == 0 && (rc = lm_json_check_members(doc, source, root, known)) != 0) ||
	    (rc = get_uint(&r, doc, root, "pid", 1, PID_MAX, &v)) != 0)
		goto done;
	a->pid = (int64_t)v;
	if ((rc = get_uint(&r, doc, root, "ppid", 0, PID_MAX, &v)) != 0)
		goto done;
	a->ppid = (int64_t)v;
	if ((rc = get_text(&r, doc, root, "exe", 1, a->exe, sizeof(a->exe))) != 0 ||
	    (rc = get_word(&r, doc, root, "arch", arches, a->arch, sizeof(a->arch))) != 0 ||
	    (rc = get_text(&r, doc, root, "shim_version", 0, a->shim_version, sizeof(a->shim_version))) != 0 ||
	    (rc = get_word(&r, doc, root, "written", writes, a->written, sizeof(a->written))) != 0 ||
	    (rc = get_uint(&r, doc, root, "sequence", 1, LM_JSON_INT_MAX, &a->sequence)) != 0 ||
	    (rc = get_bool(&r, doc, root, "incomplete", &a->incomplete)) != 0 ||
	    (rc = parse_profile(&r, doc, root, a)) != 0 || (rc = parse_hooks(&r, doc, root, a)) != 0 ||
	    (rc = parse_questions(&r, doc, root, a)) != 0 || (rc = parse_threadgroup(&r, doc, root, a)) != 0 ||
	    (rc = parse_children(&r, doc, root, a)) != 0 || (rc = parse_spawns(&r, doc, root, a)) != 0)
		goto done;
	*out = *a;
done:
	if (rc == LM_EINVALID)
		lm_error_prefix("a damaged activation record: ");
	cJSON_Delete(doc);
	free(a);
	return rc;
}

/* ---- the list --------------------------------------------------------------------------- */

int lm_activation_list_add(lm_activation_list *list, const char *source, const char *file, const char *text,
    size_t len)
{
	lm_activation *grown, *a;
	uint64_t pid;
	size_t at;
	int rc;

	if (list == NULL || !lm_activation_file_name_ok(file))
		return lm_error_set(LM_EINVALID, "%s: '%s' is not an activation record's name (<pid>.json)",
		    source != NULL ? source : "activation record", file != NULL ? file : "");
	if (list->count == LM_ACTIVATION_MAX_RECORDS)
		return lm_error_set(LM_ETOOLARGE, "%s: more than %d activation records (the limit)", source,
		    LM_ACTIVATION_MAX_RECORDS);
	if ((a = calloc(1, sizeof(*a))) == NULL)
		return lm_error_nomem();
	if ((rc = lm_activation_parse(source, text, len, a)) != 0)
		goto fail;
	(void)lm_text_parse_u64(file, strlen(file) - strlen(".json"), (uint64_t)PID_MAX, &pid);
	if ((int64_t)pid != a->pid) {
		rc = lm_error_set(LM_EINVALID, "a damaged activation record: %s: it says pid %lld, its name pid %llu", source,
		    (long long)a->pid, (unsigned long long)pid);
		goto fail;
	}
	snprintf(a->file, sizeof(a->file), "%s", file);
	if ((a->text = malloc(len + 1)) == NULL || (grown = realloc(list->items, (list->count + 1) * sizeof(*grown))) == NULL) {
		rc = lm_error_nomem();
		goto fail;
	}
	memcpy(a->text, text, len);
	a->text[len] = '\0';
	a->text_len = len;
	list->items = grown;
	for (at = list->count; at > 0 && list->items[at - 1].pid > a->pid; at--)
		list->items[at] = list->items[at - 1];
	list->items[at] = *a;
	list->count++;
	free(a);
	return 0;
fail:
	free(a->text);
	free(a);
	return rc;
}

void lm_activation_list_dispose(lm_activation_list *list)
{
	if (list == NULL)
		return;
	for (size_t i = 0; i < list->count; i++)
		free(list->items[i].text);
	for (size_t i = 0; i < LM_ACTIVATION_SKIPPED_KEPT; i++)
		free(list->skipped[i]);
	free(list->items);
	memset(list, 0, sizeof(*list));
}

/* A record that could not be taken: counted, and the first ones said (the error's message). */
static int skip(lm_activation_list *list)
{
	if (list->nskipped < LM_ACTIVATION_SKIPPED_KEPT &&
	    (list->skipped[list->nskipped] = strdup(lm_error_last()->message)) == NULL)
		return lm_error_nomem();
	list->nskipped++;
	return 0;
}

static int by_pid(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	size_t nx = strlen(x), ny = strlen(y);

	/* Names lm_activation_file_name_ok took: no leading zero, so the shorter is the smaller. */
	return nx != ny ? (nx < ny ? -1 : 1) : strcmp(x, y);
}

int lm_activation_fetch(lm_ssh *ssh, const char *remote_dir, lm_activation_list *out)
{
	lm_activation_list list;
	char **names = NULL, *text = NULL, *path = NULL, *source = NULL;
	size_t len, n = 0;
	int rc;

	if (ssh == NULL || remote_dir == NULL || remote_dir[0] != '/' || out == NULL)
		return lm_error_set(LM_EINVALID, "lm_activation_fetch: a session, an absolute guest directory and an output "
		    "are required");
	memset(&list, 0, sizeof(list));
	/* The shim's temporary files lie beside the records; every name is listed, the records sorted. */
	if ((rc = lm_ssh_list_dir(ssh, remote_dir, LM_ACTIVATION_MAX_LISTED, &names)) != 0)
		return lm_error_prefix("activation records: ");
	for (size_t i = 0; names[i] != NULL; i++) {
		if (lm_activation_file_name_ok(names[i]))
			names[n++] = names[i];
		else
			free(names[i]);
	}
	names[n] = NULL;
	qsort(names, n, sizeof(*names), by_pid);
	for (size_t i = 0; i < n; i++) {
		if (list.count == LM_ACTIVATION_MAX_RECORDS) {
			list.dropped = n - i;
			break;
		}
		free(path);
		free(source);
		source = NULL;
		if ((path = lm_format("%s/%s", remote_dir, names[i])) == NULL ||
		    (source = lm_format("%s", path)) == NULL) {
			rc = lm_error_nomem();
			goto done;
		}
		rc = lm_ssh_read_file(ssh, path, LM_ACTIVATION_MAX_BYTES, &text, &len);
		if (rc == LM_ENOTFOUND)
			continue; /* gone since the listing (an agent's pruned record): not a record any more */
		if (rc == 0)
			rc = lm_activation_list_add(&list, source, names[i], text, len);
		else
			lm_error_prefix("activation record %s: ", path);
		free(text);
		text = NULL;
		/* The guest's word, damaged or unreadable: said and skipped; the others still count. */
		if (rc == LM_ENOMEM || rc == LM_ECANCELED || (rc < 0 && (rc = skip(&list)) < 0))
			goto done;
		rc = 0;
	}
done:
	free(path);
	free(source);
	lm_strv_free(names);
	if (rc != 0) {
		lm_activation_list_dispose(&list);
		return rc;
	}
	*out = list;
	return 0;
}

/* ---- telling it ------------------------------------------------------------------------- */

/* The one rule of "the shim took" (issue 34), for run, --require-shim, agent list, status, doctor
 * and bench: an answer the shim changed in that process -- a supportsFamily: that stock answered
 * no and the shim yes, or a maxThreadgroupMemoryLength raised above stock. A process that loaded
 * the shim and asked no Metal question, or was given only stock's answers, did not get the unlock. */
int lm_activation_took(const lm_activation *a)
{
	if (a == NULL)
		return 0;
	for (size_t i = 0; i < a->nquestions; i++) {
		if (!a->questions[i].stock && a->questions[i].given)
			return 1;
	}
	for (size_t i = 0; i < a->ntg; i++) {
		if (a->tg[i].given > a->tg[i].stock)
			return 1;
	}
	return 0;
}

/* Some device class had its methods replaced. */
static int hooked(const lm_activation *a)
{
	for (size_t i = 0; i < a->nclasses; i++) {
		if (a->classes[i].installed)
			return 1;
	}
	return 0;
}

/* "64 KiB", or bytes when not a whole number of KiB. */
static void add_size(lm_buf *b, uint64_t v)
{
	if (v != 0 && v % 1024 == 0)
		lm_buf_addf(b, "%llu KiB", (unsigned long long)(v / 1024));
	else
		lm_buf_addf(b, "%llu bytes", (unsigned long long)v);
}

static void add_family(lm_buf *b, int64_t family)
{
	const char *name = family >= INT32_MIN && family <= INT32_MAX ? lm_family_name((int)family) : NULL;

	if (name != NULL)
		lm_buf_adds(b, name);
	else
		lm_buf_addf(b, "family %lld", (long long)family);
}

int lm_activation_summary(const lm_activation *a, char **out)
{
	lm_buf b;
	size_t changed = 0, same = 0;
	int rc;

	if (a == NULL || out == NULL)
		return lm_error_set(LM_EINVALID, "lm_activation_summary: a record and an output are required");
	lm_buf_init(&b, LM_BUF_TEXT_MAX);
	lm_buf_addf(&b, "pid %lld ", (long long)a->pid);
	/* The guest's text: shown, never interpreted by the terminal. */
	lm_text_sanitize(&b, a->exe[0] != '\0' ? a->exe : "(unknown program)", strlen(a->exe[0] != '\0' ? a->exe :
	    "(unknown program)"), 0);
	lm_buf_adds(&b, ": ");
	if (!a->active) {
		lm_buf_adds(&b, "loaded the shim, stayed stock: ");
		lm_text_sanitize(&b, a->why_stock, strlen(a->why_stock), 0);
	} else if (a->nclasses > 0 && !hooked(a)) {
		lm_buf_adds(&b, "loaded the shim, stayed stock: ");
		lm_text_sanitize(&b, a->classes[0].why_not, strlen(a->classes[0].why_not), 0);
	} else if (a->nquestions == 0 && a->ntg == 0) {
		lm_buf_adds(&b, "loaded the shim, asked no Metal question");
	} else {
		for (size_t i = 0; i < a->nquestions; i++) {
			const lm_activation_question *q = &a->questions[i];

			if (q->stock == q->given) {
				same++;
				continue;
			}
			lm_buf_adds(&b, changed++ == 0 ? "asked " : ", ");
			add_family(&b, q->family);
			lm_buf_addf(&b, "\xe2\x86\x92%s (stock %s)", q->given ? "yes" : "no", q->stock ? "yes" : "no");
		}
		if (changed == 0 && a->nquestions > 0)
			lm_buf_addf(&b, "asked %zu question%s, no answer changed", same, same == 1 ? "" : "s");
		else if (same > 0)
			lm_buf_addf(&b, " (%zu other answer%s unchanged)", same, same == 1 ? "" : "s");
		for (size_t i = 0; i < a->ntg; i++) {
			lm_buf_adds(&b, i == 0 ? (a->nquestions > 0 ? "; maxThreadgroupMemoryLength " :
			    "maxThreadgroupMemoryLength ") : ", ");
			add_size(&b, a->tg[i].given);
			if (a->tg[i].given != a->tg[i].stock) {
				lm_buf_adds(&b, " (stock ");
				add_size(&b, a->tg[i].stock);
				lm_buf_adds(&b, ")");
			} else {
				lm_buf_adds(&b, " (unchanged)");
			}
		}
	}
	if (a->incomplete)
		lm_buf_adds(&b, "; the record is incomplete (the shim's tables were full)");
	rc = lm_buf_take(&b, out, NULL);
	lm_buf_dispose(&b);
	return rc;
}

int lm_activation_json(const lm_activation *a, cJSON **out)
{
	cJSON *o = NULL, *record = NULL;
	char *summary = NULL;
	int rc;

	if (a == NULL || a->text == NULL || out == NULL)
		return lm_error_set(LM_EINVALID, "lm_activation_json: a record read by lm_activation_list_add is required");
	*out = NULL;
	if ((rc = lm_activation_summary(a, &summary)) != 0)
		return rc;
	if ((rc = lm_json_parse_object(&record, a->text, a->text_len, a->file, LM_ACTIVATION_MAX_BYTES)) != 0)
		goto done;
	if ((o = cJSON_CreateObject()) == NULL || cJSON_AddNumberToObject(o, "pid", (double)a->pid) == NULL ||
	    cJSON_AddNumberToObject(o, "ppid", (double)a->ppid) == NULL ||
	    (a->exe[0] != '\0' ? cJSON_AddStringToObject(o, "exe", a->exe) : cJSON_AddNullToObject(o, "exe")) == NULL ||
	    cJSON_AddBoolToObject(o, "took", lm_activation_took(a)) == NULL ||
	    cJSON_AddStringToObject(o, "summary", summary) == NULL || !cJSON_AddItemToObject(o, "record", record)) {
		rc = lm_error_nomem();
		goto done;
	}
	record = NULL;
	*out = o;
	o = NULL;
done:
	cJSON_Delete(record);
	cJSON_Delete(o);
	free(summary);
	return rc;
}

/* ---- the guest directory ---------------------------------------------------------------- */

static int name_ok(const char *name)
{
	size_t n = name != NULL ? strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") : 0;

	return n > 0 && n <= 128 && name[n] == '\0' && name[0] != '.';
}

/* Run a shell line in the guest; a non-zero exit is LM_EREMOTE with its stderr. */
static int run_line(lm_ssh *ssh, const char *line, const char *what)
{
	char *out = NULL, *err = NULL;
	int status = 0, rc;

	if ((rc = lm_ssh_ask(ssh, line, 64 * 1024, &out, &err, &status)) == 0 && status != 0)
		rc = lm_error_set(LM_EREMOTE, "%s failed (exit %d): %.*s", what, status, (int)strcspn(err, "\n"), err);
	lm_free(out);
	lm_free(err);
	return rc;
}

int lm_activation_dir_make(lm_ssh *ssh, const char *home, const char *name, char **dir)
{
	char *path = NULL, *q = NULL, *line = NULL;
	lm_guest_facts g;
	int rc;

	if (ssh == NULL || home == NULL || home[0] != '/' || dir == NULL || !name_ok(name))
		return lm_error_set(LM_EINVALID, "lm_activation_dir_make: a session, the guest's home and a plain name "
		    "([A-Za-z0-9._-], not starting with '.') are required");
	*dir = NULL;
	/* Through no link on the way (guest_files.c): the records go nowhere but where rollback looks. */
	memset(&g, 0, sizeof(g));
	if (lm_text_format(g.home, sizeof(g.home), "%s", home) < 0)
		return lm_error_set(LM_EINVALID, "the guest's home is longer than %zu bytes", sizeof(g.home) - 1);
	if ((rc = lm_guest_base_check(ssh, &g)) < 0 ||
	    (rc = lm_path_join(&path, home, LM_GUEST_BASE, LM_ACTIVATION_GUEST_DIR, name, NULL)) < 0)
		return rc;
	/* Every directory made here is 0700 whatever the umask (umask 077 for mkdir -p too), and every
	 * one from ~/.local down to the records' parent must be a directory of this user's that no
	 * group or other user can write (OpenSSH's rule for ~/.ssh, as state.c's for the state
	 * directory): another local user who could write, rename or own one of them could put a
	 * record of theirs where this run's records are read, and a forged record would pass
	 * --require-shim. Then the run's own directory, fresh and empty: a record left there by an
	 * earlier workload would be taken for this one's. */
	if ((rc = lm_shell_quote(path, &q)) < 0)
		goto done;
	if ((line = lm_format("umask 077 && d=%s && mkdir -p -- \"$d\" && u=$(id -u) && h=${d%%/%s/*} && "
	    "for p in .local .local/share %s %s/%s; do "
	    "[ -n \"$(find \"$h/$p\" -prune -type d -user \"$u\" ! -perm -020 ! -perm -002 2>/dev/null)\" ] || "
	    "{ printf '%%s\\n' \"~/$p is not a private directory of this user's (it belongs to another user, is "
	    "writable by its group or by others, or is not a directory): activation records there could be forged; "
	    "make it this user's own with chmod go-w (or remove it) and run again\" >&2; exit 3; }; done && "
	    /* A killed run's folder: its workload's group is gone (or was never written and the
	     * folder is old); a live run's, whose group still answers, stays. */
	    /* find, not a glob: zsh's NOMATCH makes an unmatched run-* an error (the login shell). */
	    "find \"${d%%/*}\" -mindepth 1 -maxdepth 1 -name 'run-*' -type d 2>/dev/null | "
	    "while IFS= read -r o; do [ \"$o\" != \"$d\" ] || continue; "
	    "if [ -s \"$o/%s\" ]; then read -r t <\"$o/%s\" || t=; case $t in ''|*[!0-9-]*) continue;; esac; "
	    "kill -s 0 -- \"$t\" 2>/dev/null && continue; "
	    "else [ -n \"$(find \"$o\" -prune -mmin +10 2>/dev/null)\" ] || continue; fi; rm -rf -- \"$o\"; done; "
	    "rm -rf -- \"$d\" && mkdir -m 700 -- \"$d\"", q, LM_GUEST_BASE, LM_GUEST_BASE, LM_GUEST_BASE,
	    LM_ACTIVATION_GUEST_DIR, LM_WORKLOAD_GROUP_FILE, LM_WORKLOAD_GROUP_FILE)) == NULL) {
		rc = lm_error_nomem();
		goto done;
	}
	if ((rc = run_line(ssh, line, "making the guest's activation record directory")) == 0) {
		*dir = path;
		path = NULL;
	} else if (rc == LM_ENOMEM) {
		/* The line may have run and only its answer been lost: the folder goes too (a failed
		 * make leaves nothing), the no-memory error stays. */
		char saved[512];
		snprintf(saved, sizeof(saved), "%s", lm_error_last()->message);
		(void)lm_activation_dir_remove(ssh, path);
		lm_error_set(rc, "%s", saved);
	}
done:
	free(line);
	lm_free(q);
	free(path);
	return rc;
}

int lm_activation_dir_remove(lm_ssh *ssh, const char *dir)
{
	char *q = NULL, *line = NULL;
	int rc;

	/* rm -rf of a path that is not one of ours would be a disaster: only what dir_make names. */
	if (ssh == NULL || dir == NULL || strstr(dir, "/" LM_GUEST_BASE "/" LM_ACTIVATION_GUEST_DIR "/") == NULL ||
	    strstr(dir, "/../") != NULL || !name_ok(strrchr(dir, '/') + 1))
		return lm_error_set(LM_EINVALID, "lm_activation_dir_remove: '%s' is not an activation record directory",
		    dir != NULL ? dir : "");
	if ((rc = lm_shell_quote(dir, &q)) < 0)
		return rc;
	if ((line = lm_format("rm -rf -- %s", q)) == NULL)
		rc = lm_error_nomem();
	else
		rc = run_line(ssh, line, "removing the guest's activation record directory");
	free(line);
	lm_free(q);
	return rc;
}

int lm_activation_command(const char *dir, const char *cmd, char **out)
{
	char *assign, *q = NULL;
	int rc;

	if (dir == NULL || dir[0] != '/' || cmd == NULL || out == NULL)
		return lm_error_set(LM_EINVALID, "lm_activation_command: an absolute directory and a command are required");
	*out = NULL;
	if ((assign = lm_format("LUME_METAL_RECORD_DIR=%s", dir)) == NULL)
		return lm_error_nomem();
	/* Its own `env` in front: the variable reaches the workload whatever cmd sets after it. */
	if ((rc = lm_shell_quote(assign, &q)) == 0 && (*out = lm_format("env %s %s", q, cmd)) == NULL)
		rc = lm_error_nomem();
	free(assign);
	lm_free(q);
	return rc;
}
