/* Internal: the one way lume-metal reads a property list that comes from outside (a preferences
 * file, the journal's recorded values, CoreFoundation's serialised values, UTM's config.plist, a
 * LaunchAgent plist read from a guest).
 *
 * The threat: libplist recurses once per level of nesting when it parses a binary plist, and when
 * it frees, copies, compares or writes any tree (every version to 2.7.0 at least); so do our own
 * comparisons. A file nested 50,000 deep overflows the stack (SIGSEGV) in whichever runs first.
 * libplist also cuts a binary plist's ASCII string at its first NUL byte (parse_string_node takes
 * strlen), so {"a": 1, "a\0b": 2} reads as two keys "a" and a written-back file loses one.
 *
 * The rule: the raw bytes are checked before libplist sees them, by iteration alone (no
 * recursion, bounded memory): at most LM_PLIST_MAX_DEPTH arrays and dictionaries nested, the root
 * included, and no NUL character in any string or key. Only then are they parsed, so nothing that
 * recurses over the tree afterwards (libplist's or ours) meets more than LM_PLIST_MAX_DEPTH levels.
 * This is a pre-check, not a parser: whatever it lets through libplist still judges.
 */
#ifndef LM_PLIST_READ_H
#define LM_PLIST_READ_H

#include <stddef.h>

#include "lm_plist_api.h" /* libplist, across its versions */

/* Apple's own reader stops at 512 on macOS (CoreFoundation, CFPropertyList_Internal.h,
 * _CFPropertyListMaxRecursionDepth(): 512 on macOS, 128 on iOS), and libplist took the same 512
 * in 2026 (PLIST_MAX_NESTING_DEPTH, after 2.7.0): a file macOS reads, lume-metal reads. */
#define LM_PLIST_MAX_DEPTH 512

/* What is wrong with bytes lm_plist_read() refused. */
typedef enum {
	LM_PLIST_FINE = 0,
	LM_PLIST_NOT_PLIST, /* neither a binary nor an XML property list (libplist's verdict, or an
	                       object of a binary plist that contains itself) */
	LM_PLIST_TOO_DEEP,  /* arrays and dictionaries nested more than LM_PLIST_MAX_DEPTH deep */
	LM_PLIST_NUL        /* a NUL character in a string or a dictionary key (in XML: anywhere) */
} lm_plist_flaw;

/* Check the whole bytes of a property list (binary when they start with "bplist00", else XML), then
 * parse them: 0 and *out (free with plist_free). Refused bytes are LM_EINVALID with a message
 * that names them by `what` ("preferences file /path") and states the flaw, *out NULL and *flaw
 * (may be NULL) set; LM_ENOMEM when out of memory (the check takes two bytes per object of a
 * binary plist). */
int lm_plist_read(const char *data, size_t len, const char *what, plist_t *out, lm_plist_flaw *flaw);

#endif
