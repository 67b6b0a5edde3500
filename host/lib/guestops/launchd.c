/* launchd in the guest, as reference/lume.md's recipe drives it: plutil -lint, bootout when
 * loaded, bootstrap gui/UID, kickstart -k; never `launchctl setenv`.
 *
 * `launchctl bootout` returns before launchd lets go of the label: for some seconds (about 5 on
 * macOS 26.5, up to the job's ExitTimeOut) `print` still shows it and a bootstrap of the same
 * label fails with 5 (reference/vm-managers-and-bench.md, "launchd"). So a reload waits for
 * `print` to say the label is gone (113) and retries the bootstrap on 5, within a bound. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "guest_agents.h"
#include "guest_machine.h"
#include "ssh_deadline.h"
#include "test_hooks.h"
#include "text.h"

/* How often launchd is asked again while it holds a booted-out label. */
#define LM_LAUNCHD_POLL 0.25

/* A guest command from argv, its stdout and stderr kept (lm_free) and its exit status. */
static int run_argv_both(lm_ssh *ssh, const char *const *argv, size_t argc, char **sout, char **serr, int *st)
{
	return lm_ssh_ask_argv(ssh, argv, argc, 64 * 1024, sout, serr, st);
}

/* What a failed guest command said: its stderr, else its stdout. */
static const char *said(const char *sout, const char *serr)
{
	return serr != NULL && serr[0] ? serr : sout != NULL && sout[0] ? sout : "no output";
}

/* A guest command from argv; a non-zero exit is LM_EREMOTE naming `what` and its stderr, unless
 * status is wanted (then the caller judges). */
int lm_guest_run_argv(lm_ssh *ssh, const char *const *argv, size_t argc, const char *what, char **out, int *status)
{
	char *sout = NULL, *serr = NULL;
	int st = 0, rc;

	if (out != NULL)
		*out = NULL;
	rc = run_argv_both(ssh, argv, argc, &sout, &serr, &st);
	if (rc == 0 && status == NULL && st != 0)
		rc = lm_error_set(LM_EREMOTE, "%s failed (exit %d): %s", what, st, said(sout, serr));
	if (status != NULL)
		*status = st;
	if (rc == 0 && out != NULL) {
		*out = sout;
		sout = NULL;
	}
	lm_free(sout);
	lm_free(serr);
	return rc;
}

double lm_launchd_release_wait(void)
{
	return lm_test_launchd_wait(LM_LAUNCHD_RELEASE_WAIT);
}

/* One round of a launchd wait: LM_ETIMEOUT past the deadline (the caller says what did not
 * happen), LM_ECANCELED on request; otherwise reported and slept. */
static int launchd_wait_round(lm_context *ctx, const lm_launchd_wait *w, double since, double *last, const char *what)
{
	int rc;

	if (lm_clock_monotonic() >= w->deadline)
		return LM_ETIMEOUT;
	if ((rc = lm_context_check_cancel(ctx, what)) < 0)
		return rc;
	lm_context_waiting(ctx, w->vm, w->step, since, last, what);
	lm_clock_sleep(LM_LAUNCHD_POLL);
	return 0;
}

int lm_launchd_wait_gone(lm_context *ctx, lm_ssh *ssh, const char *domain, const char *label, const lm_launchd_wait *w)
{
	lm_agent_info a;
	double since = lm_clock_monotonic(), last = 0;
	char what[LM_AGENT_LABEL_MAX + 64];
	int rc;

	memset(&a, 0, sizeof(a));
	snprintf(a.label, sizeof(a.label), "%s", label);
	snprintf(what, sizeof(what), "launchd to let go of %s", label);
	for (;;) {
		if ((rc = lm_launchd_query(ssh, domain, &a)) < 0)
			return rc;
		if (strcmp(a.state, "not loaded") == 0)
			return 0;
		if ((rc = launchd_wait_round(ctx, w, since, &last, what)) == LM_ETIMEOUT)
			return lm_error_set(LM_ETIMEOUT, "launchd still holds %s %.0f s after its bootout "
			    "(`launchctl print %s/%s` still shows it)", label, lm_clock_monotonic() - since, domain, label);
		if (rc < 0)
			return rc;
	}
}

int lm_launchd_bootstrap(lm_context *ctx, lm_ssh *ssh, const char *domain, const char *plist, const lm_launchd_wait *w)
{
	const char *argv[] = {"launchctl", "bootstrap", domain, plist};
	double since = lm_clock_monotonic(), last = 0;
	char *sout = NULL, *serr = NULL;
	int st, rc;

	for (;;) {
		if ((rc = run_argv_both(ssh, argv, 4, &sout, &serr, &st)) < 0 || st == 0)
			break;
		/* 5: launchd has not let go of the label yet -- unless it says the file is refused for
		 * good (others may write it, or it is not the user's). */
		if (st != 5 || strstr(serr != NULL ? serr : "", "bad ownership/permissions") != NULL) {
			rc = lm_error_set(LM_EREMOTE, "launchctl bootstrap failed (exit %d): %s", st, said(sout, serr));
			break;
		}
		if ((rc = launchd_wait_round(ctx, w, since, &last, "launchd to accept the bootstrap")) == LM_ETIMEOUT) {
			rc = lm_error_set(LM_ETIMEOUT, "launchctl bootstrap still failed after %.0f s (exit %d): %s",
			    lm_clock_monotonic() - since, st, said(sout, serr));
			break;
		}
		lm_free(sout);
		lm_free(serr);
		sout = serr = NULL;
		if (rc < 0)
			break;
	}
	lm_free(sout);
	lm_free(serr);
	return rc;
}

/* The guest account's launchd domain, "gui/501". */
int lm_launchd_domain(lm_ssh *ssh, char *domain, size_t len)
{
	const char *argv[] = {"id", "-u"};
	char *out = NULL, *end;
	long uid;
	int rc;

	if ((rc = lm_guest_run_argv(ssh, argv, 2, "id -u", &out, NULL)) < 0)
		return rc;
	errno = 0;
	uid = strtol(out != NULL ? out : "", &end, 10);
	if (errno != 0 || end == out || (*end != '\0' && *end != '\n') || uid < 0) {
		rc = lm_error_set(LM_EREMOTE, "id -u in the guest printed '%s', not a user id", out != NULL ? out : "");
		lm_free(out);
		return rc;
	}
	lm_free(out);
	snprintf(domain, len, "gui/%ld", uid);
	return 0;
}

/* A decimal integer that is the whole of s[0..n) (an optional '-'), within -255..255. */
static int whole_int(const char *s, size_t n, int *v)
{
	int64_t x;

	if (lm_text_parse_i64(s, n, -255, 255, &x) < 0)
		return -1;
	*v = (int)x;
	return 0;
}

/* "last terminating signal = Terminated: 15": minus the signal's number. */
static int terminating_signal(const char *s, size_t n, int *v)
{
	size_t colon = n;

	while (colon > 0 && s[colon - 1] != ':')
		colon--;
	if (colon == 0)
		return -1;
	while (colon < n && s[colon] == ' ')
		colon++;
	if (whole_int(s + colon, n - colon, v) < 0 || *v <= 0)
		return -1;
	*v = -*v;
	return 0;
}

/* A path member ("stdout path = /Users/lume/..."), kept only when it fits. */
static void path_member(const char *v, size_t n, char *dst, size_t size)
{
	if (n < size)
		(void)lm_text_copy(dst, size, v, n);
}

/* launchd's view of one agent (`launchctl print gui/UID/LABEL`): not loaded (it exits non-zero),
 * or loaded with its state, pid, how it last ended and its log paths. The members read are the
 * ones `brew services info` reads from the same output (Homebrew/brew,
 * Library/Homebrew/services/formula_wrapper.rb: `pid = N`, `last exit code = N`) and launchd's
 * `stdout path = `/`stderr path = ` (the plist's StandardOutPath/StandardErrorPath); a job that
 * never exited says `last exit code = (never exited)`, one a signal ended `last terminating
 * signal = NAME: N` (launchctl(1): print's output is not API; what is not recognised is left
 * unknown, never guessed). */
int lm_launchd_query(lm_ssh *ssh, const char *domain, lm_agent_info *a)
{
	char target[160], *out = NULL;
	const char *argv[] = {"launchctl", "print", target}, *line, *v;
	size_t n, vn;
	uint64_t pid;
	lm_scan lines, l;
	int status = 0, rc, code;

	snprintf(target, sizeof(target), "%s/%s", domain, a->label);
	a->pid = 0;
	a->last_exit_known = 0;
	a->last_exit_status = 0;
	if ((rc = lm_guest_run_argv(ssh, argv, 3, "launchctl print", &out, &status)) < 0)
		return rc;
	if (status != 0) {
		snprintf(a->state, sizeof(a->state), "not loaded");
		lm_free(out);
		return 0;
	}
	snprintf(a->state, sizeof(a->state), "loaded");
	lm_scan_init(&lines, out, out != NULL ? strlen(out) : 0);
	while (lm_scan_line(&lines, &line, &n) != 0) {
		lm_scan_init(&l, line, n);
		lm_scan_span(&l, " \t");
		if (lm_scan_skip(&l, "state = ")) {
			lm_scan_rest(&l, &v, &vn);
			if (lm_text_is(v, vn, "running"))
				snprintf(a->state, sizeof(a->state), "running");
		} else if (lm_scan_skip(&l, "pid = ")) {
			if (lm_scan_u64(&l, LONG_MAX, &pid) == 0) /* the digits it starts with */
				a->pid = (long)pid;
		} else if (lm_scan_skip(&l, "last exit code = ")) {
			lm_scan_rest(&l, &v, &vn);
			if (whole_int(v, vn, &code) == 0)
				a->last_exit_known = 1, a->last_exit_status = code;
		} else if (lm_scan_skip(&l, "last terminating signal = ")) {
			lm_scan_rest(&l, &v, &vn);
			if (terminating_signal(v, vn, &code) == 0)
				a->last_exit_known = 1, a->last_exit_status = code;
		} else if (lm_scan_skip(&l, "stdout path = ")) {
			lm_scan_rest(&l, &v, &vn);
			path_member(v, vn, a->stdout_path, sizeof(a->stdout_path));
		} else if (lm_scan_skip(&l, "stderr path = ")) {
			lm_scan_rest(&l, &v, &vn);
			path_member(v, vn, a->stderr_path, sizeof(a->stderr_path));
		}
	}
	if (strcmp(a->state, "running") != 0)
		a->pid = 0;
	lm_free(out);
	return 0;
}

/* Out of launchd if it is in, and its plist gone. */
int lm_launchd_unload(lm_ssh *ssh, const char *domain, const char *home, lm_agent_info *a)
{
	lm_agent_paths_t paths;
	char target[160];
	const char *argv[] = {"launchctl", "bootout", target};
	int rc;

	if ((rc = lm_agent_paths(home, a->label, &paths)) < 0 || (rc = lm_launchd_query(ssh, domain, a)) < 0)
		return rc;
	snprintf(target, sizeof(target), "%s/%s", domain, a->label);
	if (strcmp(a->state, "not loaded") != 0 && (rc = lm_guest_run_argv(ssh, argv, 3, "launchctl bootout", NULL, NULL)) < 0)
		return rc;
	snprintf(a->state, sizeof(a->state), "not loaded");
	a->pid = 0;
	return lm_ssh_remove(ssh, paths.plist);
}

int lm_guest_agents_remove(lm_ssh *ssh, const lm_guest_facts *facts, const lm_agent_info *agents, size_t n,
    char *labels, size_t len)
{
	char domain[32];
	lm_agent_info a;
	size_t i, used;
	int rc;

	if (len > 0)
		labels[0] = '\0';
	if (n == 0)
		return 0;
	if ((rc = lm_launchd_domain(ssh, domain, sizeof(domain))) < 0)
		return rc;
	for (i = 0; i < n; i++) {
		a = agents[i];
		if ((rc = lm_launchd_unload(ssh, domain, facts->home, &a)) < 0)
			return rc;
		used = strlen(labels);
		if (used + 1 < len)
			snprintf(labels + used, len - used, "%s%s", i > 0 ? ", " : "", a.label);
	}
	return 0;
}

int lm_guest_agents_query(lm_ssh *ssh, lm_agent_info *const *agents, size_t n)
{
	char domain[32];
	size_t i;
	int rc;

	if (n == 0)
		return 0;
	if ((rc = lm_launchd_domain(ssh, domain, sizeof(domain))) < 0)
		return rc;
	for (i = 0; i < n; i++)
		if ((rc = lm_launchd_query(ssh, domain, agents[i])) < 0)
			return rc;
	return 0;
}

int lm_launchd_plist_keep(lm_ssh *ssh, const char *plist, char *backup, size_t size, int *had)
{
	lm_ssh_stat_info si;
	const char *cp_argv[] = {"cp", "-p", plist, backup};
	const char *slash = strrchr(plist, '/');
	int rc, n;

	*had = 0;
	if (slash == NULL || plist[0] != '/')
		return lm_error_set(LM_EINVALID, "%s: not an absolute path", plist);
	/* Hidden and not ending in .plist: nothing loads it at login. */
	n = snprintf(backup, size, "%.*s/.%s.lume-metal-previous", (int)(slash - plist), plist, slash + 1);
	if (n < 0 || (size_t)n >= size)
		return lm_error_set(LM_EINVALID, "%s: too long a path to keep a copy beside it", plist);
	if ((rc = lm_ssh_stat(ssh, plist, &si)) < 0)
		return rc;
	if (si.exists && (rc = lm_guest_run_argv(ssh, cp_argv, 4, "cp (the previous plist)", NULL, NULL)) < 0)
		return rc;
	*had = si.exists;
	return 0;
}

int lm_launchd_plist_put_back(lm_context *ctx, lm_ssh *ssh, const char *domain, const char *vm, const char *backup,
    int launchd_touched, const char *was, lm_agent_info *a)
{
	const char *mv_argv[] = {"mv", "-f", backup, a->plist};
	char target[160];
	const char *kick_argv[] = {"launchctl", "kickstart", target};
	/* launchd gets twice the install's wait to let go of the label: the user's agent matters
	 * more than the time. */
	lm_launchd_wait w = {lm_clock_monotonic() + 2 * lm_launchd_release_wait(), vm, "agent-restore"};
	int rc;

	snprintf(target, sizeof(target), "%s/%s", domain, a->label);
	if (launchd_touched) {
		/* The new one out, if it got in, and launchd's hold on the label over. */
		const char *out_argv[] = {"launchctl", "bootout", target};
		if ((rc = lm_launchd_query(ssh, domain, a)) < 0 ||
		    (strcmp(a->state, "not loaded") != 0 &&
		    (rc = lm_guest_run_argv(ssh, out_argv, 3, "launchctl bootout", NULL, NULL)) < 0) ||
		    (rc = lm_launchd_wait_gone(ctx, ssh, domain, a->label, &w)) < 0)
			return rc;
	}
	if ((rc = lm_guest_run_argv(ssh, mv_argv, 4, "mv (the previous plist back)", NULL, NULL)) < 0)
		return rc;
	if (launchd_touched && strcmp(was, "not loaded") != 0 &&
	    ((rc = lm_launchd_bootstrap(ctx, ssh, domain, a->plist, &w)) < 0 ||
	    (strcmp(was, "running") == 0 &&
	    (rc = lm_guest_run_argv(ssh, kick_argv, 3, "launchctl kickstart", NULL, NULL)) < 0)))
		return rc;
	return lm_launchd_query(ssh, domain, a);
}
