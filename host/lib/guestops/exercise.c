/* The exercise: the shimmed probe with --exercise, which runs small kernels for the features the
 * unlock is for and checks them against the CPU (docs/guest.md, "Exercises"). enable believes the
 * unlock only when the profile's expected kernels pass; probe --exercise runs it on demand. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest_shim.h"
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

/* The first number of a macOS version ("13.6.7" -> 13); 0 when it does not start with one. */
static int macos_major(const char *version)
{
	int major = 0;

	while (*version >= '0' && *version <= '9' && major < 1000)
		major = major * 10 + (*version++ - '0');
	return major;
}

unsigned lm_exercise_waived(const char *macos_version, char *why, size_t len)
{
	int major = macos_version != NULL ? macos_major(macos_version) : 0;

	if (why != NULL && len > 0)
		why[0] = '\0';
	/* bfloat needs the Metal Shading Language 3.1, which came with macOS 14: below it a bfloat16
	 * kernel cannot compile, and llama.cpp turns bfloat16 off (ggml-metal.metal, `__METAL_VERSION__
	 * < 310`), so no workload of it needs one there (reference/metal.md). */
	if (major == 0 || major >= 14)
		return 0;
	if (why != NULL)
		lm_text_format_cut(why, len, "bfloat16 not required of a macOS %s guest: it needs the Metal Shading "
		    "Language 3.1 (macOS 14), and llama.cpp turns it off below", macos_version);
	return 1u << LM_EXERCISE_BFLOAT16; /* the feature's index is the exercise's for the first three */
}

int lm_guest_exercise_check(const lm_profile *profile, const lm_report *exercised, const lm_guest_facts *g,
    char *note, size_t len)
{
	/* os_version is sw_vers's: only a macOS guest has one (the tests' Linux guests play macOS). */
	unsigned waived = lm_exercise_waived(g != NULL ? g->os_version : NULL, note, len);

	/* Said only when the profile would have required it. */
	if (waived != 0 && lm_profile_exercise_expect(profile, LM_EXERCISE_BFLOAT16) != LM_EXERCISE_EXPECT_PASS)
		note[0] = '\0';
	return lm_profile_check_exercise_waived(profile, exercised, waived);
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

int lm_exercise_defects(const lm_report *exercised, char *shown, size_t shown_len, char *checked, size_t checked_len)
{
	const char *message;
	size_t n;
	int i;

	shown[0] = checked[0] = '\0';
	for (i = 0; i < LM_EXERCISE_COUNT; i++) {
		lm_exercise_result res = lm_report_exercise(exercised, (lm_exercise)i, &message);
		if (!lm_exercise_is_defect((lm_exercise)i) || res == LM_EXERCISE_NOT_RUN)
			continue;
		n = strlen(checked);
		snprintf(checked + n, checked_len - n, "%s%s%s", n ? ", " : "", lm_exercise_name((lm_exercise)i),
		    res == LM_EXERCISE_ERROR ? " (could not run)" : "");
		if (res != LM_EXERCISE_FAIL)
			continue;
		n = strlen(shown);
		snprintf(shown + n, shown_len - n, "%s%s: %s", n ? "; " : "", lm_exercise_name((lm_exercise)i),
		    message[0] ? message : "wrong results");
	}
	return checked[0] != '\0';
}
