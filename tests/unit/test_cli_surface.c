/* The tool's own surface (host/cli/help.c, completion.c, output.c, color.c): the nearest command or
 * option to a mistyped one, the completion scripts made from the tables (driven through the real
 * shells in tests/e2e/cli.sh completion), each hint about its own cause and VM, when to colour,
 * and help wrapped to a width. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli.h"
#include "lm_test.h"

static void test_nearest(void **state)
{
	static const struct {
		const char *word, *want;
	} cases[] = {
		{"disable", "rollback"}, {"ls", "status"}, {"list", "status"}, {"undo", "rollback"},
		{"enabel", "enable"}, {"statsu", "status"}, {"stat", "status"}, {"prob", "probe"},
		{"rollbak", "rollback"}, {"agnet", "agent"}, {"doctr", "doctor"}, {"docter", "doctor"},
		{"forget", "forget-host"}, {"check", "doctor"}, {"exec", "run"},
		{"xyzzy", NULL}, {"", NULL}, {"frobnicate", NULL}, {"e", NULL},
	};
	size_t i;
	const char *got;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		got = lm_cli_nearest_command(cases[i].word);
		if (cases[i].want == NULL) {
			if (got != NULL)
				fail_msg("'%s': expected no suggestion, got '%s'", cases[i].word, got);
		} else if (got == NULL || strcmp(got, cases[i].want) != 0) {
			fail_msg("'%s': expected '%s', got '%s'", cases[i].word, cases[i].want, got ? got : "(none)");
		}
	}
}

static char *script(const char *shell)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	lm_assert_ok(lm_cli_completion(shell, f));
	fclose(f);
	return buf;
}

/* Every option and every command of the tables is in every script. */
static void test_completion_covers_tables(void **state)
{
	static const char *const shells[] = {"bash", "zsh", "fish"};
	char word[80];
	const char *name, *usage;
	size_t s, i;

	(void)state;
	for (s = 0; s < 3; s++) {
		char *text = script(shells[s]);
		for (i = 0; (name = lm_cli_option_at(i, NULL, NULL)) != NULL; i++) {
			snprintf(word, sizeof(word), s == 2 ? "-l %s" : "--%s", name);
			if (strstr(text, word) == NULL)
				fail_msg("%s script lacks option %s", shells[s], word);
		}
		for (i = 0; (usage = lm_cli_command_at(i, NULL)) != NULL; i++) {
			snprintf(word, sizeof(word), s == 2 ? "-a %.*s " : "%.*s)", (int)strcspn(usage, " "), usage);
			if (strstr(text, word) == NULL)
				fail_msg("%s script lacks command %s", shells[s], word);
		}
		free(text);
	}
}

static void test_completion_details(void **state)
{
	/* What each script must say: {shell, text}. */
	static const char *const want[][2] = {
		{"bash", "complete -F _lume_metal lume-metal\n"},
		{"bash", "--format) COMPREPLY=($(compgen -W \"text json jsonl markdown\" -- \"$cur\")); return ;;"},
		{"bash", "--color) COMPREPLY=($(compgen -W \"auto always never\" -- \"$cur\")); return ;;"},
		/* Option values are no positional words: `--format json` is not the command. */
		{"bash", "--format|--label|"},
		{"bash", "profile) subs=\"list show lint\" ;;"},
		{"bash", "agent) subs=\"install remove list logs\" ;;"},
		{"bash", "'agent install') if [[ $npos == 0 ]]; then COMPREPLY+=($(compgen -W \"$(_lume_metal_vms)\""},
		{"bash", "compgen -W \"bash zsh fish\""},
		{"bash", "\"${COMP_WORDS[0]}\" __complete vms 2>/dev/null"},
		/* Directories for DIR options, files for FILE and PATH ones. */
		{"bash", "compgen -d"}, {"bash", "compgen -f"},
		{"zsh", "#compdef lume-metal\n"},
		{"zsh", "--format) compadd -- text json jsonl markdown; return ;;"},
		{"zsh", "_files -/"},
		{"zsh", "_describe -t commands command cmds"},
		/* Whole descriptions, past the first sentence. */
		{"zsh", "'--format:Output format. json prints one document"},
		{"fish", "complete -c lume-metal -n '__lume_metal_at :0' -a agent -d "},
		{"fish", "complete -c lume-metal -n '__lume_metal_at \"agent:0\"' -a install -d "},
		{"fish", "complete -c lume-metal -n '__lume_metal_at \"agent install:0\"' -a '(__lume_metal_vms)'"},
		{"fish", "complete -c lume-metal -l format -x -a 'text json jsonl markdown'"},
		{"fish", "then the document on one line (for CI logs and dashboards). report: markdown (the default, the same as "
		    "text) or json (the results document, docs/results-report.md).'"},
		/* An option only some commands take is offered after those only. */
		{"fish", "complete -c lume-metal -l label -n '__fish_seen_subcommand_from agent local' -x"},
		/* Quotes in help texts are escaped for fish. */
		{"fish", "profile\\'s effect"},
	};
	FILE *null = fopen("/dev/null", "w");
	char *fish = script("fish"), *bash = script("bash");
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		char *text = script(want[i][0]);
		if (strstr(text, want[i][1]) == NULL)
			fail_msg("the %s script lacks: %s", want[i][0], want[i][1]);
		free(text);
	}
	lm_assert_not_contains(fish, "profile's effect");
	/* Each command once (bench has four usage lines), the old --host in none. */
	lm_assert_contains(bash, "compgen -W \"enable status probe run bench report rollback profile host forget-host gc agent "
	    "doctor selftest help version completion local\"");
	lm_assert_not_contains(bash, "--host ");
	lm_assert_not_contains(bash, "--host\"");
	assert_int_equal(lm_cli_completion("tcsh", null), -1);
	fclose(null);
	free(fish);
	free(bash);
}

/* A cli as lm_cli_parse leaves it for `lume-metal COMMAND ARGS...`. */
static void fake_cli(lm_cli *cli, const char *command, char **argv, int argc)
{
	memset(cli, 0, sizeof(*cli));
	cli->command = command;
	cli->argv = argv;
	cli->argc = argc;
}

/* Each hint is about its own cause and its own VM, and short. */
static void test_hints(void **state)
{
	char *fleet[] = {"vm1", "ci-runner-1"};
	lm_cli cli;
	const char *h;

	(void)state;
	fake_cli(&cli, "enable", fleet, 2);
	h = lm_cli_hint_about(&cli, LM_EHOSTKEY, "ci-runner-1", "ci-runner-1: the host key changed");
	assert_non_null(h);
	lm_assert_contains(h, "lume-metal forget-host ci-runner-1");
	lm_assert_not_contains(h, "vm1");
	/* Not-found: by cause. */
	h = lm_cli_hint_about(&cli, LM_ENOTFOUND, "nosuch", "nosuch: no VM manager knows this VM (asked: lume-api)");
	assert_non_null(h);
	lm_assert_contains(h, "lume ls");
	h = lm_cli_hint_about(&cli, LM_ENOTFOUND, "vm1", "vm1: llama-server not found in the guest (looked up on PATH)");
	assert_non_null(h);
	lm_assert_contains(h, "install the program in vm1");
	lm_assert_not_contains(h, "lume ls");
	h = lm_cli_hint_about(&cli, LM_ENOTFOUND, NULL, "no VM manager found: no Lume API");
	assert_non_null(h);
	lm_assert_contains(h, "lume serve");
	assert_null(lm_cli_hint_about(&cli, LM_ENOTFOUND, "vm1", "VM 'vm1': /x: no such file or directory"));
	/* Without a VM: the one named on the command line, never a subcommand. */
	h = lm_cli_hint_about(&cli, LM_ENOTENABLED, NULL, "vm1 is not enabled");
	lm_assert_contains(h, "lume-metal enable vm1");
	{
		char *agent[] = {"install", "vm7"};
		fake_cli(&cli, "agent", agent, 2);
		h = lm_cli_hint_about(&cli, LM_ENOTENABLED, NULL, "vm7 is not enabled");
		lm_assert_contains(h, "lume-metal enable vm7");
	}
	/* Each damaged file its own advice; the guest's version only where the guest is the cause
	 * (issue 49 item 9). */
	fake_cli(&cli, "enable", fleet, 2);
	h = lm_cli_hint_about(&cli, LM_ECORRUPT, "vm1", "preferences file /h/Library/Preferences/"
	    "com.apple.gpusw.ParavirtualizedGraphics.plist is not a valid property list (damaged or truncated)");
	assert_non_null(h);
	lm_assert_contains(h, "plutil -p");
	lm_assert_not_contains(h, "guest");
	h = lm_cli_hint_about(&cli, LM_ECORRUPT, "vm1", "vm1: the installed bundle is missing, the state says 0.1.0");
	assert_non_null(h);
	lm_assert_contains(h, "lume-metal enable vm1");
	lm_assert_not_contains(h, "by hand");
	h = lm_cli_hint_about(&cli, LM_ECORRUPT, NULL, "state journal: the record of vm1 is not an object");
	lm_assert_contains(h, "by hand");
	h = lm_cli_hint_about(&cli, LM_ECORRUPT, NULL, "/s/state.json: the state file is damaged (x)");
	lm_assert_contains(h, "by hand");
	assert_null(lm_cli_hint_about(&cli, LM_EUNSUPPORTED, "vm1", "libcurl (libcurl.so.4) cannot be limited to http "
	    "and https (CURLOPT_PROTOCOLS_STR and CURLOPT_PROTOCOLS: x), so lume-metal sends it no request"));
	assert_null(lm_cli_hint_about(&cli, LM_EUNSUPPORTED, "vm1", "SSH key file /k is a DSA key"));
	h = lm_cli_hint_about(&cli, LM_EUNSUPPORTED, "vm1", "guest unsupported, stock kept: the shim did not activate");
	lm_assert_contains(h, "lume-metal probe vm1");
	h = lm_cli_hint_about(&cli, LM_EUNSUPPORTED, "vm1", "the probe does not confirm profile m1: no simdgroup");
	lm_assert_contains(h, "lume-metal probe vm1");
	/* Apple's limit of two running VMs, as Lume's API and its CLI show it (issue 49). */
	h = lm_cli_hint_about(&cli, LM_ERROR, "vm1", "vm1: still stopped after lume-api accepted its start: Lume runs its "
	    "maximum of 2 VMs (GET /lume/host/status: vm_count 2, max_vms 2, available_slots 0; x); stop another VM");
	lm_assert_contains(h, "stop one you do not need");
	h = lm_cli_hint_about(&cli, LM_ERROR, "vm1", "vm1: still stopped after lume-cli accepted its start: `lume ls` "
	    "shows 2 VMs running (a, b): Apple's limit of 2 macOS VMs per host, no slot available; stop another VM");
	lm_assert_contains(h, "stop one you do not need");
	assert_null(lm_cli_hint_about(&cli, LM_ERROR, "vm1", "vm1: tart run --no-graphics vm1 ended at once (exit 1)"));
	/* Short: none near the old 420 characters. */
	{
		static const int codes[] = {LM_EHOSTKEY, LM_EAUTH, LM_ECONFLICT, LM_ECORRUPT, LM_ENOTENABLED, LM_ENOTRUNNING,
		    LM_ENOBUNDLE, LM_ENOTFOUND, LM_EAMBIGUOUS, LM_ENOADDRESS, LM_EUNSUPPORTED, LM_ELOCKED, LM_EVMOWNER,
		    LM_EWRONGUSER, LM_ECANCELED, LM_ENOTPROVEN, LM_ETIMEOUT, LM_ERROR};
		static const char *const causes[] = {"no VM manager knows", "has no such VM", "Virtual machine not found",
		    "no VM manager found", "program was not found", "not found in the guest", "HOME is not set",
		    "no built-in profile", "state journal", "not ready", "available_slots 0", "no slot available"};
		size_t i, k;
		fake_cli(&cli, "enable", fleet, 2);
		for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
			for (k = 0; k < sizeof(causes) / sizeof(causes[0]); k++)
				if ((h = lm_cli_hint_about(&cli, codes[i], "ci-runner-1", causes[k])) != NULL && strlen(h) > 200)
					fail_msg("hint of %zu characters: %s", strlen(h), h);
	}
}

static void test_color_wanted(void **state)
{
	(void)state;
	assert_true(lm_cli_color_wanted(LM_CLI_COLOR_AUTO, 1, NULL, "xterm", 0));
	assert_false(lm_cli_color_wanted(LM_CLI_COLOR_AUTO, 0, NULL, "xterm", 0));     /* a pipe */
	assert_false(lm_cli_color_wanted(LM_CLI_COLOR_AUTO, 1, "1", "xterm", 0));      /* NO_COLOR */
	assert_false(lm_cli_color_wanted(LM_CLI_COLOR_AUTO, 1, "no", "xterm", 0));     /* any value */
	assert_true(lm_cli_color_wanted(LM_CLI_COLOR_AUTO, 1, "", "xterm", 0));        /* empty: unset */
	assert_false(lm_cli_color_wanted(LM_CLI_COLOR_AUTO, 1, NULL, "dumb", 0));
	assert_true(lm_cli_color_wanted(LM_CLI_COLOR_ALWAYS, 0, "1", "dumb", 0));      /* the option wins */
	assert_false(lm_cli_color_wanted(LM_CLI_COLOR_NEVER, 1, NULL, "xterm", 0));
	/* CLICOLOR_FORCE, FORCE_COLOR (issue 50): a pipe and a dumb terminal coloured; NO_COLOR and
	 * --color never win over them. */
	assert_true(lm_cli_color_wanted(LM_CLI_COLOR_AUTO, 0, NULL, "xterm", 1));
	assert_true(lm_cli_color_wanted(LM_CLI_COLOR_AUTO, 0, NULL, "dumb", 1));
	assert_true(lm_cli_color_wanted(LM_CLI_COLOR_AUTO, 0, "", NULL, 1));
	assert_false(lm_cli_color_wanted(LM_CLI_COLOR_AUTO, 0, "1", "xterm", 1));
	assert_false(lm_cli_color_wanted(LM_CLI_COLOR_AUTO, 1, "1", "xterm", 1));
	assert_false(lm_cli_color_wanted(LM_CLI_COLOR_NEVER, 0, NULL, "xterm", 1));
	assert_true(lm_cli_color_forced("1", NULL));
	assert_true(lm_cli_color_forced("yes", NULL));
	assert_false(lm_cli_color_forced("0", NULL));     /* bixense.com/clicolors: != 0 */
	assert_false(lm_cli_color_forced("", NULL));
	assert_false(lm_cli_color_forced(NULL, NULL));
	assert_true(lm_cli_color_forced(NULL, "1"));
	assert_true(lm_cli_color_forced(NULL, "true"));
	assert_true(lm_cli_color_forced(NULL, "3"));      /* force-color.org: any value */
	assert_false(lm_cli_color_forced(NULL, ""));
	assert_false(lm_cli_color_forced(NULL, "0"));     /* as Node's tools read it */
	assert_true(lm_cli_color_forced("0", "1"));
}

/* Wrapped lines fit the width and keep every word, in order. */
static void test_wrap(void **state)
{
	static const int widths[] = {40, 60, 80, 120};
	const char *text = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
	    "sixteen seventeen eighteen nineteen twenty twenty-one twenty-two";
	char *buf, *line, *save = NULL, words[512] = "";
	size_t len, i;

	(void)state;
	for (i = 0; i < sizeof(widths) / sizeof(widths[0]); i++) {
		FILE *f = open_memstream(&buf, &len);
		assert_non_null(f);
		lm_cli_wrap(f, widths[i], "  --an-option-with-a-long-name VALUE", text);
		fclose(f);
		words[0] = '\0';
		for (line = strtok_r(buf, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
			if ((int)strlen(line) > widths[i])
				fail_msg("width %d: a line of %zu: '%s'", widths[i], strlen(line), line);
			if (strstr(line, "--an-option") == NULL) {
				strcat(words, words[0] ? " " : "");
				strcat(words, line + strspn(line, " "));
			} else if (strlen(line) > 40) {
				strcat(words, line + 38);
			}
		}
		assert_string_equal(words, text);
		free(buf);
	}
}

static void test_nearest_option(void **state)
{
	(void)state;
	assert_string_equal(lm_cli_nearest_option("--dryrun"), "dry-run");
	assert_string_equal(lm_cli_nearest_option("--formt"), "format");
	assert_string_equal(lm_cli_nearest_option("--colour"), "color");
	assert_string_equal(lm_cli_nearest_option("--jbos=2"), "jobs");
	assert_null(lm_cli_nearest_option("--frobnicate"));
	assert_null(lm_cli_nearest_option("-x"));
	/* The old name is in no suggestion. */
	{
		const char *h = lm_cli_nearest_option("--hst");
		assert_true(h == NULL || strcmp(h, "host") != 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nearest),
		cmocka_unit_test(test_completion_covers_tables),
		cmocka_unit_test(test_completion_details),
		cmocka_unit_test(test_hints),
		cmocka_unit_test(test_color_wanted),
		cmocka_unit_test(test_wrap),
		cmocka_unit_test(test_nearest_option),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
