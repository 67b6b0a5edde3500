/* lume-metal: the host preference (com.apple.gpusw.ParavirtualizedGraphics by default).
 *
 * One interface over two stores: CoreFoundation's CFPreferences (macOS) and plist files
 * DIR/<domain>.plist written with libplist (elsewhere, and whenever a prefs dir is given).
 * The first change records the exact previous state in the state journal; restore brings it back.
 */
#ifndef LUME_METAL_PREFS_H
#define LUME_METAL_PREFS_H

#include "common.h"

#include "context.h"
#include "profile.h"
#include "vm.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
	char store[1100];        /* "cfpreferences" or "plist:/path/to/<domain>.plist" */
	char domain[256];
	char key[256];
	int present;             /* the key exists */
	char value[512];         /* "true (bool)", "1 (integer)", "YES (string)"; "" when absent */
	int matches;             /* the current value equals the wanted one */
	int managed;             /* forced by a configuration profile (CFPreferences only) */
	int recorded;            /* an original state is recorded (a change of ours is in effect) */
	char original[512];      /* "absent file", "absent key", "false (bool)", ...; "" when not recorded */
	double changed_at;       /* epoch seconds of our change; 0 when none is in effect */
	int changed;             /* out of enable/disable: 1 when this call changed the store
	                            (with dry_run: 1 when it would) */
	int file_present;        /* the domain's plist file exists (CFPreferences: the domain has keys) */
	char written[512];       /* the value lume-metal wrote, "" when not recorded */
	char managed_value[512]; /* the forced value when managed, else "" */
	/* Whose domain: the preference is per user, read by the process that runs a VM as its user. */
	char user[64];           /* the domain's user: the one lume-metal runs as */
	char server_user[64];    /* the user the Lume server (lume serve) runs as; "" when none found */
	long server_pid;         /* its PID; 0 when none was found or it is not visible */
	int user_mismatch;       /* a Lume server runs as another user: its VMs do not read `user`'s domain */
	int kept;                /* the recorded change is kept by the fleet (keep_host): rolling back the
	                            last VM leaves it; 0 when per VM (restored with the last VM) or none */
} lm_host_pref_info;

/* The documented default setting (the default profile's): domain
 * com.apple.gpusw.ParavirtualizedGraphics, key ForceUnrestrictedDeviceFeatureLevel, bool true.
 * The strings are static. */
LM_EXTERN(void) lm_host_pref_default(lm_pref_setting *out);

/* Set the preference to `want` (the profile's), recording the previous state the first time.
 * With ctx's keep_host, the recorded change is marked as kept by the fleet (also when it was
 * recorded earlier); the mark goes only with the record, when the preference is restored.
 * Refuses with LM_EMANAGED when a configuration profile forces the key, and with LM_EWRONGUSER,
 * before anything is written, when the domain is not the Lume server's user's (see
 * docs/preferences.md; ctx's force_user_mismatch overrides).
 * With ctx's dry_run set, computes `info` and changes nothing. */
LM_EXTERN(int) lm_host_pref_enable(lm_context *ctx, const lm_pref_setting *want, lm_host_pref_info *info);

/* Restore the recorded previous state exactly. LM_ECONFLICT when the key no longer holds the
 * value we wrote (someone else changed it) unless ctx's force is set. No record: no-op, changed=0.
 * LM_EWRONGUSER as for enable. */
LM_EXTERN(int) lm_host_pref_disable(lm_context *ctx, lm_host_pref_info *info);

/* Current value, store, managed or not, recorded original and when it changed. `want` may be
 * NULL (the default profile's preference is used). */
LM_EXTERN(int) lm_host_pref_status(lm_context *ctx, const lm_pref_setting *want, lm_host_pref_info *info);

/* The VMs the journal records as enabled (or being enabled), each with the host preference mode it
 * was enabled with, whether it needed the preference, and whether the preference is kept for it
 * (`keeps`: it was not proven without it). For `host status`: who relies on the preference. */
typedef struct {
	size_t size;             /* sizeof(lm_host_pref_vm) as the library was built */
	char vm[LM_VM_NAME_MAX];
	lm_host_pref_mode mode;
	lm_pref_needed needed;
	int keeps;
	const char *journal_status; /* what the journal says of it (static): "enabled", "enabling",
	                               "rolling back" */
} lm_host_pref_vm;

/* *out: *count pointers and a NULL after them (lm_host_pref_vms_free), in the journal's order;
 * reads only. An array of pointers: a newer library's larger lm_host_pref_vm leaves it readable. */
LM_EXTERN(int) lm_host_pref_vms(lm_context *ctx, lm_host_pref_vm ***out, size_t *count);
LM_EXTERN(void) lm_host_pref_vms_free(lm_host_pref_vm **vms);

/* The preference's -currentHost value (`defaults -currentHost`; a ByHost file,
 * ~/Library/Preferences/ByHost/<domain>.<hardware UUID>.plist). CFPreferences reads the current
 * user's current-host value before the any-host one lume-metal writes, so one there wins for the
 * process that runs the VM: lume-metal never writes it, and reports it. */
typedef struct {
	size_t size;             /* sizeof(lm_host_pref_byhost) as the library was built */
	int present;             /* the key has a -currentHost value */
	char value[512];         /* "false (bool)", ...; "" when absent */
	int matches;             /* it equals the wanted value (0 when absent) */
	char where[1104];        /* what was read: the ByHost file, "CFPreferences, current host", or
	                            "not read: WHY" (the hardware UUID unknown) */
} lm_host_pref_byhost;

/* Read it for `want`'s domain and key (NULL: the default profile's). Reads only. */
LM_EXTERN(int) lm_host_pref_byhost_status(lm_context *ctx, const lm_pref_setting *want, lm_host_pref_byhost *out);

#ifdef __cplusplus
}
#endif
#endif
