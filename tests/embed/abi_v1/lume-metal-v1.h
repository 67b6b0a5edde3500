/* FROZEN: the public API as a program built against version 1 of lm_options saw it (the headers
 * of lume-metal with SOVERSION 1, where lm_options_init came in), cut to what test_abi_v1.c uses:
 * lm_options and its types (context.h), the error API (error.h), and the few functions the test
 * calls (context.h, vm.h, ssh.h). Never edit it to follow the current headers: it stands for a
 * program compiled once and run against every later library. When the test fails, the library
 * broke that program (docs/embedding.md, "ABI"). */
#ifndef LUME_METAL_V1_H
#define LUME_METAL_V1_H

#include <stddef.h>

/* error.h */
typedef enum { LM_OK = 0, LM_EINVALID = -2 } lm_error_code; /* the two codes the test expects */
typedef struct {
	int code;
	const char *message;
} lm_error;
extern const lm_error *lm_error_last(void);

/* context.h, version 1 */
typedef enum {
	LM_VM_MANAGER_AUTO = 0, LM_VM_MANAGER_LUME_API, LM_VM_MANAGER_LUME_CLI,
	LM_VM_MANAGER_TART, LM_VM_MANAGER_UTM, LM_VM_MANAGER_NONE
} lm_vm_manager_kind;
typedef enum { LM_HOST_KEY_ACCEPT_NEW = 0, LM_HOST_KEY_STRICT } lm_host_key_policy;
typedef enum { LM_LOG_DEBUG, LM_LOG_INFO, LM_LOG_WARN } lm_log_level;
typedef void (*lm_log_fn)(void *data, lm_log_level level, const char *line);
typedef enum { LM_STEP_STARTED, LM_STEP_DONE, LM_STEP_FAILED, LM_STEP_WAITING } lm_step_state;
typedef struct {
	const char *vm;
	const char *name;
	lm_step_state state;
	double elapsed;
	const char *detail;
} lm_step_event;
typedef void (*lm_step_fn)(void *data, const lm_step_event *event);
typedef void (*lm_output_fn)(void *data, const char *vm, int stream, const char *bytes, size_t len);
typedef int (*lm_cancel_fn)(void *data);

#define LM_OPTIONS_VERSION 1
typedef struct {
	unsigned int version;
	const char *state_dir;
	const char *prefs_dir;
	const char *lume_url;
	lm_vm_manager_kind vm_manager;
	const char *lume_program;
	lm_host_key_policy host_key_policy;
	const char *ssh_user;
	const char *ssh_key;
	const char *ssh_password_file;
	const char *bundle_dir;
	double connect_timeout;
	double ready_timeout;
	double command_timeout;
	double boot_margin;
	int dry_run;
	int force;
	int force_user_mismatch;
	int no_wait;
	lm_log_fn log;
	void *log_data;
	lm_step_fn on_step;
	lm_output_fn on_output;
	lm_cancel_fn should_cancel;
	void *callback_data;
	const char *vm_address;
	const char *tart_program;
	const char *utmctl_program;
	int keep_host;
	int restore_host;
} lm_options;

typedef struct lm_context lm_context;
extern int lm_options_init(lm_options *opts, unsigned int version);
extern int lm_context_new(lm_context **out, const lm_options *opts);
extern void lm_context_free(lm_context *ctx);
extern const lm_options *lm_context_options(const lm_context *ctx);
extern const char *lm_context_state_dir(const lm_context *ctx);

/* vm.h */
typedef struct lm_vm_manager lm_vm_manager;
extern int lm_vm_manager_open(lm_vm_manager **out, lm_context *ctx);
extern void lm_vm_manager_free(lm_vm_manager *vmm);
extern const char *lm_vm_manager_name(const lm_vm_manager *vmm);

/* ssh.h */
extern int lm_ssh_forget_host(lm_context *ctx, const char *vm_name);

#endif
