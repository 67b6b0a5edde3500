/* libcurl loaded at its first use (curl_lib.h): dlopen by its soname, as the dynamic linker would
 * have found it from a DT_NEEDED entry, then every function this module calls. */
#include "curl_lib.h"
#include "error_internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef LM_CURL_LIBRARY_NAME
#error "LM_CURL_LIBRARY_NAME: the build names libcurl's soname (host/lib/vm/CMakeLists.txt)"
#endif

/* Process-wide, as libcurl's own global state is: filled once, read-only after. */
static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static lm_curl_lib curl_lib;
static int curl_rc;
static char curl_failure[512];

/* The library to load: the build's soname; in test builds LUME_METAL_TEST_CURL_LIBRARY, so that
 * a test can ask for one that is not there. */
static const char *library_name(void)
{
#ifdef LM_TEST_HOOKS
	const char *name = getenv("LUME_METAL_TEST_CURL_LIBRARY");

	if (name != NULL && name[0] != '\0')
		return name;
#endif
	return LM_CURL_LIBRARY_NAME;
}

static void fail(int rc, const char *name, const char *what, const char *detail)
{
	curl_rc = rc;
	snprintf(curl_failure, sizeof(curl_failure),
	    "libcurl (%s), which the Lume HTTP API needs, %s: %s. Install it (Debian/Ubuntu: "
	    "sudo apt-get install libcurl4; macOS has it), or use Lume's command line instead "
	    "(the lume-cli VM manager)",
	    name, what, detail != NULL ? detail : "(no reason given)");
}

/* One function into its slot; 0 with the failure noted when the library lacks it. */
static int take(void *handle, const char *name, const char *symbol, void **slot)
{
	if ((*slot = dlsym(handle, symbol)) != NULL)
		return 1;
	fail(LM_EUNSUPPORTED, name, "has no function the Lume API calls", symbol);
	return 0;
}

#define TAKE(field, symbol) take(handle, name, #symbol, (void **)&t->field)

static void load(void)
{
	const char *name = library_name();
	lm_curl_lib *t = &curl_lib;
	void *handle;
	CURLcode cc;

	t->name = name;
	/* RTLD_LOCAL: its symbols stay out of the global namespace, as a library's own. */
	if ((handle = dlopen(name, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		fail(LM_EUNSUPPORTED, name, "could not be loaded", dlerror());
		return;
	}
	if (!(TAKE(global_init, curl_global_init) && TAKE(easy_init, curl_easy_init) &&
	        TAKE(easy_setopt, curl_easy_setopt) && TAKE(easy_perform, curl_easy_perform) &&
	        TAKE(easy_getinfo, curl_easy_getinfo) && TAKE(easy_reset, curl_easy_reset) &&
	        TAKE(easy_cleanup, curl_easy_cleanup) && TAKE(easy_strerror, curl_easy_strerror) &&
	        TAKE(multi_init, curl_multi_init) && TAKE(multi_add_handle, curl_multi_add_handle) &&
	        TAKE(multi_remove_handle, curl_multi_remove_handle) && TAKE(multi_perform, curl_multi_perform) &&
	        TAKE(multi_poll, curl_multi_poll) && TAKE(multi_info_read, curl_multi_info_read) &&
	        TAKE(multi_cleanup, curl_multi_cleanup) && TAKE(slist_append, curl_slist_append) &&
	        TAKE(slist_free_all, curl_slist_free_all) && TAKE(url, curl_url) && TAKE(url_set, curl_url_set) &&
	        TAKE(url_get, curl_url_get) && TAKE(url_cleanup, curl_url_cleanup) && TAKE(free, curl_free)))
		return; /* the handle stays: what it loaded may already be in use by its dependencies */
	/* curl_global_init is not thread-safe: here, inside the once, it runs exactly once. */
	if ((cc = t->global_init(CURL_GLOBAL_DEFAULT)) != CURLE_OK) {
		curl_rc = LM_ERROR;
		snprintf(curl_failure, sizeof(curl_failure), "libcurl could not be initialised: %s", t->easy_strerror(cc));
	}
}

int lm_curl_lib_get(const lm_curl_lib **out)
{
	pthread_once(&curl_once, load);
	*out = NULL;
	if (curl_rc < 0)
		return lm_error_set(curl_rc, "%s", curl_failure);
	*out = &curl_lib;
	return 0;
}
