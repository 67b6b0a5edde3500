/* Private to the prefs module (and its tests): values and stores.
 *
 * Values are libplist nodes (plist_t) on both stores, so that any type a preference can hold
 * (bool, integer, real, string, date, data, array, dict) is compared, recorded and restored
 * with its type. The CoreFoundation store converts through Apple's own binary plist format.
 */
#ifndef LM_PREFS_STORE_H
#define LM_PREFS_STORE_H

#include <stddef.h>

#include "lm_plist_api.h" /* libplist, across its versions */
#include "plist_read.h"   /* the one reader of outside plists: depth and NULs checked first */

#include "lume-metal/context.h"
#include "lume-metal/prefs.h"
#include "prefs_internal.h"

/* ---- values (value.c) ---- */

/* A new node holding `v` (free with plist_free); NULL on bad input or no memory. */
plist_t lm_pref_value_to_plist(const lm_pref_value *v);
/* "bool", "integer", "real", "string", "date", "data", "array", "dict", "uid". */
const char *lm_pref_plist_type(plist_t v);
/* "true (bool)", "1 (integer)", "YES (string)", "{3 keys} (dict)", ...; "" for NULL. */
void lm_pref_plist_describe(plist_t v, char *buf, size_t size);
/* Same type and same value, recursively; two NULLs are equal. */
int lm_pref_plist_equal(plist_t a, plist_t b);
/* The types a preference flag can take (what `defaults write -bool|-int|-string` produce). */
int lm_pref_plist_is_flag_type(plist_t v);
/* Lossless text form for the journal: base64 of a binary plist whose root is a one-element array
 * holding `v`. Decode returns LM_EINVALID on anything else (LM_ENOMEM when out of memory). */
int lm_pref_plist_encode(plist_t v, char **out);
int lm_pref_plist_decode(const char *text, plist_t *out);
/* 1 when every string and dictionary key in `v` can be kept and written back exactly, 0 when one
 * holds a NUL character or is not valid UTF-8 (libplist 2.2 aborts on reading a string with a NUL;
 * the binary form changes invalid UTF-8), < 0 when out of memory. A NUL that libplist cuts a
 * string at while parsing never reaches a tree: lm_plist_read() refuses the bytes first. */
int lm_pref_plist_keepable(plist_t v);

/* ---- stores (store.c, plist_store.c, cf_store.c) ---- */

typedef struct lm_prefs_store lm_prefs_store;

/* The store the context selects for `domain`: the plist file DIR/<domain>.plist when a prefs dir
 * is set (and off macOS, with DIR = ~/Library/Preferences), else CFPreferences. */
int lm_prefs_store_open(lm_prefs_store **out, const lm_context *ctx, const char *domain);
/* A plist-file store in `dir` (tests, and the CLI's --prefs-dir). */
int lm_prefs_store_open_plist(lm_prefs_store **out, const char *dir, const char *domain);
void lm_prefs_store_free(lm_prefs_store *store);

/* "cfpreferences" or "plist:/abs/dir/<domain>.plist": what the journal records. */
const char *lm_prefs_store_id(const lm_prefs_store *store);
/* The plist file (plist store) or NULL (CFPreferences). */
const char *lm_prefs_store_path(const lm_prefs_store *store);

/* The key's value (*value NULL when absent; free with plist_free) and whether the domain's file
 * exists (CFPreferences: whether the domain holds any key). A damaged file, a non-dictionary root
 * or an unreadable directory is an error naming the file. */
int lm_prefs_store_read(lm_prefs_store *store, const char *key, int *file_present, plist_t *value);
/* Set the key (value is copied), keeping every other key and its type. */
int lm_prefs_store_set(lm_prefs_store *store, const char *key, plist_t value);
/* Delete the key; with `remove_empty_file`, remove the domain's file when no other key is left. */
int lm_prefs_store_delete(lm_prefs_store *store, const char *key, int remove_empty_file);
/* Whether a configuration profile forces the key, and the forced value (NULL when not managed).
 * Plist store: DIR/managed/<domain>.plist holding the key (mirrors /Library/Managed Preferences). */
int lm_prefs_store_managed(lm_prefs_store *store, const char *key, int *managed, plist_t *forced);
/* The key's -currentHost value (`defaults -currentHost`, CFPreferences' current user and current
 * host), *value NULL when there is none. CFPreferences reads it before the any-host value
 * lume-metal writes, so it wins. Plist store: DIR/ByHost/<domain>.<hardware UUID>.plist, as macOS
 * keeps it; *where says what was read (that file, or "CFPreferences, current host"), or why
 * nothing could be (the hardware UUID unknown). */
int lm_prefs_store_byhost(lm_prefs_store *store, const char *key, plist_t *value, char *where, size_t len);
/* Directories a write would create, outermost first (NULL-terminated, NULL when none or for
 * CFPreferences); free with lm_strv_free(). */
int lm_prefs_store_missing_dirs(lm_prefs_store *store, char ***missing);
/* Remove temporary files an interrupted write left (call under the journal lock). */
void lm_prefs_store_cleanup(lm_prefs_store *store);

/* Store back-ends. */
struct lm_prefs_store_ops {
	int (*read)(lm_prefs_store *store, const char *key, int *file_present, plist_t *value);
	int (*set)(lm_prefs_store *store, const char *key, plist_t value);
	int (*del)(lm_prefs_store *store, const char *key, int remove_empty_file);
	int (*managed)(lm_prefs_store *store, const char *key, int *managed, plist_t *forced);
	void (*free)(lm_prefs_store *store);
	int (*byhost)(lm_prefs_store *store, const char *key, plist_t *value);
};
struct lm_prefs_store {
	const struct lm_prefs_store_ops *ops;
	char *domain;
	char *id;
	char *path;         /* plist store: DIR/<domain>.plist */
	char *managed_path; /* plist store: DIR/managed/<domain>.plist */
	char *byhost_path;  /* plist store: DIR/ByHost/<domain>.<hardware UUID>.plist; NULL when the
	                       UUID is not known (byhost_why says why) */
	char byhost_why[160];
	void *impl;         /* CFPreferences store: its CoreFoundation objects */
};
extern const struct lm_prefs_store_ops lm_plist_store_ops;
#ifdef __APPLE__
int lm_cf_store_init(lm_prefs_store *store);
#endif

/* Domain names become file names: [A-Za-z0-9._-], not starting with '.', at most 200 bytes. */
int lm_prefs_validate_domain(const char *domain);

#endif
