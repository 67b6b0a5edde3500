/* Internal (for the modules that depend on flow): an enabled VM held for running workloads in it,
 * as `run` does — its shared VM lock, VM manager, SSH session and shim environment. */
#ifndef LM_FLOW_SESSION_H
#define LM_FLOW_SESSION_H

#include <stddef.h>

#include "lume-metal/flow.h"
#include "lume-metal/sys/ssh.h"

typedef struct lm_flow_session lm_flow_session;

/* The VM must be enabled and running: LM_ENOTENABLED, LM_ENOTRUNNING otherwise. */
int lm_flow_session_open(lm_flow_session **out, lm_context *ctx, const char *vm);
void lm_flow_session_close(lm_flow_session *s); /* NULL is fine */

/* Its outcome: name, manager's info, guest facts, profile name, bundle id. */
const lm_vm_outcome *lm_flow_session_vm(const lm_flow_session *s);
const lm_profile *lm_flow_session_profile(const lm_flow_session *s);
/* The VM manager used for it ("lume-api", "tart", ...), and its version ("" when it cannot be told). */
const char *lm_flow_session_manager(const lm_flow_session *s);
void lm_flow_session_manager_version(lm_flow_session *s, char *buf, size_t len);
lm_ssh *lm_flow_session_ssh(lm_flow_session *s);
/* Where the installed bundle's shim and probe are in the guest. */
const char *lm_flow_session_shim(const lm_flow_session *s);
const char *lm_flow_session_probe(const lm_flow_session *s);

/* argv as a guest command line: shimmed as `run` runs it, or stock (the same PATH, no shim). */
int lm_flow_session_command(const lm_flow_session *s, int shimmed, const char *const *argv, size_t argc, char **cmd);
/* The file argv's program is in the guest, found with the PATH the workload gets. */
int lm_flow_session_program(lm_flow_session *s, const char *const *argv, size_t argc, char *path, size_t len);
/* The shim's children rule told what the guest is, as `run` tells it: the guest's SIP state and
 * whether the installed shim has an arm64e slice (LUME_METAL_GUEST_SIP, LUME_METAL_SHIM_ARM64E in
 * every shimmed command after). */
int lm_flow_session_guest(lm_flow_session *s);
/* Warn (the context's log) when SIP keeps the shim away from argv's program, as `run` does. */
int lm_flow_session_warn(lm_flow_session *s, const char *const *argv, size_t argc);

#endif
