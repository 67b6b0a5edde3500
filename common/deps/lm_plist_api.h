/* libplist's API as the host and the tests use it, across the versions users have: 2.2 (Debian
 * 12) to 2.7 (Homebrew). Which form a build uses is decided at configure time by what the
 * headers declare (cmake/LumeMetalDependencies.cmake, lm_plist_api_checks), never by a version
 * number; the LM_PLIST_HAVE_* macros come with the lm_plist target.
 *
 * What changed (libimobiledevice/libplist; shared/reference/toolchain.md):
 *  - 2.3.0 removed plist_to_bin_free() and plist_to_xml_free() and added plist_mem_free();
 *  - 2.3.0 made plist_from_memory() return plist_err_t and take a fourth argument (the format);
 *  - 2.7.0 added the Unix-epoch date functions (plist_get_unix_date_val, plist_new_unix_date:
 *    Debian 13's 2.6.0 header has neither) and marks plist_get_date_val() (seconds since
 *    2001-01-01) deprecated in their favour. */
#ifndef LM_PLIST_API_H
#define LM_PLIST_API_H

#include <stdint.h>
#include <plist/plist.h>

#if !defined(LM_PLIST_HAVE_MEM_FREE) || !defined(LM_PLIST_HAVE_UNIX_DATE) || !defined(LM_PLIST_HAVE_FORMAT_ARG)
#error "lm_plist_api.h needs the LM_PLIST_HAVE_* definitions of the lm_plist target (cmake/LumeMetalDependencies.cmake)"
#endif

/* Seconds from the Unix epoch to Apple's (2001-01-01T00:00:00Z), which plist dates count from. */
#define LM_PLIST_APPLE_EPOCH 978307200LL

/* Frees what plist_to_bin() or plist_to_xml() handed out. NULL is fine. */
static inline void lm_plist_mem_free(char *p)
{
	if (p == NULL)
		return;
#if LM_PLIST_HAVE_MEM_FREE
	plist_mem_free(p);
#else
	plist_to_bin_free(p); /* 2.2: the same free() as plist_to_xml_free() */
#endif
}

/* A date node's value in whole seconds since the Unix epoch (fractions dropped). */
static inline int64_t lm_plist_date_unix(plist_t node)
{
#if LM_PLIST_HAVE_UNIX_DATE
	int64_t sec = 0;

	plist_get_unix_date_val(node, &sec);
	return sec;
#else
	int32_t sec = 0, usec = 0;

	plist_get_date_val(node, &sec, &usec);
	return LM_PLIST_APPLE_EPOCH + sec;
#endif
}

/* A new date node at `sec` seconds since the Unix epoch; NULL when out of memory. */
static inline plist_t lm_plist_new_date_unix(int64_t sec)
{
#if LM_PLIST_HAVE_UNIX_DATE
	return plist_new_unix_date(sec);
#else
	return plist_new_date((int32_t)(sec - LM_PLIST_APPLE_EPOCH), 0);
#endif
}

/* XML or binary plist from memory into *out (NULL when it is neither). From 2.3.0 libplist also
 * reads JSON and OpenStep text, and takes plain words for an OpenStep string (2.6.0 reads
 * "neither XML nor bplist" as <string>neither</string>): the format it found decides. */
static inline void lm_plist_from_memory(const char *data, uint32_t len, plist_t *out)
{
	*out = NULL;
#if LM_PLIST_HAVE_FORMAT_ARG
	plist_format_t format = PLIST_FORMAT_NONE;

	if ((plist_from_memory(data, len, out, &format) != PLIST_ERR_SUCCESS ||
	        (format != PLIST_FORMAT_XML && format != PLIST_FORMAT_BINARY)) && *out != NULL) {
		plist_free(*out);
		*out = NULL;
	}
#else
	plist_from_memory(data, len, out);
#endif
}

#endif
