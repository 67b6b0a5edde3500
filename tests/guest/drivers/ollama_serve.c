/* ollama-serve: a server whose workers come and go, in Ollama's shape (issue 48, item 5): at start
 * `ollama serve` runs a short discovery runner that lists the GPUs and exits (ollama
 * discover/llama_server.go), and for each model load an inference runner, which exits after
 * OLLAMA_KEEP_ALIVE (5 minutes by default, envconfig/config.go) idle (llm/llama_server.go). Here
 * the load and the idle end are the test's signals, never a wait.
 *
 *   ollama-serve            the server: starts its discovery runner (this program with
 *                           `runner --discover`, /proc/self/exe) with posix_spawn and waits for it,
 *                           prints "server: discovery exited N" and "server: ready", then waits for
 *                           signals: SIGUSR1 loads a model (starts `runner --model` unless one
 *                           runs), SIGUSR2 is the keep-alive running out (the runner is ended with
 *                           SIGKILL, which no destructor sees: its record is its last update),
 *                           SIGTERM ends the server (exit 0). It asks the GPU nothing.
 *   ... runner --discover   one device from MTLCreateSystemDefaultDevice, no question asked:
 *                           prints "discover: 1 device" and exits 0.
 *   ... runner --model      the inference runner: asks supportsFamily: Apple7 and Apple9 (what
 *                           llama.cpp's kernels are chosen on), prints "runner: pid N apple7=0|1
 *                           apple9=0|1 ready" and waits until it is ended.
 * Each line is flushed as printed (the tests read the agent's log).
 */
#include "../../../guest/guest_runtime.h"

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static volatile sig_atomic_t got_load, got_idle, got_term, got_child;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		got_load = 1;
	else if (sig == SIGUSR2)
		got_idle = 1;
	else if (sig == SIGCHLD)
		got_child = 1;
	else
		got_term = 1;
}

static int supports(id dev, long family)
{
	SEL sel = sel_registerName("supportsFamily:");
	IMP imp = class_getMethodImplementation(object_getClass(dev), sel);

	return ((unsigned char (*)(id, SEL, long))imp)(dev, sel, family) != 0;
}

static int runner(int model)
{
	id dev = MTLCreateSystemDefaultDevice();
	int apple7, apple9;

	if (dev == 0) {
		fprintf(stderr, "runner: no Metal device\n");
		return 1;
	}
	if (!model) {
		printf("discover: 1 device\n");
		return 0;
	}
	apple7 = supports(dev, 1007);
	apple9 = supports(dev, 1009);
	printf("runner: pid %d apple7=%d apple9=%d ready\n", (int)getpid(), apple7, apple9);
	fflush(stdout);
	for (;;)
		pause(); /* until the server ends it */
}

/* Starts `SELF runner MODE`; 0 and *pid, or -1 said. */
static int start_runner(const char *mode, pid_t *pid)
{
	char *argv[] = { (char *)"ollama", (char *)"runner", (char *)mode, NULL };
	int rc;

	fflush(stdout);
	if ((rc = posix_spawn(pid, "/proc/self/exe", NULL, NULL, argv, environ)) != 0) {
		fprintf(stderr, "server: cannot start the runner: %s\n", strerror(rc));
		return -1;
	}
	return 0;
}

static int status_code(int status)
{
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int serve(void)
{
	struct sigaction sa;
	sigset_t block, old;
	pid_t discovery, worker = 0, done;
	int status;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigaddset(&block, SIGUSR2);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGCHLD);
	/* Blocked from here on, taken only in sigsuspend: no signal is lost between two looks. */
	sigprocmask(SIG_BLOCK, &block, &old);
	if (sigaction(SIGUSR1, &sa, NULL) != 0 || sigaction(SIGUSR2, &sa, NULL) != 0 ||
	    sigaction(SIGTERM, &sa, NULL) != 0 || sigaction(SIGCHLD, &sa, NULL) != 0) {
		perror("server: sigaction");
		return 1;
	}
	if (start_runner("--discover", &discovery) != 0)
		return 1;
	while ((done = waitpid(discovery, &status, 0)) < 0 && errno == EINTR)
		;
	if (done != discovery) {
		perror("server: waitpid");
		return 1;
	}
	printf("server: discovery exited %d\nserver: ready\n", status_code(status));
	fflush(stdout);
	while (!got_term) {
		sigsuspend(&old);
		if (got_child) {
			got_child = 0;
			while (worker > 0 && (done = waitpid(worker, &status, WNOHANG)) == worker) {
				printf("server: runner exited %d\n", status_code(status));
				worker = 0;
			}
		}
		if (got_idle) {
			got_idle = 0;
			if (worker > 0) {
				kill(worker, SIGKILL);
				if (waitpid(worker, &status, 0) == worker)
					printf("server: runner exited %d\n", status_code(status));
				worker = 0;
			}
		}
		if (got_load) {
			got_load = 0;
			if (worker == 0 && start_runner("--model", &worker) != 0)
				worker = 0;
		}
		fflush(stdout);
	}
	if (worker > 0) {
		kill(worker, SIGKILL);
		waitpid(worker, &status, 0);
	}
	printf("server: stopped\n");
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && strcmp(argv[1], "runner") == 0 && strcmp(argv[2], "--discover") == 0)
		return runner(0);
	if (argc == 3 && strcmp(argv[1], "runner") == 0 && strcmp(argv[2], "--model") == 0)
		return runner(1);
	if (argc == 1 || (argc == 2 && strcmp(argv[1], "serve") == 0))
		return serve();
	fprintf(stderr, "usage: ollama-serve [serve] | runner --discover | runner --model\n");
	return 2;
}
