/* lume-metal probe VM [--exercise]: the stock vs shimmed table, and the (last) exercise results. */
#include "cli.h"

static const char *yn(int v)
{
	return v ? "yes" : "no";
}

/* A working set (bytes, tens of GB on a Mac) in the table's column: "16.0 GiB", as Activity
 * Monitor and `top` give memory; "-" when the device reported none. */
static void gib(char *buf, size_t size, uint64_t bytes)
{
	if (bytes == 0)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%.1f GiB", (double)bytes / (1024.0 * 1024.0 * 1024.0));
}

void lm_cli_probe_table(const lm_cli *cli, const lm_vm_outcome *o)
{
	char stock_ws[32], shim_ws[32];
	const lm_family *fam;
	size_t n, i;
	int a, b, c;

	lm_cli_printf(stdout, "%s: %s (%s)\n", o->vm, lm_report_device(o->stock), o->guest.os_version);
	/* A Tart image's own shim, as its README enables it (the image enables it nowhere), is a third
	 * column. */
	lm_cli_printf(stdout, "  %-30s %-10s %-10s%s\n", "", "stock", "shimmed", o->tart != NULL ? " tart-image" : "");
	fam = lm_family_table(&n);
	for (i = 0; i < n; i++) {
		if (lm_report_family(o->stock, fam[i].value, &a) < 0 || lm_report_family(o->shimmed, fam[i].value, &b) < 0)
			continue;
		if (o->tart != NULL && lm_report_family(o->tart, fam[i].value, &c) == 0)
			lm_cli_printf(stdout, "  %-30s %-10s %-10s %-10s%s\n", fam[i].name, yn(a), yn(b), yn(c),
			    a != b ? "  *" : "");
		else
			lm_cli_printf(stdout, "  %-30s %-10s %-10s%s\n", fam[i].name, yn(a), yn(b), a != b ? "  *" : "");
	}
	if (o->tart != NULL)
		lm_cli_printf(stdout, "  %-30s %-10llu %-10llu %-10llu\n", "max threadgroup memory (tart)",
		    (unsigned long long)lm_report_max_threadgroup_memory(o->stock),
		    (unsigned long long)lm_report_max_threadgroup_memory(o->shimmed),
		    (unsigned long long)lm_report_max_threadgroup_memory(o->tart));
	lm_cli_printf(stdout, "  %-30s %-10llu %-10llu\n", "max threadgroup memory",
	    (unsigned long long)lm_report_max_threadgroup_memory(o->stock),
	    (unsigned long long)lm_report_max_threadgroup_memory(o->shimmed));
	gib(stock_ws, sizeof(stock_ws), lm_report_recommended_working_set_size(o->stock));
	gib(shim_ws, sizeof(shim_ws), lm_report_recommended_working_set_size(o->shimmed));
	lm_cli_printf(stdout, "  %-30s %-10s %-10s\n", "recommended working set", stock_ws, shim_ws);
	lm_cli_printf(stdout, "  %-30s %-10s %-10s\n", "unified memory", yn(lm_report_unified_memory(o->stock)),
	    yn(lm_report_unified_memory(o->shimmed)));
	/* The line that says whether the unlock took: coloured ok or fail. */
	lm_cli_printf(stdout, "  %-30s %-10s ", "shim active", yn(lm_report_shim_active(o->stock)));
	lm_cli_word(stdout, cli, lm_report_shim_active(o->shimmed) ? LM_CLI_OK : LM_CLI_FAIL,
	    yn(lm_report_shim_active(o->shimmed)), 0);
	lm_cli_puts(stdout, "\n");
	lm_cli_printf(stdout, "  %-30s %-10s %-10s\n", "llama.cpp simdgroup reduction", yn(o->stock_flags.llama_simdgroup_reduction),
	    yn(o->shimmed_flags.llama_simdgroup_reduction));
	lm_cli_printf(stdout, "  %-30s %-10s %-10s\n", "llama.cpp simdgroup matmul", yn(o->stock_flags.llama_simdgroup_mm),
	    yn(o->shimmed_flags.llama_simdgroup_mm));
	lm_cli_printf(stdout, "  %-30s %-10s %-10s\n", "llama.cpp bfloat16", yn(o->stock_flags.llama_bfloat16),
	    yn(o->shimmed_flags.llama_bfloat16));
	lm_cli_printf(stdout, "  %-30s %-10s %-10s\n", "llama.cpp tensor API", yn(o->stock_flags.llama_tensor),
	    yn(o->shimmed_flags.llama_tensor));
	lm_cli_printf(stdout, "  %-30s %-10s %-10s\n", "MLX residency-set risk", yn(o->stock_flags.mlx_residency_risk),
	    yn(o->shimmed_flags.mlx_residency_risk));
	if (o->exercised != NULL)
		lm_cli_exercise_lines(cli, stdout, "  ", "exercise", o->exercised, o->guest.os_version);
	else
		lm_cli_printf(stdout, "  exercise: never run (lume-metal probe %s --exercise)\n", o->vm);
}

int lm_cmd_probe(lm_cli *cli)
{
	lm_context *ctx = NULL;
	lm_flow_result *result = NULL;
	int rc, exit_code;

	if (cli->argc != 1)
		return lm_cli_usage_error(cli, "probe: name exactly one VM (lume-metal probe VM)");
	if ((rc = lm_cli_context(cli, &ctx)) != 0)
		return rc;
	rc = cli->exercise ? lm_flow_probe_exercise(ctx, cli->argv[0], &result) : lm_flow_probe(ctx, cli->argv[0], &result);
	if (rc < 0 && (result == NULL || result->count == 0)) {
		exit_code = lm_cli_fail(cli, rc == LM_EINVALID ? LM_EXIT_USAGE : LM_EXIT_FAILURE);
	} else {
		exit_code = lm_cli_flow_exit(result);
		if (cli->json || rc < 0)
			lm_cli_flow_print(cli, result, exit_code);
		else
			lm_cli_probe_table(cli, result->vms[0]);
	}
	lm_flow_result_free(result);
	lm_context_free(ctx);
	return exit_code;
}
