/* run's workload in the guest as `tart exec` runs one: input, pseudo-terminal and output through
 * lm_ssh_exec_session, in a process group of its own so that a stop reaches every process of it.
 *
 * sshd starts each session's command in a new session (setsid), so the login shell that runs it
 * leads a process group; it writes that group's kill target into the run's record directory and
 * execs the workload, which keeps the group and passes it to its children. A stop signals the
 * group over another channel (SSH's "signal" request would reach the session's process alone),
 * waits for it to go, SIGKILLs what is left after the grace and checks that nothing is. The wait
 * runs in the guest, in one command that writes nothing until it is done: should lume-metal itself
 * be killed meanwhile, the guest still finishes the stop. */
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guestops.h"
#include "ssh_session.h"
#include "str.h"

#define GROUP_FILE LM_WORKLOAD_GROUP_FILE
#define GRACE_DEFAULT 5.0

/* Each version ends where the next one's fields begin: a program built with it has a shorter struct. */
static size_t options_size(unsigned int version)
{
	return version == 1 ? offsetof(lm_workload_options, input) :
	    version == 2 ? offsetof(lm_workload_options, resign_copy) : sizeof(lm_workload_options);
}

int lm_workload_resign_copy(const lm_workload_options *opts)
{
	return opts != NULL && opts->version >= 3 && opts->resign_copy;
}

const char *lm_workload_process_type(const lm_workload_options *opts)
{
	return opts != NULL && opts->version >= 3 && opts->process_type != NULL ? opts->process_type : "Interactive";
}

int lm_workload_options_init(lm_workload_options *opts, unsigned int version)
{
	if (opts == NULL)
		return lm_error_set(LM_EINVALID, "lm_workload_options_init: no options to fill");
	if (version < 1 || version > LM_WORKLOAD_OPTIONS_VERSION)
		return lm_error_set(LM_EINVALID, "lm_workload_options_init: version %u is not one this library knows "
		    "(1 to %d)", version, LM_WORKLOAD_OPTIONS_VERSION);
	memset(opts, 0, options_size(version));
	opts->version = version;
	return 0;
}

int lm_workload_options_copy(lm_workload_options *dst, const lm_workload_options *opts)
{
	memset(dst, 0, sizeof(*dst));
	dst->version = LM_WORKLOAD_OPTIONS_VERSION;
	if (opts == NULL)
		return 0;
	if (opts->version < 1 || opts->version > LM_WORKLOAD_OPTIONS_VERSION)
		return lm_error_set(LM_EINVALID, "run: workload options of version %u, which this library does not know "
		    "(1 to %d)", opts->version, LM_WORKLOAD_OPTIONS_VERSION);
	memcpy(dst, opts, options_size(opts->version));
	if (dst->input && dst->input_fd < 0)
		return lm_error_set(LM_EINVALID, "run: input is set and input_fd (%d) is not a file descriptor", dst->input_fd);
	if (!(dst->stop_grace >= 0 && dst->stop_grace <= 3600))
		return lm_error_set(LM_EINVALID, "run: stop_grace must be between 0 and 3600 seconds");
	return 0;
}

int lm_workload_group_command(const char *record_dir, const char *cmd, char **out)
{
	char *path = NULL, *q = NULL;
	int rc;

	*out = NULL;
	if ((path = lm_format("%s/" GROUP_FILE, record_dir)) == NULL)
		return lm_error_nomem();
	if ((rc = lm_shell_quote(path, &q)) == 0 &&
	    (*out = lm_format("if kill -s 0 -- -$$ 2>/dev/null; then t=-$$; else t=$$; fi; printf '%%s\\n' \"$t\" >%s && "
	    "exec %s", q, cmd)) == NULL)
		rc = lm_error_nomem();
	free(path);
	lm_free(q);
	return rc;
}

/* Run by the guest's login shell: wait (2 s at most) for the target the wrapper wrote; signal
 * it; wait TENTHS tenths of a second for it to go, then SIGKILL and wait 5 s more. Prints the
 * target; exit 0 ended, 1 killed (none left), 2 processes left, 3 no target (not started). */
static const char stop_script[] =
	"f=%s; i=0\n"
	"while [ ! -s \"$f\" ]; do [ $i -ge 20 ] && exit 3; sleep 0.1; i=$((i+1)); done\n"
	"read -r t <\"$f\"\n"
	"printf '%%s\\n' \"$t\"\n"
	"kill -s %s -- \"$t\" 2>/dev/null || exit 0\n"
	"i=0\n"
	"while kill -s 0 -- \"$t\" 2>/dev/null; do\n"
	"  if [ $i -ge %d ]; then\n"
	"    kill -s KILL -- \"$t\" 2>/dev/null; j=0\n"
	"    while kill -s 0 -- \"$t\" 2>/dev/null; do [ $j -ge 50 ] && exit 2; sleep 0.1; j=$((j+1)); done\n"
	"    exit 1\n"
	"  fi\n"
	"  sleep 0.1; i=$((i+1))\n"
	"done\n";

static const char *signal_word(int sig)
{
	return sig == SIGINT ? "INT" : sig == SIGHUP ? "HUP" : sig == SIGKILL ? "KILL" : "TERM";
}

typedef struct {
	lm_context *ctx;
	const char *vm;
	const char *record_dir;
	double grace;
	int outcome;        /* the stop script's exit status; -1 before a stop */
	char target[32];    /* the group's kill target ("-1234"), as the guest wrote it */
} run_session;

static void session_out(void *data, int stream, const char *bytes, size_t len)
{
	const run_session *r = data;

	lm_context_output(r->ctx, r->vm, stream, bytes, len);
}

static int session_stop(void *data, lm_ssh *ssh, int sig)
{
	run_session *r = data;
	char *path = NULL, *q = NULL, *script = NULL, *out = NULL;
	int rc;

	if ((path = lm_format("%s/" GROUP_FILE, r->record_dir)) == NULL)
		return lm_error_nomem();
	if ((rc = lm_shell_quote(path, &q)) == 0 &&
	    (script = lm_format(stop_script, q, signal_word(sig), (int)(r->grace * 10.0))) == NULL)
		rc = lm_error_nomem();
	if (rc == 0)
		rc = lm_ssh_exec_capture(ssh, script, 64, &out, NULL, &r->outcome);
	if (rc == 0)
		snprintf(r->target, sizeof(r->target), "%.*s", (int)strcspn(out, "\n"), out);
	free(path);
	lm_free(q);
	free(script);
	lm_free(out);
	return rc;
}

/* How the stop went, as the run's error (LM_ECANCELED; LM_EREMOTE when processes were left). */
static int stopped(const run_session *r, int sig, int status)
{
	const char *name = signal_word(sig);
	const char *group = r->target[0] == '-' ? "its process group" : "its process";
	const char *id = r->target[0] == '-' ? r->target + 1 : r->target;

	switch (r->outcome) {
	case 0:
		return lm_error_set(LM_ECANCELED, "%s: run stopped: SIG%s went to the workload's process group (%s); it "
		    "ended (exit %d), nothing of it is left", r->vm, name, id, status);
	case 1:
		return lm_error_set(LM_ECANCELED, "%s: run stopped: the workload did not end within %.0f s of SIG%s; %s "
		    "(%s) was killed (SIGKILL), nothing of it is left", r->vm, r->grace, name, group, id);
	case 3:
		return lm_error_set(LM_ECANCELED, "%s: run stopped before the workload started (SIG%s)", r->vm, name);
	default:
		return lm_error_set(LM_EREMOTE, "%s: run stopped (SIG%s), but processes of the workload's %s (%s) are "
		    "still running in the guest 5 s after SIGKILL (exit %d of the stop)", r->vm, name,
		    r->target[0] == '-' ? "process group" : "process", id, r->outcome);
	}
}

/* The run failed with the connection still up (the local input unreadable, the guest refusing a
 * window change): the workload must not outlive it. Its group is stopped as on SIGTERM; the error
 * stays the run's, saying so. */
static int failed(run_session *r, lm_ssh *ssh, int rc)
{
	char saved[2048];

	snprintf(saved, sizeof(saved), "%s", lm_error_last()->message);
	lm_ssh_set_cancelable(ssh, 0);
	if (session_stop(r, ssh, SIGTERM) < 0 || r->outcome == 2)
		return lm_error_set(rc, "%s; stopping the workload failed too, it may still run in the guest", saved);
	return lm_error_set(rc, "%s; the workload was stopped (its process group got SIGTERM%s)", saved,
	    r->outcome == 1 ? ", then SIGKILL" : "");
}

int lm_guest_workload_run(lm_context *ctx, lm_ssh *ssh, const char *vm, const char *cmd, const lm_workload_options *o,
    lm_run_result *res)
{
	run_session r;
	lm_ssh_session_io io;
	lm_ssh_session_end end;
	char *wrapped = NULL;
	int rc;

	memset(&r, 0, sizeof(r));
	r.ctx = ctx;
	r.vm = vm;
	r.record_dir = res->record_dir;
	r.grace = o->stop_grace > 0 ? o->stop_grace : GRACE_DEFAULT;
	r.outcome = -1;
	memset(&io, 0, sizeof(io));
	io.input_fd = o->input ? o->input_fd : -1;
	io.tty = o->tty;
	io.cols = o->tty_cols;
	io.rows = o->tty_rows;
	io.term = o->tty_term;
	io.out = session_out;
	io.out_data = &r;
	io.pending_signal = o->pending_signal;
	io.window = o->window_size;
	io.data = o->callback_data;
	io.stop = session_stop;
	io.stop_data = &r;
	end.exit_status = 255;
	end.stopped_by = 0;
	if ((rc = lm_workload_group_command(res->record_dir, cmd, &wrapped)) < 0)
		return rc;
	rc = lm_ssh_exec_session(ssh, wrapped, &io, &end);
	free(wrapped);
	if (rc < 0 && end.stopped_by == 0 && lm_ssh_usable(ssh))
		return failed(&r, ssh, rc);
	res->exit_status = end.exit_status;
	res->stopped_by = end.stopped_by;
	res->stop_killed = r.outcome == 1;
	if (rc == 0 && end.stopped_by != 0)
		rc = stopped(&r, end.stopped_by, end.exit_status);
	return rc;
}
