/* The tool's own surface (host/cli/help.c, completion.c): the nearest command to a mistyped one,
 * and the completion scripts made from the option and command tables. The scripts are checked by
 * their shells in the e2e scenario tests/e2e/cli.sh help (bash -n, zsh -n, fish -n). */
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
		{"bash", "--format) COMPREPLY=($(compgen -W \"text json jsonl\" -- \"$cur\")); return ;;"},
		{"bash", "agent) if [[ $cur == -* ]]"},
		{"bash", "compgen -W \"install remove list\""},
		{"bash", "compgen -W \"enable disable status\""},
		{"bash", "compgen -W \"bash zsh fish\""},
		/* Directories for DIR options, files for FILE and PATH ones. */
		{"bash", "compgen -d"}, {"bash", "compgen -f"},
		{"zsh", "#compdef lume-metal\n"},
		{"zsh", "--format) compadd -- text json jsonl; return ;;"},
		{"zsh", "_files -/"},
		{"fish", "complete -c lume-metal -n __fish_use_subcommand -a agent -d "},
		{"fish", "complete -c lume-metal -n '__fish_seen_subcommand_from agent' -a 'install remove list'"},
		{"fish", "complete -c lume-metal -l format -x -a 'text json jsonl'"},
		/* An option only some commands take is offered after those only. */
		{"fish", "complete -c lume-metal -l label -n '__fish_seen_subcommand_from agent' -x"},
		/* Quotes in help texts are escaped for fish. */
		{"fish", "profile\\'s effect"},
	};
	FILE *null = fopen("/dev/null", "w");
	char *fish = script("fish");
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		char *text = script(want[i][0]);
		if (strstr(text, want[i][1]) == NULL)
			fail_msg("the %s script lacks: %s", want[i][0], want[i][1]);
		free(text);
	}
	lm_assert_not_contains(fish, "profile's effect");
	assert_int_equal(lm_cli_completion("tcsh", null), -1);
	fclose(null);
	free(fish);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nearest),
		cmocka_unit_test(test_completion_covers_tables),
		cmocka_unit_test(test_completion_details),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
