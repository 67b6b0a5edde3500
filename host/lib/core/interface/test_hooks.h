/* Internal: the test hooks, in test builds only (LM_TEST_HOOKS: the tests' static library and the
 * lume-metal-hooks tool; never the installed library or tool). docs/testing.md, "Test-only hooks",
 * lists every one; fs.h's write delay is declared beside the code it acts on, and UTM's lease file
 * (LUME_METAL_DHCPD_LEASES, host/lib/vm/vm_utm.c) is read there.
 *
 * lm_test_kill_point(step): LUME_METAL_TEST_KILL_AT=<step> makes the process SIGKILL itself when
 * it reaches that step, to prove that every step is crash-safe; LUME_METAL_TEST_STOP_AT=<step>
 * makes it SIGSTOP itself there (the first time only), so that a test can act while it holds what
 * it holds at that step (its VM lock) and signal it at a known point.
 *
 * The fault-injecting allocator (model: SQLite's src/test_malloc.c, faultsimStep). Programs linked
 * with LM_FAULT_ALLOC_LINK_OPTIONS (host/lib/core/CMakeLists.txt: the linker's --wrap of malloc,
 * calloc, realloc, strdup and strndup) send every such call made by the objects linked into them --
 * the library's modules, common/ and the tool -- through a counter, and cJSON's allocations through
 * the same counter (cJSON_InitHooks). Allocations made inside other libraries (libc, libssh2,
 * libcurl, libplist) are not counted: they fail only when the machine runs out.
 *
 *   LUME_METAL_TEST_FAIL_ALLOC=N     the Nth counted allocation fails and so does every one after
 *                                    it (persistent: the run cannot recover by allocating again)
 *   LUME_METAL_TEST_FAIL_ALLOC=N,R   R allocations fail from the Nth on, then they succeed again
 *                                    (N,1: the Nth alone)
 *   LUME_METAL_TEST_FAIL_ALLOC_LOG=F every injected failure appends its ordinal and a newline to F,
 *                                    so that a test knows whether its run met a failure at all
 *   LUME_METAL_TEST_FAIL_ALLOC_TRACE=F  every injected failure appends its call stack to F
 *                                    (glibc's backtrace_symbols_fd), to find where it was met
 *
 * A malformed value ends the program at its start (exit 125): a test that asked for a failure must
 * not run without it. A unit test linked the same way arms it between its calls instead:
 * lm_test_alloc_fail_next(R) makes the next counted allocation fail, and R - 1 after it (0: every
 * one after it), as N,R would counting from there.
 *
 * lm_test_journal_full(): LUME_METAL_TEST_JOURNAL_FULL_AT=N makes the process's Nth write of the
 * state journal, and every one after it, fail as on a full disk (ENOSPC, the file unchanged): 1
 * when the write about to be made is one of them. Saves that find the file already holding their
 * bytes write nothing and are not counted. Malformed ends the program (exit 125).
 *
 * lm_test_launchd_wait(seconds): LUME_METAL_TEST_LAUNCHD_WAIT=S (seconds, > 0) replaces how long
 * agent install waits for launchd to let go of a booted-out label, so that a test can outlast it
 * with a guest's drain time of a few seconds; malformed ends the program (exit 125). */
#ifndef LM_TEST_HOOKS_H
#define LM_TEST_HOOKS_H

#ifdef LM_TEST_HOOKS
#include <stddef.h>

void lm_test_kill_point(const char *step);
/* Counted allocations so far in this process, and failures injected so far. */
size_t lm_test_alloc_count(void);
size_t lm_test_alloc_failures(void);
void lm_test_alloc_fail_next(size_t repeat);
double lm_test_launchd_wait(double seconds);
int lm_test_journal_full(void);
#else
#define lm_test_kill_point(step) ((void)0)
#define lm_test_launchd_wait(seconds) (seconds)
#define lm_test_journal_full() 0
#endif

#endif
