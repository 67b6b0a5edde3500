/* lume-metal profile list | show NAME|FILE | lint NAME|FILE: the built-in profiles, one profile
 * in full, and what a profile changes for llama.cpp and MLX with its warnings. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char *const llama_labels[4][2] = {
	{"simdgroup_reduction", "simdgroup reduction"},
	{"simdgroup_mm", "simdgroup matrix multiply"},
	{"bfloat16", "bfloat16"},
	{"tensor", "tensor API"},
};

static int llama_flag(const lm_workload_flags *f, int i)
{
	switch (i) {
	case 0: return f->llama_simdgroup_reduction;
	case 1: return f->llama_simdgroup_mm;
	case 2: return f->llama_bfloat16;
	default: return f->llama_tensor;
	}
}

static int is_builtin(const char *name_or_path)
{
	size_t i;

	for (i = 0; i < lm_profile_builtin_count(); i++)
		if (strcmp(lm_profile_builtin_name(i), name_or_path) == 0)
			return 1;
	return 0;
}

/* --host FAMILY: a family name ("Apple7") or its value (1007), in the Apple range. */
static int host_family(lm_cli *cli, int *out)
{
	char *end;
	long v;
	int value = 0;

	*out = 0;
	if (cli->host == NULL)
		return 0;
	errno = 0;
	v = strtol(cli->host, &end, 10);
	if (errno == 0 && end != cli->host && *end == '\0' && v > 0 && v < 100000)
		value = (int)v;
	else if (lm_family_value(cli->host, &value) != 0)
		return lm_cli_usage_error(cli, "--host: %s", lm_error_last()->message);
	if (value < 1001 || value > 1999)
		return lm_cli_usage_error(cli, "--host: expected an Apple family such as Apple7 (M1) or Apple9 (M3, M4), "
		    "found '%s'", cli->host);
	*out = value;
	return 0;
}

static int cmd_list(lm_cli *cli)
{
	const char *dflt = lm_profile_default_name();
	lm_profile_validation v;
	lm_json_envelope env;
	lm_profile *p;
	char fam[48], *doc = NULL;
	size_t i;

	if (cli->json) {
		env = lm_cli_envelope(cli, LM_EXIT_OK, 0, NULL);
		if (lm_profile_list_to_json(&env, &doc) < 0)
			return lm_cli_fail(cli, LM_EXIT_FAILURE);
		lm_cli_print_document(cli, 0, doc);
		return LM_EXIT_OK;
	}
	printf("%-16s %-16s %-12s %s\n", "NAME", "CEILING", "THREADGROUP", "VALIDATED");
	for (i = 0; i < lm_profile_builtin_count(); i++) {
		const char *name = lm_profile_builtin_name(i);
		const lm_profile_capabilities *caps;
		char validated[160] = "no";

		if (lm_profile_builtin(&p, name) != 0)
			return lm_cli_fail(cli, LM_EXIT_FAILURE);
		caps = lm_profile_caps(p);
		lm_family_label(caps->apple_family_max, fam, sizeof(fam));
		if (lm_profile_validation_get(p, 0, &v) == 0)
			snprintf(validated, sizeof(validated), "yes (%s, host %s, guest %s%s)", v.chip, v.host_os,
			    v.guest_os, lm_profile_validation_count(p) > 1 ? ", ..." : "");
		printf("%-16s %-16s %-12" PRIu64 " %s\n", name, fam, caps->max_threadgroup_memory, validated);
		lm_profile_free(p);
	}
	lm_error_clear();
	printf("\ndefault: %s (lume-metal profile show NAME for details)\n", dflt);
	return LM_EXIT_OK;
}

static const char *pref_value_text(const lm_pref_value *v, char *buf, size_t size)
{
	if (v->type == LM_PREF_BOOL)
		snprintf(buf, size, "%s (bool)", v->boolean ? "true" : "false");
	else if (v->type == LM_PREF_INTEGER)
		snprintf(buf, size, "%lld (integer)", v->integer);
	else
		snprintf(buf, size, "\"%s\" (string)", v->string);
	return buf;
}

static void print_expectation(const lm_profile_expectation *e)
{
	char fam[48];

	printf("  %-8s ", e->shimmed ? "shimmed:" : "stock:");
	switch (e->kind) {
	case LM_EXPECT_FAMILY:
		printf("%s answered %s\n", lm_family_label(e->family, fam, sizeof(fam)), e->value ? "true" : "false");
		break;
	case LM_EXPECT_MIN_THREADGROUP_MEMORY:
		printf("max threadgroup memory at least %" PRIu64 " bytes\n", e->value);
		break;
	case LM_EXPECT_MIN_WORKING_SET_SIZE:
		printf("recommended working set at least %" PRIu64 " bytes\n", e->value);
		break;
	case LM_EXPECT_SHIM_ACTIVE:
		printf("shim %s\n", e->value ? "active" : "not active");
		break;
	}
}

static void show_text(const lm_profile *p, const char *arg)
{
	const lm_profile_capabilities *caps = lm_profile_caps(p);
	const lm_pref_setting *pref = lm_profile_host_preference(p);
	lm_env_entry env[LM_PROFILE_ENV_MAX];
	lm_profile_expectation e;
	lm_profile_validation v;
	char buf[128];
	size_t i, j, n;

	printf("profile: %s%s\n", lm_profile_name(p), is_builtin(arg) ?
	    (strcmp(arg, lm_profile_default_name()) == 0 ? " (built-in, default)" : " (built-in)") : "");
	if (!is_builtin(arg))
		printf("file: %s\n", arg);
	printf("description: %s\n", lm_profile_description(p));
	printf("capabilities:\n  Apple family ceiling: %s\n", lm_family_label(caps->apple_family_max, buf, sizeof(buf)));
	printf("  max threadgroup memory: at least %" PRIu64 " bytes\n", caps->max_threadgroup_memory);
	if (caps->has_recommended_working_set_size)
		printf("  recommended working set: at least %" PRIu64 " bytes\n", caps->recommended_working_set_size);
	else
		printf("  recommended working set: unchanged\n");
	printf("host preference: %s %s = %s\n", pref->domain, pref->key,
	    pref_value_text(&pref->value, buf, sizeof(buf)));
	printf("shim environment:\n");
	lm_profile_render_env(p, env, &n);
	for (i = 0; i < n; i++)
		printf("  %s=%s\n", env[i].name, env[i].value);
	printf("expectations:\n");
	n = lm_profile_expectation_count(p);
	if (n == 0)
		printf("  none\n");
	for (i = 0; i < n; i++)
		if (lm_profile_expectation_get(p, i, &e) == 0)
			print_expectation(&e);
	printf("validated on:\n");
	if (!lm_profile_validated(p))
		printf("  not yet validated\n");
	for (i = 0; lm_profile_validation_get(p, i, &v) == 0; i++) {
		printf("  %s, host %s, guest %s:", v.chip, v.host_os, v.guest_os);
		for (j = 0; j < v.workload_count; j++)
			printf("%s %s", j ? "," : "", v.workloads[j]);
		printf("\n    evidence: %s\n", v.evidence);
	}
	lm_error_clear();
}

static int cmd_show(lm_cli *cli, const char *arg)
{
	lm_json_envelope env;
	lm_profile *p;
	char *doc = NULL;
	int rc;

	if (lm_profile_resolve(&p, arg) != 0)
		return lm_cli_fail(cli, LM_EXIT_FAILURE);
	if (!cli->json) {
		show_text(p, arg);
		lm_profile_free(p);
		return LM_EXIT_OK;
	}
	env = lm_cli_envelope(cli, LM_EXIT_OK, 0, NULL);
	rc = lm_profile_show_to_json(p, is_builtin(arg), strcmp(arg, lm_profile_default_name()) == 0, &env, &doc);
	lm_profile_free(p);
	if (rc < 0)
		return lm_cli_fail(cli, LM_EXIT_FAILURE);
	lm_cli_print_document(cli, 0, doc);
	return LM_EXIT_OK;
}

static int cmd_lint(lm_cli *cli, const char *arg)
{
	lm_profile_lint_result r;
	lm_json_envelope env;
	lm_profile *p;
	char *doc = NULL;
	int host, rc, i;
	size_t k;

	if ((rc = host_family(cli, &host)) != 0)
		return rc;
	if (lm_profile_resolve(&p, arg) != 0)
		return lm_cli_fail(cli, LM_EXIT_FAILURE);
	if (lm_profile_lint(p, host, &r) != 0) {
		lm_profile_free(p);
		return lm_cli_fail(cli, LM_EXIT_FAILURE);
	}
	if (cli->json) {
		env = lm_cli_envelope(cli, LM_EXIT_OK, 0, NULL);
		rc = lm_profile_lint_to_json(p, arg, host, &r, &env, &doc);
		if (rc < 0) {
			lm_profile_free(p);
			return lm_cli_fail(cli, LM_EXIT_FAILURE);
		}
		lm_cli_print_document(cli, 0, doc);
	} else {
		printf("profile %s (%s): valid\n", lm_profile_name(p), arg);
		printf("llama.cpp on the paravirtual device (stock -> with this profile):\n");
		for (i = 0; i < 4; i++)
			printf("  %-26s %-3s -> %s\n", llama_labels[i][1], llama_flag(&r.stock, i) ? "on" : "off",
			    llama_flag(&r.shimmed, i) ? "on" : "off");
		for (k = 0; k < r.count; k++)
			if (r.items[k].level == LM_LINT_NOTE)
				printf("note: %s\n", r.items[k].message);
		for (k = 0; k < r.count; k++)
			if (r.items[k].level == LM_LINT_WARNING)
				printf("warning: %s\n", r.items[k].message);
		printf("%zu warning%s\n", r.warnings, r.warnings == 1 ? "" : "s");
	}
	lm_profile_free(p);
	return LM_EXIT_OK;
}

int lm_cmd_profile(lm_cli *cli)
{
	const char *sub = cli->argc > 0 ? cli->argv[0] : NULL;

	if (sub == NULL)
		return lm_cli_usage_error(cli, "profile: expected list, show NAME|FILE or lint NAME|FILE");
	cli->json_command = strcmp(sub, "list") == 0 ? "profile list" : strcmp(sub, "show") == 0 ? "profile show" :
	    strcmp(sub, "lint") == 0 ? "profile lint" : "profile";
	if (strcmp(sub, "list") == 0) {
		if (cli->argc != 1)
			return lm_cli_usage_error(cli, "profile list: takes no argument, found '%s'", cli->argv[1]);
		return cmd_list(cli);
	}
	if (strcmp(sub, "show") == 0 || strcmp(sub, "lint") == 0) {
		if (cli->argc != 2)
			return lm_cli_usage_error(cli, "profile %s: expected one profile (a built-in name or a JSON file)", sub);
		return sub[0] == 's' ? cmd_show(cli, cli->argv[1]) : cmd_lint(cli, cli->argv[1]);
	}
	return lm_cli_usage_error(cli, "profile: unknown subcommand '%s'; expected list, show or lint", sub);
}
