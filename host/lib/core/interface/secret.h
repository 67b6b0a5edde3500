/* Internal: secrets held in memory (a guest password). Overwritten after use, never in the
 * environment any longer than it takes to read it, and never in a core dump (issue 49 item 11). */
#ifndef LM_SECRET_H
#define LM_SECRET_H

#include <stddef.h>

/* The environment variable a guest password may come from (docs/security.md). */
#define LM_SSH_PASSWORD_ENV "LUME_METAL_SSH_PASSWORD"

/* Overwrite n bytes at p in a way the compiler keeps. */
void lm_secret_scrub(void *p, size_t n);

/* Take the variable `name` out of the environment: *out gets a malloc'd copy of its value (NULL
 * when it is unset or empty), its bytes in the environment are overwritten and it is unset, so
 * that neither a child nor a core dump nor /proc/PID/environ shows it again. LM_ENOMEM when the
 * copy cannot be made (the variable is then left as it was). Not thread-safe, as the environment
 * is not: call it before starting threads. */
int lm_secret_take_env(const char *name, char **out);

/* Overwrite a secret taken above and free it (NULL is fine). */
void lm_secret_free(char *s);

/* The process holds a secret: no core dump from now on (RLIMIT_CORE 0), and on Linux not dumpable
 * at all (PR_SET_DUMPABLE 0: no core from a signal whatever the limit, and no ptrace or
 * /proc/PID/mem of it by another process of the same user), as OpenSSH's ssh-agent does
 * (platform_disable_tracing). Process-wide and never undone: a secret may outlive its context in
 * freed memory. Failures are ignored: the limit may already be lower; nothing else depends on it. */
void lm_secret_protect_process(void);

#endif
