/* The machine lume-metal runs on, as `lume-metal local` sees it through the local transport: the
 * installed bundle used where it is, and what says whether this machine is a VM. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest_bundle.h"
#include "guest_machine.h"
#include "guest_shim.h"
#include "path.h"

int lm_shim_env_in_place(lm_shim_env *se, const lm_bundle *b, const lm_profile *profile)
{
	int rc;

	memset(se, 0, sizeof(*se));
	if (strlen(b->injection) >= sizeof(se->injection))
		return lm_error_set(LM_EINVALID, "the shim's variable name is longer than %zu bytes (the limit)",
		    sizeof(se->injection) - 1);
	memcpy(se->injection, b->injection, strlen(b->injection) + 1);
	if ((rc = lm_path_join_buf(se->shim_path, sizeof(se->shim_path), b->dir, b->shim, NULL)) < 0 ||
	    (rc = lm_path_join_buf(se->probe_path, sizeof(se->probe_path), b->dir, b->probe, NULL)) < 0)
		return rc;
	return lm_profile_render_env(profile, se->env, &se->nenv);
}

int lm_bundle_verify_in_place(const lm_bundle *b)
{
	void *data;
	size_t i, len;
	int rc;

	for (i = 0; i < b->nfiles; i++) {
		if ((rc = lm_bundle_read(b, &b->files[i], &data, &len)) < 0)
			return rc;
		free(data);
	}
	return 0;
}

int lm_machine_hv_vmm_present(lm_ssh *ssh, int *present)
{
	char *out = NULL;
	int status = 0, rc;

	*present = -1;
	/* macOS answers 1 inside a VM, 0 on bare metal; an older system has no such key (unknown). */
	if ((rc = lm_ssh_exec_capture(ssh, "sysctl -n kern.hv_vmm_present 2>/dev/null", 4096, &out, NULL, &status)) < 0)
		return rc;
	if (status == 0 && out != NULL && (strcmp(out, "1\n") == 0 || strcmp(out, "0\n") == 0))
		*present = out[0] == '1';
	lm_free(out);
	return 0;
}
