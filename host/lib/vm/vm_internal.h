/* Internal: the VM manager, the table of operations every backend fills (as curl's TLS backends),
 * and the helpers the backends share. Each backend keeps its own state behind the manager's
 * `state` pointer, in a struct private to its file; none calls another backend's functions (the
 * two Lume backends share lume.h). File map: docs/design.md, "vm/". */
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

/* What a backend does; lm_vm_* in vm.c validate names and add the rules shared by all of them
 * (never start a running VM, stop only a running one, readiness by polling get). `state` is what
 * its init made. */
typedef struct lm_vm_backend {
	const char *name;    /* "lume-api", "lume-cli", "tart", "utm", "none", "auto" */
	const char *account; /* the guest account of this manager's images; NULL: Lume's "lume" */
	/* Is it there to be asked (its program on PATH, something at the API's URL)? 0 when it is, else
	 * the error that says why not; asked by the automatic choice before init. NULL: always there. */
	int (*present)(lm_vm_manager *vmm);
	/* *state: the backend's own, set as soon as made (release frees what a failed init left). */
	int (*init)(lm_vm_manager *vmm, void **state);
	int (*list)(lm_vm_manager *vmm, void *state, lm_vm_info **out, size_t *count);
	int (*get)(lm_vm_manager *vmm, void *state, const char *name, lm_vm_info *out);
	int (*start)(lm_vm_manager *vmm, void *state, const char *name);
	int (*stop)(lm_vm_manager *vmm, void *state, const char *name);
	/* Its version as it tells it ("" when it does not); NULL: it cannot tell. */
	int (*version)(lm_vm_manager *vmm, void *state, char *buf, size_t len);
	/* The VM's identity from the manager's own files (lm_vm_id_set, vm_id.h); NULL: none to read. */
	int (*identity)(lm_vm_manager *vmm, void *state, const char *name, lm_vm_info *info);
	/* Does the manager's own store hold `name` by the manager's own rule of existence (Lume: the
	 * three files of VMDirectory.initialized())? 1: it exists, nothing need be asked; 0: cannot
	 * tell from the files (ask `get`: absence proves nothing). < 0 only when out of memory. NULL:
	 * no store this library reads. For the gone question (lm_vm_gone), which a `get` can make cost
	 * Lume's 2-second port check of a silent guest. */
	int (*stored)(lm_vm_manager *vmm, void *state, const char *name);
	/* May it be asked now without launching anything (UTM: UTM.app runs)? NULL: always. */
	int (*askable)(lm_vm_manager *vmm, void *state, int *askable);
	/* Does the manager say the host runs as many VMs as it may (Apple's limit)? 1 with `why` set
	 * to what it says (its own figures), 0 when it does not say so; < 0 when it could not be
	 * asked. For a start the manager accepted and then failed in the background, leaving the VM
	 * stopped (Lume: reference/lume.md); NULL: the manager's start itself fails at the limit
	 * (Tart's `tart run`, UTM's start), or it cannot tell. */
	int (*full)(lm_vm_manager *vmm, void *state, char *why, size_t cap);
	/* When the process that runs the VM started (vm_process.h): *at 0 when not visible. NULL:
	 * the manager shows no process of the VM's own. */
	int (*process_started)(lm_vm_manager *vmm, void *state, const char *name, double *at);
	/* When the VM's own files were created (vm_process.h): *at 0 when not known. NULL: none read. */
	int (*created)(lm_vm_manager *vmm, void *state, const char *name, double *at);
	void (*release)(lm_vm_manager *vmm, void *state);
} lm_vm_backend;

/* One backend at work: its table and its state. */
typedef struct {
	const lm_vm_backend *backend;
	void *state;
} lm_vm_instance;

#define LM_VM_MAX_CHILDREN 16
#define LM_LUME_URL_DEFAULT "http://127.0.0.1:7777"

/* HOST:PORT of a Lume URL (http[s]://HOST[:PORT][/PATH], the scheme's port by default) into
 * address, and whether HOST is this machine's loopback, for the server lookup (server.c): read
 * here, strictly, so that finding who listens does not load libcurl (curl_lib.h), which reads the
 * URL of every request itself. LM_EINVALID for anything else (a userinfo, an empty host or port,
 * a port outside 1..65535, a character no host has). */
int lm_vm_url_endpoint(const char *url, char *address, size_t cap, int *port, int *local);
#define LM_VM_LUME_PROGRAM "lume"
#define LM_VM_TART_PROGRAM "tart"
#define LM_VM_UTMCTL_PROGRAM "utmctl"

struct lm_vm_manager {
	const lm_vm_backend *backend;
	void *state;        /* the backend's own (its init's) */
	lm_context *ctx;
	double connect_timeout;
	double command_timeout;
	double ready_timeout;
	int uncancelable;   /* > 0: should_cancel is not asked (vm_undo.h) */
	/* tart, utm, none: why the last `get`'s probe of port 22 failed (errno; 0: it answered, or
	 * there was no address, or Lume probed it itself) */
	int ssh_probe_err;
	pid_t children[LM_VM_MAX_CHILDREN]; /* detached `lume run` / `tart run` children, reaped when done
	                       (one list: the automatic choice's Lume and Tart share the manager) */
	/* What this manager last did and saw of one VM, for the readiness wait (vm.c, "watch"): a
	 * manager serves one thread, which starts a VM and then waits for it. */
	struct {
		char vm[LM_VM_NAME_MAX]; /* "": none */
		int started;             /* its start was accepted (and not stopped by us since) */
		char up[32];             /* the status an answer since then gave that was not "stopped"
		                            (running, starting...); "": none yet */
		pid_t child;             /* the process its start spawned to run the VM (`tart run`, an old
		                            `lume run`), 0: none of ours */
		const char *child_what;  /* that process in words ("tart run") */
	} watch;
	/* What the backend's start under way has launched (lm_vm_note_launch), for lm_vm_start: a
	 * start that fails or is canceled after it launched the VM leaves it to be stopped again. */
	struct {
		int done;
		pid_t child;
		const char *what;
	} launch;
};

extern const lm_vm_backend lm_vm_backend_api;
extern const lm_vm_backend lm_vm_backend_cli;
extern const lm_vm_backend lm_vm_backend_tart;
extern const lm_vm_backend lm_vm_backend_utm;
extern const lm_vm_backend lm_vm_backend_none;
extern const lm_vm_backend lm_vm_backend_auto;

/* vm_auto.c: the backend that serves `name` -- the manager's own, or the automatic choice's once
 * made (backend NULL before that) -- and the backends the manager asks (the automatic choice's
 * candidates, else its own), at most `cap`. */
lm_vm_instance lm_vm_backend_for(const lm_vm_manager *vmm, const char *name);
size_t lm_vm_backends_asked(const lm_vm_manager *vmm, lm_vm_instance *out, size_t cap);

/* lume-api (vm_api.c): does anything accept a TCP connection at the URL's address within
 * `timeout` s? (Not an HTTP request: Lume's endpoints can be slow; LM_ENETWORK when nothing
 * answers.) For the server's lookup (server.c) and the backend's `present`. */
int lm_vm_api_reachable(const char *url, double timeout);

/* vm_base.c: what the backends share of the manager. */
/* The options' value (`value`), or `fallback` when they name none (NULL or ""). */
const char *lm_vm_option(const char *value, const char *fallback);
/* 0 when `program` is found on PATH (or is a path that runs), else the error saying why. */
int lm_vm_program_present(const char *program);
/* The context whose should_cancel the manager's waits ask: none while an undo runs (vm_undo.h). */
const lm_context *lm_vm_cancel_ctx(const lm_vm_manager *vmm);
/* lm_context_check_cancel through lm_vm_cancel_ctx. */
int lm_vm_check_cancel(const lm_vm_manager *vmm, const char *what);
/* A backend's version callback for a program asked `--version`: rc and res are what running it
 * returned; buf gets the version from its output ("" when it exits non-zero); res is disposed. */
int lm_vm_version_answer(int rc, lm_proc_result *res, char *buf, size_t len);
/* `PROGRAM ARG` (found on PATH when it has no slash), with `env` set (NULL: none; proc.h), canceled
 * as vmm's waits are, answered as lm_vm_version_answer does. */
#define LM_VM_VERSION_TIMEOUT 10.0
int lm_vm_program_version(lm_vm_manager *vmm, const char *program, const char *arg, const char *const *env, char *buf,
    size_t len);
/* manager and account from the backend that answered, when not set yet. */
void lm_vm_fill_identity(lm_vm_info *info, const lm_vm_backend *b);
/* The most useful line of a failed command: the last non-empty line of stderr, else stdout. */
void lm_vm_failure_line(const lm_proc_result *res, char *buf, size_t cap);
/* Remember a detached child (reaped by lm_vm_reap_children, and when the manager is freed). */
void lm_vm_adopt_child(lm_vm_manager *vmm, pid_t pid);
void lm_vm_reap_children(lm_vm_manager *vmm);
/* A backend's start has launched the VM: the start was sent to the manager (child 0), or `child`
 * was spawned to run it (`what`: "tart run"). Said before anything that may fail or be canceled. */
void lm_vm_note_launch(lm_vm_manager *vmm, pid_t child, const char *what);
/* Has the adopted child `pid` ended (and been reaped)? Waits up to `seconds` for it: 1 ended, 0 not. */
int lm_vm_child_wait(lm_vm_manager *vmm, pid_t pid, double seconds);

/* vm_id.c: a VM's identity, read from its manager's own files, into info->vm_id (or the reason it
 * cannot be read into info->vm_id_why): the SHA-256 of `kind` (the manager) and the fields a and b;
 * _why sets the reason instead. _from_json reads one config.json: 1 read (identity set), 0 no such
 * file, -1 unreadable (reason set), LM_ENOMEM; mac_key NULL: the identity is id_key's alone. */
void lm_vm_id_set(lm_vm_info *info, const char *kind, const char *a, const char *b);
void lm_vm_id_why(lm_vm_info *info, const char *fmt, ...) LM_PRINTF(2, 3);
int lm_vm_id_from_json(lm_vm_info *info, const char *kind, const char *path, const char *mac_key, const char *id_key);

/* vm_json.c: VM objects (Lume's JSON) -> lm_vm_info. `what` names the source for messages. */
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

/* vm_addr.c: addresses and the port-22 probe. */
/* Fill ip (when known) and ssh_available by a 2-second TCP probe of port 22, as Lume does;
 * returns why the probe failed (an errno value: refused, unreachable, ETIMEDOUT), 0 when port 22
 * answered or there is no address to ask. */
int lm_vm_probe_ssh(lm_vm_info *info);
/* 1 when address:port accepts a TCP connection within timeout seconds. */
int lm_vm_port_answers(const char *address, int port, double timeout);
/* A dotted IPv4 address (what the managers print). */
int lm_vm_is_ipv4(const char *s);
/* Every VM manager's answer for a VM's address goes through this one check (Lume's ipAddress, `tart
 * ip`, `utmctl ip-address`, a DHCP lease): an IPv4 literal is copied into out, "" or NULL (none
 * yet) leaves out empty, anything else (a host name: "localhost") is an error naming `who`, the VM
 * (NULL: not known there) and the answer. Never resolved. */
int lm_vm_address_answer(const char *who, const char *vm, const char *answer, char *out, size_t size);

/* dhcp_leases.c (for UTM): the address of the newest live lease of `mac` (any case, octets with or
 * without leading zeros) in the text of a dhcpd_leases file; ip "" when there is none. LM_EINVALID
 * for a `mac` that is not one. _lookup reads the file at `path`: one that cannot be read has no
 * lease. */
int lm_vm_dhcp_lease_find(const char *text, const char *mac, double now, char *ip, size_t cap);
int lm_vm_dhcp_lease_lookup(const char *path, const char *mac, char *ip, size_t cap);

/* vm_utm.c: `utmctl list`'s table (text is only read): rows "UUID STATUS NAME...", everything else
 * skipped. *out malloc'ed (free()), NULL when empty. */
int lm_vm_utm_parse_list(const char *text, lm_vm_info **out, size_t *count);

#endif
