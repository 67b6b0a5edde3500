/* Tests and benchmarks at scale (issue 25, item 7): a state directory that remembers many VMs
 * their manager no longer knows -- journal entries, known_hosts pins, lock files -- written
 * straight in the documented formats (docs/state-format.md, docs/security.md), so that setting
 * up 100,000 of them costs a write, not 100,000 enables. */
#ifndef LM_SCALE_STATE_H
#define LM_SCALE_STATE_H

#include <stddef.h>

#include "lume-metal.h"

/* The name of gone VM i ("gone-000042"), into buf. */
void scale_gone_name(size_t i, char *buf, size_t size);

/* In ctx's state directory: a journal recording `n` gone VMs and the `live` names (NULL-terminated,
 * may be NULL), each "enabled" under the Lume API; known_hosts pinning every one of them; with
 * `locks`, each one's lock file. 0, or -1 with a message on stderr. */
int scale_state_make(lm_context *ctx, size_t n, const char *const *live, int locks);

/* How many "vm-*.lock" files the state directory holds. */
size_t scale_lock_files(lm_context *ctx);

/* The peak resident size of this process so far, in MB, and the CPU time it has used, user and
 * system, in seconds (getrusage). */
double scale_peak_mb(void);
double scale_cpu_seconds(void);

#endif
