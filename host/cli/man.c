/* The man page (lume-metal --man, roff): the tables of options.c and help.c's examples, read
 * through their accessors as help.c reads them, and the sections only the man page has. */
#include <stdio.h>

#include "cli.h"

/* ENVIRONMENT besides the options' own variables. */
static const char *const environment_help[] = {
	"LUME_METAL_SSH_PASSWORD", "The guest's password (never in argv, never printed, never passed to a child).",
	"NO_COLOR", "Any non-empty value: no colour (https://no-color.org); --color always still colours.",
	"CLICOLOR_FORCE", "Set and not 0: colour off a terminal too (https://bixense.com/clicolors/), unless NO_COLOR.",
	"FORCE_COLOR", "Set, not empty and not 0: colour off a terminal too (https://force-color.org), unless NO_COLOR.",
	"TERM", "dumb: no colour and no live line redrawn in place.",
	"COLUMNS", "The width help is wrapped to; default: the terminal's, 80 when not a terminal.",
	"XDG_STATE_HOME", "Where the state directory is by default ($XDG_STATE_HOME/lume-metal).",
	NULL,
};

static const char *const files_help[] = {
	"~/.local/state/lume-metal/state.json", "The journal: the preference's original value, every enabled VM "
	    "(~/Library/Application Support/lume-metal on macOS; --state-dir).",
	"~/.local/state/lume-metal/known_hosts", "The guests' pinned SSH host keys (forget-host, gc).",
	"~/.local/state/lume-metal/identity", "The state directory's identity, made by its first enable: the guest "
	    "files it installs name it as their owner.",
	"~/.local/share/lume-metal/owner.json", "In the guest: the state directory that installed its files; enable "
	    "and rollback from another are refused, naming it (--take-over).",
	"~/Library/Preferences/com.apple.gpusw.ParavirtualizedGraphics.plist", "The host preference lume-metal "
	    "sets and restores.",
	"<prefix>/share/lume-metal/bundles", "The guest bundles (shim, probe, manifest) installed into the guests.",
	NULL,
};

/* roff-safe: a leading '.' or '\'' and backslashes would be read as requests. */
static void roff_text(FILE *out, const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s == '\\')
			fputs("\\e", out);
		else if (*s == '-')
			fputs("\\-", out);
		else
			fputc(*s, out);
	}
}

/* One tagged paragraph: the term in bold (font 'B') or italics ('I'), then its text. */
static void roff_item(FILE *out, char font, const char *term, const char *text)
{
	fprintf(out, ".TP\n.%c ", font);
	roff_text(out, term);
	fputc('\n', out);
	roff_text(out, text);
	fputc('\n', out);
}

void lm_cli_man(FILE *out)
{
	const char *name, *arg, *text, *env;
	size_t i;

	fprintf(out, ".TH LUME-METAL 1 \"\" \"lume-metal %s\" \"User Commands\"\n", LUME_METAL_VERSION);
	fprintf(out, ".SH NAME\nlume\\-metal \\- unlock Metal capabilities in macOS VMs\n");
	fprintf(out, ".SH SYNOPSIS\n.B lume\\-metal\n\\fICOMMAND\\fR [\\fIARGS\\fR] [\\fIOPTIONS\\fR]\n");
	fprintf(out, ".SH COMMANDS\n");
	for (i = 0; (name = lm_cli_command_at(i, &text)) != NULL; i++)
		roff_item(out, 'B', name, text);
	fprintf(out, ".SH OPTIONS\n");
	for (i = 0; (name = lm_cli_option_at(i, &arg, &text)) != NULL; i++) {
		fprintf(out, ".TP\n.B \\-\\-");
		roff_text(out, name);
		if (arg != NULL) {
			fputs(" \\fI", out);
			roff_text(out, arg);
			fputs("\\fR", out);
		}
		fputc('\n', out);
		roff_text(out, text);
		if ((env = lm_cli_option_env(i)) != NULL) {
			fputs(" Environment: ", out);
			roff_text(out, env);
			fputc('.', out);
		}
		fputc('\n', out);
	}
	fprintf(out, ".SH EXAMPLES\n");
	for (i = 0; (name = lm_cli_example_at(i, NULL, &text)) != NULL; i++)
		roff_item(out, 'B', name, text);
	fprintf(out, ".SH ENVIRONMENT\n");
	for (i = 0; (name = lm_cli_option_at(i, NULL, NULL)) != NULL; i++) {
		if ((env = lm_cli_option_env(i)) == NULL)
			continue;
		fprintf(out, ".TP\n.B ");
		roff_text(out, env);
		fprintf(out, "\nThe same as \\-\\-");
		roff_text(out, name);
		fputs("; the option wins.\n", out);
	}
	for (i = 0; environment_help[i] != NULL; i += 2)
		roff_item(out, 'B', environment_help[i], environment_help[i + 1]);
	fprintf(out, ".SH FILES\n");
	for (i = 0; files_help[i] != NULL; i += 2)
		roff_item(out, 'I', files_help[i], files_help[i + 1]);
	fprintf(out, ".SH EXIT STATUS\n");
	for (i = 0; (name = lm_cli_exit_at(i, &text)) != NULL; i++)
		roff_item(out, 'B', name, text);
	fprintf(out, ".SH SEE ALSO\n");
	roff_text(out, "lume(1), tart(1), ssh(1), launchctl(1), launchd.plist(5); the guides in "
	    "share/doc/lume-metal: lume-metal.md, json-output.md, profile-format.md, security.md.");
	fputc('\n', out);
}
