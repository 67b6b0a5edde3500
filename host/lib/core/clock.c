#include "clock.h"

#include <errno.h>
#include <time.h>

static double seconds_of(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double lm_clock_monotonic(void)
{
	return seconds_of(CLOCK_MONOTONIC);
}

double lm_clock_epoch(void)
{
	return seconds_of(CLOCK_REALTIME);
}

void lm_clock_sleep(double seconds)
{
	struct timespec ts;

	if (seconds <= 0)
		return;
	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}
