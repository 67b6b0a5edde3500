/* lume-metal: what every public header shares — the export macro, the test for a result's
 * field — and the library's version.
 *
 * The library is built with hidden visibility; exactly the functions declared with LM_EXTERN in
 * these headers are exported (libgit2's GIT_EXTERN). tests/embed compares the installed
 * library's dynamic symbols with the declarations in the installed headers.
 */
#ifndef LUME_METAL_COMMON_H
#define LUME_METAL_COMMON_H

#include <stddef.h>

#if defined(__GNUC__) && __GNUC__ >= 4
#define LM_EXTERN(type) extern __attribute__((visibility("default"))) type
#else
#define LM_EXTERN(type) extern type
#endif

/* A result struct is allocated by the library, starts with `size_t size` (its sizeof as the
 * library was built) and grows only at its end (docs/embedding.md, "ABI"). A field newer than the
 * oldest library a program supports is read only when the library's struct has it. */
#define LM_HAS_FIELD(ptr, type, field) (offsetof(type, field) + sizeof(((type *)0)->field) <= (ptr)->size)

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the library actually loaded ("0.1.0"), which may differ from the
 * LUME_METAL_VERSION of the headers an embedder was compiled with (lume-metal/version.h). */
LM_EXTERN(const char *) lm_version(void);

#ifdef __cplusplus
}
#endif

#endif
