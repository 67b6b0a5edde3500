/* lume-metal: what every public header shares — the export macro — and the library's version.
 *
 * The library is built with hidden visibility; exactly the functions declared with LM_EXTERN in
 * these headers are exported (libgit2's GIT_EXTERN). tests/embed compares the installed
 * library's dynamic symbols with the declarations in the installed headers.
 */
#ifndef LUME_METAL_COMMON_H
#define LUME_METAL_COMMON_H

#if defined(__GNUC__) && __GNUC__ >= 4
#define LM_EXTERN(type) extern __attribute__((visibility("default"))) type
#else
#define LM_EXTERN(type) extern type
#endif

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
