/* What the fuzz targets share: a private scratch directory for the parsers that are reached
 * through a file (state journal, known_hosts, bundle manifest, preference plist, SSH key), a
 * context pointing at it, and a property check that stops the fuzzer.
 *
 * Each target is one small file with LLVMFuzzerTestOneInput(); see docs/testing.md ("Fuzzing"). */
#ifndef LM_FUZZ_SUPPORT_H
#define LM_FUZZ_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

#include "lume-metal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The scratch directory (absolute, mode 0700, made once per process, removed at exit), a
 * directory one level below it (made on demand), and a path inside it (`name` may contain one
 * '/'; the returned path is overwritten by the next call). */
const char *lm_fuzz_dir(void);
const char *lm_fuzz_subdir(const char *name);
const char *lm_fuzz_path(const char *name);

/* Replace `name` in the scratch directory with data[0..size). */
void lm_fuzz_write(const char *name, const uint8_t *data, size_t size);

/* A NUL-terminated copy of the input (free with free()). */
char *lm_fuzz_strdup(const uint8_t *data, size_t size);

/* Options whose state and preference directories are the scratch directory; the caller adds
 * what its parser needs, then makes the context with lm_fuzz_context(). */
void lm_fuzz_options(lm_options *opts);
lm_context *lm_fuzz_context(const lm_options *opts);

/* A property every input must keep (a round trip, a bound): abort() with a message otherwise, so
 * that libFuzzer keeps the input as a crash. */
#define LM_FUZZ_CHECK(cond) ((cond) ? (void)0 : lm_fuzz_fail(#cond, __FILE__, __LINE__))
void lm_fuzz_fail(const char *what, const char *file, int line);

#endif
