/* Text and JSON output, errors and progress lines. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

void lm_cli_puts(FILE *out, const char *text)
{
	char *clean = lm_text_printable(text != NULL ? text : "");

	fputs(clean != NULL ? clean : "(out of memory)", out);
	lm_free(clean);
}

void lm_cli_printf(FILE *out, const char *fmt, ...)
{
	char *text;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((text = malloc((size_t)n + 1)) == NULL) {
		fputs("(out of memory)\n", out);
		return;
	}
	va_start(ap, fmt);
	vsnprintf(text, (size_t)n + 1, fmt, ap);
	va_end(ap);
	lm_cli_puts(out, text);
	free(text);
}

/* Replace *s (cJSON's memory) by its printable form when that differs. */
static int printable_in_place(char **s)
{
	char *clean, *copy;
	size_t n;

	if (*s == NULL)
		return 0;
	if ((clean = lm_text_printable(*s)) == NULL)
		return -1;
	if (strcmp(clean, *s) != 0) {
		n = strlen(clean) + 1;
		if ((copy = cJSON_malloc(n)) == NULL) {
			lm_free(clean);
			return -1;
		}
		memcpy(copy, clean, n);
		cJSON_free(*s);
		*s = copy;
	}
	lm_free(clean);
	return 0;
}

/* Every string and member name of a document through the one sanitiser: what reaches stdout is
 * valid UTF-8 without control bytes, whatever the bytes of argv, a file, Lume or a guest were. */
static int printable_json(cJSON *item)
{
	for (; item != NULL; item = item->next) {
		if (!(item->type & cJSON_StringIsConst) && printable_in_place(&item->string) < 0)
			return -1;
		if (cJSON_IsString(item) && printable_in_place(&item->valuestring) < 0)
			return -1;
		if (item->child != NULL && printable_json(item->child) < 0)
			return -1;
	}
	return 0;
}

void lm_cli_print_json(cJSON *doc)
{
	char *text;

	/* Strings from argv, files, Lume or a guest: valid UTF-8 whatever their bytes were. */
	if (printable_json(doc) < 0) {
		cJSON_Delete(doc);
		fputs("lume-metal: out of memory\n", stderr);
		return;
	}
	text = cJSON_Print(doc);

	if (text != NULL) {
		fputs(text, stdout);
		fputc('\n', stdout);
		free(text);
	}
	cJSON_Delete(doc);
	fflush(stdout);
}

const char *lm_cli_advice(int code)
{
	switch (code) {
	case LM_EVMOWNER:
		return "Let lume-metal use the Lume API instead: start `lume serve` (or pass --lume-url with the "
		    "address it listens on), and do not force --vm-manager lume-cli.";
	case LM_EWRONGUSER:
		return "--force-user-mismatch writes it anyway: dangerous, see docs/preferences.md.";
	case LM_ENOTPROVEN:
		return "Stop and start the VM so that it reads the preference now in effect, check with `lume-metal "
		    "host status` that the Lume server runs as the user whose preference was written, then enable "
		    "again; `lume-metal probe VM --exercise` shows each kernel's result.";
	default:
		return NULL;
	}
}

static int report(const lm_cli *cli, int exit_code, int code, const char *code_name, const char *message)
{
	const char *advice = lm_cli_advice(code);
	cJSON *doc, *err;

	if (cli != NULL && cli->json) {
		doc = cJSON_CreateObject();
		cJSON_AddNumberToObject(doc, "schema", 1);
		cJSON_AddStringToObject(doc, "command", cli->command);
		cJSON_AddBoolToObject(doc, "ok", 0);
		err = cJSON_AddObjectToObject(doc, "error");
		cJSON_AddStringToObject(err, "code", code_name);
		cJSON_AddStringToObject(err, "message", message);
		if (advice != NULL)
			cJSON_AddStringToObject(err, "advice", advice);
		cJSON_AddNumberToObject(doc, "exit_code", exit_code);
		lm_cli_print_json(doc);
	}
	lm_cli_printf(stderr, "lume-metal: %s\n", message);
	if (advice != NULL)
		lm_cli_printf(stderr, "  %s\n", advice);
	return exit_code;
}

int lm_cli_fail(const lm_cli *cli, int exit_code)
{
	const lm_error *e = lm_error_last();

	return report(cli, exit_code, e->code, lm_error_name(e->code), e->message[0] ? e->message : "failed");
}

int lm_cli_usage_error(const lm_cli *cli, const char *fmt, ...)
{
	char message[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(message))
		memcpy(message + sizeof(message) - 4, "...", 4); /* cut, visibly */
	return report(cli, LM_EXIT_USAGE, LM_EINVALID, "usage", message);
}

void lm_cli_log(void *data, lm_log_level level, const char *line)
{
	const lm_cli *cli = data;

	if (level == LM_LOG_DEBUG && !cli->verbose)
		return;
	if (cli->json && level == LM_LOG_INFO)
		return;
	lm_cli_printf(stderr, "%s%s\n", level == LM_LOG_WARN ? "warning: " : "", line);
}

int lm_cli_context(lm_cli *cli, lm_context **out)
{
	if (lm_context_new(out, &cli->lib) < 0)
		return lm_cli_fail(cli, LM_EXIT_FAILURE);
	return 0;
}
