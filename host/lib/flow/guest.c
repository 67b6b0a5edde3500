/* Operations on one guest over SSH: its facts, the installed bundle, the probe. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow_internal.h"
#include "sha256.h"

/* A command line under construction: raw shell syntax we write ourselves plus quoted
 * arguments, which always go through lm_shell_quote. */
typedef struct {
	char *s;
	size_t len, cap;
	int rc;
} cmdline;

static void cl_raw(cmdline *c, const char *text)
{
	size_t n = strlen(text);
	char *p;

	if (c->rc < 0)
		return;
	if (c->len + n + 1 > c->cap) {
		size_t cap = (c->len + n + 1) * 2;
		if ((p = realloc(c->s, cap)) == NULL) {
			c->rc = lm_error_nomem();
			return;
		}
		c->s = p;
		c->cap = cap;
	}
	memcpy(c->s + c->len, text, n + 1);
	c->len += n;
}

static void cl_arg(cmdline *c, const char *arg)
{
	char *q;

	if (c->rc < 0)
		return;
	if ((c->rc = lm_shell_quote(arg, &q)) < 0)
		return;
	cl_raw(c, q);
	lm_free(q);
}

/* A path under the guest's lume-metal directory, quoted. */
static void cl_path(cmdline *c, const lm_guest_facts *g, const char *rest)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s%s%s", g->home, LM_GUEST_BASE, rest[0] ? "/" : "", rest);
	cl_arg(c, path);
}

static int cl_done(cmdline *c, char **out)
{
	if (c->rc < 0) {
		free(c->s);
		return c->rc;
	}
	*out = c->s;
	return 0;
}

static char *next_line(char **cursor)
{
	char *line = *cursor, *nl;

	if (line == NULL)
		return "";
	if ((nl = strchr(line, '\n')) != NULL) {
		*nl = '\0';
		*cursor = nl + 1;
	} else {
		*cursor = NULL;
	}
	return line;
}

static void copy_str(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src);
}

/* One of the guest's answers, whole: a longer one is an error that names the limit. */
static int fact_copy(char *dst, size_t len, const char *src, const char *what)
{
	size_t n = strlen(src);

	if (n >= len)
		return lm_error_set(LM_EREMOTE, "the guest's %s is %zu bytes long; lume-metal takes at most %zu",
		    what, n, len - 1);
	memcpy(dst, src, n + 1);
	return 0;
}

/* One round trip for everything the flow needs to know about the guest. The macOS tools are
 * asked exactly as on macOS; the simulator's guests answer through stand-ins. */
#define FACTS_COMMAND \
	"uname -s; uname -m; (sw_vers -productVersion) 2>/dev/null || echo; " \
	"(sysctl -n kern.boottime) 2>/dev/null || echo; printf '%s\\n' \"$HOME\"; " \
	"readlink \"$HOME/" LM_GUEST_BASE "/current\" 2>/dev/null || echo"

int lm_guest_facts_read(lm_ssh *ssh, lm_guest_facts *facts, char *current, size_t current_len)
{
	char *out = NULL, *err = NULL, *cursor, *boot, *sec;
	int status = 0, rc;

	memset(facts, 0, sizeof(*facts));
	if ((rc = lm_ssh_exec_capture(ssh, FACTS_COMMAND, 64 * 1024, &out, &err, &status)) < 0)
		return rc;
	cursor = out;
	if ((rc = fact_copy(facts->os, sizeof(facts->os), next_line(&cursor), "OS name (uname -s)")) < 0 ||
	    (rc = fact_copy(facts->arch, sizeof(facts->arch), next_line(&cursor), "architecture (uname -m)")) < 0 ||
	    (rc = fact_copy(facts->os_version, sizeof(facts->os_version), next_line(&cursor), "OS version")) < 0)
		goto out;
	boot = next_line(&cursor);
	if ((rc = fact_copy(facts->home, sizeof(facts->home), next_line(&cursor), "home directory")) < 0 ||
	    (current != NULL && (rc = fact_copy(current, current_len, next_line(&cursor), "installed bundle")) < 0))
		goto out;
	/* macOS: "{ sec = 1764442800, usec = 0 } Sun Nov 29 19:00:00 2026" */
	if ((sec = strstr(boot, "sec = ")) != NULL)
		facts->boot_time = strtoll(sec + 6, NULL, 10);
	rc = 0;
	if (facts->os[0] == '\0' || facts->home[0] != '/')
		rc = lm_error_set(LM_EREMOTE, "the guest did not say its OS and home directory (uname/HOME): %s",
		    err != NULL ? err : "");
out:
	lm_free(out);
	lm_free(err);
	return rc;
}

static void file_path(char *buf, size_t len, const lm_guest_facts *g, const char *dir, const char *name)
{
	snprintf(buf, len, "%s/%s/%s/%s", g->home, LM_GUEST_BASE, dir, name);
}

int lm_guest_bundle_verify(lm_ssh *ssh, const lm_guest_facts *facts, const lm_bundle *b, int *ok)
{
	char path[PATH_MAX + 600], hex[65];
	uint8_t digest[32], want[32];
	size_t i;
	int rc;

	*ok = 0;
	for (i = 0; i <= b->nfiles; i++) {
		const char *name = i < b->nfiles ? b->files[i].name : "manifest.json";
		file_path(path, sizeof(path), facts, b->id, name);
		if ((rc = lm_ssh_sha256(ssh, path, digest)) == LM_ENOTFOUND)
			return 0;
		if (rc < 0)
			return rc;
		lm_sha256_hex(digest, hex);
		if (i < b->nfiles) {
			if (strcmp(hex, b->files[i].sha256) != 0)
				return 0;
		} else {
			lm_sha256(b->manifest, b->manifest_len, want);
			if (memcmp(digest, want, 32) != 0)
				return 0;
		}
	}
	*ok = 1;
	return 0;
}

static int run_checked(lm_ssh *ssh, const char *cmd, const char *what)
{
	char *out = NULL, *err = NULL;
	int status = 0, rc;

	if ((rc = lm_ssh_exec_capture(ssh, cmd, 64 * 1024, &out, &err, &status)) < 0)
		return rc;
	if (status != 0)
		rc = lm_error_set(LM_EREMOTE, "%s failed in the guest (exit %d): %s", what, status,
		    err != NULL && err[0] ? err : (out != NULL ? out : ""));
	lm_free(out);
	lm_free(err);
	return rc;
}

int lm_guest_bundle_install(lm_ssh *ssh, const lm_guest_facts *facts, const lm_bundle *b, int *uploaded)
{
	cmdline c = {0};
	char stage[300], *cmd = NULL, path[PATH_MAX + 600];
	void *data = NULL;
	size_t len, i;
	int rc;

	*uploaded = 0;
	snprintf(stage, sizeof(stage), ".staging-%s", b->id);
	/* 1. A fresh staging directory; staging left by an interrupted run goes. */
	cl_raw(&c, "umask 022 && mkdir -p ");
	cl_path(&c, facts, "");
	cl_raw(&c, " && cd ");
	cl_path(&c, facts, "");
	cl_raw(&c, " && rm -rf .staging-* .current.new && mkdir -p ");
	cl_arg(&c, stage);
	cl_raw(&c, "/profiles");
	if ((rc = cl_done(&c, &cmd)) < 0 || (rc = run_checked(ssh, cmd, "preparing the guest directory")) < 0)
		goto out;
	lm_flow_test_kill_point("install-staging");

	/* 2. Every file, verified by SHA-256 after upload, then the manifest last. */
	for (i = 0; i < b->nfiles; i++) {
		if ((rc = lm_bundle_read(b, &b->files[i], &data, &len)) < 0)
			goto cleanup;
		file_path(path, sizeof(path), facts, stage, b->files[i].name);
		rc = lm_ssh_upload(ssh, data, len, path, b->files[i].mode);
		free(data);
		data = NULL;
		if (rc < 0)
			goto cleanup;
		(*uploaded)++;
		lm_flow_test_kill_point("install-upload");
	}
	file_path(path, sizeof(path), facts, stage, "manifest.json");
	if ((rc = lm_ssh_upload(ssh, b->manifest, b->manifest_len, path, 0644)) < 0)
		goto cleanup;
	(*uploaded)++;

	/* 3. Into place, then `current` switched with one rename, then older versions go. */
	free(cmd);
	memset(&c, 0, sizeof(c));
	cl_raw(&c, "cd ");
	cl_path(&c, facts, "");
	cl_raw(&c, " && rm -rf ");
	cl_arg(&c, b->id);
	cl_raw(&c, " && mv ");
	cl_arg(&c, stage);
	cl_raw(&c, " ");
	cl_arg(&c, b->id);
	cl_raw(&c, " && ln -s ");
	cl_arg(&c, b->id);
	/* GNU mv needs -T, BSD mv -h, not to move the new link into the old link's directory. */
	cl_raw(&c, strcmp(facts->os, "Darwin") == 0 ? " .current.new && mv -h -f .current.new current"
	                                             : " .current.new && mv -T -f .current.new current");
	cl_raw(&c, " && for d in *; do [ \"$d\" = current ] || [ \"$d\" = ");
	cl_arg(&c, b->id);
	cl_raw(&c, " ] || rm -rf \"$d\"; done");
	if ((rc = cl_done(&c, &cmd)) < 0 || (rc = run_checked(ssh, cmd, "switching to the new bundle")) < 0)
		goto cleanup;
	goto out;

cleanup:
	/* No half-installed guest: the staging directory goes; `current` was never touched. */
	{
		cmdline r = {0};
		char *rm = NULL;
		int saved = rc;
		char msg[2048];

		snprintf(msg, sizeof(msg), "%s", lm_error_last()->message);
		cl_raw(&r, "rm -rf ");
		cl_path(&r, facts, stage);
		if (cl_done(&r, &rm) == 0)
			(void)run_checked(ssh, rm, "removing the staging directory");
		free(rm);
		rc = lm_error_set(saved, "%s", msg);
	}
out:
	free(cmd);
	return rc;
}

int lm_guest_remove_all(lm_ssh *ssh, const lm_guest_facts *facts)
{
	cmdline c = {0};
	char *cmd = NULL;
	int rc;

	cl_raw(&c, "rm -rf ");
	cl_path(&c, facts, "");
	if ((rc = cl_done(&c, &cmd)) < 0)
		return rc;
	rc = run_checked(ssh, cmd, "removing the guest files");
	free(cmd);
	return rc;
}

int lm_shim_env_make(lm_shim_env *se, const lm_guest_facts *facts, const char *injection,
    const char *shim, const char *probe, const lm_profile *profile)
{
	memset(se, 0, sizeof(*se));
	copy_str(se->injection, sizeof(se->injection), injection);
	snprintf(se->shim_path, sizeof(se->shim_path), "%s/%s/current/%s", facts->home, LM_GUEST_BASE, shim);
	snprintf(se->probe_path, sizeof(se->probe_path), "%s/%s/current/%s", facts->home, LM_GUEST_BASE, probe);
	return lm_profile_render_env(profile, se->env, &se->nenv);
}

int lm_shim_command(const lm_shim_env *se, int with_shim, const char *const *argv, size_t argc, char **out)
{
	cmdline c = {0};
	char assign[PATH_MAX + 128];
	size_t i;

	/* The variables are set by `env` right before the workload starts, on its own command line:
	 * with SIP, DYLD_* variables inherited through a protected shell would be purged. */
	cl_raw(&c, "env");
	if (with_shim) {
		snprintf(assign, sizeof(assign), "%s=%s", se->injection, se->shim_path);
		cl_raw(&c, " ");
		cl_arg(&c, assign);
		for (i = 0; i < se->nenv; i++) {
			snprintf(assign, sizeof(assign), "%s=%s", se->env[i].name, se->env[i].value);
			cl_raw(&c, " ");
			cl_arg(&c, assign);
		}
	}
	if (with_shim) {
		/* The bundle's own tools (metal-capabilities) by name; the guest's PATH after them. */
		snprintf(assign, sizeof(assign), "PATH=%.*s:", (int)(strrchr(se->probe_path, '/') - se->probe_path),
		    se->probe_path);
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
	rc = lm_ssh_exec_capture(ssh, cmd, 256 * 1024, &sout, &serr, &status);
	free(cmd);
	if (rc < 0)
		goto out;
	if (diag_len > 0 && serr != NULL)
		snprintf(diag, diag_len, "%.*s", (int)strcspn(serr, "\n"), serr);
	if (status != 0) {
		rc = lm_error_set(LM_EREMOTE, "the probe failed %s (exit %d): %s", shimmed ? "with the shim" : "stock",
		    status, serr != NULL && serr[0] ? serr : "no output");
		goto out;
	}
	if ((rc = lm_report_parse_lines(out, sout, strlen(sout))) < 0)
		lm_error_prefix("the probe's report %s: ", shimmed ? "with the shim" : "stock");
out:
	lm_free(sout);
	lm_free(serr);
	return rc;
}
