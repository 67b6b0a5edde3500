/* Lume's VM objects, and finding a JSON document among the log lines `lume` prints on stdout. */
#include "vm_internal.h"
#include "json.h"
#include "text.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A field of lm_vm_info, whole: longer than it holds is an error naming the limit. */
static int copy_field(char *dst, size_t cap, const char *src, const char *what, const char *field)
{
	size_t n = strlen(src);

	if (n >= cap)
		return lm_error_set(LM_ERROR, "%s: the VM's \"%s\" is %zu bytes long, more than the %zu lume-metal "
		    "takes", what, field, n, cap - 1);
	memcpy(dst, src, n + 1);
	return 0;
}

void lm_vm_display_from_json(const cJSON *obj, const char *key, lm_vm_info *out)
{
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(obj, key);

	/* Informational only: a value that is not a short string stays unknown. */
	if (cJSON_IsString(d) && strlen(d->valuestring) < sizeof(out->display))
		snprintf(out->display, sizeof(out->display), "%s", d->valuestring);
}

int lm_vm_info_from_json(const cJSON *obj, lm_vm_info *out, const char *what)
{
	const cJSON *name, *status, *os, *ip, *ssh;

	memset(out, 0, sizeof(*out));
	if (!cJSON_IsObject(obj))
		return lm_error_set(LM_ERROR, "%s: expected a VM object, found something else", what);
	name = cJSON_GetObjectItemCaseSensitive(obj, "name");
	status = cJSON_GetObjectItemCaseSensitive(obj, "status");
	if (!cJSON_IsString(name) || !cJSON_IsString(status))
		return lm_error_set(LM_ERROR, "%s: VM object without a \"name\" and \"status\"", what);
	if (strlen(name->valuestring) >= sizeof(out->name))
		return lm_error_set(LM_ERROR, "%s: VM name longer than %zu bytes", what, sizeof(out->name) - 1);
	if (copy_field(out->name, sizeof(out->name), name->valuestring, what, "name") < 0 ||
	    copy_field(out->status, sizeof(out->status), status->valuestring, what, "status") < 0)
		return LM_ERROR;
	os = cJSON_GetObjectItemCaseSensitive(obj, "os");
	if (cJSON_IsString(os) && copy_field(out->os, sizeof(out->os), os->valuestring, what, "os") < 0)
		return LM_ERROR;
	ip = cJSON_GetObjectItemCaseSensitive(obj, "ipAddress");
	if (cJSON_IsString(ip)) {
		if (lm_vm_address_answer(what, out->name, ip->valuestring, out->ip, sizeof(out->ip)) < 0)
			return LM_ERROR;
	} else if (ip != NULL && !cJSON_IsNull(ip))
		return lm_error_set(LM_ERROR, "%s: VM '%s' has an \"ipAddress\" that is not a string", what, out->name);
	ssh = cJSON_GetObjectItemCaseSensitive(obj, "sshAvailable");
	out->ssh_available = cJSON_IsTrue(ssh);
	lm_vm_display_from_json(obj, "display", out);
	return 0;
}

int lm_vm_info_array_from_json(const cJSON *array, lm_vm_info **out, size_t *count, const char *what)
{
	size_t n, i = 0;
	const cJSON *item;
	lm_vm_info *vms;
	int rc;

	*out = NULL;
	*count = 0;
	if (!cJSON_IsArray(array))
		return lm_error_set(LM_ERROR, "%s: expected a JSON array of VMs", what);
	n = (size_t)cJSON_GetArraySize(array);
	if ((vms = calloc(n ? n : 1, sizeof(*vms))) == NULL)
		return lm_error_nomem();
	cJSON_ArrayForEach(item, array) {
		if ((rc = lm_vm_info_from_json(item, &vms[i++], what)) < 0) {
			free(vms);
			return rc;
		}
	}
	*out = vms;
	*count = n;
	return 0;
}

int lm_vm_json_find(const char *text, int want_type, cJSON **out)
{
	const char *line, *p, *end;
	size_t len = strlen(text), n, k;
	lm_scan lines, l;
	cJSON *doc;

	*out = NULL;
	lm_scan_init(&lines, text, len);
	while (lm_scan_line(&lines, &line, &n) != 0) {
		lm_scan_init(&l, line, n);
		lm_scan_span(&l, " \t\r");
		lm_scan_rest(&l, &p, &k);
		if (k > 0 && ((want_type == cJSON_Array && *p == '[') || (want_type == cJSON_Object && *p == '{'))) {
			/* A log line may start with '[' too ("[2026-...] INFO: ..."): it does not parse. The
			 * document may go on over the next lines: parsed to the end of the text. */
			if (lm_json_parse(&doc, p, len - (size_t)(p - text) + 1, &end, 0) == LM_ENOMEM)
				return LM_ENOMEM;
			if (doc != NULL && (doc->type & 0xff) == want_type) {
				*out = doc;
				return 0;
			}
			cJSON_Delete(doc);
		}
	}
	return lm_error_set(LM_EINVALID, "no JSON %s in the output", want_type == cJSON_Array ? "array" : "object");
}

void lm_vm_excerpt(const char *text, char *buf, size_t cap)
{
	size_t i = 0, j = 0;

	if (cap == 0)
		return;
	if (text == NULL)
		text = "";
	while (text[i] == '\n' || text[i] == '\r' || text[i] == ' ')
		i++;
	for (; text[i] != '\0' && text[i] != '\n' && j + 1 < cap; i++) {
		unsigned char c = (unsigned char)text[i];
		buf[j++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
	}
	buf[j] = '\0';
	if (text[i] != '\0' && text[i] != '\n' && cap > 4)
		memcpy(buf + cap - 4, "...", 4);
	while (j > 0 && (buf[j - 1] == '\r' || buf[j - 1] == ' '))
		buf[--j] = '\0';
}
