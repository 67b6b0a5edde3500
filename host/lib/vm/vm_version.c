/* The VM manager's own version, for records (bench's metadata): the program the manager's backend
 * uses, asked the way its users ask it — `lume --version` (also for Lume's API, whose server does
 * not tell its own), `tart --version`, `utmctl version`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vm_internal.h"

#define VERSION_TIMEOUT 10.0

extern char **environ;

int lm_vm_manager_version(lm_vm_manager *vmm, const char *name, char *buf, size_t len)
{
	const lm_options *o = lm_context_options(vmm->ctx);
	const char *manager = lm_vm_manager_name_for(vmm, name), *program, *arg = "--version";
	char *path = NULL, *argv[3], *line;
	lm_proc_result res;
	int rc;

	if (len == 0)
		return lm_error_set(LM_EINVALID, "lm_vm_manager_version: no room for the answer");
	buf[0] = '\0';
	if (strcmp(manager, "lume-api") == 0 || strcmp(manager, "lume-cli") == 0)
		program = o->lume_program != NULL && o->lume_program[0] ? o->lume_program : "lume";
	else if (strcmp(manager, "tart") == 0)
		program = o->tart_program != NULL && o->tart_program[0] ? o->tart_program : "tart";
	else if (strcmp(manager, "utm") == 0) {
		program = o->utmctl_program != NULL && o->utmctl_program[0] ? o->utmctl_program : "utmctl";
		arg = "version";
	} else
		return lm_error_set(LM_ENOTFOUND, "the VM manager %s has no version to tell", manager);
	if ((rc = lm_proc_find_program(program, &path)) < 0)
		return rc;
	argv[0] = path;
	argv[1] = (char *)arg;
	argv[2] = NULL;
	rc = lm_proc_run(argv, environ, VERSION_TIMEOUT, &res);
	free(path);
	if (rc < 0)
		return rc;
	if (res.exit_code != 0 || res.out == NULL || res.out[0] == '\0') {
		rc = lm_error_set(LM_EREMOTE, "%s %s: exit %d", program, arg, res.exit_code);
	} else {
		line = res.out + strspn(res.out, " \t\n");
		line[strcspn(line, "\r\n")] = '\0';
		snprintf(buf, len, "%s", line);
	}
	lm_proc_result_dispose(&res);
	return rc;
}
