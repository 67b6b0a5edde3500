/* lume-metal, lower-level calls: the VM managers (Lume HTTP API, Lume CLI, Tart, UTM, none).
 * Not included by lume-metal.h: #include <lume-metal/sys/vm.h> (docs/embedding.md, "Lower-level
 * calls"). The flow calls choose and drive the manager of each VM; an embedder needs these only
 * to list, start or stop VMs itself. Less stable than the flow calls: they follow what the flows
 * need. */
#ifndef LUME_METAL_SYS_VM_H
#define LUME_METAL_SYS_VM_H

#include "../common.h"

#include <stddef.h>

#include "../context.h"
#include "../vm.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lm_vm_manager lm_vm_manager;

/* Choose per ctx: a forced kind, else automatically per VM name: Lume (its API when anything
 * accepts connections at lume_url -- no request is made: Lume's endpoints can take seconds --,
 * else `lume` on PATH), `tart` and `utmctl` on PATH; the one that knows the VM is used for it, and
 * a name that two managers know is an error listing both (docs/vm-managers.md). */
LM_EXTERN(int) lm_vm_manager_open(lm_vm_manager **out, lm_context *ctx);
LM_EXTERN(void) lm_vm_manager_free(lm_vm_manager *vmm);
/* "lume-api", "lume-cli", "tart", "utm", "none"; "auto" before a VM was looked up automatically */
LM_EXTERN(const char *) lm_vm_manager_name(const lm_vm_manager *vmm);
/* The manager used for `name` ("auto" until it was looked up): the choice shown per VM. */
LM_EXTERN(const char *) lm_vm_manager_name_for(const lm_vm_manager *vmm, const char *name);
/* The version of the manager used for `name`, as its program says it (`lume --version` — for
 * Lume's API too —, `tart --version`, `utmctl version`): the first version number of its answer
 * ("0.2.22") into buf, "" when the program fails. LM_ENOTFOUND when the program is not there, the
 * manager has none (none) or has not been chosen for `name` yet (automatic choice). */
LM_EXTERN(int) lm_vm_manager_version(lm_vm_manager *vmm, const char *name, char *buf, size_t len);
/* The managers in use (automatic choice: every one found), each with its version when it tells
 * one: "lume-api 0.2.22, tart 2.28.0" (a manager that does not answer says why instead). */
LM_EXTERN(int) lm_vm_manager_versions(lm_vm_manager *vmm, char *buf, size_t len);
/* 0 for the manager-less mode: starting and stopping VMs are the user's job there. */
LM_EXTERN(int) lm_vm_manager_can_start(const lm_vm_manager *vmm);

LM_EXTERN(int) lm_vm_list(lm_vm_manager *vmm, lm_vm_info **out, size_t *count); /* free *out with lm_free() */
LM_EXTERN(int) lm_vm_get(lm_vm_manager *vmm, const char *name, lm_vm_info *out);  /* LM_ENOTFOUND when unknown */
/* Start; never starts a VM that is already running (returns 0, nothing sent). */
LM_EXTERN(int) lm_vm_start(lm_vm_manager *vmm, const char *name);
/* After an lm_vm_start of `name` that failed or was canceled: 1 when it had launched the VM all the
 * same (the manager was sent the start, or the process that runs the VM was spawned), so that the
 * VM may be coming up and is the caller's to stop again (vm_undo.h); 0 when nothing was launched. */
LM_EXTERN(int) lm_vm_start_launched(const lm_vm_manager *vmm, const char *name);
/* Stop and wait until stopped; a stopped VM is a no-op. */
LM_EXTERN(int) lm_vm_stop(lm_vm_manager *vmm, const char *name);
/* Wait until running with an IP and SSH reachable, polling with backoff, at most `timeout` s
 * (LM_ETIMEOUT). A "stopped" right after a start is waited out (Lume has no "starting" state),
 * but the wait ends at once when the manager says "stopped" after an answer since this manager's
 * last start or stop said the VM was up (LM_ENOTRUNNING: something stopped it), or, after a start
 * it accepted, once it says the host runs as many VMs as it may and the VM is still stopped after
 * that (LM_ERROR naming it: Lume's available_slots 0; docs/vm-managers.md). */
LM_EXTERN(int) lm_vm_wait_ready(lm_vm_manager *vmm, const char *name, double timeout, lm_vm_info *out);
/* What lm_vm_wait_ready waits for, as one answer of the manager says it: running, an IP, SSH
 * reachable (1), or not yet (0). */
LM_EXTERN(int) lm_vm_info_ready(const lm_vm_info *info);

/* Who serves the Lume API on this host: the process listening on lume_url's port (`lume serve`,
 * normally the logged-in user's LaunchAgent). The VMs it runs read that user's preferences. */
typedef struct {
	int local;          /* lume_url names this host (a loopback address or localhost) */
	int found;          /* something accepts connections there */
	long pid;           /* 0 when its process is not visible to this user */
	long uid;           /* -1 when unknown */
	char user[64];      /* its user's name ("uid N", "an unknown user"); "" when none was found */
	char address[272];  /* HOST:PORT from lume_url */
	char command[160];  /* its command line, shortened; "" when unknown */
} lm_vm_server_info;

LM_EXTERN(int) lm_vm_server_lookup(lm_context *ctx, lm_vm_server_info *out);

#ifdef __cplusplus
}
#endif
#endif
