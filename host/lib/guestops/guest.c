/* Operations on one guest over SSH: its facts, the installed bundle, the probe. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest_bundle.h"
#include "guest_codesign.h"
#include "guest_machine.h"
#include "guest_shim.h"
#include "buf.h"
#include "path.h"
#include "random.h"
#include "sha256.h"
#include "text.h"
#include "ssh_deadline.h"
#include "test_hooks.h"

/* A command line under construction: raw shell syntax we write ourselves plus quoted
 * arguments, which always go through lm_shell_quote.
 *
 * Every command runs as `$SHELL -c '...'` in the guest, and the login shell of a Cua image is
 * zsh: what we write must mean the same to zsh (default options) and to a POSIX sh. So no
 * unquoted glob (zsh's NOMATCH makes one that matches nothing an error; `find -name` takes the
 * pattern instead), no unquoted expansion that relies on word splitting (zsh does not split),
 * nothing bash-only. */
typedef lm_buf cmdline;

/* No command of ours comes near this; one that did would be a bug, refused as too large. */
#define LM_GUEST_COMMAND_MAX ((size_t)1 << 20)

static void cl_init(cmdline *c)
{
	lm_buf_init(c, LM_GUEST_COMMAND_MAX);
}

/* The first failure sticks (the buffer's own, or one of ours); cl_done returns it. */
static void cl_fail(cmdline *c, int rc)
{
	if (c->error == 0)
		c->error = rc;
}

static void cl_raw(cmdline *c, const char *text)
{
	(void)lm_buf_adds(c, text);
}

static void cl_arg(cmdline *c, const char *arg)
{
	char *q;
	int rc;

	if (lm_buf_error(c) < 0)
		return;
	if ((rc = lm_shell_quote(arg, &q)) < 0) {
		cl_fail(c, rc);
		return;
	}
	cl_raw(c, q);
	lm_free(q);
}

/* A path under an install directory, quoted. Never cut short (a cut path could name a parent
 * directory). */
static void cl_path(cmdline *c, const char *dir, const char *rest)
{
	char path[PATH_MAX];
	int rc;

	if (lm_buf_error(c) < 0)
		return;
	if ((rc = lm_path_join_buf(path, sizeof(path), dir, rest[0] ? rest : NULL, NULL)) < 0) {
		cl_fail(c, rc);
		return;
	}
	cl_arg(c, path);
}

static int cl_done(cmdline *c, char **out)
{
	return lm_buf_take(c, out, NULL);
}

/* The next line of a guest's answer; "" past its end. */
static void line_of(lm_scan *s, const char **line, size_t *n)
{
	if (lm_scan_line(s, line, n) == 0) {
		*line = "";
		*n = 0;
	}
}

/* Lines that only a parser of C strings reads (a boot time, csrutil's status) are copied into a
 * buffer this long; a longer one is neither, and reads as unknown. */
#define FACT_LINE_MAX 256

/* One round trip for everything the flow needs to know about the guest. The macOS tools are
 * asked exactly as on macOS; the simulator's guests answer through stand-ins. csrutil's first
 * line, or an empty one where there is no csrutil. */
#define BOOT_TIME_COMMAND "(sysctl -n kern.boottime) 2>/dev/null || echo; "
#define TART_SHIM_COMMAND "if test -f " LM_TART_SHIM_PATH "; then echo tart-shim; else echo; fi"
#define FACTS_COMMAND \
	"uname -s; uname -m; (sw_vers -productVersion) 2>/dev/null || echo; " \
	BOOT_TIME_COMMAND "printf '%s\\n' \"$HOME\"; " \
	"readlink \"$HOME/" LM_GUEST_BASE "/current\" 2>/dev/null || echo; " \
	"{ (csrutil status) 2>/dev/null; echo; } | head -n 1; " \
	TART_SHIM_COMMAND

/* One line of the facts into its field. Too long is an error naming the limit, never a cut: the
 * home directory becomes part of `rm -rf` paths, and a cut one could name another directory. */
static int take_line(lm_scan *s, char *dst, size_t len, const char *what)
{
	const char *line;
	size_t n;
	char shown[96];

	line_of(s, &line, &n);
	if (lm_text_copy(dst, len, line, n) == 0)
		return 0;
	lm_text_quote(shown, sizeof(shown), line, n, 60);
	return lm_error_set(LM_EREMOTE, "the guest's %s is longer than %zu bytes, the limit (\"%s\")", what, len - 1,
	    shown);
}

/* `sysctl -n kern.boottime` on macOS: "{ sec = 1764442800, usec = 250000 } Sun Nov 29 19:00:00
 * 2026". The microseconds count: the restart rule compares with the preference's change to the
 * fraction. Seconds outside what an epoch second can be, or no such line, read as unknown (0). */
double lm_guest_boot_time_parse(const char *boot)
{
	const char *sec, *usec;
	double t = 0;

	if ((sec = strstr(boot, "sec = ")) != NULL) {
		long long s = strtoll(sec + 6, NULL, 10);
		if (s > 0 && s < 100000000000LL) {
			t = (double)s;
			if ((usec = strstr(sec, "usec = ")) != NULL) {
				long us = strtol(usec + 7, NULL, 10);
				if (us > 0 && us < 1000000)
					t += (double)us / 1e6;
			}
		}
	}
	return t;
}

int lm_guest_facts_parse(const char *out, const char *err, lm_guest_facts *facts, char *current, size_t current_len)
{
	char boot[FACT_LINE_MAX], sip[FACT_LINE_MAX];
	const char *line;
	size_t n;
	lm_scan s;
	int rc;

	memset(facts, 0, sizeof(*facts));
	lm_scan_init(&s, out, out != NULL ? strlen(out) : 0);
	if ((rc = take_line(&s, facts->os, sizeof(facts->os), "OS name (uname -s)")) < 0 ||
	    (rc = take_line(&s, facts->arch, sizeof(facts->arch), "architecture (uname -m)")) < 0 ||
	    (rc = take_line(&s, facts->os_version, sizeof(facts->os_version), "OS version (sw_vers)")) < 0)
		return rc;
	line_of(&s, &line, &n);
	(void)lm_text_copy(boot, sizeof(boot), line, n);
	if ((rc = take_line(&s, facts->home, sizeof(facts->home), "home directory ($HOME)")) < 0)
		return rc;
	if (current != NULL) {
		if ((rc = take_line(&s, current, current_len, "installed bundle link")) < 0)
			return rc;
	} else
		line_of(&s, &line, &n);
	line_of(&s, &line, &n);
	(void)lm_text_copy(sip, sizeof(sip), line, n);
	lm_sip_status_parse(sip, facts->sip, sizeof(facts->sip));
	line_of(&s, &line, &n);
	facts->tart_shim = lm_text_is(line, n, "tart-shim");

	facts->boot_time = lm_guest_boot_time_parse(boot);
	if (facts->os[0] == '\0' || facts->home[0] != '/') {
		/* What it did say, so that the cause shows (a shell that never ran the command says why on
		 * its standard error). */
		char os[64], home[96], said[160];
		lm_text_quote(os, sizeof(os), facts->os, strlen(facts->os), 40);
		lm_text_quote(home, sizeof(home), facts->home, strlen(facts->home), 60);
		lm_text_quote(said, sizeof(said), err != NULL ? err : "", err != NULL ? strcspn(err, "\n") : 0, 120);
		return lm_error_set(LM_EREMOTE, "the guest did not say its OS and home directory: uname -s answered "
		    "\"%s\" and $HOME \"%s\" (an absolute path was expected)%s%s", os, home, said[0] ? "; its shell said: " : "",
		    said);
	}
	return 0;
}

int lm_guest_facts_read(lm_ssh *ssh, lm_guest_facts *facts, char *current, size_t current_len)
{
	char *out = NULL, *err = NULL;
	int status = 0, rc;

	memset(facts, 0, sizeof(*facts));
	if ((rc = lm_ssh_ask(ssh, FACTS_COMMAND, 64 * 1024, &out, &err, &status)) < 0)
		return rc;
	rc = lm_guest_facts_parse(out, err, facts, current, current_len);
	lm_free(out);
	lm_free(err);
	return rc;
}

int lm_guest_login_shell(lm_ssh *ssh, char *buf, size_t len, int *written_for)
{
	char *out = NULL, *err = NULL, *base;
	int status = 0, rc;
	lm_scan s;

	*written_for = 0;
	if (len > 0)
		buf[0] = '\0';
	if ((rc = lm_ssh_ask(ssh, "printf '%s\\n' \"$SHELL\"", 4096, &out, &err, &status)) == 0 && status != 0)
		rc = lm_error_set(LM_EREMOTE, "%s", err != NULL && err[0] ? err : "printf failed");
	lm_scan_init(&s, out, out != NULL ? strlen(out) : 0);
	if (rc == 0 && (rc = take_line(&s, buf, len, "login shell ($SHELL)")) == 0) {
		base = strrchr(buf, '/') != NULL ? strrchr(buf, '/') + 1 : buf;
		*written_for = strcmp(base, "zsh") == 0 || strcmp(base, "bash") == 0 || strcmp(base, "sh") == 0;
	}
	lm_free(out);
	lm_free(err);
	return rc;
}

static int file_path(char *buf, size_t len, const lm_install_place *p, const char *dir, const char *name)
{
	return lm_path_join_buf(buf, len, p->dir, dir, name, NULL);
}

/* One installed file's mode as the manifest says (lm_ssh_stat does not follow a link); *why when
 * not. Anything but a regular file is left to lm_ssh_sha256, which refuses it in the transport's
 * own words. */
static int file_mode(lm_ssh *ssh, const char *path, int mode, int *ok, char *why, size_t why_len)
{
	lm_ssh_stat_info st;
	int rc;

	*ok = 1;
	if ((rc = lm_ssh_stat(ssh, path, &st)) < 0)
		return rc;
	if (st.exists && !st.is_dir && !st.is_link && st.mode != mode) {
		*ok = 0;
		lm_text_format_cut(why, why_len, "%s has mode %04o, the manifest says %04o", path, (unsigned)st.mode,
		    (unsigned)mode);
	}
	return 0;
}

/* Every file read through lm_ssh_sha256: a FIFO or a device is refused by its kind, never opened,
 * and a read ends with the command timeout. A link on the way (the install rule) or a file that is
 * not what the manifest says is "not verified" with why; what is not the place's answer (memory,
 * the connection, a timeout) is an error. */
int lm_bundle_verify_at(lm_ssh *ssh, const lm_install_place *p, const lm_bundle *b, int *ok, char *why,
    size_t why_len)
{
	char path[PATH_MAX + 600], hex[65], manifest_hex[65];
	uint8_t digest[32];
	size_t i;
	int rc, fine;

	*ok = 0;
	lm_text_format_cut(why, why_len, "%s", "");
	lm_sha256(b->manifest, b->manifest_len, digest);
	lm_sha256_hex(digest, manifest_hex);
	if ((rc = lm_install_base_check(ssh, p)) < 0)
		goto out;
	for (i = 0; i <= b->nfiles; i++) {
		const char *name = i < b->nfiles ? b->files[i].name : "manifest.json";
		if ((rc = file_path(path, sizeof(path), p, b->id, name)) < 0 ||
		    (rc = file_mode(ssh, path, i < b->nfiles ? b->files[i].mode : 0644, &fine, why, why_len)) < 0)
			goto out;
		if (!fine)
			return 0;
		if ((rc = lm_ssh_sha256(ssh, path, digest)) < 0)
			goto out;
		lm_sha256_hex(digest, hex);
		if (strcmp(hex, i < b->nfiles ? b->files[i].sha256 : manifest_hex) != 0) {
			lm_text_format_cut(why, why_len, "%s does not match the manifest (SHA-256)", path);
			return 0;
		}
	}
	*ok = 1;
out:
	if (rc < 0)
		lm_text_format_cut(why, why_len, "%s", lm_error_last()->message);
	if (rc == LM_ENOTFOUND || rc == LM_EREMOTE || rc == LM_ETOOLARGE) {
		lm_error_clear();
		return 0;
	}
	return rc;
}

int lm_guest_bundle_verify(lm_ssh *ssh, const lm_guest_facts *facts, const lm_bundle *b, int *ok, char *why,
    size_t why_len)
{
	lm_install_place p;
	int rc;

	*ok = 0;
	if ((rc = lm_install_place_guest(&p, facts)) < 0)
		return rc;
	return lm_bundle_verify_at(ssh, &p, b, ok, why, why_len);
}

/* One of the installer's commands, at its place: a guest's, or this machine's (`local install`). */
static int run_checked(lm_ssh *ssh, const lm_install_place *p, const char *cmd, const char *what)
{
	char *out = NULL, *err = NULL;
	int status = 0, rc;

	if ((rc = lm_ssh_ask(ssh, cmd, 64 * 1024, &out, &err, &status)) < 0)
		return rc;
	if (status != 0)
		rc = lm_error_set(LM_EREMOTE, "%s failed %s (exit %d): %s", what,
		    p->home[0] ? "in the guest" : "on this machine", status, err != NULL && err[0] ? err : (out != NULL ? out : ""));
	lm_free(out);
	lm_free(err);
	return rc;
}

/* A name of this run's own (.staging-ID-RANDOM): another run's staging directory is never this
 * one. Leftovers of interrupted runs are removed by the prepare step, under the per-VM lock. */
static int staging_name(char *buf, size_t len, const lm_bundle *b)
{
	char run[17];
	int rc;

	if ((rc = lm_random_hex(run, 8)) < 0)
		return rc;
	return lm_text_format(buf, len, ".staging-%s-%s", b->id, run) == 0 ? 0 :
	    lm_error_set(LM_EINVALID, "bundle id %s is too long for a staging name", b->id);
}

int lm_guest_install_prepare_command(const lm_install_place *p, const char *stage, char **out)
{
	cmdline c;

	cl_init(&c);
	/* A fresh staging directory of this run's own (mkdir without -p: never one that exists);
	 * what interrupted runs left is removed by manifest after the switch (guest_files.c). Every
	 * directory 0755 whatever the caller's umask: the workloads that load the shim may run as
	 * another user than the install (an image build). */
	cl_raw(&c, "umask 022 && c= && { [ -d ");
	cl_path(&c, p->dir, "");
	if (p->home[0]) {
		cl_raw(&c, " ] || for p in .local .local/share; do [ -d ");
		cl_arg(&c, p->home);
		cl_raw(&c, "/\"$p\" ] || c=\"$c $p\"; done; } && mkdir -p ");
	} else
		cl_raw(&c, " ] || mkdir "); /* its parents are the caller's, checked */
	cl_path(&c, p->dir, "");
	if (!p->home[0])
		cl_raw(&c, "; }");
	cl_raw(&c, " && cd ");
	cl_path(&c, p->dir, "");
	/* The parents the first install made, for rollback (LM_GUEST_PARENTS_FILE). */
	if (p->home[0])
		cl_raw(&c, " && { [ -z \"$c\" ] || printf '%s\\n' \"$c\" >" LM_GUEST_PARENTS_FILE "; }");
	cl_raw(&c, " && mkdir ");
	cl_arg(&c, stage);
	cl_raw(&c, " && mkdir ");
	cl_arg(&c, stage);
	cl_raw(&c, "/profiles");
	return cl_done(&c, out);
}

int lm_guest_install_switch_command(const lm_install_place *p, const lm_bundle *b, const char *stage, char **out)
{
	cmdline c;

	cl_init(&c);

	/* Into place (the bundle's name is free: lm_guest_bundle_install removed what was there by its
	 * manifest; mv into an existing directory would move the stage inside it), then `current`
	 * switched with one rename, only over a link: a file or directory of the user's at that name
	 * is refused, never replaced. Older versions go by manifest afterwards. */
	cl_raw(&c, "cd ");
	cl_path(&c, p->dir, "");
	cl_raw(&c, " && if test -e ");
	cl_arg(&c, b->id);
	cl_raw(&c, " || test -L ");
	cl_arg(&c, b->id);
	cl_raw(&c, "; then echo ");
	cl_arg(&c, b->id);
	cl_raw(&c, "': in the way (not made by lume-metal); move it away' >&2; exit 3; fi"
	           " && if test -e current && ! test -L current; then echo 'current is not a link (not made by lume-metal);"
	           " move it away' >&2; exit 3; fi && if test -L .current.new; then rm -f .current.new; fi && mv ");
	cl_arg(&c, stage);
	cl_raw(&c, " ");
	cl_arg(&c, b->id);
	cl_raw(&c, " && ln -s ");
	cl_arg(&c, b->id);
	/* GNU mv needs -T, BSD mv -h, not to move the new link into the old link's directory. */
	cl_raw(&c, p->bsd_mv ? " .current.new && mv -h -f .current.new current"
	                                             : " .current.new && mv -T -f .current.new current");
	return cl_done(&c, out);
}

/* The bundle's own name in the install directory, emptied of an earlier copy by its manifest;
 * anything left there stops the install before `current` is touched. */
static int clear_bundle_name(lm_ssh *ssh, const lm_install_place *p, const lm_bundle *b, int *replaced)
{
	char path[PATH_MAX + 600], said[2048];
	lm_guest_removal r;
	lm_ssh_kind kind;
	int rc;

	if ((rc = file_path(path, sizeof(path), p, b->id, NULL)) < 0 || (rc = lm_ssh_kind_of(ssh, path, &kind)) < 0 ||
	    kind == LM_SSH_KIND_ABSENT)
		return rc;
	*replaced = 1;
	lm_guest_removal_init(&r);
	if ((rc = lm_install_entry_remove(ssh, p, b, b->id, &r)) == 0 && r.nleft > 0) {
		lm_guest_removal_describe(&r, said, sizeof(said));
		rc = lm_error_set(LM_EREMOTE, "%s cannot be replaced: %s; move what is not lume-metal's away and try "
		    "again", path, said);
	}
	lm_guest_removal_dispose(&r);
	return rc;
}

int lm_bundle_install_at(lm_ssh *ssh, const lm_install_place *p, const lm_bundle *b, const lm_guest_owner *owner,
    lm_install_result *res)
{
	char stage[300], *cmd = NULL, path[PATH_MAX + 600];
	lm_guest_removal older;
	void *data = NULL;
	size_t len, i;
	int rc;

	memset(res, 0, sizeof(*res));
	lm_guest_removal_init(&older);
	/* 0. Nothing written through a link, nor over a file of the user's. */
	if ((rc = lm_install_base_check(ssh, p)) < 0 || (rc = staging_name(stage, sizeof(stage), b)) < 0)
		goto out;
	/* 1. A fresh staging directory. */
	if ((rc = lm_guest_install_prepare_command(p, stage, &cmd)) < 0 ||
	    (rc = run_checked(ssh, p, cmd, "preparing the install directory")) < 0)
		goto out;
	/* Whose install this is, before any of it: a killed install is its state directory's to finish. */
	if (owner != NULL && (rc = lm_guest_owner_write_in(ssh, p->dir, owner)) < 0)
		goto cleanup;
	lm_test_kill_point("install-staging");

	/* 2. Every file, verified by SHA-256 after upload, then the manifest last. */
	for (i = 0; i < b->nfiles; i++) {
		if ((rc = lm_bundle_read(b, &b->files[i], &data, &len)) < 0)
			goto cleanup;
		if ((rc = file_path(path, sizeof(path), p, stage, b->files[i].name)) == 0)
			rc = lm_ssh_upload(ssh, data, len, path, b->files[i].mode);
		free(data);
		data = NULL;
		if (rc < 0)
			goto cleanup;
		res->uploaded++;
		lm_test_kill_point("install-upload");
	}
	if ((rc = file_path(path, sizeof(path), p, stage, "manifest.json")) < 0 ||
	    (rc = lm_ssh_upload(ssh, b->manifest, b->manifest_len, path, 0644)) < 0)
		goto cleanup;
	res->uploaded++;

	/* 3. Into place, `current` switched; then older versions and what interrupted runs left go,
	 * each by its manifest. */
	free(cmd);
	cmd = NULL;
	if ((rc = clear_bundle_name(ssh, p, b, &res->replaced)) < 0 ||
	    (rc = lm_guest_install_switch_command(p, b, stage, &cmd)) < 0 ||
	    (rc = run_checked(ssh, p, cmd, "switching to the new bundle")) < 0)
		goto cleanup;
	rc = lm_install_files_remove(ssh, p, b, b->id, &older);
	res->removed = older.entries;
	goto out;

cleanup:
	/* No half-installed guest: the staging directory goes; `current` was never touched. */
	{
		lm_guest_removal r;
		int saved = rc;
		char msg[2048];

		snprintf(msg, sizeof(msg), "%s", lm_error_last()->message);
		lm_guest_removal_init(&r);
		if (lm_ssh_usable(ssh))
			(void)lm_install_entry_remove(ssh, p, b, stage, &r);
		lm_guest_removal_dispose(&r);
		rc = lm_error_set(saved, "%s", msg);
	}
out:
	lm_guest_removal_dispose(&older);
	free(cmd);
	return rc;
}

int lm_guest_bundle_install(lm_ssh *ssh, const lm_guest_facts *facts, const lm_bundle *b, const lm_guest_owner *owner,
    int *uploaded)
{
	lm_install_place p;
	lm_install_result res;
	int rc;

	*uploaded = 0;
	if ((rc = lm_install_place_guest(&p, facts)) < 0)
		return rc;
	rc = lm_bundle_install_at(ssh, &p, b, owner, &res);
	*uploaded = res.uploaded;
	return rc;
}

int lm_shim_env_make(lm_shim_env *se, const lm_guest_facts *facts, const char *injection,
    const char *shim, const char *probe, const lm_profile *profile)
{
	int rc;

	memset(se, 0, sizeof(*se));
	if (lm_text_format(se->injection, sizeof(se->injection), "%s", injection) < 0)
		return lm_error_set(LM_EINVALID, "the shim's variable name is longer than %zu bytes (the limit)",
		    sizeof(se->injection) - 1);
	if ((rc = lm_path_join_buf(se->shim_path, sizeof(se->shim_path), facts->home, LM_GUEST_BASE, "current", shim,
	    NULL)) < 0 || (rc = lm_path_join_buf(se->probe_path, sizeof(se->probe_path), facts->home, LM_GUEST_BASE,
	    "current", probe, NULL)) < 0)
		return rc;
	return lm_profile_render_env(profile, se->env, &se->nenv);
}

int lm_shim_env_tart(lm_shim_env *tart, const lm_shim_env *se)
{
	*tart = *se;
	snprintf(tart->shim_path, sizeof(tart->shim_path), "%s", LM_TART_SHIM_PATH);
	/* The values Cirrus Labs' images once set in their guest-agent jobs (family 1009, 64 KB); the
	 * current images set them nowhere (macos-image-templates, scripts/test-tart-metal-capabilities.sh
	 * fails an image that injects the shim): what the shim answers once someone enables it. */
	tart->nenv = 2;
	tart->env[0].name = "TART_METAL_APPLE_FAMILY_MAX";
	snprintf(tart->env[0].value, sizeof(tart->env[0].value), "1009");
	tart->env[1].name = "TART_METAL_MAX_THREADGROUP_MEMORY";
	snprintf(tart->env[1].value, sizeof(tart->env[1].value), "65536");
	return 0;
}

int lm_shim_env_workload(lm_shim_env *se, const char *inherit, const char *reason, const char *record_dir)
{
	if ((inherit != NULL && lm_text_format(se->inherit, sizeof(se->inherit), "%s", inherit) < 0) ||
	    (reason != NULL && lm_text_format(se->inherit_reason, sizeof(se->inherit_reason), "%s", reason) < 0))
		return lm_error_set(LM_EINVALID, "the children policy does not fit its variables");
	if (record_dir != NULL && lm_text_format(se->record_dir, sizeof(se->record_dir), "%s", record_dir) < 0)
		return lm_error_set(LM_EINVALID, "the record directory's path is longer than %zu bytes",
		    sizeof(se->record_dir) - 1);
	return 0;
}

void lm_shim_env_guest(lm_shim_env *se, const char *sip, int shim_arm64e)
{
	/* A state csrutil did not report is left out: the shim then treats SIP as not enabled. */
	if (strcmp(sip, "enabled") == 0 || strcmp(sip, "disabled") == 0 || strcmp(sip, "custom") == 0)
		snprintf(se->guest_sip, sizeof(se->guest_sip), "%s", sip);
	else
		se->guest_sip[0] = '\0';
	snprintf(se->shim_arm64e, sizeof(se->shim_arm64e), "%s", shim_arm64e ? "1" : "0");
}

size_t lm_shim_env_workload_vars(const lm_shim_env *se, const char *names[LM_SHIM_WORKLOAD_VARS],
    const char *values[LM_SHIM_WORKLOAD_VARS])
{
	const char *all[LM_SHIM_WORKLOAD_VARS][2] = {
		{ "LUME_METAL_INHERIT", se->inherit },
		{ "LUME_METAL_INHERIT_REASON", se->inherit_reason },
		{ "LUME_METAL_GUEST_SIP", se->guest_sip },
		{ "LUME_METAL_SHIM_ARM64E", se->shim_arm64e },
		{ "LUME_METAL_RECORD_DIR", se->record_dir },
	};
	size_t i, n = 0;

	for (i = 0; i < LM_SHIM_WORKLOAD_VARS; i++) {
		if (all[i][1][0] == '\0')
			continue;
		names[n] = all[i][0];
		values[n++] = all[i][1];
	}
	return n;
}

int lm_shim_command(const lm_shim_env *se, int with_shim, const char *const *argv, size_t argc, char **out)
{
	cmdline c;

	cl_init(&c);
	char assign[PATH_MAX + 128];
	const char *names[LM_SHIM_WORKLOAD_VARS], *values[LM_SHIM_WORKLOAD_VARS];
	size_t i, n;

	/* The variables are set by `env` right before the workload starts, on its own command line:
	 * with SIP, DYLD_* variables inherited through a protected shell would be purged. */
	cl_raw(&c, "env");
	if (with_shim == LM_SHIM_ALL) {
		snprintf(assign, sizeof(assign), "%s=%s", se->injection, se->shim_path);
		cl_raw(&c, " ");
		cl_arg(&c, assign);
		for (i = 0; i < se->nenv; i++) {
			snprintf(assign, sizeof(assign), "%s=%s", se->env[i].name, se->env[i].value);
			cl_raw(&c, " ");
			cl_arg(&c, assign);
		}
		/* Before argv: an assignment of the user's among argv's leading words comes later, and
		 * wins. */
		n = lm_shim_env_workload_vars(se, names, values);
		for (i = 0; i < n; i++) {
			snprintf(assign, sizeof(assign), "%s=%s", names[i], values[i]);
			cl_raw(&c, " ");
			cl_arg(&c, assign);
		}
	}
	if (with_shim == LM_SHIM_ALL || with_shim == LM_SHIM_PATH_ONLY) {
		/* The bundle's own tools (metal-capabilities) by name, then Homebrew's (llama-bench and
		 * friends: a non-interactive session has only sshd's /usr/bin:/bin:/usr/sbin:/sbin, as
		 * no shell profile is read), then the session's PATH. */
		snprintf(assign, sizeof(assign), "PATH=%.*s:" LM_GUEST_HOMEBREW_PATH ":",
		    (int)(strrchr(se->probe_path, '/') - se->probe_path), se->probe_path);
		cl_raw(&c, " ");
		cl_arg(&c, assign);
		cl_raw(&c, "\"$PATH\"");
	}
	for (i = 0; i < argc; i++) {
		cl_raw(&c, " ");
		cl_arg(&c, argv[i]);
	}
	return cl_done(&c, out);
}

int lm_guest_probe(lm_ssh *ssh, const lm_shim_env *se, int shimmed, lm_report **out,
    char *diag, size_t diag_len)
{
	const char *argv[3];
	char *cmd = NULL, *sout = NULL, *serr = NULL;
	int status = 0, rc;
	size_t argc = 0;

	*out = NULL;
	if (diag_len > 0)
		diag[0] = '\0';
	if (shimmed)
		argv[argc++] = "LUME_METAL_LOG=1"; /* the shim says why when it stays stock */
	argv[argc++] = se->probe_path;
	argv[argc++] = "--report";
	if ((rc = lm_shim_command(se, shimmed, argv, argc, &cmd)) < 0)
		return rc;
	rc = lm_ssh_ask(ssh, cmd, 256 * 1024, &sout, &serr, &status);
	free(cmd);
	if (rc < 0)
		goto out;
	if (diag_len > 0 && serr != NULL)
		lm_text_format_cut(diag, diag_len, "%.*s", (int)strcspn(serr, "\n"), serr);
	if (status != 0) {
		size_t n = serr != NULL ? strlen(serr) : 0;
		while (n > 0 && (serr[n - 1] == '\n' || serr[n - 1] == '\r'))
			n--; /* its last line's end is not part of what it said */
		rc = lm_error_set(LM_EREMOTE, "the probe failed %s (exit %d): %.*s", shimmed ? "with the shim" : "stock",
		    status, n > 0 ? (int)n : (int)strlen("no output"), n > 0 ? serr : "no output");
		goto out;
	}
	if ((rc = lm_report_parse_lines(out, sout, strlen(sout))) < 0)
		lm_error_prefix("the probe's report %s: ", shimmed ? "with the shim" : "stock");
out:
	lm_free(sout);
	lm_free(serr);
	return rc;
}

/* --- An enabled guest confirmed in one round trip (lm_guest_confirm) --- */

/* The guest's answer, cut at this run's marker lines ("MARK NAME STATUS" after each part). */
typedef struct {
	const char *text[4];
	size_t len[4];
	int status[4];
} confirm_parts;

static const char *const confirm_part_names[4] = {"facts", "sums", "stock", "shimmed"};

/* After each part, on a line of its own whatever the part printed last: the marker, the part's
 * name and its exit status. */
static void cl_mark(cmdline *c, const char *mark, int part)
{
	char line[64];

	snprintf(line, sizeof(line), "\\n%s %s %%s\\n", mark, confirm_part_names[part]);
	cl_raw(c, "; printf ");
	cl_arg(c, line);
	cl_raw(c, " \"$?\"");
	if (part < 3)
		cl_raw(c, "; ");
}

static void cl_command(cmdline *c, int rc, char *cmd)
{
	if (rc < 0)
		cl_fail(c, rc);
	if (cmd != NULL)
		cl_raw(c, cmd);
	free(cmd);
}

/* Parts 3 and 4: the probe stock, then with the shim and its exercise in one process; each only
 * when what it loads is a regular file (the loader would block on a FIFO). */
static void cl_probes(cmdline *c, const lm_shim_env *se, const char *mark)
{
	const char *stock[2] = {se->probe_path, "--report"};
	const char *shimmed[4] = {"LUME_METAL_LOG=1", se->probe_path, "--report", "--exercise"};
	char *cmd = NULL;
	int rc;

	cl_raw(c, "test -f ");
	cl_arg(c, se->probe_path);
	cl_raw(c, " && ");
	rc = lm_shim_command(se, 0, stock, 2, &cmd);
	cl_command(c, rc, cmd);
	cl_mark(c, mark, 2);
	cmd = NULL;
	cl_raw(c, "test -f ");
	cl_arg(c, se->probe_path);
	cl_raw(c, " && test -f ");
	cl_arg(c, se->shim_path);
	cl_raw(c, " && ");
	rc = lm_shim_command(se, LM_SHIM_ALL, shimmed, 4, &cmd);
	cl_command(c, rc, cmd);
	cl_mark(c, mark, 3);
}

int lm_guest_confirm_command(const lm_guest_facts *known, const lm_bundle *b, const lm_shim_env *se,
    const char *mark, char **out)
{
	char base[PATH_MAX];
	cmdline c;
	size_t i;
	int rc;

	cl_init(&c);

	/* 1. What can change without a reboot: the boot time itself, the home, the Tart image's
	 * shim; the rest of the facts is the journal's while the boot time is the recorded one. */
	cl_raw(&c, BOOT_TIME_COMMAND "printf '%s\\n' \"$HOME\"; " TART_SHIM_COMMAND);
	cl_mark(&c, mark, 0);
	/* 2. The bundle `current` names (the shell's own `pwd -P`), then the SHA-256 of every file in
	 * it and of its manifest, by the guest's OpenSSL (LibreSSL on macOS); the host compares them
	 * with its bundle's. */
	cl_raw(&c, "cd ");
	if ((rc = lm_path_join_buf(base, sizeof(base), known->home, LM_GUEST_BASE, NULL)) < 0)
		cl_fail(&c, rc);
	cl_path(&c, base, "current");
	cl_raw(&c, " && pwd -P");
	/* Only regular files are read (test -f): a FIFO would block openssl, /dev/zero never end. */
	for (i = 0; i <= b->nfiles; i++) {
		cl_raw(&c, " && test -f ");
		cl_arg(&c, i < b->nfiles ? b->files[i].name : "manifest.json");
	}
	cl_raw(&c, " && openssl dgst -sha256 -r");
	for (i = 0; i < b->nfiles; i++) {
		cl_raw(&c, " ");
		cl_arg(&c, b->files[i].name);
	}
	cl_raw(&c, " manifest.json");
	cl_mark(&c, mark, 1);
	cl_probes(&c, se, mark);
	return cl_done(&c, out);
}

/* Cut the output at the marker lines; a part whose marker is missing keeps status -1, as does
 * one whose marker line has no exit status (0-255) after the name. Each part loses the newline
 * the marker's printf put before it, and keeps its own. */
static void confirm_split(const char *out, const char *mark, int first, confirm_parts *p)
{
	const char *start = out, *line, *v;
	size_t len = strlen(out), n, vn;
	int64_t status;
	lm_scan s, l;
	int i;

	for (i = 0; i < 4; i++) {
		p->text[i] = NULL;
		p->len[i] = 0;
		p->status[i] = -1;
	}
	i = first;
	lm_scan_init(&s, out, len);
	while (i < 4 && lm_scan_line(&s, &line, &n) != 0) {
		lm_scan_init(&l, line, n);
		if (!lm_scan_skip(&l, mark) || !lm_scan_skip(&l, " ") || !lm_scan_skip(&l, confirm_part_names[i]))
			continue;
		p->text[i] = start;
		p->len[i] = (size_t)(line - start);
		if (p->len[i] > 0 && start[p->len[i] - 1] == '\n')
			p->len[i]--;
		lm_scan_rest(&l, &v, &vn);
		if (vn > 1 && v[0] == ' ' && lm_text_parse_i64(v + 1, vn - 1, 0, 255, &status) == 0)
			p->status[i] = (int)status;
		start = out + (len - lm_scan_left(&s)); /* the line after the marker's */
		i++;
	}
}

/* Every file of the bundle and its manifest listed once with the bundle's SHA-256 ("HEX *NAME"
 * or "HEX  NAME" lines), nothing else. */
static int sums_match(lm_scan *s, const lm_bundle *b)
{
	uint8_t digest[32];
	char manifest_hex[65];
	const char *line, *name;
	size_t seen = 0, i, n, k;

	lm_sha256(b->manifest, b->manifest_len, digest);
	lm_sha256_hex(digest, manifest_hex);
	while (lm_scan_line(s, &line, &n) != 0) {
		const char *want = NULL;
		if (n < 66 || line[64] != ' ')
			return 0;
		k = line[65] == '*' || line[65] == ' ' ? 66 : 65;
		name = line + k;
		if (lm_text_is(name, n - k, "manifest.json"))
			want = manifest_hex;
		for (i = 0; want == NULL && i < b->nfiles; i++)
			if (lm_text_is(name, n - k, b->files[i].name))
				want = b->files[i].sha256;
		if (want == NULL || memcmp(line, want, 64) != 0)
			return 0;
		seen++;
	}
	return seen == b->nfiles + 1;
}

/* The facts: the journal's, with the boot time, home and Tart shim this guest printed. */
static int confirm_facts(const char *text, size_t len, const lm_guest_facts *known, lm_guest_facts *facts)
{
	char boot[FACT_LINE_MAX];
	const char *line;
	size_t n;
	lm_scan s;

	*facts = *known;
	lm_scan_init(&s, text, len);
	line_of(&s, &line, &n);
	(void)lm_text_copy(boot, sizeof(boot), line, n);
	facts->boot_time = lm_guest_boot_time_parse(boot);
	line_of(&s, &line, &n);
	if (lm_text_copy(facts->home, sizeof(facts->home), line, n) < 0)
		return 0;
	line_of(&s, &line, &n);
	facts->tart_shim = lm_text_is(line, n, "tart-shim");
	return facts->boot_time > 0 && facts->home[0] == '/';
}

/* `pwd -P` in `current`: the bundle directory it names, whose name goes to current; then the
 * sums of that directory's files. */
static int confirm_bundle(const char *text, size_t tlen, const lm_guest_facts *known, const lm_bundle *b,
    char *current, size_t len)
{
	char base[PATH_MAX + 64];
	const char *dir;
	size_t n, slash;
	lm_scan s;
	int r;

	lm_scan_init(&s, text, tlen);
	if ((r = lm_scan_line(&s, &dir, &n)) == 0) {
		dir = "";
		n = 0;
	}
	for (slash = n; slash > 0 && dir[slash - 1] != '/'; slash--)
		; /* just past the last '/' */
	if (slash == 0 || lm_path_join_buf(base, sizeof(base), known->home, LM_GUEST_BASE, NULL) < 0 ||
	    slash - 1 != strlen(base) || memcmp(dir, base, strlen(base)) != 0 ||
	    lm_text_copy(current, len, dir + slash, n - slash) < 0)
		return 0;
	return r == 1 && sums_match(&s, b); /* the sums follow on the next lines */
}

/* Without a bundle (lm_guest_probe_exercise), the probe parts alone. */
int lm_guest_confirm(lm_ssh *ssh, const lm_guest_facts *known, const lm_bundle *b, const lm_shim_env *se,
    lm_guest_confirmation *c)
{
	char mark[64], hex[17], *cmd = NULL, *out = NULL, *err = NULL;
	confirm_parts p;
	cmdline probes;
	int status = 0, rc;

	memset(c, 0, sizeof(*c));
	/* A marker no file or probe line can carry: this run's own. */
	if ((rc = lm_random_hex(hex, 8)) < 0)
		return rc;
	snprintf(mark, sizeof(mark), "@@lume-metal-%s@@", hex);
	if (b != NULL)
		rc = lm_guest_confirm_command(known, b, se, mark, &cmd);
	else {
		cl_init(&probes);
		cl_probes(&probes, se, mark);
		rc = cl_done(&probes, &cmd);
	}
	if (rc < 0)
		return rc;
	rc = lm_ssh_exec_capture(ssh, cmd, 512 * 1024, &out, &err, &status);
	free(cmd);
	if (rc < 0)
		return rc;
	confirm_split(out, mark, b != NULL ? 0 : 2, &p);
	if (p.status[0] == 0 && p.text[0] != NULL)
		c->facts_ok = confirm_facts(p.text[0], p.len[0], known, &c->facts);
	if (p.status[1] == 0 && p.text[1] != NULL)
		c->sums_ok = confirm_bundle(p.text[1], p.len[1], known, b, c->current, sizeof(c->current));
	/* The reports as the steps would read them; anything unreadable is simply not confirmed --
	 * but out of memory is no answer of the guest's: the confirmation fails with it (a re-enable
	 * that lost its exercise to it would otherwise say less than it proved; issue 36, item 2). */
	rc = 0;
	if (p.status[2] == 0 && (rc = lm_report_parse_lines(&c->stock, p.text[2], p.len[2])) < 0)
		c->stock = NULL;
	if (rc != LM_ENOMEM && p.status[3] == 0 &&
	    ((rc = lm_report_parse_lines(&c->shimmed, p.text[3], p.len[3])) < 0 ||
	    (rc = lm_report_parse_lines(&c->exercised, p.text[3], p.len[3])) < 0)) {
		lm_report_free(c->shimmed);
		c->shimmed = NULL;
	}
	if (c->shimmed == NULL || c->exercised == NULL || !lm_report_has_exercise(c->exercised)) {
		lm_report_free(c->shimmed);
		lm_report_free(c->exercised);
		c->shimmed = c->exercised = NULL;
	}
	lm_free(out);
	lm_free(err);
	if (rc == LM_ENOMEM) {
		lm_guest_confirmation_dispose(c);
		return rc;
	}
	return 0;
}

int lm_guest_probe_exercise(lm_ssh *ssh, const lm_shim_env *se, lm_guest_confirmation *c)
{
	return lm_guest_confirm(ssh, NULL, NULL, se, c);
}

void lm_guest_confirmation_dispose(lm_guest_confirmation *c)
{
	lm_report_free(c->stock);
	lm_report_free(c->shimmed);
	lm_report_free(c->exercised);
	c->stock = c->shimmed = c->exercised = NULL;
}
