/* lume-metal: a VM as its manager (Lume HTTP API, Lume CLI, Tart, UTM, none) shows it, as the
 * flow results hold it, and the VM-name rule. The calls to the VM managers themselves are lower-level:
 * lume-metal/sys/vm.h. */
#ifndef LUME_METAL_VM_H
#define LUME_METAL_VM_H

#include "common.h"

#include <stddef.h>

#include "context.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LM_VM_NAME_MAX 128

typedef struct {
	char name[LM_VM_NAME_MAX];
	char status[32];    /* "running", "stopped", "provisioning", ... as Lume says */
	char os[32];        /* "macOS", ... ("" when null) */
	char ip[64];        /* "" until the VM has an address */
	int ssh_available;  /* Lume's 2-second probe of port 22 (the same probe for the other managers) */
	char manager[16];   /* which manager answered: "lume-api", "lume-cli", "tart", "utm", "none" */
	char account[32];   /* the guest account of that manager's images ("lume", "admin"); "" unknown */
	char display[32];   /* the VM's display as its manager configures it ("1024x768"; Lume's
	                       `display`, Tart's `Display`); "" unknown */
	/* The VM's identity from its manager's own configuration (lm_vm_get only; docs/security.md):
	 * Lume's and Tart's config.json macAddress and machine identifier, UTM's config.plist UUID,
	 * as "sha256:" and 64 hex digits. A VM deleted and re-created under the same name gets a new
	 * one; host-key pins follow it. "" when it cannot be read, and then vm_id_why says why. */
	char vm_id[72];
	char vm_id_why[320];
} lm_vm_info;

/* Validate a VM name ([A-Za-z0-9._-], Lume's name:tag -> name_tag) into out: the rule every call
 * taking a VM name applies. */
LM_EXTERN(int) lm_vm_name_normalize(const char *in, char out[LM_VM_NAME_MAX]);

/* The names of the VMs the context's VM manager knows (with the automatic choice, every manager
 * present), as a NULL-terminated array in *out with *count entries: what a shell completes or a
 * picker shows. Free with lm_vm_names_free(). */
LM_EXTERN(int) lm_vm_names(lm_context *ctx, char ***out, size_t *count);
LM_EXTERN(void) lm_vm_names_free(char **names);

/* Forget the SSH host key(s) recorded for a VM (`lume-metal forget-host`), so that the next
 * connection records the key it then sees: after the VM was re-created, for instance. Returns how
 * many keys were forgotten (0: none were recorded), or a negative error. */
LM_EXTERN(int) lm_ssh_forget_host(lm_context *ctx, const char *vm_name);

#ifdef __cplusplus
}
#endif
#endif
