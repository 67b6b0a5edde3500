/* What the guest prints for its facts (uname -s, uname -m, sw_vers -productVersion,
 * sysctl -n kern.boottime, $HOME, the `current` link), then what the host builds from them: the
 * shim's paths and the quoted command line, and the facts' copy in the state journal. */
#include <stdlib.h>
#include <string.h>

#include "guest_machine.h"
#include "guest_shim.h"
#include "record.h"
#include "fuzz_support.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static lm_profile *profile;
	static const char *const argv[] = {"metal-capabilities", "--report", "stock"};
	char *out = lm_fuzz_strdup(data, size), *cmd = NULL, current[128];
	lm_guest_facts facts;
	lm_vm_record rec, back;
	lm_shim_env se;
	cJSON *vm;

	if (profile == NULL)
		LM_FUZZ_CHECK(lm_profile_builtin(&profile, lm_profile_default_name()) == 0);
	if (lm_guest_facts_parse(out, "stderr", &facts, current, sizeof(current)) < 0) {
		free(out);
		return 0;
	}
	LM_FUZZ_CHECK(facts.os[0] != '\0' && facts.home[0] == '/');
	LM_FUZZ_CHECK(lm_shim_env_make(&se, &facts, "DYLD_INSERT_LIBRARIES", "LumeMetalShim.dylib",
	    "metal-capabilities", profile) == 0);
	LM_FUZZ_CHECK(lm_shim_command(&se, 1, argv, 3, &cmd) == 0 && cmd != NULL);
	free(cmd);

	LM_FUZZ_CHECK((vm = cJSON_CreateObject()) != NULL);
	memset(&rec, 0, sizeof(rec));
	lm_vm_record_set_guest(&rec, &facts);
	LM_FUZZ_CHECK(lm_vm_record_encode(&rec, vm) == 0);
	LM_FUZZ_CHECK(lm_vm_record_decode(vm, "vm", &back) == 0);
	LM_FUZZ_CHECK(strcmp(back.guest.os, facts.os) == 0 && strcmp(back.guest.arch, facts.arch) == 0 &&
	    strcmp(back.guest.os_version, facts.os_version) == 0 && strcmp(back.guest.home, facts.home) == 0);
	lm_vm_record_dispose(&back);
	cJSON_Delete(vm);
	free(out);
	return 0;
}
