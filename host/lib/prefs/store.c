/* The preference store: which back-end a context selects, and the calls every back-end answers. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "context_internal.h"
#include "error_internal.h"
#include "fs.h"
#include "path.h"
#include "pref_default.h"
#include "prefs_store.h"
#include "str.h"
#include "text.h"

#ifdef __APPLE__
#include <time.h>
#include <uuid/uuid.h>
#endif

int lm_prefs_validate_domain(const char *domain)
{
	size_t i, n = domain != NULL ? strlen(domain) : 0;

	if (n == 0 || n > 200 || domain[0] == '.')
		goto bad;
	for (i = 0; i < n; i++) {
		char c = domain[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
		      c == '-' || c == '_'))
			goto bad;
	}
	return 0;
bad:
	return lm_error_set(LM_EINVALID, "preference domain '%s' is not valid: expected a reverse-DNS name "
	    "such as " LM_PREF_DEFAULT_DOMAIN " ([A-Za-z0-9._-], at most 200 characters)",
	    domain != NULL ? domain : "");
}

/* This Mac's hardware UUID as macOS names ByHost files (upper case, 8-4-4-4-12): gethostuuid()
 * on macOS; elsewhere the machine ID (/etc/machine-id, 32 hex digits) written the same way, so
 * that the simulator and lume-metal on one machine agree. -1 with `why` when it is not known. */
static int hardware_uuid(char out[37], char *why, size_t len)
{
#ifdef __APPLE__
	uuid_t u;
	struct timespec wait = {0, 0};

	if (gethostuuid(u, &wait) != 0) {
		lm_text_format_cut(why, len, "gethostuuid failed: %s", strerror(errno));
		return -1;
	}
	uuid_unparse_upper(u, out);
	return 0;
#else
	char id[40] = "";
	FILE *f = fopen("/etc/machine-id", "r");
	size_t i, o = 0;

	if (f == NULL || fgets(id, sizeof(id), f) == NULL || strspn(id, "0123456789abcdefABCDEF") != 32) {
		lm_text_format_cut(why, len, "this machine has no machine ID (/etc/machine-id) to stand for the hardware UUID");
		if (f != NULL)
			fclose(f);
		return -1;
	}
	fclose(f);
	for (i = 0; i < 32; i++) {
		if (i == 8 || i == 12 || i == 16 || i == 20)
			out[o++] = '-';
		out[o++] = (char)toupper((unsigned char)id[i]);
	}
	out[o] = '\0';
	return 0;
#endif
}

int lm_prefs_store_open_plist(lm_prefs_store **out, const char *dir, const char *domain)
{
	lm_prefs_store *store;
	char cwd[4096], file[256], uuid[37], *absdir = NULL;
	size_t n;
	int rc;

	*out = NULL;
	if ((rc = lm_prefs_validate_domain(domain)) < 0)
		return rc;
	if (dir == NULL || dir[0] == '\0')
		return lm_error_set(LM_EINVALID, "no preferences directory given");
	/* The journal records where the change was made; a relative directory would be ambiguous. */
	if (dir[0] != '/') {
		if (getcwd(cwd, sizeof(cwd)) == NULL)
			return lm_error_set(LM_EIO, "cannot tell the current directory to resolve '%s'", dir);
		if ((rc = lm_path_join(&absdir, cwd, dir, NULL)) < 0)
			return rc;
	} else if ((absdir = strdup(dir)) == NULL) {
		return lm_error_nomem();
	}
	/* Drop trailing slashes so that the same directory always gives the same identity. */
	for (n = strlen(absdir); n > 1 && absdir[n - 1] == '/'; n--)
		absdir[n - 1] = '\0';
	if ((store = calloc(1, sizeof(*store))) == NULL) {
		free(absdir);
		return lm_error_nomem();
	}
	store->ops = &lm_plist_store_ops;
	snprintf(file, sizeof(file), "%s.plist", domain); /* a valid domain (at most 200 bytes) fits */
	if ((rc = lm_path_join(&store->path, absdir, file, NULL)) < 0 ||
	    (rc = lm_path_join(&store->managed_path, absdir, "managed", file, NULL)) < 0) {
		free(absdir);
		lm_prefs_store_free(store);
		return rc;
	}
	if (hardware_uuid(uuid, store->byhost_why, sizeof(store->byhost_why)) == 0) {
		snprintf(file, sizeof(file), "%s.%s.plist", domain, uuid); /* 200 + 1 + 36 + 6 bytes at most */
		if ((rc = lm_path_join(&store->byhost_path, absdir, "ByHost", file, NULL)) < 0) {
			free(absdir);
			lm_prefs_store_free(store);
			return rc;
		}
	}
	free(absdir);
	if ((store->domain = strdup(domain)) == NULL || (store->id = lm_format("plist:%s", store->path)) == NULL) {
		lm_prefs_store_free(store);
		return lm_error_nomem();
	}
	*out = store;
	return 0;
}

int lm_prefs_store_open(lm_prefs_store **out, const lm_context *ctx, const char *domain)
{
	const lm_options *opts = lm_context_options(ctx);
	int rc;

	*out = NULL;
	if (opts->prefs_dir != NULL && opts->prefs_dir[0] != '\0')
		return lm_prefs_store_open_plist(out, opts->prefs_dir, domain);
#ifdef __APPLE__
	{
		lm_prefs_store *store;

		if ((rc = lm_prefs_validate_domain(domain)) < 0)
			return rc;
		if ((store = calloc(1, sizeof(*store))) == NULL)
			return lm_error_nomem();
		if ((store->domain = strdup(domain)) == NULL || (store->id = strdup("cfpreferences")) == NULL) {
			lm_prefs_store_free(store);
			return lm_error_nomem();
		}
		if ((rc = lm_cf_store_init(store)) < 0) {
			lm_prefs_store_free(store);
			return rc;
		}
		*out = store;
		return 0;
	}
#else
	/* Off macOS there is no preferences daemon: the file lives where macOS would keep it. */
	const char *home;
	char *dir;

	if ((rc = lm_paths_home(&home)) < 0)
		return rc;
	if ((rc = lm_path_join(&dir, home, "Library/Preferences", NULL)) < 0)
		return rc;
	rc = lm_prefs_store_open_plist(out, dir, domain);
	free(dir);
	return rc;
#endif
}

void lm_prefs_store_free(lm_prefs_store *store)
{
	if (store == NULL)
		return;
	if (store->ops != NULL && store->ops->free != NULL)
		store->ops->free(store);
	free(store->domain);
	free(store->id);
	free(store->path);
	free(store->managed_path);
	free(store->byhost_path);
	free(store);
}

const char *lm_prefs_store_id(const lm_prefs_store *store)
{
	return store->id;
}

const char *lm_prefs_store_path(const lm_prefs_store *store)
{
	return store->path;
}

int lm_prefs_store_read(lm_prefs_store *store, const char *key, int *file_present, plist_t *value)
{
	*file_present = 0;
	*value = NULL;
	return store->ops->read(store, key, file_present, value);
}

int lm_prefs_store_set(lm_prefs_store *store, const char *key, plist_t value)
{
	return store->ops->set(store, key, value);
}

int lm_prefs_store_delete(lm_prefs_store *store, const char *key, int remove_empty_file)
{
	return store->ops->del(store, key, remove_empty_file);
}

int lm_prefs_store_managed(lm_prefs_store *store, const char *key, int *managed, plist_t *forced)
{
	*managed = 0;
	*forced = NULL;
	return store->ops->managed(store, key, managed, forced);
}

int lm_prefs_store_byhost(lm_prefs_store *store, const char *key, plist_t *value, char *where, size_t len)
{
	*value = NULL;
	if (store->path == NULL)
		lm_text_format_cut(where, len, "CFPreferences, current host");
	else if (store->byhost_path != NULL)
		lm_text_format_cut(where, len, "%s", store->byhost_path);
	else
		lm_text_format_cut(where, len, "not read: %s", store->byhost_why);
	return store->ops->byhost(store, key, value);
}

int lm_prefs_store_missing_dirs(lm_prefs_store *store, char ***missing)
{
	*missing = NULL;
	if (store->path == NULL)
		return 0;
	return lm_fs_missing_dirs(store->path, missing);
}

void lm_prefs_store_cleanup(lm_prefs_store *store)
{
	if (store->path != NULL)
		lm_fs_remove_stale_temps(store->path);
}
