/* framework-stub: a launcher that re-executes the real program in place, under the same pid, with
 * its own arguments and environment, as CPython's framework builds do: bin/python3.x
 * (Mac/Tools/pythonw.c) re-executes Resources/Python.app/Contents/MacOS/Python with posix_spawn
 * and POSIX_SPAWN_SETEXEC (reference metal.md, 2026-12-02). glibc has no POSIX_SPAWN_SETEXEC, so
 * where the flag is missing the same exec in place is an execve, which is what the flag makes of
 * posix_spawn.
 *
 *   <prefix>/bin/NAME [ARGS...]  runs <prefix>/Resources/Python.app/Contents/MacOS/Python ARGS...
 *
 * Exit status 127 with why when the program cannot be started.
 */
#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv)
{
	char self[PATH_MAX], target[PATH_MAX + 64], *slash;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	(void)argc;
	if (n <= 0) {
		perror("framework-stub: /proc/self/exe");
		return 127;
	}
	self[n] = '\0';
	/* <prefix>/bin/NAME -> <prefix> */
	if ((slash = strrchr(self, '/')) != NULL)
		*slash = '\0';
	if ((slash = strrchr(self, '/')) != NULL)
		*slash = '\0';
	snprintf(target, sizeof(target), "%s/Resources/Python.app/Contents/MacOS/Python", self);
	argv[0] = target;
#if defined(POSIX_SPAWN_SETEXEC)
	{
		posix_spawnattr_t attr;
		int rc;

		posix_spawnattr_init(&attr);
		posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETEXEC);
		rc = posix_spawn(NULL, target, NULL, &attr, argv, environ);
		fprintf(stderr, "framework-stub: %s: %s\n", target, strerror(rc));
		return 127;
	}
#else
	execve(target, argv, environ);
	fprintf(stderr, "framework-stub: %s: %s\n", target, strerror(errno));
	return 127;
#endif
}
