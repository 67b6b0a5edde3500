#include "lume-metal/context.h"
#include "context_internal.h"
#include "error_internal.h"
#include "clock.h"
#include "secret.h"
#include "str.h"
#include "trace.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Where each version of lm_options ends (the end of its last field): a caller built against
 * version N passed a struct that long, and nothing past it may be read or written. Adding a field
 * (at the end) means: LM_OPTIONS_VERSION + 1, the new version's line here, and OPTIONS_LAST moved
 * to the new last field. The rule is the embedders' (docs/embedding.md, "ABI"). */
#define OPTIONS_END(field) (offsetof(lm_options, field) + sizeof(((lm_options *)0)->field))
#define OPTIONS_LAST take_over
static const size_t options_size[] = {
	0,                            /* no version 0 */
	OPTIONS_END(restore_host),    /* 1 */
	OPTIONS_END(host_preference), /* 2: enable's host preference mode */
	OPTIONS_END(take_over),       /* 3: enable's and rollback's take-over of another state directory's files */
};
_Static_assert(sizeof(options_size) / sizeof(options_size[0]) == LM_OPTIONS_VERSION + 1,
    "a new LM_OPTIONS_VERSION needs its size in options_size");
_Static_assert(sizeof(lm_options) - OPTIONS_END(OPTIONS_LAST) < _Alignof(lm_options),
    "lm_options has a field past OPTIONS_LAST: a new field needs a new LM_OPTIONS_VERSION");

static int check_version(const char *fn, const char *what, unsigned int version)
{
	if (version < 1 || version > LM_OPTIONS_VERSION)
		return lm_error_set(LM_EINVALID, "%s: %s version %u; this library reads lm_options versions 1 to %d",
		    fn, what, version, LM_OPTIONS_VERSION);
	return 0;
}

int lm_options_init(lm_options *opts, unsigned int version)
{
	int rc;

	if (opts == NULL)
		return lm_error_set(LM_EINVALID, "lm_options_init: no options to fill");
	if ((rc = check_version("lm_options_init", "asked for", version)) < 0)
		return rc;
	/* Every default is 0 or NULL; lm_context_new resolves them. */
	memset(opts, 0, options_size[version]);
	opts->version = version;
	return 0;
}

static int dup_opt(const char **dst, const char *src)
{
	*dst = NULL;
	if (src == NULL)
		return 0;
	if ((*dst = strdup(src)) == NULL)
		return lm_error_nomem();
	return 0;
}

/* Directories must be absolute: a relative one names another directory from every working
 * directory, so a change recorded by one run would not be found by the next. */
static int check_dir_option(const char *value, const char *what)
{
	char *shown;
	int rc;

	if (value == NULL || value[0] == '\0' || value[0] == '/')
		return 0;
	shown = lm_text_printable(value);
	rc = lm_error_set(LM_EINVALID, "the %s '%s' is a relative path; an absolute path is required", what,
	    shown != NULL ? shown : "");
	lm_free(shown);
	return rc;
}

/* Timeouts become integer milliseconds: a NaN, an infinity or an absurd value would make that
 * conversion undefined. */
static int check_timeout(double seconds, const char *what)
{
	if (!(seconds >= 0 && seconds <= LM_TIMEOUT_MAX))
		return lm_error_set(LM_EINVALID, "the %s must be between 0 and %.0f seconds", what, LM_TIMEOUT_MAX);
	return 0;
}

static int check_options(const lm_options *opts)
{
	int rc;

	if ((rc = check_dir_option(opts->state_dir, "state directory")) < 0 ||
	    (rc = check_dir_option(opts->prefs_dir, "preferences directory")) < 0 ||
	    (rc = check_dir_option(opts->bundle_dir, "bundle directory")) < 0 ||
	    (rc = check_timeout(opts->connect_timeout, "connect timeout")) < 0 ||
	    (rc = check_timeout(opts->ready_timeout, "ready timeout")) < 0 ||
	    (rc = check_timeout(opts->command_timeout, "command timeout")) < 0 ||
	    (rc = check_timeout(opts->boot_margin, "boot margin")) < 0)
		return rc;
	if (lm_host_pref_mode_name(opts->host_preference)[0] == '\0')
		return lm_error_set(LM_EINVALID, "the host preference mode %d is none of always, auto, never",
		    (int)opts->host_preference);
	return 0;
}

static const char *const host_pref_modes[] = {
	[LM_HOST_PREF_ALWAYS] = "always", [LM_HOST_PREF_AUTO] = "auto", [LM_HOST_PREF_NEVER] = "never"};

const char *lm_host_pref_mode_name(lm_host_pref_mode mode)
{
	return (unsigned)mode < sizeof(host_pref_modes) / sizeof(host_pref_modes[0]) ? host_pref_modes[mode] : "";
}

int lm_host_pref_mode_parse(const char *name, lm_host_pref_mode *out)
{
	size_t i;

	for (i = 0; name != NULL && i < sizeof(host_pref_modes) / sizeof(host_pref_modes[0]); i++)
		if (strcmp(name, host_pref_modes[i]) == 0) {
			*out = (lm_host_pref_mode)i;
			return 0;
		}
	return lm_error_set(LM_EINVALID, "the host preference mode '%s' is none of always, auto, never",
	    name != NULL ? name : "");
}

int lm_context_new(lm_context **out, const lm_options *given)
{
	lm_options theirs, *opts = &theirs;
	lm_context *ctx;
	int rc = 0;

	*out = NULL;
	if (given == NULL)
		return lm_error_set(LM_EINVALID, "lm_context_new: no options given");
	if ((rc = check_version("lm_context_new", "options of", given->version)) < 0)
		return rc;
	/* Only the caller's version's fields: the ones added later keep their defaults (0). */
	memset(&theirs, 0, sizeof(theirs));
	memcpy(&theirs, given, options_size[given->version]);
	if ((rc = check_options(opts)) < 0)
		return rc;
	if ((ctx = calloc(1, sizeof(*ctx))) == NULL)
		return lm_error_nomem();
	ctx->opts = *opts;
	ctx->trace_fd = -1;
	ctx->created_at = lm_clock_monotonic();
	/* Every string is copied below; until then the context owns none (a failed copy frees only
	 * the copies made, never the caller's strings). */
	ctx->opts.state_dir = ctx->opts.prefs_dir = ctx->opts.lume_url = ctx->opts.lume_program = NULL;
	ctx->opts.ssh_user = ctx->opts.ssh_key = ctx->opts.ssh_password_file = ctx->opts.bundle_dir = NULL;
	ctx->opts.vm_address = ctx->opts.tart_program = ctx->opts.utmctl_program = NULL;
	ctx->opts.version = LM_OPTIONS_VERSION;
	pthread_mutex_init(&ctx->callback_lock, NULL);
	pthread_mutex_init(&ctx->memo_lock, NULL);
	if ((rc = dup_opt(&ctx->opts.state_dir, opts->state_dir)) < 0 ||
	    (rc = dup_opt(&ctx->opts.prefs_dir, opts->prefs_dir)) < 0 ||
	    (rc = dup_opt(&ctx->opts.lume_url, opts->lume_url)) < 0 ||
	    (rc = dup_opt(&ctx->opts.lume_program, opts->lume_program)) < 0 ||
	    (rc = dup_opt(&ctx->opts.ssh_user, opts->ssh_user)) < 0 ||
	    (rc = dup_opt(&ctx->opts.ssh_key, opts->ssh_key)) < 0 ||
	    (rc = dup_opt(&ctx->opts.ssh_password_file, opts->ssh_password_file)) < 0 ||
	    (rc = dup_opt(&ctx->opts.bundle_dir, opts->bundle_dir)) < 0 ||
	    (rc = dup_opt(&ctx->opts.vm_address, opts->vm_address)) < 0 ||
	    (rc = dup_opt(&ctx->opts.tart_program, opts->tart_program)) < 0 ||
	    (rc = dup_opt(&ctx->opts.utmctl_program, opts->utmctl_program)) < 0) {
		lm_context_free(ctx);
		return rc;
	}
	if (ctx->opts.connect_timeout <= 0)
		ctx->opts.connect_timeout = 10;
	if (ctx->opts.ready_timeout <= 0)
		ctx->opts.ready_timeout = 300;
	if (ctx->opts.command_timeout <= 0)
		ctx->opts.command_timeout = 120;
	if (ctx->opts.boot_margin <= 0)
		ctx->opts.boot_margin = 30;
	if ((rc = lm_trace_open(&ctx->trace_fd)) < 0) {
		lm_context_free(ctx);
		return rc;
	}
	lm_trace_clock(ctx);
	if ((rc = lm_paths_state_dir(&ctx->state_dir, ctx->opts.state_dir)) < 0) {
		lm_context_free(ctx);
		return rc;
	}
	/* A password from the environment is read once, here, last (a context that
	 * could not be made leaves the environment as it was), and the variable removed: no child, no
	 * later getenv, no /proc/PID/environ sees it again. A process holding a password (from there
	 * or a file read at login) writes no core dump (secret.h; issue 49 item 11). */
	if ((rc = lm_secret_take_env(LM_SSH_PASSWORD_ENV, &ctx->ssh_password)) < 0) {
		lm_context_free(ctx);
		return rc;
	}
	if (ctx->ssh_password != NULL || (ctx->opts.ssh_password_file != NULL && ctx->opts.ssh_password_file[0] != '\0'))
		lm_secret_protect_process();
	*out = ctx;
	return 0;
}

void lm_context_free(lm_context *ctx)
{
	if (ctx == NULL)
		return;
	free((void *)ctx->opts.state_dir);
	free((void *)ctx->opts.prefs_dir);
	free((void *)ctx->opts.lume_url);
	free((void *)ctx->opts.lume_program);
	free((void *)ctx->opts.ssh_user);
	free((void *)ctx->opts.ssh_key);
	free((void *)ctx->opts.ssh_password_file);
	free((void *)ctx->opts.bundle_dir);
	free((void *)ctx->opts.vm_address);
	free((void *)ctx->opts.tart_program);
	free((void *)ctx->opts.utmctl_program);
	free(ctx->state_dir);
	lm_secret_free(ctx->ssh_password);
	pthread_mutex_destroy(&ctx->callback_lock);
	pthread_mutex_destroy(&ctx->memo_lock);
	free(ctx->server_memo);
	lm_trace(ctx, NULL, "context", ctx->created_at);
	if (ctx->trace_fd >= 0)
		close(ctx->trace_fd);
	free(ctx);
}

const lm_options *lm_context_options(const lm_context *ctx)
{
	return &ctx->opts;
}

const char *lm_context_state_dir(const lm_context *ctx)
{
	return ctx->state_dir;
}

/* The lock is taken through a non-const pointer: calling back is not a change of the context. */
static pthread_mutex_t *callback_lock(const lm_context *ctx)
{
	return (pthread_mutex_t *)&ctx->callback_lock;
}

void lm_log(const lm_context *ctx, lm_log_level level, const char *fmt, ...)
{
	char *line;
	va_list ap;

	if (ctx == NULL || ctx->opts.log == NULL)
		return;
	va_start(ap, fmt);
	line = lm_vformat(fmt, ap);
	va_end(ap);
	if (line == NULL)
		return;
	pthread_mutex_lock(callback_lock(ctx));
	ctx->opts.log(ctx->opts.log_data, level, line);
	pthread_mutex_unlock(callback_lock(ctx));
	free(line);
}

void lm_context_step(const lm_context *ctx, const char *vm, const char *name, lm_step_state state,
    double elapsed, const char *detail)
{
	lm_step_event ev;

	if (ctx == NULL || ctx->opts.on_step == NULL)
		return;
	ev.vm = vm != NULL ? vm : "";
	ev.name = name;
	ev.state = state;
	ev.elapsed = elapsed;
	ev.detail = detail != NULL ? detail : "";
	pthread_mutex_lock(callback_lock(ctx));
	ctx->opts.on_step(ctx->opts.callback_data, &ev);
	pthread_mutex_unlock(callback_lock(ctx));
}

void lm_context_output(const lm_context *ctx, const char *vm, int stream, const char *bytes, size_t len)
{
	if (ctx == NULL || ctx->opts.on_output == NULL || len == 0)
		return;
	pthread_mutex_lock(callback_lock(ctx));
	ctx->opts.on_output(ctx->opts.callback_data, vm, stream, bytes, len);
	pthread_mutex_unlock(callback_lock(ctx));
}

void lm_context_waiting(const lm_context *ctx, const char *vm, const char *step, double since, double *last,
    const char *what)
{
	double now = lm_clock_monotonic();

	if (*last > 0 && now - *last < 1.0)
		return;
	*last = now;
	lm_context_step(ctx, vm, step, LM_STEP_WAITING, now - since, what);
}

int lm_context_check_cancel(const lm_context *ctx, const char *what)
{
	int stop;

	if (ctx == NULL || ctx->opts.should_cancel == NULL)
		return 0;
	pthread_mutex_lock(callback_lock(ctx));
	stop = ctx->opts.should_cancel(ctx->opts.callback_data);
	pthread_mutex_unlock(callback_lock(ctx));
	return stop ? lm_error_set(LM_ECANCELED, "canceled %s", what) : 0;
}
