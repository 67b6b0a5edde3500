/* bench-guest: what the shim costs (run by the bench-guest target, see run_guest_bench.cmake).
 *
 *   bench-guest calls N          N calls of -supportsFamily:(Apple9) on one device, through the
 *                                method's IMP as the Objective-C dispatcher calls it: ns per call
 *   bench-guest spawn N PROG...  start PROG N times with this environment: ms per process
 *   bench-guest first N          N distinct families asked once each (the first question of
 *                                each): with activation records on, each one rewrites the
 *                                record, so this is the shim's own cost of one record write
 *
 * Run it plainly for the stock figures and with the shim preloaded for the hooked ones.
 */
#include "../../guest/guest_runtime.h"

#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Where the answers go, so that the calls cannot be optimised away. */
static volatile unsigned bench_sink;

static int bench_calls(long n)
{
	id dev = MTLCreateSystemDefaultDevice();
	SEL sel = sel_registerName("supportsFamily:");
	unsigned char (*fn)(id, SEL, long);
	double t0, t1;

	if (dev == 0)
		return 1;
	fn = (unsigned char (*)(id, SEL, long))class_getMethodImplementation(object_getClass(dev), sel);
	for (long i = 0; i < n / 10 + 1; i++) /* warm up */
		bench_sink += fn(dev, sel, 1009);
	t0 = now_ns();
	for (long i = 0; i < n; i++)
		bench_sink += fn(dev, sel, 1009);
	t1 = now_ns();
	printf("calls=%ld ns_per_call=%.2f apple9=%u\n", n, (t1 - t0) / (double)n, fn(dev, sel, 1009));
	return 0;
}

static int bench_first(long n)
{
	id dev = MTLCreateSystemDefaultDevice();
	SEL sel = sel_registerName("supportsFamily:");
	unsigned char (*fn)(id, SEL, long);
	double t0, t1;

	if (dev == 0 || n < 1 || n > 60)
		return 1;
	fn = (unsigned char (*)(id, SEL, long))class_getMethodImplementation(object_getClass(dev), sel);
	/* Families 7001.. : none of them asked before in this process, none sharing a seen entry. */
	t0 = now_ns();
	for (long i = 0; i < n; i++)
		bench_sink += fn(dev, sel, 7001 + i);
	t1 = now_ns();
	printf("first=%ld us_per_first_question=%.2f\n", n, (t1 - t0) / (double)n / 1e3);
	return 0;
}

static int bench_spawn(long n, char **argv)
{
	posix_spawn_file_actions_t fa;
	double t0, t1;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", 1 /* O_WRONLY */, 0);
	t0 = now_ns();
	for (long i = 0; i < n; i++) {
		pid_t pid;
		int status;

		if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) != 0 ||
		    waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "bench-guest: %s failed\n", argv[0]);
			return 1;
		}
	}
	t1 = now_ns();
	posix_spawn_file_actions_destroy(&fa);
	printf("processes=%ld ms_per_process=%.3f\n", n, (t1 - t0) / (double)n / 1e6);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "calls") == 0)
		return bench_calls(atol(argv[2]));
	if (argc == 3 && strcmp(argv[1], "first") == 0)
		return bench_first(atol(argv[2]));
	if (argc >= 4 && strcmp(argv[1], "spawn") == 0)
		return bench_spawn(atol(argv[2]), argv + 3);
	fprintf(stderr, "usage: bench-guest calls N | first N | spawn N PROGRAM [ARG...]\n");
	return 2;
}
