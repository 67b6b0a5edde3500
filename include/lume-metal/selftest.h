/* lume-metal: selftest -- the facts the simulator assumes, measured in a real guest (docs/selftest.md).
 *
 * Every behaviour the tests simulate and no one here has seen on a Mac is one check: what the
 * simulator assumes, what this guest showed, and whether they agree. lm_selftest_run runs them in
 * an enabled, running VM and writes an evidence folder (selftest.json, README.md, one raw file per
 * check, SHA256SUMS) that a user posts. The host is left as it was: nothing of the host preference
 * is changed, and the VM is not restarted.
 */
#ifndef LUME_METAL_SELFTEST_H
#define LUME_METAL_SELFTEST_H

#include "common.h"

#include <stddef.h>

#include "context.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
	LM_SELFTEST_AGREES = 0,    /* what was seen is what the simulator assumes */
	LM_SELFTEST_DISAGREES,     /* it is not: the simulator is wrong about this guest */
	LM_SELFTEST_NOT_MEASURED   /* this guest could not show it; `seen` says why */
} lm_selftest_verdict;

/* One check; the result follows the ABI rule of docs/embedding.md (size first, grows at its end). */
typedef struct {
	size_t size;               /* sizeof(lm_selftest_check) as the library was built */
	const char *name;          /* "stock_kernels", "launchctl_unknown", ... (static) */
	const char *question;      /* what it asks (static) */
	const char *assumed;       /* what the simulator assumes (static) */
	char *seen;                /* what this guest showed */
	lm_selftest_verdict verdict;
	char *raw;                 /* the raw file's name in the folder */
} lm_selftest_check;

typedef struct {
	size_t size;               /* sizeof(lm_selftest_result) as the library was built */
	char *dir;                 /* the evidence folder (absolute) */
	int simulator;             /* the guest says it is lume-metal's simulator (LM_SIMULATED_GUEST) */
	size_t count;
	lm_selftest_check **checks;
	size_t agree, disagree, not_measured;
} lm_selftest_result;

/* Run every check in VM (enabled and running: LM_ENOTENABLED, LM_ENOTRUNNING otherwise) and
 * write the folder out_dir (new or empty; NULL: ./lume-metal-selftest-VM-TIME). 0 when it ran,
 * whatever the verdicts; *out is set whenever the folder was begun. */
LM_EXTERN(int) lm_selftest_run(lm_context *ctx, const char *vm, const char *out_dir, lm_selftest_result **out);
LM_EXTERN(void) lm_selftest_result_free(lm_selftest_result *result);
/* "agrees", "disagrees", "not-measured". */
LM_EXTERN(const char *) lm_selftest_verdict_name(lm_selftest_verdict v);

#ifdef __cplusplus
}
#endif
#endif
