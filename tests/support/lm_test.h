/* lm_test: what the C tests share, written once (model: libgit2's tests/clar/clar_libgit2.h).
 *
 * Assertions on lume-metal calls that say what went wrong (the expression, the code and
 * lm_error_last()'s message), files and directories, a child process with its output, and the
 * loopback addresses the test was given by the address plan (cmake/LumeMetalTesting.cmake).
 *
 * The helpers that prepare a test's world (a directory, a file, a child process) abort the test
 * program with a message naming what failed: such a failure is the machine's, not the code
 * under test's, and nothing after it would mean anything. The library itself links neither
 * cmocka nor lume-metal (the simulator and the fuzz targets use it too); the lm_assert_* macros
 * need <cmocka.h> included before they are used, and lume-metal's error functions linked. */
#ifndef LM_TEST_H
#define LM_TEST_H

#include <stddef.h>
#include <sys/types.h>

#include "lume-metal/error.h"

/* ---- assertions (cmocka) ---------------------------------------------------------------- */

/* EXPR (a lume-metal call) returns 0; else the test fails with the expression, the code and the
 * error message. The last error is cleared first, so that the message is EXPR's own. */
#define lm_assert_ok(expr)                                                                         \
	do {                                                                                       \
		int lm_rc_;                                                                        \
		lm_error_clear();                                                                  \
		lm_rc_ = (expr);                                                                   \
		if (lm_rc_ != 0)                                                                   \
			fail_msg("%s\n  returned %d (%s): %s", #expr, lm_rc_, lm_error_name(lm_rc_), \
			    lm_error_last()->message);                                             \
	} while (0)

/* EXPR fails with CODE (model: clar's cl_git_fail_with); else the test fails with what it
 * returned and the message. */
#define lm_assert_fails(expr, code)                                                                \
	do {                                                                                       \
		int lm_rc_, lm_want_ = (code);                                                     \
		lm_error_clear();                                                                  \
		lm_rc_ = (expr);                                                                   \
		if (lm_rc_ != lm_want_)                                                            \
			fail_msg("%s\n  returned %d (%s), expected %d (%s): %s", #expr, lm_rc_,          \
			    lm_error_name(lm_rc_), lm_want_, lm_error_name(lm_want_),              \
			    lm_error_last()->message);                                             \
	} while (0)

/* The last error's message contains NEEDLE. */
#define lm_assert_error_has(needle) lm_assert_contains(lm_error_last()->message, (needle))

/* HAY (NULL counts as empty) contains NEEDLE, or does not; else the test fails showing both. */
#define lm_assert_contains(hay, needle)                                                            \
	do {                                                                                       \
		const char *lm_hay_ = (hay), *lm_needle_ = (needle);                               \
		if (!lm_test_contains(lm_hay_, lm_needle_))                                        \
			fail_msg("\"%s\" not found in: %s", lm_needle_, lm_hay_ != NULL ? lm_hay_ : "(null)"); \
	} while (0)
#define lm_assert_not_contains(hay, needle)                                                        \
	do {                                                                                       \
		const char *lm_hay_ = (hay), *lm_needle_ = (needle);                               \
		if (lm_test_contains(lm_hay_, lm_needle_))                                         \
			fail_msg("\"%s\" found in: %s", lm_needle_, lm_hay_);                          \
	} while (0)

/* ---- text -------------------------------------------------------------------------------- */

/* HAY is not NULL and contains NEEDLE. */
int lm_test_contains(const char *hay, const char *needle);
/* How many times NEEDLE (not empty) occurs in HAY (NULL: 0), overlapping ones included. */
size_t lm_test_count(const char *hay, const char *needle);

/* ---- one document per row of a table ---------------------------------------------------- */

/* A table of cases whose documents differ from one base document in one small part says, per row,
 * only that part: the row's edit of the base, one of the three below, written with designated
 * initializers (test_report.c's and test_profile.c's tables of malformed input). */
typedef struct {
	const char *whole;     /* the document is this alone, nothing of the base (a short one) */
	const char *from;      /* the first occurrence of this in the base becomes TO ... */
	const char *to;
	size_t to_len;         /* ... TO's length when it holds a NUL byte (LM_TEST_TO_BYTES); 0: strlen */
	int every;             /* ... every occurrence, not only the first */
	const char *cut_after; /* the base up to the end of the first occurrence of this (a cut one) */
} lm_test_edit;

/* .to and .to_len of a literal that holds a NUL byte: {.from = "ab", LM_TEST_TO_BYTES("a\0b")}. */
#define LM_TEST_TO_BYTES(literal) .to = (literal), .to_len = sizeof(literal) - 1

/* BASE with EDIT made, to free(): *LEN bytes (NULs among them), NUL-terminated after them. An edit
 * whose FROM or CUT_AFTER is not in BASE, or that is not exactly one of the three, aborts the test
 * program with a message: its row would test the base document, or nothing, instead of its own. */
char *lm_test_edited(const char *base, const lm_test_edit *edit, size_t *len);

/* ---- files and directories ------------------------------------------------------------- */

/* A new private directory (mode 0700) lm-TAG.XXXXXX in PARENT (NULL: $TMPDIR when absolute,
 * else /tmp); an absolute path to free(). */
char *lm_test_tmpdir(const char *tag);
char *lm_test_tmpdir_in(const char *parent, const char *tag);
/* Remove a tree, depth first, without following links, after making the top writable again;
 * a missing tree is fine. 0, or -1 with errno when something could not be removed. */
int lm_test_rmtree(const char *path);
/* mkdir -p: every missing directory of PATH with MODE. 0, or -1 with errno. */
int lm_test_mkdir_p(const char *path, mode_t mode);
/* "A/B", to free(). */
char *lm_test_join(const char *a, const char *b);
/* The whole file, NUL-terminated, to free(); *len (when not NULL) its size. NULL with errno when
 * it cannot be read (missing included). A reader of its own: what the code under test wrote is
 * read back independently of the code that wrote it. */
char *lm_test_slurp(const char *path, size_t *len);
/* Replace PATH with exactly these bytes (mode 0644 when created). */
void lm_test_write(const char *path, const void *data, size_t len);
void lm_test_write_text(const char *path, const char *text);
/* A property list nested LEVELS deep (LEVELS >= 2): a root dictionary {"Deep": [[...[]...]]} with
 * LEVELS - 1 arrays, as XML or (BINARY) a binary plist with 4-byte offsets and references; to
 * free(), *len its size. Written byte by byte, without libplist, which recurses per level. */
char *lm_test_deep_plist(unsigned levels, int binary, size_t *len);
/* PATH exists (lstat: a dangling link exists). */
int lm_test_exists(const char *path);

/* ---- child processes ------------------------------------------------------------------- */

#define LM_TEST_OUT_MAX 65536
#define LM_TEST_ERR_MAX 16384
/* How long a child may run before it is taken for hung: a guard against a test that never ends,
 * not a time target (a child that hits it aborts the test program with a message). */
#define LM_TEST_RUN_LIMIT 300

typedef struct {
	int status;                  /* the exit code, or 128 + the signal that ended it */
	char out[LM_TEST_OUT_MAX];   /* stdout, NUL-terminated */
	char err[LM_TEST_ERR_MAX];   /* stderr, NUL-terminated */
	size_t out_len, err_len;
} lm_test_result;

/* Run ARGV[0] (a path: no shell, no PATH search) with ENVP as its whole environment (NULL: this
 * process's) and INPUT on its stdin (NULL: /dev/null); wait for it, with all of stdout and stderr
 * in R. More output than R holds aborts the test program (it is never cut). */
void lm_test_run(lm_test_result *r, char *const argv[], char *const envp[], const char *input);

/* This process's environment with each "NAME=value" of EXTRA (NULL-terminated) replacing the
 * variable of that name or added; free with free() (the strings are the environment's and
 * EXTRA's own). */
char **lm_test_env_with(char *const extra[]);

/* ---- the address plan ------------------------------------------------------------------ */

/* Host HOST (1..254) of the loopback /24 this test was given (LM_ADDRESS_BASE=127.B.N.2 in its
 * environment, set by lm_test_loopback() in CMake), as "127.B.N.HOST" in OUT. Aborts with a
 * message when the test was started without one: a test that binds addresses never picks its
 * own, so that tests running in parallel cannot meet on one. */
void lm_test_address(char out[16], unsigned host);
/* LM_ADDRESS_BASE itself, checked as above. */
const char *lm_test_address_base(void);

#endif
