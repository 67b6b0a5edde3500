/* Internal: the one place that reads clocks. Monotonic for deadlines and durations (immune to
 * clock changes), epoch for what is recorded and compared with a guest's boot time. */
#ifndef LM_CLOCK_H
#define LM_CLOCK_H

double lm_clock_monotonic(void);
double lm_clock_epoch(void);
/* Sleep, resuming after signals; <= 0 returns at once. */
void lm_clock_sleep(double seconds);

#endif
