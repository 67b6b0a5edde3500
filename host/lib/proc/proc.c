/* Child processes (proc.h): posix_spawn only, output captured through pipes into bounded
 * buffers, a deadline after which the child is killed. */
/* posix_spawn_file_actions_addchdir_np (glibc 2.29, macOS 10.15), and POSIX_SPAWN_SETSID: glibc declares
 * it (since 2.26) for GNU programs only. */
#define _GNU_SOURCE
#include "proc.h"
#include "buf.h"
#include "clock.h"
#include "context_internal.h"
#include "str.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

int lm_proc_spawn(const lm_proc_spawn_spec *spec, pid_t *pid)
{
	static const int shell_defaults[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU};
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, defaults;
	short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
	size_t i;
	int e, session = 0;

	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	/* Children start with no blocked signals and default SIGPIPE, whatever the host application
	 * blocks or ignores. */
	sigemptyset(&none);
	sigemptyset(&defaults);
	sigaddset(&defaults, SIGPIPE);
	for (i = 0; spec->shell_signals && i < sizeof(shell_defaults) / sizeof(shell_defaults[0]); i++)
		sigaddset(&defaults, shell_defaults[i]);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &defaults);
#ifdef POSIX_SPAWN_SETSID
	if (spec->own_session) {
		flags |= POSIX_SPAWN_SETSID; /* a terminal's ^C or hang-up on ours must not reach it */
		session = 1;
	}
#endif
	if ((spec->own_group || spec->own_session) && !session) {
		flags |= POSIX_SPAWN_SETPGROUP;
		posix_spawnattr_setpgroup(&attr, 0);
	}
	posix_spawnattr_setflags(&attr, flags);
	if (spec->dir != NULL)
		posix_spawn_file_actions_addchdir_np(&fa, spec->dir);
	switch (spec->stdio) {
	case LM_PROC_STDIO_INHERIT:
		break;
	case LM_PROC_STDIO_FDS:
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
		posix_spawn_file_actions_adddup2(&fa, spec->out_fd, 1);
		posix_spawn_file_actions_adddup2(&fa, spec->err_fd, 2);
		break;
	case LM_PROC_STDIO_LOG:
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
		posix_spawn_file_actions_addopen(&fa, 1, spec->log, O_WRONLY | O_CREAT | O_APPEND, 0600);
		posix_spawn_file_actions_adddup2(&fa, 1, 2);
		break;
	default:
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
		posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	}
	e = posix_spawn(pid, spec->argv[0], &fa, &attr, spec->argv, spec->env);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	if (e != 0)
		return lm_error_set(e == ENOENT ? LM_ENOTFOUND : LM_ERROR, "%s: cannot start: %s", spec->argv[0], strerror(e));
	return 0;
}

static int is_executable_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

int lm_proc_find_program(const char *name, char **out)
{
	const char *path = getenv("PATH");
	const char *p, *end;
	size_t n;
	char *cand;

	*out = NULL;
	if (name == NULL || name[0] == '\0')
		return lm_error_set(LM_EINVALID, "empty program name");
	if (strchr(name, '/') != NULL) {
		if (!is_executable_file(name))
			return lm_error_set(LM_ENOTFOUND, "%s: no such executable file", name);
		return (*out = strdup(name)) == NULL ? lm_error_nomem() : 0;
	}
	if (path == NULL)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path;; p = end + 1) {
		end = strchr(p, ':');
		if (end == NULL)
			end = p + strlen(p);
		n = (size_t)(end - p);
		if (n > 0) {
			if ((cand = malloc(n + strlen(name) + 2)) == NULL)
				return lm_error_nomem();
			memcpy(cand, p, n);
			cand[n] = '/';
			strcpy(cand + n + 1, name);
			if (is_executable_file(cand)) {
				*out = cand;
				return 0;
			}
			free(cand);
		}
		if (*end == '\0')
			break;
	}
	return lm_error_set(LM_ENOTFOUND, "%s: not found on PATH", name);
}

static const char *const secret_vars[] = LM_PROC_SECRET_VARS;
static const char *const job_vars[] = LM_PROC_JOB_TRACKING_VARS;

/* NAME=... names one of the n variables. */
static int names_one_of(const char *entry, const char *const vars[], size_t n)
{
	size_t i, len;

	for (i = 0; i < n; i++) {
		len = strlen(vars[i]);
		if (strncmp(entry, vars[i], len) == 0 && entry[len] == '=')
			return 1;
	}
	return 0;
}

#define SECRET(entry) names_one_of((entry), secret_vars, sizeof(secret_vars) / sizeof(secret_vars[0]))

/* environ without the secrets (and, for a VM's owner, the CI job-tracking variables), with o's
 * variables set (replacing ours; a secret among them is dropped too: the rule has no exception);
 * free with lm_strv_free(). NULL when out of memory. */
static char **child_env(const lm_proc_options *o, int vm_owner)
{
	size_t n = 0, k = 0, i, j = 0, m;
	char **env;

	while (environ != NULL && environ[n] != NULL)
		n++;
	while (o->env != NULL && o->env[k] != NULL)
		k++;
	if ((env = calloc(n + k + 1, sizeof(*env))) == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		int replaced = 0;
		for (m = 0; m < k && !replaced; m++) {
			size_t nlen = strcspn(o->env[m], "=");
			replaced = strncmp(environ[i], o->env[m], nlen) == 0 && environ[i][nlen] == '=';
		}
		if (replaced || SECRET(environ[i]))
			continue;
		/* A VM's owner outlives the CI job that started it. */
		if (vm_owner && names_one_of(environ[i], job_vars, sizeof(job_vars) / sizeof(job_vars[0])))
			continue;
		if ((env[j++] = strdup(environ[i])) == NULL)
			goto fail;
	}
	for (m = 0; m < k; m++)
		if (!SECRET(o->env[m]) && (env[j++] = strdup(o->env[m])) == NULL)
			goto fail;
	return env;
fail:
	lm_strv_free(env);
	return NULL;
}

/* program, then args: as many as there are. The strings are the caller's; free the array only. */
static char **child_argv(const char *program, const char *const args[])
{
	size_t n = 0, i;
	char **argv;

	while (args != NULL && args[n] != NULL)
		n++;
	if ((argv = calloc(n + 2, sizeof(*argv))) == NULL)
		return NULL;
	argv[0] = (char *)program;
	for (i = 0; i < n; i++)
		argv[i + 1] = (char *)args[i];
	return argv;
}

void lm_proc_result_dispose(lm_proc_result *res)
{
	if (res == NULL)
		return;
	free(res->out);
	free(res->err);
	memset(res, 0, sizeof(*res));
}

static int make_pipe(int fds[2])
{
	if (pipe(fds) < 0)
		return -1;
	if (fcntl(fds[0], F_SETFD, FD_CLOEXEC) < 0 || fcntl(fds[1], F_SETFD, FD_CLOEXEC) < 0 ||
	    fcntl(fds[0], F_SETFL, O_NONBLOCK) < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	return 0;
}

/* Read what is available into b; returns 1 at EOF, 0 when more may come, <0 on a read error or
 * when out of memory. Past b's limit the bytes are read and dropped (b keeps LM_ETOOLARGE), so
 * that the child is never blocked on a full pipe. */
static int drain(int fd, lm_buf *b)
{
	char chunk[4096];
	ssize_t r;

	for (;;) {
		r = read(fd, chunk, sizeof(chunk));
		if (r == 0)
			return 1;
		if (r < 0)
			return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? 0 : -1;
		if (lm_buf_add(b, chunk, (size_t)r) == LM_ENOMEM)
			return -1;
	}
}

static int exit_code_of(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 255;
}

static int run(char *const argv[], char *const env[], const lm_proc_options *o, lm_proc_result *res)
{
	static const char *const names[2] = {"standard output", "standard error"};
	lm_proc_spawn_spec spec = {0};
	int outp[2] = {-1, -1}, errp[2] = {-1, -1};
	size_t max = o->output_max != 0 ? o->output_max : LM_PROC_OUTPUT_MAX;
	lm_buf bo, be;
	int out_open = 1, err_open = 1, exited = 0, status = 0, rc = 0, e, i;
	pid_t pid;
	double deadline = lm_clock_monotonic() + o->timeout, left;
	struct pollfd pfd[2];

	if (make_pipe(outp) < 0 || make_pipe(errp) < 0) {
		e = errno;
		if (outp[0] >= 0) {
			close(outp[0]);
			close(outp[1]);
		}
		return lm_error_set(LM_ERROR, "%s: cannot create a pipe: %s", argv[0], strerror(e));
	}
	spec.argv = argv;
	spec.env = env;
	spec.stdio = LM_PROC_STDIO_FDS;
	spec.out_fd = outp[1];
	spec.err_fd = errp[1];
	rc = lm_proc_spawn(&spec, &pid);
	close(outp[1]);
	close(errp[1]);
	if (rc < 0) {
		close(outp[0]);
		close(errp[0]);
		return rc;
	}
	lm_buf_init(&bo, max);
	lm_buf_init(&be, max);
	/* Read until the child has exited and both pipes are drained. A child that leaves a
	 * grandchild holding the pipes open must not keep us waiting: once the child has exited,
	 * only what is already buffered is read. */
	while (!exited || out_open || err_open) {
		int n = 0, wait_ms;

		if (!exited) {
			pid_t w = waitpid(pid, &status, WNOHANG);
			if (w == pid)
				exited = 1;
		}
		if (exited) {
			if (out_open && drain(outp[0], &bo) != 0)
				out_open = 0;
			if (err_open && drain(errp[0], &be) != 0)
				err_open = 0;
			/* one last look at what is buffered, then stop */
			out_open = err_open = 0;
			break;
		}
		/* Canceled: the child goes as after its deadline (what it did is the caller's to undo). */
		if (o->cancel != NULL && (rc = lm_context_check_cancel(o->cancel, "while waiting for it")) < 0) {
			rc = lm_error_prefix("%s: ", argv[0]);
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			break;
		}
		left = deadline - lm_clock_monotonic();
		if (left <= 0) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			res->timed_out = 1;
			exited = 1;
			drain(outp[0], &bo);
			drain(errp[0], &be);
			break;
		}
		wait_ms = left > 0.05 ? 50 : (int)(left * 1000) + 1;
		if (out_open) {
			pfd[n].fd = outp[0];
			pfd[n++].events = POLLIN;
		}
		if (err_open) {
			pfd[n].fd = errp[0];
			pfd[n++].events = POLLIN;
		}
		if (n == 0) {
			lm_clock_sleep((double)wait_ms / 1000.0);
			continue;
		}
		if (poll(pfd, (nfds_t)n, wait_ms) < 0 && errno != EINTR) {
			rc = lm_error_set(LM_ERROR, "%s: poll: %s", argv[0], strerror(errno));
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			break;
		}
		if (out_open && (e = drain(outp[0], &bo)) != 0) {
			if (e < 0)
				rc = lm_error_nomem();
			out_open = 0;
		}
		if (err_open && (e = drain(errp[0], &be)) != 0) {
			if (e < 0)
				rc = lm_error_nomem();
			err_open = 0;
		}
		if (rc < 0) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			break;
		}
	}
	close(outp[0]);
	close(errp[0]);
	res->exit_code = exit_code_of(status);
	/* Ended by the signal that cancels us (a terminal's ^C reaches its whole process group, this
	 * child with us): canceled, not a failure of its own. */
	if (rc == 0 && exited && WIFSIGNALED(status) && o->cancel != NULL &&
	    (rc = lm_context_check_cancel(o->cancel, "while waiting for it")) < 0)
		rc = lm_error_prefix("%s: ", argv[0]);
	for (i = 0; i < 2 && rc == 0; i++)
		if (lm_buf_error(i == 0 ? &bo : &be) == LM_ETOOLARGE)
			rc = lm_error_set(LM_ETOOLARGE, "%s: more than %zu bytes (the limit) on its %s; nothing of it was kept",
			    argv[0], max, names[i]);
	if (rc == 0 && (rc = lm_buf_take(&bo, &res->out, &res->out_len)) == 0)
		rc = lm_buf_take(&be, &res->err, &res->err_len);
	lm_buf_dispose(&bo);
	lm_buf_dispose(&be);
	return rc;
}

int lm_proc_run(const char *program, const char *const args[], const lm_proc_options *opts, lm_proc_result *res)
{
	char **argv = child_argv(program, args), **env = child_env(opts, opts->vm_owner);
	int rc;

	memset(res, 0, sizeof(*res));
	rc = argv != NULL && env != NULL ? run(argv, env, opts, res) : lm_error_nomem();
	free(argv);
	lm_strv_free(env);
	if (rc < 0)
		lm_proc_result_dispose(res);
	return rc;
}

int lm_proc_spawn_detached(const char *program, const char *const args[], const lm_proc_options *opts, pid_t *pid)
{
	char **argv = child_argv(program, args), **env = child_env(opts, 1);
	lm_proc_spawn_spec spec = {0};
	int rc;

	spec.argv = argv;
	spec.env = env;
	spec.stdio = opts->log != NULL ? LM_PROC_STDIO_LOG : LM_PROC_STDIO_NULL;
	spec.log = opts->log;
	spec.own_session = 1; /* a terminal's ^C or hang-up on ours must not stop the VM */
	rc = argv != NULL && env != NULL ? lm_proc_spawn(&spec, pid) : lm_error_nomem();
	free(argv);
	lm_strv_free(env);
	return rc;
}
