/* Ctrl-C (SIGINT) and SIGTERM. The first asks the library to stop at its next safe point and undo,
 * as after a failure: the tool's should_cancel callback reports it (lm_options.should_cancel). A
 * command that changes VMs prints its result and one line on what the interruption left; then the
 * process ends by the same signal, so that a shell or a loop around lume-metal sees that it was
 * interrupted. A second signal ends it at once: every step is crash-safe, and the next enable or
 * rollback converges. */
#include <signal.h>
#include <string.h>

#include "cli.h"

static volatile sig_atomic_t caught;

static void on_signal(int sig)
{
	if (caught != 0) {
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	caught = sig;
}

void lm_cli_trap_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
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
	if (caught == 0)
		return;
	fflush(stdout);
	fflush(stderr);
	signal(caught, SIG_DFL);
	raise(caught);
}
