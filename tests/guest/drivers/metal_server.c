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
 * LD_LIBRARY_PATH as it ignores the shim. One signed with the hardened runtime and that entitlement
 * but without com.apple.security.cs.disable-library-validation is refused the (ad hoc) shim by
 * library validation: the loader ignores it too (guest-sshd sign), and dyld's warning, which this
 * machine's loader does not print, is printed at the start of main (reference metal.md,
 * 2026-12-02: "could not load inserted library … not valid for use in process using Library
 * Validation: mapped file has no Team ID and is not a platform binary"; the process goes on stock).
 */
#include "../../../guest/guest_runtime.h"

#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define ALLOW_DYLD "com.apple.security.cs.allow-dyld-environment-variables"
#define NO_LIBRARY_VALIDATION "com.apple.security.cs.disable-library-validation"

/* The signature guest-sshd sign left at the end of this program's file, or "" (buf: cap bytes). */
static void own_signature(char *buf, size_t cap)
{
	FILE *f = fopen("/proc/self/exe", "rb");
	size_t n = 0;
	char *start, *end, begin_line[32], end_line[32];

	/* Made at run time: the marker lines themselves must not be in this file's text, or the
	 * unsigned program would look signed (guest-sshd and the codesign stand-in look for them). */
	snprintf(begin_line, sizeof(begin_line), "\n#%s-%s\n", "lume-sim", "codesign");
	snprintf(end_line, sizeof(end_line), "\n#%s-%s-end\n", "lume-sim", "codesign");
	buf[0] = '\0';
	if (f == NULL)
		return;
	if (fseek(f, -(long)(cap - 1), SEEK_END) != 0)
		rewind(f);
	n = fread(buf, 1, cap - 1, f);
	fclose(f);
	buf[n] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (buf[i] == '\0')
			buf[i] = ' ';
	}
	start = strstr(buf, begin_line);
	end = start != NULL ? strstr(start, end_line) : NULL;
	if (start == NULL || end == NULL) {
		buf[0] = '\0';
		return;
	}
	end[1] = '\0';
	memmove(buf, start, (size_t)(end - start) + 2);
}

/* dyld's library validation, for a program the loader was told to insert libraries into: the
 * environment it was started with. The loader's secure-execution mode took LD_PRELOAD out of
 * environ, not out of the strings the kernel laid out (the arguments, then the environment, one
 * after the other), and /proc/self/environ is not readable by a process with file capabilities:
 * the strings are read from argv[0] to the end of the last one environ still names. */
static void simulated_library_validation(char **argv)
{
	char sig[4096], *p, *end = argv[0];

	/* LD_PRELOAD still in environ: the loader was given no rule for this file (guest-sshd sign
	 * --dir on a SIP-off guest) and inserted the shim, so nothing was refused. */
	if (getenv("LD_PRELOAD") != NULL)
		return;
	own_signature(sig, sizeof(sig));
	if (strstr(sig, "flags=0x10000(runtime)") == NULL || strstr(sig, "entitlement=" ALLOW_DYLD "\n") == NULL ||
	    strstr(sig, "entitlement=" NO_LIBRARY_VALIDATION "\n") != NULL)
		return;
	for (char **e = environ; *e != NULL; e++) {
		if (*e > end)
			end = *e;
	}
	end += strlen(end);
	for (p = argv[0]; p < end; p += strlen(p) + 1) {
		char copy[4096], *lib, *save = NULL;

		if (strncmp(p, "LD_PRELOAD=", strlen("LD_PRELOAD=")) != 0)
			continue;
		snprintf(copy, sizeof(copy), "%s", p + strlen("LD_PRELOAD="));
		for (lib = strtok_r(copy, ": ", &save); lib != NULL; lib = strtok_r(NULL, ": ", &save))
			fprintf(stderr, "dyld[%d]: warning: could not load inserted library '%s' into hardened process "
			    "because code signature in <%s> not valid for use in process using Library Validation: "
			    "mapped file has no Team ID and is not a platform binary (signed with custom identity or "
			    "adhoc?)\n", (int)getpid(), lib, lib);
		break;
	}
}

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

	simulated_library_validation(argv);
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
