/* The CoreFoundation store (macOS): CFPreferences for the current user and any host — the domain
 * `defaults write` changes — followed by a synchronize, so that cfprefsd's cache stays coherent.
 * Values cross between CoreFoundation and libplist through Apple's binary plist format, so every
 * type keeps its exact form. The current-host value (`defaults -currentHost`) is only read. */
#ifdef __APPLE__
#include <CoreFoundation/CoreFoundation.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error_internal.h"
#include "prefs_store.h"

typedef struct {
	CFStringRef domain;
} cf_store;

static CFStringRef cf_string(const char *s)
{
	return CFStringCreateWithCString(kCFAllocatorDefault, s, kCFStringEncodingUTF8);
}

static void cf_error_text(CFErrorRef err, char *buf, size_t size)
{
	CFStringRef desc;

	snprintf(buf, size, "unknown error");
	if (err == NULL)
		return;
	if ((desc = CFErrorCopyDescription(err)) != NULL) {
		CFStringGetCString(desc, buf, (CFIndex)size, kCFStringEncodingUTF8);
		CFRelease(desc);
	}
}

/* CoreFoundation value -> libplist node, through a one-element binary plist. */
static int cf_to_plist(CFPropertyListRef value, plist_t *out)
{
	CFArrayRef arr;
	CFDataRef data;
	CFErrorRef err = NULL;
	plist_t root = NULL;
	char why[256];
	int rc;

	*out = NULL;
	arr = CFArrayCreate(kCFAllocatorDefault, (const void **)&value, 1, &kCFTypeArrayCallBacks);
	if (arr == NULL)
		return lm_error_nomem();
	data = CFPropertyListCreateData(kCFAllocatorDefault, arr, kCFPropertyListBinaryFormat_v1_0, 0, &err);
	CFRelease(arr);
	if (data == NULL) {
		cf_error_text(err, why, sizeof(why));
		if (err != NULL)
			CFRelease(err);
		return lm_error_set(LM_EIO, "CFPreferences: cannot serialise the value: %s", why);
	}
	/* Through the one checked reader too: CoreFoundation writes a string with a NUL in ASCII, which
	 * libplist would cut there. */
	rc = lm_plist_read((const char *)CFDataGetBytePtr(data), (size_t)CFDataGetLength(data), "the value",
	    &root, NULL);
	CFRelease(data);
	if (rc < 0)
		return rc == LM_ENOMEM ? rc : lm_error_set(LM_EIO, "CFPreferences: %s", lm_error_last()->message);
	if (plist_get_node_type(root) != PLIST_ARRAY || plist_array_get_size(root) != 1) {
		plist_free(root);
		return lm_error_set(LM_EIO, "CFPreferences: the value could not be read back");
	}
	if ((rc = lm_pref_plist_keepable(root)) <= 0) {
		plist_free(root);
		return rc < 0 ? rc : lm_error_set(LM_EIO, "CFPreferences: the value holds a string or key with a NUL "
		    "character or invalid UTF-8, which lume-metal cannot keep exactly");
	}
	*out = plist_copy(plist_array_get_item(root, 0));
	plist_free(root);
	return *out != NULL ? 0 : lm_error_nomem();
}

/* libplist node -> CoreFoundation value (retained), the same way back. */
static int plist_to_cf(plist_t value, CFPropertyListRef *out)
{
	plist_t arr;
	char *bin = NULL;
	uint32_t len = 0;
	CFDataRef data;
	CFErrorRef err = NULL;
	CFPropertyListRef root;
	char why[256];

	*out = NULL;
	if ((arr = plist_new_array()) == NULL)
		return lm_error_nomem();
	plist_array_append_item(arr, plist_copy(value));
	plist_to_bin(arr, &bin, &len);
	plist_free(arr);
	if (bin == NULL)
		return lm_error_set(LM_EINVALID, "cannot serialise a %s value", lm_pref_plist_type(value));
	data = CFDataCreate(kCFAllocatorDefault, (const UInt8 *)bin, (CFIndex)len);
	lm_plist_mem_free(bin);
	if (data == NULL)
		return lm_error_nomem();
	root = CFPropertyListCreateWithData(kCFAllocatorDefault, data, kCFPropertyListImmutable, NULL, &err);
	CFRelease(data);
	if (root == NULL || CFGetTypeID(root) != CFArrayGetTypeID() || CFArrayGetCount((CFArrayRef)root) != 1) {
		cf_error_text(err, why, sizeof(why));
		if (err != NULL)
			CFRelease(err);
		if (root != NULL)
			CFRelease(root);
		return lm_error_set(LM_EINVALID, "CoreFoundation cannot read the value: %s", why);
	}
	*out = CFRetain(CFArrayGetValueAtIndex((CFArrayRef)root, 0));
	CFRelease(root);
	return 0;
}

static int cf_sync(lm_prefs_store *store, cf_store *cs)
{
	if (!CFPreferencesSynchronize(cs->domain, kCFPreferencesCurrentUser, kCFPreferencesAnyHost))
		return lm_error_set(LM_EIO, "CFPreferences could not save the domain %s for the current user; "
		    "check that ~/Library/Preferences is writable", store->domain);
	return 0;
}

/* The current user's value of `key` for `host` (kCFPreferencesAnyHost, or kCFPreferencesCurrentHost:
 * this Mac alone, which CFPreferences reads first), after picking up the changes other processes
 * made through cfprefsd; with file_present, whether that domain holds any key. */
static int cf_copy(cf_store *cs, const char *key, CFStringRef host, int *file_present, plist_t *value)
{
	CFStringRef k = cf_string(key);
	CFPropertyListRef v;
	CFArrayRef keys;
	int rc = 0;

	if (k == NULL)
		return lm_error_set(LM_EINVALID, "preference key '%s' is not valid UTF-8", key);
	CFPreferencesSynchronize(cs->domain, kCFPreferencesCurrentUser, host);
	if (file_present != NULL) {
		keys = CFPreferencesCopyKeyList(cs->domain, kCFPreferencesCurrentUser, host);
		*file_present = keys != NULL && CFArrayGetCount(keys) > 0;
		if (keys != NULL)
			CFRelease(keys);
	}
	v = CFPreferencesCopyValue(k, cs->domain, kCFPreferencesCurrentUser, host);
	CFRelease(k);
	if (v != NULL) {
		rc = cf_to_plist(v, value);
		CFRelease(v);
	}
	return rc;
}

static int cf_read(lm_prefs_store *store, const char *key, int *file_present, plist_t *value)
{
	return cf_copy(store->impl, key, kCFPreferencesAnyHost, file_present, value);
}

static int cf_set(lm_prefs_store *store, const char *key, plist_t value)
{
	cf_store *cs = store->impl;
	CFStringRef k = cf_string(key);
	CFPropertyListRef v;
	int rc;

	if (k == NULL)
		return lm_error_set(LM_EINVALID, "preference key '%s' is not valid UTF-8", key);
	if ((rc = plist_to_cf(value, &v)) < 0) {
		CFRelease(k);
		return rc;
	}
	CFPreferencesSetValue(k, v, cs->domain, kCFPreferencesCurrentUser, kCFPreferencesAnyHost);
	CFRelease(v);
	CFRelease(k);
	return cf_sync(store, cs);
}

static int cf_del(lm_prefs_store *store, const char *key, int remove_empty_file)
{
	cf_store *cs = store->impl;
	CFStringRef k = cf_string(key);

	/* cfprefsd removes the domain's file itself once its last key is gone. */
	(void)remove_empty_file;
	if (k == NULL)
		return lm_error_set(LM_EINVALID, "preference key '%s' is not valid UTF-8", key);
	CFPreferencesSetValue(k, NULL, cs->domain, kCFPreferencesCurrentUser, kCFPreferencesAnyHost);
	CFRelease(k);
	return cf_sync(store, cs);
}

static int cf_managed(lm_prefs_store *store, const char *key, int *managed, plist_t *forced)
{
	cf_store *cs = store->impl;
	CFStringRef k = cf_string(key);
	CFPropertyListRef v;
	int rc = 0;

	if (k == NULL)
		return lm_error_set(LM_EINVALID, "preference key '%s' is not valid UTF-8", key);
	if (CFPreferencesAppValueIsForced(k, cs->domain)) {
		*managed = 1;
		/* The app value is what every process sees: the forced one wins over the user's. */
		if ((v = CFPreferencesCopyAppValue(k, cs->domain)) != NULL) {
			rc = cf_to_plist(v, forced);
			CFRelease(v);
		}
	}
	CFRelease(k);
	return rc;
}

/* `defaults -currentHost`: the current user's value for this Mac alone. */
static int cf_byhost(lm_prefs_store *store, const char *key, plist_t *value)
{
	return cf_copy(store->impl, key, kCFPreferencesCurrentHost, NULL, value);
}

static void cf_free(lm_prefs_store *store)
{
	cf_store *cs = store->impl;

	if (cs == NULL)
		return;
	if (cs->domain != NULL)
		CFRelease(cs->domain);
	free(cs);
	store->impl = NULL;
}

static const struct lm_prefs_store_ops cf_ops = {
	cf_read, cf_set, cf_del, cf_managed, cf_free, cf_byhost,
};

int lm_cf_store_init(lm_prefs_store *store)
{
	cf_store *cs = calloc(1, sizeof(*cs));

	if (cs == NULL)
		return lm_error_nomem();
	store->impl = cs;
	store->ops = &cf_ops;
	if ((cs->domain = cf_string(store->domain)) == NULL)
		return lm_error_set(LM_EINVALID, "preference domain '%s' is not valid UTF-8", store->domain);
	return 0;
}
#endif
