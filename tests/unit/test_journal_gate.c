/* One journal transaction for a fleet's first round (host/lib/record/journal_gate.c): the last
 * worker to come makes every change and saves once; each worker gets its own item's result and
 * message; a worker that leaves and so runs the transaction keeps its own error; a cancel fails
 * every item. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lume-metal/context.h"
#include "lume-metal/error.h"
#include "error_internal.h"
#include "record.h"
#include "lm_test.h"

typedef struct {
	const char *name;     /* written into the journal as "gate-NAME" */
	int fail;             /* the change fails, with a message of its own */
	pthread_t ran_in;     /* the thread that made the change */
	int ran;
} item;

typedef struct {
	lm_journal_gate *g;
	item *it;
	int rc;
	char msg[256];
} worker;

static char *dir;

static int setup(void **state)
{
	(void)state;
	dir = lm_test_tmpdir("gate");
	return dir != NULL ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	lm_test_rmtree(dir);
	free(dir);
	return 0;
}

static int cancel_always(void *data)
{
	(void)data;
	return 1;
}

static lm_context *context(int canceled)
{
	lm_options opts;
	lm_context *ctx = NULL;

	assert_int_equal(lm_options_init(&opts, LM_OPTIONS_VERSION), 0);
	opts.state_dir = dir;
	if (canceled)
		opts.should_cancel = cancel_always;
	lm_assert_ok(lm_context_new(&ctx, &opts));
	return ctx;
}

static int change(void *p, lm_state *st)
{
	item *it = p;
	char key[64];

	it->ran = 1;
	it->ran_in = pthread_self();
	if (it->fail)
		return lm_error_set(LM_EINVALID, "%s: refused", it->name);
	snprintf(key, sizeof(key), "gate-%s", it->name);
	return cJSON_AddTrueToObject(lm_state_doc(st), key) != NULL ? 0 : lm_error_nomem();
}

static void *pass_thread(void *p)
{
	worker *w = p;

	w->rc = lm_journal_gate_pass(w->g, w->it);
	snprintf(w->msg, sizeof(w->msg), "%s", lm_error_last()->message);
	return NULL;
}

/* What the journal on disk holds (read back independently). */
static int journal_has(const char *key)
{
	char *path = lm_test_join(dir, "state.json"), *text = lm_test_slurp(path, NULL);
	int has = text != NULL && strstr(text, key) != NULL;

	free(text);
	free(path);
	return has;
}

static void wait_waiting(lm_journal_gate *g, size_t n)
{
	int i;

	for (i = 0; i < 20000 && lm_journal_gate_waiting(g) < n; i++)
		usleep(1000);
	assert_int_equal(lm_journal_gate_waiting(g), n);
}

/* One comes and waits; the other leaves with an error of its own (its VM was not found) and, the
 * last, makes the change: its error is still its own afterwards. */
static void test_leaver_runs_it_and_keeps_its_error(void **state)
{
	lm_context *ctx = context(0);
	item a = {"a", 0, 0, 0};
	worker w = {NULL, &a, -1, ""};
	pthread_t t;

	(void)state;
	lm_assert_ok(lm_journal_gate_new(&w.g, ctx, 2, change, 1));
	assert_int_equal(pthread_create(&t, NULL, pass_thread, &w), 0);
	wait_waiting(w.g, 1);
	(void)lm_error_set(LM_ENOTFOUND, "vm2: Virtual machine not found");
	lm_journal_gate_leave(w.g);
	assert_int_equal(lm_error_last()->code, LM_ENOTFOUND);
	assert_string_equal(lm_error_last()->message, "vm2: Virtual machine not found");
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(w.rc, 0);
	assert_true(a.ran);
	assert_true(pthread_equal(a.ran_in, pthread_self()));
	assert_true(journal_has("\"gate-a\""));
	lm_journal_gate_free(w.g);
	lm_context_free(ctx);
}

/* Two come; one change fails: that worker gets its own code and message, the other's change is
 * saved. */
static void test_item_failure_is_its_own(void **state)
{
	lm_context *ctx = context(0);
	item good = {"good", 0, 0, 0}, bad = {"bad", 1, 0, 0};
	worker wg = {NULL, &good, -1, ""}, wb = {NULL, &bad, -1, ""};
	lm_journal_gate *g;
	pthread_t t1, t2;

	(void)state;
	lm_assert_ok(lm_journal_gate_new(&g, ctx, 2, change, 1));
	wg.g = wb.g = g;
	assert_int_equal(pthread_create(&t1, NULL, pass_thread, &wg), 0);
	assert_int_equal(pthread_create(&t2, NULL, pass_thread, &wb), 0);
	assert_int_equal(pthread_join(t1, NULL), 0);
	assert_int_equal(pthread_join(t2, NULL), 0);
	assert_int_equal(wg.rc, 0);
	assert_int_equal(wb.rc, LM_EINVALID);
	assert_string_equal(wb.msg, "bad: refused");
	assert_true(journal_has("\"gate-good\""));
	assert_false(journal_has("\"gate-bad\""));
	lm_journal_gate_free(g);
	lm_context_free(ctx);
}

/* A cancel before the transaction: no change is made, every item fails with LM_ECANCELED. */
static void test_cancel_fails_every_item(void **state)
{
	lm_context *ctx = context(1);
	item a = {"canceled", 0, 0, 0};
	lm_journal_gate *g;

	(void)state;
	lm_assert_ok(lm_journal_gate_new(&g, ctx, 1, change, 1));
	assert_int_equal(lm_journal_gate_pass(g, &a), LM_ECANCELED);
	assert_false(a.ran);
	assert_false(journal_has("\"gate-canceled\""));
	lm_journal_gate_free(g);
	lm_context_free(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_leaver_runs_it_and_keeps_its_error),
		cmocka_unit_test(test_item_failure_is_its_own),
		cmocka_unit_test(test_cancel_fails_every_item),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
