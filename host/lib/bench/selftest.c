/* lume-metal selftest: the facts the simulator assumes, measured in a guest (docs/selftest.md).
 *
 * Each check runs a few commands in an enabled, running VM, keeps what they printed (its raw file
 * in the folder), says what was seen in a line, and compares it with what the simulator assumes
 * (the assumption's text names the stand-in or fake that makes it). The host preference is only
 * read and the VM is never restarted: the stock level is measured when the VM runs at it. The
 * folder is an evidence folder like bench's (record.c): selftest.json, README.md, the raw files,
 * SHA256SUMS.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_internal.h"
#include "buf.h"
#include "clock.h"
#include "context_internal.h"
#include "error_internal.h"
#include "flow_session.h"
#include "guest_activation.h"
#include "random.h"
#include "str.h"
#include "text.h"
#include "lume-metal/exercise.h"
#include "lume-metal/prefs.h"
#include "lume-metal/report.h"
#include "lume-metal/selftest.h"
#include "lume-metal/sys/ssh.h"
#include "lume-metal/version.h"

#define OUTPUT_MAX ((size_t)1 << 20)
/* Set in every session of a simulated guest (tests/support/guest-sshd); no Mac sets it. */
#define SIM_MARKER "LM_SIMULATED_GUEST"

/* What each check asks, and what the simulator assumes (the stand-in or fake that models it). */
static const struct check_doc {
	const char *name, *question, *assumed;
} docs[] = {
	{"stock_kernels", "Does the stock level (no host preference in effect) run the kernels the profile needs?",
	    "no: their pipelines fail to build (fake Metal, LM_FAKE_METAL_STOCK_KERNELS=fail, the default mode: "
	    "tests/guest/metal/fake_metal_compute.m)"},
	{"exec_in_place", "Does a program exec'd in place by a process that loaded the shim keep it?",
	    "it keeps it exactly when the exec'ing process's activation record says its children keep the shim "
	    "(children.inherit): the loader honours the variable the shim leaves (guest/shim, LD_PRELOAD)"},
	{"spawned_child", "Does a child spawned by a process that loaded the shim keep it?",
	    "it keeps it exactly when the parent's activation record says its children keep the shim "
	    "(children.inherit)"},
	{"probe_exec_in_place", "Does the probe, executed again in place by itself (posix_spawn with "
	    "POSIX_SPAWN_SETEXEC, as CPython's framework launcher), keep the shim?",
	    "it keeps it exactly when the first image's record says it gave the exec the shim (spawns[]), or, once "
	    "the second image's record has replaced the first's (one pid), when its children rule says children "
	    "keep it: the loader honours the variable the shim leaves (guest/shim, LD_PRELOAD; execve stands in for "
	    "POSIX_SPAWN_SETEXEC, which glibc lacks)"},
	{"probe_spawned_child", "Does the probe, spawned by itself (posix_spawn), keep the shim?",
	    "it keeps it exactly when the parent's record says it gave the child the shim (spawns[])"},
	{"python_exec_in_place", "Does a Homebrew or python.org python3 (a framework launcher that executes "
	    "Python.app's Python in place) keep the shim in the Python it becomes?",
	    "the final image keeps it exactly when the launcher's record says it gave the exec the shim, or the final "
	    "image's own record is there (the simulator's guests have no python3: the test installs CPython's launcher as "
	    "a stand-in, tests/guest/drivers/exec_stub.c)"},
	{"hardened_library_validation", "Does a hardened program with only the dyld entitlement continue or stop "
	    "when library validation refuses the ad-hoc shim?",
	    "it continues stock: dyld skips the library with a warning (reference/metal.md, 2026-12-02; "
	    "ssl-kill-switch2 #68); the simulator does not model library validation"},
	{"hardened_runtime", "Does a hardened program without the dyld entitlement load the shim (SIP off) or run "
	    "stock (SIP on)?",
	    "SIP enabled: it runs stock (dyld purges DYLD_*); SIP disabled or custom: it loads the shim, macOS not "
	    "applying the hardened runtime (Apple Developer Forums thread 757000; Bear #232 disagrees: "
	    "reference/metal.md, 2026-12-06); the guests' loader stand-in does both (tests/support/guest-sshd)"},
	{"launchctl_unknown", "What does `launchctl print gui/UID/LABEL` answer for a label launchd does not know?",
	    "exit 113, \"Could not find service \\\"LABEL\\\" in domain for user gui: UID\" on stderr (the guest's "
	    "launchctl stand-in)"},
	{"launchctl_bootout", "What does `launchctl print` answer right after a bootout?",
	    "exit 113, not found: launchd has let go of the label at once (the stand-in with no drain, the "
	    "guests' default; --launchd-drain models a delay)"},
	{"codesign_display", "What does `codesign -dv` print for the probe?",
	    "exit 0 with Executable=, Identifier=, Format=, CodeDirectory ... flags= on stderr for a signed file; "
	    "exit 1 and \"code object is not signed at all\" for an unsigned one (the codesign stand-in)"},
	{"csrutil_status", "What does `csrutil status` print?",
	    "\"System Integrity Protection status: enabled.\" (or disabled., or the custom configuration's "
	    "lines), exit 0 (the csrutil stand-in)"},
	{"manager_while_booting", "What does the VM manager answer while the guest boots?",
	    "running, with the address of its DHCP lease before port 22 answers, sshAvailable false until "
	    "then (the Lume simulator, docs/simulator.md)"},
};
#define NCHECKS (sizeof(docs) / sizeof(docs[0]))

typedef struct {
	lm_context *ctx;
	lm_flow_session *s;
	lm_ssh *ssh;
	const char *dir;
	char tag[17];   /* random, for the guest's scratch names */
	char name[32];  /* selftest-TAG */
	char *scratch;  /* HOME/.local/share/lume-metal/activation/selftest-TAG: under the bundle */
} run;

static void result_dispose_checks(lm_selftest_result *r)
{
	size_t i;

	for (i = 0; i < r->count; i++) {
		free(r->checks[i]->seen);
		free(r->checks[i]->raw);
		free(r->checks[i]);
	}
	free(r->checks);
}

void lm_selftest_result_free(lm_selftest_result *r)
{
	if (r == NULL)
		return;
	result_dispose_checks(r);
	free(r->dir);
	free(r);
}

/* One guest command; what it printed goes to the check's raw text. */
static int guest(run *r, lm_buf *raw, const char *cmd, char **out, char **err, int *status)
{
	int rc;

	*out = *err = NULL;
	lm_buf_addf(raw, "$ %s\n", cmd);
	if ((rc = lm_ssh_exec_capture(r->ssh, cmd, OUTPUT_MAX, out, err, status)) < 0) {
		lm_buf_addf(raw, "(not run: %s)\n\n", lm_error_last()->message);
		return rc;
	}
	lm_buf_addf(raw, "exit %d\n--- stdout\n%s--- stderr\n%s\n", *status, *out, *err);
	return 0;
}

/* The command line of argv, shimmed (as `run` starts it) or stock, with the records going to the
 * scratch directory. */
static int command(run *r, int shimmed, const char *const *argv, size_t argc, char **cmd)
{
	char *line = NULL;
	int rc;

	if ((rc = lm_flow_session_command(r->s, shimmed, argv, argc, &line)) < 0)
		return rc;
	rc = shimmed ? lm_activation_command(r->scratch, line, cmd) : ((*cmd = lm_text_dup(line)) != NULL ? 0 :
	    lm_error_nomem());
	lm_free(line);
	return rc;
}

/* The first line of s (at most 200 bytes), for a check's one-line answer. */
static void first_line(const char *s, char *buf, size_t len)
{
	size_t n = strcspn(s != NULL ? s : "", "\n");

	if (n > 200)
		n = 200;
	snprintf(buf, len, "%.*s", (int)n, s != NULL ? s : "");
}

/* ---- the checks: each sets *seen (allocated) and returns its verdict, or < 0 ---- */

/* What the kernels did, in one word and a line: "run", "zeros", "wrong" (fail), "fail" (error). */
static const char *kernels_word(const lm_report *rep, char *line, size_t len)
{
	static const lm_exercise feats[] = {LM_EXERCISE_SIMDGROUP_REDUCTION, LM_EXERCISE_SIMDGROUP_MATRIX,
	    LM_EXERCISE_BFLOAT16};
	const char *word = "run", *m;
	size_t i, n = 0;

	line[0] = '\0';
	for (i = 0; i < sizeof(feats) / sizeof(feats[0]); i++) {
		lm_exercise_result res = lm_report_exercise(rep, feats[i], &m);
		n += (size_t)snprintf(line + n, n < len ? len - n : 0, "%s%s %s%s%s", i ? "; " : "",
		    lm_exercise_name(feats[i]), lm_exercise_result_name(res), m[0] ? ": " : "", m);
		if (res == LM_EXERCISE_ERROR || res == LM_EXERCISE_NOT_RUN)
			word = "fail";
		else if (res == LM_EXERCISE_FAIL && strcmp(word, "fail") != 0)
			word = strstr(m, " is 0, ") != NULL ? "zeros" : "wrong";
	}
	return word;
}

static int check_stock_kernels(run *r, lm_buf *raw, char **seen)
{
	const lm_vm_outcome *o = lm_flow_session_vm(r->s);
	const char *argv[] = {lm_flow_session_probe(r->s), "--report", "--exercise"};
	lm_host_pref_info pref;
	lm_report *rep = NULL;
	char *cmd = NULL, *out = NULL, *err = NULL, line[1024];
	const char *word;
	int status, rc, stock;

	if ((rc = lm_host_pref_status(r->ctx, lm_profile_host_preference(lm_flow_session_profile(r->s)), &pref)) < 0)
		return rc;
	/* At the stock level: the preference does not hold the profile's value, or lume-metal's change
	 * of it came after this guest booted (the restart rule's "before", record/level.c). */
	stock = !pref.matches || (pref.recorded && o->guest.boot_time > 0 && o->guest.boot_time < pref.changed_at);
	lm_buf_addf(raw, "host preference %s %s: %s%s; guest booted at %.6f: %s\n\n", pref.domain, pref.key,
	    pref.present ? pref.value : "absent", pref.recorded ? " (lume-metal's change)" : "", o->guest.boot_time,
	    stock ? "the VM runs at the stock level" : "the VM runs with the host preference in effect");
	if (!stock) {
		*seen = lm_format("not measured: the VM runs with the host preference in effect (its guest booted "
		    "after it was set); with the preference off (`lume-metal host disable`, then start the VM again), or "
		    "`lume-metal enable VM --host-preference auto` on a host where it is off, this check measures it");
		return *seen != NULL ? LM_SELFTEST_NOT_MEASURED : lm_error_nomem();
	}
	if ((rc = command(r, 1, argv, 3, &cmd)) < 0 || (rc = guest(r, raw, cmd, &out, &err, &status)) < 0)
		goto out;
	if (lm_report_parse_lines(&rep, out, strlen(out)) < 0 || !lm_report_has_exercise(rep)) {
		*seen = lm_format("not measured: the probe printed no exercise (exit %d: %s)", status,
		    lm_error_last()->message);
		lm_error_clear();
		rc = *seen != NULL ? LM_SELFTEST_NOT_MEASURED : lm_error_nomem();
		goto out;
	}
	word = kernels_word(rep, line, sizeof(line));
	*seen = lm_format("%s: %s", strcmp(word, "run") == 0 ? "yes, they run and compute correctly" :
	    strcmp(word, "zeros") == 0 ? "no: they build, run and write zeros (a wrong result)" :
	    strcmp(word, "wrong") == 0 ? "no: they build and run with a wrong result" : "no: they fail", line);
	rc = *seen == NULL ? lm_error_nomem() : strcmp(word, "fail") == 0 ? LM_SELFTEST_AGREES : LM_SELFTEST_DISAGREES;
out:
	lm_report_free(rep);
	free(cmd);
	lm_free(out);
	lm_free(err);
	return rc;
}

static const char *file_name(const char *path)
{
	const char *slash = path != NULL ? strrchr(path, '/') : NULL;

	return slash != NULL ? slash + 1 : path != NULL ? path : "";
}

/* The workload argv run shimmed with records on; what the records say of the parent (a record of
 * another program than the probe) and of the probe. An exec in place keeps the pid, so the probe's
 * record replaces its exec'er's (<pid>.json): the children rule is then read from the probe's own
 * record, which the same environment gave the same setting. */
static int check_child(run *r, lm_buf *raw, const char *const *argv, size_t argc, const char *parent_name,
    char **seen)
{
	lm_activation_list list = { 0 };
	const lm_activation *parent = NULL, *child = NULL;
	const char *probe = lm_flow_session_probe(r->s);
	char *cmd = NULL, *out = NULL, *err = NULL;
	size_t i;
	int status, rc;

	/* A fresh, empty record directory for this check alone. */
	if ((rc = lm_activation_dir_make(r->ssh, lm_flow_session_vm(r->s)->guest.home, r->name, &cmd)) < 0)
		return rc;
	free(cmd);
	cmd = NULL;
	if ((rc = command(r, 1, argv, argc, &cmd)) < 0 || (rc = guest(r, raw, cmd, &out, &err, &status)) < 0)
		goto out;
	if ((rc = lm_activation_fetch(r->ssh, r->scratch, &list)) < 0 && rc != LM_ENOTFOUND)
		goto out;
	lm_error_clear();
	for (i = 0; i < list.count; i++) {
		lm_buf_addf(raw, "record %s: exe %s, children keep the shim: %s (%s)\n", list.items[i].file,
		    list.items[i].exe, list.items[i].inherit ? "yes" : "no", list.items[i].children_why);
		/* By file name: the record's exe is the real path, the probe's may run through `current`. */
		if (strcmp(file_name(list.items[i].exe), file_name(probe)) == 0)
			child = &list.items[i];
		else
			parent = &list.items[i];
	}
	if (parent == NULL && child == NULL) {
		*seen = lm_format("not measured: %s did not load the shim (%zu record%s; a SIP-protected program "
		    "does not), so it passed nothing on", parent_name, list.count, list.count == 1 ? "" : "s");
		rc = *seen != NULL ? LM_SELFTEST_NOT_MEASURED : lm_error_nomem();
		goto out;
	}
	if (parent == NULL)
		parent = child; /* exec in place: one pid, one record */
	*seen = lm_format("%s loaded the shim and %s children %s it; the probe %s", parent != child ? parent->exe :
	    parent_name, parent != child ? "says its" : "the records say", parent->inherit ? "keep" : "do not keep",
	    child != NULL ? "loaded it (its record is there)" : "did not load it (no record of it)");
	rc = *seen == NULL ? lm_error_nomem() : (child != NULL) == (parent->inherit != 0) ? LM_SELFTEST_AGREES :
	    LM_SELFTEST_DISAGREES;
out:
	lm_activation_list_dispose(&list);
	free(cmd);
	lm_free(out);
	lm_free(err);
	return rc;
}

static int check_exec(run *r, lm_buf *raw, char **seen)
{
	const char *argv[] = {"/usr/bin/env", lm_flow_session_probe(r->s), "--report"};

	return check_child(r, raw, argv, 3, "env", seen);
}

static int check_spawn(run *r, lm_buf *raw, char **seen)
{
	char *script = NULL, *q = NULL;
	int rc;

	/* "; :" after the probe: a shell may exec its last command in place; this one spawns it. */
	if ((rc = lm_shell_quote(lm_flow_session_probe(r->s), &q)) < 0)
		return rc;
	if ((script = lm_format("%s --report; :", q)) == NULL) {
		lm_free(q);
		return lm_error_nomem();
	}
	{
		const char *argv[] = {"/bin/sh", "-c", script};
		rc = check_child(r, raw, argv, 3, "sh", seen);
	}
	free(script);
	lm_free(q);
	return rc;
}

/* A copy of the probe signed ad hoc with the hardened runtime (`--options runtime`), with the
 * entitlements plist ents (NULL: none), run shimmed with --report: what codesign makes on a Mac.
 * 0 with its exit status, its output and its stderr's first line; LM_SELFTEST_NOT_MEASURED with
 * *seen where this guest's codesign cannot sign so (the simulator's stand-in only displays). */
static int run_hardened_copy(run *r, lm_buf *raw, const char *ents, int *status, char **out, char *line,
    size_t len, char **seen)
{
	char *copy = NULL, *path = NULL, *qp = NULL, *qc = NULL, *qe = NULL, *cmd = NULL, *err = NULL;
	const char *argv[2];
	int rc;

	*out = NULL;
	if ((copy = lm_format("%s-hardened-probe", r->scratch)) == NULL ||
	    (path = lm_format("%s-ents.plist", r->scratch)) == NULL ||
	    (rc = lm_shell_quote(lm_flow_session_probe(r->s), &qp)) < 0 || (rc = lm_shell_quote(copy, &qc)) < 0 ||
	    (rc = lm_shell_quote(path, &qe)) < 0) {
		rc = copy == NULL || path == NULL ? lm_error_nomem() : rc;
		goto out;
	}
	if (ents != NULL && (rc = lm_ssh_upload(r->ssh, ents, strlen(ents), path, 0600)) < 0)
		goto out;
	if ((cmd = lm_format("cp %s %s && codesign --force --sign - --options runtime%s%s %s", qp, qc,
	    ents != NULL ? " --entitlements " : "", ents != NULL ? qe : "", qc)) == NULL) {
		rc = lm_error_nomem();
		goto out;
	}
	if ((rc = guest(r, raw, cmd, out, &err, status)) < 0)
		goto out;
	if (*status != 0) {
		first_line(err[0] ? err : *out, line, len);
		*seen = lm_format("not measured: needs codesign, which could not sign in this guest (exit %d: %s)",
		    *status, line);
		rc = *seen != NULL ? LM_SELFTEST_NOT_MEASURED : lm_error_nomem();
		goto out;
	}
	free(cmd);
	lm_free(*out);
	lm_free(err);
	cmd = *out = err = NULL;
	argv[0] = copy;
	argv[1] = "--report";
	if ((rc = command(r, 1, argv, 2, &cmd)) < 0 || (rc = guest(r, raw, cmd, out, &err, status)) < 0)
		goto out;
	first_line(err, line, len);
out:
	if (qc != NULL && qe != NULL && (free(cmd), cmd = lm_format("rm -f %s %s", qc, qe)) != NULL) {
		int st;
		char *o2 = NULL, *e2 = NULL;
		if (lm_ssh_exec_capture(r->ssh, cmd, OUTPUT_MAX, &o2, &e2, &st) < 0)
			lm_error_clear();
		lm_free(o2);
		lm_free(e2);
	}
	if (rc != 0) {
		lm_free(*out);
		*out = NULL;
	}
	free(copy);
	free(path);
	lm_free(qp);
	lm_free(qc);
	lm_free(qe);
	free(cmd);
	lm_free(err);
	return rc;
}

/* What the hardened copy did, in words: "it stops: exit N (...)" or "it continues with the shim|stock". */
static char *hardened_seen(int status, const char *out, const char *line)
{
	if (status != 0)
		return lm_format("it stops: exit %d (%s)", status, line);
	return lm_format("it continues %s%s%s", strstr(out, "\nshim_active=1") != NULL ? "with the shim" : "stock",
	    line[0] ? ": " : "", line);
}

/* What the records of a self-start say: whether the second probe should have had the shim. The
 * first image's record names the exec or spawn and what it gave (spawns[], by file name: the record
 * has the path as given); when none does, the second image's record has replaced the first's (an
 * exec in place keeps the pid) and its own children rule says it. -1: no record at all. */
static int self_expected(const lm_activation_list *list, const char *program, const char **why)
{
	size_t i, k;

	for (i = 0; i < list->count; i++)
		for (k = 0; k < list->items[i].nspawns; k++)
			if (strcmp(file_name(list->items[i].spawns[k].path), file_name(program)) == 0) {
				*why = list->items[i].spawns[k].why;
				return strcmp(list->items[i].spawns[k].shim, "kept") == 0;
			}
	if (list->count == 0)
		return -1;
	*why = list->items[0].children_why;
	return list->items[0].inherit != 0;
}

/* argv (a launcher and what it starts) run shimmed with records on, in a fresh record directory:
 * its exit status, output and records. */
static int run_recorded(run *r, lm_buf *raw, const char *const *argv, size_t argc, int *status, char **out,
    lm_activation_list *list)
{
	char *cmd = NULL, *err = NULL;
	size_t i;
	int rc;

	*out = NULL;
	if ((rc = lm_activation_dir_make(r->ssh, lm_flow_session_vm(r->s)->guest.home, r->name, &cmd)) < 0)
		return rc;
	free(cmd);
	cmd = NULL;
	if ((rc = command(r, 1, argv, argc, &cmd)) < 0 || (rc = guest(r, raw, cmd, out, &err, status)) < 0)
		goto out;
	if ((rc = lm_activation_fetch(r->ssh, r->scratch, list)) < 0 && rc != LM_ENOTFOUND)
		goto out;
	rc = 0;
	lm_error_clear();
	for (i = 0; i < list->count; i++)
		lm_buf_addf(raw, "record %s: exe %s, %zu spawn%s, children keep the shim: %s (%s)\n", list->items[i].file,
		    list->items[i].exe, list->items[i].nspawns, list->items[i].nspawns == 1 ? "" : "s",
		    list->items[i].inherit ? "yes" : "no", list->items[i].children_why);
out:
	if (rc < 0) {
		lm_free(*out);
		*out = NULL;
	}
	free(cmd);
	lm_free(err);
	return rc;
}

/* --exec-self or --spawn-self: the probe started again by itself, a launcher that can carry the
 * shim on any SIP state (guest/probe/metal_capabilities.c run_self). Whether the second probe had
 * the shim is its own report's shim_active; what it should have had, self_expected's. */
static int check_self(run *r, lm_buf *raw, const char *mode, char **seen)
{
	const char *probe = lm_flow_session_probe(r->s), *argv[2], *why = "";
	lm_activation_list list = { 0 };
	char *out = NULL, line[256];
	int status, rc, expected, kept;

	argv[0] = probe;
	argv[1] = mode;
	if ((rc = run_recorded(r, raw, argv, 2, &status, &out, &list)) < 0)
		return rc;
	if (status != 0 || (expected = self_expected(&list, probe, &why)) < 0) {
		first_line(out, line, sizeof(line));
		*seen = status != 0 ? lm_format("not measured: the probe %s exited %d (%s)", mode, status, line) :
		    lm_format("not measured: the probe did not load the shim (no record), so it passed nothing on");
		rc = *seen != NULL ? LM_SELFTEST_NOT_MEASURED : lm_error_nomem();
		goto out;
	}
	kept = strstr(out, "\nshim_active=1") != NULL;
	*seen = lm_format("the second probe ran %s; the records say it %s keep it (%s)", kept ? "with the shim" : "stock",
	    expected ? "should" : "should not", why);
	rc = *seen == NULL ? lm_error_nomem() : kept == expected ? LM_SELFTEST_AGREES : LM_SELFTEST_DISAGREES;
out:
	lm_activation_list_dispose(&list);
	lm_free(out);
	return rc;
}

static int check_probe_exec(run *r, lm_buf *raw, char **seen)
{
	return check_self(r, raw, "--exec-self", seen);
}

static int check_probe_spawn(run *r, lm_buf *raw, char **seen)
{
	return check_self(r, raw, "--spawn-self", seen);
}

/* The real exec in place: a python3 outside the system folders, which is CPython's framework launcher
 * (Homebrew's python@3.x, python.org's installer: bin/python3.x is Mac/Tools/pythonw.c, which
 * executes Resources/Python.app/Contents/MacOS/Python in place; reference/metal.md, 2026-12-02).
 * The final image kept the shim when a record other than the launcher's is there. */
static int check_python(run *r, lm_buf *raw, char **seen)
{
	static const char find[] = "for p in /opt/homebrew/bin/python3 /usr/local/bin/python3 "
	    "/Library/Frameworks/Python.framework/Versions/Current/bin/python3; do [ -x \"$p\" ] && "
	    "{ echo \"$p\"; exit 0; }; done; exit 1";
	lm_activation_list list = { 0 };
	const char *argv[3], *why = "";
	char *out = NULL, *err = NULL, python[512];
	size_t i;
	int status, rc, expected, final = 0, launcher_only = 1;

	if ((rc = guest(r, raw, find, &out, &err, &status)) < 0)
		return rc;
	first_line(out, python, sizeof(python));
	lm_free(out);
	lm_free(err);
	out = NULL;
	if (status != 0 || python[0] != '/') {
		*seen = lm_format("not measured: no python3 outside the system folders (Homebrew's, python.org's)");
		return *seen != NULL ? LM_SELFTEST_NOT_MEASURED : lm_error_nomem();
	}
	argv[0] = python;
	argv[1] = "-c";
	argv[2] = "pass";
	if ((rc = run_recorded(r, raw, argv, 3, &status, &out, &list)) < 0)
		return rc;
	/* The launcher's own record has its name (python3.x) and names the exec it made; the final image's
	 * is another program's (…/Python). */
	for (i = 0; i < list.count; i++) {
		if (strncmp(file_name(list.items[i].exe), "python3", 7) != 0)
			final = 1;
		if (list.items[i].nspawns > 0)
			launcher_only = 0;
	}
	if (status != 0 || list.count == 0 || (!final && launcher_only)) {
		*seen = status != 0 ? lm_format("not measured: %s -c pass exited %d", python, status) :
		    list.count == 0 ? lm_format("not measured: %s did not load the shim (no record; a hardened build "
		    "without the dyld entitlement does not, with SIP on)", python) :
		    lm_format("not measured: %s executed nothing in place (not a framework launcher)", python);
		rc = *seen != NULL ? LM_SELFTEST_NOT_MEASURED : lm_error_nomem();
		goto out;
	}
	expected = final ? list.items[0].inherit != 0 : -1;
	if (!final) {
		for (i = 0; i < list.count && expected < 0; i++)
			if (list.items[i].nspawns > 0) {
				expected = strcmp(list.items[i].spawns[0].shim, "kept") == 0;
				why = list.items[i].spawns[0].why;
			}
	} else {
		why = list.items[0].children_why;
	}
	*seen = lm_format("%s became %s, which %s the shim; the records say it %s keep it (%s)", python,
	    final ? "another image" : "an image", final ? "loaded" : "did not load", expected ? "should" : "should not", why);
	rc = *seen == NULL ? lm_error_nomem() : final == expected ? LM_SELFTEST_AGREES : LM_SELFTEST_DISAGREES;
out:
	lm_activation_list_dispose(&list);
	lm_free(out);
	return rc;
}

static int check_hardened(run *r, lm_buf *raw, char **seen)
{
	static const char plist[] = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE plist PUBLIC "
	    "\"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n<plist version=\"1.0\">"
	    "<dict><key>com.apple.security.cs.allow-dyld-environment-variables</key><true/></dict></plist>\n";
	char *out = NULL, line[256];
	int status, rc;

	if ((rc = run_hardened_copy(r, raw, plist, &status, &out, line, sizeof(line), seen)) != 0)
		return rc;
	*seen = hardened_seen(status, out, line);
	rc = *seen == NULL ? lm_error_nomem() : status == 0 && strstr(out, "\nshim_active=1") == NULL ? LM_SELFTEST_AGREES :
	    LM_SELFTEST_DISAGREES;
	lm_free(out);
	return rc;
}

/* The hardened runtime without the dyld entitlement: SIP on, dyld purges DYLD_* and it runs stock;
 * SIP off (disabled or custom), macOS does not apply the hardened runtime and the shim loads (an
 * Apple Security Engineer, Apple Developer Forums thread 757000; Proxyman #788 agrees, Bear #232 on
 * 10.14 does not: reference/metal.md, 2026-12-06). Where sources disagree, this measures it. */
static int check_hardened_runtime(run *r, lm_buf *raw, char **seen)
{
	const char *sip = lm_flow_session_vm(r->s)->guest.sip;
	char *out = NULL, line[256];
	int status, rc, shimmed, sip_on = strcmp(sip, "enabled") == 0;

	if (!sip_on && strcmp(sip, "disabled") != 0 && strcmp(sip, "custom") != 0) {
		*seen = lm_format("not measured: the guest does not say its SIP state (csrutil status), which decides "
		    "what is expected");
		return *seen != NULL ? LM_SELFTEST_NOT_MEASURED : lm_error_nomem();
	}
	if ((rc = run_hardened_copy(r, raw, NULL, &status, &out, line, sizeof(line), seen)) != 0)
		return rc;
	shimmed = status == 0 && strstr(out, "\nshim_active=1") != NULL;
	*seen = hardened_seen(status, out, line);
	if (*seen != NULL) {
		char *with = lm_format("%s (guest SIP %s)", *seen, sip);
		free(*seen);
		*seen = with;
	}
	rc = *seen == NULL ? lm_error_nomem() : status == 0 && shimmed == !sip_on ? LM_SELFTEST_AGREES :
	    LM_SELFTEST_DISAGREES;
	lm_free(out);
	return rc;
}

/* `launchctl print gui/UID/LABEL`: exit and first line. */
static int launchctl_print(run *r, lm_buf *raw, const char *label, int *status, char *line, size_t len)
{
	char *cmd, *out = NULL, *err = NULL;
	int rc;

	if ((cmd = lm_format("launchctl print gui/$(id -u)/%s", label)) == NULL)
		return lm_error_nomem();
	if ((rc = guest(r, raw, cmd, &out, &err, status)) == 0)
		first_line(err[0] ? err : out, line, len);
	free(cmd);
	lm_free(out);
	lm_free(err);
	return rc;
}

static int not_found_verdict(int status, const char *line)
{
	return status == 113 && strstr(line, "Could not find service") != NULL ? LM_SELFTEST_AGREES : LM_SELFTEST_DISAGREES;
}

static int check_launchctl_unknown(run *r, lm_buf *raw, char **seen)
{
	char label[64], line[256];
	int status, rc;

	snprintf(label, sizeof(label), "com.lume-metal.selftest.unknown-%s", r->tag);
	if ((rc = launchctl_print(r, raw, label, &status, line, sizeof(line))) < 0)
		return rc;
	if ((*seen = lm_format("exit %d: %s", status, line)) == NULL)
		return lm_error_nomem();
	return not_found_verdict(status, line);
}

static int check_launchctl_bootout(run *r, lm_buf *raw, char **seen)
{
	char label[64], line[256], *plist = NULL, *path = NULL, *q = NULL, *cmd = NULL, *out = NULL, *err = NULL;
	const char *home = lm_flow_session_vm(r->s)->guest.home;
	int status, rc;

	snprintf(label, sizeof(label), "com.lume-metal.selftest.bootout-%s", r->tag);
	if ((plist = lm_format("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\"><dict><key>Label</key>"
	    "<string>%s</string><key>ProgramArguments</key><array><string>/bin/sleep</string><string>60</string></array>"
	    "</dict></plist>\n", label)) == NULL ||
	    (path = lm_format("%s/Library/LaunchAgents/%s.plist", home, label)) == NULL) {
		rc = lm_error_nomem();
		goto out;
	}
	/* ~/Library/LaunchAgents exists in a user's home on a Mac; a fresh guest account may lack it. */
	if ((rc = lm_shell_quote(path, &q)) < 0 ||
	    (rc = guest(r, raw, "mkdir -p \"$HOME/Library/LaunchAgents\"", &out, &err, &status)) < 0 ||
	    (rc = lm_ssh_upload(r->ssh, plist, strlen(plist), path, 0644)) < 0)
		goto out;
	lm_free(out);
	lm_free(err);
	out = err = NULL;
	if ((cmd = lm_format("launchctl bootstrap gui/$(id -u) %s && launchctl bootout gui/$(id -u)/%s", q,
	    label)) == NULL) {
		rc = lm_error_nomem();
		goto out;
	}
	if ((rc = guest(r, raw, cmd, &out, &err, &status)) < 0)
		goto out;
	if (status != 0) {
		first_line(err, line, sizeof(line));
		*seen = lm_format("not measured: the agent could not be bootstrapped and booted out (exit %d: %s)",
		    status, line);
		rc = *seen != NULL ? LM_SELFTEST_NOT_MEASURED : lm_error_nomem();
		goto out;
	}
	if ((rc = launchctl_print(r, raw, label, &status, line, sizeof(line))) < 0)
		goto out;
	*seen = lm_format("exit %d: %s", status, line);
	rc = *seen != NULL ? not_found_verdict(status, line) : lm_error_nomem();
out:
	free(cmd);
	if (q != NULL && (cmd = lm_format("rm -f %s", q)) != NULL) {
		lm_free(out);
		lm_free(err);
		out = err = NULL;
		if (lm_ssh_exec_capture(r->ssh, cmd, OUTPUT_MAX, &out, &err, &status) < 0)
			lm_error_clear();
		free(cmd);
	}
	free(plist);
	free(path);
	lm_free(q);
	lm_free(out);
	lm_free(err);
	return rc;
}

static int check_codesign(run *r, lm_buf *raw, char **seen)
{
	char *q = NULL, *cmd = NULL, *out = NULL, *err = NULL, line[256];
	int status, rc, signed_ok, unsigned_ok;

	if ((rc = lm_shell_quote(lm_flow_session_probe(r->s), &q)) < 0)
		return rc;
	if ((cmd = lm_format("codesign -dv %s", q)) == NULL)
		rc = lm_error_nomem();
	else if ((rc = guest(r, raw, cmd, &out, &err, &status)) == 0) {
		/* The line that says how it is signed, when there is one. */
		first_line(strstr(err, "CodeDirectory") != NULL ? strstr(err, "CodeDirectory") : err, line, sizeof(line));
		signed_ok = status == 0 && strstr(err, "Executable=") != NULL && strstr(err, "flags=") != NULL;
		unsigned_ok = status == 1 && strstr(err, "code object is not signed at all") != NULL;
		*seen = lm_format("exit %d: %s", status, line);
		rc = *seen == NULL ? lm_error_nomem() : signed_ok || unsigned_ok ? LM_SELFTEST_AGREES :
		    LM_SELFTEST_DISAGREES;
	}
	free(cmd);
	lm_free(q);
	lm_free(out);
	lm_free(err);
	return rc;
}

static int check_csrutil(run *r, lm_buf *raw, char **seen)
{
	char *out = NULL, *err = NULL, line[256];
	int status, rc;

	if ((rc = guest(r, raw, "csrutil status", &out, &err, &status)) < 0)
		return rc;
	first_line(out, line, sizeof(line));
	*seen = lm_format("exit %d: %s", status, line);
	rc = *seen == NULL ? lm_error_nomem() :
	    status == 0 && strncmp(out, "System Integrity Protection status: ", 36) == 0 ? LM_SELFTEST_AGREES :
	    LM_SELFTEST_DISAGREES;
	lm_free(out);
	lm_free(err);
	return rc;
}

/* The guest is not booted again (selftest leaves the VM as it is): what the manager answers now,
 * for the record, and why the boot itself is not measured. */
static int check_booting(run *r, lm_buf *raw, char **seen)
{
	const lm_vm_outcome *o = lm_flow_session_vm(r->s);
	char version[128];

	lm_flow_session_manager_version(r->s, version, sizeof(version));
	lm_buf_addf(raw, "manager %s %s: status %s, address %s, SSH %s\n", lm_flow_session_manager(r->s),
	    version[0] ? version : "(version unknown)", o->info.status, o->info.ip[0] ? o->info.ip : "none",
	    o->info.ssh_available ? "available" : "not available");
	*seen = lm_format("not measured: the guest would have to boot again, and selftest never restarts the VM; "
	    "now (booted) %s says %s at %s", lm_flow_session_manager(r->s), o->info.status,
	    o->info.ip[0] ? o->info.ip : "no address");
	return *seen != NULL ? LM_SELFTEST_NOT_MEASURED : lm_error_nomem();
}

static int (*const check_fns[NCHECKS])(run *, lm_buf *, char **) = {
	check_stock_kernels, check_exec, check_spawn, check_probe_exec, check_probe_spawn, check_python, check_hardened,
	check_hardened_runtime, check_launchctl_unknown, check_launchctl_bootout, check_codesign, check_csrutil,
	check_booting,
};

/* ---- the folder ---- */

static cJSON *guest_json(const lm_vm_outcome *o)
{
	cJSON *g = cJSON_CreateObject();

	cJSON_AddStringToObject(g, "os", o->guest.os);
	cJSON_AddStringToObject(g, "os_version", o->guest.os_version);
	cJSON_AddStringToObject(g, "arch", o->guest.arch);
	if (o->guest.sip[0] != '\0')
		cJSON_AddStringToObject(g, "sip", o->guest.sip);
	else
		cJSON_AddNullToObject(g, "sip");
	return g;
}

/* A table cell: '|' escaped, line ends as spaces. */
static char *md_cell(const char *s)
{
	lm_buf b;
	char *out = NULL;

	lm_buf_init(&b, LM_BUF_TEXT_MAX);
	for (; s != NULL && *s != '\0'; s++)
		lm_buf_adds(&b, *s == '|' ? "\\|" : *s == '\n' ? " " : (char[2]){*s, '\0'});
	if (lm_buf_take(&b, &out, NULL) < 0)
		return NULL;
	return out;
}

static char *readme(const lm_selftest_result *res, const lm_vm_outcome *o, const char *manager)
{
	lm_buf b;
	char *text = NULL;
	size_t i;

	lm_buf_init(&b, LM_BUF_TEXT_MAX);
	lm_buf_addf(&b, "# lume-metal selftest of %s\n\n", o->vm);
	lm_buf_addf(&b, "%s: %zu of %zu checks agree with what lume-metal's simulator assumes, %zu disagree, %zu not "
	    "measured. Guest %s %s %s, VM manager %s, lume-metal %s.\n\n",
	    res->simulator ? "**Ran on lume-metal's simulator**, not on a Mac" : "Ran on this guest", res->agree,
	    res->count, res->disagree, res->not_measured, o->guest.os, o->guest.os_version, o->guest.arch, manager,
	    LUME_METAL_VERSION);
	lm_buf_adds(&b, "| check | the simulator assumes | seen here | verdict |\n|---|---|---|---|\n");
	for (i = 0; i < res->count; i++) {
		const lm_selftest_check *c = res->checks[i];
		char *a = md_cell(c->assumed), *s = md_cell(c->seen);
		lm_buf_addf(&b, "| `%s` | %s | %s | %s%s%s |\n", c->name, a != NULL ? a : "", s != NULL ? s : "",
		    c->verdict == LM_SELFTEST_DISAGREES ? "**" : "", lm_selftest_verdict_name(c->verdict),
		    c->verdict == LM_SELFTEST_DISAGREES ? "**" : "");
		free(a);
		free(s);
	}
	lm_buf_adds(&b, "\nEach check's commands and their raw output are in `CHECK.txt`; `selftest.json` holds the same "
	    "in the form docs/selftest.md describes; `sha256sum -c SHA256SUMS` checks the folder. A disagreement is "
	    "what the project needs to hear: post the folder (docs/selftest.md).\n");
	if (lm_buf_take(&b, &text, NULL) < 0)
		return NULL;
	return text;
}

static int write_folder(run *r, lm_selftest_result *res)
{
	const lm_vm_outcome *o = lm_flow_session_vm(r->s);
	cJSON *doc = cJSON_CreateObject(), *checks, *c, *vm;
	char version[128], when[32], *json = NULL, *md = NULL;
	time_t now = time(NULL);
	struct tm tm;
	size_t i;
	int rc;

	lm_flow_session_manager_version(r->s, version, sizeof(version));
	if (gmtime_r(&now, &tm) == NULL || strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(when, sizeof(when), "unknown");
	cJSON_AddStringToObject(doc, "format", "lume-metal-selftest/1");
	cJSON_AddStringToObject(doc, "created_at", when);
	cJSON_AddStringToObject(doc, "lume_metal_version", LUME_METAL_VERSION);
	cJSON_AddBoolToObject(doc, "simulator", res->simulator);
	cJSON_AddItemToObject(doc, "host", lm_bench_host_facts());
	vm = cJSON_AddObjectToObject(doc, "vm");
	cJSON_AddStringToObject(vm, "name", o->vm);
	cJSON_AddStringToObject(vm, "manager", lm_flow_session_manager(r->s));
	if (version[0] != '\0')
		cJSON_AddStringToObject(vm, "manager_version", version);
	else
		cJSON_AddNullToObject(vm, "manager_version");
	cJSON_AddStringToObject(vm, "bundle", o->bundle_id);
	cJSON_AddItemToObject(doc, "guest", guest_json(o));
	checks = cJSON_AddArrayToObject(doc, "checks");
	for (i = 0; checks != NULL && i < res->count; i++) {
		const lm_selftest_check *k = res->checks[i];
		if ((c = cJSON_CreateObject()) == NULL || !cJSON_AddItemToArray(checks, c))
			break;
		cJSON_AddStringToObject(c, "name", k->name);
		cJSON_AddStringToObject(c, "question", k->question);
		cJSON_AddStringToObject(c, "assumed", k->assumed);
		cJSON_AddStringToObject(c, "seen", k->seen);
		cJSON_AddStringToObject(c, "verdict", lm_selftest_verdict_name(k->verdict));
		cJSON_AddStringToObject(c, "raw", k->raw);
	}
	c = cJSON_AddObjectToObject(doc, "summary");
	cJSON_AddNumberToObject(c, "agree", (double)res->agree);
	cJSON_AddNumberToObject(c, "disagree", (double)res->disagree);
	cJSON_AddNumberToObject(c, "not_measured", (double)res->not_measured);
	if ((json = cJSON_Print(doc)) == NULL || (md = readme(res, o, lm_flow_session_manager(r->s))) == NULL)
		rc = lm_error_nomem();
	else if ((rc = lm_bench_write_file(r->dir, "selftest.json", json, strlen(json))) == 0 &&
	    (rc = lm_bench_write_file(r->dir, "README.md", md, strlen(md))) == 0)
		rc = lm_bench_write_sums(r->dir);
	cJSON_Delete(doc);
	cJSON_free(json);
	free(md);
	return rc;
}

/* Is the guest lume-metal's simulator? Its sessions carry SIM_MARKER (docs/simulator.md). */
static int simulated(run *r)
{
	char *out = NULL, *err = NULL;
	int status, sim = 0;

	if (lm_ssh_exec_capture(r->ssh, "printenv " SIM_MARKER, OUTPUT_MAX, &out, &err, &status) == 0)
		sim = status == 0 && out[0] != '\0';
	else
		lm_error_clear();
	lm_free(out);
	lm_free(err);
	return sim;
}

static int run_checks(run *r, lm_selftest_result *res)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < NCHECKS; i++) {
		lm_selftest_check *c;
		lm_buf raw;
		char *text = NULL;
		double t;
		int v;

		if ((rc = lm_context_check_cancel(r->ctx, "between checks")) < 0)
			return rc;
		if ((c = calloc(1, sizeof(*c))) == NULL)
			return lm_error_nomem();
		res->checks[res->count++] = c;
		c->size = sizeof(*c);
		c->name = docs[i].name;
		c->question = docs[i].question;
		c->assumed = docs[i].assumed;
		if ((c->raw = lm_format("%s.txt", c->name)) == NULL)
			return lm_error_nomem();
		lm_context_step(r->ctx, lm_flow_session_vm(r->s)->vm, c->name, LM_STEP_STARTED, 0, "");
		t = lm_clock_monotonic();
		lm_buf_init(&raw, LM_BUF_TEXT_MAX);
		lm_buf_addf(&raw, "%s\nthe simulator assumes: %s\n\n", c->question, c->assumed);
		if ((v = check_fns[i](r, &raw, &c->seen)) < 0) {
			/* A check whose commands could not be run is not measured; the run goes on. */
			if (v == LM_ENOMEM || v == LM_ECANCELED) {
				lm_buf_dispose(&raw);
				return v;
			}
			free(c->seen);
			if ((c->seen = lm_format("not measured: %s", lm_error_last()->message)) == NULL) {
				lm_buf_dispose(&raw);
				return lm_error_nomem();
			}
			lm_error_clear();
			v = LM_SELFTEST_NOT_MEASURED;
		}
		c->verdict = (lm_selftest_verdict)v;
		lm_buf_addf(&raw, "\nseen: %s\nverdict: %s\n", c->seen, lm_selftest_verdict_name(c->verdict));
		if ((rc = lm_buf_take(&raw, &text, NULL)) < 0 ||
		    (rc = lm_bench_write_file(r->dir, c->raw, text, strlen(text))) < 0) {
			free(text);
			return rc;
		}
		free(text);
		res->agree += c->verdict == LM_SELFTEST_AGREES;
		res->disagree += c->verdict == LM_SELFTEST_DISAGREES;
		res->not_measured += c->verdict == LM_SELFTEST_NOT_MEASURED;
		lm_context_step(r->ctx, lm_flow_session_vm(r->s)->vm, c->name, LM_STEP_DONE, lm_clock_monotonic() - t,
		    c->seen);
	}
	return 0;
}

int lm_selftest_run(lm_context *ctx, const char *vm, const char *out_dir, lm_selftest_result **out)
{
	lm_selftest_result *res;
	run r;
	char def[256];
	int rc;

	*out = NULL;
	memset(&r, 0, sizeof(r));
	r.ctx = ctx;
	if ((rc = lm_random_hex(r.tag, 8)) < 0)
		return rc;
	if ((res = calloc(1, sizeof(*res))) == NULL || (res->checks = calloc(NCHECKS, sizeof(*res->checks))) == NULL) {
		free(res);
		return lm_error_nomem();
	}
	res->size = sizeof(*res);
	*out = res;
	if ((rc = lm_flow_session_open(&r.s, ctx, vm)) < 0)
		return rc;
	if (out_dir == NULL) {
		time_t now = time(NULL);
		struct tm tm;
		char when[32] = "now";
		if (gmtime_r(&now, &tm) != NULL)
			strftime(when, sizeof(when), "%Y%m%dT%H%M%SZ", &tm);
		snprintf(def, sizeof(def), "lume-metal-selftest-%s-%s", lm_flow_session_vm(r.s)->vm, when);
		out_dir = def;
	}
	if ((rc = lm_bench_make_folder(out_dir, &res->dir)) < 0)
		goto out;
	r.dir = res->dir;
	r.ssh = lm_flow_session_ssh(r.s);
	/* The children checks run their launchers as `run` would: the shim told the guest's SIP state. */
	if ((rc = lm_flow_session_guest(r.s)) < 0)
		goto out;
	snprintf(r.name, sizeof(r.name), "selftest-%s", r.tag);
	if ((rc = lm_activation_dir_make(r.ssh, lm_flow_session_vm(r.s)->guest.home, r.name, &r.scratch)) < 0)
		goto out;
	res->simulator = simulated(&r);
	if ((rc = run_checks(&r, res)) == 0)
		rc = write_folder(&r, res);
out:
	if (r.scratch != NULL && lm_activation_dir_remove(r.ssh, r.scratch) < 0)
		lm_error_clear();
	free(r.scratch);
	lm_flow_session_close(r.s);
	return rc;
}
