/* Lume's VM lock, as lume-sim and its `lume` stand-in both see it. A VM belongs to the process
 * that holds its config.json open and flock()ed while the VM runs (VM.swift run()): `lume serve`
 * for VMs started over HTTP, the `lume run` process for VMs started by the CLI. `lume stop`
 * finds that process the way `lsof -F p config.json` does, sends it SIGINT and, if it is still
 * there after ten seconds, SIGKILL (VM.swift stop()). Neither Lume process handles SIGINT: the
 * process ends, and every VM it runs with it. */
#include "sim.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Does process `pid` have the file (dev, ino) open? */
static int holds(long pid, dev_t dev, ino_t ino)
{
	char dir[64], path[64 + 256];
	struct dirent *e;
	struct stat st;
	DIR *d;
	int found = 0;

	snprintf(dir, sizeof(dir), "/proc/%ld/fd", pid);
	if ((d = opendir(dir)) == NULL)
		return 0; /* gone, or not ours to look at (lsof does not see it either) */
	while (!found && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		found = stat(path, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
	}
	closedir(d);
	return found;
}

pid_t sim_lock_owner(const char *config)
{
	struct stat want;
	struct dirent *e;
	long best = 0, pid;
	char *end;
	DIR *proc;

	if (stat(config, &want) < 0 || (proc = opendir("/proc")) == NULL)
		return 0;
	while ((e = readdir(proc)) != NULL) {
		pid = strtol(e->d_name, &end, 10);
		if (*end != '\0' || pid <= 0 || (best != 0 && pid >= best))
			continue;
		if (holds(pid, want.st_dev, want.st_ino))
			best = pid; /* lsof lists by PID: Lume takes the first line */
	}
	closedir(proc);
	return (pid_t)best;
}

static int process_alive(pid_t pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

int sim_process_exited(pid_t pid)
{
	char path[64], buf[256], *p;
	FILE *f;
	size_t n;

	if (!process_alive(pid))
		return 1;
	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if ((f = fopen(path, "r")) == NULL)
		return 1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* "PID (comm) S ...": the state follows the last ')' (comm may hold anything). */
	if ((p = strrchr(buf, ')')) == NULL || p[1] == '\0')
		return 0;
	return p[2] == 'Z' || p[2] == 'X';
}

int sim_signal_owner(pid_t pid, double grace)
{
	double deadline;

	if (kill(pid, SIGINT) < 0)
		return errno == ESRCH ? 0 : -1;
	/* Lume looks (kill(pid, 0)) once a second for ten seconds; looking more often ends the same
	 * way, sooner. A zombie counts as gone: on a Mac launchd reaps an orphan at once, where some
	 * containers' init never does. */
	for (deadline = sim_now() + grace; sim_now() < deadline; sim_sleep(0.05))
		if (sim_process_exited(pid))
			return SIGINT;
	if (kill(pid, SIGKILL) < 0)
		return errno == ESRCH ? SIGINT : -1;
	/* Lume then sleeps 2 s; this waits for the process to be gone, at most as long. */
	for (deadline = sim_now() + 2; sim_now() < deadline && !sim_process_exited(pid); sim_sleep(0.05))
		;
	return SIGKILL;
}
