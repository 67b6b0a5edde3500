/* The headline numbers: medians of samples_ts (as the published evidence), and their ratio. */
#include <stdlib.h>

#include "bench_internal.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double lm_bench_median(double *v, size_t n)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double lm_bench_ratio(double a, double b)
{
	return a > 0 && b > 0 ? a / b : 0;
}
