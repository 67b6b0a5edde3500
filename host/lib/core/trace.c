/* The timing trace (trace.h). */
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "context_internal.h"

int lm_trace_open(int *fd_out)
{
	const char *path = getenv(LM_TRACE_ENV);

	*fd_out = -1;
	if (path == NULL || path[0] == '\0')
		return 0;
	/* O_APPEND: the workers of a fleet and other processes add whole lines at the end, none over
	 * another's. */
	if ((*fd_out = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0)
		return lm_error_set(LM_EIO, "%s=%s: cannot open the trace file: %s; unset the variable or name a "
		    "file that can be written", LM_TRACE_ENV, path, strerror(errno));
	return 0;
}

void lm_trace(const lm_context *ctx, const char *vm, const char *what, double since)
{
	char line[512];
	double now;
	int n;

	if (ctx == NULL || ctx->trace_fd < 0)
		return;
	now = lm_clock_monotonic();
	n = snprintf(line, sizeof(line), "%.6f %.6f %ld %s %s\n", since, now - since, (long)getpid(),
	    vm != NULL && vm[0] != '\0' ? vm : "-", what);
	if (n <= 0)
		return;
	if ((size_t)n >= sizeof(line)) { /* a long name: the line cut, still one line */
		n = (int)sizeof(line) - 1;
		line[n - 1] = '\n';
	}
	/* One write(2) per line: lines of threads and processes never mix. A trace that cannot be
	 * written loses a line; the command it watches goes on. */
	if (write(ctx->trace_fd, line, (size_t)n) < 0)
		return;
}

void lm_trace_request(const lm_context *ctx, const char *what, const char *a, const char *b, double since)
{
	char line[400];

	if (ctx == NULL || ctx->trace_fd < 0)
		return;
	snprintf(line, sizeof(line), "%s %s %s", what, a != NULL ? a : "-", b != NULL ? b : "-");
	lm_trace(ctx, NULL, line, since);
}

void lm_trace_clock(const lm_context *ctx)
{
	char line[64];
	double now, epoch;

	if (ctx == NULL || ctx->trace_fd < 0)
		return;
	now = lm_clock_monotonic();
	epoch = lm_clock_epoch();
	snprintf(line, sizeof(line), "clock %.6f", epoch);
	lm_trace(ctx, NULL, line, now);
}
