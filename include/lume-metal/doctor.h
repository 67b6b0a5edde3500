/* lume-metal: doctor — checks of the host and of VMs, each one ok, warn or fail.
 *
 * The library states what it found (facts); what to do about a warning or a failure is the
 * caller's to say (the lume-metal tool adds it per check name). Checks never change anything.
 */
#ifndef LUME_METAL_DOCTOR_H
#define LUME_METAL_DOCTOR_H

#include <stddef.h>

#include "common.h"
#include "context.h"
#include "vm.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { LM_CHECK_OK, LM_CHECK_WARN, LM_CHECK_FAIL } lm_check_level;

/* The results follow the ABI rule of docs/embedding.md: allocated by the library, only read by
 * the caller, each starting with its size (LM_HAS_FIELD), growing only at its end. */
typedef struct {
	size_t size;             /* sizeof(lm_doctor_check) in the library that filled it */
	char vm[LM_VM_NAME_MAX]; /* "" for a check of the host */
	const char *name;        /* host: "os", "chip", "vm-manager", "user", "preference", "bundle";
	                            VM: "manager", "reachable", "guest-os", "sip", "shell", "tart-shim",
	                            "bundle", "last-probe", "last-exercise", "agents" (static) */
	lm_check_level level;
	char *message;           /* what was found */
} lm_doctor_check;

typedef struct {
	size_t size;             /* sizeof(lm_doctor_result) in the library that filled it */
	size_t count;
	lm_doctor_check **checks; /* count pointers: the host's checks first, then each VM's */
	size_t failed, warned;   /* how many checks failed, warned */
} lm_doctor_result;

/* Check the host, then each VM named (n == 0: every VM the state journal knows). 0 whatever the
 * checks found (failed tells); < 0 only when no check could be made (out of memory), and then
 * *out is NULL. Free the result with lm_doctor_result_free(). */
LM_EXTERN(int) lm_doctor_run(lm_context *ctx, const char *const *vms, size_t n, lm_doctor_result **out);
LM_EXTERN(void) lm_doctor_result_free(lm_doctor_result *result);
/* "ok", "warn", "fail". */
LM_EXTERN(const char *) lm_check_level_name(lm_check_level level);

#ifdef __cplusplus
}
#endif
#endif
