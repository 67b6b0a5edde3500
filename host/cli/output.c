/* Output: JSON documents (the library renders them), errors with hints, progress lines, and the
 * callbacks the library reports through (text reaches a stream through print.c). */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

void lm_cli_iso_time(double t, char *buf, size_t size)
{
	time_t tt;
	struct tm tm;

	/* In range before the conversion (a double out of time_t's range converted is undefined). */
	if (!(t >= 0 && t <= 253402300799.0) || (tt = (time_t)t, gmtime_r(&tt, &tm) == NULL) ||
	    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, size, "unknown");
}

lm_json_envelope lm_cli_envelope(const lm_cli *cli, int exit_code, int error_code, const char *message)
{
	lm_json_envelope env;

	memset(&env, 0, sizeof(env));
	env.command = cli->json_command != NULL ? cli->json_command : cli->command;
	env.exit_code = exit_code;
	env.dry_run = cli->lib.dry_run;
	env.error_code = error_code;
	env.error_message = message;
	env.hint = error_code != 0 ? lm_cli_hint_about(cli, error_code, NULL, message) : NULL;
	return env;
}

/* A document that could not be rendered whole was not printed: the command fails (main.c). */
static int document_failed;

int lm_cli_document_failed(void)
{
	return document_failed;
}

void lm_cli_print_document(const lm_cli *cli, int rc, char *doc)
{
	char *line = NULL;

	/* JSON Lines: the document is the stream's last line. */
	if (rc >= 0 && doc != NULL && cli != NULL && cli->jsonl && (rc = lm_json_one_line(doc, &line)) >= 0) {
		lm_free(doc);
		doc = line;
	}
	if (rc < 0 || doc == NULL) {
		document_failed = 1;
		lm_cli_printf(stderr, "lume-metal: cannot render the JSON document: %s\n", lm_error_last()->message);
		lm_free(doc);
		return;
	}
	if (lm_cli_output_write(1, doc, strlen(doc)) < 0)
		lm_cli_output_end();
	lm_free(doc);
}

/* Hints said for more than one cause. */
#define HINT_STATE_FILE "fix the file by hand (docs/state-format.md), or start afresh with `mv state.json " \
	"state.json.bad` in the state directory (--state-dir), then check `lume-metal host status`"
#define HINT_GUEST_FILES "`lume-metal enable {vm}` reinstalls the guest's files"
#define HINT_VM_LIMIT "`lume ls` shows which VMs run: stop one you do not need (through Lume's API if `lume serve` " \
	"runs it: `lume stop` ends them all), then run the command again"
#define HINT_GUEST_VERSION "report the guest's version with the output of `lume-metal probe {vm}`"

/* The advice for an error: which option or command helps. The library's messages state the
 * facts; this is the one place that knows the tool's options. Each hint is about one cause: the
 * code, narrowed where one code has several causes by `about`, a phrase of the library's message
 * that names the cause (a VM no manager knows is not a program missing from PATH). "{vm}" stands
 * for the VM the error is about; `only` limits a hint to some commands, `not` keeps it from some. */
static const struct {
	int code;
	const char *about;
	const char *only, *not;
	const char *text;
} hints[] = {
	/* Any code (0): what an undo left behind comes before the failure's own advice. */
	{0, "the agent is left installed", "local", NULL, "`lume-metal local agent remove --label LABEL`, with the label "
	    "above, removes it"},
	{0, "the agent is left installed", "agent", NULL, "`lume-metal agent remove {vm} LABEL`, with the label above, or "
	    "`lume-metal rollback {vm}` removes it"},
	{0, "the journal could not be put back", "agent", NULL, "`lume-metal agent list {vm}` shows what the journal "
	    "says"},
	{LM_ENOTFOUND, "installed no agent", "agent", NULL, "`lume-metal agent list {vm}` lists the VM's agents"},
	{LM_EINVALID, "is not one lume-metal expands", NULL, NULL, "give the key with --ssh-key FILE"},
	{LM_EINVALID, "state directory", NULL, NULL, "give the directory with --state-dir DIR or LUME_METAL_STATE_DIR=DIR"},
	{0, "the lume-cli VM manager", NULL, NULL, "--vm-manager lume-cli uses Lume's command line"},
	{LM_ECONFLICT, "the ablation turns it off", "bench", NULL, "pass --force to ablate anyway"},
	{LM_EHARDENED, "is a script", NULL, NULL, "--resign-copy re-signs a program: give the interpreter as the program "
	    "and the script as its argument, or --run-hardened-stock to start it anyway, expected to run stock"},
	{LM_ENOBUNDLE, "nothing is installed", "local", NULL, "install it first with `lume-metal local install` (as "
	    "root for /usr/local), or give the --prefix it was installed with"},
	{LM_ECORRUPT, "installed bundle", "local", NULL, "`lume-metal local install` (with the same --prefix) replaces "
	    "it"},
	{LM_EINVALID, "symbolic link", "local", NULL, "give the link's target as --prefix DIR"},
	/* The probe's words when MTLCreateSystemDefaultDevice returns nothing (docs/guest.md): GitHub's
	 * Intel images sometimes have no Metal device (reference/metal.md, actions/runner-images #1779). */
	{LM_EREMOTE, "Metal device unavailable", "local", NULL, "this machine has no Metal device at all (some Intel "
	    "runner images have none): there is nothing to unlock here; run the workload on the CPU, or on an Apple "
	    "silicon image"},
	{LM_EHOSTKEY, NULL, NULL, NULL, "if {vm} was re-created or made new host keys (compare them first), forget its "
	    "old key with `lume-metal forget-host {vm}` and connect again"},
	{LM_EAUTH, NULL, NULL, NULL, "load a key into ssh-agent, pass --ssh-key FILE (ed25519 or ECDSA), or give the "
	    "password in $LUME_METAL_SSH_PASSWORD or a file named by --ssh-password-file FILE"},
	{LM_ECONFLICT, NULL, NULL, NULL, "`lume-metal host status` shows what is recorded; use the --prefs-dir of the run "
	    "that changed it, or --force to restore it anyway"},
	/* Each damaged file its own advice (issue 49 item 9: the host's plist got the guest's, a missing
	 * bundle the journal's). */
	{LM_ECORRUPT, "state journal", NULL, NULL, HINT_STATE_FILE},
	{LM_ECORRUPT, "the state file", NULL, NULL, HINT_STATE_FILE},
	{LM_ECORRUPT, "preferences file", NULL, NULL, "lume-metal changes nothing in a preferences file it cannot "
	    "read: look at it with `plutil -p FILE`, repair it or move it away (macOS then reads the preference as "
	    "unset), then check `lume-metal host status`"},
	{LM_ECORRUPT, "installed bundle", NULL, NULL, HINT_GUEST_FILES},
	{LM_ECORRUPT, "does not match its manifest", NULL, NULL, HINT_GUEST_FILES},
	/* A journal rollback cannot write: its intent first (nothing changed) or its end (issue 49). */
	{LM_EIO, "state.json: cannot write", "rollback", NULL, "make room on the state directory's disk (or make the "
	    "directory writable: --state-dir names it), then run `lume-metal rollback {vm}` again: it finishes what "
	    "was begun"},
	{LM_ENOTENABLED, NULL, NULL, NULL, "run `lume-metal enable {vm}` first"},
	{LM_ENOTRUNNING, NULL, NULL, NULL, "start the VM, or run `lume-metal enable {vm}`, which starts it"},
	/* A start Lume accepted at Apple's limit of two running VMs (issue 49). `lume stop` of a VM
	 * `lume serve` runs ends the server and all its VMs (reference/lume.md). */
	{LM_ERROR, "no slot available", NULL, NULL, HINT_VM_LIMIT},
	{LM_ERROR, "available_slots 0", NULL, NULL, HINT_VM_LIMIT},
	{LM_ENOBUNDLE, NULL, NULL, NULL, "build and install the guest bundles (cmake --build, cmake --install), or pass "
	    "--bundle DIR"},
	{LM_ENOTFOUND, "no VM manager knows", NULL, NULL, "check the name: `lume ls`, `tart list` or `utmctl list` lists "
	    "the VMs; a VM no manager runs: --vm-manager none --address IP"},
	{LM_ENOTFOUND, "has no such VM", NULL, NULL, "check the name: `lume ls`, `tart list` or `utmctl list` lists the VMs"},
	{LM_ENOTFOUND, "Virtual machine not found", NULL, NULL, "check the name: `lume ls` lists Lume's VMs"},
	{LM_ENOTFOUND, "no VM manager found", NULL, NULL, "start `lume serve` (or pass --lume-url URL), or put lume, tart "
	    "or utmctl on PATH; a VM no manager runs: --vm-manager none --address IP"},
	{LM_ENOTFOUND, "program was not found", NULL, NULL, "install it, or give its path with --lume, --tart or --utmctl"},
	{LM_ENOTFOUND, "not found in the guest", NULL, NULL, "install the program in {vm}, or give its absolute path after --"},
	{LM_ENOTFOUND, "HOME is not set", NULL, NULL, "set HOME, or pass --state-dir DIR"},
	{LM_ENOTFOUND, "no built-in profile", NULL, NULL, "`lume-metal profile list` lists the built-in profiles"},
	{LM_EAMBIGUOUS, NULL, NULL, NULL, "choose the manager with --vm-manager lume-api, lume-cli, tart or utm"},
	{LM_ENOADDRESS, NULL, NULL, NULL, "give the guest's IPv4 address with --address IP"},
	/* Only where the guest is the cause (not libcurl, a key file or a VM's state, issue 49 item 9). */
	{LM_EUNSUPPORTED, "guest unsupported", "enable", NULL, HINT_GUEST_VERSION},
	{LM_EUNSUPPORTED, "the guest's probe", "enable", NULL, HINT_GUEST_VERSION},
	{LM_EUNSUPPORTED, "the probe does not confirm", "enable", NULL, HINT_GUEST_VERSION},
	{LM_ELOCKED, NULL, NULL, NULL, "wait for the other lume-metal named above and try again (without --no-wait, "
	    "lume-metal waits by itself)"},
	{LM_EVMOWNER, NULL, NULL, NULL, "start `lume serve` (or pass --lume-url URL) so that lume-metal uses the Lume API, "
	    "and do not force --vm-manager lume-cli"},
	{LM_EWRONGUSER, NULL, NULL, NULL, "run lume-metal as the user the Lume server runs as; --force-user-mismatch "
	    "writes it anyway: dangerous, see docs/preferences.md"},
	/* run after ^C: no advice, as `tart exec` gives none; the message says how the workload ended. */
	{LM_ECANCELED, NULL, NULL, "run", "what the command had done is undone (see the message); run it again to finish"},
	{LM_EHARDENED, NULL, NULL, NULL, "pass --resign-copy to run a copy re-signed ad hoc with the entitlements "
	    "com.apple.security.cs.allow-dyld-environment-variables and com.apple.security.cs.disable-library-validation "
	    "(the original untouched), or --run-hardened-stock to start it anyway, expected to run stock (docs/guest.md)"},
	{LM_ENEWER, NULL, NULL, NULL, "upgrade lume-metal to the version that wrote it, or a newer one (`lume-metal "
	    "--version` shows this one's); an older lume-metal never changes a newer one's state"},
	/* Issue 49, defect 12: another state directory's guest files. */
	{LM_EOTHERSTATE, NULL, "enable", NULL, "run it with the state directory named above (--state-dir DIR or "
	    "LUME_METAL_STATE_DIR=DIR), or roll {vm} back there first; if that directory is gone for good, "
	    "`lume-metal enable {vm} --take-over` makes this one the files' owner"},
	{LM_EOTHERSTATE, NULL, "rollback", NULL, "roll {vm} back with the state directory named above (--state-dir DIR "
	    "or LUME_METAL_STATE_DIR=DIR); this one's rollback then finds nothing left and forgets {vm}. If that "
	    "directory is gone for good, `lume-metal rollback {vm} --take-over` removes the files anyway"},
	{LM_ENOSHIM, NULL, NULL, NULL, "the lines above say what each process that loaded the shim asked and why no "
	    "answer was widened; without --require-shim the run ends with the workload's own status"},
	{LM_ENETWORK, NULL, NULL, NULL, "Lume: start `lume serve` or pass --lume-url URL; UTM from an SSH session or "
	    "before login: run lume-metal in the logged-in user's session (a LaunchAgent), or pass --vm-manager none "
	    "--address IP"},
	{LM_ENOTPROVEN, NULL, "local", NULL, "the kernels the profile needs do not run here with the shim alone; "
	    "nothing inside this VM changes that, the host preference (set on the host before the VM starts: "
	    "lume-metal host enable) may on some hosts and guests. A CI job takes exit code 4 as a clear skip of the "
	    "fast path"},
	{LM_ENOTPROVEN, "host preference mode never", "enable", NULL, "the host was left as it is, as asked: "
	    "`lume-metal enable {vm} --host-preference auto` sets the preference and restarts {vm} only when the "
	    "kernels fail with the shim alone; exit code 4 is a clear skip of the fast path"},
	{LM_ENOTPROVEN, NULL, NULL, "local", "stop and start the VM so that it reads the preference (`lume-metal host "
	    "status`: written for the Lume server's user?), then enable again; `lume-metal probe {vm} --exercise` shows "
	    "each kernel"},
	{LM_ETIMEOUT, "ready", NULL, NULL, "check that {vm} boots (`lume run {vm}` shows its console); a slow boot: "
	    "--timeout SECONDS"},
};

static int word_in(const char *word, const char *list)
{
	size_t n = strlen(word);
	const char *p;

	if (n == 0) /* no command yet (an option refused while parsing): strstr would find "" forever */
		return 0;
	for (p = list; (p = strstr(p, word)) != NULL; p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' '))
			return 1;
	return 0;
}

/* Every {vm} in text replaced by vm, into buf (cut visibly if it does not fit). */
static const char *with_vm(const char *text, const char *vm, char *buf, size_t size)
{
	size_t k = 0, n = strlen(vm);
	const char *p;

	for (p = text; *p != '\0' && k + 1 < size; p++) {
		if (strncmp(p, "{vm}", 4) == 0) {
			snprintf(buf + k, size - k, "%s", vm);
			k = k + n < size - 1 ? k + n : size - 1;
			p += 3;
		} else {
			buf[k++] = *p;
		}
	}
	buf[k] = '\0';
	if (*p != '\0' && size > 4)
		memcpy(buf + size - 4, "...", 4);
	return buf;
}

const char *lm_cli_hint_about(const lm_cli *cli, int code, const char *vm, const char *message)
{
	static _Thread_local char hint[640];
	size_t i;

	if (vm == NULL || vm[0] == '\0')
		vm = cli->argc > 0 && !word_in(cli->command, "profile host agent") ? cli->argv[0] :
		    cli->argc > 1 && strcmp(cli->command, "agent") == 0 ? cli->argv[1] : "VM";
	for (i = 0; i < sizeof(hints) / sizeof(hints[0]); i++) {
		if ((hints[i].code != 0 && hints[i].code != code) || (hints[i].only != NULL && !word_in(cli->command, hints[i].only)) ||
		    (hints[i].not != NULL && word_in(cli->command, hints[i].not)) ||
		    (hints[i].about != NULL && (message == NULL || strstr(message, hints[i].about) == NULL)))
			continue;
		return with_vm(hints[i].text, vm, hint, sizeof(hint));
	}
	return NULL;
}

const char *lm_cli_hint(const lm_cli *cli, int code)
{
	return lm_cli_hint_about(cli, code, NULL, lm_error_last()->message);
}

int lm_cli_report(lm_cli *cli, int exit_code, int code, const char *message)
{
	lm_json_envelope env;
	const char *hint;
	char *doc = NULL;
	int rc;

	if (cli != NULL && cli->json) {
		env = lm_cli_envelope(cli, exit_code, code, message);
		rc = lm_json_error(&env, &doc);
		lm_cli_print_document(cli, rc, doc);
	}
	if (cli != NULL)
		lm_cli_progress_clear(cli);
	/* One prefix: a message that already names the tool is not given a second one. */
	if (strncmp(message, "lume-metal: ", 12) == 0)
		message += 12;
	lm_cli_printf(stderr, "lume-metal: %s\n", message);
	if (cli != NULL && (hint = lm_cli_hint_about(cli, code, NULL, message)) != NULL)
		lm_cli_printf(stderr, "hint: %s\n", hint);
	return exit_code;
}

int lm_cli_fail(lm_cli *cli, int exit_code)
{
	const lm_error *e = lm_error_last();

	return lm_cli_report(cli, lm_cli_exit_of(e->code, exit_code), e->code != 0 ? e->code : LM_ERROR,
	    e->message[0] ? e->message : "failed");
}

int lm_cli_exit_of(int code, int otherwise)
{
	/* Its own code whatever the command: the whole state is unreadable to this version. */
	return code == LM_ENEWER ? LM_EXIT_NEWER : otherwise;
}

int lm_cli_usage_error(lm_cli *cli, const char *fmt, ...)
{
	char message[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(message))
		memcpy(message + sizeof(message) - 4, "...", 4); /* cut, visibly */
	return lm_cli_report(cli, LM_EXIT_USAGE, LM_EINVALID, message);
}

void lm_cli_log(void *data, lm_log_level level, const char *line)
{
	lm_cli *cli = data;

	if (level == LM_LOG_DEBUG && !cli->verbose)
		return;
	if ((cli->json || cli->quiet) && level == LM_LOG_INFO)
		return;
	/* A fleet's informational lines (each VM's start and stop, first contacts) under --verbose: the
	 * run is one line per VM and the recap, as Ansible's; warnings stay. */
	if (cli->fleet && !cli->verbose && level == LM_LOG_INFO)
		return;
	lm_cli_progress_clear(cli);
	lm_cli_printf(stderr, "%s%s\n", level == LM_LOG_WARN ? "warning: " : "", line);
}

static double now_epoch(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* on_step: JSON Lines events on stdout (--format jsonl), or progress lines on stderr (stdout
 * keeps the result); waits are progress.c's. */
static void on_step(void *data, const lm_step_event *ev)
{
	lm_cli *cli = data;
	char *line = NULL;

	if (cli->jsonl) {
		if (ev->state != LM_STEP_WAITING && lm_step_event_to_json(ev, cli->json_command != NULL ? cli->json_command :
		    cli->command, now_epoch(), &line) == 0)
			(void)lm_cli_output_write(1, line, strlen(line)); /* failed: recorded; the command ends after */
		lm_free(line);
		return;
	}
	if (ev->state == LM_STEP_WAITING) {
		lm_cli_progress_wait(cli, ev);
		return;
	}
	if (!cli->progress || cli->quiet)
		return;
	/* On a terminal a step is its VM's live row while it runs (every VM of a fleet its own); the
	 * summary lists it once at the end. */
	if (cli->live.tty) {
		if (ev->state == LM_STEP_STARTED)
			lm_cli_progress_row(cli, ev->vm, "%s%s%s ...", ev->vm, ev->vm[0] ? ": " : "", ev->name);
		else
			lm_cli_progress_row_done(cli, ev->vm);
		return;
	}
	if (ev->state == LM_STEP_STARTED)
		lm_cli_printf(stderr, "%s%s%s ...\n", ev->vm, ev->vm[0] ? ": " : "", ev->name);
	else
		lm_cli_printf(stderr, "%s%s%s %s (%.2f s)%s%s\n", ev->vm, ev->vm[0] ? ": " : "", ev->name,
		    ev->state == LM_STEP_DONE ? "done" : "FAILED", ev->elapsed, ev->detail[0] ? ": " : "", ev->detail);
}

static void collect(lm_cli *cli, char **buf, size_t *len, const char *bytes, size_t n)
{
	char *p;

	if (cli->output_lost)
		return;
	if ((p = realloc(*buf, *len + n + 1)) == NULL) {
		cli->output_lost = 1;
		return;
	}
	memcpy(p + *len, bytes, n);
	*len += n;
	p[*len] = '\0';
	*buf = p;
}

/* on_output: a run's guest output, to our stdout/stderr, or into the JSON document. Once a write
 * has failed (a closed stdout, a pipe whose reader left while SIGPIPE is ignored, a full disk),
 * nothing more is written (print.c): cmd_run.c stops the workload and fails with that errno. */
static void on_output(void *data, const char *vm, int stream, const char *bytes, size_t len)
{
	lm_cli *cli = data;

	(void)vm;
	if (!cli->json)
		(void)lm_cli_output_write(stream == 2 ? 2 : 1, bytes, len);
	else if (stream == 2)
		collect(cli, &cli->err_bytes, &cli->err_len, bytes, len);
	else
		collect(cli, &cli->out_bytes, &cli->out_len, bytes, len);
}

int lm_cli_context(lm_cli *cli, lm_context **out)
{
	cli->lib.on_step = on_step;
	cli->lib.on_output = on_output;
	cli->lib.should_cancel = lm_cli_should_cancel; /* interrupt.c: SIGINT and SIGTERM */
	cli->lib.callback_data = cli;
	cli->live.tty = isatty(STDERR_FILENO) && !lm_cli_term_dumb(); /* TERM=dumb: plain lines, no escapes */
	cli->progress = cli->verbose || (!cli->json && cli->live.tty);
	if (lm_context_new(out, &cli->lib) < 0)
		return lm_cli_fail(cli, LM_EXIT_FAILURE);
	return 0;
}
