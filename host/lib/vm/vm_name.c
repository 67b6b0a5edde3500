/* The one validator for VM names: what Lume accepts and what is safe in a URL path segment, a
 * command line argument and a file name. */
#include "vm_internal.h"

#include <stdio.h>
#include <string.h>

#include "text.h"

static int name_char_ok(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	    c == '.' || c == '_' || c == '-';
}

int lm_vm_name_normalize(const char *in, char out[LM_VM_NAME_MAX])
{
	const char *colon;
	size_t len, i;
	char shown[8], name[160];

	out[0] = '\0';
	if (in == NULL || in[0] == '\0')
		return lm_error_set(LM_EINVALID, "VM name is empty: give the name Lume shows (lume ls)");
	len = strlen(in);
	/* The name is echoed in messages through the one sanitiser: a rejected name may hold escape
	 * sequences or bytes that are not UTF-8. */
	lm_text_quote(name, sizeof(name), in, len, 60);
	if (len >= LM_VM_NAME_MAX)
		return lm_error_set(LM_EINVALID, "VM name '%s' is too long (%zu bytes; at most %d)", name, len,
		    LM_VM_NAME_MAX - 1);
	colon = strchr(in, ':');
	if (colon != NULL && (colon == in || colon[1] == '\0' || strchr(colon + 1, ':') != NULL))
		return lm_error_set(LM_EINVALID, "VM name '%s': expected NAME or NAME:TAG", name);
	if (in[0] == '-')
		return lm_error_set(LM_EINVALID, "VM name '%s' must not start with '-'", name);
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)in[i];
		if (c == ':') {
			out[i] = '_'; /* Lume stores NAME:TAG as NAME_TAG */
			continue;
		}
		if (!name_char_ok(c)) {
			if (c >= 0x20 && c < 0x7f)
				snprintf(shown, sizeof(shown), "'%c'", c);
			else
				snprintf(shown, sizeof(shown), "\\x%02x", c);
			out[0] = '\0';
			return lm_error_set(LM_EINVALID,
			    "VM name '%s': character %s at position %zu is not allowed (use letters, digits, '.', '_', '-')",
			    name, shown, i + 1);
		}
		out[i] = (char)c;
	}
	out[len] = '\0';
	if (strcmp(out, ".") == 0 || strcmp(out, "..") == 0) {
		out[0] = '\0';
		return lm_error_set(LM_EINVALID, "VM name '%s' is not allowed", name);
	}
	return 0;
}
