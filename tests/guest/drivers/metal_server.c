/* metal-server: a server whose Metal work is done in a child, as servers that start a model
 * runner do (issue 23's fixture; tests/e2e/activation.sh).
 *
 *   metal-server            the server: starts its runner (this program with --runner, found
 *                           through /proc/self/exe) with posix_spawn and the environment it has
 *                           itself, waits for it and prints "server: runner exited N". It asks
 *                           the GPU nothing.
 *   metal-server --worker PATH   the same with the program at PATH as its runner (PATH --runner):
 *                           a worker shipped beside the server, as Ollama's llama-server is
 *                           beside ollama (reference metal.md, 2026-12-02).
 *   metal-server --runner   the runner: one device from MTLCreateSystemDefaultDevice, asked
 *                           supportsFamily: Apple7 and Apple9 (what llama.cpp's kernels are chosen
 *                           on); prints "runner: apple7=0|1 apple9=0|1".
 *   ... --stay              either, then stays until a signal ends it (a LaunchAgent's server).
 *
 * Signed copies of it (guest-sshd sign) are the hardened workloads; the ones signed without the
 * dyld-environment entitlement find the fake Metal through their RUNPATH, the loader then ignoring
 * LD_LIBRARY_PATH as it ignores the shim.
 */
#include "../../../guest/guest_runtime.h"

#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int supports(id dev, long family)
{
	SEL sel = sel_registerName("supportsFamily:");
	IMP imp = class_getMethodImplementation(object_getClass(dev), sel);

	return ((unsigned char (*)(id, SEL, long))imp)(dev, sel, family) != 0;
}

static int runner(void)
{
	id dev = MTLCreateSystemDefaultDevice();
	int apple7, apple9;

	if (dev == 0) {
		fprintf(stderr, "runner: no Metal device\n");
		return 1;
	}
	/* In this order, as llama.cpp asks: the record lists the questions as they came. */
	apple7 = supports(dev, 1007);
	apple9 = supports(dev, 1009);
	printf("runner: apple7=%d apple9=%d\n", apple7, apple9);
	return 0;
}

int main(int argc, char **argv)
{
	char *child_argv[] = { argv[0], (char *)"--runner", NULL };
	const char *worker = "/proc/self/exe";
	int stay = argc > 1 && strcmp(argv[argc - 1], "--stay") == 0;
	pid_t pid;
	int status, rc;

	argc -= stay;
	if (argc == 3 && strcmp(argv[1], "--worker") == 0) {
		worker = child_argv[0] = argv[2];
		argc = 1;
	}
	if (argc == 2 && strcmp(argv[1], "--runner") == 0) {
		rc = runner();
	} else if (argc != 1) {
		fprintf(stderr, "usage: metal-server [--runner | --worker PATH] [--stay]\n");
		return 2;
	} else {
		fflush(stdout);
		if ((rc = posix_spawn(&pid, worker, NULL, NULL, child_argv, environ)) != 0) {
			fprintf(stderr, "server: cannot start the runner: %s\n", strerror(rc));
			return 1;
		}
		if (waitpid(pid, &status, 0) != pid) {
			perror("server: waitpid");
			return 1;
		}
		printf("server: runner exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
		rc = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	}
	fflush(stdout);
	while (stay)
		pause();
	return rc;
}
