/* A libcurl as macOS 13.0 ships it (7.84.0; Apple's release manifests, shared/reference/
 * toolchain.md), for the test of host/lib/vm/vm_api.c's protocol restriction: it answers
 * CURLOPT_PROTOCOLS_STR (added in 7.85.0) with CURLE_UNKNOWN_OPTION, as 7.84.0's
 * curl_easy_setopt does for an option it does not know, and forwards everything else to this
 * machine's libcurl, which it links (its DT_NEEDED entry: dlsym on this library's handle finds the
 * other functions there). With LM_FAKE_CURL_REFUSE=all it refuses CURLOPT_PROTOCOLS as well, a
 * libcurl that cannot be limited at all. LM_FAKE_CURL_LOG names a file that gets one line per
 * protocol option asked for, so the test can see what the library did. Loaded in place of libcurl
 * by the tests' build of lume-metal (LUME_METAL_TEST_CURL_LIBRARY). */
/* curl.h makes curl_easy_setopt a type-checking macro under GCC: this file defines the function. */
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The real function, from the libcurl this library links. */
static CURLcode (*real_setopt(void))(CURL *, CURLoption, ...)
{
	void *h = dlopen("libcurl.so.4", RTLD_NOW | RTLD_NOLOAD);

	return h != NULL ? (CURLcode(*)(CURL *, CURLoption, ...))dlsym(h, "curl_easy_setopt") : NULL;
}

/* One line "WHAT" or "WHAT VALUE" (value >= 0) into LM_FAKE_CURL_LOG. */
static void note(const char *what, long value)
{
	const char *path = getenv("LM_FAKE_CURL_LOG");
	int fd;

	if (path == NULL || (fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600)) < 0)
		return;
	if (value >= 0)
		dprintf(fd, "%s %ld\n", what, value);
	else
		dprintf(fd, "%s\n", what);
	close(fd);
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations" /* CURLOPT_PROTOCOLS is the point */
CURLcode curl_easy_setopt(CURL *curl, CURLoption option, ...)
{
	CURLcode (*setopt)(CURL *, CURLoption, ...) = real_setopt();
	const char *refuse = getenv("LM_FAKE_CURL_REFUSE");
	va_list ap;
	CURLcode cc;

	if (setopt == NULL)
		return CURLE_FAILED_INIT;
	if (option == CURLOPT_PROTOCOLS_STR) {
		note("refused CURLOPT_PROTOCOLS_STR", -1);
		return CURLE_UNKNOWN_OPTION;
	}
	va_start(ap, option);
	/* The argument's type follows from the option's number (curl.h's CURLOPTTYPE_* ranges). */
	if (option < CURLOPTTYPE_OBJECTPOINT) {
		long v = va_arg(ap, long);

		if (option == CURLOPT_PROTOCOLS) {
			if (refuse != NULL && strcmp(refuse, "all") == 0) {
				note("refused CURLOPT_PROTOCOLS", v);
				va_end(ap);
				return CURLE_UNKNOWN_OPTION;
			}
			note("CURLOPT_PROTOCOLS", v);
		}
		cc = setopt(curl, option, v);
	} else if (option < CURLOPTTYPE_OFF_T) {
		/* Object and function pointers alike: every ABI lume-metal runs on passes them the same way. */
		void *v = va_arg(ap, void *);

		cc = setopt(curl, option, v);
	} else if (option < CURLOPTTYPE_BLOB) {
		curl_off_t v = va_arg(ap, curl_off_t);

		cc = setopt(curl, option, v);
	} else {
		void *v = va_arg(ap, void *);

		cc = setopt(curl, option, v);
	}
	va_end(ap);
	return cc;
}
#pragma GCC diagnostic pop
