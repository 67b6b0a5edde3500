/* Output: JSON documents (the library renders them), errors with hints, progress lines, and the
 * callbacks the library reports through. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

void lm_cli_puts(FILE *out, const char *text)
{
	char *clean;

	if (text == NULL)
		text = "";
	if ((clean = lm_text_printable(text)) != NULL) {
		fputs(clean, out);
		lm_free(clean);
		return;
	}
	/* Out of memory (the message may say so): the text all the same, never raw, allocating
	 * nothing; every byte outside printable ASCII, lines and tabs shown as \xNN. */
	for (; *text != '\0'; text++) {
		unsigned char c = (unsigned char)*text;

		if ((c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t')
			fputc(c, out);
		else
			fprintf(out, "\\x%02x", c);
	}
}

void lm_cli_printf(FILE *out, const char *fmt, ...)
{
	char line[1024], *text = line;
	va_list ap;
	int n;

	/* Most lines fit on the stack: an error line is printed even when memory has run out. */
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line)) {
		if ((text = malloc((size_t)n + 1)) != NULL) {
			va_start(ap, fmt);
			vsnprintf(text, (size_t)n + 1, fmt, ap);
			va_end(ap);
		} else {
			text = line; /* what fits, marked as cut */
			memcpy(line + sizeof(line) - 5, "...\n", 5);
		}
	}
	lm_cli_puts(out, text);
	if (text != line)
		free(text);
}

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
	env.hint = error_code != 0 ? lm_cli_hint(cli, error_code) : NULL;
	return env;
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
		lm_cli_printf(stderr, "lume-metal: cannot render the JSON document: %s\n", lm_error_last()->message);
		lm_free(doc);
		return;
	}
	fputs(doc, stdout);
	fflush(stdout);
	lm_free(doc);
}

/* The advice for an error code: which option or command helps. The library's messages state the
 * facts; this is the one place that knows the tool's options. "{vm}" stands for the VM named on
 * the command line; `only` limits a hint to one command, `not` keeps it from some. */
static const struct {
	int code;
	const char *only, *not;
	const char *text;
} hints[] = {
	{LM_EHOSTKEY, NULL, NULL, "if the VM was re-created, forget its old key with `lume-metal forget-host {vm}` "
	    "and connect again; with --host-key-policy strict, a new VM's key is recorded by one connection with "
	    "--host-key-policy accept-new"},
	{LM_EAUTH, NULL, NULL, "load a key into ssh-agent, pass --ssh-key FILE (ed25519 or ECDSA), or give the "
	    "password in $LUME_METAL_SSH_PASSWORD or a file named by --ssh-password-file FILE"},
	{LM_ECONFLICT, NULL, NULL, "use the same --prefs-dir as the run that changed the preference; `lume-metal "
	    "rollback` of the enabled VMs restores it after the last one; --force restores it anyway; `lume-metal "
	    "host status` shows what is recorded"},
	{LM_ECORRUPT, NULL, NULL, "a damaged state file: fix it by hand (docs/state-format.md), or start afresh "
	    "with `mv state.json state.json.bad` in the state directory (--state-dir) and check the preference with "
	    "`lume-metal host status`, since its original value is then forgotten; a guest whose bundle differs: "
	    "`lume-metal enable {vm}` repairs it"},
	{LM_ENOTENABLED, NULL, NULL, "run `lume-metal enable {vm}` first"},
	{LM_ENOTRUNNING, NULL, NULL, "start the VM, or run `lume-metal enable {vm}`, which starts it"},
	{LM_ENOBUNDLE, NULL, NULL, "build the guest bundles (cmake --build) and install them, or pass --bundle DIR"},
	{LM_ENOTFOUND, NULL, "profile host", "check the VM's name (lume ls, tart list, utmctl list); to reach Lume, "
	    "start `lume serve` or pass --lume-url URL, or put `lume` on PATH or pass --lume PATH; Tart and UTM: put "
	    "`tart` or `utmctl` on PATH or pass --tart PATH / --utmctl PATH; a VM no manager runs: --vm-manager none "
	    "--host IP; without HOME, pass --state-dir DIR"},
	{LM_EAMBIGUOUS, NULL, NULL, "choose the VM's manager with --vm-manager lume-api, lume-cli, tart or utm"},
	{LM_ENOADDRESS, NULL, NULL, "give the guest's IPv4 address with --host IP"},
	{LM_EUNSUPPORTED, "enable", NULL, "report the guest's version with the output of `lume-metal probe {vm}`"},
	{LM_ELOCKED, NULL, NULL, "another lume-metal is working on the same state or VM; wait for it and try "
	    "again (without --no-wait, lume-metal waits by itself)"},
	{LM_EVMOWNER, NULL, NULL, "let lume-metal use the Lume API instead: start `lume serve` (or pass --lume-url "
	    "with the address it listens on), and do not force --vm-manager lume-cli"},
	{LM_EWRONGUSER, NULL, NULL, "run lume-metal as the user the Lume server runs as; --force-user-mismatch "
	    "writes it anyway: dangerous, see docs/preferences.md"},
	{LM_ECANCELED, NULL, NULL, "what the command had done is undone (see the message); run it again to finish"},
	{LM_ENETWORK, NULL, NULL, "Lume: start `lume serve` or pass --lume-url URL; UTM from an SSH session or "
	    "before login: run lume-metal in the logged-in user's session (a LaunchAgent), or pass --vm-manager none "
	    "--host IP"},
	{LM_ENOTPROVEN, NULL, NULL, "stop and start the VM so that it reads the preference now in effect, check "
	    "with `lume-metal host status` that the Lume server runs as the user whose preference was written, "
	    "then enable again; `lume-metal probe {vm} --exercise` shows each kernel's result"},
};

static int word_in(const char *word, const char *list)
{
	size_t n = strlen(word);
	const char *p;

	for (p = list; (p = strstr(p, word)) != NULL; p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' '))
			return 1;
	return 0;
}

const char *lm_cli_hint(const lm_cli *cli, int code)
{
	static _Thread_local char hint[512];
	const char *vm = cli->argc > 0 && !word_in(cli->command, "profile host") ? cli->argv[0] : "VM";
	const char *text, *at;
	size_t i;

	for (i = 0; i < sizeof(hints) / sizeof(hints[0]); i++) {
		if (hints[i].code != code || (hints[i].only != NULL && !word_in(cli->command, hints[i].only)) ||
		    (hints[i].not != NULL && word_in(cli->command, hints[i].not)))
			continue;
		text = hints[i].text;
		if ((at = strstr(text, "{vm}")) == NULL)
			return text;
		snprintf(hint, sizeof(hint), "%.*s%s%s", (int)(at - text), text, vm, at + 4);
		return hint;
	}
	return NULL;
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
	if (cli != NULL && (hint = lm_cli_hint(cli, code)) != NULL)
		lm_cli_printf(stderr, "hint: %s\n", hint);
	return exit_code;
}

int lm_cli_fail(lm_cli *cli, int exit_code)
{
	const lm_error *e = lm_error_last();

	return lm_cli_report(cli, exit_code, e->code != 0 ? e->code : LM_ERROR, e->message[0] ? e->message : "failed");
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
		    cli->command, now_epoch(), &line) == 0) {
			fputs(line, stdout);
			fflush(stdout);
		}
		lm_free(line);
		return;
	}
	if (ev->state == LM_STEP_WAITING) {
		lm_cli_progress_wait(cli, ev);
		return;
	}
	if (!cli->progress || cli->quiet)
		return;
	lm_cli_progress_clear(cli);
	if (ev->state == LM_STEP_STARTED)
		lm_cli_printf(stderr, "%s%s%s ...\n", ev->vm, ev->vm[0] ? ": " : "", ev->name);
	else
		lm_cli_printf(stderr, "%s%s%s %s (%.2f s)%s%s\n", ev->vm, ev->vm[0] ? ": " : "", ev->name,
		    ev->state == LM_STEP_DONE ? "done" : "FAILED", ev->elapsed, ev->detail[0] ? ": " : "", ev->detail);
}

static void write_all(int fd, const char *bytes, size_t len)
{
	ssize_t n;

	while (len > 0) {
		n = write(fd, bytes, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		bytes += n;
		len -= (size_t)n;
	}
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

/* on_output: a run's guest output, to our stdout/stderr, or into the JSON document. */
static void on_output(void *data, const char *vm, int stream, const char *bytes, size_t len)
{
	lm_cli *cli = data;

	(void)vm;
	if (!cli->json)
		write_all(stream == 2 ? STDERR_FILENO : STDOUT_FILENO, bytes, len);
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
	cli->live.tty = isatty(STDERR_FILENO);
	cli->progress = cli->verbose || (!cli->json && cli->live.tty);
	if (lm_context_new(out, &cli->lib) < 0)
		return lm_cli_fail(cli, LM_EXIT_FAILURE);
	return 0;
}
