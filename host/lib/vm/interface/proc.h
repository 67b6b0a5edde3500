/* Internal (for the modules that depend on vm): child processes of this host, always through
 * posix_spawn, never a shell (host/lib/vm/proc.c). */
#ifndef LM_PROC_H
#define LM_PROC_H

#include <stddef.h>

/* Child processes, always through posix_spawn, never a shell. */
typedef struct {
	char *out;       /* stdout, NUL-terminated */
	size_t out_len;
	char *err;       /* stderr, NUL-terminated */
	size_t err_len;
	int exit_code;   /* exit status, or 128 + signal */
	int timed_out;   /* killed after the timeout */
} lm_proc_result;

/* Find `name` on PATH (or check it when it contains '/'); *out is malloc'ed. LM_ENOTFOUND. */
int lm_proc_find_program(const char *name, char **out);
/* environ with NAME=VALUE set (replaced when present); free with lm_strv_free(). */
char **lm_proc_env_with(const char *name, const char *value);
/* Run argv[0] (a path) with env, stdin from /dev/null, capture stdout and stderr; kill it after
 * `timeout` seconds. Returns 0 when the program ran (whatever its exit code), <0 when it could
 * not be started or read. */
int lm_proc_run(char *const argv[], char *const env[], double timeout, lm_proc_result *res);
/* Contents only: the struct is the caller's. */
void lm_proc_result_dispose(lm_proc_result *res);
#endif
