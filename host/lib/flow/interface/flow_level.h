/* Internal (for bench, which depends on flow): the host's level changed for one enabled VM as
 * enable and rollback change it -- the preference through prefs/, the VM restarted, its start noted
 * in the journal -- so that no module above flow writes the preference or the journal itself. */
#ifndef LM_FLOW_LEVEL_H
#define LM_FLOW_LEVEL_H

#include "lume-metal/context.h"
#include "lume-metal/prefs.h"
#include "lume-metal/sys/vm.h"

/* on: the preference set to want (recorded as enable records it); off: given back to its recorded
 * original. Then vm is stopped and started again so that it runs at that level, and the journal
 * notes when this tool asked for the start, as enable does (a VM started after the preference
 * changed runs at its level: the restart rule, record/level.c). undo: with the VM manager's calls
 * that no cancel stops (vm_undo.h), not waiting for the VM to be ready. ctx's keep_host is the one
 * the change is recorded with. *pref_set: 1 once the preference is as asked, whatever the restart
 * did after (the caller's undo then gives it back). */
int lm_flow_host_level(lm_context *ctx, lm_vm_manager *vmm, const char *vm, const lm_pref_setting *want, int on,
    int undo, int *pref_set);

#endif
