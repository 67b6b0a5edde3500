/* lume-sim: the host preference a simulated VM reads when it starts.
 *
 * On a Mac the process that runs a VM (Virtualization.framework, inside Lume) reads
 * com.apple.gpusw.ParavirtualizedGraphics ForceUnrestrictedDeviceFeatureLevel from its user's
 * preferences when it starts, and the guest's paravirtual GPU keeps that feature level until the
 * VM process ends. The simulator does the same with the plist file lume-metal writes off macOS:
 * at every run it reads the file, records the level for that VM, and hands it to the guest, whose
 * fake Metal runs the unlocked kernels only at the unlocked level (tests/guest/metal).
 *
 * CFPreferences reads the user's value for the current host (`defaults -currentHost`, the file
 * ByHost/<domain>.<hardware UUID>.plist) before the any-host one: a key there decides. This
 * machine's ID (/etc/machine-id) stands for the hardware UUID, written as macOS writes it
 * (upper case, 8-4-4-4-12), as lume-metal's plist store does. */
#include "sim.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lm_plist_api.h" /* libplist, across its versions */

#define SIM_PREFS_DOMAIN "com.apple.gpusw.ParavirtualizedGraphics"
#define SIM_PREFS_KEY "ForceUnrestrictedDeviceFeatureLevel"
#define SIM_PREFS_MAX (16L * 1024 * 1024)

/* CFPreferencesGetAppBooleanValue's reading: a true bool, a non-zero number, or the string
 * YES/true (any case) is on; anything else, or nothing, is off. */
static int value_is_on(plist_t v)
{
	switch (plist_get_node_type(v)) {
	case PLIST_BOOLEAN: {
		uint8_t b = 0;
		plist_get_bool_val(v, &b);
		return b != 0;
	}
	case PLIST_UINT: {
		uint64_t u = 0;
		plist_get_uint_val(v, &u);
		return u != 0;
	}
	case PLIST_REAL: {
		double d = 0;
		plist_get_real_val(v, &d);
		return d != 0;
	}
	case PLIST_STRING: {
		char *s = NULL;
		int on;
		plist_get_string_val(v, &s);
		on = s != NULL && (strcasecmp(s, "YES") == 0 || strcasecmp(s, "true") == 0);
		free(s);
		return on;
	}
	default: return 0;
	}
}

/* The key's value in one preferences file: 1 on, 0 off, -1 when the file or the key is absent. */
static int file_level(const char *path)
{
	FILE *f;
	char *data = NULL;
	long len;
	plist_t root = NULL, v;
	int on = -1;

	if ((f = fopen(path, "rb")) == NULL)
		return -1;
	if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) > 0 && len <= SIM_PREFS_MAX && fseek(f, 0, SEEK_SET) == 0 &&
	    (data = malloc((size_t)len)) != NULL && fread(data, 1, (size_t)len, f) == (size_t)len) {
		lm_plist_from_memory(data, (uint32_t)len, &root);
		if (root != NULL && plist_get_node_type(root) == PLIST_DICT &&
		    (v = plist_dict_get_item(root, SIM_PREFS_KEY)) != NULL)
			on = value_is_on(v);
	}
	free(data);
	fclose(f);
	if (root != NULL)
		plist_free(root);
	return on;
}

int sim_host_level_unlocked(const sim *s)
{
	char path[SIM_DIR_MAX + 128], id[40] = "", uuid[40];
	FILE *f;
	int on = -1;

	if (s->prefs_dir == NULL)
		return 0;
	if ((f = fopen("/etc/machine-id", "r")) != NULL) {
		if (fgets(id, sizeof(id), f) != NULL && strspn(id, "0123456789abcdef") == 32) {
			snprintf(uuid, sizeof(uuid), "%.8s-%.4s-%.4s-%.4s-%.12s", id, id + 8, id + 12, id + 16, id + 20);
			for (char *c = uuid; *c != '\0'; c++)
				*c = (char)toupper((unsigned char)*c);
			snprintf(path, sizeof(path), "%s/ByHost/" SIM_PREFS_DOMAIN ".%s.plist", s->prefs_dir, uuid);
			on = file_level(path);
		}
		fclose(f);
	}
	if (on < 0) {
		snprintf(path, sizeof(path), "%s/" SIM_PREFS_DOMAIN ".plist", s->prefs_dir);
		on = file_level(path);
	}
	return on > 0; /* absent: the restricted default */
}
