/* Scale benchmark (issue 25, item 7): `gc` of 10,000 and 100,000 VMs their manager no longer knows
 * (Lume's API on the simulator answering "not found" for each), and known_hosts files of as many
 * lines read and changed. Each row runs in a child of its own, so that its peak resident size is
 * its own; its CPU time beside the wall-clock time says what a loaded machine's waiting hides.
 * Prints a table; asserts nothing (the bounds are tests/sim/test_scale.c's). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lume-metal.h"
#include "lume-metal/sys/ssh.h"
#include "clock.h"
#include "scale_state.h"
#include "sim_fixture.h"
#include "ssh_pins.h"
#include "str.h"

static sim_fixture sim;

static lm_context *context_for(const char *dir, lm_vm_manager_kind kind)
{
	lm_options o;
	lm_context *ctx = NULL;

	if (lm_options_init(&o, LM_OPTIONS_VERSION) < 0)
		return NULL;
	o.state_dir = dir;
	o.vm_manager = kind;
	o.lume_url = sim.url;
	if (lm_context_new(&ctx, &o) < 0)
		fprintf(stderr, "context: %s\n", lm_error_last()->message);
	return ctx;
}

/* One row: set up n VMs in a fresh state directory, then time what `what` names. */
static int row(const char *what, size_t n)
{
	char dir[PATH_MAX + 64], name[32], **pins = NULL;
	lm_flow_result *result = NULL;
	lm_context *ctx;
	double t, seconds, before, cpu;
	size_t done = 0;
	int rc;

	snprintf(dir, sizeof(dir), "%s/state-%s-%zu", sim.dir, what, n);
	if ((ctx = context_for(dir, LM_VM_MANAGER_LUME_API)) == NULL || scale_state_make(ctx, n, NULL, 0) < 0)
		return 1;
	before = scale_peak_mb();
	cpu = scale_cpu_seconds();
	t = lm_clock_monotonic();
	if (strcmp(what, "gc") == 0) {
		rc = lm_flow_gc(ctx, &result);
		done = result != NULL ? result->count : 0;
		lm_flow_result_free(result);
	} else if (strcmp(what, "read") == 0) {
		rc = lm_ssh_pinned_vms(ctx, &pins);
		while (pins != NULL && pins[done] != NULL)
			done++;
		lm_strv_free(pins);
	} else {
		scale_gone_name(n / 2, name, sizeof(name));
		done = (size_t)(rc = lm_ssh_forget_host(ctx, name));
	}
	seconds = lm_clock_monotonic() - t;
	cpu = scale_cpu_seconds() - cpu;
	if (rc < 0) {
		fprintf(stderr, "%s of %zu: %s\n", what, n, lm_error_last()->message);
		return 1;
	}
	printf("| %-34s | %9zu | %7zu | %8.2f | %8.2f | %7.0f |\n", strcmp(what, "gc") == 0 ? "gc: gone VMs forgotten" :
	    strcmp(what, "read") == 0 ? "known_hosts: every pin read" : "known_hosts: one pin forgotten", n, done,
	    seconds, cpu, scale_peak_mb() - before);
	fflush(stdout); /* the child ends with _exit */
	lm_context_free(ctx);
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const args[] = {NULL};
	static const char *const whats[] = {"gc", "read", "forget"};
	size_t sizes[] = {10000, 100000}, i, k;
	int status, failed = 0;
	pid_t pid;

	/* bench-scale [N...]: other sizes than 10,000 and 100,000 */
	if (argc > 1 && argc - 1 <= 2)
		for (i = 0; i < (size_t)argc - 1; i++)
			sizes[i] = (size_t)strtoul(argv[i + 1], NULL, 10);
	if (sim_fixture_start(&sim, "bench-scale", args) < 0)
		return 1;
	printf("| %-34s | %9s | %7s | %8s | %8s | %7s |\n", "operation", "entries", "handled", "seconds", "CPU s",
	    "peak MB");
	printf("|%s|%s|%s|%s|%s|%s|\n", "------------------------------------", "-----------", "---------", "----------",
	    "----------", "---------");
	fflush(stdout);
	for (k = 0; k < (argc > 1 ? (size_t)argc - 1 : 2); k++)
		for (i = 0; i < sizeof(whats) / sizeof(whats[0]); i++) {
			if ((pid = fork()) == 0)
				_exit(row(whats[i], sizes[k]));
			failed |= pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
			fflush(stdout);
		}
	failed |= sim_fixture_stop(&sim) < 0;
	return failed;
}
