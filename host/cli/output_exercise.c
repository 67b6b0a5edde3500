/* Printing exercise results as text (probe, status); the JSON form is the library's. */
#include "cli.h"

void lm_cli_exercise_lines(const lm_cli *cli, FILE *out, const char *indent, const char *title,
    const lm_report *exercised)
{
	const char *message;
	int i;

	if (exercised == NULL || !lm_report_has_exercise(exercised))
		return;
	lm_cli_printf(out, "%s%s (with the shim; kernels checked against the CPU):\n", indent, title);
	for (i = 0; i < LM_EXERCISE_COUNT; i++) {
		lm_exercise_result res = lm_report_exercise(exercised, (lm_exercise)i, &message);
		if (res == LM_EXERCISE_NOT_RUN)
			continue;
		lm_cli_printf(out, "%s  %-30s ", indent, lm_exercise_name((lm_exercise)i));
		lm_cli_word(out, cli, res == LM_EXERCISE_PASS ? LM_CLI_OK : res == LM_EXERCISE_FAIL ? LM_CLI_FAIL : LM_CLI_WARN,
		    lm_exercise_result_name(res), 0);
		lm_cli_printf(out, "%s%s\n", message[0] ? ": " : "", message);
	}
	lm_cli_printf(out, "%s  %-30s %llu bytes\n", indent, "threadgroup memory that runs",
	    (unsigned long long)lm_report_threadgroup_memory_exercised(exercised));
}
