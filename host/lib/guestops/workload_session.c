/* run's workload in the guest as `tart exec` runs one: input, pseudo-terminal and output through
 * lm_ssh_exec_session, in a process group of its own so that a stop reaches every process of it.
 *
 * sshd starts each session's command in a new session (setsid), so the login shell that runs it
 * leads a process group; before it execs the workload it says that group's kill target on the
 * channel (a mark cut out of the output here) and writes it into the run's record directory (the
 * sign that the workload started, and what the next run's sweep looks at). The workload keeps the
 * group and passes it to its children; a child may leave it (setsid), and the workload can
 * rewrite the file. So a stop takes the group from the mark, never from the file, and finds the
 * processes that left the group by their ancestry (lm_workload_stop_script); it signals them all over another
 * channel (SSH's "signal" request would reach the session's process alone), waits for them to go,
 * SIGKILLs what is left after the grace and checks what is. The wait runs in the guest, in one
 * command that writes nothing until it is done: should lume-metal itself be killed meanwhile, the
 * guest still finishes the stop. */
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest_activation.h"
#include "guest_workload.h"
#include "ssh_session.h"
#include "str.h"
#include "text.h"

#define GROUP_FILE LM_WORKLOAD_GROUP_FILE
#define GRACE_DEFAULT LM_WORKLOAD_STOP_GRACE

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
	    (*out = lm_format("if kill -s 0 -- -$$ 2>/dev/null; then t=-$$; else t=$$; fi; "
	    "printf '\\033]" LM_WORKLOAD_MARK_WORD ";%%s\\007' \"$t\" && printf '%%s\\n' \"$t\" >%s && exec %s", q, cmd)) == NULL)
		rc = lm_error_nomem();
	free(path);
	lm_free(q);
	return rc;
}

/* The stop, run by /bin/sh in a session of its own on the run's SSH connection (the shell's parent
 * is sshd's process for that connection, which started the workload's session too: OpenSSH's
 * session.c forks every session's command from that process). Arguments: the group file, the
 * signal word, the grace in tenths of a second, the connection's sessions from before the
 * workload's (before_script), the launching process as the mark said it and "-" when it leads its
 * group (both empty when no mark came).
 *
 * What it stops is never taken from the group file: the file only says that the workload started
 * (the wrapper writes it just before the exec), and what it names is compared with what was
 * found. The launching process (the workload itself after the wrapper's exec) is the mark's -- a
 * PID alive with another parent than the connection's sshd process was reused, and is not
 * believed -- or, with no mark yet, the connection's sshd process's other child, not one from
 * before. Its group (a PID is not reused while a process group has it as its id: POSIX.1-2017 XBD
 * "Process ID Reuse"; so a group of the mark's PID is the one it led, even after it ended), and
 * every descendant of it or of a member of that group, found by their parent PIDs in one `ps`
 * table, are the run's: a child that called setsid (leaving the group) is still its parent's
 * child. The table is read before
 * any signal, so that the processes whose parent the signal ends (reparented to launchd, PID 1)
 * are known by then; each later table keeps a known process while its PID still has the parent
 * and group it had (or launchd as its parent: a PID reused meanwhile has neither), adds any new
 * descendant, and drops the ended. The group gets the signal as one (kill -- -G), each found
 * process outside it its own, and the group of each found process that leads one (a child that
 * called setsid) as one too; every later table counts that group's members as the run's while any
 * is left, so a process such a child forked after the first table, orphaned when the child ended,
 * is still found (e2e_run_setsid's sleep loop, under load: issue 49; a group id is not reused
 * while the group has a member, POSIX.1-2017 XBD "Process ID Reuse"); after the grace SIGKILL,
 * then a final table says what is left. A process that left the group and whose parent had ended
 * before the stop is found by nothing; if it loaded the shim, its activation record names it
 * (below).
 *
 * ps: -A and -o with the keywords pid, ppid, pgid and state (its first letter Z: a zombie,
 * ended), each header empty (`KEY=`) and so no header line: POSIX.1-2017 ps(1) for -A, -o, pid,
 * ppid and pgid; macOS's ps(1) (the macOS 15 manual page) lists them and `state`, as procps does.
 * A separate -o for each keyword: POSIX makes the rest of an -o argument after `=` the header,
 * commas included. Nothing relies on a session id: macOS's `sess` is the kernel's session pointer,
 * not an id (Proc::ProcessTable's README.darwin: "sess  session pointer"; it found no way to the
 * session id), and POSIX ps has no keyword for one.
 *
 * Prints `file T` (what the file says, `invalid` when it is no kill target), `group G` for each
 * group found, `reused` when the mark's PID was not believed, `foreign` when T is neither the
 * group found nor the launching process, `others P...` (found processes outside the groups,
 * signalled one by one), `left P...` (still running after
 * SIGKILL), `records P...` (PIDs of this run's activation records, <pid>.json beside the group
 * file, still running though none of the run's found processes: not signalled, they may be the
 * workload's or a PID reused) and `unverified P...` (with nothing found: the processes of the
 * group the file names, which nothing ties to the session; not signalled). At most 16 PIDs a
 * list. Exit 0 ended, 1 killed (none left), 2 processes left, 3 no file (not started), 4 nothing
 * of the session found.
 *
 * The grace is counted on the guest's clock as well as in turns: SIGKILL when the turns (each
 * sleeps 0.1 s, so they never come early) reach it, or when `date +%s` says ceil(grace) + 1 s have
 * passed (whole seconds hide less than one, so never early either), whichever comes first; after
 * SIGKILL the same for 5 s turns or 6 clock seconds. Turns alone are slow on a loaded guest (the
 * ps table and awk each turn: the 5 s grace took 13.6 and 18.1 s at load 10, issue 49 item 8,
 * while a CI runner kills what it stops 10 s after SIGTERM). `%s` is macOS's strftime(3)'s (its
 * date(1) formats with it) and GNU's; where date fails the clock reads 0 and the turns decide. */
const char lm_workload_stop_script[] =
	"f=$1 sig=$2 n=$3 before=$4 launcher=$5 lgroup=$6 s=$PPID me=$$ dir=${1%/*}\n"
	"i=0\n"
	"while [ ! -s \"$f\" ]; do [ $i -ge 20 ] && exit 3; sleep 0.1; i=$((i+1)); done\n"
	"t=; read -r t <\"$f\" || :\n"
	"case $t in ''|-|*[!0-9-]*|?*-*|?????????????*) t=invalid;; esac\n"
	"printf 'file %s\\n' \"$t\"\n"
	"table() { ps -A -o pid= -o ppid= -o pgid= -o state=; }\n"
	"scan() {\n"
	"  table | awk -v s=\"$s\" -v me=\"$me\" -v first=\"$1\" -v groups=\"$2\" -v known=\"$3\" -v before=\"$before\" \\\n"
	"    -v launcher=\"$launcher\" -v lgroup=\"$lgroup\" '\n"
	"$4 !~ /^Z/ { p[$1] = $2; g[$1] = $3; ids[++n] = $1 }\n"
	"END {\n"
	"  if (first && launcher != \"\") {\n"
	"    if (launcher in p && p[launcher] != s) exit 9\n"
	"    if (launcher in p) { in_[launcher] = 1; print \"R \" launcher }\n"
	"    if (lgroup != \"\") grp[launcher] = 1\n"
	"  } else if (first) {\n"
	"    m = split(before, b); for (j = 1; j <= m; j++) old[b[j]] = 1\n"
	"    for (i = 1; i <= n; i++) { x = ids[i]\n"
	"      if (p[x] == s && x != me && !(x in old)) { in_[x] = 1; print \"R \" x; if (g[x] == x) grp[x] = 1 } }\n"
	"  }\n"
	"  m = split(groups, a); for (j = 1; j <= m; j++) grp[a[j]] = 1\n"
	"  m = split(known, k)\n"
	"  for (j = 1; j + 2 <= m; j += 3) { x = k[j]; if (x == k[j+2]) led[x] = 1\n"
	"    if ((x in p) && g[x] == k[j+2] && (p[x] == k[j+1] || p[x] == 1)) in_[x] = 1 }\n"
	"  for (i = 1; i <= n; i++) if ((g[ids[i]] in grp) || (g[ids[i]] in led)) in_[ids[i]] = 1\n"
	"  do { c = 0; for (i = 1; i <= n; i++) { x = ids[i]; if (!(x in in_) && (p[x] in in_)) { in_[x] = 1; c = 1 } } } while (c)\n"
	"  for (x in grp) print \"G \" x\n"
	"  for (i = 1; i <= n; i++) { x = ids[i]; if ((x in in_) && x != me && x != s && x > 1) print x, p[x], g[x] }\n"
	"}'\n"
	"}\n"
	"pids() { awk '{ print $1 }' | head -n 16 | tr '\\n' ' '; }\n"
	"if ! out=$(scan 1 '' ''); then\n"
	"  launcher= lgroup=\n"
	"  printf 'reused\\n'\n"
	"  out=$(scan 1 '' '')\n"
	"fi\n"
	"roots=$(printf '%s\\n' \"$out\" | sed -n 's/^R //p' | tr '\\n' ' ')\n"
	"groups=$(printf '%s\\n' \"$out\" | sed -n 's/^G //p' | tr '\\n' ' ')\n"
	"procs=$(printf '%s\\n' \"$out\" | grep -v '^[RG] ')\n"
	"for g in $groups; do printf 'group %s\\n' \"$g\"; done\n"
	"if [ -n \"$launcher\" ]; then\n"
	"  [ \"$t\" = \"${lgroup:+-}$launcher\" ] || echo foreign\n"
	"else\n"
	"  case \" $roots \" in *\" $t \"*) ;; *) case \" $groups \" in *\" ${t#-} \"*) [ \"$t\" != \"${t#-}\" ] || echo foreign;;\n"
	"    *) echo foreign;; esac;; esac\n"
	"fi\n"
	"if [ -z \"$procs\" ]; then\n"
	"  case $t in -*) [ -n \"$groups\" ] || printf 'unverified %s\\n' \"$(table | awk -v g=\"${t#-}\" '$3 == g && $4 !~ /^Z/' | pids)\";; esac\n"
	"  exit 4\n"
	"fi\n"
	"others() { printf '%s\\n' \"$procs\" | while read -r x y z; do case \" $groups \" in *\" $z \"*) ;; *) [ -n \"$x\" ] && echo \"$x\";; esac; done; }\n"
	"leaders() { printf '%s\\n' \"$procs\" | while read -r x y z; do [ -n \"$x\" ] && [ \"$x\" = \"$z\" ] && case \" $groups \" in *\" $z \"*) ;; *) echo \"$x\";; esac; done; }\n"
	"signal() { for g in $groups; do kill -s \"$1\" -- \"-$g\" 2>/dev/null; done; for x in $(others); do kill -s \"$1\" \"$x\" 2>/dev/null; done\n"
	"  for x in $(leaders); do kill -s \"$1\" -- \"-$x\" 2>/dev/null; done; }\n"
	"printf 'others %s\\n' \"$(others | pids)\"\n"
	"now() { nc=$(date +%s 2>/dev/null) || nc=; case $nc in ''|*[!0-9]*) nc=0;; esac; echo \"$nc\"; }\n"
	"signal \"$sig\"\n"
	"rc=0 i=0 t0=$(now) w=$(((n + 9) / 10 + 1))\n"
	"while :; do\n"
	"  procs=$(scan '' \"$groups\" \"$procs\" | grep -v '^[RG] ')\n"
	"  [ -n \"$procs\" ] || break\n"
	"  tn=$(now)\n"
	"  if [ $rc -eq 0 ] && { [ $i -ge \"$n\" ] || [ $((tn - t0)) -ge $w ]; }; then rc=1 i=0 t0=$tn; fi\n"
	"  if [ $rc -eq 1 ]; then signal KILL; { [ $i -ge 50 ] || [ $((tn - t0)) -ge 6 ]; } && { rc=2; break; }; fi\n"
	"  sleep 0.1; i=$((i+1))\n"
	"done\n"
	"[ $rc -ne 2 ] || printf 'left %s\\n' \"$(printf '%s\\n' \"$procs\" | pids)\"\n"
	"r= c=0 live=\" $(table | awk '$4 !~ /^Z/ { print $1 }' | tr '\\n' ' ')\" mine=\" $(printf '%s\\n' \"$procs\" | pids)\"\n"
	"for x in \"$dir\"/*.json; do x=${x##*/}; x=${x%.json}; case $x in ''|*[!0-9]*) continue;; esac\n"
	"  case $mine in *\" $x \"*) continue;; esac; case $live in *\" $x \"*) c=$((c+1)); [ $c -gt 16 ] || r=\"$r$x \";; esac; done\n"
	"[ -z \"$r\" ] || printf 'records %s\\n' \"$r\"\n"
	"exit $rc\n";

static const char *signal_word(int sig)
{
	return sig == SIGINT ? "INT" : sig == SIGHUP ? "HUP" : sig == SIGKILL ? "KILL" : "TERM";
}

typedef struct {
	lm_context *ctx;
	const char *vm;
	const char *record_dir;
	double grace;
	int stop_failed;      /* the stop itself failed (its command could not run) */
	lm_workload_stopped st; /* what the last stop said; st.outcome -1 before a stop */
	char before[256];     /* the connection's sessions before the workload's (its SFTP server) */
	lm_workload_mark mark; /* the wrapper's, on stdout: the workload's first process (launcher) */
} run_session;

/* The connection's other sessions before the workload's starts (lume-metal's SFTP server: sshd
 * forks it from the same process), which the stop leaves alone: PIDs, one space after each. */
static const char before_script[] =
	"ps -A -o pid= -o ppid= | awk -v s=\"$PPID\" -v me=\"$$\" '$2 == s && $1 != me { printf \"%s \", $1 }'";

/* before_script's answer into r->before; a guest whose ps fails leaves it empty (the stop then
 * takes the SFTP server for one of the workload's sessions and ends it with the rest). */
static int sessions_before(run_session *r, lm_ssh *ssh)
{
	char *q = NULL, *cmd = NULL, *out = NULL;
	int rc, status = 0;

	r->before[0] = '\0';
	if ((rc = lm_shell_quote(before_script, &q)) < 0)
		return rc;
	if ((cmd = lm_format("exec /bin/sh -c %s", q)) == NULL)
		rc = lm_error_nomem();
	else
		rc = lm_ssh_exec_capture(ssh, cmd, sizeof(r->before) - 1, &out, NULL, &status);
	lm_free(q);
	free(cmd);
	if (rc < 0)
		return rc == LM_ETOOLARGE ? 0 : rc;
	if (status == 0 && strspn(out, "0123456789 ") == strlen(out))
		snprintf(r->before, sizeof(r->before), "%s", out);
	lm_free(out);
	return 0;
}

static void stdout_emit(void *data, const char *bytes, size_t len)
{
	run_session *r = data;

	lm_context_output(r->ctx, r->vm, 1, bytes, len);
}

static void session_out(void *data, int stream, const char *bytes, size_t len)
{
	run_session *r = data;

	if (stream == 1)
		lm_workload_mark_feed(&r->mark, bytes, len, stdout_emit, r);
	else if (len > 0)
		lm_context_output(r->ctx, r->vm, stream, bytes, len);
}

/* One line of the stop's answer ("word value...") into r; unknown words are ignored. */
static void stop_line(lm_workload_stopped *r, const char *line, size_t len)
{
	static const struct { const char *word; size_t off, size; } fields[] = {
		{"file", offsetof(lm_workload_stopped, target), sizeof(((lm_workload_stopped *)0)->target)},
		{"group", offsetof(lm_workload_stopped, groups), sizeof(((lm_workload_stopped *)0)->groups)},
		{"others", offsetof(lm_workload_stopped, others), sizeof(((lm_workload_stopped *)0)->others)},
		{"left", offsetof(lm_workload_stopped, left), sizeof(((lm_workload_stopped *)0)->left)},
		{"records", offsetof(lm_workload_stopped, records), sizeof(((lm_workload_stopped *)0)->records)},
		{"unverified", offsetof(lm_workload_stopped, unverified), sizeof(((lm_workload_stopped *)0)->unverified)},
	};
	size_t i, w = 0, vlen;
	const char *v;

	while (w < len && line[w] != ' ')
		w++;
	v = line + w + (w < len);
	vlen = len - (size_t)(v - line);
	if (w == 7 && strncmp(line, "foreign", 7) == 0) {
		r->foreign = 1;
		return;
	}
	while (vlen > 0 && v[vlen - 1] == ' ')
		vlen--;
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		char *dst = (char *)r + fields[i].off;
		size_t have;

		if (strlen(fields[i].word) != w || strncmp(line, fields[i].word, w) != 0 || vlen == 0)
			continue;
		have = strlen(dst); /* groups: one line each, joined */
		snprintf(dst + have, fields[i].size - have, "%s%.*s", have > 0 ? " " : "", (int)vlen, v);
	}
}

int lm_workload_stop(lm_ssh *ssh, const char *record_dir, int sig, double grace, const char *before,
    const char *launcher, int launcher_leads, lm_workload_stopped *out)
{
	char *path = NULL, *qpath = NULL, *qscript = NULL, *cmd = NULL, *said = NULL;
	const char *line;
	size_t n;
	lm_scan lines;
	int rc;

	memset(out, 0, sizeof(*out));
	out->outcome = -1;
	if ((path = lm_format("%s/" GROUP_FILE, record_dir)) == NULL)
		return lm_error_nomem();
	if ((rc = lm_shell_quote(path, &qpath)) == 0 && (rc = lm_shell_quote(lm_workload_stop_script, &qscript)) == 0 &&
	    (cmd = lm_format("exec /bin/sh -c %s lume-metal-stop %s %s %d '%s' '%s' '%s'", qscript, qpath,
	    signal_word(sig), (int)(grace * 10.0), before, launcher, launcher_leads ? "-" : "")) == NULL)
		rc = lm_error_nomem();
	if (rc == 0)
		rc = lm_ssh_exec_capture(ssh, cmd, 8192, &said, NULL, &out->outcome);
	if (rc == 0) {
		lm_scan_init(&lines, said, strlen(said));
		while (lm_scan_line(&lines, &line, &n) != 0)
			stop_line(out, line, n);
	} else {
		out->outcome = -1;
	}
	free(path);
	lm_free(qpath);
	lm_free(qscript);
	free(cmd);
	lm_free(said);
	return rc;
}

static int session_stop(void *data, lm_ssh *ssh, int sig)
{
	run_session *r = data;
	int rc;

	rc = lm_workload_stop(ssh, r->record_dir, sig, r->grace, r->before, r->mark.launcher, r->mark.launcher_leads,
	    &r->st);
	if (rc == 0)
		lm_log(r->ctx, LM_LOG_DEBUG, "%s: the workload's stop (exit %d): file %s, groups %s, others %s, left %s", r->vm,
		    r->st.outcome, r->st.target, r->st.groups, r->st.others, r->st.left);
	r->stop_failed = rc < 0;
	return rc;
}

/* What was signalled: "<whose> process group (412)", with the processes found outside it. */
static void stopped_what(const run_session *r, const char *whose, char *buf, size_t size)
{
	if (r->st.groups[0] == '\0')
		snprintf(buf, size, "%s processes (%s)", whose, r->st.others);
	else if (r->st.others[0] == '\0')
		snprintf(buf, size, "%s process group (%s)", whose, r->st.groups);
	else
		snprintf(buf, size, "%s process group (%s) and the processes of it that had left the group (%s)", whose,
		    r->st.groups, r->st.others);
}

/* Before the outcome: what the group file said when it was not what the stop found. */
static void stopped_file(const run_session *r, char *buf, size_t size)
{
	buf[0] = '\0';
	if (r->st.foreign && strcmp(r->st.target, "invalid") == 0)
		snprintf(buf, size, "the run's process-group file (which the workload can write) names no process group: "
		    "it was not used; ");
	else if (r->st.foreign)
		snprintf(buf, size, "the run's process-group file (which the workload can write) says %s, which is not the "
		    "workload's %s (%s): nothing was sent to %s; ", r->st.target, r->st.groups[0] != '\0' ? "process group" :
		    "process", r->st.groups[0] != '\0' ? r->st.groups : r->st.others[0] != '\0' ? r->st.others : "none found", r->st.target);
}

/* After the outcome: "nothing of it is left" only when nothing that may be it runs. */
static void stopped_tail(const run_session *r, char *buf, size_t size)
{
	if (r->st.records[0] == '\0')
		snprintf(buf, size, "nothing of it is left");
	else
		snprintf(buf, size, "nothing of it that was found is left, but processes that loaded the shim in this run "
		    "still run and may be its (pids %s; not signalled: neither in its group nor descendants of its session, "
		    "their PIDs may have been reused)", r->st.records);
}

/* How the stop went, as the run's error (LM_ECANCELED; LM_EREMOTE when processes were left). */
static int stopped(const run_session *r, int sig, int status)
{
	const char *name = signal_word(sig);
	char what[512], file[512], tail[512];

	stopped_file(r, file, sizeof(file));
	stopped_tail(r, tail, sizeof(tail));
	switch (r->st.outcome) {
	case 0:
		stopped_what(r, "the workload's", what, sizeof(what));
		return lm_error_set(LM_ECANCELED, "%s: run stopped: %sSIG%s went to %s; it ended (exit %d), %s", r->vm, file,
		    name, what, status, tail);
	case 1:
		stopped_what(r, "its", what, sizeof(what));
		return lm_error_set(LM_ECANCELED, "%s: run stopped: %sthe workload did not end within %.0f s of SIG%s; %s "
		    "was killed (SIGKILL), %s", r->vm, file, r->grace, name, what, tail);
	case 3:
		return lm_error_set(LM_ECANCELED, "%s: run stopped before the workload started (SIG%s)", r->vm, name);
	case 4:
		if (r->st.unverified[0] != '\0')
			return lm_error_set(LM_EREMOTE, "%s: run stopped (SIG%s), but the workload's first process had ended "
			    "and no process of its session was found; the process group the run's process-group file names "
			    "(%s) cannot be checked against the session, so nothing was sent to it: its processes (pids %s) "
			    "may be the workload's and may still run in the guest", r->vm, name, r->st.target, r->st.unverified);
		return lm_error_set(LM_ECANCELED, "%s: run stopped (SIG%s): %sthe workload had ended, no process of its "
		    "session was left to stop; %s", r->vm, name, file, tail);
	default:
		return lm_error_set(LM_EREMOTE, "%s: run stopped (SIG%s), but %sprocesses of the workload (%s) are still "
		    "running in the guest 5 s after SIGKILL (exit %d of the stop)%s%s", r->vm, name, file,
		    r->st.left[0] != '\0' ? r->st.left : "?", r->st.outcome, r->st.records[0] != '\0' ? "; " : "",
		    r->st.records[0] != '\0' ? tail : "");
	}
}

/* The run failed with the connection still up (the local input unreadable, the guest refusing a
 * window change): the workload must not outlive it. lm_ssh_exec_session asked the stop (SIGTERM)
 * while the workload's channel was still open; where it could not (no channel), it is asked here.
 * The error stays the run's, saying how the stop went. */
static int failed(run_session *r, lm_ssh *ssh, int rc, const lm_ssh_session_end *end)
{
	char saved[2048];

	snprintf(saved, sizeof(saved), "%s", lm_error_last()->message);
	lm_ssh_set_cancelable(ssh, 0);
	if (!end->failure_stop && session_stop(r, ssh, SIGTERM) < 0)
		r->stop_failed = 1;
	if (r->stop_failed)
		return lm_error_set(rc, "%s; stopping the workload failed too, it may still run in the guest", saved);
	if (r->st.outcome == 2 || r->st.unverified[0] != '\0' || r->st.records[0] != '\0')
		return lm_error_set(rc, "%s; stopping the workload failed too, processes that may be its still run in the "
		    "guest (pids %s)", saved, r->st.left[0] != '\0' ? r->st.left : r->st.unverified[0] != '\0' ? r->st.unverified :
		    r->st.records);
	if (r->st.outcome == 3)
		return lm_error_set(rc, "%s; the workload had not started (its wrapper wrote no process-group file within "
		    "2 s), nothing was signalled", saved);
	return lm_error_set(rc, "%s; the workload was stopped (its process group got SIGTERM%s%s)", saved,
	    r->st.outcome == 1 ? ", then SIGKILL" : "", r->st.others[0] != '\0' ? ", as did its processes outside it" : "");
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
	r.st.outcome = -1;
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
	if ((rc = sessions_before(&r, ssh)) < 0 || (rc = lm_workload_group_command(res->record_dir, cmd, &wrapped)) < 0)
		return rc;
	rc = lm_ssh_exec_session(ssh, wrapped, &io, &end);
	free(wrapped);
	lm_workload_mark_end(&r.mark, stdout_emit, &r); /* what is still held goes out */
	if (rc < 0 && end.stopped_by == 0 && lm_ssh_usable(ssh))
		return failed(&r, ssh, rc, &end);
	res->exit_status = end.exit_status;
	res->stopped_by = end.stopped_by;
	res->stop_killed = r.st.outcome == 1;
	if (rc == 0 && end.stopped_by != 0)
		rc = stopped(&r, end.stopped_by, end.exit_status);
	return rc;
}
