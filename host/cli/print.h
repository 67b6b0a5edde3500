/* The CLI's writers (print.c): the one way text reaches a stream, and the rule for a stdout that
 * cannot be written. Included by cli.h. */
#ifndef LM_CLI_PRINT_H
#define LM_CLI_PRINT_H

#include <stddef.h>
#include <stdio.h>

#if defined(__GNUC__)
#define LM_CLI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define LM_CLI_PRINTF(a, b)
#endif

/* print.c: text that may carry echoed input (names, paths, messages with outside bytes) reaches a
 * terminal only through these: the one sanitiser (lm_text_printable) turns control bytes, escape
 * sequences and invalid UTF-8 into visible \xNN; newlines and tabs are kept. */
void lm_cli_puts(FILE *out, const char *text);
void lm_cli_printf(FILE *out, const char *fmt, ...) LM_CLI_PRINTF(2, 3);
void lm_cli_put_raw(FILE *out, const char *text); /* the tool's own bytes as they are (colour escapes) */
/* Output that cannot be written (the rule is print.c's): the writers above end the command at the
 * first failed write of stdout; the library's callbacks write with lm_cli_output_write and _printf
 * instead (-1: failed, recorded; stream 1 stdout, 2 stderr), and the command ends once the library
 * has returned. */
int lm_cli_output_write(int stream, const char *bytes, size_t len);
int lm_cli_output_printf(int stream, const char *fmt, ...) LM_CLI_PRINTF(2, 3); /* sanitised */
int lm_cli_output_failed(int *stream);  /* the errno of the first failed write (0: none), its stream */
_Noreturn void lm_cli_output_end(void); /* the line on stderr, then exit 1 */
void lm_cli_flush(void);                /* stdout flushed now; a failure ends the command */
void lm_cli_output_stdout_open(void);   /* main.c first: a closed stdout ends the command at once */
int lm_cli_output_close(int exit_code); /* main.c last: stdout flushed and closed; the exit code */

#endif
