/* The processes a case of tests/proc starts (children.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "children.h"
#include "lm_test.h"

int children_setup(void **state)
{
	children *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return -1;
	c->dir = lm_test_tmpdir_in(LM_PROC_SCRATCH, "proc");
	*state = c;
	return 0;
}

static int wait_for(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			fail_msg("waitpid(%ld): %s", (long)pid, strerror(errno));
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int children_teardown(void **state)
{
	children *c = *state;
	size_t i;

	/* A child not reaped is ours, alive or a zombie: its PID cannot have been reused. */
	for (i = 0; i < c->n_ours; i++) {
		kill(c->ours[i], SIGKILL);
		waitpid(c->ours[i], NULL, 0);
	}
	for (i = 0; i < c->n_others; i++)
		kill(c->others[i], SIGKILL);
	lm_test_rmtree(c->dir);
	free(c->dir);
	free(c);
	return 0;
}

void children_add(children *c, pid_t pid)
{
	assert_true(pid > 0);
	assert_true(c->n_ours < sizeof(c->ours) / sizeof(c->ours[0]));
	c->ours[c->n_ours++] = pid;
}

void children_add_other(children *c, pid_t pid)
{
	assert_true(pid > 0);
	assert_true(c->n_others < sizeof(c->others) / sizeof(c->others[0]));
	c->others[c->n_others++] = pid;
}

int children_reap(children *c, pid_t pid)
{
	size_t i;

	for (i = 0; i < c->n_ours && c->ours[i] != pid; i++)
		;
	if (i == c->n_ours)
		fail_msg("%ld is not a child this case started", (long)pid);
	c->ours[i] = c->ours[--c->n_ours];
	return wait_for(pid);
}

void children_stop(children *c, pid_t pid)
{
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(children_reap(c, pid), 128 + SIGKILL);
}

pid_t children_fork(children *c, int (*work)(const void *arg), const void *arg)
{
	int ready[2], err = 0;
	ssize_t n;
	pid_t pid;

	assert_int_equal(pipe(ready), 0);
	if ((pid = fork()) == 0) {
		close(ready[0]);
		err = work(arg);
		if (write(ready[1], &err, sizeof(err)) != (ssize_t)sizeof(err) || err != 0)
			_exit(1);
		close(ready[1]);
		for (;;)
			pause();
	}
	close(ready[1]);
	if (pid < 0) {
		close(ready[0]);
		fail_msg("fork: %s", strerror(errno));
	}
	children_add(c, pid);
	/* The child's word that it is ready: a read that returns when it is written. */
	while ((n = read(ready[0], &err, sizeof(err))) < 0 && errno == EINTR)
		;
	close(ready[0]);
	if (n != (ssize_t)sizeof(err))
		fail_msg("child %ld ended before it was ready", (long)pid);
	if (err != 0)
		fail_msg("child %ld: %s", (long)pid, strerror(err));
	return pid;
}

char *children_path(const children *c, const char *name)
{
	return lm_test_join(c->dir, name);
}
