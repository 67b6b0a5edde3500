/* Internal: the one path join.
 *
 * The parts are joined with '/' as they are given (none is cleaned up: "a/" and "b" give "a//b",
 * as the "%s/%s" they replace did). The result is never cut: a path cut short can name another
 * file -- a parent directory under `rm -rf`, another VM's file. A result longer than its room is
 * LM_EINVALID naming the limit: PATH_MAX - 1 bytes for a new string (no system call takes a longer
 * path), or the caller's buffer. LM_ENOMEM when out of memory. */
#ifndef LM_PATH_H
#define LM_PATH_H

#include <stddef.h>

#if defined(__GNUC__)
#define LM_SENTINEL __attribute__((sentinel))
#else
#define LM_SENTINEL
#endif

/* lm_path_join(&path, dir, name, NULL): a new string (free()); *out NULL on failure. */
int lm_path_join(char **out, const char *first, ...) LM_SENTINEL;
/* The same into buf (size bytes with the NUL); buf is "" on failure. */
int lm_path_join_buf(char *buf, size_t size, const char *first, ...) LM_SENTINEL;

#endif
