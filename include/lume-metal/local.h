/* lume-metal: `local` -- the probe, the exercise, run and agents on the machine lume-metal runs on
 * (a hosted macOS runner, a CI runner inside a VM), with no SSH and no VM manager.
 *
 * The installed guest bundle for this machine's OS is used where it is (nothing is copied); the
 * guest operations run unchanged over a local transport that runs their commands the way a guest's
 * sshd would (docs/design.md, "The local transport"). `local` never reads or writes the host
 * preference: inside a VM it cannot reach the host. What it can tell instead: whether this machine
 * looks like a VM (sysctl kern.hv_vmm_present, the paravirtual device's name), what the stock
 * device answers, whether the shimmed answers hold, and which kernels actually ran.
 */
#ifndef LUME_METAL_LOCAL_H
#define LUME_METAL_LOCAL_H

#include "common.h"

#include <stddef.h>

#include "agent.h"
#include "context.h"
#include "flow.h"
#include "profile.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LM_LOCAL_PATH_MAX 4096

/* What one local command found; allocated by the library (lm_local_result_free), growing only at
 * its end. `machine` is an outcome like a VM's (flow.h): its facts (`guest`), steps, profile,
 * bundle id, the stock and shimmed reports, the exercise, the agents; its `vm` is "local". */
typedef struct {
	size_t size;                 /* sizeof(lm_local_result) as the library was built */
	lm_vm_outcome *machine;
	/* Five ints: this one before the double, so that the struct ends without padding
	 * (cmake/LumeMetalAbi.cmake). */
	int hv_vmm_present;          /* sysctl kern.hv_vmm_present: 1, 0; -1 no answer */
	double seconds;
	char bundle_dir[LM_LOCAL_PATH_MAX]; /* the installed bundle, used in place ("" when none found) */
	int paravirtual_device;      /* the stock device is "Apple Paravirtual device": 1, 0; -1 not probed */
	int looks_like_vm;           /* 1 when either says so, 0 when both say not, -1 unknown */
	int answers_hold;            /* the shim is active and the profile's expectations hold: 1, 0; -1 not probed */
	int kernels_ran;             /* the profile's kernels ran and matched the CPU: 1, 0; -1 not exercised */
	char kernels_note[512];      /* with kernels_ran 0: which did not; 1: what was not required and why */
} lm_local_result;

LM_EXTERN(void) lm_local_result_free(lm_local_result *result); /* NULL is fine */

/* local probe: the stock and shimmed reports of this machine with profile (NULL: the default).
 * LM_LOCAL_EXERCISE also runs the kernels; LM_LOCAL_REQUIRE_EXERCISE (which implies it) makes the
 * profile's kernels that do not run LM_ENOTPROVEN -- the answer a CI job uses to choose between
 * the fast path and a clear skip. Every function below sets *out even when it fails (NULL only
 * when out of memory). */
#define LM_LOCAL_EXERCISE 1u
#define LM_LOCAL_REQUIRE_EXERCISE 2u
LM_EXTERN(int) lm_local_probe(lm_context *ctx, const lm_profile *profile, unsigned flags, lm_local_result **out);

/* local status: the machine's facts, its bundle (verified), whether it looks like a VM, the stock
 * device, the agents lume-metal installed here. */
LM_EXTERN(int) lm_local_status(lm_context *ctx, lm_local_result **out);

/* local run -- argv: the workload as a direct child of the calling process, with the shim's
 * environment of profile (NULL: the default), its stdin, stdout, stderr and terminal the caller's;
 * SIGINT, SIGTERM and SIGHUP that the caller receives while it runs are passed on to its process
 * group (the caller must not ignore them), and its group is ended when the call returns. The code
 * signature pre-flight and the activation records as for a VM's run (lm_flow_run_workload). */
LM_EXTERN(int) lm_local_run(lm_context *ctx, const lm_profile *profile, const char *const *argv, size_t argc,
    const lm_workload_options *opts, lm_run_result **out);

/* local agent install|remove|list: LaunchAgents in this account's gui domain, as for a VM
 * (lm_flow_agent_install), with profile (NULL: the default). The machine's own files are
 * the record: an agent is lume-metal's when its plist is in ~/Library/LaunchAgents and its
 * activation directory in ~/Library/Logs/lume-metal (no journal: a runner is often fresh). */
LM_EXTERN(int) lm_local_agent_install(lm_context *ctx, const lm_agent_spec *spec, const lm_profile *profile,
    const lm_workload_options *opts, lm_local_result **out);
LM_EXTERN(int) lm_local_agent_remove(lm_context *ctx, const char *label, lm_local_result **out);
LM_EXTERN(int) lm_local_agent_list(lm_context *ctx, lm_local_result **out);

#ifdef __cplusplus
}
#endif
#endif
