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
#include "fs.h"
#include "path.h"
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

/* A stop: sig to the workload's group and to its processes that left it (setsid, setpgid), found by
 * their ancestry, SIGKILL after the grace -- the same stop as a VM's run, guestops' script
 * (lm_workload_stop, workload_session.c says what it does and on which sources), run over ssh/'s
 * local transport: one rule for both. The script reads the group from the run's group file, which
 * the wrapper writes in a guest; here the workload leads its group (POSIX_SPAWN_SETPGROUP), so it is
 * written before the first stop. The launching process is the workload itself, lume-metal's child,
 * as it is sshd's in a guest (the script's $PPID: the transport execs it from lume-metal). */
static int stop_workload(lm_local_machine *m, const char *record_dir, pid_t pid, int sig, double grace,
    lm_workload_stopped *st)
{
	char path[4096], text[32], launcher[24];
	int rc;

	if ((rc = lm_path_join_buf(path, sizeof(path), record_dir, LM_WORKLOAD_GROUP_FILE, NULL)) < 0)
		return rc;
	snprintf(text, sizeof(text), "-%ld\n", (long)pid);
	snprintf(launcher, sizeof(launcher), "%ld", (long)pid);
	if (access(path, F_OK) != 0 && (rc = lm_fs_write_atomic(path, text, strlen(text), 0600)) < 0)
		return rc;
	if ((rc = lm_workload_stop(m->ssh, record_dir, sig, grace, "", launcher, 1, st)) < 0)
		lm_log(m->ctx, LM_LOG_WARN, "this machine: stopping the workload: %s", lm_error_last()->message);
	return rc;
}

/* How many PIDs a stop's list names. */
static size_t pids_in(const char *list)
{
	size_t n = 0;

	for (; *list != '\0'; list++)
		if (*list != ' ' && (list[1] == ' ' || list[1] == '\0'))
			n++;
	return n;
}

/* Until the workload ends: each signal caught, and the embedder's cancel as SIGTERM, stops it
 * (stop_workload). Then whatever of its group is left is ended. */
static int wait_workload(lm_local_machine *m, const run_guard *g, const char *record_dir, double grace, pid_t pid,
    int *exit_status)
{
	lm_workload_stopped st;
	struct pollfd pfd;
	unsigned char sig;
	int status = 0, canceled = 0;
	size_t found = 0;
	pid_t r;

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
		while (read(signal_pipe[0], &sig, 1) == 1)
			if (stop_workload(m, record_dir, pid, sig, grace, &st) == 0 && pids_in(st.others) > found)
				found = pids_in(st.others);
		if (!canceled && lm_context_check_cancel(m->ctx, "the workload") < 0) {
			canceled = 1;
			if (stop_workload(m, record_dir, pid, SIGTERM, grace, &st) == 0 && pids_in(st.others) > found)
				found = pids_in(st.others);
		}
	}
	(void)kill(-pid, SIGKILL); /* what is left of its group */
	if (r < 0)
		return lm_error_set(LM_ERROR, "local run: waiting for the workload failed: %s", strerror(errno));
	*exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	if (!canceled)
		return 0;
	if (found > 0)
		return lm_error_set(LM_ECANCELED, "local run: the workload was stopped on request (its process group, and "
		    "the %zu process%s of it found outside the group)", found, found == 1 ? "" : "es");
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
		rc = wait_workload(m, &g, res->record_dir, opts != NULL && opts->stop_grace > 0 ? opts->stop_grace :
		    LM_WORKLOAD_STOP_GRACE, pid, &res->exit_status);
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
