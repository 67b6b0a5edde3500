/* Shell completion scripts (bash, zsh, fish), generated from the option and command tables
 * (options.c, help.c) and the positional table below, so that a new option or command completes
 * without anyone writing it twice. `lume-metal completion SHELL` prints one; the build writes all
 * three and installs them.
 *
 * Every script finds its place the same way: the words before the cursor, without the options and
 * their values, are the command, then a subcommand when the command has some (`profile show`,
 * `agent install`), then its arguments. What completes there comes from `positional[]`. VM names
 * come from the managers through the tool's own hidden entry point, `lume-metal __complete vms`
 * (as tart and lume complete theirs), so that every manager lume-metal knows is asked as it would
 * be asked. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef enum { SH_BASH, SH_ZSH, SH_FISH } shell_kind;

/* How an option's value completes, from its placeholder: choices ("text|json"), directories,
 * files, a profile, or nothing to offer (a number, a label). */
typedef enum { VAL_NONE, VAL_CHOICES, VAL_DIR, VAL_FILE, VAL_PROFILE, VAL_FREE } value_kind;

static value_kind value_of(const char *arg)
{
	if (arg == NULL)
		return VAL_NONE;
	if (strcmp(arg, "DIR") == 0)
		return VAL_DIR;
	if (strcmp(arg, "NAME|FILE") == 0)
		return VAL_PROFILE;
	if (strcmp(arg, "FILE") == 0 || strcmp(arg, "PATH") == 0)
		return VAL_FILE;
	if (strchr(arg, '|') != NULL && islower((unsigned char)arg[0]))
		return VAL_CHOICES;
	return VAL_FREE;
}

/* What an argument position offers. */
typedef enum { ARG_NONE, ARG_VM, ARG_PROFILE, ARG_FILE, ARG_DIR, ARG_COMMAND, ARG_SHELL } arg_kind;

/* Per command (or command and subcommand): the subcommands offered first, what the first
 * argument is, and what any later one is. */
static const struct {
	const char *key;
	const char *subs;  /* "word=description;..." or NULL */
	arg_kind first, rest;
} positional[] = {
	{"enable", NULL, ARG_VM, ARG_VM},
	{"status", NULL, ARG_VM, ARG_VM},
	{"probe", NULL, ARG_VM, ARG_NONE},
	{"run", NULL, ARG_VM, ARG_NONE},
	{"bench", "compare=Evidence folders side by side, and the published figures", ARG_VM, ARG_NONE},
	{"bench compare", NULL, ARG_DIR, ARG_DIR},
	{"rollback", NULL, ARG_VM, ARG_VM},
	{"profile", "list=The built-in profiles;show=A profile's capabilities, preference and validations;"
	    "lint=A profile's effect on llama.cpp and MLX, and its warnings", ARG_NONE, ARG_NONE},
	{"profile show", NULL, ARG_PROFILE, ARG_NONE},
	{"profile lint", NULL, ARG_PROFILE, ARG_NONE},
	{"host", "enable=Set the host preference;disable=Restore the host preference as it was;"
	    "status=The host preference: value, who changed it, what it was", ARG_NONE, ARG_NONE},
	{"forget-host", NULL, ARG_VM, ARG_NONE},
	{"gc", NULL, ARG_NONE, ARG_NONE},
	{"agent", "install=Install and start a LaunchAgent carrying the shim's environment;"
	    "remove=Stop and remove a LaunchAgent;list=The LaunchAgents lume-metal installed;"
	    "logs=An agent's stdout and stderr logs (-f: follow them)", ARG_NONE, ARG_NONE},
	{"agent install", NULL, ARG_VM, ARG_VM},
	{"agent remove", NULL, ARG_VM, ARG_VM},
	{"agent list", NULL, ARG_VM, ARG_VM},
	{"agent logs", NULL, ARG_VM, ARG_NONE},
	{"doctor", NULL, ARG_VM, ARG_VM},
	{"selftest", NULL, ARG_VM, ARG_NONE},
	{"local", "probe=Stock vs shimmed answers of this machine;run=One workload here with the shim;"
	    "agent=LaunchAgents here with the shim;status=This machine, its bundle and agents;"
	    "install=This machine's bundle into an image;env=The environment a job step exports", ARG_NONE, ARG_NONE},
	{"help", NULL, ARG_COMMAND, ARG_NONE},
	{"completion", NULL, ARG_SHELL, ARG_NONE},
};
#define N_POSITIONAL (sizeof(positional) / sizeof(positional[0]))

/* The command words, each once ("bench" has three usage lines). */
static const char *command_word(size_t i, char *buf, size_t size, const char **summary)
{
	const char *usage, *prev;
	size_t k, n;

	for (k = 0; (usage = lm_cli_command_at(k, summary)) != NULL; k++) {
		n = strcspn(usage, " ");
		prev = k > 0 ? lm_cli_command_at(k - 1, NULL) : NULL;
		if (prev != NULL && strcspn(prev, " ") == n && strncmp(prev, usage, n) == 0)
			continue; /* the same command as the line before */
		if (i-- == 0) {
			snprintf(buf, size, "%.*s", (int)n, usage);
			return buf;
		}
	}
	return NULL;
}

/* A single-quoted shell word ('\'' for a quote; bash, zsh and fish alike, fish also \\). */
static void quoted(FILE *out, shell_kind sh, const char *s)
{
	fputc('\'', out);
	for (; *s != '\0'; s++) {
		if (*s == '\'')
			fputs(sh == SH_FISH ? "\\'" : "'\\''", out);
		else if (*s == '\\' && sh == SH_FISH)
			fputs("\\\\", out);
		else
			fputc(*s, out);
	}
	fputc('\'', out);
}

/* zsh's _describe reads "word:description": a colon in the word is escaped. */
static void zsh_item(FILE *out, const char *word, const char *desc)
{
	char item[1200];
	size_t k = 0;

	for (; *word != '\0' && k + 2 < sizeof(item); word++) {
		if (*word == ':')
			item[k++] = '\\';
		item[k++] = *word;
	}
	snprintf(item + k, sizeof(item) - k, ":%s", desc);
	fputc(' ', out);
	quoted(out, SH_ZSH, item);
}

/* The items of a list separated by `sep`, each up to the first of `stop`, space-separated:
 * "text|json|jsonl" (sep '|') or "list=...;show=..." (sep ';', stop "="). */
static void items(FILE *out, const char *list, char sep, const char *stop)
{
	const char *p = list;
	char seps[2] = {sep, '\0'};

	while (*p != '\0') {
		size_t item = strcspn(p, seps), n = strcspn(p, stop);
		fprintf(out, "%s%.*s", p == list ? "" : " ", (int)(n < item ? n : item), p);
		p += item;
		p += strspn(p, seps);
	}
}

static void profile_names(FILE *out)
{
	size_t i;

	for (i = 0; i < lm_profile_builtin_count(); i++)
		fprintf(out, "%s%s", i > 0 ? " " : "", lm_profile_builtin_name(i));
}

static void command_words(FILE *out)
{
	char cmd[32];
	size_t i;

	for (i = 0; command_word(i, cmd, sizeof(cmd), NULL) != NULL; i++)
		fprintf(out, "%s%s", i > 0 ? " " : "", cmd);
}

/* Options that take a value, as a `case` pattern (--a|--b): their value is no positional word. */
static void value_options(FILE *out, const char *sep)
{
	const char *o, *arg;
	size_t i;
	int n = 0;

	for (i = 0; (o = lm_cli_option_at(i, &arg, NULL)) != NULL; i++)
		if (arg != NULL)
			fprintf(out, "%s--%s", n++ ? sep : "", o);
}

/* For each command with subcommands: BEFORE, the command, BETWEEN, its subcommands, AFTER (the
 * walk's `case` that sets subs, in each shell's syntax). */
static void subs_cases(FILE *out, const char *before, const char *between, const char *after)
{
	size_t i;

	for (i = 0; i < N_POSITIONAL; i++) {
		if (positional[i].subs == NULL)
			continue;
		fprintf(out, "%s%s%s", before, positional[i].key, between);
		items(out, positional[i].subs, ';', "=");
		fputs(after, out);
	}
}

/* ---- bash and zsh: one function, the same walk over the words. ---- */

static void posix_walk(FILE *out, shell_kind sh)
{
	/* bash's words are COMP_WORDS[0..COMP_CWORD-1], zsh's words[1..CURRENT-1]. */
	if (sh == SH_BASH)
		fprintf(out, "\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd= key= subs= "
		    "skip= w i npos=0\n\tfor ((i = 1; i < COMP_CWORD; i++)); do\n\t\tw=${COMP_WORDS[i]}\n");
	else
		fprintf(out, "\tlocal cur=${words[CURRENT]} prev=${words[CURRENT-1]} cmd= key= subs= skip= w i npos=0\n"
		    "\tfor ((i = 2; i < CURRENT; i++)); do\n\t\tw=${words[i]}\n");
	fprintf(out, "\t\tif [[ -n $skip ]]; then skip=; continue; fi\n\t\tcase $w in\n\t\t--) return ;;\n\t\t");
	value_options(out, "|");
	fprintf(out, ") skip=1 ;;\n\t\t-*) ;;\n\t\t*)\n\t\t\tif [[ -z $cmd ]]; then\n\t\t\t\tcmd=$w key=$w\n"
	    "\t\t\t\tcase $cmd in\n");
	subs_cases(out, "\t\t\t\t", ") subs=\"", "\" ;;\n");
	fprintf(out, "\t\t\t\tesac\n\t\t\telif [[ $key == \"$cmd\" && $npos == 0 && \" $subs \" == *\" $w \"* ]]; then\n"
	    "\t\t\t\tkey=\"$cmd $w\"\n\t\t\telse\n\t\t\t\tnpos=$((npos + 1))\n\t\t\tfi ;;\n\t\tesac\n\tdone\n");
}

/* What one kind of argument offers, in bash (words into COMPREPLY) or zsh (compadd, _files). */
static void posix_offer(FILE *out, shell_kind sh, arg_kind kind)
{
	switch (kind) {
	case ARG_VM:
		fprintf(out, sh == SH_BASH ? " COMPREPLY+=($(compgen -W \"$(_lume_metal_vms)\" -- \"$cur\"));" :
		    " compadd -- ${(f)\"$(_lume_metal_vms)\"};");
		break;
	case ARG_PROFILE:
		fprintf(out, sh == SH_BASH ? " COMPREPLY+=($(compgen -W \"" : " compadd -- ");
		profile_names(out);
		fprintf(out, sh == SH_BASH ? "\" -- \"$cur\") $(compgen -f -- \"$cur\"));" : "; _files;");
		break;
	case ARG_FILE:
		fprintf(out, sh == SH_BASH ? " COMPREPLY+=($(compgen -f -- \"$cur\"));" : " _files;");
		break;
	case ARG_DIR:
		fprintf(out, sh == SH_BASH ? " COMPREPLY+=($(compgen -d -- \"$cur\"));" : " _files -/;");
		break;
	case ARG_COMMAND:
		fprintf(out, sh == SH_BASH ? " COMPREPLY+=($(compgen -W \"options " : " compadd -- options ");
		command_words(out);
		fprintf(out, sh == SH_BASH ? "\" -- \"$cur\"));" : ";");
		break;
	case ARG_SHELL:
		fprintf(out, sh == SH_BASH ? " COMPREPLY+=($(compgen -W \"bash zsh fish\" -- \"$cur\"));" :
		    " compadd -- bash zsh fish;");
		break;
	case ARG_NONE:
		fprintf(out, " :;");
		break;
	}
}

/* zsh: the options a command takes, each with its whole help text. */
static void zsh_options(FILE *out, const char *command)
{
	const char *o, *arg, *help;
	char word[64];
	size_t i;

	fprintf(out, "local -a opts; opts=(");
	for (i = 0; (o = lm_cli_option_at(i, &arg, &help)) != NULL; i++)
		if (command == NULL || lm_cli_command_takes(command, o)) {
			snprintf(word, sizeof(word), "--%s", o);
			zsh_item(out, word, help);
		}
	fprintf(out, " ); _describe -t options option opts;");
}

static void bash_options(FILE *out, const char *command)
{
	const char *o;
	size_t i;
	int n = 0;

	fprintf(out, "COMPREPLY=($(compgen -W \"");
	for (i = 0; (o = lm_cli_option_at(i, NULL, NULL)) != NULL; i++)
		if (command == NULL || lm_cli_command_takes(command, o))
			fprintf(out, "%s--%s", n++ ? " " : "", o);
	fprintf(out, "\" -- \"$cur\"));");
}

static void posix_script(FILE *out, shell_kind sh)
{
	const char *o, *arg, *summary;
	char cmd[32];
	size_t i;

	if (sh == SH_BASH)
		fprintf(out, "# bash completion for lume-metal, generated by `lume-metal completion bash`.\n");
	else
		fprintf(out, "#compdef lume-metal\n# zsh completion for lume-metal, generated by `lume-metal completion zsh`.\n");
	/* VM names: the tool asks the managers itself; the first word is the program being completed. */
	fprintf(out, "_lume_metal_vms() { \"%s\" __complete vms 2>/dev/null; }\n",
	    sh == SH_BASH ? "${COMP_WORDS[0]}" : "${words[1]}");
	fprintf(out, "_lume_metal() {\n");
	posix_walk(out, sh);
	/* The value of the option before the cursor. */
	fprintf(out, "\tcase $prev in\n");
	for (i = 0; (o = lm_cli_option_at(i, &arg, NULL)) != NULL; i++) {
		value_kind v = value_of(arg);
		if (v == VAL_NONE)
			continue;
		fprintf(out, "\t--%s)", o);
		if (v == VAL_CHOICES) {
			fprintf(out, sh == SH_BASH ? " COMPREPLY=($(compgen -W \"" : " compadd -- ");
			items(out, arg, '|', "|");
			fprintf(out, sh == SH_BASH ? "\" -- \"$cur\"));" : ";");
		} else {
			posix_offer(out, sh, v == VAL_DIR ? ARG_DIR : v == VAL_FILE ? ARG_FILE : v == VAL_PROFILE ? ARG_PROFILE :
			    ARG_NONE);
		}
		fprintf(out, " return ;;\n");
	}
	fprintf(out, "\tesac\n");
	/* Options: those of the command (every one before a command). */
	fprintf(out, "\tif [[ $cur == -* ]]; then\n\t\tcase $cmd in\n");
	for (i = 0; command_word(i, cmd, sizeof(cmd), NULL) != NULL; i++) {
		fprintf(out, "\t\t%s) ", cmd);
		if (sh == SH_BASH)
			bash_options(out, cmd);
		else
			zsh_options(out, cmd);
		fprintf(out, " ;;\n");
	}
	fprintf(out, "\t\t*) ");
	if (sh == SH_BASH)
		bash_options(out, NULL);
	else
		zsh_options(out, NULL);
	fprintf(out, " ;;\n\t\tesac\n\t\treturn\n\tfi\n");
	/* Words: commands first, then per command and subcommand. */
	fprintf(out, "\tif [[ -z $cmd ]]; then\n\t\t");
	if (sh == SH_BASH) {
		fprintf(out, "COMPREPLY=($(compgen -W \"");
		command_words(out);
		fprintf(out, "\" -- \"$cur\"))\n");
	} else {
		fprintf(out, "local -a cmds; cmds=(");
		for (i = 0; command_word(i, cmd, sizeof(cmd), &summary) != NULL; i++)
			zsh_item(out, cmd, summary);
		fprintf(out, " ); _describe -t commands command cmds\n");
	}
	fprintf(out, "\t\treturn\n\tfi\n\tcase $key in\n");
	for (i = 0; i < N_POSITIONAL; i++) {
		fprintf(out, "\t'%s') if [[ $npos == 0 ]]; then", positional[i].key);
		if (positional[i].subs != NULL) {
			if (sh == SH_BASH) {
				fprintf(out, " COMPREPLY+=($(compgen -W \"");
				items(out, positional[i].subs, ';', "=");
				fprintf(out, "\" -- \"$cur\"));");
			} else {
				const char *p = positional[i].subs;
				fprintf(out, " local -a subs; subs=(");
				while (*p != '\0') {
					char item[400];
					size_t n = strcspn(p, ";");
					snprintf(item, sizeof(item), "%.*s", (int)n, p);
					*strchr(item, '=') = ':';
					fputc(' ', out);
					quoted(out, SH_ZSH, item);
					p += n;
					p += strspn(p, ";");
				}
				fprintf(out, " ); _describe -t commands subcommand subs;");
			}
		}
		posix_offer(out, sh, positional[i].first);
		fprintf(out, " else");
		posix_offer(out, sh, positional[i].rest);
		fprintf(out, " fi ;;\n");
	}
	fprintf(out, "\tesac\n}\n");
	if (sh == SH_BASH)
		fprintf(out, "complete -F _lume_metal lume-metal\n");
	else
		fprintf(out, "_lume_metal \"$@\"\n");
}

/* ---- fish: conditions on where the words before the cursor put us. ---- */

static void fish_script(FILE *out)
{
	const char *o, *arg, *help, *summary, *p;
	char cmd[32];
	size_t i, k;

	fprintf(out, "# fish completion for lume-metal, generated by `lume-metal completion fish`.\n"
	    "complete -c lume-metal -f\n");
	/* __lume_metal_where prints "KEY:N": the command (and subcommand) so far and how many
	 * arguments follow it; options and their values are not words. */
	fprintf(out, "function __lume_metal_where\n\tset -l tokens (commandline -opc)\n\tset -l cmd\n\tset -l key\n"
	    "\tset -l subs\n\tset -l npos 0\n\tset -l skip 0\n\tfor w in $tokens[2..-1]\n"
	    "\t\tif test $skip = 1\n\t\t\tset skip 0\n\t\t\tcontinue\n\t\tend\n\t\tswitch $w\n\t\t\tcase --\n"
	    "\t\t\t\techo '--:0'\n\t\t\t\treturn\n\t\t\tcase ");
	value_options(out, " ");
	fprintf(out, "\n\t\t\t\tset skip 1\n\t\t\tcase '-*'\n\t\t\tcase '*'\n\t\t\t\tif test -z \"$cmd\"\n"
	    "\t\t\t\t\tset cmd $w\n\t\t\t\t\tset key $w\n\t\t\t\t\tswitch $cmd\n");
	subs_cases(out, "\t\t\t\t\t\tcase ", "\n\t\t\t\t\t\t\tset subs ", "\n");
	fprintf(out, "\t\t\t\t\tend\n\t\t\t\telse if test \"$key\" = \"$cmd\" -a $npos = 0; and contains -- $w $subs\n"
	    "\t\t\t\t\tset key \"$cmd $w\"\n\t\t\t\telse\n\t\t\t\t\tset npos (math $npos + 1)\n\t\t\t\tend\n"
	    "\t\tend\n\tend\n\techo \"$key:$npos\"\nend\n");
	/* __lume_metal_at PATTERN: whether "KEY:N" is PATTERN (a regular expression, whole). */
	fprintf(out, "function __lume_metal_at\n\tstring match -qr -- \"^$argv[1]\\$\" (__lume_metal_where)\nend\n");
	fprintf(out, "function __lume_metal_vms\n\tset -l tokens (commandline -opc)\n"
	    "\t$tokens[1] __complete vms 2>/dev/null\nend\n");
	/* Commands, each with its whole summary. */
	for (i = 0; command_word(i, cmd, sizeof(cmd), &summary) != NULL; i++) {
		fprintf(out, "complete -c lume-metal -n '__lume_metal_at :0' -a %s -d ", cmd);
		quoted(out, SH_FISH, summary);
		fputc('\n', out);
	}
	/* Subcommands and arguments. */
	for (i = 0; i < N_POSITIONAL; i++) {
		for (p = positional[i].subs; p != NULL && *p != '\0';) {
			size_t n = strcspn(p, "="), d;
			char desc[300];
			d = strcspn(p + n + 1, ";");
			snprintf(desc, sizeof(desc), "%.*s", (int)d, p + n + 1);
			fprintf(out, "complete -c lume-metal -n '__lume_metal_at \"%s:0\"' -a %.*s -d ", positional[i].key,
			    (int)n, p);
			quoted(out, SH_FISH, desc);
			fputc('\n', out);
			p += n + 1 + d;
			p += strspn(p, ";");
		}
		for (k = 0; k < 2; k++) {
			arg_kind kind = k == 0 ? positional[i].first : positional[i].rest;
			if (kind == ARG_NONE)
				continue;
			fprintf(out, "complete -c lume-metal -n '__lume_metal_at \"%s:%s\"'", positional[i].key,
			    k == 0 ? "0" : "[1-9][0-9]*");
			switch (kind) {
			case ARG_VM: fprintf(out, " -a '(__lume_metal_vms)' -d 'VM'"); break;
			case ARG_PROFILE:
				fprintf(out, " -F -a '");
				profile_names(out);
				fprintf(out, "' -d 'profile'");
				break;
			case ARG_FILE: fprintf(out, " -F"); break;
			case ARG_DIR: fprintf(out, " -a '(__fish_complete_directories)'"); break;
			case ARG_COMMAND:
				fprintf(out, " -a 'options ");
				command_words(out);
				fprintf(out, "'");
				break;
			case ARG_SHELL: fprintf(out, " -a 'bash zsh fish'"); break;
			case ARG_NONE: break;
			}
			fputc('\n', out);
		}
	}
	/* Options, each with its whole help text; limited to the commands that take it, unless
	 * every command does. */
	for (i = 0; (o = lm_cli_option_at(i, &arg, &help)) != NULL; i++) {
		int all = 1;
		for (k = 0; command_word(k, cmd, sizeof(cmd), NULL) != NULL; k++)
			all = all && lm_cli_command_takes(cmd, o);
		fprintf(out, "complete -c lume-metal -l %s", o);
		if (!all) {
			fprintf(out, " -n '__fish_seen_subcommand_from");
			for (k = 0; command_word(k, cmd, sizeof(cmd), NULL) != NULL; k++)
				if (lm_cli_command_takes(cmd, o))
					fprintf(out, " %s", cmd);
			fputc('\'', out);
		}
		switch (value_of(arg)) {
		case VAL_CHOICES:
			fprintf(out, " -x -a '");
			items(out, arg, '|', "|");
			fputc('\'', out);
			break;
		case VAL_DIR: fprintf(out, " -x -a '(__fish_complete_directories)'"); break;
		case VAL_FILE: fprintf(out, " -r -F"); break;
		case VAL_PROFILE:
			fprintf(out, " -r -F -a '");
			profile_names(out);
			fputc('\'', out);
			break;
		case VAL_FREE: fprintf(out, " -x"); break;
		case VAL_NONE: break;
		}
		fprintf(out, " -d ");
		quoted(out, SH_FISH, help);
		fputc('\n', out);
	}
}

int lm_cli_completion(const char *shell, FILE *out)
{
	if (strcmp(shell, "bash") == 0)
		posix_script(out, SH_BASH);
	else if (strcmp(shell, "zsh") == 0)
		posix_script(out, SH_ZSH);
	else if (strcmp(shell, "fish") == 0)
		fish_script(out);
	else
		return -1;
	return 0;
}

int lm_cmd_completion(lm_cli *cli)
{
	if (cli->argc != 1)
		return lm_cli_usage_error(cli, "completion: name one shell (lume-metal completion bash|zsh|fish)");
	/* A script is text for a shell, as agent logs' lines are what the agent wrote: no JSON of it. */
	if (cli->json)
		return lm_cli_usage_error(cli, "completion prints a shell script: no --format json");
	if (lm_cli_completion(cli->argv[0], stdout) < 0)
		return lm_cli_usage_error(cli, "completion: '%s' is not a shell lume-metal completes; use bash, zsh or fish",
		    cli->argv[0]);
	lm_cli_flush(); /* a stdout that fails ends the command (print.c) */
	return LM_EXIT_OK;
}

/* `lume-metal __complete vms`: the VM names every manager knows, one per line, for the scripts
 * above. Hidden (in no help): a script's helper, not a command. Quiet: a manager that cannot be
 * reached leaves its VMs out, and nothing is printed on stderr that a shell would show. */
int lm_cmd_complete(lm_cli *cli)
{
	lm_context *ctx = NULL;
	char **names = NULL;
	size_t i, n = 0;

	if (cli->argc != 1 || strcmp(cli->argv[0], "vms") != 0)
		return lm_cli_usage_error(cli, "__complete: the completion scripts' helper takes 'vms'");
	cli->quiet = 1;
	if (lm_context_new(&ctx, &cli->lib) < 0)
		return LM_EXIT_FAILURE;
	if (lm_vm_names(ctx, &names, &n) == 0)
		for (i = 0; i < n; i++)
			lm_cli_printf(stdout, "%s\n", names[i]);
	lm_vm_names_free(names);
	lm_context_free(ctx);
	lm_cli_flush(); /* a stdout that fails ends the command (print.c) */
	return LM_EXIT_OK;
}
