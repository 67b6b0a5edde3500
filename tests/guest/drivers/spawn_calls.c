/* spawn-calls: one program started through one of the exec and spawn calls, as programs start
 * their children; the shim interposes each (guest/shim/interpose.c) and decides per call whether
 * the child keeps it (guest/shim/children.c).
 *
 *   spawn-calls CALL PROGRAM [ARGS...]
 *     CALL: execve execv execvp execvpe execl execlp execle (the process becomes PROGRAM), or
 *           posix_spawn posix_spawnp (PROGRAM is a child, waited for; "spawn-calls: exit N").
 *     The p-variants search PATH for a PROGRAM without '/'; execl* pass at most one ARG.
 *
 * Exit status: the child's for the spawn calls; 127 with why when the call fails; 2 for a bad
 * command line.
 */
#define _GNU_SOURCE /* execvpe */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int spawn(int search, char **argv)
{
	pid_t pid;
	int status, rc;

	fflush(stdout);
	rc = search ? posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ) :
	    posix_spawn(&pid, argv[0], NULL, NULL, argv, environ);
	if (rc != 0) {
		fprintf(stderr, "spawn-calls: %s: %s\n", argv[0], strerror(rc));
		return 127;
	}
	if (waitpid(pid, &status, 0) != pid) {
		perror("spawn-calls: waitpid");
		return 127;
	}
	rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	printf("spawn-calls: exit %d\n", rc);
	return rc;
}

int main(int argc, char **argv)
{
	const char *call = argc > 2 ? argv[1] : "";
	char **args = argv + 2;
	const char *a1 = argc > 3 ? argv[3] : NULL;

	if (argc < 3) {
		fprintf(stderr, "usage: spawn-calls CALL PROGRAM [ARGS...]\n");
		return 2;
	}
	fflush(stdout);
	if (strcmp(call, "posix_spawn") == 0)
		return spawn(0, args);
	if (strcmp(call, "posix_spawnp") == 0)
		return spawn(1, args);
	if (strcmp(call, "execve") == 0)
		execve(args[0], args, environ);
	else if (strcmp(call, "execv") == 0)
		execv(args[0], args);
	else if (strcmp(call, "execvp") == 0)
		execvp(args[0], args);
	else if (strcmp(call, "execvpe") == 0)
		execvpe(args[0], args, environ);
	else if (strcmp(call, "execl") == 0)
		a1 != NULL ? execl(args[0], args[0], a1, (char *)NULL) : execl(args[0], args[0], (char *)NULL);
	else if (strcmp(call, "execlp") == 0)
		a1 != NULL ? execlp(args[0], args[0], a1, (char *)NULL) : execlp(args[0], args[0], (char *)NULL);
	else if (strcmp(call, "execle") == 0)
		a1 != NULL ? execle(args[0], args[0], a1, (char *)NULL, environ) :
		    execle(args[0], args[0], (char *)NULL, environ);
	else {
		fprintf(stderr, "spawn-calls: unknown call %s\n", call);
		return 2;
	}
	fprintf(stderr, "spawn-calls: %s %s: %s\n", call, args[0], strerror(errno));
	return 127;
}
