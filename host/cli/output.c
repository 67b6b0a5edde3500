/* Text and JSON output, errors and progress lines. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

void lm_cli_print_json(cJSON *doc)
{
	char *text = cJSON_Print(doc);

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
	fprintf(stderr, "lume-metal: %s\n", message);
	if (advice != NULL)
		fprintf(stderr, "  %s\n", advice);
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

	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	return report(cli, LM_EXIT_USAGE, LM_EINVALID, "usage", message);
}

void lm_cli_log(void *data, lm_log_level level, const char *line)
{
	const lm_cli *cli = data;

	if (level == LM_LOG_DEBUG && !cli->verbose)
		return;
	if (cli->json && level == LM_LOG_INFO)
		return;
	fprintf(stderr, "%s%s\n", level == LM_LOG_WARN ? "warning: " : "", line);
}

int lm_cli_context(lm_cli *cli, lm_context **out)
{
	if (lm_context_new(out, &cli->lib) < 0)
		return lm_cli_fail(cli, LM_EXIT_FAILURE);
	return 0;
}
