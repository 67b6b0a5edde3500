/* The plist-file store: DIR/<domain>.plist read in XML or binary with libplist, written in binary
 * (as macOS writes preferences) through the atomic-write helper, every other key kept. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error_internal.h"
#include "fs.h"
#include "prefs_store.h"

/* Far above any real preferences file; keeps a damaged size field from exhausting memory. */
#define PLIST_FILE_MAX (16u * 1024u * 1024u)

/* The file's root dictionary (*dict NULL and *present 0 when the file does not exist). Whatever is
 * wrong with its contents is LM_ECORRUPT naming the file, and the file is left as it is. */
static int load_dict(const char *path, int *present, plist_t *dict)
{
	char *data = NULL;
	size_t len = 0;
	plist_t root;
	lm_plist_flaw flaw;
	int rc, keep;

	*present = 0;
	*dict = NULL;
	rc = lm_fs_read_file(path, PLIST_FILE_MAX, &data, &len);
	if (rc == LM_ENOTFOUND) {
		lm_error_clear();
		return 0;
	}
	if (rc < 0)
		return lm_error_prefix("preferences file: ");
	*present = 1;
	rc = lm_plist_read(data, len, "the file", &root, &flaw);
	free(data);
	if (rc == 0 && (keep = lm_pref_plist_keepable(root)) <= 0) {
		plist_free(root);
		if (keep < 0)
			return keep;
		rc = LM_EINVALID;
		flaw = LM_PLIST_NUL; /* a NUL libplist kept (UTF-16), or invalid UTF-8: the same advice */
	}
	switch (rc < 0 ? flaw : LM_PLIST_FINE) {
	case LM_PLIST_FINE:
		break;
	case LM_PLIST_NOT_PLIST:
		return lm_error_set(LM_ECORRUPT, "preferences file %s is not a valid property list (damaged or "
		    "truncated, %zu bytes); nothing was written. Check it with `plutil -lint` (macOS) or "
		    "`plistutil -i` and fix or remove it", path, len);
	case LM_PLIST_TOO_DEEP:
		return lm_error_set(LM_ECORRUPT, "preferences file %s nests arrays and dictionaries more than %d deep, "
		    "more than lume-metal reads (macOS's own reader stops there too); nothing was written. Remove the deeply "
		    "nested value, or move the file away if nothing in it is needed", path, LM_PLIST_MAX_DEPTH);
	case LM_PLIST_NUL:
		return lm_error_set(LM_ECORRUPT, "preferences file %s holds a string or key with a NUL character or "
		    "invalid UTF-8, which lume-metal cannot keep exactly; nothing was written. Remove that value "
		    "(`plutil -p` on macOS, `plistutil -i` elsewhere, shows it)", path);
	}
	if (rc < 0)
		return rc; /* out of memory */
	if (plist_get_node_type(root) != PLIST_DICT) {
		rc = lm_error_set(LM_ECORRUPT, "preferences file %s has a root of type %s, not a dictionary; "
		    "nothing was written. Fix or remove it", path, lm_pref_plist_type(root));
		plist_free(root);
		return rc;
	}
	*dict = root;
	return 0;
}

/* A preferences file that is a symbolic link is refused, never replaced: an atomic write renames a
 * regular file over the link (the user's link would be gone, and the file it points to unchanged),
 * and removing it would remove the link alone. Following it would write wherever it points. So
 * the store changes a regular file or none (reading through a link changes nothing). */
static int refuse_link(const char *path)
{
	char target[256];
	ssize_t n;
	struct stat sb;

	if (lstat(path, &sb) != 0 || !S_ISLNK(sb.st_mode))
		return 0;
	n = readlink(path, target, sizeof(target) - 1);
	target[n > 0 ? n : 0] = '\0';
	return lm_error_set(LM_EIO, "preferences file %s is a symbolic link (to %s); lume-metal changes only a regular "
	    "file and never replaces a link: nothing was written. Make it a regular file first", path,
	    n > 0 ? target : "somewhere unreadable");
}

static int write_dict(lm_prefs_store *store, plist_t dict)
{
	char *bin = NULL;
	uint32_t len = 0;
	struct stat sb;
	mode_t mode = 0600;
	char *dir, *slash;
	int rc;

	if ((rc = refuse_link(store->path)) < 0)
		return rc;
	plist_to_bin(dict, &bin, &len);
	if (bin == NULL)
		return lm_error_set(LM_EIO, "%s: cannot serialise the preferences", store->path);
	/* Keep the mode of an existing file; new ones are private, as macOS makes them. */
	if (stat(store->path, &sb) == 0)
		mode = sb.st_mode & 07777;
	if ((dir = strdup(store->path)) == NULL) {
		lm_plist_mem_free(bin);
		return lm_error_nomem();
	}
	if ((slash = strrchr(dir, '/')) != NULL && slash != dir) {
		*slash = '\0';
		rc = lm_fs_mkdir_p(dir, 0700, NULL);
	} else {
		rc = 0;
	}
	free(dir);
	if (rc == 0)
		rc = lm_fs_write_atomic(store->path, bin, len, mode);
	lm_plist_mem_free(bin);
	return rc;
}

static int plist_read(lm_prefs_store *store, const char *key, int *file_present, plist_t *value)
{
	plist_t dict, item;
	int rc;

	if ((rc = load_dict(store->path, file_present, &dict)) < 0 || dict == NULL)
		return rc;
	item = plist_dict_get_item(dict, key);
	if (item != NULL && (*value = plist_copy(item)) == NULL)
		rc = lm_error_nomem();
	plist_free(dict);
	return rc;
}

static int plist_set(lm_prefs_store *store, const char *key, plist_t value)
{
	plist_t dict, copy;
	int present, rc;

	if ((rc = load_dict(store->path, &present, &dict)) < 0)
		return rc;
	if (dict == NULL && (dict = plist_new_dict()) == NULL)
		return lm_error_nomem();
	if ((copy = plist_copy(value)) == NULL) {
		plist_free(dict);
		return lm_error_nomem();
	}
	plist_dict_set_item(dict, key, copy);
	rc = write_dict(store, dict);
	plist_free(dict);
	return rc;
}

static int plist_del(lm_prefs_store *store, const char *key, int remove_empty_file)
{
	plist_t dict;
	int present, had, rc;

	if ((rc = load_dict(store->path, &present, &dict)) < 0 || dict == NULL)
		return rc;
	had = plist_dict_get_item(dict, key) != NULL;
	if (had)
		plist_dict_remove_item(dict, key);
	if (remove_empty_file && plist_dict_get_size(dict) == 0)
		rc = (rc = refuse_link(store->path)) < 0 ? rc : lm_fs_remove(store->path);
	else if (had)
		rc = write_dict(store, dict);
	plist_free(dict);
	return rc;
}

/* The key of another file of the domain (managed, ByHost): 1 and *value when it holds it. */
static int other_file_value(const char *path, const char *key, plist_t *value)
{
	plist_t dict, item;
	int present, rc;

	if ((rc = load_dict(path, &present, &dict)) < 0 || dict == NULL)
		return rc;
	if ((item = plist_dict_get_item(dict, key)) != NULL)
		rc = (*value = plist_copy(item)) != NULL ? 1 : lm_error_nomem();
	plist_free(dict);
	return rc;
}

static int plist_managed(lm_prefs_store *store, const char *key, int *managed, plist_t *forced)
{
	int rc = other_file_value(store->managed_path, key, forced);

	*managed = rc == 1;
	return rc < 0 ? rc : 0;
}

static int plist_byhost(lm_prefs_store *store, const char *key, plist_t *value)
{
	int rc = store->byhost_path != NULL ? other_file_value(store->byhost_path, key, value) : 0;

	return rc < 0 ? rc : 0;
}

const struct lm_prefs_store_ops lm_plist_store_ops = {
	plist_read, plist_set, plist_del, plist_managed, NULL, plist_byhost,
};
