/* Internal to vm/: libcurl, loaded the first time Lume's HTTP API is used (a request, or the
 * automatic choice's connection test; dlopen), not when the program starts. Debian's libcurl
 * brings about 30 libraries with it (GnuTLS through librtmp, Kerberos, LDAP, SASL, p11-kit);
 * loading them before main() cost every command about 7 ms, Tart's, UTM's and `--help` included
 * (docs/testing.md, "Start-up, measured"). The functions keep the signatures of the headers we
 * build with (__typeof__). */
#ifndef LM_VM_CURL_LIB_H
#define LM_VM_CURL_LIB_H

#include <curl/curl.h>

typedef struct {
	const char *name; /* the library loaded (its soname, or the test's), for messages */
	__typeof__(curl_global_init) *global_init;
	__typeof__(curl_easy_init) *easy_init;
	__typeof__(curl_easy_setopt) *easy_setopt;
	__typeof__(curl_easy_perform) *easy_perform;
	__typeof__(curl_easy_getinfo) *easy_getinfo;
	__typeof__(curl_easy_reset) *easy_reset;
	__typeof__(curl_easy_cleanup) *easy_cleanup;
	__typeof__(curl_easy_strerror) *easy_strerror;
	__typeof__(curl_multi_init) *multi_init;
	__typeof__(curl_multi_add_handle) *multi_add_handle;
	__typeof__(curl_multi_remove_handle) *multi_remove_handle;
	__typeof__(curl_multi_perform) *multi_perform;
	__typeof__(curl_multi_poll) *multi_poll;
	__typeof__(curl_multi_info_read) *multi_info_read;
	__typeof__(curl_multi_cleanup) *multi_cleanup;
	__typeof__(curl_slist_append) *slist_append;
	__typeof__(curl_slist_free_all) *slist_free_all;
	__typeof__(curl_url) *url;
	__typeof__(curl_url_set) *url_set;
	__typeof__(curl_url_get) *url_get;
	__typeof__(curl_url_cleanup) *url_cleanup;
	__typeof__(curl_free) *free;
} lm_curl_lib;

/* libcurl (LM_CURL_LIBRARY_NAME, from the build) loaded and initialised (curl_global_init) once
 * per process, whichever thread asks first; never unloaded or cleaned up (libcurl's advice for
 * libraries: curl_global_cleanup is not thread-safe). LM_EUNSUPPORTED naming the library, what
 * the loader said and what to do when it cannot be loaded or lacks a function; LM_ERROR when
 * curl_global_init fails. The same answer every time. */
int lm_curl_lib_get(const lm_curl_lib **out);

#endif
