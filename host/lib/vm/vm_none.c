/* The manager-less backend (`--vm-manager none`): a VM that something else started, known only by
 * its address. Everything that runs in the guest works; starting and stopping are the user's job,
 * and saying so is all this backend does for them. */
#include "vm_internal.h"
#include "net_words.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	char *address; /* the guest's, as the options give it */
} none_state;

static int none_get(lm_vm_manager *vmm, void *state, const char *name, lm_vm_info *out)
{
	const none_state *s = state;

	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", name);
	snprintf(out->ip, sizeof(out->ip), "%s", s->address);
	vmm->ssh_probe_err = lm_vm_probe_ssh(out);
	/* Nothing says whether the VM runs: it is "running" while its SSH answers. */
	snprintf(out->status, sizeof(out->status), "%s", out->ssh_available ? "running" : "unreachable");
	return 0;
}

static int none_list(lm_vm_manager *vmm, void *state, lm_vm_info **out, size_t *count)
{
	(void)vmm;
	(void)state;
	*out = NULL;
	*count = 0; /* no manager, no list: only the VMs named on the command line are known */
	return 0;
}

static int none_start(lm_vm_manager *vmm, void *state, const char *name)
{
	const none_state *s = state;
	char words[256];

	/* What the probe of the get before this one answered, by name: a refused port 22 is most
	 * likely a VM that is off, an unreachable address may be macOS 15's Local Network privacy. */
	if (vmm->ssh_probe_err != 0 && vmm->ssh_probe_err != ETIMEDOUT)
		lm_connect_error_words(vmm->ssh_probe_err, words, sizeof(words));
	else
		snprintf(words, sizeof(words), "does not answer");
	return lm_error_set(LM_ERROR, "%s: no VM manager is in use, so the VM cannot be started from here; "
	    "start it yourself if it is off: SSH at %s (port 22): %s", name, s->address, words);
}

static int none_stop(lm_vm_manager *vmm, void *state, const char *name)
{
	(void)vmm;
	(void)state;
	return lm_error_set(LM_ERROR, "%s: no VM manager is in use, so the VM cannot be stopped or restarted "
	    "from here; restarting it is the user's job", name);
}

static int none_init(lm_vm_manager *vmm, void **state)
{
	const char *address = lm_context_options(vmm->ctx)->vm_address;
	none_state *s;

	if (address == NULL || address[0] == '\0')
		return lm_error_set(LM_ENOADDRESS, "without a VM manager the guest's address is needed, and none was given");
	if (!lm_vm_is_ipv4(address))
		return lm_error_set(LM_EINVALID, "'%s' is not an IPv4 address", address);
	if ((*state = s = calloc(1, sizeof(*s))) == NULL || (s->address = strdup(address)) == NULL)
		return lm_error_nomem();
	return 0;
}

static void none_release(lm_vm_manager *vmm, void *state)
{
	none_state *s = state;

	(void)vmm;
	free(s->address);
	free(s);
}

const lm_vm_backend lm_vm_backend_none = {.name = "none", .init = none_init, .list = none_list, .get = none_get,
	.start = none_start, .stop = none_stop, .release = none_release};
