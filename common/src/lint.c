/* The profile linter: what a profile turns on for llama.cpp and MLX on top of the stock
 * paravirtual answers, and what deserves a warning (reference/metal.md). */
#include "profile_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error_internal.h"
#include "report_internal.h"
#include "text.h"

/* Apple's feature-set tables: no family lists more than 32 KB of threadgroup memory. */
#define FAMILY_THREADGROUP_MAX 32768ULL

static void add(lm_profile_lint_result *r, lm_lint_level level, const char *code, const char *fmt, ...)
    LM_PRINTF(4, 5);

/* An item that does not fit (more than LM_LINT_MAX, or a message longer than an item holds) fails
 * the lint with an error naming the limit, instead of being cut. Per call, hence per thread. */
static _Thread_local int lint_overflow;

static void add(lm_profile_lint_result *r, lm_lint_level level, const char *code, const char *fmt, ...)
{
	lm_lint_item *it;
	va_list ap;
	int n;

	if (r->count == LM_LINT_MAX) {
		lint_overflow = lm_error_set(LM_ERROR, "profile lint: more than %d items (the limit of "
		    "lm_profile_lint_result)", LM_LINT_MAX);
		return;
	}
	it = &r->items[r->count++];
	it->level = level;
	it->code = code;
	va_start(ap, fmt);
	n = vsnprintf(it->message, sizeof(it->message), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(it->message))
		lint_overflow = lm_error_set(LM_ERROR, "profile lint: the %s message is %d bytes, longer than "
		    "the %zu an item holds", code, n, sizeof(it->message) - 1);
	if (level == LM_LINT_WARNING)
		r->warnings++;
}

static int newest_apple(void)
{
	size_t n, i;
	const lm_family *t = lm_family_table(&n);
	int best = 0;

	for (i = 0; i < n; i++)
		if (t[i].value >= LM_FAMILY_APPLE_FIRST && t[i].value <= LM_FAMILY_APPLE_LAST_VALID && t[i].value > best)
			best = t[i].value;
	return best;
}

static void lint_expectations(const lm_profile *p, const lm_report *stock, lm_profile_lint_result *r)
{
	const lm_expect_side *s = &p->expect[1];
	const lm_family *t = lm_family_table(NULL);
	uint64_t reachable;
	char label[48];
	int i;

	for (i = 0; i < LM_FAMILY_COUNT; i++) {
		int v = t[i].value, apple = v >= LM_FAMILY_APPLE_FIRST && v <= LM_FAMILY_APPLE_LAST_VALID;
		if (s->family[i] < 0)
			continue;
		if (v == 5001 && s->family[i] == 1)
			add(r, LM_LINT_WARNING, "mlx-residency-risk", "expectations.shimmed.families.Metal3 is true: "
			    "with Metal3 answered, MLX builds residency sets, which the paravirtual device cannot make "
			    "(\"Unable to construct residency set\"); never advertise Metal3 for mixed workloads");
		if (apple && s->family[i] == 0 && v <= p->caps.apple_family_max)
			add(r, LM_LINT_WARNING, "expectation-unreachable", "expectations.shimmed.families.%s is false, "
			    "but the shim answers true for every Apple family up to apple_family_max %s",
			    t[i].name, lm_family_label(p->caps.apple_family_max, label, sizeof(label)));
		if (apple && s->family[i] == 1 && v > p->caps.apple_family_max && stock->family[i] != 1)
			add(r, LM_LINT_WARNING, "expectation-unreachable", "expectations.shimmed.families.%s is true, "
			    "but it is above apple_family_max %s and the stock device answers false",
			    t[i].name, lm_family_label(p->caps.apple_family_max, label, sizeof(label)));
	}
	reachable = p->caps.max_threadgroup_memory > stock->max_threadgroup_memory ?
	    p->caps.max_threadgroup_memory : stock->max_threadgroup_memory;
	if (s->has_min_threadgroup_memory && s->min_threadgroup_memory > reachable)
		add(r, LM_LINT_WARNING, "expectation-unreachable", "expectations.shimmed.min_threadgroup_memory %llu "
		    "is above what the shim reports (%llu)", (unsigned long long)s->min_threadgroup_memory,
		    (unsigned long long)reachable);
	if (s->has_min_working_set_size && (!p->caps.has_recommended_working_set_size ||
	    s->min_working_set_size > p->caps.recommended_working_set_size))
		add(r, LM_LINT_NOTE, "working-set-expectation", "expectations.shimmed.min_recommended_working_set_size "
		    "%llu depends on the guest's own value: the profile does not raise it that far",
		    (unsigned long long)s->min_working_set_size);
}

int lm_profile_lint(const lm_profile *profile, int host_family, lm_profile_lint_result *out)
{
	lm_report *stock = NULL, *shimmed = NULL;
	char a[48], b[48];
	int rc, newest = newest_apple();

	memset(out, 0, sizeof(*out));
	lint_overflow = 0;
	if ((rc = lm_report_stock_paravirtual(&stock)) != 0)
		return rc;
	if ((rc = lm_profile_apply(profile, stock, &shimmed)) != 0) {
		lm_report_free(stock);
		return rc;
	}
	lm_workload_derive(stock, &out->stock);
	lm_workload_derive(shimmed, &out->shimmed);

	add(out, LM_LINT_NOTE, "ceiling", "Apple families answered up to %s; threadgroup memory at least %llu bytes",
	    lm_family_label(profile->caps.apple_family_max, a, sizeof(a)),
	    (unsigned long long)profile->caps.max_threadgroup_memory);
	if (!out->shimmed.llama_simdgroup_reduction && !out->shimmed.llama_simdgroup_mm)
		add(out, LM_LINT_WARNING, "llama-unchanged", "llama.cpp keeps its CPU fallbacks: its simdgroup "
		    "kernels need Apple7 (1007) or Metal3, and this profile's ceiling is %s",
		    lm_family_label(profile->caps.apple_family_max, a, sizeof(a)));
	if (out->shimmed.mlx_residency_risk)
		add(out, LM_LINT_WARNING, "mlx-residency-risk", "Metal3 is answered on the paravirtual device: MLX "
		    "builds residency sets and fails (\"Unable to construct residency set\")");
	else
		add(out, LM_LINT_NOTE, "mlx", "MLX is not put at risk: Metal3 stays false, so MLX does not try "
		    "residency sets, and the device name stays \"%s\"", shimmed->device);
	if (profile->caps.max_threadgroup_memory > FAMILY_THREADGROUP_MAX)
		add(out, LM_LINT_WARNING, "threadgroup-memory-beyond-families", "max_threadgroup_memory %llu: no Apple "
		    "family reports more than 32 KB; kernels that really allocate more may fail",
		    (unsigned long long)profile->caps.max_threadgroup_memory);
	if (profile->caps.max_threadgroup_memory <= stock->max_threadgroup_memory)
		add(out, LM_LINT_NOTE, "threadgroup-memory-unchanged", "max_threadgroup_memory %llu does not raise the "
		    "stock %llu bytes: the answer stays as it is", (unsigned long long)profile->caps.max_threadgroup_memory,
		    (unsigned long long)stock->max_threadgroup_memory);
	if (profile->caps.has_recommended_working_set_size)
		add(out, LM_LINT_NOTE, "working-set", "recommendedMaxWorkingSetSize raised to at least %llu bytes",
		    (unsigned long long)profile->caps.recommended_working_set_size);
	if (profile->caps.apple_family_max > newest)
		add(out, LM_LINT_WARNING, "ceiling-beyond-known-families", "apple_family_max %d is above %s, the "
		    "newest Apple family this lume-metal knows; software may not expect such an answer",
		    profile->caps.apple_family_max, lm_family_label(newest, a, sizeof(a)));
	if (host_family >= LM_FAMILY_APPLE_FIRST && profile->caps.apple_family_max > host_family)
		add(out, LM_LINT_WARNING, "ceiling-above-host", "apple_family_max %s is above this host's own family "
		    "%s: the guest claims GPU features the host does not have; kernels that rely on them may fail "
		    "or be slow", lm_family_label(profile->caps.apple_family_max, a, sizeof(a)),
		    lm_family_label(host_family, b, sizeof(b)));
	lint_expectations(profile, stock, out);
	if (profile->validated_count == 0)
		add(out, LM_LINT_WARNING, "not-validated", "not validated: validated_on is empty; try it on your "
		    "own host and guest (the probe, then your workload) before relying on it");
	lm_report_free(stock);
	lm_report_free(shimmed);
	return lint_overflow; /* 0, or the error add() set */
}
