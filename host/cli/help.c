/* Help for people: the overview (`lume-metal --help`), the common options once (`lume-metal help
 * options`), each command's own options and examples (`lume-metal help CMD`, `lume-metal CMD
 * --help`), all wrapped to the terminal's width; and the nearest command or option to a mistyped
 * one. The usage lines, summaries and option texts are options.c's; this adds which options each
 * command takes and its examples, so that nothing is written twice. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The options a command takes besides the ones every command takes (listed after them). */
static const struct {
	const char *command;
	const char *options;
} command_options[] = {
	{"enable", "profile jobs dry-run keep-host boot-margin timeout force-user-mismatch no-wait bundle"},
	{"status", "long boot-margin"},
	{"probe", "exercise no-wait"},
	{"run", "no-wait require-shim run-hardened-stock interactive tty"},
	{"rollback", "all no-restart restore-host dry-run force timeout no-wait"},
	{"profile", "chip"},
	{"host", "keep dry-run force force-user-mismatch"},
	{"forget-host", ""},
	{"gc", "dry-run"},
	{"bench", "profile repetitions out workload-parser bare-metal no-wait"},
	{"agent", "label keep-alive run-at-load run-hardened-stock profile dry-run no-wait"},
	{"doctor", "bundle"},
	{"help", ""},
	{"completion", ""},
	{"local", "exercise require-exercise profile label keep-alive run-at-load run-hardened-stock require-shim bundle prefix github-env record-dir"},
};

/* Examples: the command word, the command line, what it does. The man page lists them all. */
static const struct {
	const char *command, *line, *what;
} examples[] = {
	{"enable", "lume-metal enable my-vm", "Unlock one VM with the default profile and prove it."},
	{"enable", "lume-metal enable vm1 vm2 --jobs 2 --format json", "A fleet, two at a time; one JSON document "
	    "(each VM with its own result and hint)."},
	{"enable", "lume-metal enable ci-runner --keep-host", "A CI job: keep the host unlocked for the next job's VM."},
	{"status", "lume-metal status", "The host preference and every VM lume-metal enabled."},
	{"status", "lume-metal status my-vm --format json", "One VM, for a script."},
	{"status", "lume-metal status vm1 vm2 vm3 --long", "Several VMs, each in detail rather than a row each."},
	{"probe", "lume-metal probe my-vm --exercise", "Stock vs shimmed answers, and whether the unlocked kernels run."},
	{"run", "lume-metal run my-vm -- llama-bench -m model.gguf", "One workload with the shim; its exit status "
	    "is lume-metal's."},
	{"run", "lume-metal run my-vm -- python3 - < job.py", "stdin goes to the workload, closed at its end."},
	{"run", "lume-metal run -t my-vm -- top", "A pseudo-terminal with this window's size; keys go to the guest."},
	{"bench", "lume-metal bench my-vm -- llama-bench -m model.gguf", "Stock vs shimmed runs as an evidence folder."},
	{"bench", "lume-metal bench compare DIR1 DIR2", "Two evidence folders side by side."},
	{"rollback", "lume-metal rollback my-vm", "Remove the guest files; the preference is restored after the last VM."},
	{"rollback", "lume-metal rollback --all --restore-host", "Everything, and the host preference even when kept."},
	{"profile", "lume-metal profile list", "The built-in profiles."},
	{"profile", "lume-metal profile lint my-profile.json --chip Apple7", "A profile's effect and warnings on an M1 host."},
	{"host", "lume-metal host status", "The preference: value, who changed it, what it was before."},
	{"host", "lume-metal host enable --keep", "Unlock the host for a fleet until host disable."},
	{"forget-host", "lume-metal forget-host ci-runner-1", "Forget a re-created VM's old SSH host key."},
	{"gc", "lume-metal gc --dry-run", "Which deleted VMs' records and pins would be forgotten."},
	{"agent", "lume-metal agent install my-vm --label com.example.llama-server --keep-alive -- llama-server "
	    "--port 8080", "A server kept running by launchd with the shim."},
	{"agent", "lume-metal agent remove my-vm --label com.example.llama-server", "Stop and remove it (done "
	    "already when it is not there)."},
	{"doctor", "lume-metal doctor my-vm", "Check the host and the VM, with what to do."},
	{"help", "lume-metal help options", "The options every command takes."},
	{"completion", "lume-metal completion bash > /etc/bash_completion.d/lume-metal", "Install bash completion."},
	{"local", "lume-metal local probe --exercise --format json", "On a hosted macOS runner: does the shim unlock "
	    "this machine's GPU, and do the kernels run?"},
	{"local", "lume-metal local run -- llama-bench -m model.gguf", "One workload here with the shim."},
	{"completion", "lume-metal completion fish > ~/.config/fish/completions/lume-metal.fish", "Install fish "
	    "completion."},
	{"local", "sudo lume-metal local install", "In an image build (Packer, Tart): the bundle into "
	    "/usr/local/lib/lume-metal, verified."},
	{"local", "lume-metal local env --github-env >> \"$GITHUB_ENV\"", "A job step: later steps run their "
	    "workloads with the installed shim."},
};

const char *lm_cli_example_at(size_t i, const char **command, const char **what)
{
	if (i >= sizeof(examples) / sizeof(examples[0]))
		return NULL;
	if (command != NULL)
		*command = examples[i].command;
	if (what != NULL)
		*what = examples[i].what;
	return examples[i].line;
}

/* What every command that reaches the host or a VM takes. */
static const char common_options[] = "format quiet verbose color state-dir prefs-dir vm-manager lume-url lume tart "
    "utmctl address ssh-user ssh-key ssh-password-file host-key-policy connect-timeout help";

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

/* The nearest option to an unknown one: a typo within two edits, or the one option a prefix
 * starts ("--dry" is getopt's own abbreviation; "--dryrun" is a typo). */
const char *lm_cli_nearest_option(const char *arg)
{
	static _Thread_local char found[48];
	const char *o, *best = NULL;
	size_t i, d, best_d = 3, n;
	char word[48];

	if (strncmp(arg, "--", 2) != 0)
		return NULL;
	arg += 2;
	n = strcspn(arg, "=");
	if (n == 0 || n >= sizeof(word))
		return NULL;
	memcpy(word, arg, n);
	word[n] = '\0';
	for (i = 0; (o = lm_cli_option_at(i, NULL, NULL)) != NULL; i++) {
		d = distance(word, o, 2);
		if (d < best_d && d < n && d < strlen(o)) {
			best_d = d;
			best = o;
		}
	}
	if (best == NULL)
		return NULL;
	snprintf(found, sizeof(found), "%s", best);
	return found;
}

/* Words of text onto lines of at most `width` columns, the first after `left` (padded to
 * `column`), the others indented to `column`; a word longer than a line stands alone. */
static void wrap_at(FILE *out, int width, size_t column, const char *left, const char *text)
{
	size_t room = width > (int)column + 20 ? (size_t)width - column : 20, used = 0, n;
	size_t lead = strlen(left);

	if (lead > 0 && lead >= column) { /* a long left column: the text starts on the next line */
		if (lead <= (size_t)width)
			lm_cli_printf(out, "%s\n", left);
		else /* longer than the line itself: wrapped too */
			wrap_at(out, width, 2, "", left);
		lead = 0;
		left = "";
	}
	lm_cli_printf(out, "%s%*s", left, (int)(column - lead), "");
	while (*text != '\0') {
		text += strspn(text, " ");
		n = strcspn(text, " ");
		if (n == 0)
			break;
		if (used > 0 && used + 1 + n > room) {
			lm_cli_printf(out, "\n%*s", (int)column, "");
			used = 0;
		}
		lm_cli_printf(out, "%s%.*s", used > 0 ? " " : "", (int)n, text);
		used += (used > 0) + n;
		text += n;
	}
	fputc('\n', out);
}

void lm_cli_wrap(FILE *out, int width, const char *left, const char *text)
{
	/* Two columns when the line is wide enough for both; else the text under its heading. */
	wrap_at(out, width, width >= 100 ? 36 : width >= 72 ? 28 : 6, left, text);
}

static void option_line(FILE *out, int width, const char *name, size_t n)
{
	const char *o, *arg, *help, *env;
	char left[96], text[1024];
	size_t i;

	for (i = 0; (o = lm_cli_option_at(i, &arg, &help)) != NULL; i++) {
		if (strlen(o) != n || strncmp(o, name, n) != 0)
			continue;
		snprintf(left, sizeof(left), "  --%s%s%s", o, arg ? " " : "", arg ? arg : "");
		env = lm_cli_option_env(i);
		snprintf(text, sizeof(text), "%s%s%s%s", help, env ? " [env " : "", env ? env : "", env ? "]" : "");
		lm_cli_wrap(out, width, left, text);
	}
}

static void option_lines(FILE *out, int width, const char *list)
{
	const char *p = list;

	while (*p != '\0') {
		size_t len = strcspn(p, " ");
		option_line(out, width, p, len);
		p += len;
		p += strspn(p, " ");
	}
}

static void example_lines(FILE *out, int width, const char *command)
{
	const char *line, *cmd, *what;
	size_t i;
	int any = 0;

	for (i = 0; (line = lm_cli_example_at(i, &cmd, &what)) != NULL; i++) {
		if (command != NULL && strcmp(cmd, command) != 0)
			continue;
		if (!any++)
			lm_cli_printf(out, "\nExamples:\n");
		wrap_at(out, width, 4, "", line);
		wrap_at(out, width, 6, "", what);
	}
}

void lm_cli_usage(FILE *out)
{
	int width = lm_cli_term_width();
	const char *usage, *summary, *code;
	char left[96];
	size_t i;

	wrap_at(out, width, 7, "usage:", "lume-metal COMMAND [ARGS] [OPTIONS]");
	lm_cli_printf(out, "\nCommands:\n");
	for (i = 0; (usage = lm_cli_command_at(i, &summary)) != NULL; i++) {
		snprintf(left, sizeof(left), "  %s", usage);
		lm_cli_wrap(out, width, left, summary);
	}
	lm_cli_printf(out, "\nOptions:\n");
	lm_cli_wrap(out, width, "  lume-metal help options", "The options every command takes (output format, colour, "
	    "state directory, VM manager, SSH).");
	lm_cli_wrap(out, width, "  lume-metal help COMMAND", "A command's own options and examples.");
	lm_cli_wrap(out, width, "  --version, --man", "The version; the man page (roff).");
	lm_cli_printf(out, "\nExit codes:\n");
	for (i = 0; (code = lm_cli_exit_at(i, &summary)) != NULL; i++) {
		snprintf(left, sizeof(left), "  %s", code);
		lm_cli_wrap(out, width, left, summary);
	}
	example_lines(out, width, "enable");
	lm_cli_printf(out, "\n");
	wrap_at(out, width, 0, "", "More: man lume-metal, docs/lume-metal.md.");
}

static int help_options(FILE *out)
{
	int width = lm_cli_term_width();

	wrap_at(out, width, 0, "", "Options every command takes (before or after the command's words; before any --):");
	option_lines(out, width, common_options);
	lm_cli_printf(out, "\n");
	wrap_at(out, width, 0, "", "Each command's own options: lume-metal help COMMAND.");
	return LM_EXIT_OK;
}

int lm_cli_command_help(lm_cli *cli, const char *command, FILE *out)
{
	const char *usage, *summary, *near;
	int width = lm_cli_term_width();
	char line[160];
	size_t i, k;

	if (strcmp(command, "options") == 0)
		return help_options(out);
	for (i = 0; (usage = lm_cli_command_at(i, &summary)) != NULL; i++) {
		if (command_word(usage) != strlen(command) || strncmp(usage, command, strlen(command)) != 0)
			continue;
		snprintf(line, sizeof(line), "lume-metal %s [OPTIONS]", usage);
		wrap_at(out, width, 7, "usage:", line);
		lm_cli_printf(out, "\n");
		wrap_at(out, width, 0, "", summary);
		for (k = 0; k < sizeof(command_options) / sizeof(command_options[0]); k++)
			if (strcmp(command_options[k].command, command) == 0 && command_options[k].options[0] != '\0') {
				lm_cli_printf(out, "\nOptions:\n");
				option_lines(out, width, command_options[k].options);
			}
		example_lines(out, width, command);
		lm_cli_printf(out, "\n");
		wrap_at(out, width, 0, "", "Common options (--format, --quiet, --color, --state-dir, the VM manager's "
		    "and SSH's): lume-metal help options.");
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
		return lm_cli_usage_error(cli, "help: name one command (lume-metal help COMMAND, lume-metal help options)");
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
