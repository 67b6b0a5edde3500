/* The agent-label rule: the one check of a LaunchAgent's label, below every module that names an
 * agent (guestops builds its plist, record/ keeps it in the journal, flow/ and local/ take it from
 * the caller), as the VM-name rule (vm_name.c) is below every module that names a VM. */
#include <string.h>

#include "lume-metal/agent.h"
#include "error_internal.h"

int lm_agent_label_check(const char *label)
{
	size_t i, n;

	if (label == NULL || label[0] == '\0')
		return lm_error_set(LM_EINVALID, "an agent needs a label (reverse-DNS, e.g. com.example.llama-server)");
	n = strlen(label);
	if (n >= LM_AGENT_LABEL_MAX)
		return lm_error_set(LM_EINVALID, "agent label '%.40s...' is %zu bytes long; at most %d are allowed", label,
		    n, LM_AGENT_LABEL_MAX - 1);
	for (i = 0; i < n; i++) {
		char c = label[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-'))
			return lm_error_set(LM_EINVALID, "agent label '%s': byte %zu is not a letter, a digit, '.' or '-' "
			    "(reverse-DNS characters only)", label, i + 1);
	}
	/* The label names the plist file and the launchd service: no empty component, no leading
	 * '-' (read as an option) or '.', and nothing of Apple's. */
	if (label[0] == '.' || label[0] == '-' || label[n - 1] == '.' || strstr(label, "..") != NULL)
		return lm_error_set(LM_EINVALID, "agent label '%s': components separated by single dots, none empty, "
		    "not starting with '-'", label);
	if (strncmp(label, "com.apple.", 10) == 0)
		return lm_error_set(LM_EINVALID, "agent label '%s': com.apple.* labels are Apple's", label);
	return 0;
}
