/* lume-metal: VM managers (Lume HTTP API, Lume CLI, Tart, UTM, none). */
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

/* Validate a VM name ([A-Za-z0-9._-], Lume's name:tag -> name_tag) into out. */
LM_EXTERN(int) lm_vm_name_normalize(const char *in, char out[LM_VM_NAME_MAX]);

LM_EXTERN(int) lm_vm_list(lm_vm_manager *vmm, lm_vm_info **out, size_t *count); /* free *out with lm_free() */
LM_EXTERN(int) lm_vm_get(lm_vm_manager *vmm, const char *name, lm_vm_info *out);  /* LM_ENOTFOUND when unknown */
/* Start; never starts a VM that is already running (returns 0, nothing sent). */
LM_EXTERN(int) lm_vm_start(lm_vm_manager *vmm, const char *name);
/* Stop and wait until stopped; a stopped VM is a no-op. */
LM_EXTERN(int) lm_vm_stop(lm_vm_manager *vmm, const char *name);
/* Wait until running with an IP and SSH reachable, polling with backoff, at most `timeout` s. */
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
