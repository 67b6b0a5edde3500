/* Levenshtein distance, capped: anything beyond `cap` is cap + 1. The suggestions for a mistyped
 * command or subcommand (help.c) and option (options.c) all measure with it (the library's own
 * is not exported: the tool links only the public API). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

size_t lm_cli_distance(const char *a, const char *b, size_t cap)
{
	size_t la = strlen(a), lb = strlen(b), i, j, *row, best, d;

	if (la > lb + cap || lb > la + cap)
		return cap + 1;
	if ((row = malloc((lb + 1) * sizeof(*row))) == NULL)
		return cap + 1;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		best = row[0];
		for (j = 1; j <= lb; j++) {
			size_t up = row[j];
			d = diag + (a[i - 1] != b[j - 1]);
			if (row[j] + 1 < d)
				d = row[j] + 1;
			if (row[j - 1] + 1 < d)
				d = row[j - 1] + 1;
			row[j] = d;
			diag = up;
			if (d < best)
				best = d;
		}
		if (best > cap) {
			free(row);
			return cap + 1;
		}
	}
	d = row[lb];
	free(row);
	return d > cap ? cap + 1 : d;
}
