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
/* The one "last VM out" rule, for rollback, enable's undo and the ablation: once no VM the journal
 * has enabled needs the preference, a change of ours is given back -- unless the fleet keeps the
 * host unlocked (the recorded change was made with keep_host) and lm_options.restore_host does not
 * say otherwise. *fate says which; *before is the status it decided on (read only when no VM is
 * left), and *after what the restore left (untouched unless LM_PREF_RESTORED). A question that
 * fails is the caller's error, never a "no". */
typedef enum { LM_PREF_NEEDED, LM_PREF_KEPT, LM_PREF_RESTORED, LM_PREF_NOT_OURS } lm_pref_fate;
int lm_host_pref_last_out_locked(lm_state *st, lm_host_pref_info *before, lm_host_pref_info *after,
    lm_pref_fate *fate);
/* Whether the preference may be taken away while VMs the journal has enabled -- but `leaving`
 * (NULL: none), the one on its way out -- still need it: 0 when none does or lm_options.force says
 * so, else LM_ECONFLICT naming them, and `why` (what taking it away would do) in the message.
 * host disable and the ablation's stock arm ask it. */
int lm_host_pref_unneeded_locked(lm_state *st, const char *leaving, const char *why);
/* 1 when the journal records a change of ours that is in effect (restore pending). */
int lm_host_pref_recorded(lm_state *st);

/* ---- whose domain (user.c) ----
 *
 * Fills info's user, server_user, server_pid and user_mismatch. With `writing`, a mismatch is
 * LM_EWRONGUSER (a warning with ctx's force_user_mismatch): a Lume server on this host runs as
 * another user, or lume-metal runs as root with no server found and no prefs dir given. */
int lm_prefs_check_user(lm_context *ctx, lm_host_pref_info *info, int writing);

#endif
