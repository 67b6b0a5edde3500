/* Internal: the VM manager's layout, its backends, and the helpers they share. */
#ifndef LM_VM_INTERNAL_H
#define LM_VM_INTERNAL_H

#include <stddef.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#include "path.h"
#include "str.h"
#include "lume-metal/sys/vm.h"
#include "context_internal.h"
#include "clock.h"
#include "proc.h"

/* What a backend does; lm_vm_* in vm.c validate names and add the rules shared by both
 * (never start a running VM, stop only a running one, readiness by polling get). */
typedef struct {
	const char *name; /* "lume-api", "lume-cli", "tart", "utm", "none", "auto" */
	int (*list)(lm_vm_manager *vmm, lm_vm_info **out, size_t *count);
	int (*get)(lm_vm_manager *vmm, const char *name, lm_vm_info *out);
	int (*start)(lm_vm_manager *vmm, const char *name);
	int (*stop)(lm_vm_manager *vmm, const char *name);
	void (*release)(lm_vm_manager *vmm);
	const char *account; /* the guest account of this manager's images; NULL: Lume's "lume" */
	/* Its version as it tells it ("" when it does not); NULL: it cannot tell. */
	int (*version)(lm_vm_manager *vmm, char *buf, size_t len);
} lm_vm_backend;


#define LM_VM_MAX_CHILDREN 16
#define LM_LUME_URL_DEFAULT "http://127.0.0.1:7777"

struct lm_vm_manager {
	const lm_vm_backend *backend;
	lm_context *ctx;
	double connect_timeout;
	double command_timeout;
	double ready_timeout;
	int uncancelable;   /* > 0: should_cancel is not asked (vm_undo.h) */
	/* lume-api */
	char *url;          /* base URL without a trailing '/' */
	void *curl;         /* CURL *, reused for every request */
	void *curlm;        /* CURLM *, which runs it: its poll is where cancellation is asked */
	/* lume-cli */
	char *program;      /* absolute or relative path of `lume` */
	int old_lume;       /* -1 unknown, 0 has `run --detach`, 1 older than 0.5.0 */
	char **locations;   /* Lume's VM storage directories (`lume config storage list`, or the API's
	                       GET /lume/config/locations), NULL-terminated; asked once */
	char locations_why[256]; /* why they are ~/.lume alone: Lume did not list them ("" when it did) */
	pid_t children[LM_VM_MAX_CHILDREN]; /* detached `lume run` / `tart run` children, reaped when done */
	/* tart */
	char *tart_program;
	char *tart_home;    /* $TART_HOME, else ~/.tart: vms/NAME/config.json is the VM's lock */
	/* utm */
	char *utmctl_program;
	char *utm_documents; /* UTM's sandboxed Documents: NAME.utm/config.plist */
	int utm_ip;          /* -1 unknown, 1 `utmctl ip-address` works for this UTM, 0 it does not */
	char *utm_app;       /* UTM.app's executable: next to utmctl (its real path), else /Applications' */
	char *dhcp_leases;   /* the host's DHCP leases: $LUME_METAL_DHCPD_LEASES, else /var/db/dhcpd_leases */
	/* none, and UTM without ip-address */
	char *address;
	/* tart, utm, none: why the last `get`'s probe of port 22 failed (errno; 0: it answered, or
	 * there was no address, or Lume probed it itself) */
	int ssh_probe_err;
	/* auto: which backends answer, and which one knows each VM */
	const lm_vm_backend *candidates[4];
	size_t ncandidates;
	struct lm_vm_choice *choices;
	size_t nchoices;
};



extern const lm_vm_backend lm_vm_backend_api;
extern const lm_vm_backend lm_vm_backend_cli;
/* The environment of every `lume` child (vm_cli.c): quiet, telemetry off. */
extern const char *const lm_vm_lume_env[];

/* lume-api: does anything accept a TCP connection at the URL's address within `timeout` s?
 * (Not an HTTP request: Lume's endpoints can be slow; LM_ENETWORK when nothing answers.) */
int lm_vm_api_reachable(const char *url, double timeout);
/* Backend set-up on a manager whose ctx and timeouts are filled. */
int lm_vm_api_init(lm_vm_manager *vmm, const char *url);
int lm_vm_cli_init(lm_vm_manager *vmm, const char *program);

/* VM objects (Lume's JSON) -> lm_vm_info. `what` names the source for messages. */
int lm_vm_info_from_json(const cJSON *obj, lm_vm_info *out, const char *what);
int lm_vm_info_array_from_json(const cJSON *array, lm_vm_info **out, size_t *count, const char *what);
/* The display member (`key`: Lume's "display", Tart's "Display") into out->display, when it fits. */
void lm_vm_display_from_json(const cJSON *obj, const char *key, lm_vm_info *out);

/* Find the first JSON document of the wanted type (cJSON_Array or cJSON_Object) that starts a
 * line of `text`, skipping log lines before and after it. LM_EINVALID when there is none. */
int lm_vm_json_find(const char *text, int want_type, cJSON **out);

/* One short excerpt of untrusted text for an error message: first line, printable, at most
 * `cap - 1` bytes ("..." when cut). */
void lm_vm_excerpt(const char *text, char *buf, size_t cap);

/* Seconds from a monotonic clock. */

/* Processes of this host (owner.c): /proc on Linux, libproc on macOS. Only this user's processes
 * are visible without privileges. */
typedef struct {
	long pid;            /* 0: none (visible) */
	long uid;            /* effective uid, -1 unknown */
	char command[160];   /* its arguments, space-separated, shortened; "" unknown */
	char subcommand[32]; /* its first argument after the program that is not an option ("run") */
} lm_host_process;

/* The process that has one of `files` open (a VM's config.json in each of Lume's storage
 * locations): the VM's owner for Lume, whose `lume stop` signals it (`lsof -F p`: the lowest PID).
 * pid 0 when none is visible. */
int lm_host_vm_holder(const char *const files[], size_t n, lm_host_process *out);
/* The process listening on TCP `port` at a loopback or wildcard address. *found is 1 when a
 * socket listens, even when its process is not visible (then pid is 0, uid maybe known). */
int lm_host_port_listener(int port, int *found, lm_host_process *out);

/* The context whose should_cancel the manager's waits ask: none while an undo runs (vm_undo.h). */
const lm_context *lm_vm_cancel_ctx(const lm_vm_manager *vmm);
/* lm_context_check_cancel through lm_vm_cancel_ctx. */
int lm_vm_check_cancel(const lm_vm_manager *vmm, const char *what);

/* Child processes: proc.h (interface/, for the modules that depend on vm), and these two. */
/* A backend's version callback for a program asked `--version`: rc and res are what running it
 * returned; buf gets the version from its output ("" when it exits non-zero); res is disposed. */
int lm_vm_version_answer(int rc, lm_proc_result *res, char *buf, size_t len);
/* `PROGRAM ARG` (found on PATH when it has no slash), with `env` set (NULL: none; proc.h), canceled
 * as vmm's waits are, answered as lm_vm_version_answer does. */
#define LM_VM_VERSION_TIMEOUT 10.0
int lm_vm_program_version(lm_vm_manager *vmm, const char *program, const char *arg, const char *const *env, char *buf,
    size_t len);
/* The backend that serves `name`: the manager's own, or the automatic choice's once made; NULL
 * before that. */
const lm_vm_backend *lm_vm_backend_for(const lm_vm_manager *vmm, const char *name);

extern const lm_vm_backend lm_vm_backend_tart;
extern const lm_vm_backend lm_vm_backend_utm;
extern const lm_vm_backend lm_vm_backend_none;
extern const lm_vm_backend lm_vm_backend_auto;

int lm_vm_tart_init(lm_vm_manager *vmm, const char *program);
int lm_vm_utm_init(lm_vm_manager *vmm, const char *program);
/* UTM: the VM's config.plist in UTM's Documents, the bundle whose Information.Name is `name`
 * (*path NULL when none was found; *root is a plist_t, plist_free it). */
int lm_vm_utm_config(lm_vm_manager *vmm, const char *name, char **path, void **root);
/* Lume's VM storage directories, NULL-terminated, asked once per manager: the CLI's `lume config
 * storage list`, the API's GET /lume/config/locations; ~/.lume alone when Lume does not list them
 * (vmm->locations_why says why). *out NULL when the backend is not there. Fail only when out of
 * memory. */
#define LM_VM_MAX_LOCATIONS 16
int lm_vm_cli_storage(lm_vm_manager *vmm, char *const **out);
int lm_vm_api_storage(lm_vm_manager *vmm, char *const **out);
/* Add one of Lume's location paths to vmm->locations (a leading ~ is this user's home); path
 * NULL only makes the list. Paths past LM_VM_MAX_LOCATIONS are not looked at. */
int lm_vm_storage_add(lm_vm_manager *vmm, const char *path);
/* When Lume listed none: its default ~/.lume alone, with the reason in vmm->locations_why. */
int lm_vm_storage_default(lm_vm_manager *vmm);

/* vm_id.c: the VM's identity from its manager's own files, into info->vm_id (or the reason it
 * cannot be read into info->vm_id_why). Fails only when out of memory (LM_ENOMEM): a file that
 * cannot be read is a reason, not an error. */
int lm_vm_id_read(lm_vm_manager *vmm, const char *name, lm_vm_info *info);
int lm_vm_none_init(lm_vm_manager *vmm, const char *address);
/* Automatic choice: the candidates that are there (Lume's API or CLI, tart, utmctl). */
int lm_vm_auto_init(lm_vm_manager *vmm, const char *url, const char *lume_program);

/* UTM.app runs (a process of this user runs its executable): utmctl would otherwise launch it,
 * which the automatic choice must not do for a VM that is not UTM's. */
int lm_vm_utm_app_running(lm_vm_manager *vmm, int *running);
/* dhcp_leases.c: the address of the newest live lease of `mac` (any case, octets with or without
 * leading zeros) in the text of a dhcpd_leases file; ip "" when there is none. LM_EINVALID for a
 * `mac` that is not one. _lookup reads the file at `path`: one that cannot be read has no lease. */
int lm_vm_dhcp_lease_find(const char *text, const char *mac, double now, char *ip, size_t cap);
int lm_vm_dhcp_lease_lookup(const char *path, const char *mac, char *ip, size_t cap);
/* owner.c: a process of this user runs the program file at `path` (the same file: device and
 * inode, whatever path it was started by). */
int lm_host_program_running(const char *path, int *running);

/* `utmctl list`'s table (text is modified): rows "UUID STATUS NAME...", everything else skipped.
 * *out malloc'ed (free()), NULL when empty. */
int lm_vm_utm_parse_list(char *text, lm_vm_info **out, size_t *count);
/* manager and account from the backend that answered, when not set yet. */
void lm_vm_fill_identity(lm_vm_info *info, const lm_vm_backend *b);
/* Fill ip (when known) and ssh_available by a 2-second TCP probe of port 22, as Lume does;
 * returns why the probe failed (an errno value: refused, unreachable, ETIMEDOUT), 0 when port 22
 * answered or there is no address to ask. */
int lm_vm_probe_ssh(lm_vm_info *info);
/* 1 when address:port accepts a TCP connection within timeout seconds. */
int lm_vm_port_answers(const char *address, int port, double timeout);
/* A formatted string (caller frees); NULL only when out of memory. */
char *lm_vm_strf(const char *fmt, ...) LM_PRINTF(1, 2);
/* A dotted IPv4 address (what the managers print). */
int lm_vm_is_ipv4(const char *s);
/* Every VM manager's answer for a VM's address goes through this one check (Lume's ipAddress, `tart
 * ip`, `utmctl ip-address`, a DHCP lease): an IPv4 literal is copied into out, "" or NULL (none
 * yet) leaves out empty, anything else (a host name: "localhost") is an error naming `who`, the VM
 * (NULL: not known there) and the answer. Never resolved. */
int lm_vm_address_answer(const char *who, const char *vm, const char *answer, char *out, size_t size);
/* The most useful line of a failed command: the last non-empty line of stderr, else stdout. */
void lm_vm_failure_line(const lm_proc_result *res, char *buf, size_t cap);
/* Remember a detached child (reaped by lm_vm_reap_children). */
void lm_vm_adopt_child(lm_vm_manager *vmm, pid_t pid);
void lm_vm_reap_children(lm_vm_manager *vmm);

#endif
