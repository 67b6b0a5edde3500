/* lume-metal bench VM [--profile P] [--repetitions N] [--out DIR] [--workload-parser P]
 * [--ablate-host-preference] -- CMD...: the workload stock and shimmed, interleaved, recorded as an
 * evidence folder (docs/bench.md); lume-metal bench compare [--markdown] [--svg FILE] [--matrix]
 * DIR...: folders side by side with the published figures, their charts, the compatibility matrix. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

/* The comparison as a table: a column per figure, "-" where there is none. */
static void print_comparison(const lm_bench_comparison *c)
{
	size_t i;

	lm_cli_printf(stdout, "%-28s %-18s %-20s %-14s %12s %12s %12s %12s %12s\n", "source", "vm / workload", "llama.cpp",
	    "test", "stock", "unlocked", "unl./stock", "bare metal", "unl./bare");
	for (i = 0; i < c->count; i++) {
		const lm_bench_comparison_row *row = c->rows[i];
		const double v[] = {row->stock, row->unlocked, row->unlocked_over_stock, row->bare_metal,
		    row->unlocked_over_bare_metal};
		const int ratio[] = {0, 0, 1, 0, 1};
		size_t k;

		lm_cli_printf(stdout, "%-28s %-18s %-20s %-14s", row->source, row->vm,
		    row->llama_build != NULL ? row->llama_build : "not recorded", row->test);
		for (k = 0; k < sizeof(v) / sizeof(v[0]); k++) {
			if (!(v[k] > 0))
				lm_cli_printf(stdout, " %12s", "-");
			else if (ratio[k])
				lm_cli_printf(stdout, " %11.2fx", v[k]);
			else
				lm_cli_printf(stdout, " %12.2f", v[k]);
		}
		lm_cli_printf(stdout, "%s%s\n", row->note != NULL && row->kind != LM_BENCH_ROW_PUBLISHED ? "  " : "",
		    row->note != NULL && row->kind != LM_BENCH_ROW_PUBLISHED ? row->note : "");
	}
	lm_cli_printf(stdout, "\npublished figures (medians of samples_ts, M1 Ultra host, macOS guest; not proven by "
	    "activation records):\n");
	for (i = 0; i < c->count; i++)
		if (c->rows[i]->kind == LM_BENCH_ROW_PUBLISHED)
			lm_cli_printf(stdout, "  %s %s: %s\n", c->rows[i]->vm, c->rows[i]->test, c->rows[i]->provenance);
}

static int compare(lm_cli *cli)
{
	lm_bench_comparison *c = NULL;
	lm_json_envelope env;
	char *doc = NULL;
	int rc;

	cli->json_command = "bench compare";
	if (cli->argc < 2)
		return lm_cli_usage_error(cli, "bench compare: lume-metal bench compare [--markdown] [--svg FILE] [--matrix] "
		    "DIR [DIR...]");
	if (cli->matrix && (cli->json || cli->markdown || cli->svg_file != NULL))
		return lm_cli_usage_error(cli, "bench compare --matrix: prints Markdown only (no --format json, --markdown "
		    "or --svg with it)");
	if (cli->markdown && cli->json)
		return lm_cli_usage_error(cli, "bench compare: --markdown or --format json, not both");
	if (cli->matrix) {
		if (lm_bench_matrix_markdown((const char *const *)cli->argv + 1, (size_t)cli->argc - 1, &doc) < 0)
			return lm_cli_fail(cli, LM_EXIT_FAILURE);
		lm_cli_printf(stdout, "%s", doc);
		lm_free(doc);
		return LM_EXIT_OK;
	}
	if (lm_bench_compare((const char *const *)cli->argv + 1, (size_t)cli->argc - 1, &c) < 0)
		return lm_cli_fail(cli, LM_EXIT_FAILURE);
	if (cli->svg_file != NULL && lm_bench_compare_svg(c, cli->svg_file) < 0) {
		lm_bench_comparison_free(c);
		return lm_cli_fail(cli, LM_EXIT_FAILURE);
	}
	if (cli->markdown) {
		if (lm_bench_compare_markdown(c, &doc) < 0) {
			lm_bench_comparison_free(c);
			return lm_cli_fail(cli, LM_EXIT_FAILURE);
		}
		lm_cli_printf(stdout, "%s", doc);
		lm_free(doc);
	} else if (cli->json) {
		env = lm_cli_envelope(cli, LM_EXIT_OK, 0, NULL);
		rc = lm_bench_compare_to_json(c, &env, &doc);
		lm_cli_print_document(cli, rc, doc);
	} else {
		print_comparison(c);
	}
	lm_bench_comparison_free(c);
	return LM_EXIT_OK;
}

static void print_result(const lm_bench_result *r)
{
	const int wall = r->parser == LM_BENCH_PARSER_NONE;
	size_t i;

	lm_cli_printf(stdout, "%s: %d rounds, %s, llama.cpp %s\n", r->vm, r->rounds, r->bare_metal ?
	    "on this host (bare metal)" : "stock and shimmed interleaved", r->llama_build[0] ? r->llama_build :
	    wall ? "(no llama-bench parser)" : "build not printed");
	if (r->bare_metal) {
		/* One arm: no shimmed column, no unlock to speak of. */
		lm_cli_printf(stdout, "  %-20s %14s\n", "test", wall ? "host s" : "host t/s");
		for (i = 0; i < r->ntests; i++)
			lm_cli_printf(stdout, "  %-20s %14.2f\n", r->tests[i]->name, r->tests[i]->stock_median);
		lm_cli_printf(stdout, "record: %s (check it: sha256sum -c SHA256SUMS)\n", r->dir);
		return;
	}
	lm_cli_printf(stdout, "  %-20s %14s %14s %10s\n", "test", wall ? "stock s" : "stock t/s",
	    wall ? "shimmed s" : "shimmed t/s", wall ? "speed-up" : "ratio");
	for (i = 0; i < r->ntests; i++)
		lm_cli_printf(stdout, "  %-20s %14.2f %14.2f %9.2fx\n", r->tests[i]->name, r->tests[i]->stock_median,
		    r->tests[i]->shimmed_median, r->tests[i]->ratio);
	if (r->ablation)
		lm_cli_printf(stdout, "  (the last arm's figures; %s/README.md has both)\n  host preference needed: %s\n",
		    r->dir, r->preference_needed > 0 ? "yes (the kernels failed with it off and ran with it on)" :
		    r->preference_needed == 0 ? "no (the kernels ran with it off)" : "not told (an arm failed)");
	if (r->stock_metal->found || r->shimmed_metal->found)
		lm_cli_printf(stdout, "  llama.cpp's kernel choice: %s\n", r->kernel_choice_changed ?
		    "changed by the unlock (see README.md)" : "the same in both arms");
	lm_cli_printf(stdout, "record: %s (check it: sha256sum -c SHA256SUMS)\n", r->dir);
}

int lm_cmd_bench(lm_cli *cli)
{
	lm_context *ctx = NULL;
	lm_bench_options o;
	lm_bench_result *r = NULL;
	lm_json_envelope env;
	char deflt[256], stamp[32], *doc = NULL;
	time_t now = time(NULL);
	struct tm tm;
	int rc, exit_code;

	if (cli->argc >= 1 && strcmp(cli->argv[0], "compare") == 0 && cli->cmd_argc == 0)
		return compare(cli);
	if (cli->argc != (cli->bare_metal ? 0 : 1) || cli->cmd_argc == 0)
		return lm_cli_usage_error(cli, "bench: lume-metal bench VM [--repetitions N] [--out DIR] -- llama-bench "
		    "ARGS..., bench --bare-metal -- llama-bench ARGS..., or bench compare DIR...");
	if (cli->ablate && cli->bare_metal)
		return lm_cli_usage_error(cli, "bench: --ablate-host-preference needs a VM (no host preference on bare metal)");
	memset(&o, 0, sizeof(o));
	o.vm = cli->bare_metal ? NULL : cli->argv[0];
	o.bare_metal = cli->bare_metal;
	o.argv = (const char *const *)cli->cmd_argv;
	o.argc = (size_t)cli->cmd_argc;
	o.rounds = cli->repetitions;
	o.parser = cli->workload_parser;
	o.profile = cli->profile;
	o.out_dir = cli->out_dir;
	if (o.out_dir == NULL) {
		if (gmtime_r(&now, &tm) == NULL || strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm) == 0)
			snprintf(stamp, sizeof(stamp), "now");
		snprintf(deflt, sizeof(deflt), "lume-metal-bench-%.100s-%s", cli->bare_metal ? "host" : cli->argv[0], stamp);
		o.out_dir = deflt;
	}
	if ((rc = lm_cli_context(cli, &ctx)) != 0)
		return rc;
	lm_cli_trap_signals();
	rc = cli->ablate ? lm_bench_run_ablation(ctx, &o, &r) : lm_bench_run(ctx, &o, &r);
	lm_context_free(ctx);
	exit_code = rc < 0 ? LM_EXIT_FAILURE : LM_EXIT_OK;
	if (rc < 0 && (r == NULL || r->dir == NULL)) {
		exit_code = lm_cli_fail(cli, rc == LM_EINVALID ? LM_EXIT_USAGE : LM_EXIT_FAILURE);
	} else if (cli->json) {
		const lm_error *e = lm_error_last();
		env = lm_cli_envelope(cli, exit_code, rc < 0 ? e->code : 0, rc < 0 ? e->message : NULL);
		int jrc = lm_bench_result_to_json(r, &env, &doc);
		lm_cli_print_document(cli, jrc, doc);
		if (rc < 0)
			lm_cli_printf(stderr, "lume-metal: %s\n", e->message);
	} else {
		print_result(r);
		if (rc < 0)
			exit_code = lm_cli_fail(cli, LM_EXIT_FAILURE);
	}
	lm_bench_result_free(r);
	return exit_code;
}
