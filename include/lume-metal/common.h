/* lume-metal: what every public header shares — the export macro, LM_HAS_FIELD for results — and
 * the library's version.
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

/* Whether the library that filled a result has `field`: every result struct the library allocates
 * starts with `size_t size`, its size as that library was built, and grows only at its end
 * (docs/embedding.md, "ABI"). A program that runs with libraries older than its headers reads a
 * field added after the oldest of them only when this is true:
 *     if (LM_HAS_FIELD(r, lm_bench_result, bare_metal) && r->bare_metal) ... */
#define LM_HAS_FIELD(ptr, type, field) \
	((ptr)->size >= offsetof(type, field) + sizeof(((type *)0)->field))

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
