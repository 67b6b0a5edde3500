/* protected-tool: a program SIP protects, with dyld's rule for the libraries it is told to insert
 * modelled at its start (the simulated guest's /usr/libexec, tests/support/guest-sshd). Linked
 * statically, so this machine's loader inserts nothing into it: what it does with LD_PRELOAD is
 * dyld's part, decided here before main's own work.
 *
 * dyld (apple-oss-distributions/dyld; reference metal.md, "dyld and inserted libraries"): in a
 * restricted process (SIP on) DYLD_* is ignored and purged; with SIP off a platform program,
 * which is arm64e, loads the inserted libraries, and one that has no arm64e slice cannot be
 * loaded: dyld terminates the process. The simulated guest has no arm64e library (the shim built
 * on Linux has none, as the cross-built one has none), so with SIP off any LD_PRELOAD terminates
 * it. The SIP state is the guest's: /usr/libexec/lume-sim-sip (written by guest-sshd from the
 * same value csrutil reports), else $LM_SIM_SIP (the unit tests), else enabled.
 *
 *   protected-tool                prints "protected-tool: LD_PRELOAD=VALUE" or
 *                                 "protected-tool: LD_PRELOAD unset"
 *   protected-tool PROGRAM ARGS   the same line, then runs PROGRAM (as env does), with the
 *                                 environment dyld left
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void sip_state(char *buf, size_t len)
{
	FILE *f = fopen("/usr/libexec/lume-sim-sip", "r");
	const char *env = getenv("LM_SIM_SIP");

	snprintf(buf, len, "%s", env != NULL && *env != '\0' ? env : "enabled");
	if (f != NULL) {
		if (fgets(buf, (int)len, f) == NULL)
			snprintf(buf, len, "enabled");
		buf[strcspn(buf, "\n")] = '\0';
		fclose(f);
	}
}

/* dyld at the start of a platform program. */
static void simulated_dyld(void)
{
	const char *inserted = getenv("LD_PRELOAD");
	char sip[32], first[1024];

	if (inserted == NULL || *inserted == '\0')
		return;
	sip_state(sip, sizeof(sip));
	if (strcmp(sip, "enabled") == 0) {
		unsetenv("LD_PRELOAD"); /* purged: the program and its children run without it */
		return;
	}
	snprintf(first, sizeof(first), "%.*s", (int)strcspn(inserted, ": "), inserted);
	fprintf(stderr, "dyld[%d]: terminating because inserted dylib '%s' could not be loaded: tried: '%s' "
	    "(mach-o file, but is an incompatible architecture (have 'arm64', need 'arm64e'))\n", (int)getpid(), first,
	    first);
	fflush(stderr);
	signal(SIGABRT, SIG_DFL);
	abort();
}

int main(int argc, char **argv)
{
	const char *now;

	simulated_dyld();
	now = getenv("LD_PRELOAD");
	if (now != NULL)
		printf("protected-tool: LD_PRELOAD=%s\n", now);
	else
		printf("protected-tool: LD_PRELOAD unset\n");
	fflush(stdout);
	if (argc > 1) {
		execvp(argv[1], argv + 1);
		fprintf(stderr, "protected-tool: %s: %s\n", argv[1], strerror(errno));
		return 127;
	}
	return 0;
}
