/* `local install` and `local env`: this machine's guest bundle in a fixed place of an image, and
 * the environment a job step exports to run its workload with the shim (local_image.h).
 *
 * Threat: the installed shim is loaded into every workload started with this environment, often
 * as root-built image content. So nothing is followed through a symbolic link we did not make and
 * no directory on the way may be writable by others (checked here, for the prefix); the bundle is
 * checked against its manifest before anything is created, and installed by the installer a
 * guest's enable uses (guestops, guest_bundle.h) over ssh/'s local transport: every file read back
 * after its upload, the switch one rename, and removal only by manifest. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "lume-metal/local_image.h"
#include "buf.h"
#include "error_internal.h"
#include "fs.h"
#include "guest_bundle.h"
#include "guest_codesign.h"
#include "guest_shim.h"
#include "output_local.h"
#include "path.h"
#include "ssh_local.h"
#include "text.h"

#define LM_LOCAL_ENV_MAX (LM_PROFILE_ENV_MAX + LM_SHIM_WORKLOAD_VARS + 2)

struct lm_local_env {
	char bundle_id[LM_BUNDLE_ID_MAX];
	size_t n;
	char *names[LM_LOCAL_ENV_MAX];  /* owned: the bundle and the profile they come from go first */
	char *values[LM_LOCAL_ENV_MAX];
};

/* This machine as lm_bundle_open sees a guest: its OS and architecture. */
static int this_machine(lm_guest_facts *facts)
{
	struct utsname u;

	memset(facts, 0, sizeof(*facts));
	if (uname(&u) != 0)
		return lm_error_set(LM_EIO, "cannot tell this machine's OS (uname: %s)", strerror(errno));
	if (lm_text_format(facts->os, sizeof(facts->os), "%s", u.sysname) < 0 ||
	    lm_text_format(facts->arch, sizeof(facts->arch), "%s", u.machine) < 0)
		return lm_error_set(LM_EINVALID, "this machine's OS or architecture name is longer than %zu bytes",
		    sizeof(facts->os) - 1);
	return 0;
}

/* PREFIX/lib/lume-metal, after checking prefix is absolute. */
static int install_dir(const char *prefix, char *dir, size_t len)
{
	if (prefix == NULL)
		prefix = LM_LOCAL_PREFIX_DEFAULT;
	if (prefix[0] != '/')
		return lm_error_set(LM_EINVALID, "the prefix '%s' is a relative path; give an absolute one", prefix);
	return lm_path_join_buf(dir, len, prefix, LM_LOCAL_SUBDIR, NULL);
}

/* path, when it exists, must be a real directory that only its owner can write. *exists says
 * whether it does. */
static int safe_dir(const char *path, int *exists)
{
	struct stat st;

	*exists = 0;
	if (lstat(path, &st) != 0) {
		if (errno == ENOENT)
			return 0;
		return lm_error_set(LM_EIO, "%s: %s", path, strerror(errno));
	}
	if (S_ISLNK(st.st_mode))
		return lm_error_set(LM_EINVALID, "%s is a symbolic link: the shim is installed only into real "
		    "directories", path);
	if (!S_ISDIR(st.st_mode))
		return lm_error_set(LM_EINVALID, "%s exists and is not a directory", path);
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
		return lm_error_set(LM_EINVALID, "%s can be written by others (mode %04o): whoever can write there could "
		    "replace the shim that workloads load; make it owner-writable only (chmod go-w)", path,
		    (unsigned)(st.st_mode & 07777));
	*exists = 1;
	return 0;
}

/* A directory everyone can read and only its owner write, whatever the umask: the workloads that
 * load the shim may run as another user than the image build that installed it. An existing one
 * (made meanwhile) is left as it is. */
static int make_dir(const char *path)
{
	if (mkdir(path, 0755) != 0) {
		if (errno == EEXIST)
			return 0;
		return lm_error_set(LM_EIO, "cannot create %s: %s", path, strerror(errno));
	}
	if (chmod(path, 0755) != 0)
		return lm_error_set(LM_EIO, "cannot set the mode of %s: %s", path, strerror(errno));
	return 0;
}

/* The prefix, PREFIX/lib and PREFIX/lib/lume-metal checked (safe_dir); the missing ones created
 * 0755 when create is set. */
static int check_dirs(const char *prefix, const char *dir, int create)
{
	char lib[PATH_MAX];
	const char *chain[3];
	int exists, rc;
	size_t i;

	if ((rc = lm_path_join_buf(lib, sizeof(lib), prefix, "lib", NULL)) < 0)
		return rc;
	chain[0] = prefix;
	chain[1] = lib;
	chain[2] = dir;
	for (i = 0; i < 3; i++) {
		if ((rc = safe_dir(chain[i], &exists)) < 0)
			return rc;
		if (exists)
			continue;
		if (!create)
			return lm_error_set(LM_ENOBUNDLE, "nothing is installed at %s (%s does not exist)", dir, chain[i]);
		if ((rc = make_dir(chain[i])) < 0 || (rc = safe_dir(chain[i], &exists)) < 0)
			return rc;
	}
	return 0;
}

/* The bundle id `current` names ("" when there is no `current`); a `current` that is not a
 * symbolic link to a plain name is an error. */
static int read_current(const char *dir, char *id, size_t len)
{
	char path[PATH_MAX];
	ssize_t n;
	int rc;

	id[0] = '\0';
	if ((rc = lm_path_join_buf(path, sizeof(path), dir, "current", NULL)) < 0)
		return rc;
	n = readlink(path, id, len);
	if (n < 0) {
		if (errno == ENOENT)
			return 0;
		return lm_error_set(LM_EINVALID, "%s is not a symbolic link to a bundle (%s)",
		    path, strerror(errno));
	}
	if ((size_t)n >= len || memchr(id, '/', (size_t)n) != NULL || n == 0 || (n <= 2 && id[0] == '.')) {
		id[0] = '\0';
		return lm_error_set(LM_EINVALID, "%s does not name a bundle directory beside it",
		    path);
	}
	id[n] = '\0';
	return 0;
}

/* Under the lock: the bundle verified where it is when `current` names it already, else
 * installed by guestops' installer (the one a guest's enable uses) over ssh/'s local transport;
 * either way, older bundles and what interrupted installs left are removed by their manifests. */
static int install_locked(lm_context *ctx, const lm_bundle *b, const char *os, const char *dir,
    lm_local_install_result *out)
{
	char why[PATH_MAX + 160];
	lm_install_place place;
	lm_install_result res;
	lm_guest_removal older;
	lm_ssh *ssh = NULL;
	int ok = 0, rc;

	lm_guest_removal_init(&older);
	if ((rc = read_current(dir, out->previous, sizeof(out->previous))) < 0 ||
	    (rc = lm_install_place_dir(&place, dir, os, ".lock")) < 0 || (rc = lm_ssh_open_local(&ssh, ctx)) < 0)
		goto out;
	if (strcmp(out->previous, b->id) == 0 && (rc = lm_bundle_verify_at(ssh, &place, b, &ok, why, sizeof(why))) < 0)
		goto out;
	if (!ok) {
		if ((rc = lm_bundle_install_at(ssh, &place, b, NULL, &res)) < 0)
			goto out;
		out->files = res.uploaded;
		out->repaired = res.replaced;
		out->removed = (int)res.removed;
		out->changed = 1;
	} else {
		if ((rc = lm_install_files_remove(ssh, &place, b, b->id, &older)) < 0)
			goto out;
		out->removed = (int)older.entries;
		out->changed = out->removed > 0;
	}
	snprintf(out->bundle_id, sizeof(out->bundle_id), "%s", b->id);
out:
	lm_guest_removal_dispose(&older);
	lm_ssh_free(ssh);
	return rc;
}

int lm_local_install(lm_context *ctx, const char *prefix, lm_local_install_result *out)
{
	lm_guest_facts facts;
	lm_bundle *b = NULL;
	char lock[PATH_MAX];
	size_t size;
	void *data;
	size_t i, len;
	int fd = -1, rc;

	if (out == NULL || out->size == 0)
		return lm_error_set(LM_EINVALID, "lm_local_install: the result's size is not set");
	size = out->size < sizeof(*out) ? out->size : sizeof(*out);
	memset(out, 0, size);
	out->size = size;
	if (prefix == NULL)
		prefix = LM_LOCAL_PREFIX_DEFAULT;
	if ((rc = install_dir(prefix, out->dir, sizeof(out->dir))) < 0 || (rc = this_machine(&facts)) < 0 ||
	    (rc = lm_bundle_open(&b, ctx, &facts)) < 0)
		goto out;
	/* The whole bundle checked before anything is created. */
	for (i = 0; i < b->nfiles; i++) {
		if ((rc = lm_bundle_read(b, &b->files[i], &data, &len)) < 0)
			goto out;
		free(data);
	}
	if ((rc = check_dirs(prefix, out->dir, 1)) < 0 || (rc = lm_path_join_buf(lock, sizeof(lock), out->dir, ".lock", NULL)) < 0 ||
	    (rc = lm_fs_lock(lock, LOCK_EX, 60, "the installed bundle's lock", &fd)) < 0)
		goto out;
	rc = install_locked(ctx, b, facts.os, out->dir, out);
	lm_fs_unlock(fd);
out:
	lm_bundle_free(b);
	return rc;
}

/* ---- local env ---- */

static int env_add(lm_local_env *e, const char *name, const char *value)
{
	const char *p;

	if (e->n >= LM_LOCAL_ENV_MAX)
		return lm_error_set(LM_EINVALID, "more than %d variables", LM_LOCAL_ENV_MAX);
	for (p = value; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return lm_error_set(LM_EINVALID, "%s's value holds a control character (0x%02x): it cannot be exported "
			    "as a line", name, (unsigned)(unsigned char)*p);
	if ((e->values[e->n] = strdup(value)) == NULL)
		return lm_error_nomem();
	if ((e->names[e->n] = strdup(name)) == NULL) {
		free(e->values[e->n]);
		return lm_error_nomem();
	}
	e->n++;
	return 0;
}

static int env_fill(lm_local_env *e, const lm_bundle *b, const char *current, const lm_profile *profile,
    const char *record_dir)
{
	lm_shim_env se;
	lm_guest_facts facts;
	const char *names[LM_SHIM_WORKLOAD_VARS], *values[LM_SHIM_WORKLOAD_VARS];
	char reason[256], path[PATH_MAX];
	unsigned char head[4096];
	size_t i, n;
	ssize_t got;
	int fd, arm64e, rc;

	memset(&facts, 0, sizeof(facts));
	if ((rc = lm_shim_env_make(&se, &facts, b->injection, b->shim, b->probe, profile)) < 0)
		return rc;
	/* lm_shim_env_make puts the files under a guest's home; here they are under current. */
	if ((rc = lm_path_join_buf(se.shim_path, sizeof(se.shim_path), current, b->shim, NULL)) < 0 ||
	    (rc = lm_path_join_buf(se.probe_path, sizeof(se.probe_path), current, b->probe, NULL)) < 0)
		return rc;
	/* What the shim's spawn rule is told, as `run` tells it, with SIP unknown here: only an arm64e
	 * slice lets a protected child load it (with SIP off, dyld stops a protected child that
	 * inherits an arm64-only shim), so without one the shim keeps itself from protected children. */
	got = -1;
	if ((fd = open(se.shim_path, O_RDONLY | O_CLOEXEC)) >= 0) {
		got = read(fd, head, sizeof(head));
		close(fd);
	}
	arm64e = got > 0 && lm_macho_has_arm64e(head, (size_t)got);
	if (!lm_children_policy(&facts, arm64e, reason, sizeof(reason)))
		snprintf(reason, sizeof(reason), "this machine's SIP not asked and the installed shim has no arm64e slice: "
		    "protected and arm64e children start without it (dyld would stop them), every other child keeps it");
	lm_shim_env_guest(&se, facts.sip, arm64e);
	if ((rc = lm_shim_env_workload(&se, NULL, reason, record_dir)) < 0)
		return rc;
	if ((rc = env_add(e, b->injection, se.shim_path)) < 0)
		return rc;
	for (i = 0; i < se.nenv; i++)
		if ((rc = env_add(e, se.env[i].name, se.env[i].value)) < 0)
			return rc;
	n = lm_shim_env_workload_vars(&se, names, values);
	for (i = 0; i < n; i++)
		if ((rc = env_add(e, names[i], values[i])) < 0)
			return rc;
	/* The bundle's tools (metal-capabilities), then Homebrew's, as `run` puts them first. */
	if (lm_text_format(path, sizeof(path), "%s:" LM_GUEST_HOMEBREW_PATH, current) < 0)
		return lm_error_set(LM_EINVALID, "%s: PATH would be longer than %zu bytes", current, sizeof(path) - 1);
	return env_add(e, "PATH", path);
}

/* The installed bundle b at dir, every file checked as the installer checks it
 * (lm_bundle_verify_at over a files-only local session). */
static int verify_installed(const lm_bundle *b, const char *dir, const char *os, int *ok, char *why, size_t why_len)
{
	lm_install_place place;
	lm_ssh *ssh = NULL;
	int rc;

	*ok = 0;
	if ((rc = lm_install_place_dir(&place, dir, os, ".lock")) < 0 || (rc = lm_ssh_open_local(&ssh, NULL)) < 0)
		return rc;
	rc = lm_bundle_verify_at(ssh, &place, b, ok, why, why_len);
	lm_ssh_free(ssh);
	return rc;
}

int lm_local_env_open(lm_local_env **out, const char *prefix, const lm_profile *profile,
    const char *record_dir)
{
	char dir[PATH_MAX], current[PATH_MAX], why[PATH_MAX + 160];
	lm_guest_facts facts;
	lm_profile *own = NULL;
	lm_local_env *e = NULL;
	lm_bundle *b = NULL;
	int ok, rc;

	*out = NULL;
	if (prefix == NULL)
		prefix = LM_LOCAL_PREFIX_DEFAULT;
	if (record_dir != NULL && record_dir[0] != '/')
		return lm_error_set(LM_EINVALID, "the record directory '%s' is a relative path; give an absolute one",
		    record_dir);
	if ((rc = install_dir(prefix, dir, sizeof(dir))) < 0 || (rc = check_dirs(prefix, dir, 0)) < 0 ||
	    (rc = this_machine(&facts)) < 0 || (rc = lm_path_join_buf(current, sizeof(current), dir, "current", NULL)) < 0)
		return rc;
	if (access(current, F_OK) != 0)
		return lm_error_set(LM_ENOBUNDLE, "nothing is installed at %s (no current)", dir);
	if ((rc = read_current(dir, why, LM_BUNDLE_ID_MAX)) < 0 || (rc = lm_bundle_open_dir(&b, current)) < 0)
		goto out;
	if (strcmp(b->os, facts.os) != 0) {
		rc = lm_error_set(LM_EINVALID, "the bundle at %s is for %s, but this machine runs %s", current, b->os,
		    facts.os);
		goto out;
	}
	if ((rc = verify_installed(b, dir, facts.os, &ok, why, sizeof(why))) < 0)
		goto out;
	if (!ok) {
		rc = lm_error_set(LM_ECORRUPT, "the installed bundle does not verify: %s", why);
		goto out;
	}
	if (profile == NULL && (rc = lm_profile_builtin(&own, lm_profile_default_name())) < 0)
		goto out;
	if ((e = calloc(1, sizeof(*e))) == NULL) {
		rc = lm_error_nomem();
		goto out;
	}
	snprintf(e->bundle_id, sizeof(e->bundle_id), "%s", b->id);
	if ((rc = env_fill(e, b, current, profile != NULL ? profile : own, record_dir)) < 0)
		goto out;
	*out = e;
	e = NULL;
out:
	lm_local_env_free(e);
	lm_profile_free(own);
	lm_bundle_free(b);
	return rc;
}

size_t lm_local_env_count(const lm_local_env *env)
{
	return env == NULL ? 0 : env->n;
}

int lm_local_env_entry(const lm_local_env *env, size_t i, const char **name, const char **value)
{
	if (env == NULL || i >= env->n)
		return lm_error_set(LM_EINVALID, "no environment entry %zu", i);
	*name = env->names[i];
	*value = env->values[i];
	return 0;
}

const char *lm_local_env_bundle_id(const lm_local_env *env)
{
	return env == NULL ? "" : env->bundle_id;
}

int lm_local_env_to_json(const lm_local_env *local, const lm_json_envelope *env, char **out)
{
	if (local == NULL)
		return lm_output_local_env(env, NULL, 0, NULL, NULL, out);
	return lm_output_local_env(env, local->bundle_id, local->n, local->names, local->values, out);
}

/* 'value' for sh: every ' becomes '\''. */
static void sh_quote(lm_buf *out, const char *value)
{
	const char *p;

	lm_buf_adds(out, "'");
	for (p = value; *p != '\0'; p++)
		if (*p == '\'')
			lm_buf_adds(out, "'\\''");
		else
			lm_buf_add(out, p, 1);
	lm_buf_adds(out, "'");
}

int lm_local_env_format(const lm_local_env *env, lm_local_env_form form, char **out)
{
	const char *path = getenv("PATH");
	lm_buf b;
	size_t i, len;

	*out = NULL;
	if (env == NULL || (form != LM_LOCAL_ENV_SH && form != LM_LOCAL_ENV_GITHUB))
		return lm_error_set(LM_EINVALID, "lm_local_env_format: no environment, or an unknown form");
	if (form == LM_LOCAL_ENV_GITHUB && path != NULL && strpbrk(path, "\n\r") != NULL)
		return lm_error_set(LM_EINVALID, "PATH holds a line break: it cannot be written to $GITHUB_ENV");
	lm_buf_init(&b, 256 * 1024);
	for (i = 0; i < env->n; i++) {
		int is_path = strcmp(env->names[i], "PATH") == 0;

		if (form == LM_LOCAL_ENV_SH) {
			lm_buf_addf(&b, "export %s=", env->names[i]);
			sh_quote(&b, env->values[i]);
			lm_buf_adds(&b, is_path ? ":\"$PATH\"\n" : "\n");
		} else if (i == 0) {
			/* Not the injection variable itself: every later step's shell would get it first, and
			 * loads the shim and drops it for its children (Linux, an arm64e shim), has it purged
			 * (SIP on) or is stopped by dyld (SIP off, an arm64-only shim). The step puts it on its
			 * workload's own command line: env "$LUME_METAL_INJECT" CMD. */
			lm_buf_addf(&b, "LUME_METAL_INJECT=%s=%s\n", env->names[i], env->values[i]);
		} else {
			/* The runner reads NAME=value lines; the step's PATH goes after ours, as "$PATH" does. */
			lm_buf_addf(&b, "%s=%s%s%s\n", env->names[i], env->values[i], is_path && path && *path ? ":" : "",
			    is_path && path ? path : "");
		}
	}
	return lm_buf_take(&b, out, &len);
}

void lm_local_env_free(lm_local_env *env)
{
	size_t i;

	if (env == NULL)
		return;
	for (i = 0; i < env->n; i++) {
		free(env->names[i]);
		free(env->values[i]);
	}
	free(env);
}
