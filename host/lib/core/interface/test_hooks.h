/* Internal: test hooks (docs/testing.md), compiled in test builds only (LM_TEST_HOOKS: the tests'
 * library and tool, never the installed ones).
 *
 * lm_test_kill_point(step): LUME_METAL_TEST_KILL_AT=<step> makes the process SIGKILL itself when
 * it reaches that step, to prove that every step is crash-safe; LUME_METAL_TEST_STOP_AT=<step>
 * makes it SIGSTOP itself there (the first time only), so that a test can act while it holds what
 * it holds at that step (its VM lock) and signal it at a known point. */
#ifndef LM_TEST_HOOKS_H
#define LM_TEST_HOOKS_H

#ifdef LM_TEST_HOOKS
void lm_test_kill_point(const char *step);
#else
#define lm_test_kill_point(step) ((void)0)
#endif

#endif
