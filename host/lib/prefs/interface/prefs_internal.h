/* The prefs module's interface to the modules above it (flow): the preference manager on a
 * journal the caller already holds. */
#ifndef LM_PREFS_INTERNAL_H
#define LM_PREFS_INTERNAL_H

#include "lume-metal/prefs.h"
#include "state.h"

/* ---- the preference manager on an open journal (prefs.c) ----
 *
 * The enable/rollback flow holds the journal (lm_state_open) while it also records VMs; these
 * do the same as lm_host_pref_enable/disable/status inside that lock. The journal is saved by
 * them when they change it (the caller may save again after its own changes). Dry run comes
 * from the journal's context (lm_options.dry_run); force likewise. */
int lm_host_pref_enable_locked(lm_state *st, const lm_pref_setting *want, lm_host_pref_info *info);
int lm_host_pref_disable_locked(lm_state *st, lm_host_pref_info *info);
int lm_host_pref_status_locked(lm_state *st, const lm_pref_setting *want, lm_host_pref_info *info);
/* 1 when the journal records a change of ours that is in effect (restore pending). */
int lm_host_pref_recorded(lm_state *st);

/* ---- whose domain (user.c) ----
 *
 * Fills info's user, server_user, server_pid and user_mismatch. With `writing`, a mismatch is
 * LM_EWRONGUSER (a warning with ctx's force_user_mismatch): a Lume server on this host runs as
 * another user, or lume-metal runs as root with no server found and no prefs dir given. */
int lm_prefs_check_user(lm_context *ctx, lm_host_pref_info *info, int writing);

#endif
