/* Every command-line option, in one table: parsing, --help (help.c) and the man page (man.c) all
 * come from it. The table is data the renderers read (lm_cli_option_at ...); parsing renders
 * nothing itself: --help and --man are what it says was asked (main.c prints them). */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

enum opt_id {
	OPT_HELP = 'h', OPT_VERSION = 'V',
	OPT_FORMAT = 256, OPT_DRY_RUN, OPT_FORCE, OPT_STATE_DIR, OPT_PREFS_DIR, OPT_LUME_URL,
	OPT_VM_MANAGER, OPT_LUME, OPT_HOST_KEY_POLICY, OPT_SSH_USER, OPT_SSH_KEY, OPT_SSH_PASSWORD_FILE,
	OPT_BUNDLE, OPT_PROFILE, OPT_ALL, OPT_JOBS, OPT_NO_RESTART, OPT_TIMEOUT, OPT_CONNECT_TIMEOUT,
	OPT_VERBOSE, OPT_MAN, OPT_BOOT_MARGIN, OPT_FORCE_USER_MISMATCH, OPT_NO_WAIT, OPT_TART, OPT_UTMCTL,
	OPT_EXERCISE, OPT_KEEP_HOST, OPT_RESTORE_HOST, OPT_REPETITIONS, OPT_OUT, OPT_WORKLOAD_PARSER, OPT_BARE_METAL,
	OPT_QUIET, OPT_LABEL, OPT_KEEP_ALIVE, OPT_RUN_AT_LOAD, OPT_COLOR, OPT_ADDRESS, OPT_CHIP,
	OPT_RUN_HARDENED_STOCK, OPT_REQUIRE_SHIM, OPT_INTERACTIVE, OPT_TTY, OPT_REQUIRE_EXERCISE,
	OPT_PREFIX, OPT_GITHUB_ENV, OPT_RECORD_DIR, OPT_PROCESS_TYPE, OPT_RESIGN_COPY, OPT_HOST_PREFERENCE,
	OPT_ABLATE, OPT_MARKDOWN, OPT_SVG, OPT_MATRIX, OPT_ARCHIVE, OPT_LONG, OPT_FOLLOW, OPT_TAKE_OVER
};

static const struct option_doc {
	const char *name;
	int has_arg;
	int id;
	const char *arg;   /* placeholder shown in help */
	const char *env;   /* environment variable that sets the same, or NULL */
	const char *help;
} options[] = {
	{"format", required_argument, OPT_FORMAT, "text|json|jsonl|markdown", NULL,
	 "Output format. json prints one document with a versioned schema (docs/json-output.md); jsonl prints "
	 "one line per step start and end per VM, then the document on one line (for CI logs and dashboards). "
	 "report: markdown (the default, the same as text) or json (the results document, "
	 "docs/results-report.md)."},
	{"quiet", no_argument, OPT_QUIET, NULL, NULL,
	 "No progress and no informational lines: results, warnings and errors only."},
	{"long", no_argument, OPT_LONG, NULL, NULL,
	 "status: each VM in detail (identity, guest, bundle, last probe and exercise, agents) instead of a "
	 "VM's row in the table several VMs get."},
	{"label", required_argument, OPT_LABEL, "LABEL", NULL,
	 "agent install/remove/logs: the LaunchAgent's label, reverse-DNS (e.g. com.example.llama-server)."},
	{"follow", no_argument, OPT_FOLLOW, NULL, NULL,
	 "agent logs (-f): after the logs, print what the agent adds to them as it writes, as tail -f does, "
	 "until interrupted (^C or SIGTERM)."},
	{"keep-alive", no_argument, OPT_KEEP_ALIVE, NULL, NULL,
	 "agent install: launchd restarts the workload whenever it exits (KeepAlive)."},
	{"run-at-load", no_argument, OPT_RUN_AT_LOAD, NULL, NULL,
	 "agent install: launchd starts the workload when the agent is loaded, at each login too (RunAtLoad)."},
	{"process-type", required_argument, OPT_PROCESS_TYPE, "Interactive|Adaptive|Standard|Background", NULL,
	 "agent install: the agent's ProcessType (default Interactive: no resource limits). launchd throttles CPU "
	 "and I/O of a job that sets none (launchd.plist(5)); Background is throttled most."},
	{"resign-copy", no_argument, OPT_RESIGN_COPY, NULL, NULL,
	 "run, agent install: a program signed with the hardened runtime runs as a copy in lume-metal's folder in "
	 "the guest, with the executables and libraries beside it, every Mach-O re-signed ad hoc with the dyld "
	 "entitlements (the original is not touched; the copy loses notarization: docs/guest.md)."},
	{"run-hardened-stock", no_argument, OPT_RUN_HARDENED_STOCK, NULL, NULL,
	 "run, agent install: start a program signed with the hardened runtime without the "
	 "allow-dyld-environment-variables entitlement anyway, on a guest whose SIP is enabled: dyld is documented "
	 "to ignore the shim in it there, so it is expected to run stock (the activation records tell); without "
	 "this it is refused before it starts. With SIP disabled or custom it is started without it (macOS does not "
	 "apply the hardened runtime with SIP off, by Apple's word; docs/guest.md)."},
	{"require-shim", no_argument, OPT_REQUIRE_SHIM, NULL, NULL,
	 "run: fail (after the workload exits) when no process of the workload had an answer widened (a Metal "
	 "question answered above stock), as its activation records show; its exit status is still given."},
	{"prefix", required_argument, OPT_PREFIX, "DIR", NULL,
	 "local install, local env: where the bundle is installed in this machine's image, an absolute path: "
	 "DIR/lib/lume-metal (default /usr/local, as Tart's image templates install their shim)."},
	{"github-env", no_argument, OPT_GITHUB_ENV, NULL, NULL,
	 "local env: print NAME=value lines for $GITHUB_ENV (lume-metal local env --github-env >> \"$GITHUB_ENV\") "
	 "instead of sh export lines; the injection variable goes as LUME_METAL_INJECT=NAME=PATH, for a later step's "
	 "env \"$LUME_METAL_INJECT\" CMD."},
	{"record-dir", required_argument, OPT_RECORD_DIR, "DIR", NULL,
	 "local env: the workload's processes that load the shim write their activation records into DIR, an "
	 "absolute path (docs/activation-format.md)."},
	{"require-exercise", no_argument, OPT_REQUIRE_EXERCISE, NULL, NULL,
	 "local probe: run the exercise and fail with exit code 4 (LM_ENOTPROVEN) when the kernels the profile "
	 "needs do not run on this machine: a CI job's choice between the fast path and a clear skip."},
	{"dry-run", no_argument, OPT_DRY_RUN, NULL, NULL, "Print the plan and change nothing (enable, rollback, host, gc)."},
	{"force", no_argument, OPT_FORCE, NULL, NULL,
	 "host disable/rollback: restore the preference even if someone else changed it since. report --archive: "
	 "write over an existing file. bench --ablate-host-preference: turn the preference off although other "
	 "enabled VMs use it."},
	{"force-user-mismatch", no_argument, OPT_FORCE_USER_MISMATCH, NULL, NULL,
	 "DANGEROUS. Write the host preference although the Lume server runs as another user, or "
	 "lume-metal runs as root and no server shows whose VMs read it. The VMs read only their own "
	 "user's preference: they would most likely keep the restricted level while the probe still passes "
	 "(docs/preferences.md)."},
	{"profile", required_argument, OPT_PROFILE, "NAME|FILE", NULL,
	 "Capability profile: a built-in name (lume-metal profile list) or a JSON file."},
	{"all", no_argument, OPT_ALL, NULL, NULL, "rollback: every VM the state knows."},
	{"jobs", required_argument, OPT_JOBS, "N", NULL,
	 "enable, rollback, agent install and remove: VMs handled at once (default 1; at most 64). Several VMs print "
	 "one line each and the recap; --verbose adds their steps."},
	{"keep", no_argument, OPT_KEEP_HOST, NULL, NULL,
	 "host enable: the fleet keeps the host unlocked: rolling back the last enabled VM leaves the "
	 "preference set (so the next job's fresh VM needs no restart); only host disable, or rollback "
	 "--restore-host, restores it."},
	{"keep-host", no_argument, OPT_KEEP_HOST, NULL, NULL, "enable: the same as host enable --keep."},
	{"host-preference", required_argument, OPT_HOST_PREFERENCE, "always|auto|never", NULL,
	 "enable: always (the default, the published recipe) sets the host preference and restarts the VM when "
	 "it booted before the change; auto proves the kernels with the shim on the VM as it is first and sets "
	 "the preference, restarting the VM, only when they fail; never uses the shim alone and leaves the host "
	 "untouched (kernels that fail: exit 4, not-proven). Whether a host needs the preference is measured, not "
	 "known (docs/lume-metal.md)."},
	{"restore-host", no_argument, OPT_RESTORE_HOST, NULL, NULL,
	 "rollback: restore the host preference when no enabled VM is left, even when kept (--keep)."},
	{"take-over", no_argument, OPT_TAKE_OVER, NULL, NULL,
	 "enable, rollback: act on guest files another state directory installed (their owner record names it, "
	 "or cannot be read; docs/bundle-format.md): enable makes this state directory their owner, rollback "
	 "removes them. Without it both are refused, naming that state directory, and change nothing in the "
	 "guest. For a state directory that is gone for good; otherwise run the command with that one."},
	{"no-restart", no_argument, OPT_NO_RESTART, NULL, NULL,
	 "rollback: do not restart running VMs that booted while the host preference was set."},
	{"exercise", no_argument, OPT_EXERCISE, NULL, NULL,
	 "probe: also run small Metal kernels for the unlocked features with the shim and check them "
	 "against the CPU (reduction, matrix, bfloat16, threadgroup memory): whether they compile and compute "
	 "correctly on this device."},
	{"repetitions", required_argument, OPT_REPETITIONS, "N", NULL,
	 "bench: rounds of stock then shimmed runs (default 3, at most 100)."},
	{"out", required_argument, OPT_OUT, "DIR", NULL,
	 "bench, selftest: the evidence folder to write (new or empty; default ./lume-metal-bench-VM-TIME, "
	 "./lume-metal-selftest-VM-TIME)."},
	{"workload-parser", required_argument, OPT_WORKLOAD_PARSER, "llama-bench|none", NULL,
	 "bench: read the workload's output as llama-bench's JSON (default; -o json is added when the "
	 "command has no -o), or not at all (wall-clock times and raw output only)."},
	{"bare-metal", no_argument, OPT_BARE_METAL, NULL, NULL,
	 "bench: run the workload on this host itself (one arm, no VM): the bare-metal record `bench compare` "
	 "sets unlocked runs against."},
	{"ablate-host-preference", no_argument, OPT_ABLATE, NULL, NULL,
	 "bench: run the stock and shimmed arms twice, with the host preference off and on (the VM restarted "
	 "between them, the exercise run in each, the preference put back as it was at the end, also on failure "
	 "or Ctrl-C): the folder says whether this host and guest need the preference."},
	{"markdown", no_argument, OPT_MARKDOWN, NULL, NULL,
	 "bench compare: print Markdown (the table, then a Mermaid bar chart per folder and test: stock, "
	 "unlocked, bare metal) for an issue, a pull request or a CI job summary."},
	{"svg", required_argument, OPT_SVG, "FILE", NULL,
	 "bench compare: also write the bar charts as an SVG file (made by lume-metal itself)."},
	{"matrix", no_argument, OPT_MATRIX, NULL, NULL,
	 "bench compare: print the compatibility matrix of the folders (host chip, host macOS, guest macOS, VM "
	 "manager: kernels ran, pp and tg speed-ups, preference needed) as Markdown (docs/compatibility.md)."},
	{"archive", required_argument, OPT_ARCHIVE, "FILE.tar.gz", NULL,
	 "report: also pack the evidence folder as a gzip'd tar to attach to an issue (one folder; an existing "
	 "file is refused unless --force)."},
	{"no-wait", no_argument, OPT_NO_WAIT, NULL, NULL,
	 "enable, rollback, probe, run: when another lume-metal process is working on the VM, fail at "
	 "once instead of waiting for it to finish."},
	{"state-dir", required_argument, OPT_STATE_DIR, "DIR", "LUME_METAL_STATE_DIR",
	 "State directory (journal, known_hosts), an absolute path. Default: $XDG_STATE_HOME/lume-metal or "
	 "~/.local/state/lume-metal; ~/Library/Application Support/lume-metal on macOS."},
	{"prefs-dir", required_argument, OPT_PREFS_DIR, "DIR", "LUME_METAL_PREFS_DIR",
	 "Use plist files DIR/<domain>.plist instead of CFPreferences, DIR an absolute path (the default off "
	 "macOS is ~/Library/Preferences)."},
	{"lume-url", required_argument, OPT_LUME_URL, "URL", "LUME_METAL_LUME_URL",
	 "Lume HTTP API base URL. Default: http://127.0.0.1:7777."},
	{"vm-manager", required_argument, OPT_VM_MANAGER, "lume-api|lume-cli|tart|utm|none", "LUME_METAL_VM_MANAGER",
	 "Force a VM manager: Lume's HTTP API, the lume CLI, Tart, UTM (utmctl), or none (a VM started by "
	 "anything else, at --address IP). Default: per VM, the one that knows it among Lume (its API when "
	 "`lume serve` answers, else the CLI), tart and utmctl on PATH."},
	{"tart", required_argument, OPT_TART, "PATH", "LUME_METAL_TART", "The tart program. Default: tart on PATH."},
	{"utmctl", required_argument, OPT_UTMCTL, "PATH", "LUME_METAL_UTMCTL",
	 "The utmctl program. Default: utmctl on PATH, else UTM.app's."},
	{"lume", required_argument, OPT_LUME, "PATH", "LUME_METAL_LUME",
	 "The lume program for the CLI backend. Default: lume on PATH."},
	{"host-key-policy", required_argument, OPT_HOST_KEY_POLICY, "strict|accept-new", NULL,
	 "Unknown guest host keys: refuse (strict) or record on first contact (accept-new, default). "
	 "A changed key is always refused."},
	{"ssh-user", required_argument, OPT_SSH_USER, "USER", "LUME_METAL_SSH_USER",
	 "Guest account. Default: the VM manager's image account: admin for Tart (Cirrus Labs' images), else lume."},
	{"ssh-key", required_argument, OPT_SSH_KEY, "FILE", "LUME_METAL_SSH_KEY",
	 "ed25519 or ECDSA private key (OpenSSH format). Tried after the SSH agent."},
	{"ssh-password-file", required_argument, OPT_SSH_PASSWORD_FILE, "FILE", NULL,
	 "File holding the guest password (or set LUME_METAL_SSH_PASSWORD). Never pass a password in argv."},
	{"bundle", required_argument, OPT_BUNDLE, "DIR", "LUME_METAL_BUNDLE",
	 "Guest bundle to install, an absolute path. Default: the installed bundle for the guest's OS."},
	{"timeout", required_argument, OPT_TIMEOUT, "SECONDS", NULL,
	 "How long to wait for a VM to become ready (default 300); a VM its manager says has stopped, or cannot "
	 "start for the host's limit of VMs, ends the wait sooner."},
	{"connect-timeout", required_argument, OPT_CONNECT_TIMEOUT, "SECONDS", NULL,
	 "SSH connect and authentication timeout (default 10)."},
	{"boot-margin", required_argument, OPT_BOOT_MARGIN, "SECONDS", NULL,
	 "enable/status: how long a VM takes from its process's start to its kernel's boot (default 30: "
	 "its firmware runs that long), the time within which it reads the host preference. A running VM is "
	 "left alone only when lume-metal started it after the preference changed, or its VM process "
	 "(`lume run`, `tart run`) started after the change; a guest kernel booted after it may be a guest "
	 "reboot, not a VM restart. Without a VM manager, a kernel booted more than SECONDS after the change "
	 "is taken for the restart the user was asked for."},
	{"address", required_argument, OPT_ADDRESS, "IP", NULL,
	 "The guest's IPv4 address, needed with --vm-manager none and with UTM older than 5.0.3 (which "
	 "cannot tell it)."},
	{"chip", required_argument, OPT_CHIP, "FAMILY", NULL,
	 "profile lint: the host's own Apple family (e.g. Apple7 for M1) to check the ceiling against."},
	{"color", required_argument, OPT_COLOR, "auto|always|never", NULL,
	 "Colour ok, warn and fail in the output: auto (the default) colours only a terminal (or any output when "
	 "CLICOLOR_FORCE or FORCE_COLOR asks), and never when NO_COLOR is set or TERM is dumb."},
	{"verbose", no_argument, OPT_VERBOSE, NULL, NULL, "Show debug lines and the steps (off a terminal, as they "
	 "happen); several VMs: each VM's steps under its line; run: each process that loaded the shim "
	 "and what its children get."},
	{"man", no_argument, OPT_MAN, NULL, NULL, "Print the man page (roff) and exit."},
	{"help", no_argument, OPT_HELP, NULL, NULL, "Show this help and exit."},
	{"version", no_argument, OPT_VERSION, NULL, NULL, "Show the version and exit."},
	{"interactive", no_argument, OPT_INTERACTIVE, NULL, NULL,
	 "run (-i): give the workload this terminal's input (a pipe or a file is always given, to its end); at a "
	 "terminal it also gets a pseudo-terminal, as with -t."},
	{"tty", no_argument, OPT_TTY, NULL, NULL,
	 "run (-t): a pseudo-terminal in the guest with this window's size (this terminal in raw mode meanwhile: "
	 "keys and ^C go to the workload)."},
};
#define N_OPTIONS (sizeof(options) / sizeof(options[0]))

static const char *const command_help[] = {
	"enable VM... [--profile P] [--jobs N] [--keep-host]", "Unlock the VMs: host preference, restart if needed, install and verify the guest bundle, probe.",
	"status [VM...] [--long]", "Host preference and, per VM, state, bundle, restart pending, last probe.",
	"probe VM", "Stock vs shimmed capability table.",
	"run VM [-i] [-t] [--require-shim] [--resign-copy] -- CMD...", "Run one guest command with the shim, as tart exec does; "
	"its exit status is returned, then which of its processes loaded the shim.",
	"bench VM -- llama-bench ARGS...", "Stock vs shimmed as an evidence folder (docs/bench.md); "
	"--ablate-host-preference: off and on.",
	"bench --bare-metal -- llama-bench ARGS...", "The same on this host itself: the bare-metal record.",
	"bench compare DIR...", "Folders side by side; --markdown --svg --matrix.",
	"report DIR...", "Issue-ready results (docs/results-report.md).",
	"rollback VM...|--all [--jobs N] [--restore-host]", "Remove the guest files; restore the host preference when no VM is left.",
	"profile list|show NAME|FILE|lint FILE", "Built-in profiles, a profile's effect and warnings.",
	"host enable [--keep]|disable|status", "The host preference alone (--keep: kept for a CI fleet until host disable).",
	"forget-host VM", "Forget a guest's recorded SSH host key.",
	"gc [--dry-run]", "Forget the VMs their manager no longer knows.",
	"agent install|remove|list|logs VM ...", "Per-workload LaunchAgents with the shim, and their logs.",
	"doctor [VM...]", "Check the host and the VMs: one ok / warn / fail line per check, with what to do.",
	"selftest VM [--out DIR]", "The simulator's assumptions, measured in the VM.",
	"help [COMMAND [SUB]]", "Help on a command or subcommand (or: ... --help).",
	"version", "The version (--format json: with the library's).",
	"completion bash|zsh|fish", "Print the shell completion script.",
	"local probe|run|agent|status|install|env ...", "Probe, run, agents, an image's bundle and its env on this "
	"machine: no SSH, no host preference.",
	NULL,
};

static const char *const exit_help[] = {
	"0", "success", "1", "failure", "2", "usage error", "3", "some VMs of a fleet failed",
	"4", "guest unsupported (stock kept); not proven",
	"5", "state written by a newer lume-metal: upgrade it",
	"run", "the guest command's own; 128+N after signal N", NULL,
};

const char *lm_cli_exit_at(size_t i, const char **meaning)
{
	size_t k;

	for (k = 0; exit_help[k] != NULL; k += 2)
		if (k / 2 == i) {
			*meaning = exit_help[k + 1];
			return exit_help[k];
		}
	return NULL;
}

/* A directory option must be absolute: a relative one would name another directory from each
 * working directory (the journal or the preference of one run not found by the next). The message
 * shows what it would have meant from here. */
static int absolute_dir(lm_cli *cli, const char *arg, const char *source)
{
	char cwd[4096];

	if (arg[0] == '/')
		return 0;
	if (getcwd(cwd, sizeof(cwd)) == NULL)
		snprintf(cwd, sizeof(cwd), "(the current directory)");
	return lm_cli_usage_error(cli, "%s: '%s' is a relative path; give an absolute one (from here it would be "
	    "%s/%s), so that every run uses the same directory", source, arg, cwd, arg);
}

/* A whole decimal number in [min, max], or -1. */
static long count_in(const char *arg, long min, long max)
{
	char *end;
	long l;

	errno = 0;
	l = strtol(arg, &end, 10);
	return errno != 0 || *end != '\0' || end == arg || l < min || l > max ? -1 : l;
}

static int set_option(lm_cli *cli, int id, const char *arg, const char *source)
{
	char *end;
	double d;
	long l;

	switch (id) {
	case OPT_FORMAT:
		cli->jsonl = strcmp(arg, "jsonl") == 0;
		if (strcmp(arg, "json") == 0 || cli->jsonl)
			cli->json = 1;
		else if (strcmp(arg, "text") == 0 || strcmp(arg, "markdown") == 0)
			cli->json = 0;
		else
			return lm_cli_usage_error(cli, "%s: expected text, json, jsonl or markdown, found '%s'", source, arg);
		return 0;
	case OPT_QUIET: cli->quiet = 1; return 0;
	case OPT_LONG: cli->long_format = 1; return 0;
	case OPT_FOLLOW: cli->follow = 1; return 0;
	case OPT_LABEL: cli->label = arg; return 0;
	case OPT_KEEP_ALIVE: cli->keep_alive = 1; return 0;
	case OPT_RUN_HARDENED_STOCK: cli->run_hardened_stock = 1; return 0;
	case OPT_RESIGN_COPY: cli->resign_copy = 1; return 0;
	case OPT_PROCESS_TYPE:
		if (lm_agent_process_type_check(arg) < 0)
			return lm_cli_usage_error(cli, "%s: %s", source, lm_error_last()->message);
		cli->process_type = arg;
		return 0;
	case OPT_REQUIRE_SHIM: cli->require_shim = 1; return 0;
	case OPT_INTERACTIVE: cli->interactive = 1; return 0;
	case OPT_TTY: cli->tty = 1; return 0;
	case OPT_REQUIRE_EXERCISE: cli->require_exercise = 1; return 0;
	case OPT_RUN_AT_LOAD: cli->run_at_load = 1; return 0;
	case OPT_GITHUB_ENV: cli->github_env = 1; return 0;
	case OPT_DRY_RUN: cli->lib.dry_run = 1; return 0;
	case OPT_FORCE: cli->lib.force = 1; return 0;
	case OPT_FORCE_USER_MISMATCH: cli->lib.force_user_mismatch = 1; return 0;
	case OPT_PROFILE: cli->profile = arg; return 0;
	case OPT_ALL: cli->all = 1; return 0;
	case OPT_NO_RESTART: cli->no_restart = 1; return 0;
	case OPT_NO_WAIT: cli->lib.no_wait = 1; return 0;
	case OPT_EXERCISE: cli->exercise = 1; return 0;
	case OPT_KEEP_HOST: cli->lib.keep_host = 1; return 0;
	case OPT_RESTORE_HOST: cli->lib.restore_host = 1; return 0;
	case OPT_TAKE_OVER: cli->lib.take_over = 1; return 0;
	case OPT_VERBOSE: cli->verbose = 1; return 0;
	case OPT_OUT: cli->out_dir = arg; return 0;
	case OPT_BARE_METAL: cli->bare_metal = 1; return 0;
	case OPT_ABLATE: cli->ablate = 1; return 0;
	case OPT_MARKDOWN: cli->markdown = 1; return 0;
	case OPT_SVG: cli->svg_file = arg; return 0;
	case OPT_MATRIX: cli->matrix = 1; return 0;
	case OPT_ARCHIVE: cli->archive = arg; return 0;
	case OPT_WORKLOAD_PARSER:
		if (strcmp(arg, "llama-bench") == 0)
			cli->workload_parser = LM_BENCH_PARSER_LLAMA_BENCH;
		else if (strcmp(arg, "none") == 0)
			cli->workload_parser = LM_BENCH_PARSER_NONE;
		else
			return lm_cli_usage_error(cli, "%s: expected llama-bench or none, found '%s'", source, arg);
		return 0;
	case OPT_REPETITIONS:
		if ((l = count_in(arg, 1, LM_BENCH_ROUNDS_MAX)) < 0)
			return lm_cli_usage_error(cli, "%s: expected a number of rounds in 1..%d, found '%s'", source,
			    LM_BENCH_ROUNDS_MAX, arg);
		cli->repetitions = (int)l;
		return 0;
	case OPT_ADDRESS: cli->lib.vm_address = arg; return 0;
	case OPT_CHIP: cli->chip = arg; return 0;
	case OPT_COLOR:
		if (strcmp(arg, "auto") == 0)
			cli->color = LM_CLI_COLOR_AUTO;
		else if (strcmp(arg, "always") == 0)
			cli->color = LM_CLI_COLOR_ALWAYS;
		else if (strcmp(arg, "never") == 0)
			cli->color = LM_CLI_COLOR_NEVER;
		else
			return lm_cli_usage_error(cli, "%s: expected auto, always or never, found '%s'", source, arg);
		return 0;
	case OPT_STATE_DIR:
	case OPT_PREFS_DIR:
	case OPT_BUNDLE:
	case OPT_PREFIX:
	case OPT_RECORD_DIR:
		if (absolute_dir(cli, arg, source) != 0)
			return LM_EXIT_USAGE;
		if (id == OPT_PREFIX)
			cli->prefix = arg;
		else if (id == OPT_RECORD_DIR)
			cli->record_dir = arg;
		else if (id == OPT_STATE_DIR)
			cli->lib.state_dir = arg;
		else if (id == OPT_PREFS_DIR)
			cli->lib.prefs_dir = arg;
		else
			cli->lib.bundle_dir = arg;
		return 0;
	case OPT_LUME_URL: cli->lib.lume_url = arg; return 0;
	case OPT_LUME: cli->lib.lume_program = arg; return 0;
	case OPT_TART: cli->lib.tart_program = arg; return 0;
	case OPT_UTMCTL: cli->lib.utmctl_program = arg; return 0;
	case OPT_SSH_USER: cli->lib.ssh_user = arg; return 0;
	case OPT_SSH_KEY: cli->lib.ssh_key = arg; return 0;
	case OPT_SSH_PASSWORD_FILE: cli->lib.ssh_password_file = arg; return 0;
	case OPT_VM_MANAGER:
		if (strcmp(arg, "lume-api") == 0)
			cli->lib.vm_manager = LM_VM_MANAGER_LUME_API;
		else if (strcmp(arg, "lume-cli") == 0)
			cli->lib.vm_manager = LM_VM_MANAGER_LUME_CLI;
		else if (strcmp(arg, "tart") == 0)
			cli->lib.vm_manager = LM_VM_MANAGER_TART;
		else if (strcmp(arg, "utm") == 0)
			cli->lib.vm_manager = LM_VM_MANAGER_UTM;
		else if (strcmp(arg, "none") == 0)
			cli->lib.vm_manager = LM_VM_MANAGER_NONE;
		else if (strcmp(arg, "auto") == 0)
			cli->lib.vm_manager = LM_VM_MANAGER_AUTO;
		else
			return lm_cli_usage_error(cli, "%s: expected lume-api, lume-cli, tart, utm, none or auto, found '%s'",
			    source, arg);
		return 0;
	case OPT_HOST_PREFERENCE:
		if (lm_host_pref_mode_parse(arg, &cli->lib.host_preference) < 0)
			return lm_cli_usage_error(cli, "%s: expected always, auto or never, found '%s'", source, arg);
		return 0;
	case OPT_HOST_KEY_POLICY:
		if (strcmp(arg, "strict") == 0)
			cli->lib.host_key_policy = LM_HOST_KEY_STRICT;
		else if (strcmp(arg, "accept-new") == 0)
			cli->lib.host_key_policy = LM_HOST_KEY_ACCEPT_NEW;
		else
			return lm_cli_usage_error(cli, "%s: expected strict or accept-new, found '%s'", source, arg);
		return 0;
	case OPT_JOBS:
		if ((l = count_in(arg, 1, 64)) < 0)
			return lm_cli_usage_error(cli, "%s: expected a number of jobs in 1..64, found '%s'", source, arg);
		cli->jobs = (int)l;
		return 0;
	case OPT_TIMEOUT:
	case OPT_CONNECT_TIMEOUT:
		errno = 0;
		d = strtod(arg, &end);
		if (errno != 0 || *end != '\0' || end == arg || !(d > 0 && d <= 86400))
			return lm_cli_usage_error(cli, "%s: expected seconds in (0, 86400], found '%s'", source, arg);
		if (id == OPT_TIMEOUT)
			cli->lib.ready_timeout = d;
		else
			cli->lib.connect_timeout = d;
		return 0;
	case OPT_BOOT_MARGIN:
		errno = 0;
		d = strtod(arg, &end);
		if (errno != 0 || *end != '\0' || end == arg || !(d > 0 && d <= 3600))
			return lm_cli_usage_error(cli, "%s: expected seconds in (0, 3600], found '%s'", source, arg);
		cli->lib.boot_margin = d;
		return 0;
	default:
		return lm_cli_usage_error(cli, "%s: unexpected option", source);
	}
}

/* An unknown option, with the nearest one when it is a typo ("--dryrun", "--formt"). */
static int unknown_option(lm_cli *cli, const char *arg)
{
	const char *near = lm_cli_nearest_option(arg);

	if (near != NULL)
		return lm_cli_usage_error(cli, "unknown option '%s'; did you mean '--%s'? (lume-metal help options)", arg, near);
	return lm_cli_usage_error(cli, "unknown option '%s' (lume-metal help options lists the common ones, "
	    "lume-metal help COMMAND a command's own)", arg);
}

/* The command word among argv[1..end): the first that is neither an option nor a long option's
 * separate value, so that a usage error found among the options names its command (its JSON's
 * `command`) as one found after them does; "" when there is none. */
static const char *command_word_of(char **argv, int end)
{
	size_t k, n;
	int i;

	for (i = 1; i < end; i++) {
		if (argv[i][0] != '-' || argv[i][1] == '\0')
			return argv[i];
		if (argv[i][1] != '-' || strchr(argv[i], '=') != NULL)
			continue;
		n = strlen(argv[i] + 2);
		for (k = 0; k < N_OPTIONS; k++)
			if (strlen(options[k].name) == n && strcmp(options[k].name, argv[i] + 2) == 0 &&
			    options[k].has_arg == required_argument)
				i++;
	}
	return "";
}

int lm_cli_parse(lm_cli *cli, int argc, char **argv)
{
	struct option longopts[N_OPTIONS + 1];
	const char *val;
	char flag[64];
	int i, c, rc, dashdash = argc, help = 0;
	size_t k;

	memset(cli, 0, sizeof(*cli));
	cli->command = "";
	if (lm_options_init(&cli->lib, LM_OPTIONS_VERSION) < 0)
		return lm_cli_fail(cli, LM_EXIT_FAILURE);
	cli->lib.log = lm_cli_log;
	cli->lib.log_data = cli;
	cli->jobs = 1;

	/* Environment first, so that options override it. */
	for (k = 0; k < N_OPTIONS; k++) {
		if (options[k].env == NULL || (val = getenv(options[k].env)) == NULL || val[0] == '\0')
			continue;
		if ((rc = set_option(cli, options[k].id, val, options[k].env)) != 0)
			return rc;
	}

	/* `run VM -- CMD...`, `bench VM -- CMD...`: everything after the first "--" belongs to the guest command. */
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			dashdash = i;
			cli->cmd_argv = argv + i + 1;
			cli->cmd_argc = argc - i - 1;
			break;
		}
	}

	/* --format json (jsonl) anywhere before "--" holds for errors found before it is parsed, too. */
	for (i = 1; i < dashdash; i++) {
		const char *f = strcmp(argv[i], "--format") == 0 && i + 1 < dashdash ? argv[i + 1] :
		    strncmp(argv[i], "--format=", 9) == 0 ? argv[i] + 9 : "";
		if (strcmp(f, "json") == 0 || strcmp(f, "jsonl") == 0) {
			cli->json = 1;
			cli->jsonl = f[4] == 'l';
		}
	}

	for (k = 0; k < N_OPTIONS; k++) {
		longopts[k].name = options[k].name;
		longopts[k].has_arg = options[k].has_arg;
		longopts[k].flag = NULL;
		longopts[k].val = options[k].id;
	}
	memset(&longopts[N_OPTIONS], 0, sizeof(longopts[N_OPTIONS]));

	cli->command = command_word_of(argv, dashdash);
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(dashdash, argv, ":hqVitf", longopts, NULL)) != -1) {
		if (c == OPT_HELP) {
			help = 1; /* after the loop: the command's help when a command is named */
			continue;
		}
		if (c == 'q')
			c = OPT_QUIET;
		if (c == 'i' || c == 't')
			c = c == 'i' ? OPT_INTERACTIVE : OPT_TTY;
		if (c == 'f')
			c = OPT_FOLLOW;
		if (c == OPT_VERSION) {
			lm_cli_printf(stdout, "lume-metal %s\n", LUME_METAL_VERSION);
			return -1;
		}
		if (c == OPT_MAN) {
			cli->show = LM_CLI_SHOW_MAN;
			return 0;
		}
		/* A short option getopt does not know inside a cluster ("-rf"): getopt is still on that
		 * argument, so argv[optind - 1] is the one before it. */
		if (c == '?')
			return unknown_option(cli, optopt != 0 && optind < dashdash && argv[optind][0] == '-' &&
			    argv[optind][1] != '-' && strchr(argv[optind] + 1, optopt) != NULL ? argv[optind] : argv[optind - 1]);
		if (c == ':')
			return lm_cli_usage_error(cli, "option '%s' needs a value (see lume-metal --help)", argv[optind - 1]);
		for (k = 0; k < N_OPTIONS; k++)
			if (options[k].id == c)
				break;
		snprintf(flag, sizeof(flag), "--%s", k < N_OPTIONS ? options[k].name : "option");
		if ((rc = set_option(cli, c, optarg, flag)) != 0)
			return rc;
	}
	cli->color_on = lm_cli_color_wanted(cli->color, isatty(STDOUT_FILENO), getenv("NO_COLOR"), getenv("TERM"),
	    lm_cli_color_forced(getenv("CLICOLOR_FORCE"), getenv("FORCE_COLOR")));
	/* The words after the options: the command's, or (--help) what help is asked about. */
	cli->argv = argv + optind;
	cli->argc = dashdash - optind;
	if (help || optind >= dashdash) {
		cli->show = help ? LM_CLI_SHOW_HELP : LM_CLI_SHOW_USAGE;
		return 0;
	}
	cli->command = argv[optind];
	cli->argv++;
	cli->argc--;
	/* Only `run`, `bench` and `agent install` take a guest command; elsewhere "--" would hide options
	 * and names from the parser (`host enable -- --dry-run` must not change the preference). */
	if (dashdash < argc && strcmp(cli->command, "run") != 0 && strcmp(cli->command, "bench") != 0 &&
	    strcmp(cli->command, "agent") != 0 && strcmp(cli->command, "local") != 0)
		return lm_cli_usage_error(cli, "%s: '--' is only for run, bench and agent install (lume-metal run VM -- "
		    "CMD...); put options and names before it", cli->command);
	if (cli->lib.keep_host && strcmp(cli->command, "enable") != 0 &&
	    !(strcmp(cli->command, "host") == 0 && cli->argc == 1 && strcmp(cli->argv[0], "enable") == 0))
		return lm_cli_usage_error(cli, "%s: --keep and --keep-host are for host enable and enable", cli->command);
	if (cli->lib.host_preference != LM_HOST_PREF_ALWAYS && strcmp(cli->command, "enable") != 0)
		return lm_cli_usage_error(cli, "%s: --host-preference is for enable", cli->command);
	if ((cli->interactive || cli->tty) && strcmp(cli->command, "run") != 0)
		return lm_cli_usage_error(cli, "%s: -i (--interactive) and -t (--tty) are for run", cli->command);
	if (cli->lib.take_over && strcmp(cli->command, "enable") != 0 && strcmp(cli->command, "rollback") != 0)
		return lm_cli_usage_error(cli, "%s: --take-over is for enable and rollback", cli->command);
	if (cli->lib.restore_host && strcmp(cli->command, "rollback") != 0)
		return lm_cli_usage_error(cli, "%s: --restore-host is for rollback; the guest's address is --address IP",
		    cli->command);
	return 0;
}

/* The tables, for help, the suggestions and the completion scripts (help.c, completion.c). */
const char *lm_cli_option_env(size_t i)
{
	return i < N_OPTIONS ? options[i].env : NULL;
}

const char *lm_cli_option_at(size_t i, const char **arg, const char **help)
{
	if (i >= N_OPTIONS)
		return NULL;
	if (arg != NULL)
		*arg = options[i].arg;
	if (help != NULL)
		*help = options[i].help;
	return options[i].name;
}

const char *lm_cli_command_at(size_t i, const char **summary)
{
	size_t k;

	for (k = 0; command_help[k] != NULL; k += 2)
		if (k / 2 == i) {
			if (summary != NULL)
				*summary = command_help[k + 1];
			return command_help[k];
		}
	return NULL;
}

/* The nearest option to an unknown one: a typo within two edits, or the one option a prefix
 * starts ("--dry" is getopt's own abbreviation; "--dryrun" is a typo). */
const char *lm_cli_nearest_option(const char *arg)
{
	static _Thread_local char found[48];
	const char *best = NULL;
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
	for (i = 0; i < N_OPTIONS; i++) {
		d = lm_cli_distance(word, options[i].name, 2);
		if (d < best_d && d < n && d < strlen(options[i].name)) {
			best_d = d;
			best = options[i].name;
		}
	}
	if (best == NULL)
		return NULL;
	snprintf(found, sizeof(found), "%s", best);
	return found;
}
