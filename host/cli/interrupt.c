/* Ctrl-C (SIGINT) and SIGTERM (and SIGHUP for run). The first asks the library to stop at its next
 * safe point and undo, as after a failure: the tool's should_cancel callback reports it
 * (lm_options.should_cancel); run also hands the signal itself to the library, which sends it to
 * the workload's process group in the guest. A command that changes VMs prints its result and one
 * line on what the interruption left; then the process ends by the same signal, so that a shell
 * or a loop around lume-metal sees that it was interrupted. A second signal ends it at once (the
 * terminal restored first): every step is crash-safe, the next enable or rollback converges, and
 * a stop of run's workload already under way finishes in the guest by itself.
 *
 * The same signal again within REPEAT_SECONDS of the first is the same request, not a second one:
 * GNU timeout sends its signal to the child and then to the child's whole process group
 * (coreutils timeout.c, send_sig(monitored_pid, sig) then send_sig(0, sig) when not
 * --foreground), so `timeout 600 lume-metal enable vm` gets SIGTERM twice at once, and a terminal
 * delivers one ^C to every process of its foreground group. Only a later one, or another signal,
 * ends at once. */
#include <signal.h>
#include <string.h>
#include <time.h>

#include "cli.h"

#define REPEAT_SECONDS 2

static volatile sig_atomic_t caught, pending;
/* When the first signal came (CLOCK_MONOTONIC; clock_gettime is async-signal-safe, POSIX 2.4.3). */
static volatile long first_sec, first_nsec;

static int within_repeat(void)
{
	struct timespec now;
	long ms;

	if (clock_gettime(CLOCK_MONOTONIC, &now) != 0)
		return 0;
	ms = (long)(now.tv_sec - first_sec) * 1000 + (now.tv_nsec - first_nsec) / 1000000;
	return ms >= 0 && ms < REPEAT_SECONDS * 1000;
}

static void on_signal(int sig)
{
	struct timespec now;

	if (caught != 0) {
		if (sig == caught && within_repeat())
			return;
		lm_cli_terminal_restore();
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	if (clock_gettime(CLOCK_MONOTONIC, &now) == 0) {
		first_sec = (long)now.tv_sec;
		first_nsec = now.tv_nsec;
	}
	caught = sig;
	pending = sig;
}

static void trap(int sig)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(sig, &sa, NULL);
}

void lm_cli_trap_signals(void)
{
	trap(SIGINT);
	trap(SIGTERM);
}

/* run: a hang-up (the terminal or the CI job's session gone) stops the workload like SIGTERM; the
 * other commands keep its default. */
void lm_cli_trap_hangup(void)
{
	trap(SIGHUP);
}

/* run forwards the signal itself to the workload's process group (lm_workload_options). */
int lm_cli_pending_signal(void *data)
{
	int sig = pending;

	(void)data;
	pending = 0;
	return sig;
}

int lm_cli_should_cancel(void *data)
{
	(void)data;
	return caught != 0;
}

int lm_cli_interrupted(void)
{
	return caught;
}

void lm_cli_interrupted_line(const lm_flow_result *r)
{
	size_t i, n = 0;

	lm_cli_printf(stderr, "lume-metal: interrupted by %s: ", caught == SIGTERM ? "SIGTERM" : "SIGINT");
	for (i = 0; i < r->count; i++) {
		if (r->vms[i]->rc != LM_ECANCELED)
			continue;
		lm_cli_printf(stderr, "%s%s", n++ > 0 ? " | " : "", r->vms[i]->message);
	}
	if (n == 0)
		lm_cli_puts(stderr, "every VM was already done; nothing was undone");
	lm_cli_puts(stderr, "\n");
}

void lm_cli_exit_interrupted(void)
{
	lm_cli_terminal_restore();
	if (caught == 0)
		return;
	fflush(stdout);
	fflush(stderr);
	signal(caught, SIG_DFL);
	raise(caught);
}
