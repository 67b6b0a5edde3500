/* Help for people: the overview (`lume-metal --help`), the common options once (`lume-metal help
 * options`), each command's own options and examples (`lume-metal help CMD`, `lume-metal CMD
 * --help`), all wrapped to the terminal's width; and the nearest command or subcommand to a
 * mistyped one (an option's is options.c's, by the same distance.c). The usage lines, summaries and option texts are options.c's; this adds which options each
 * command takes and its examples, so that nothing is written twice. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The options a command takes besides the ones every command takes (listed after them). */
static const struct {
	const char *command;
	const char *options;
} command_options[] = {
	{"enable", "profile jobs dry-run keep-host host-preference boot-margin timeout force-user-mismatch no-wait bundle take-over"},
	{"status", "long boot-margin"},
	{"probe", "exercise no-wait"},
	{"run", "no-wait require-shim run-hardened-stock resign-copy interactive tty"},
	{"rollback", "all jobs no-restart restore-host dry-run force timeout no-wait take-over"},
	{"profile", "chip"},
	{"host", "keep dry-run force force-user-mismatch"},
	{"forget-host", ""},
	{"gc", "dry-run"},
	{"bench", "profile repetitions out workload-parser bare-metal no-wait ablate-host-preference force markdown svg matrix"},
	{"report", "archive force"},
	{"agent", "label jobs keep-alive run-at-load process-type run-hardened-stock resign-copy profile follow dry-run no-wait"},
	{"doctor", "bundle"},
	{"selftest", "out"},
	{"help", ""},
	{"version", ""},
	{"completion", ""},
	{"local", "exercise require-exercise profile label keep-alive run-at-load process-type run-hardened-stock require-shim bundle prefix github-env record-dir"},
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
	{"probe", "lume-metal probe my-vm --exercise", "Stock vs shimmed answers, and whether the kernels the profile "
	    "needs compile and compute correctly on this device."},
	{"run", "lume-metal run my-vm -- llama-bench -m model.gguf", "One workload with the shim; its exit status "
	    "is lume-metal's."},
	{"run", "lume-metal run my-vm -- python3 - < job.py", "stdin goes to the workload, closed at its end."},
	{"run", "lume-metal run -t my-vm -- top", "A pseudo-terminal with this window's size; keys go to the guest."},
	{"bench", "lume-metal bench my-vm -- llama-bench -m model.gguf", "Stock vs shimmed runs as an evidence folder."},
	{"bench", "lume-metal bench compare DIR1 DIR2", "Two evidence folders side by side."},
	{"bench", "lume-metal bench my-vm --ablate-host-preference -- llama-bench -m model.gguf", "Both arms with the host "
	    "preference off and on: does this host and guest need it?"},
	{"bench", "lume-metal bench compare --markdown --svg chart.svg DIR", "Markdown with Mermaid bar charts (a CI job "
	    "summary), and the charts as SVG."},
	{"report", "lume-metal report --archive run.tar.gz DIR", "The issue-ready block of an evidence folder, and the "
	    "folder packed to attach."},
	{"rollback", "lume-metal rollback my-vm", "Remove the guest files; the preference is restored after the last VM."},
	{"rollback", "lume-metal rollback --all --restore-host", "Everything, and the host preference even when kept."},
	{"rollback", "lume-metal rollback my-vm --state-dir /ci/state", "A VM another state directory enabled: "
	    "rolled back with that one (any other refuses, naming it)."},
	{"profile", "lume-metal profile list", "The built-in profiles."},
	{"profile", "lume-metal profile lint my-profile.json --chip Apple7", "A profile's effect and warnings on an M1 host."},
	{"host", "lume-metal host status", "The preference: value, who changed it, what it was before."},
	{"host", "lume-metal host enable --keep", "Unlock the host for a fleet until host disable."},
	{"forget-host", "lume-metal forget-host ci-runner-1", "Forget a re-created VM's old SSH host key."},
	{"gc", "lume-metal gc --dry-run", "Which deleted VMs' records and pins would be forgotten."},
	{"agent", "lume-metal agent install my-vm --label com.example.llama-server --keep-alive -- llama-server "
	    "--port 8080", "A server kept running by launchd with the shim."},
	{"selftest", "lume-metal selftest my-vm --out selftest-m1", "The simulator's assumptions measured in this "
	    "VM: a folder to post."},
	{"agent", "lume-metal agent remove my-vm --label com.example.llama-server", "Stop and remove it (done "
	    "already when it is not there)."},
	{"agent", "lume-metal agent logs my-vm --label com.example.llama-server -f", "Its stdout and stderr logs, "
	    "then what it writes, until ^C."},
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

/* The subcommands of the commands that have them, each with its own help (`agent install --help`,
 * `lume-metal help agent install`), as `git remote add -h` and `brew services info --help` have. */
static const struct {
	const char *command, *sub, *usage, *summary, *options;
} subcommands[] = {
	{"agent", "install", "agent install VM... --label L [--jobs N] [--keep-alive] [--run-at-load] [--process-type T] "
	    "[--run-hardened-stock] [--resign-copy] [--profile P] -- PROG ARGS...", "A LaunchAgent in the VM's login session whose program starts with the "
	    "shim's environment (its own plist, `launchctl bootstrap`); one with the same label is replaced. Several "
	    "VMs are done --jobs at a time and end with a recap line.",
	    "label jobs keep-alive run-at-load process-type run-hardened-stock resign-copy profile dry-run no-wait"},
	{"agent", "remove", "agent remove VM... --label L [--jobs N]", "Boot out and remove a LaunchAgent lume-metal installed; one "
	    "that is not installed is removed already (exit 0). Several VMs end with a recap line.",
	    "label jobs dry-run no-wait"},
	{"agent", "list", "agent list VM...", "The LaunchAgents lume-metal installed in the VMs: label, launchd's state, "
	    "pid, program, whether its process loaded the shim, how it last exited and its log files (as `launchctl "
	    "print` shows them).", "no-wait"},
	{"agent", "logs", "agent logs VM --label L [-f]", "An agent's stdout and stderr log files from the guest, each "
	    "under a ==> PATH <== header; -f then prints what it writes, as tail -f, until ^C or SIGTERM.",
	    "label follow no-wait"},
	{"bench", "compare", "bench compare DIR [DIR...] [--markdown] [--svg FILE] [--matrix]", "Evidence folders "
	    "(lume-metal bench --out DIR) side by side with the published figures.", "markdown svg matrix"},
	{"local", "probe", "local probe [--exercise] [--require-exercise] [--profile P]", "Stock vs shimmed answers of this "
	    "machine, whether it looks like a VM, and which kernels run (--require-exercise: exit 4 when the profile's do "
	    "not).", "exercise require-exercise profile bundle"},
	{"local", "run", "local run [--profile P] [--require-shim] [--run-hardened-stock] -- CMD...", "One workload here "
	    "with the shim, as lume-metal's direct child; its exit status is lume-metal's.",
	    "profile require-shim run-hardened-stock bundle record-dir"},
	{"local", "agent", "local agent install --label L -- PROG ARGS... | remove --label L | list", "LaunchAgents here "
	    "carrying the shim's environment, as `agent` installs them in a VM.",
	    "label keep-alive run-at-load run-hardened-stock profile bundle"},
	{"local", "status", "local status", "This machine, its bundle (in place, verified), whether it looks like a VM, "
	    "the stock device, the agents lume-metal installed here.", "bundle"},
	{"local", "install", "local install [--prefix DIR]", "This machine's bundle into an image (PREFIX/lib/lume-metal, "
	    "default /usr/local), verified by SHA-256, atomically.", "prefix bundle"},
	{"local", "env", "local env [--github-env] [--prefix DIR] [--profile P] [--record-dir DIR]", "The environment a job "
	    "step exports to run its workload with the installed shim.", "github-env prefix profile record-dir"},
	{"profile", "list", "profile list", "The built-in profiles: family, threadgroup memory, working set, validated.", ""},
	{"profile", "show", "profile show NAME|FILE [--chip CHIP]", "One profile in full and the environment the shim "
	    "gets from it.", "chip"},
	{"profile", "lint", "profile lint NAME|FILE [--chip CHIP]", "Check a profile: its effect on llama.cpp and MLX, "
	    "warnings and notes.", "chip"},
	{"host", "enable", "host enable [--keep]", "Set the host preference alone (recording the original); --keep keeps it "
	    "for a CI fleet.", "keep dry-run force force-user-mismatch"},
	{"host", "disable", "host disable [--force]", "Give the host preference back as it was before lume-metal's first "
	    "change; refused while VMs are enabled, unless --force.", "dry-run force"},
	{"host", "status", "host status", "The host preference: value, store, managed, recorded original, whose domain.", ""},
};

/* "install remove list": the subcommands of `command`, for messages; "" when it has none. */
const char *lm_cli_subcommand_words(const char *command)
{
	static _Thread_local char words[96];
	size_t i, n = 0;

	words[0] = '\0';
	for (i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		if (strcmp(subcommands[i].command, command) == 0 && n + strlen(subcommands[i].sub) + 2 < sizeof(words))
			n += (size_t)snprintf(words + n, sizeof(words) - n, "%s%s", n ? " " : "", subcommands[i].sub);
	return words;
}

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
		d = wl >= 3 && wl < n && strncmp(found, word, wl) == 0 ? 1 : lm_cli_distance(word, found, 2);
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

/* The nearest of a command's subcommands to an unknown one ("shw" -> "show", "instal" ->
 * "install"): a prefix, or a typo within two edits; NULL when none is near. */
const char *lm_cli_nearest_subcommand(const char *command, const char *word)
{
	size_t i, d, best_d = 3, wl = strlen(word), n;
	const char *best = NULL;

	for (i = 0; wl > 0 && i < sizeof(subcommands) / sizeof(subcommands[0]); i++) {
		if (strcmp(subcommands[i].command, command) != 0)
			continue;
		n = strlen(subcommands[i].sub);
		d = wl >= 2 && wl < n && strncmp(subcommands[i].sub, word, wl) == 0 ? 1 : lm_cli_distance(word, subcommands[i].sub, 2);
		if (d < best_d && d < wl && d < n) {
			best_d = d;
			best = subcommands[i].sub;
		}
	}
	return best;
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

/* An option's text in one command's help, where the option table's (which `help options` and the
 * man page show whole) speaks of several commands: only what it does in this one, naming no other
 * command (issue 50). The command is the word `lume-metal help` was given, "agent install" for a
 * subcommand's help. */
static const struct {
	const char *command, *option, *text;
} option_texts[] = {
	{"enable", "jobs", "VMs handled at once (default 1)."},
	{"rollback", "jobs", "VMs rolled back at once (default 1; a dry run goes one at a time). The host "
	    "preference is restored by whichever VM is rolled back last."},
	{"agent", "jobs", "install, remove: VMs handled at once (default 1)."},
	{"agent install", "jobs", "VMs handled at once (default 1)."},
	{"agent remove", "jobs", "VMs handled at once (default 1)."},
	{"enable", "dry-run", "Print the plan and change nothing."},
	{"rollback", "dry-run", "Print the plan and change nothing."},
	{"host", "dry-run", "Print the plan and change nothing."},
	{"gc", "dry-run", "List the VMs that would be forgotten and change nothing."},
	{"agent", "dry-run", "install, remove: print the plan and change nothing."},
	{"agent install", "dry-run", "Print the plan and change nothing."},
	{"agent remove", "dry-run", "Print the plan and change nothing."},
	{"rollback", "force", "Restore the preference even if someone else changed it since."},
	{"host", "force", "disable: restore the preference even if someone else changed it since."},
	{"host disable", "force", "Restore the preference even if someone else changed it since."},
	{"report", "force", "--archive: write over an existing file."},
	{"bench", "force", "--ablate-host-preference: turn the preference off although other enabled VMs use it."},
	{"enable", "take-over", "Act on guest files another state directory installed (their owner record names "
	    "it, or cannot be read; docs/bundle-format.md): this state directory becomes their owner. Without it "
	    "the VM is refused, naming that state directory, and nothing changes in the guest. For a state "
	    "directory that is gone for good; otherwise use that one."},
	{"rollback", "take-over", "Remove guest files another state directory installed (their owner record names "
	    "it, or cannot be read; docs/bundle-format.md). Without it the VM is refused, naming that state "
	    "directory, and nothing changes in the guest. For a state directory that is gone for good; otherwise "
	    "use that one."},
	{"enable", "keep-host", "The fleet keeps the host unlocked: rolling back the last enabled VM leaves the "
	    "preference set (so the next job's fresh VM needs no restart) until it is given back on purpose."},
	{"run", "resign-copy", "A program signed with the hardened runtime runs as a copy in lume-metal's folder in "
	    "the guest, with the executables and libraries beside it, every Mach-O re-signed ad hoc with the dyld "
	    "entitlements (the original is not touched; the copy loses notarization: docs/guest.md)."},
	{"run", "run-hardened-stock", "Start a program signed with the hardened runtime without the "
	    "allow-dyld-environment-variables entitlement anyway, on a guest whose SIP is enabled: it is expected to "
	    "run stock (the activation records tell); without this it is refused before it starts."},
	{"agent install", "resign-copy", "The workload's program, when signed with the hardened runtime, runs as a "
	    "copy in lume-metal's folder in the guest, every Mach-O re-signed ad hoc with the dyld entitlements (the "
	    "original is not touched; docs/guest.md)."},
	{"agent install", "run-hardened-stock", "Install a program signed with the hardened runtime without the "
	    "allow-dyld-environment-variables entitlement anyway, on a guest whose SIP is enabled: it is expected to "
	    "run stock; without this it is refused before anything is installed."},
};

/* This command's own text of option `o`, or NULL (the table's). */
static const char *option_text_for(const char *command, const char *o)
{
	size_t i;

	for (i = 0; command != NULL && i < sizeof(option_texts) / sizeof(option_texts[0]); i++)
		if (strcmp(option_texts[i].command, command) == 0 && strcmp(option_texts[i].option, o) == 0)
			return option_texts[i].text;
	return NULL;
}

/* The option table's texts begin with the commands they are about ("enable, rollback, probe, run:
 * ..."): in one command's help that list names the others, and is left out. A command with
 * subcommands keeps which of its own subcommands ("install/remove/logs: ..." in `help agent`). */
static const char *own_words(const char *command, const char *help, char *buf, size_t size)
{
	const char *colon = strstr(help, ": ");
	size_t n = strlen(command != NULL ? command : ""), k = colon != NULL ? (size_t)(colon - help) : 0;

	if (command == NULL || colon == NULL || k == 0 || k > 48 || strspn(help, "abcdefghijklmnopqrstuvwxyz-,/ ") < k)
		return help;
	/* `help agent`: "agent install/remove/logs: X" -> "install/remove/logs: X" */
	if (strchr(command, ' ') == NULL && strncmp(help, command, n) == 0 && help[n] == ' ' &&
	    strchr(help + n + 1, ' ') > colon && lm_cli_subcommand_words(command)[0] != '\0') {
		snprintf(buf, size, "%s", help + n + 1);
		return buf;
	}
	return colon + 2;
}

static void option_line(FILE *out, int width, const char *command, const char *name, size_t n)
{
	const char *o, *arg, *help, *env, *own;
	char left[96], text[1024], words[1024];
	size_t i;

	for (i = 0; (o = lm_cli_option_at(i, &arg, &help)) != NULL; i++) {
		if (strlen(o) != n || strncmp(o, name, n) != 0)
			continue;
		if ((own = option_text_for(command, o)) != NULL)
			help = own;
		else
			help = own_words(command, help, words, sizeof(words));
		snprintf(left, sizeof(left), "  --%s%s%s", o, arg ? " " : "", arg ? arg : "");
		env = lm_cli_option_env(i);
		snprintf(text, sizeof(text), "%s%s%s%s", help, env ? " [env " : "", env ? env : "", env ? "]" : "");
		lm_cli_wrap(out, width, left, text);
	}
}

static void option_lines(FILE *out, int width, const char *command, const char *list)
{
	const char *p = list;

	while (*p != '\0') {
		size_t len = strcspn(p, " ");
		option_line(out, width, command, p, len);
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
	option_lines(out, width, NULL, common_options);
	lm_cli_printf(out, "\n");
	wrap_at(out, width, 0, "", "Each command's own options: lume-metal help COMMAND.");
	return LM_EXIT_OK;
}

/* A usage error for a subcommand `command` does not have: the nearest one, as git's "did you mean"
 * and the unknown commands' own message (main.c) suggest, or the list of them. */
int lm_cli_unknown_subcommand(lm_cli *cli, const char *command, const char *word)
{
	const char *near = lm_cli_nearest_subcommand(command, word);
	char list[128];
	size_t i, n = 0, k = 0, count = 0;
	const char *words = lm_cli_subcommand_words(command);

	if (word[0] == '\0' || near == NULL) {
		/* "a, b or c" from "a b c" */
		for (i = 0; words[i] != '\0'; i++)
			count += words[i] == ' ';
		for (i = 0; words[i] != '\0' && n + 5 < sizeof(list); i++) {
			if (words[i] == ' ') {
				n += (size_t)snprintf(list + n, sizeof(list) - n, "%s", ++k == count ? " or " : ", ");
				continue;
			}
			list[n++] = words[i];
		}
		list[n] = '\0';
		if (word[0] == '\0')
			return lm_cli_usage_error(cli, "%s: name a subcommand: %s (lume-metal help %s)", command, list, command);
		return lm_cli_usage_error(cli, "%s: unknown subcommand '%s'; use %s (lume-metal help %s)", command, word, list,
		    command);
	}
	return lm_cli_usage_error(cli, "%s: unknown subcommand '%s'; did you mean '%s'? (lume-metal help %s %s)", command,
	    word, near, command, near);
}

/* A subcommand's own help; 1 when `command` has no subcommand `sub` (the command's help then). */
int lm_cli_subcommand_help(const char *command, const char *sub, FILE *out)
{
	int width = lm_cli_term_width();
	char line[200];
	char which[64];
	size_t i;

	for (i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++) {
		if (strcmp(subcommands[i].command, command) != 0 || strcmp(subcommands[i].sub, sub) != 0)
			continue;
		snprintf(which, sizeof(which), "%s %s", command, sub);
		snprintf(line, sizeof(line), "lume-metal %s [OPTIONS]", subcommands[i].usage);
		wrap_at(out, width, 7, "usage:", line);
		lm_cli_printf(out, "\n");
		wrap_at(out, width, 0, "", subcommands[i].summary);
		if (subcommands[i].options[0] != '\0') {
			lm_cli_printf(out, "\nOptions:\n");
			option_lines(out, width, which, subcommands[i].options);
		}
		lm_cli_printf(out, "\n");
		snprintf(line, sizeof(line), "The other subcommands: lume-metal help %s. Common options (--format, --quiet, "
		    "--color, the VM manager's and SSH's): lume-metal help options.", command);
		wrap_at(out, width, 0, "", line);
		return 0;
	}
	return 1;
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
				option_lines(out, width, command, command_options[k].options);
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

/* lume-metal version [--format json]: as `gh version` and `brew --version`; --version is the same
 * line. */
int lm_cmd_version(lm_cli *cli)
{
	lm_json_envelope env;
	char *doc = NULL;
	int rc;

	if (cli->argc != 0)
		return lm_cli_usage_error(cli, "version: takes no argument, found '%s'", cli->argv[0]);
	if (!cli->json) {
		lm_cli_printf(stdout, "lume-metal %s\n", LUME_METAL_VERSION);
		return LM_EXIT_OK;
	}
	env = lm_cli_envelope(cli, LM_EXIT_OK, 0, NULL);
	rc = lm_version_to_json(LUME_METAL_VERSION, &env, &doc);
	lm_cli_print_document(cli, rc, doc);
	return rc < 0 ? LM_EXIT_FAILURE : LM_EXIT_OK;
}

/* --help: the help of the command (and subcommand) the words after the options name, or the
 * usage when they name none. */
int lm_cli_help_asked(lm_cli *cli)
{
	if (cli->argc == 0) {
		lm_cli_usage(stdout);
		return LM_EXIT_OK;
	}
	if (cli->argc > 1 && lm_cli_subcommand_help(cli->argv[0], cli->argv[1], stdout) == 0)
		return LM_EXIT_OK;
	return lm_cli_command_help(cli, cli->argv[0], stdout);
}

int lm_cmd_help(lm_cli *cli)
{
	/* Help is text for people, as agent logs' lines are: no JSON of it (the commands and options
	 * are listed in docs/lume-metal.md). */
	if (cli->json)
		return lm_cli_usage_error(cli, "help prints text for people: no --format json");
	if (cli->argc == 0) {
		lm_cli_usage(stdout);
		return LM_EXIT_OK;
	}
	if (cli->argc == 2 && lm_cli_subcommand_help(cli->argv[0], cli->argv[1], stdout) == 0)
		return LM_EXIT_OK;
	if (cli->argc > 1)
		return lm_cli_usage_error(cli, "help: name one command, or a command and its subcommand (lume-metal help "
		    "COMMAND [SUBCOMMAND], lume-metal help options)");
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
