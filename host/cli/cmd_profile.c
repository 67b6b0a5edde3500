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

/* --chip FAMILY: a family name ("Apple7") or its value (1007), in the Apple range. */
static int host_family(lm_cli *cli, int *out)
{
	char *end;
	long v;
	int value = 0;

	*out = 0;
	if (cli->chip == NULL)
		return 0;
	errno = 0;
	v = strtol(cli->chip, &end, 10);
	if (errno == 0 && end != cli->chip && *end == '\0' && v > 0 && v < 100000)
		value = (int)v;
	else if (lm_family_value(cli->chip, &value) != 0)
		return lm_cli_usage_error(cli, "--chip: %s", lm_error_last()->message);
	if (value < 1001 || value > 1999)
		return lm_cli_usage_error(cli, "--chip: expected an Apple family such as Apple7 (M1) or Apple9 (M3, M4), "
		    "found '%s'", cli->chip);
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
	lm_cli_printf(stdout, "%-16s %-16s %-12s %s\n", "NAME", "CEILING", "THREADGROUP", "VALIDATED");
	for (i = 0; i < lm_profile_builtin_count(); i++) {
		const char *name = lm_profile_builtin_name(i);
		const lm_profile_capabilities *caps;

		if (lm_profile_builtin(&p, name) != 0)
			return lm_cli_fail(cli, LM_EXIT_FAILURE);
		caps = lm_profile_caps(p);
		lm_family_label(caps->apple_family_max, fam, sizeof(fam));
		lm_cli_printf(stdout, "%-16s %-16s %-12" PRIu64 " ", name, fam, caps->max_threadgroup_memory);
		if (lm_profile_validation_get(p, 0, &v) == 0)
			lm_cli_printf(stdout, "yes (%s, host %s, guest %s%s)\n", v.chip, v.host_os, v.guest_os,
			    lm_profile_validation_count(p) > 1 ? ", ..." : "");
		else
			lm_cli_printf(stdout, "no\n");
		lm_profile_free(p);
	}
	lm_error_clear();
	lm_cli_printf(stdout, "\ndefault: %s (lume-metal profile show NAME for details)\n", dflt);
	return LM_EXIT_OK;
}

static void print_pref_value(const lm_pref_value *v)
{
	if (v->type == LM_PREF_BOOL)
		lm_cli_printf(stdout, "%s (bool)\n", v->boolean ? "true" : "false");
	else if (v->type == LM_PREF_INTEGER)
		lm_cli_printf(stdout, "%lld (integer)\n", v->integer);
	else
		lm_cli_printf(stdout, "\"%s\" (string)\n", v->string);
}

static void print_expectation(const lm_profile_expectation *e)
{
	char fam[48];

	lm_cli_printf(stdout, "  %-8s ", e->shimmed ? "shimmed:" : "stock:");
	switch (e->kind) {
	case LM_EXPECT_FAMILY:
		lm_cli_printf(stdout, "%s answered %s\n", lm_family_label(e->family, fam, sizeof(fam)), e->value ? "true" : "false");
		break;
	case LM_EXPECT_MIN_THREADGROUP_MEMORY:
		lm_cli_printf(stdout, "max threadgroup memory at least %" PRIu64 " bytes\n", e->value);
		break;
	case LM_EXPECT_MIN_WORKING_SET_SIZE:
		lm_cli_printf(stdout, "recommended working set at least %" PRIu64 " bytes (%.1f GiB)\n", e->value,
		    (double)e->value / (1024.0 * 1024.0 * 1024.0));
		break;
	case LM_EXPECT_SHIM_ACTIVE:
		lm_cli_printf(stdout, "shim %s\n", e->value ? "active" : "not active");
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

	lm_cli_printf(stdout, "profile: %s%s\n", lm_profile_name(p), is_builtin(arg) ?
	    (strcmp(arg, lm_profile_default_name()) == 0 ? " (built-in, default)" : " (built-in)") : "");
	if (!is_builtin(arg))
		lm_cli_printf(stdout, "file: %s\n", arg);
	lm_cli_printf(stdout, "description: %s\n", lm_profile_description(p));
	lm_cli_printf(stdout, "capabilities:\n  Apple family ceiling: %s\n", lm_family_label(caps->apple_family_max, buf, sizeof(buf)));
	lm_cli_printf(stdout, "  max threadgroup memory: at least %" PRIu64 " bytes\n", caps->max_threadgroup_memory);
	if (caps->has_recommended_working_set_size)
		lm_cli_printf(stdout, "  recommended working set: at least %" PRIu64 " bytes (%.1f GiB)\n", caps->recommended_working_set_size,
		    (double)caps->recommended_working_set_size / (1024.0 * 1024.0 * 1024.0));
	else
		lm_cli_printf(stdout, "  recommended working set: unchanged\n");
	lm_cli_printf(stdout, "host preference: %s %s = ", pref->domain, pref->key);
	print_pref_value(&pref->value);
	lm_cli_printf(stdout, "shim environment:\n");
	lm_profile_render_env(p, env, &n);
	for (i = 0; i < n; i++)
		lm_cli_printf(stdout, "  %s=%s\n", env[i].name, env[i].value);
	lm_cli_printf(stdout, "expectations:\n");
	n = lm_profile_expectation_count(p);
	if (n == 0)
		lm_cli_printf(stdout, "  none\n");
	for (i = 0; i < n; i++)
		if (lm_profile_expectation_get(p, i, &e) == 0)
			print_expectation(&e);
	lm_cli_printf(stdout, "validated on:\n");
	if (!lm_profile_validated(p))
		lm_cli_printf(stdout, "  not yet validated\n");
	for (i = 0; lm_profile_validation_get(p, i, &v) == 0; i++) {
		lm_cli_printf(stdout, "  %s, host %s, guest %s:", v.chip, v.host_os, v.guest_os);
		for (j = 0; j < v.workload_count; j++)
			lm_cli_printf(stdout, "%s %s", j ? "," : "", v.workloads[j]);
		lm_cli_printf(stdout, "\n    evidence: %s\n", v.evidence);
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
		lm_cli_printf(stdout, "profile %s (%s): valid\n", lm_profile_name(p), arg);
		lm_cli_printf(stdout, "llama.cpp on the paravirtual device (stock -> with this profile):\n");
		for (i = 0; i < 4; i++)
			lm_cli_printf(stdout, "  %-26s %-3s -> %s\n", llama_labels[i][1], llama_flag(&r.stock, i) ? "on" : "off",
			    llama_flag(&r.shimmed, i) ? "on" : "off");
		for (k = 0; k < r.count; k++)
			if (r.items[k].level == LM_LINT_NOTE)
				lm_cli_printf(stdout, "note: %s\n", r.items[k].message);
		for (k = 0; k < r.count; k++)
			if (r.items[k].level == LM_LINT_WARNING)
				lm_cli_printf(stdout, "warning: %s\n", r.items[k].message);
		lm_cli_printf(stdout, "%zu warning%s\n", r.warnings, r.warnings == 1 ? "" : "s");
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
	return lm_cli_unknown_subcommand(cli, "profile", sub);
}
