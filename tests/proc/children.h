/* What a case of tests/proc starts, stopped by PID when the case ends, passed or failed (cmocka
 * runs a case's teardown after a failed assertion too), and a directory of its own. */
#ifndef LM_TEST_PROC_CHILDREN_H
#define LM_TEST_PROC_CHILDREN_H

#include <sys/types.h>

typedef struct {
	char *dir;          /* private, in the build tree (a temporary directory may be mounted noexec,
	                       and the cases run programs from it); removed at the end */
	pid_t ours[8];      /* children not reaped yet: killed and reaped at the end */
	size_t n_ours;
	pid_t others[4];    /* processes that are not ours to reap (a child's child): killed at the end */
	size_t n_others;
} children;

/* cmocka's setup and teardown: *state is a children. */
int children_setup(void **state);
int children_teardown(void **state);

/* PID is a child of ours (or, other, a process that is not) to stop at the end. */
void children_add(children *c, pid_t pid);
void children_add_other(children *c, pid_t pid);
/* Wait for child PID to end and forget it: its exit code, or 128 + the signal that ended it. */
int children_reap(children *c, pid_t pid);
/* Kill child PID and reap it. */
void children_stop(children *c, pid_t pid);
/* A child that runs WORK(ARG) -- 0 once it holds what the case needs, else an errno -- and then
 * waits to be killed; returned once WORK has said it is ready (it is never waited for by the
 * clock). WORK failing fails the case with its errno. */
pid_t children_fork(children *c, int (*work)(const void *arg), const void *arg);
/* c->dir/NAME, to free(). */
char *children_path(const children *c, const char *name);

#endif
