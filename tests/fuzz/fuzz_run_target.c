/* What the guest-side resolver prints for `run` (program=, program_real=, interpreter=, the
 * shim's first bytes, and codesign's lines about each file, prefixed), as run_target.c and
 * codesign.c read it, then the judgements made of it: the code-signature refusal and warning and
 * the SIP warning. A guest's output is the workload's to shape: every field stays bounded and
 * terminated, and each judgement is 0 or 1 with its message when 1. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "guest_codesign.h"
#include "fuzz_support.h"

static void check_sig(const lm_code_signature *s)
{
	LM_FUZZ_CHECK(memchr(s->flags, '\0', sizeof(s->flags)) != NULL);
	LM_FUZZ_CHECK(lm_codesign_ignores_injection(s) == (s->seen && !s->unsigned_ && s->hardened && !s->allow_dyld_env));
}

static void check_judgement(int said, const char *buf)
{
	LM_FUZZ_CHECK(said == 0 || said == 1);
	LM_FUZZ_CHECK(said ? buf[0] != '\0' : 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *out = lm_fuzz_strdup(data, size), buf[4 * PATH_MAX];
	lm_guest_facts facts;
	lm_run_target t;
	lm_code_signature one;
	static const char *const sips[] = {"enabled", "disabled", ""};
	size_t i;

	lm_run_target_parse(out, &t);
	LM_FUZZ_CHECK(memchr(t.program, '\0', sizeof(t.program)) != NULL &&
	    memchr(t.program_real, '\0', sizeof(t.program_real)) != NULL &&
	    memchr(t.interpreter, '\0', sizeof(t.interpreter)) != NULL &&
	    memchr(t.interpreter_real, '\0', sizeof(t.interpreter_real)) != NULL);
	check_sig(&t.program_sig);
	check_sig(&t.interpreter_sig);
	/* codesign's output alone, as one file's lines. */
	lm_codesign_parse_line(&one, out, strlen(out));
	check_sig(&one);
	check_judgement(lm_codesign_refusal("prog", &t, buf, sizeof(buf)), buf);
	check_judgement(lm_codesign_warning("prog", &t, buf, sizeof(buf)), buf);
	for (i = 0; i < sizeof(sips) / sizeof(sips[0]); i++) {
		memset(&facts, 0, sizeof(facts));
		strcpy(facts.os, "Darwin");
		strcpy(facts.sip, sips[i]);
		check_judgement(lm_sip_warning(&facts, "prog", &t, buf, sizeof(buf)), buf);
	}
	free(out);
	return 0;
}
