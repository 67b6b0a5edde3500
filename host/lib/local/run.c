/* lume-metal local run -- CMD: the workload as a direct child, with the shim's environment; its
 * terminal, streams and exit status are the caller's, signals the caller receives are passed on to
 * its process group, and nothing of it is left running when the call returns. Afterwards, as for a
 * VM's run, which of its processes loaded the shim (their activation records). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "local_internal.h"
#include "random.h"
#include "str.h"
#include "guest_activation.h"
#include "guest_codesign.h"
#include "guest_shim.h"
#include "guest_workload.h"

/* The signals passed on. A signal's disposition is the process's own, so the forwarding is too:
 * one run at a time per process, the caller's handlers put back after it. */
static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP};
#define N_FORWARDED (sizeof(forwarded) / sizeof(forwarded[0]))
static int signal_pipe[2] = {-1, -1};
static pthread_mutex_t run_lock = PTHREAD_MUTEX_INITIALIZER;

static void on_signal(int sig)
{
	int saved = errno;
	unsigned char b = (unsigned char)sig;

	(void)!write(signal_pipe[1], &b, 1);
	errno = saved;
}

/* The terminal to the group pgrp, without being stopped for asking from the background. */
static void give_terminal(int tty, pid_t pgrp)
{
	struct sigaction ign, old;

	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigaction(SIGTTOU, &ign, &old);
	(void)tcsetpgrp(tty, pgrp);
	sigaction(SIGTTOU, &old, NULL);
}

typedef struct {
	struct sigaction old[N_FORWARDED];
	int tty;            /* the terminal given to the workload's group, or -1 */
	pid_t our_pgrp;
} run_guard;

static int guard_on(run_guard *g)
{
	struct sigaction sa;
	size_t i;
	int k;

	if (pipe(signal_pipe) != 0)
		return lm_error_set(LM_ERROR, "local run: cannot make a pipe: %s", strerror(errno));
	for (k = 0; k < 2; k++) {
		(void)fcntl(signal_pipe[k], F_SETFD, FD_CLOEXEC);
		(void)fcntl(signal_pipe[k], F_SETFL, O_NONBLOCK);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	for (i = 0; i < N_FORWARDED; i++)
		sigaction(forwarded[i], &sa, &g->old[i]);
	g->tty = -1;
	return 0;
}

static void guard_off(run_guard *g)
{
	size_t i;
	int k;

	if (g->tty >= 0) /* back in the foreground */
		give_terminal(g->tty, g->our_pgrp);
	for (i = 0; i < N_FORWARDED; i++)
		sigaction(forwarded[i], &g->old[i], NULL);
	for (k = 0; k < 2; k++) {
		if (signal_pipe[k] >= 0)
			close(signal_pipe[k]);
		signal_pipe[k] = -1;
	}
}

/* SHELL -c 'exec env VAR=... PROGRAM ARGS...' in a process group of its own (given the terminal
 * when we hold it), in the caller's directory, with the caller's streams. */
static int spawn_workload(lm_local_machine *m, const char *cmd, run_guard *g, pid_t *pid)
{
	char *line;
	int rc;

	if ((line = lm_format("exec %s", cmd)) == NULL)
		return lm_error_nomem();
	rc = lm_ssh_local_spawn(m->ssh, line, NULL, pid);
	free(line);
	if (rc < 0)
		return rc;
	/* ^C and ^Z on the terminal are the workload's, as for a program started by a shell. */
	g->our_pgrp = getpgrp();
	if (isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == g->our_pgrp) {
		(void)setpgid(*pid, *pid); /* the child may not have done it yet */
		give_terminal(STDIN_FILENO, *pid);
		if (tcgetpgrp(STDIN_FILENO) == *pid)
			g->tty = STDIN_FILENO;
	}
	return 0;
}

/* ^Z stopped the workload: we stop too, as a shell's job would, so that the shell that started us
 * gets its terminal back; `fg` continues us, and we continue the workload with its terminal. */
static void job_stopped(const run_guard *g, pid_t pid)
{
	if (g->tty < 0)
		return;
	give_terminal(g->tty, g->our_pgrp);
	(void)raise(SIGTSTP);
	give_terminal(g->tty, pid);
	(void)kill(-pid, SIGCONT);
}

/* The workload's processes that left its group (setsid, setpgid): found in the process table by
 * their ancestry before a stop's signal, since once their parent has gone they are launchd's
 * children and nothing ties them to the workload. /bin/ps -A -o pid= -o ppid= -o pgid= -o state=:
 * POSIX.1-2017 ps(1) for -A, -o, pid, ppid and pgid; state (Z: a zombie, ended) and /bin/ps as
 * its place are macOS's ps(1) (macOS 15 manual page), and procps's. */
#define OUTSIDE_MAX 64
typedef struct {
	pid_t pid, ppid, pgid;
} proc_entry;
typedef struct {
	proc_entry v[OUTSIDE_MAX];
	size_t n;
	size_t more; /* found past OUTSIDE_MAX: not signalled one by one */
} outside_set;

/* The table (zombies left out) into *out (free()); -1 when ps could not be read. */
static int table_read(proc_entry **out, size_t *n)
{
	char line[256], state[16];
	proc_entry *v = NULL, *bigger;
	size_t cap = 0;
	long a, b, c;
	FILE *f;
	int status;

	*out = NULL;
	*n = 0;
	if ((f = popen("/bin/ps -A -o pid= -o ppid= -o pgid= -o state= 2>/dev/null", "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%ld %ld %ld %15s", &a, &b, &c, state) != 4 || state[0] == 'Z' || a <= 1)
			continue;
		if (*n == cap) {
			cap = cap > 0 ? cap * 2 : 256;
			if ((bigger = realloc(v, cap * sizeof(*v))) == NULL)
				break;
			v = bigger;
		}
		v[*n].pid = (pid_t)a;
		v[*n].ppid = (pid_t)b;
		v[*n].pgid = (pid_t)c;
		(*n)++;
	}
	status = pclose(f);
	if (status != 0 || *n == 0) {
		free(v);
		*n = 0;
		return -1;
	}
	*out = v;
	return 0;
}

static int in_set(const outside_set *o, pid_t pid)
{
	size_t i;

	for (i = 0; i < o->n; i++)
		if (o->v[i].pid == pid)
			return 1;
	return 0;
}

/* Every descendant of pid or of a member of its group, and of what o already holds (while its PID
 * keeps the parent and group it had, or has launchd, PID 1, as its parent: a PID reused meanwhile
 * has neither), that is outside the group pid, into o (o's ended ones dropped). */
static void outside_find(pid_t pid, outside_set *o)
{
	proc_entry *t;
	unsigned char *mine;
	size_t n, i, k;
	int grew;

	if (table_read(&t, &n) < 0)
		return;
	if ((mine = calloc(n, 1)) == NULL) {
		free(t);
		return;
	}
	for (i = 0; i < n; i++) {
		if (t[i].pid == pid || t[i].pgid == pid)
			mine[i] = 1;
		for (k = 0; k < o->n && !mine[i]; k++)
			if (o->v[k].pid == t[i].pid && o->v[k].pgid == t[i].pgid &&
			    (o->v[k].ppid == t[i].ppid || t[i].ppid == 1))
				mine[i] = 1;
	}
	do {
		grew = 0;
		for (i = 0; i < n; i++)
			for (k = 0; k < n && !mine[i]; k++)
				if (mine[k] && t[i].ppid == t[k].pid) {
					mine[i] = 1;
					grew = 1;
				}
	} while (grew);
	o->n = o->more = 0;
	for (i = 0; i < n; i++) {
		if (!mine[i] || t[i].pgid == pid || in_set(o, t[i].pid))
			continue;
		if (o->n < OUTSIDE_MAX)
			o->v[o->n++] = t[i];
		else
			o->more++;
	}
	free(mine);
	free(t);
}

/* sig to the workload's group and to each of its processes found outside it. */
static void stop_signal(pid_t pid, const outside_set *o, int sig)
{
	size_t i;

	(void)kill(-pid, sig);
	for (i = 0; i < o->n; i++)
		(void)kill(o->v[i].pid, sig);
}

/* Until the workload ends: each signal caught goes to its group, the embedder's cancel as SIGTERM,
 * and to the processes of it found outside the group (read just before). Then whatever of its
 * group is left is ended, and what is left of those found. */
static int wait_workload(lm_local_machine *m, const run_guard *g, pid_t pid, int *exit_status)
{
	struct pollfd pfd;
	outside_set out;
	unsigned char sig;
	int status = 0, canceled = 0, stopping = 0;
	size_t found = 0;
	pid_t r;

	memset(&out, 0, sizeof(out));

	for (;;) {
		while ((r = waitpid(pid, &status, WNOHANG | WUNTRACED)) < 0 && errno == EINTR)
			;
		if (r == pid && WIFSTOPPED(status)) {
			job_stopped(g, pid);
			continue;
		}
		if (r == pid || r < 0)
			break;
		pfd.fd = signal_pipe[0];
		pfd.events = POLLIN;
		pfd.revents = 0;
		/* The child's end is seen at the next turn (no SIGCHLD is taken from the caller). */
		(void)poll(&pfd, 1, 100);
		while (read(signal_pipe[0], &sig, 1) == 1) {
			outside_find(pid, &out);
			found = out.n + out.more > found ? out.n + out.more : found;
			stopping = 1;
			stop_signal(pid, &out, sig);
		}
		if (!canceled && lm_context_check_cancel(m->ctx, "the workload") < 0) {
			canceled = stopping = 1;
			outside_find(pid, &out);
			found = out.n + out.more > found ? out.n + out.more : found;
			stop_signal(pid, &out, SIGTERM);
		}
	}
	if (stopping && out.n > 0)
		outside_find(pid, &out); /* the same ones still, and what they started since */
	stop_signal(pid, &out, SIGKILL);
	if (r < 0)
		return lm_error_set(LM_ERROR, "local run: waiting for the workload failed: %s", strerror(errno));
	*exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	if (!canceled)
		return 0;
	if (found > 0)
		return lm_error_set(LM_ECANCELED, "local run: the workload was stopped on request (its process group, and "
		    "the %zu process%s of it found outside the group%s)", found, found == 1 ? "" : "es",
		    found > OUTSIDE_MAX ? ": those past the first 64 were not signalled" : "");
	return lm_error_set(LM_ECANCELED, "local run: the workload was stopped on request");
}

static int run_locked(lm_local_machine *m, const char *const *argv, size_t argc, const lm_workload_options *opts,
    lm_run_result *res)
{
	lm_vm_outcome *o = m->res->machine;
	lm_flow_workload w;
	run_guard g;
	char name[24] = "run-", *cmd = NULL;
	pid_t pid;
	int rc;
	const char *const *run_argv = argv;

	if ((rc = lm_flow_workload_check(m->ctx, m->ssh, &m->se, o, argv, argc, opts, NULL, &w)) < 0 ||
	    (rc = lm_run_argv_program(argv, argc, w.copy, &run_argv)) < 0 ||
	    (rc = lm_random_hex(name + 4, 8)) < 0 ||
	    (rc = lm_activation_dir_make(m->ssh, o->guest.home, name, &res->record_dir)) < 0 ||
	    (rc = lm_shim_env_workload(&m->se, NULL, NULL, res->record_dir)) < 0 ||
	    (rc = lm_shim_command(&m->se, LM_SHIM_ALL, run_argv, argc, &cmd)) < 0) {
		if (run_argv != argv)
			free((void *)run_argv);
		return rc;
	}
	if (run_argv != argv)
		free((void *)run_argv);
	res->inherit = w.inherit;
	snprintf(res->inherit_reason, sizeof(res->inherit_reason), "%s", w.inherit_reason);
	if ((rc = guard_on(&g)) < 0) {
		free(cmd);
		return rc;
	}
	if ((rc = spawn_workload(m, cmd, &g, &pid)) == 0)
		rc = wait_workload(m, &g, pid, &res->exit_status);
	guard_off(&g);
	free(cmd);
	if (rc < 0)
		return rc;
	if ((rc = lm_workload_records_result(m->ssh, &o->guest, &w.target, w.hardened, argv, argc, res)) == 0 &&
	    res->no_shim != NULL && opts != NULL && opts->require_shim)
		rc = lm_error_set(LM_ENOSHIM, "this machine: %s", res->no_shim);
	return rc;
}

int lm_local_run(lm_context *ctx, const lm_profile *profile, const char *const *argv, size_t argc,
    const lm_workload_options *opts, lm_run_result **out)
{
	lm_local_result *lr = NULL;
	lm_local_machine m;
	lm_run_result *res;
	char saved[4096];
	int rc;

	if (out != NULL)
		*out = NULL;
	if ((rc = lm_run_result_new("local run", opts, argv != NULL ? argc : 0, &res)) < 0)
		return rc;
	if (pthread_mutex_trylock(&run_lock) != 0) {
		free(res);
		return lm_error_set(LM_ELOCKED, "local run: another local run of this process is under way (signals are "
		    "the process's: one at a time)");
	}
	if ((rc = lm_local_open(&m, ctx, profile, &lr)) == 0)
		rc = run_locked(&m, argv, argc, opts, res);
	/* The run's own records go; the error, if any, stays the run's. */
	if (res->record_dir != NULL) {
		snprintf(saved, sizeof(saved), "%s", lm_error_last()->message);
		if (lm_activation_dir_remove(m.ssh, res->record_dir) < 0)
			lm_log(ctx, LM_LOG_WARN, "this machine: %s", lm_error_last()->message);
		if (rc < 0)
			lm_error_set(rc, "%s", saved);
	}
	lm_local_close(&m, rc);
	lm_local_result_free(lr);
	pthread_mutex_unlock(&run_lock);
	if (out != NULL)
		*out = res;
	else
		lm_run_result_free(res);
	return rc;
}
