/* Internal: the one default host preference -- the setting of a profile that names none
 * (common/src/profile.c) and lm_host_pref_default's (host/lib/prefs/prefs.c). The built-in
 * profiles (the JSON files in common/profiles) spell the same out; test_profile checks that. */
#ifndef LM_PREF_DEFAULT_H
#define LM_PREF_DEFAULT_H

/* The domain Virtualization.framework's paravirtualized GPU reads, and the key that unlocks the
 * device's full feature level in the guest (docs/preferences.md); the value is bool true. */
#define LM_PREF_DEFAULT_DOMAIN "com.apple.gpusw.ParavirtualizedGraphics"
#define LM_PREF_DEFAULT_KEY "ForceUnrestrictedDeviceFeatureLevel"

#endif
