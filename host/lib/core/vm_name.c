/* The one VM-name rule (vm_name.h). */
#include "vm_name.h"

#include <stdio.h>
#include <string.h>

#include "error_internal.h"
#include "text.h"

static int name_char_ok(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	    c == '.' || c == '_' || c == '-';
}

/* The rule for name[0..len); messages quote `given` (what the caller was given: the same length,
 * before NAME:TAG became NAME_TAG), sanitised, since a rejected name may hold escape sequences. */
static int check(const char *name, size_t len, const char *given)
{
	char shown[160], c_shown[8];
	size_t i = 0;

	if (len == 0)
		return lm_error_set(LM_EINVALID, "VM name is empty: give the name Lume shows (lume ls)");
	if (len < LM_VM_NAME_MAX && name[0] != '-') {
		while (i < len && name_char_ok((unsigned char)name[i]))
			i++;
		if (i == len && !(len == 1 && name[0] == '.') && !(len == 2 && name[0] == '.' && name[1] == '.'))
			return 0;
	}
	/* Refused: quoted for the message only now (a good name costs no allocation). */
	lm_text_quote(shown, sizeof(shown), given, len, 60);
	if (len >= LM_VM_NAME_MAX)
		return lm_error_set(LM_EINVALID, "VM name '%s' is too long (%zu bytes; at most %d)", shown, len,
		    LM_VM_NAME_MAX - 1);
	if (name[0] == '-')
		return lm_error_set(LM_EINVALID, "VM name '%s' must not start with '-'", shown);
	if (i < len) {
		unsigned char c = (unsigned char)name[i];
		if (c >= 0x20 && c < 0x7f)
			snprintf(c_shown, sizeof(c_shown), "'%c'", c);
		else
			snprintf(c_shown, sizeof(c_shown), "\\x%02x", c);
		return lm_error_set(LM_EINVALID,
		    "VM name '%s': character %s at position %zu is not allowed (use letters, digits, '.', '_', '-')",
		    shown, c_shown, i + 1);
	}
	return lm_error_set(LM_EINVALID, "VM name '%s' is not allowed", shown);
}

int lm_vm_name_check(const char *name, size_t len)
{
	return check(name != NULL ? name : "", name != NULL ? len : 0, name != NULL ? name : "");
}

int lm_vm_name_normalize(const char *in, char out[LM_VM_NAME_MAX])
{
	const char *colon;
	char shown[160];
	size_t len, i;
	int rc;

	out[0] = '\0';
	if (in == NULL || in[0] == '\0')
		return check("", 0, "");
	len = strlen(in);
	if (len >= LM_VM_NAME_MAX)
		return check(in, len, in);
	colon = strchr(in, ':');
	if (colon != NULL && (colon == in || colon[1] == '\0' || strchr(colon + 1, ':') != NULL)) {
		lm_text_quote(shown, sizeof(shown), in, len, 60);
		return lm_error_set(LM_EINVALID, "VM name '%s': expected NAME or NAME:TAG", shown);
	}
	for (i = 0; i < len; i++)
		out[i] = in[i] == ':' ? '_' : in[i]; /* Lume stores NAME:TAG as NAME_TAG */
	out[len] = '\0';
	if ((rc = check(out, len, in)) < 0)
		out[0] = '\0';
	return rc;
}
