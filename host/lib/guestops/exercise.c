/* The exercise: the shimmed probe with --exercise, which runs small kernels for the features the
 * unlock is for and checks them against the CPU (docs/guest.md, "Exercises"). enable believes the
 * unlock only when the profile's expected kernels pass; probe --exercise runs it on demand. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guestops.h"
#include "text.h"

int lm_guest_exercise(lm_ssh *ssh, const lm_shim_env *se, lm_report **out)
{
	const char *argv[3] = {se->probe_path, "--report", "--exercise"};
	char *cmd = NULL, *sout = NULL, *serr = NULL;
	int status = 0, rc;

	*out = NULL;
	if ((rc = lm_shim_command(se, LM_SHIM_ALL, argv, 3, &cmd)) < 0)
		return rc;
	rc = lm_ssh_exec_capture(ssh, cmd, 256 * 1024, &sout, &serr, &status);
	free(cmd);
	if (rc < 0)
		goto out;
	if (status != 0) {
		rc = lm_error_set(LM_EREMOTE, "the probe's exercise failed with the shim (exit %d): %s", status,
		    serr != NULL && serr[0] ? serr : "no output");
		goto out;
	}
	if ((rc = lm_report_parse_lines(out, sout, strlen(sout))) < 0)
		lm_error_prefix("the probe's exercise report: ");
	else if (!lm_report_has_exercise(*out)) {
		lm_report_free(*out);
		*out = NULL;
		rc = lm_error_set(LM_EUNSUPPORTED, "the guest's probe printed no exercise results (a probe older than "
		    "the exercise)");
	}
out:
	lm_free(sout);
	lm_free(serr);
	return rc;
}

void lm_exercise_summary(const lm_report *r, char *buf, size_t len)
{
	size_t n;
	int i, shown = 0;

	/* Formatted in place: a step's detail that needs no memory (it was "" when there was none). */
	lm_text_format_cut(buf, len, "reduction %s, matrix %s, bfloat16 %s; threadgroup memory %llu bytes",
	    lm_exercise_result_name(lm_report_exercise(r, LM_EXERCISE_SIMDGROUP_REDUCTION, NULL)),
	    lm_exercise_result_name(lm_report_exercise(r, LM_EXERCISE_SIMDGROUP_MATRIX, NULL)),
	    lm_exercise_result_name(lm_report_exercise(r, LM_EXERCISE_BFLOAT16, NULL)),
	    (unsigned long long)lm_report_threadgroup_memory_exercised(r));
	/* A known defect only when it showed: reported, never what decides. */
	for (i = 0; i < LM_EXERCISE_COUNT; i++) {
		if (!lm_exercise_is_defect((lm_exercise)i) || lm_report_exercise(r, (lm_exercise)i, NULL) != LM_EXERCISE_FAIL)
			continue;
		n = strlen(buf);
		lm_text_format_cut(buf + n, len - n, "%s%s", shown++ ? ", " : "; known defect shown (not required): ",
		    lm_exercise_name((lm_exercise)i));
	}
}
