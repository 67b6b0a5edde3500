/* The guest's lume-metal directory: what must hold before anything is written there, and the
 * removal of exactly what lume-metal put there (the rule is in guest_bundle.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest_activation.h"
#include "guest_bundle.h"
#include "guest_codesign.h"
#include "path.h"
#include "str.h"
#include "text.h"

/* A directory of ours holds a bundle's files, its profiles and the upload's temporary names. */
#define LM_GUEST_DIR_ENTRIES_MAX 256
/* The removal's record of what it left: enough for every entry of a full directory. */
#define LM_GUEST_LEFT_MAX (64 * 1024)

/* The components from the home down to the install directory, in order. */
static const char *const base_parts[] = {".local", ".local/share", LM_GUEST_BASE};
#define NPARTS (sizeof(base_parts) / sizeof(base_parts[0]))

int lm_guest_base_refuse(const char *shown, lm_ssh_kind kind)
{
	if (kind == LM_SSH_KIND_ABSENT || kind == LM_SSH_KIND_DIR)
		return 0;
	if (kind == LM_SSH_KIND_LINK)
		return lm_error_set(LM_EREMOTE, "the guest's %s is a symbolic link; lume-metal follows no link on the way "
		    "to its files (it would write, and later remove, them wherever the link points): make %s a "
		    "directory of its own, or remove the link, and run enable again; nothing was changed", shown, shown);
	return lm_error_set(LM_EREMOTE, "the guest's %s is %s, not a directory; lume-metal installs only into a "
	    "directory: move it away and run enable again; nothing was changed", shown, lm_ssh_kind_phrase(kind));
}

static int part_path(char *buf, size_t len, const char *home, const char *part)
{
	return lm_path_join_buf(buf, len, home, part, NULL);
}

/* The first component that is not absent or a directory, with its kind; *present: the install
 * directory exists. A guest's home: each from ~/.local down; another place: its directory alone.
 * shown: the bad one as messages name it. */
static int base_walk(lm_ssh *ssh, const lm_install_place *p, char *shown, size_t shown_len, lm_ssh_kind *kind,
    int *present)
{
	char path[PATH_MAX];
	size_t i, n = p->home[0] ? NPARTS : 1;
	int rc;

	shown[0] = '\0';
	*present = 0;
	for (i = 0; i < n; i++) {
		if ((rc = p->home[0] ? part_path(path, sizeof(path), p->home, base_parts[i]) :
		    lm_path_join_buf(path, sizeof(path), p->dir, NULL)) < 0 || (rc = lm_ssh_kind_of(ssh, path, kind)) < 0)
			return rc;
		if (*kind == LM_SSH_KIND_ABSENT)
			return 0;
		if (*kind != LM_SSH_KIND_DIR) {
			if (p->home[0])
				lm_text_format_cut(shown, shown_len, "~/%s", base_parts[i]);
			else
				lm_text_format_cut(shown, shown_len, "%s", p->shown);
			return 0;
		}
	}
	*present = 1;
	return 0;
}

int lm_install_base_check(lm_ssh *ssh, const lm_install_place *p)
{
	char shown[PATH_MAX];
	lm_ssh_kind kind;
	int present, rc;

	if ((rc = base_walk(ssh, p, shown, sizeof(shown), &kind, &present)) < 0 || shown[0] == '\0')
		return rc;
	return lm_guest_base_refuse(shown, kind);
}

int lm_guest_base_check(lm_ssh *ssh, const lm_guest_facts *facts)
{
	lm_install_place p;
	int rc;

	if ((rc = lm_install_place_guest(&p, facts)) < 0)
		return rc;
	return lm_install_base_check(ssh, &p);
}

void lm_guest_removal_init(lm_guest_removal *r)
{
	memset(r, 0, sizeof(*r));
	r->shown = "~/" LM_GUEST_BASE;
	lm_buf_init(&r->left, LM_GUEST_LEFT_MAX);
}

void lm_guest_removal_dispose(lm_guest_removal *r)
{
	lm_buf_dispose(&r->left);
}

static void left(lm_guest_removal *r, const char *rel, const char *why)
{
	(void)lm_buf_addf(&r->left, "%s%s%s%s (%s)", r->nleft > 0 ? "; " : "", r->shown, rel[0] ? "/" : "", rel, why);
	r->nleft++;
}

static const char *plural(size_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

void lm_guest_removal_describe(const lm_guest_removal *r, char *buf, size_t len)
{
	size_t n = r->files + r->links + r->dirs;

	if (n == 0)
		lm_text_format_cut(buf, len, "removed nothing");
	else
		lm_text_format_cut(buf, len, "removed %zu %s, %zu %s and %zu %s of %s", r->files,
		    plural(r->files, "file", "files"), r->links, plural(r->links, "link", "links"), r->dirs,
		    plural(r->dirs, "directory", "directories"), r->shown);
	if (r->nleft > 0 && strlen(buf) + 1 < len)
		lm_text_format_cut(buf + strlen(buf), len - strlen(buf), "; left: %s%s", lm_buf_ptr(&r->left),
		    lm_buf_error(&r->left) != 0 ? " and more" : "");
}

int lm_guest_entry_class(const char *name, lm_ssh_kind kind)
{
	if (strcmp(name, "current") == 0 || strcmp(name, ".current.new") == 0)
		return kind == LM_SSH_KIND_LINK ? 'l' : 0;
	if (strcmp(name, LM_ACTIVATION_GUEST_DIR) == 0)
		return kind == LM_SSH_KIND_DIR ? 'a' : 0;
	if (strcmp(name, LM_RESIGN_GUEST_DIR) == 0)
		return kind == LM_SSH_KIND_DIR ? 'r' : 0;
	if (strcmp(name, LM_GUEST_PARENTS_FILE) == 0)
		return kind == LM_SSH_KIND_FILE ? 'p' : 0;
	if (strcmp(name, LM_GUEST_OWNER_FILE) == 0)
		return kind == LM_SSH_KIND_FILE ? 'o' : 0;
	if (lm_guest_is_upload_temp(name, LM_GUEST_OWNER_FILE))
		return kind == LM_SSH_KIND_FILE ? 't' : 0;
	return kind == LM_SSH_KIND_DIR && strcmp(name, ".") != 0 && strcmp(name, "..") != 0 ? 'd' : 0;
}

int lm_guest_is_upload_temp(const char *entry, const char *base)
{
	size_t n = strlen(base);

	return entry[0] == '.' && strncmp(entry + 1, base, n) == 0 && strncmp(entry + 1 + n, ".lm-", 4) == 0 &&
	    strlen(entry + n + 5) == 16 && strspn(entry + n + 5, "0123456789abcdef") == 16;
}

int lm_guest_is_record(const char *entry)
{
	size_t n = strspn(entry + (entry[0] == '.'), "0123456789");

	if (n == 0)
		return 0;
	return entry[0] == '.' ? strcmp(entry + 1 + n, ".tmp") == 0 : strcmp(entry + n, ".json") == 0;
}

/* One removal under way: the session, the install directory, the report. */
typedef struct {
	lm_ssh *ssh;
	char base[PATH_MAX];
	lm_guest_removal *r;
} removal;

/* An error that is the guest's refusal (a permission, a busy file) is something left; losing the
 * connection, a timeout or memory is the removal's error. */
static int left_or_fail(removal *m, const char *rel, int rc)
{
	if (rc != LM_EREMOTE)
		return rc;
	left(m->r, rel, lm_error_last()->message);
	lm_error_clear();
	return 0;
}

/* dir/name; name alone when dir is "" (the install directory itself), dir alone when name is. */
static int rel_join(char *buf, size_t len, const char *dir, const char *name)
{
	if (!name[0])
		return lm_path_join_buf(buf, len, dir, NULL);
	return dir[0] ? lm_path_join_buf(buf, len, dir, name, NULL) : lm_path_join_buf(buf, len, name, NULL);
}

/* The guest path of rel ("" for the install directory). */
static int full_path(removal *m, char *buf, size_t len, const char *rel)
{
	return lm_path_join_buf(buf, len, m->base, rel[0] ? rel : NULL, NULL);
}

/* Unlink one entry (never a directory) when it is there; counted as a file or a link. */
static int unlink_entry(removal *m, const char *dir, const char *name)
{
	char path[PATH_MAX + 600], rel[PATH_MAX];
	lm_ssh_kind kind;
	int rc;

	if ((rc = rel_join(rel, sizeof(rel), dir, name)) < 0 || (rc = full_path(m, path, sizeof(path), rel)) < 0 ||
	    (rc = lm_ssh_kind_of(m->ssh, path, &kind)) < 0)
		return rc;
	if (kind == LM_SSH_KIND_ABSENT)
		return 0;
	if (kind == LM_SSH_KIND_DIR) {
		left(m->r, rel, "a directory where lume-metal's manifest names a file");
		return 0;
	}
	if ((rc = lm_ssh_remove(m->ssh, path)) < 0)
		return left_or_fail(m, rel, rc);
	if (kind == LM_SSH_KIND_LINK && strchr(rel, '/') == NULL)
		m->r->links++;
	else
		m->r->files++;
	if (strchr(rel, '/') == NULL)
		m->r->entries++;
	return 0;
}

/* The names in a directory below the install directory; NULL (no error) when it is not there. */
static int list(removal *m, const char *rel, char ***names)
{
	char path[PATH_MAX + 600];
	int rc;

	*names = NULL;
	if ((rc = full_path(m, path, sizeof(path), rel)) < 0)
		return rc;
	if ((rc = lm_ssh_list_dir(m->ssh, path, LM_GUEST_DIR_ENTRIES_MAX, names)) == LM_ENOTFOUND) {
		lm_error_clear();
		return 0;
	}
	return rc == LM_EREMOTE || rc == LM_ETOOLARGE ? left_or_fail(m, rel, LM_EREMOTE) : rc;
}

/* An empty directory goes; one still holding anything is left, each entry named. */
static int rmdir_if_empty(removal *m, const char *rel, int report)
{
	char path[PATH_MAX + 600], sub[PATH_MAX];
	char **names = NULL;
	size_t i;
	int rc;

	if ((rc = list(m, rel, &names)) < 0 || names == NULL)
		return rc;
	if (names[0] == NULL) {
		lm_strv_free(names);
		if ((rc = full_path(m, path, sizeof(path), rel)) < 0)
			return rc;
		if ((rc = lm_ssh_remove(m->ssh, path)) < 0)
			return left_or_fail(m, rel, rc);
		m->r->dirs++;
		if (rel[0] != '\0' && strchr(rel, '/') == NULL)
			m->r->entries++;
		return 0;
	}
	for (i = 0; report && names[i] != NULL && rc == 0; i++)
		if ((rc = rel_join(sub, sizeof(sub), rel, names[i])) == 0)
			left(m->r, sub, "not lume-metal's");
	lm_strv_free(names);
	return rc;
}

/* The files a bundle directory should hold: its own manifest's, else the local bundle's for a
 * staging directory or the local bundle's id; NULL (no error) when neither. */
static int bundle_files(removal *m, const char *dir, const lm_bundle *local, lm_bundle **out)
{
	char path[PATH_MAX + 600], rel[PATH_MAX];
	lm_bundle *b;
	int rc;

	*out = NULL;
	if ((rc = rel_join(rel, sizeof(rel), dir, "manifest.json")) < 0 || (rc = full_path(m, path, sizeof(path), rel)) < 0)
		return rc;
	if ((b = calloc(1, sizeof(*b))) == NULL)
		return lm_error_nomem();
	rc = lm_ssh_read_file(m->ssh, path, 1024 * 1024, &b->manifest, &b->manifest_len);
	if (rc == 0 && lm_bundle_parse_manifest(b, path) == 0) {
		*out = b;
		return 0;
	}
	free(b->manifest);
	free(b);
	if (rc < 0 && rc != LM_ENOTFOUND && rc != LM_EREMOTE && rc != LM_ETOOLARGE)
		return rc;
	lm_error_clear();
	if (local != NULL && (strncmp(dir, ".staging-", 9) == 0 || strcmp(dir, local->id) == 0)) {
		if ((b = malloc(sizeof(*b))) == NULL)
			return lm_error_nomem();
		*b = *local;
		b->manifest = NULL;
		*out = b;
	}
	return 0;
}

/* Every directory the manifest's names pass through (deepest first), then the bundle's own;
 * `profiles` always (the install makes it). */
static int bundle_dirs(const lm_bundle *b, char dirs[][256], size_t max)
{
	size_t n = 0, i, j;
	char *slash;

	snprintf(dirs[n++], 256, "profiles");
	for (i = 0; i < b->nfiles; i++) {
		char d[256];
		snprintf(d, sizeof(d), "%s", b->files[i].name);
		while ((slash = strrchr(d, '/')) != NULL) {
			*slash = '\0';
			for (j = 0; j < n && strcmp(dirs[j], d) != 0; j++)
				;
			if (j == n && n < max)
				snprintf(dirs[n++], 256, "%s", d);
		}
	}
	/* Deeper first: more slashes, then longer. */
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && strlen(dirs[j]) > strlen(dirs[j - 1]); j--) {
			char t[256];
			memcpy(t, dirs[j], 256);
			memcpy(dirs[j], dirs[j - 1], 256);
			memcpy(dirs[j - 1], t, 256);
		}
	return (int)n;
}

/* The upload's temporary names of a directory's files, from runs that were stopped mid-upload. */
static int remove_temps(removal *m, const char *bundle, const char *sub, const lm_bundle *b)
{
	char rel[PATH_MAX], **names = NULL;
	size_t i, k;
	int rc;

	if ((rc = rel_join(rel, sizeof(rel), bundle, sub)) < 0 ||
	    (rc = list(m, rel, &names)) < 0 || names == NULL)
		return rc;
	for (i = 0; names[i] != NULL && rc == 0; i++)
		for (k = 0; k <= b->nfiles && rc == 0; k++) {
			const char *name = k < b->nfiles ? b->files[k].name : "manifest.json";
			const char *slash = strrchr(name, '/');
			size_t dlen = slash != NULL ? (size_t)(slash - name) : 0;
			if (strlen(sub) == dlen && strncmp(name, sub, dlen) == 0 &&
			    lm_guest_is_upload_temp(names[i], slash != NULL ? slash + 1 : name)) {
				rc = unlink_entry(m, rel, names[i]);
				break;
			}
		}
	lm_strv_free(names);
	return rc;
}

/* A subdirectory of a bundle that is anything but a directory (a link to elsewhere): nothing is
 * removed through it, and it is said. *bad: so. */
static int check_subdir(removal *m, const char *dir, const char *sub, int *bad)
{
	char rel[PATH_MAX], path[PATH_MAX + 600];
	lm_ssh_kind kind;
	int rc;

	*bad = 0;
	if ((rc = rel_join(rel, sizeof(rel), dir, sub)) < 0 || (rc = full_path(m, path, sizeof(path), rel)) < 0 ||
	    (rc = lm_ssh_kind_of(m->ssh, path, &kind)) < 0)
		return rc;
	if (kind == LM_SSH_KIND_ABSENT || kind == LM_SSH_KIND_DIR)
		return 0;
	*bad = 1;
	left(m->r, rel, lm_ssh_kind_phrase(kind));
	return 0;
}

/* Is name under one of the bad subdirectories? */
static int under_bad(const char *name, char dirs[][256], const int *bad, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (bad[i] && strncmp(name, dirs[i], strlen(dirs[i])) == 0 && name[strlen(dirs[i])] == '/')
			return 1;
	return 0;
}

static int remove_bundle_dir(removal *m, const char *dir, const lm_bundle *local)
{
	char dirs[LM_BUNDLE_MAX_FILES + 1][256], rel[PATH_MAX];
	int bad[LM_BUNDLE_MAX_FILES + 1];
	lm_bundle *b = NULL;
	size_t i;
	int n, rc;

	if ((rc = bundle_files(m, dir, local, &b)) < 0)
		return rc;
	if (b == NULL) {
		left(m->r, dir, "no lume-metal manifest in it: not lume-metal's");
		return 0;
	}
	n = bundle_dirs(b, dirs, LM_BUNDLE_MAX_FILES + 1);
	for (i = 0; i < (size_t)n && rc == 0; i++)
		rc = check_subdir(m, dir, dirs[i], &bad[i]);
	for (i = 0; i < b->nfiles && rc == 0; i++)
		if (!under_bad(b->files[i].name, dirs, bad, n))
			rc = unlink_entry(m, dir, b->files[i].name);
	if (rc == 0)
		rc = unlink_entry(m, dir, "manifest.json");
	for (i = 0; i < (size_t)n && rc == 0; i++)
		if (!bad[i] && !under_bad(dirs[i], dirs, bad, n))
			rc = remove_temps(m, dir, dirs[i], b);
	if (rc == 0)
		rc = remove_temps(m, dir, "", b);
	for (i = 0; i < (size_t)n && rc == 0; i++)
		if (!bad[i] && !under_bad(dirs[i], dirs, bad, n) && (rc = rel_join(rel, sizeof(rel), dir, dirs[i])) == 0)
			rc = rmdir_if_empty(m, rel, 1);
	if (rc == 0)
		rc = rmdir_if_empty(m, dir, 1);
	free(b->manifest);
	free(b);
	return rc;
}

/* The activation record directories (LM_ACTIVATION_GUEST_DIR/NAME): the records the shim wrote
 * there (<pid>.json, .<pid>.tmp), then each directory and the parent when empty. */
static int remove_activation(removal *m)
{
	char **dirs = NULL, **names = NULL, rel[PATH_MAX], path[PATH_MAX + 600];
	lm_ssh_kind kind;
	size_t i, k;
	int rc;

	if ((rc = list(m, LM_ACTIVATION_GUEST_DIR, &dirs)) < 0 || dirs == NULL)
		return rc;
	for (i = 0; dirs[i] != NULL && rc == 0; i++) {
		if ((rc = rel_join(rel, sizeof(rel), LM_ACTIVATION_GUEST_DIR, dirs[i])) < 0 ||
		    (rc = full_path(m, path, sizeof(path), rel)) < 0 || (rc = lm_ssh_kind_of(m->ssh, path, &kind)) < 0)
			break;
		if (kind != LM_SSH_KIND_DIR) { /* lume-metal makes directories here, nothing else */
			left(m->r, rel, "not lume-metal's");
			continue;
		}
		if ((rc = list(m, rel, &names)) < 0)
			break;
		for (k = 0; names != NULL && names[k] != NULL && rc == 0; k++)
			if (lm_guest_is_record(names[k]) || strcmp(names[k], LM_WORKLOAD_GROUP_FILE) == 0)
				rc = unlink_entry(m, rel, names[k]); /* the shim's records and run's group file */
		lm_strv_free(names);
		names = NULL;
		if (rc == 0)
			rc = rmdir_if_empty(m, rel, 1);
	}
	lm_strv_free(dirs);
	return rc == 0 ? rmdir_if_empty(m, LM_ACTIVATION_GUEST_DIR, 0) : rc;
}

/* The re-signed copies (LM_RESIGN_GUEST_DIR/NAME, resign.c): each folder is lume-metal's copy of a
 * program, made whole by it; removed whole, then the parent when empty. */
static int remove_resigned(removal *m)
{
	char **dirs = NULL, rel[PATH_MAX], path[PATH_MAX + 600];
	lm_ssh_kind kind;
	size_t i;
	int rc;

	if ((rc = list(m, LM_RESIGN_GUEST_DIR, &dirs)) < 0 || dirs == NULL)
		return rc;
	for (i = 0; dirs[i] != NULL && rc == 0; i++) {
		if ((rc = rel_join(rel, sizeof(rel), LM_RESIGN_GUEST_DIR, dirs[i])) < 0 ||
		    (rc = full_path(m, path, sizeof(path), rel)) < 0 || (rc = lm_ssh_kind_of(m->ssh, path, &kind)) < 0)
			break;
		if (kind != LM_SSH_KIND_DIR) { /* lume-metal makes directories here, nothing else */
			left(m->r, rel, "not lume-metal's");
			continue;
		}
		if ((rc = lm_guest_resign_remove_dir(m->ssh, path)) == 0)
			m->r->dirs++; /* inside LM_RESIGN_GUEST_DIR: its entry counts once that goes */
	}
	lm_strv_free(dirs);
	return rc == 0 ? rmdir_if_empty(m, LM_RESIGN_GUEST_DIR, 0) : rc;
}

/* LM_GUEST_PARENTS_FILE, once it is all the install directory holds: which parents the first
 * install made (bit 1 ~/.local, 2 ~/.local/share; the names space-separated), then the file goes
 * (not counted: it is the removal's own note). While anything else is left there it stays, for
 * the rollback that removes the rest. */
static int parents_made(removal *m, int *made)
{
	char path[PATH_MAX + 600], *text = NULL, **names = NULL;
	const char *word;
	size_t len, n;
	lm_scan words;
	int rc;

	if ((rc = list(m, "", &names)) < 0 || names == NULL)
		return rc;
	rc = names[0] != NULL && strcmp(names[0], LM_GUEST_PARENTS_FILE) == 0 && names[1] == NULL;
	lm_strv_free(names);
	if (!rc)
		return 0;
	if ((rc = full_path(m, path, sizeof(path), LM_GUEST_PARENTS_FILE)) < 0)
		return rc;
	if ((rc = lm_ssh_read_file(m->ssh, path, 256, &text, &len)) < 0)
		return left_or_fail(m, LM_GUEST_PARENTS_FILE, rc);
	lm_scan_init(&words, text, len);
	while (lm_scan_token(&words, " \n", &word, &n) == 1)
		*made |= lm_text_is(word, n, ".local") ? 1 : lm_text_is(word, n, ".local/share") ? 2 : 0;
	free(text);
	if ((rc = lm_ssh_remove(m->ssh, path)) < 0)
		return left_or_fail(m, LM_GUEST_PARENTS_FILE, rc);
	return 0;
}

/* The owner record, after everything else: whatever the removal left is no install of anyone's
 * any more (not counted: it is the install's own note). */
static int remove_owner(removal *m)
{
	char path[PATH_MAX + 600];
	lm_ssh_kind kind;
	int rc;

	if ((rc = full_path(m, path, sizeof(path), LM_GUEST_OWNER_FILE)) < 0 ||
	    (rc = lm_ssh_kind_of(m->ssh, path, &kind)) < 0 || kind != LM_SSH_KIND_FILE)
		return rc;
	if ((rc = lm_ssh_remove(m->ssh, path)) < 0)
		return left_or_fail(m, LM_GUEST_OWNER_FILE, rc);
	return 0;
}

/* A parent the first install made goes once empty (the home as before the first enable). */
static int rmdir_made(removal *m, const char *home, const char *part)
{
	char path[PATH_MAX], **names = NULL;
	int rc;

	if ((rc = part_path(path, sizeof(path), home, part)) < 0)
		return rc;
	/* One that holds anything, or cannot be listed or removed, is the user's now: left unsaid. */
	if ((rc = lm_ssh_list_dir(m->ssh, path, LM_GUEST_DIR_ENTRIES_MAX, &names)) == 0 && names[0] == NULL &&
	    (rc = lm_ssh_remove(m->ssh, path)) == 0)
		m->r->dirs++;
	lm_strv_free(names);
	if (rc == LM_ENOMEM)
		return rc;
	lm_error_clear();
	return 0;
}

int lm_install_files_remove(lm_ssh *ssh, const lm_install_place *p, const lm_bundle *local, const char *keep,
    lm_guest_removal *r)
{
	removal m = {ssh, "", r};
	char shown[PATH_MAX], **names = NULL, path[PATH_MAX + 600];
	lm_ssh_kind kind;
	size_t i;
	int present, rc, made = 0;

	r->shown = p->shown;
	if ((rc = base_walk(ssh, p, shown, sizeof(shown), &kind, &present)) < 0)
		return rc;
	if (shown[0] != '\0') {
		(void)lm_buf_addf(&r->left, "%s%s (%s: lume-metal removes nothing through it or in its place)",
		    r->nleft > 0 ? "; " : "", shown, lm_ssh_kind_phrase(kind));
		r->nleft++;
		return 0;
	}
	if (!present)
		return 0;
	if ((rc = lm_path_join_buf(m.base, sizeof(m.base), p->dir, NULL)) < 0 || (rc = list(&m, "", &names)) < 0 ||
	    names == NULL)
		return rc;
	for (i = 0; names[i] != NULL && rc == 0; i++) {
		if (keep != NULL && (strcmp(names[i], keep) == 0 || strcmp(names[i], "current") == 0))
			continue;
		if (p->keep != NULL && strcmp(names[i], p->keep) == 0)
			continue;
		if ((rc = full_path(&m, path, sizeof(path), names[i])) < 0 ||
		    (rc = lm_ssh_kind_of(ssh, path, &kind)) < 0)
			break;
		switch (lm_guest_entry_class(names[i], kind)) {
		case 'l':
			rc = unlink_entry(&m, "", names[i]);
			break;
		case 'd':
			rc = remove_bundle_dir(&m, names[i], local);
			break;
		case 'a':
			rc = remove_activation(&m);
			break;
		case 'r':
			rc = remove_resigned(&m);
			break;
		case 't':
			rc = unlink_entry(&m, "", names[i]);
			break;
		case 'p': /* last, below */
		case 'o':
			break;
		default:
			if (kind != LM_SSH_KIND_ABSENT)
				left(r, names[i], "not lume-metal's");
		}
	}
	lm_strv_free(names);
	if (rc == 0 && keep == NULL)
		rc = remove_owner(&m);
	if (rc == 0 && keep == NULL && (rc = parents_made(&m, &made)) == 0)
		rc = rmdir_if_empty(&m, "", 0);
	/* The parents are a guest home's (a place of the caller's has no note of them). */
	if (rc == 0 && p->home[0] && (made & 2))
		rc = rmdir_made(&m, p->home, ".local/share");
	if (rc == 0 && p->home[0] && (made & 1))
		rc = rmdir_made(&m, p->home, ".local");
	return rc;
}

int lm_guest_files_remove(lm_ssh *ssh, const lm_guest_facts *facts, const lm_bundle *local, const char *keep,
    lm_guest_removal *r)
{
	lm_install_place p;
	int rc;

	if ((rc = lm_install_place_guest(&p, facts)) < 0)
		return rc;
	rc = lm_install_files_remove(ssh, &p, local, keep, r);
	r->shown = "~/" LM_GUEST_BASE; /* p's goes with it */
	return rc;
}

int lm_install_entry_remove(lm_ssh *ssh, const lm_install_place *p, const lm_bundle *local, const char *name,
    lm_guest_removal *r)
{
	removal m = {ssh, "", r};
	int rc;

	r->shown = p->shown;
	if ((rc = lm_path_join_buf(m.base, sizeof(m.base), p->dir, NULL)) < 0)
		return rc;
	return remove_bundle_dir(&m, name, local);
}

int lm_guest_remove_all(lm_ssh *ssh, const lm_guest_facts *facts, const lm_bundle *local, char *said,
    size_t said_len)
{
	lm_guest_removal r;
	int rc;

	lm_guest_removal_init(&r);
	if ((rc = lm_guest_files_remove(ssh, facts, local, NULL, &r)) == 0 && said != NULL)
		lm_guest_removal_describe(&r, said, said_len);
	lm_guest_removal_dispose(&r);
	return rc < 0 ? rc : (int)(r.nleft < 1000 ? r.nleft : 1000);
}
