/* Printing exercise results as text (probe, status); the JSON form is the library's. */
#include "cli.h"

/* A raised threadgroup-memory answer (the published profile's 64 KB) above what the kernels ran
 * reads like a broken unlock; it is the value the shim reports, which no Apple family lists
 * (reference: metal.md), and llama.cpp only asserts on it. Say so under the table. */
static void threadgroup_memory_note(FILE *out, const char *indent, const lm_report *exercised)
{
	uint64_t reported = lm_report_max_threadgroup_memory(exercised);
	uint64_t runs = lm_report_threadgroup_memory_exercised(exercised);

	if (runs == 0 || reported <= runs)
		return;
	lm_cli_printf(out, "%s  %llu bytes is the value the device reports (the profile's); kernels run with up to %llu.\n",
	    indent, (unsigned long long)reported, (unsigned long long)runs);
	lm_cli_printf(out, "%s  llama.cpp uses the reported value only in assertions; its kernels fit the 32 KB Apple GPUs have.\n",
	    indent);
}

void lm_cli_exercise_lines(const lm_cli *cli, FILE *out, const char *indent, const char *title,
    const lm_report *exercised, const char *os_version)
{
	const char *message;
	char why[200];
	unsigned waived = lm_exercise_waived(os_version, why, sizeof(why));
	int i, defects = 0;

	if (exercised == NULL || !lm_report_has_exercise(exercised))
		return;
	if (lm_report_exercise_seconds(exercised) >= 0)
		lm_cli_printf(out, "%s%s (with the shim; kernels checked against the CPU; took %.2f s):\n", indent, title,
		    lm_report_exercise_seconds(exercised));
	else
		lm_cli_printf(out, "%s%s (with the shim; kernels checked against the CPU):\n", indent, title);
	for (i = 0; i < LM_EXERCISE_COUNT; i++) {
		lm_exercise_result res = lm_report_exercise(exercised, (lm_exercise)i, &message);
		if (res == LM_EXERCISE_NOT_RUN || lm_exercise_is_defect((lm_exercise)i))
			continue;
		lm_cli_printf(out, "%s  %-30s ", indent, lm_exercise_name((lm_exercise)i));
		lm_cli_word(out, cli, res == LM_EXERCISE_PASS ? LM_CLI_OK : res == LM_EXERCISE_FAIL ? LM_CLI_FAIL : LM_CLI_WARN,
		    lm_exercise_result_name(res), 0);
		lm_cli_printf(out, "%s%s\n", message[0] ? ": " : "", message);
		/* The first three exercises are the features of the same index. */
		if (i < LM_EXERCISE_FEATURES && (waived & (1u << i)) != 0)
			lm_cli_printf(out, "%s  %-30s (%s)\n", indent, "", why);
	}
	lm_cli_printf(out, "%s  %-30s %llu bytes\n", indent, "threadgroup memory that runs",
	    (unsigned long long)lm_report_threadgroup_memory_exercised(exercised));
	threadgroup_memory_note(out, indent, exercised);
	/* The device's known defects: a fail is the defect showing, reported beside the rest. */
	for (i = 0; i < LM_EXERCISE_COUNT; i++) {
		lm_exercise_result res = lm_report_exercise(exercised, (lm_exercise)i, &message);
		if (res == LM_EXERCISE_NOT_RUN || !lm_exercise_is_defect((lm_exercise)i))
			continue;
		if (defects++ == 0)
			lm_cli_printf(out, "%s  known defects of the paravirtual device (reported, not required):\n", indent);
		lm_cli_printf(out, "%s    %-28s %s%s%s\n", indent, lm_exercise_name((lm_exercise)i),
		    res == LM_EXERCISE_PASS ? "not shown" : res == LM_EXERCISE_FAIL ? "shown" : "error",
		    message[0] ? ": " : "", message);
	}
}
