/* The lume-metal tool: a thin layer over the host library (curl's lib/ vs src/ split).
 * main.c dispatches, options.c knows every option (help.c and man.c render its tables), output.c
 * prints text or JSON (print.c: the sanitised writers below every file that prints), and each
 * command lives in its own cmd_*.c file that uses only the public library API. */
#ifndef LM_CLI_H
#define LM_CLI_H

#include <signal.h>
#include <stddef.h>
#include <stdio.h>

#include "lume-metal.h"
#include "print.h"

/* Documented exit codes (docs/lume-metal.md); `run` returns the guest command's own code. */
enum {
	LM_EXIT_OK = 0,
	LM_EXIT_FAILURE = 1,
	LM_EXIT_USAGE = 2,
	LM_EXIT_PARTIAL = 3,          /* some VMs of a fleet failed */
	LM_EXIT_GUEST_UNSUPPORTED = 4, /* the shim does not activate in this guest; stock kept */
	LM_EXIT_NEWER = 5             /* lume-metal's state was written by a newer version; nothing changed */
};

/* progress.c: what is shown of the steps and waits in progress: on a terminal, a live row per VM
 * at work; off it, a line per wait now and then (one slot per VM and step). */
#define LM_CLI_WAIT_SLOTS 16
typedef struct {
	int tty;                 /* stderr is a terminal: a live area, redrawn */
	int drawn;               /* rows of the live area on screen (the last without its newline) */
	struct {
		char key[160];   /* "vm/step" */
		double next;     /* off a terminal: the wait's elapsed time at which the next line is due */
		double seen;     /* the last elapsed time heard: a smaller one is a new wait */
	} slot[LM_CLI_WAIT_SLOTS];
	struct {
		int used;
		char key[128];   /* the VM's name ("" for the host alone) */
		char text[512];  /* what it does: "vm1: restart ...", "vm2: ready: waiting 4 s: booted" */
	} row[LM_CLI_WAIT_SLOTS];
} lm_cli_progress;

typedef struct {
	lm_options lib;          /* what the library needs; strings point into argv/environ */
	int json;                /* --format json */
	const char *profile;     /* --profile NAME|FILE */
	int all;                 /* --all */
	int jobs;                /* --jobs N */
	int no_restart;          /* --no-restart */
	int exercise;            /* --exercise (probe) */
	int verbose;             /* --verbose */
	int fleet;               /* several VMs of enable, rollback, agent install|remove: one line each and
	                            the recap; steps, informational lines and short waits under --verbose */
	int repetitions;         /* --repetitions N (bench; 0: the default) */
	const char *out_dir;     /* --out DIR (bench) */
	int bare_metal;          /* --bare-metal (bench) */
	int ablate;              /* --ablate-host-preference (bench) */
	int markdown;            /* --markdown (bench compare) */
	const char *svg_file;    /* --svg FILE (bench compare) */
	int matrix;              /* --matrix (bench compare) */
	const char *archive;     /* --archive FILE.tar.gz (report) */
	lm_bench_parser workload_parser; /* --workload-parser (bench) */
	const char *chip;        /* --chip FAMILY: the host's own family for `profile lint` */
	int color;               /* --color: LM_CLI_COLOR_AUTO (0), _ALWAYS or _NEVER */
	int color_on;            /* colour the results on stdout (color.c decides) */
	int argc;                /* positional arguments after the command word(s) */
	char **argv;
	int cmd_argc;            /* for `run` and `bench`: what follows "--" */
	char **cmd_argv;
	const char *command;     /* "enable", "profile", ... */
	const char *json_command;/* the command as the JSON documents name it ("profile list", ...) */
	int progress;            /* step lines on stderr (a terminal, or --verbose) */
	/* run --format json: the guest's output, collected for the document (the tool's own buffer:
	 * it links only the public API); output_lost when memory ran out, never a document that
	 * passes part of it off as all */
	char *out_bytes, *err_bytes;
	size_t out_len, err_len;
	int output_lost;
	int jsonl;               /* --format jsonl: step events as lines, then the document on one line */
	int quiet;               /* --quiet */
	int long_format;         /* --long (status: every VM in detail) */
	const char *label;       /* --label (agent) */
	int keep_alive;          /* --keep-alive (agent install) */
	int follow;              /* --follow, -f (agent logs) */
	void (*after_vm)(FILE *out, const lm_vm_outcome *o); /* lm_cli_flow_print: lines under each VM done */
	int run_hardened_stock;  /* --run-hardened-stock (run, agent install) */
	int require_shim;        /* --require-shim (run) */
	int run_at_load;         /* --run-at-load (agent install) */
	int resign_copy;         /* --resign-copy (run, agent install) */
	const char *process_type; /* --process-type (agent install); NULL: Interactive */
	int interactive;         /* -i, --interactive (run) */
	int tty;                 /* -t, --tty (run) */
	const char *prefix;      /* --prefix DIR (local install, local env) */
	int github_env;          /* --github-env (local env) */
	const char *record_dir;  /* --record-dir DIR (local env) */
	lm_cli_progress live;    /* progress.c: the waits being shown */
	int require_exercise;    /* --require-exercise (local probe) */
	int show;                /* LM_CLI_SHOW_*: what main.c prints instead of running a command */
} lm_cli;

/* lm_cli.show: --help (on the words in cli->argv, or the usage), --man, or no command given (the
 * usage on stderr: a usage error). */
enum { LM_CLI_SHOW_NOTHING = 0, LM_CLI_SHOW_HELP, LM_CLI_SHOW_MAN, LM_CLI_SHOW_USAGE };

/* color.c: colour the way terminals expect (--color, NO_COLOR, CLICOLOR_FORCE, FORCE_COLOR, TERM=dumb,
 * never on a pipe unless forced). */
enum { LM_CLI_COLOR_AUTO = 0, LM_CLI_COLOR_ALWAYS, LM_CLI_COLOR_NEVER };
enum { LM_CLI_PLAIN = 0, LM_CLI_OK, LM_CLI_WARN, LM_CLI_FAIL };
/* forced: CLICOLOR_FORCE or FORCE_COLOR asks for colour off a terminal (lm_cli_color_forced). */
int lm_cli_color_wanted(int mode, int tty, const char *no_color, const char *term, int forced);
int lm_cli_color_forced(const char *clicolor_force, const char *force_color);
const char *lm_cli_color(const lm_cli *cli, int kind);  /* the escape sequence, or "" */
void lm_cli_word(FILE *out, const lm_cli *cli, int kind, const char *word, int width); /* coloured, padded */
int lm_cli_term_dumb(void);                             /* TERM=dumb: no escape sequences at all */
int lm_cli_term_width(void);                            /* COLUMNS, the terminal's, else 80 */

/* options.c: parsing prints nothing but its errors (and --version); what it was asked to show
 * instead of running a command is cli->show, which main.c prints (help.c, man.c). */
int lm_cli_parse(lm_cli *cli, int argc, char **argv); /* LM_EXIT_USAGE on error (message printed) */
const char *lm_cli_nearest_option(const char *arg);                  /* "--dryrun" -> "dry-run"; NULL: none */
void lm_cli_man(FILE *out);                                 /* man.c: the man page (roff), from the tables */
size_t lm_cli_distance(const char *a, const char *b, size_t cap); /* distance.c: Levenshtein, capped at cap + 1 */

/* print.c: the writers every file that prints uses, and the rule for output that cannot be written
 * (print.h). */

/* output.c: one JSON document on stdout in JSON mode (rendered by the library); text lines
 * otherwise. The CLI's own part: hints (which option or command helps with an error code) and the
 * callbacks it gives the library (progress lines, a run's output). */
int lm_cli_fail(lm_cli *cli, int exit_code);                      /* prints lm_error_last() */
int lm_cli_exit_of(int code, int otherwise); /* LM_EXIT_NEWER for LM_ENEWER, whatever the command; else otherwise */
int lm_cli_report(lm_cli *cli, int exit_code, int code, const char *message); /* prints this error */
int lm_cli_usage_error(lm_cli *cli, const char *fmt, ...) LM_CLI_PRINTF(2, 3); /* LM_EXIT_USAGE */
const char *lm_cli_hint(const lm_cli *cli, int code);             /* NULL when none; lm_error_last()'s cause */
/* The hint about one cause: the code, the library's message (which names the cause) and the VM it
 * is about (NULL: the one named on the command line). */
const char *lm_cli_hint_about(const lm_cli *cli, int code, const char *vm, const char *message);
void lm_cli_print_document(const lm_cli *cli, int rc, char *doc);  /* prints and frees; rc < 0: failed */
int lm_cli_document_failed(void);  /* a document was not printed (not whole): the command's exit is 1 at least */
lm_json_envelope lm_cli_envelope(const lm_cli *cli, int exit_code, int error_code, const char *message);
void lm_cli_log(void *data, lm_log_level level, const char *line);/* lm_options.log for the CLI */
int lm_cli_context(lm_cli *cli, lm_context **out);                /* context from the options */
void lm_cli_iso_time(double epoch, char *buf, size_t size);       /* 2026-11-29T19:00:00Z */

/* options.c: the tables, read by index (NULL past the end). */
const char *lm_cli_option_at(size_t i, const char **arg, const char **help);
const char *lm_cli_command_at(size_t i, const char **summary); /* usage line: "enable VM... [--profile P]" */
const char *lm_cli_option_env(size_t i);                      /* the variable that sets option i, or NULL */
const char *lm_cli_exit_at(size_t i, const char **meaning);   /* "0", "success"; NULL past the end */

/* help.c: help per command, and the nearest command to a mistyped one. */
int lm_cli_command_help(lm_cli *cli, const char *command, FILE *out); /* LM_EXIT_USAGE when unknown */
int lm_cli_subcommand_help(const char *command, const char *sub, FILE *out); /* 1: no such subcommand */
const char *lm_cli_nearest_subcommand(const char *command, const char *word); /* NULL when nothing is near */
const char *lm_cli_subcommand_words(const char *command);             /* "install remove list" */
int lm_cli_unknown_subcommand(lm_cli *cli, const char *command, const char *word); /* LM_EXIT_USAGE */
const char *lm_cli_nearest_command(const char *word);                /* NULL when nothing is near */
void lm_cli_usage(FILE *out);                                        /* the overview (--help, no command) */
int lm_cli_help_asked(lm_cli *cli);                                  /* --help: on cli->argv's words */
/* The examples, per command: the command line and what it does (NULL past the end). */
const char *lm_cli_example_at(size_t i, const char **command, const char **what);
/* "  LEFT   TEXT" with TEXT wrapped to width, continuation lines under its first column. */
void lm_cli_wrap(FILE *out, int width, const char *left, const char *text);
int lm_cli_command_takes(const char *command, const char *option);  /* its own or a common option */

/* completion.c: the completion script for bash, zsh or fish, from the tables above. */
int lm_cli_completion(const char *shell, FILE *out);                   /* -1: unknown shell */

/* progress.c: steps and waits as a live row per VM on a terminal, waits as a plain line every
 * 10 s elsewhere. */
void lm_cli_progress_wait(lm_cli *cli, const lm_step_event *ev);
void lm_cli_progress_clear(lm_cli *cli);                             /* before any other line */
/* The live row of `key` (a VM's name, "" for the host): set to this text and the area redrawn. */
void lm_cli_progress_row(lm_cli *cli, const char *key, const char *fmt, ...) LM_CLI_PRINTF(3, 4);
void lm_cli_progress_row_done(lm_cli *cli, const char *key);         /* its row goes */

/* output_flow.c: flow results. */
/* Whose domain holds the preference, and whether the Lume server's VMs read it, in one line. */
void lm_cli_pref_user_line(const lm_host_pref_info *pref, char *buf, size_t size);
/* Who gives a recorded change back (the last VM's rollback, or only host disable), in one line. */
/* A VM's host preference need, for people (enable's mode and what its proof showed). */
const char *lm_cli_pref_need(lm_host_pref_mode mode, lm_pref_needed needed);
const char *lm_cli_pref_mode(const lm_host_pref_info *pref);
/* The preference's -currentHost value, which wins over the one lume-metal writes, in one line. */
void lm_cli_pref_byhost_line(const lm_host_pref_info *pref, const lm_host_pref_byhost *b, char *buf, size_t size);
int lm_cli_flow_exit(const lm_flow_result *result);
void lm_cli_flow_print(lm_cli *cli, const lm_flow_result *result, int exit_code);
/* The recap line several VMs end with ("4 enabled, 0 failed in 2.2 s"; none for one VM), and a
 * failed VM's line (stdout) with its message and hint (stderr): lm_cli_flow_print's, for the
 * commands that print their VMs their own way (agent list). */
void lm_cli_flow_recap(const lm_cli *cli, const lm_flow_result *result);
/* total: the VM's time when it had no step (the run's, one VM); its steps' otherwise. */
void lm_cli_flow_failed_vm(lm_cli *cli, const lm_flow_result *result, const lm_vm_outcome *o, double total);
void lm_cli_flags_line(const lm_workload_flags *flags, char *buf, size_t len);
void lm_cli_agent_lines(FILE *out, const lm_vm_outcome *o); /* cmd_agent.c: the VM's agents, if any */
/* cmd_agent.c: agent install's spec and options from the command line (label, argv after "--"). */
void lm_cli_agent_spec(const lm_cli *cli, const char *label, lm_agent_spec *spec, lm_workload_options *wo);
void lm_cli_exercise_lines(const lm_cli *cli, FILE *out, const char *indent, const char *title,
    const lm_report *exercised, const char *os_version);

/* interrupt.c: SIGINT/SIGTERM during a command that changes VMs. */
void lm_cli_trap_signals(void);                      /* from now on, a signal cancels */
int lm_cli_should_cancel(void *data);                /* lm_options.should_cancel */
int lm_cli_interrupted(void);                        /* the signal caught, or 0 */
void lm_cli_interrupted_line(const lm_flow_result *result); /* the one line on what was left */
void lm_cli_exit_interrupted(void);                  /* end by the caught signal, if any */
void lm_cli_trap_hangup(void);                       /* run: SIGHUP too */
int lm_cli_pending_signal(void *data);               /* the signal caught since the last call, or 0 */

/* terminal.c: run's terminal (-i, -t, raw mode, the window's size). */
typedef struct {
	int forward; /* stdin goes to the workload (to its end, then EOF); else it reads EOF at once */
	int pty;     /* a pseudo-terminal in the guest */
	int raw;     /* the local terminal in raw mode meanwhile */
} lm_cli_run_io;
void lm_cli_run_terminal(int interactive, int tty, int stdin_tty, int stdout_tty, lm_cli_run_io *io);
int lm_cli_terminal_raw(void);                       /* stdin raw, SIGWINCH watched; -1 on failure */
void lm_cli_terminal_restore(void);                  /* as it was (async-signal-safe; idempotent) */
void lm_cli_terminal_size(unsigned int *cols, unsigned int *rows); /* 0 x 0 when no terminal */
int lm_cli_window_changed(void *data, unsigned int *cols, unsigned int *rows); /* window_size */

/* One function per command, in cmd_<name>.c. */
int lm_cmd_profile(lm_cli *cli);
int lm_cmd_host(lm_cli *cli);
int lm_cmd_enable(lm_cli *cli);
int lm_cmd_status(lm_cli *cli);
int lm_cmd_probe(lm_cli *cli);
void lm_cli_probe_table(const lm_cli *cli, const lm_vm_outcome *o); /* cmd_probe.c: the stock vs shimmed table */
int lm_cmd_run(lm_cli *cli);
/* run's and local run's lines after the workload: its activation records (children: the policy line). */
void lm_cli_activation_lines(const lm_cli *cli, const lm_run_result *res, int children);
int lm_cmd_rollback(lm_cli *cli);
int lm_cmd_forget_host(lm_cli *cli);
int lm_cmd_bench(lm_cli *cli);
int lm_cmd_report(lm_cli *cli);   /* cmd_report.c: evidence folders as issue-ready blocks */
int lm_cmd_gc(lm_cli *cli);
int lm_cmd_agent(lm_cli *cli);
int lm_cmd_doctor(lm_cli *cli);
int lm_cmd_selftest(lm_cli *cli);
int lm_cmd_help(lm_cli *cli);
int lm_cmd_version(lm_cli *cli);
int lm_cmd_completion(lm_cli *cli);
int lm_cmd_complete(lm_cli *cli); /* __complete vms: VM names for the completion scripts */
int lm_cmd_local(lm_cli *cli);    /* cmd_local.c: local probe|run|agent|status, one row each */
/* cmd_local_image.c: local install and local env, rows of cmd_local.c's table. */
int lm_cmd_local_install(lm_cli *cli, lm_context *ctx, const lm_profile *profile);
int lm_cmd_local_env(lm_cli *cli, lm_context *ctx, const lm_profile *profile);

#endif
