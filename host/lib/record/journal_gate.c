/* One journal transaction for several threads' changes (lm_journal_gate_*): the workers of a fleet
 * meet at the gate, and the last to come makes every change in one exclusive open and one save,
 * instead of each taking the lock and writing the whole journal in turn. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "context_internal.h"
#include "error_internal.h"

struct lm_journal_gate {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	lm_context *ctx;
	lm_journal_gate_fn fn;
	int save;
	size_t expected; /* workers yet to come or leave */
	size_t queued;
	void **items;
	int *rcs;
	char (*msgs)[2048]; /* each failed change's message, said again in its worker's thread */
	int done;
};

int lm_journal_gate_new(lm_journal_gate **out, lm_context *ctx, size_t workers, lm_journal_gate_fn fn, int save)
{
	lm_journal_gate *g = calloc(1, sizeof(*g));

	*out = NULL;
	if (g == NULL)
		return lm_error_nomem();
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->cv, NULL);
	if ((g->items = calloc(workers + 1, sizeof(*g->items))) == NULL ||
	    (g->rcs = calloc(workers + 1, sizeof(*g->rcs))) == NULL ||
	    (g->msgs = calloc(workers + 1, sizeof(*g->msgs))) == NULL) {
		lm_journal_gate_free(g);
		return lm_error_nomem();
	}
	g->ctx = ctx;
	g->fn = fn;
	g->save = save;
	g->expected = workers;
	*out = g;
	return 0;
}

void lm_journal_gate_free(lm_journal_gate *g)
{
	if (g == NULL)
		return;
	pthread_mutex_destroy(&g->mu);
	pthread_cond_destroy(&g->cv);
	free(g->items);
	free(g->rcs);
	free(g->msgs);
	free(g);
}

static void note(lm_journal_gate *g, size_t i, int rc)
{
	g->rcs[i] = rc;
	if (rc < 0)
		snprintf(g->msgs[i], sizeof(g->msgs[i]), "%s", lm_error_last()->message);
}

/* Every queued change in one transaction, in the last worker's thread; g->mu held. A change that
 * fails is that item's failure alone; a journal that cannot be opened or saved fails them all. */
static void transaction(lm_journal_gate *g)
{
	lm_state *st = NULL;
	size_t i;
	int rc;

	if ((rc = lm_context_check_cancel(g->ctx, "before anything was changed")) == 0)
		rc = lm_journal_open_rw(&st, g->ctx);
	for (i = 0; i < g->queued; i++)
		note(g, i, rc < 0 ? rc : g->fn(g->items[i], st));
	if (rc == 0 && g->save && (rc = lm_state_save(st)) < 0)
		for (i = 0; i < g->queued; i++)
			if (g->rcs[i] == 0)
				note(g, i, rc);
	lm_state_close(st);
	g->done = 1;
	pthread_cond_broadcast(&g->cv);
}

/* Come (item) or leave (NULL); the last of the workers runs the transaction. */
int lm_journal_gate_pass(lm_journal_gate *g, void *item)
{
	size_t mine = 0;
	int rc = 0;

	pthread_mutex_lock(&g->mu);
	if (g->expected == 0) { /* more workers than the gate was made for: a caller's bug */
		pthread_mutex_unlock(&g->mu);
		return item != NULL ? lm_error_set(LM_ERROR, "internal: more workers at the journal gate than expected") : 0;
	}
	if (item != NULL) {
		mine = g->queued++;
		g->items[mine] = item;
	}
	if (--g->expected == 0 && g->queued > 0) {
		/* The transaction runs in this thread, whose last error (a worker leaving because its
		 * VM failed, about to report why) is its own: kept, not the changes' errors. */
		char saved[2048];
		int saved_code = lm_error_last()->code;

		snprintf(saved, sizeof(saved), "%s", lm_error_last()->message);
		transaction(g);
		if (saved_code != 0)
			(void)lm_error_set(saved_code, "%s", saved);
		else
			lm_error_clear();
	}
	while (item != NULL && !g->done)
		pthread_cond_wait(&g->cv, &g->mu);
	if (item != NULL && (rc = g->rcs[mine]) < 0)
		lm_error_set(rc, "%s", g->msgs[mine]);
	pthread_mutex_unlock(&g->mu);
	return rc;
}

size_t lm_journal_gate_waiting(lm_journal_gate *g)
{
	size_t n;

	pthread_mutex_lock(&g->mu);
	n = g->done ? 0 : g->queued;
	pthread_mutex_unlock(&g->mu);
	return n;
}

void lm_journal_gate_leave(lm_journal_gate *g)
{
	if (g != NULL)
		(void)lm_journal_gate_pass(g, NULL);
}
