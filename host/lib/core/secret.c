/* Secrets in memory (interface/secret.h). */
#include "secret.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "error_internal.h"

extern char **environ;

void lm_secret_scrub(void *p, size_t n)
{
	volatile unsigned char *v = p;

	while (n-- > 0)
		*v++ = 0;
}

int lm_secret_take_env(const char *name, char **out)
{
	size_t len = strlen(name), vlen;
	char **e, *value = NULL;

	*out = NULL;
	/* The entry itself, not getenv's answer: its bytes are what must be overwritten. The process's
	 * first environment sits on its stack and stays there after unsetenv, which only drops the
	 * pointer; that is what /proc/PID/environ and a core dump show. Every entry of that name is
	 * overwritten (a hand-made environment can hold two). */
	for (e = environ; e != NULL && *e != NULL; e++) {
		if (strncmp(*e, name, len) != 0 || (*e)[len] != '=')
			continue;
		vlen = strlen(*e + len + 1);
		if (value == NULL && vlen > 0 && (value = strdup(*e + len + 1)) == NULL)
			return lm_error_nomem();
		lm_secret_scrub(*e + len + 1, vlen);
	}
	unsetenv(name);
	*out = value;
	return 0;
}

void lm_secret_free(char *s)
{
	if (s == NULL)
		return;
	lm_secret_scrub(s, strlen(s));
	free(s);
}

void lm_secret_protect_process(void)
{
	const struct rlimit none = {0, 0};

	(void)setrlimit(RLIMIT_CORE, &none);
#ifdef __linux__
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
#endif
}
