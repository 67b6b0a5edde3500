/* lume-sim: clocks, the request log, child processes. */
#include "sim.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

double sim_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double sim_epoch(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void sim_sleep(double seconds)
{
	struct timespec ts;

	if (seconds <= 0)
		return;
	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

void sim_log_json(sim *s, const char *json_line)
{
	size_t n = strlen(json_line);
	char *line = malloc(n + 2);

	if (line == NULL)
		return;
	memcpy(line, json_line, n);
	line[n] = '\n';
	/* One write per line on an O_APPEND descriptor: the stand-in appends to the same file. */
	pthread_mutex_lock(&s->lock);
	if (s->log_fd >= 0 && write(s->log_fd, line, n + 1) < 0)
		fprintf(stderr, "lume-sim: cannot write the request log: %s\n", strerror(errno));
	pthread_mutex_unlock(&s->lock);
	free(line);
}

void sim_log_event(sim *s, const char *event, const char *vm, const char *detail)
{
	cJSON *o = cJSON_CreateObject();
	char *text;

	cJSON_AddNumberToObject(o, "time", sim_epoch());
	cJSON_AddStringToObject(o, "source", "sim");
	cJSON_AddStringToObject(o, "event", event);
	if (vm != NULL)
		cJSON_AddStringToObject(o, "vm", vm);
	if (detail != NULL)
		cJSON_AddStringToObject(o, "detail", detail);
	if ((text = cJSON_PrintUnformatted(o)) != NULL)
		sim_log_json(s, text);
	free(text);
	cJSON_Delete(o);
}

static ssize_t read_some(int fd, char *buf, size_t cap, size_t *len, int *open)
{
	char junk[1024];
	ssize_t r;

	if (buf != NULL && *len + 1 < cap)
		r = read(fd, buf + *len, cap - 1 - *len);
	else
		r = read(fd, junk, sizeof(junk));
	if (r <= 0) {
		if (r == 0 || (errno != EINTR && errno != EAGAIN))
			*open = 0;
		return r;
	}
	if (buf != NULL && *len + 1 < cap) {
		*len += (size_t)r;
		buf[*len] = '\0';
	}
	return r;
}

int sim_spawn_wait(char *const argv[], double timeout, char *out, size_t outcap, char *err, size_t errcap)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, defaults;
	int op[2], ep[2], status = 0, e, out_open = 1, err_open = 1;
	size_t olen = 0, elen = 0;
	double deadline = sim_now() + timeout;
	pid_t pid;

	if (out != NULL && outcap > 0)
		out[0] = '\0';
	if (err != NULL && errcap > 0)
		err[0] = '\0';
	if (pipe(op) < 0)
		return -1;
	if (pipe(ep) < 0) {
		close(op[0]);
		close(op[1]);
		return -1;
	}
	fcntl(op[0], F_SETFD, FD_CLOEXEC);
	fcntl(ep[0], F_SETFD, FD_CLOEXEC);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, op[1], 1);
	posix_spawn_file_actions_adddup2(&fa, ep[1], 2);
	posix_spawn_file_actions_addclose(&fa, op[1]);
	posix_spawn_file_actions_addclose(&fa, ep[1]);
	/* The simulator blocks the signals it waits for and ignores SIGPIPE: its children (the
	 * guests' sshd) must not inherit that, or they could not be stopped. */
	sigemptyset(&none);
	sigemptyset(&defaults);
	sigaddset(&defaults, SIGPIPE);
	sigaddset(&defaults, SIGTERM);
	sigaddset(&defaults, SIGINT);
	sigaddset(&defaults, SIGHUP);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &defaults);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	e = posix_spawn(&pid, argv[0], &fa, &attr, argv, environ);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	close(op[1]);
	close(ep[1]);
	if (e != 0) {
		close(op[0]);
		close(ep[0]);
		if (err != NULL && errcap > 0)
			snprintf(err, errcap, "%s: %s", argv[0], strerror(e));
		return -1;
	}
	/* A daemonising child may leave its own children holding the pipes: stop reading when the
	 * child itself has exited. */
	for (;;) {
		struct pollfd p[2];
		int n = 0;
		pid_t w = waitpid(pid, &status, WNOHANG);

		if (w == pid)
			break;
		if (sim_now() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			close(op[0]);
			close(ep[0]);
			return -1;
		}
		if (out_open) {
			p[n].fd = op[0];
			p[n++].events = POLLIN;
		}
		if (err_open) {
			p[n].fd = ep[0];
			p[n++].events = POLLIN;
		}
		if (n == 0) {
			sim_sleep(0.01);
			continue;
		}
		if (poll(p, (nfds_t)n, 20) > 0) {
			int i;
			for (i = 0; i < n; i++) {
				if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
					continue;
				if (p[i].fd == op[0])
					read_some(op[0], out, outcap, &olen, &out_open);
				else
					read_some(ep[0], err, errcap, &elen, &err_open);
			}
		}
	}
	/* Whatever is still buffered, and no more: a daemon the child left (the guest's sshd) may hold
	 * the pipes open for as long as it runs, and reading on until EOF spun on EAGAIN meanwhile,
	 * a tenth of the machine's CPU while a fleet booted. */
	fcntl(op[0], F_SETFL, O_NONBLOCK);
	fcntl(ep[0], F_SETFL, O_NONBLOCK);
	while (out_open && read_some(op[0], out, outcap, &olen, &out_open) > 0)
		;
	while (err_open && read_some(ep[0], err, errcap, &elen, &err_open) > 0)
		;
	close(op[0]);
	close(ep[0]);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
