/* spawn-sibling: a server that starts its worker by path beside itself, as Ollama's `ollama` starts
 * the `llama-server` shipped in its own directory (reference/metal.md, "Corrections and additions
 * (2026-12-02)": exec.Command with os.Environ()). The Ollama-shaped fixture of issue 34
 * (tests/e2e/resign.sh): this program as `ollama`, the metal-server fixture as `llama-server`, both
 * signed with the hardened runtime (guest-sshd sign).
 *
 *   spawn-sibling [-n COUNT] [-x STATUS] NAME [ARGS...]
 *       starts NAME from the directory of /proc/self/exe (the file the kernel ran, links resolved:
 *       a copy starts the copy's sibling) with posix_spawn, its own environment and ARGS; waits for
 *       it and prints "spawn-sibling: NAME exited N". It asks the GPU nothing. -n: COUNT times, one
 *       after another (a workload of many shim-loading processes); -x: exit with STATUS instead of
 *       the last child's.
 */
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv)
{
	char self[PATH_MAX], path[PATH_MAX + 256], *slash;
	long count = 1, i;
	int exit_with = -1, status = 0, rc, arg = 1;
	ssize_t n;
	pid_t pid;

	while (arg + 1 < argc && (strcmp(argv[arg], "-n") == 0 || strcmp(argv[arg], "-x") == 0)) {
		if (argv[arg][1] == 'n')
			count = strtol(argv[arg + 1], NULL, 10);
		else
			exit_with = (int)strtol(argv[arg + 1], NULL, 10);
		arg += 2;
	}
	if (arg >= argc || count < 1 || count > 100000 || exit_with > 255 || strchr(argv[arg], '/') != NULL ||
	    strlen(argv[arg]) > 255) {
		fprintf(stderr, "usage: spawn-sibling [-n COUNT] [-x STATUS] NAME [ARGS...]\n");
		return 2;
	}
	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) < 0) {
		perror("spawn-sibling: /proc/self/exe");
		return 1;
	}
	self[n] = '\0';
	if ((slash = strrchr(self, '/')) == NULL) {
		fprintf(stderr, "spawn-sibling: %s has no directory\n", self);
		return 1;
	}
	*slash = '\0';
	snprintf(path, sizeof(path), "%s/%s", self, argv[arg]);
	argv[arg] = path;
	for (i = 0; i < count; i++) {
		fflush(stdout);
		if ((rc = posix_spawn(&pid, path, NULL, NULL, argv + arg, environ)) != 0) {
			fprintf(stderr, "spawn-sibling: cannot start %s: %s\n", path, strerror(rc));
			return 1;
		}
		if (waitpid(pid, &status, 0) != pid) {
			perror("spawn-sibling: waitpid");
			return 1;
		}
	}
	printf("spawn-sibling: %s exited %d\n", strrchr(path, '/') + 1,
	    WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	if (exit_with >= 0)
		return exit_with;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
