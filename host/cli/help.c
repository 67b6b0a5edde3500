/* Help on one command (`lume-metal help CMD`, `lume-metal CMD --help`) and the nearest command to a
 * mistyped one. The usage lines and summaries are options.c's; this adds which options each
 * command takes, so that its help lists them with their text from the one option table. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The options a command takes besides the ones every command takes (listed after them). */
static const struct {
	const char *command;
	const char *options;
} command_options[] = {
	{"enable", "profile jobs dry-run keep-host boot-margin timeout force-user-mismatch no-wait bundle"},
	{"status", "boot-margin"},
	{"probe", "exercise no-wait"},
	{"run", "no-wait require-shim run-hardened-stock"},
	{"rollback", "all no-restart restore-host dry-run force timeout no-wait"},
	{"profile", "host"},
	{"host", "keep dry-run force force-user-mismatch"},
	{"forget-host", ""},
	{"gc", "dry-run"},
	{"bench", "profile repetitions out workload-parser bare-metal no-wait"},
	{"agent", "label keep-alive run-at-load run-hardened-stock profile dry-run no-wait"},
	{"doctor", "bundle"},
	{"help", ""},
	{"completion", ""},
};

/* What every command that reaches the host or a VM takes. */
static const char common_options[] = "format quiet verbose state-dir prefs-dir vm-manager lume-url lume tart utmctl "
    "host ssh-user ssh-key ssh-password-file host-key-policy connect-timeout help";

/* Commands people reach for by another name. */
static const struct {
	const char *word, *command;
} aliases[] = {
	{"disable", "rollback"}, {"undo", "rollback"}, {"remove", "rollback"}, {"uninstall", "rollback"},
	{"off", "rollback"}, {"reset", "rollback"}, {"ls", "status"}, {"list", "status"}, {"info", "status"},
	{"show", "status"}, {"on", "enable"}, {"install", "enable"}, {"unlock", "enable"}, {"exec", "run"},
	{"check", "doctor"}, {"diagnose", "doctor"}, {"test", "probe"}, {"agents", "agent"},
};

/* The command word of usage line i ("agent install|remove|list VM ..." -> "agent"). */
static size_t command_word(const char *usage)
{
	return strcspn(usage, " ");
}

static int has_word(const char *list, const char *word, size_t n)
{
	const char *p = list;

	while (*p != '\0') {
		size_t len = strcspn(p, " ");
		if (len == n && strncmp(p, word, n) == 0)
			return 1;
		p += len;
		p += strspn(p, " ");
	}
	return 0;
}

/* Levenshtein distance, capped: anything beyond `cap` is cap + 1. */
static size_t distance(const char *a, const char *b, size_t cap)
{
	size_t la = strlen(a), lb = strlen(b), i, j, *row, best, d;

	if (la > lb + cap || lb > la + cap)
		return cap + 1;
	if ((row = malloc((lb + 1) * sizeof(*row))) == NULL)
		return cap + 1;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		best = row[0];
		for (j = 1; j <= lb; j++) {
			size_t up = row[j];
			d = diag + (a[i - 1] != b[j - 1]);
			if (row[j] + 1 < d)
				d = row[j] + 1;
			if (row[j - 1] + 1 < d)
				d = row[j - 1] + 1;
			row[j] = d;
			diag = up;
			if (d < best)
				best = d;
		}
		if (best > cap) {
			free(row);
			return cap + 1;
		}
	}
	d = row[lb];
	free(row);
	return d > cap ? cap + 1 : d;
}

const char *lm_cli_nearest_command(const char *word)
{
	static _Thread_local char found[32];
	const char *usage, *best = NULL;
	size_t i, n, d, best_d = 3, wl = strlen(word);

	for (i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (strcmp(word, aliases[i].word) == 0)
			return aliases[i].command;
	if (wl == 0)
		return NULL;
	/* A prefix ("stat") or a typo within two edits ("enabel"), the closest first. */
	for (i = 0; (usage = lm_cli_command_at(i, NULL)) != NULL; i++) {
		n = command_word(usage);
		if (n >= sizeof(found))
			continue;
		memcpy(found, usage, n);
		found[n] = '\0';
		d = wl >= 3 && wl < n && strncmp(found, word, wl) == 0 ? 1 : distance(word, found, 2);
		/* Fewer edits than either word has letters: "e" is not a typo of "gc". */
		if (d < best_d && d < wl && d < n) {
			best_d = d;
			best = usage;
		}
	}
	if (best == NULL)
		return NULL;
	n = command_word(best);
	memcpy(found, best, n);
	found[n] = '\0';
	return found;
}

static void option_line(FILE *out, const char *name, size_t n)
{
	const char *o, *arg, *help;
	char left[64];
	size_t i;

	for (i = 0; (o = lm_cli_option_at(i, &arg, &help)) != NULL; i++) {
		if (strlen(o) != n || strncmp(o, name, n) != 0)
			continue;
		snprintf(left, sizeof(left), "--%s%s%s", o, arg ? " " : "", arg ? arg : "");
		fprintf(out, "  %-34s %s\n", left, help);
	}
}

static void option_lines(FILE *out, const char *list)
{
	const char *p = list;

	while (*p != '\0') {
		size_t len = strcspn(p, " ");
		option_line(out, p, len);
		p += len;
		p += strspn(p, " ");
	}
}

int lm_cli_command_help(lm_cli *cli, const char *command, FILE *out)
{
	const char *usage, *summary, *near;
	size_t i, k;

	for (i = 0; (usage = lm_cli_command_at(i, &summary)) != NULL; i++) {
		if (command_word(usage) != strlen(command) || strncmp(usage, command, strlen(command)) != 0)
			continue;
		fprintf(out, "usage: lume-metal %s [OPTIONS]\n\n%s\n", usage, summary);
		for (k = 0; k < sizeof(command_options) / sizeof(command_options[0]); k++)
			if (strcmp(command_options[k].command, command) == 0 && command_options[k].options[0] != '\0') {
				fprintf(out, "\nOptions:\n");
				option_lines(out, command_options[k].options);
			}
		fprintf(out, "\nCommon options:\n");
		option_lines(out, common_options);
		fprintf(out, "\nAll commands, exit codes: lume-metal --help; details: docs/lume-metal.md, man lume-metal.\n");
		return 0;
	}
	near = lm_cli_nearest_command(command);
	if (near != NULL)
		return lm_cli_usage_error(cli, "unknown command '%s'; did you mean '%s'? (lume-metal help %s)", command,
		    near, near);
	return lm_cli_usage_error(cli, "unknown command '%s' (lume-metal --help lists them)", command);
}

int lm_cmd_help(lm_cli *cli)
{
	if (cli->argc == 0) {
		lm_cli_usage(stdout);
		return LM_EXIT_OK;
	}
	if (cli->argc > 1)
		return lm_cli_usage_error(cli, "help: name one command (lume-metal help COMMAND)");
	return lm_cli_command_help(cli, cli->argv[0], stdout);
}

/* Whether `option` (without --) is one the command takes: its own or a common one. */
int lm_cli_command_takes(const char *command, const char *option)
{
	size_t k, n = strlen(option);

	if (has_word(common_options, option, n))
		return 1;
	for (k = 0; k < sizeof(command_options) / sizeof(command_options[0]); k++)
		if (strcmp(command_options[k].command, command) == 0)
			return has_word(command_options[k].options, option, n);
	return 1;
}
