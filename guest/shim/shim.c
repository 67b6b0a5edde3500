/* lume-metal shim: widen a Metal device's capability answers in one process.
 *
 * Injected with DYLD_INSERT_LIBRARIES (macOS) or LD_PRELOAD (Linux tests). It reads its
 * configuration from the environment once, at load; when anything is missing or malformed it
 * installs nothing and the process stays exactly stock. The variables mean what they mean to
 * Cua's LumeMetalCapabilities.dylib, so files written for it keep working (docs/guest.md):
 *
 *   LUME_METAL_APPLE_FAMILY_MAX             required, 1001..1999: supportsFamily: answers true for
 *                                           Apple families 1001..value; every other answer is the
 *                                           device's own.
 *   LUME_METAL_MAX_THREADGROUP_MEMORY       absent or empty: 65536. maxThreadgroupMemoryLength
 *                                           raised to at least this (0: not raised).
 *   LUME_METAL_RECOMMENDED_WORKING_SET_SIZE only when set and not empty: recommendedMaxWorkingSetSize
 *                                           raised to at least this.
 *   LUME_METAL_LOG=1                        one line on stderr when the shim stays stock, and why.
 *   LUME_METAL_GUEST_SIP                    enabled, disabled or custom: the guest's SIP state, for
 *                                           the children rule (absent or else: not reported).
 *   LUME_METAL_SHIM_ARM64E=1                the installed shim has an arm64e slice (children rule).
 *   LUME_METAL_INHERIT=1                    every child keeps the shim; 0: every child starts
 *                                           without it; absent or anything else: the rule.
 *   LUME_METAL_RECORD_DIR                   an existing directory: this process's activation record
 *                                           goes there (docs/activation-format.md).
 *   LUME_METAL_INHERIT_REASON               what the host says children get, for the record.
 *
 * The names of the Tart images' shim (cirruslabs/macos-image-templates, a renamed copy of Cua's)
 * are read too, so a LaunchAgent written for TartMetalCapabilities.dylib works with this shim:
 * TART_METAL_APPLE_FAMILY_MAX, TART_METAL_MAX_THREADGROUP_MEMORY and
 * TART_METAL_RECOMMENDED_WORKING_SET_SIZE, each used only when its LUME_METAL_* twin is absent or
 * empty (the LUME_METAL_* one wins when both are set). Built with LM_SHIM_TART_ONLY it reads only
 * the TART_METAL_* names, as the Tart images' own shim does (the simulated Tart image carries
 * that build).
 *
 * Numbers are decimal or 0x hexadecimal. A leading zero (octal to strtoull, so "010" is 8 for
 * Cua's shim), a sign or white space is refused: the process stays stock and says why.
 *
 * Children are decided at each spawn (children.c, interpose.c); the device classes are hooked
 * by hooks.c; activation records are written by records.c; the tables they share are state.c's
 * (shim_internal.h). This file is the core, shaped like Cua's shim: the configuration, load and
 * exit, the Metal entry points and the probe's question.
 */
#include "shim_internal.h"

/* ---- configuration -------------------------------------------------------------------- */

static int is_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

/* Decimal ("0" or no leading zero) or 0x/0X hexadecimal, nothing else, no overflow. Returns 0, or
 * why not: the text that follows the variable's name in the log line. */
static const char *parse_number(const char *s, lm_u64 *out)
{
	lm_u64 v = 0;
	unsigned base = 10;

	for (const char *p = s; *p != '\0'; p++) {
		if (is_space(*p))
			return " contains white space: write the number alone";
	}
	if (*s == '+' || *s == '-')
		return " has a sign: write a plain number";
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	} else if (s[0] == '0' && s[1] != '\0') {
		return " has a leading zero (octal to other parsers: 010 is 8): write it without";
	}
	if (*s == '\0')
		return " is not a number";
	for (; *s != '\0'; s++) {
		unsigned d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A' + 10);
		else
			return base == 16 ? " is not a hexadecimal number" : " is not a decimal number";
		if (v > (~0ULL - d) / base)
			return " is too large";
		v = v * base + d;
	}
	*out = v;
	return 0;
}

/* One setting under its LUME_METAL_* name or its TART_METAL_* twin (the first wins when both are
 * set and not empty); *name gets the one read, for messages. */
static const char *config_env(const char *lume, const char *tart, const char **name)
{
#if !defined(LM_SHIM_TART_ONLY)
	const char *s = getenv(lume);

	*name = lume;
	if (s != 0 && *s != '\0')
		return s;
#else
	(void)lume;
#endif
	*name = tart;
	return getenv(tart);
}

/* One setting: 0 absent or empty, 1 read into *out, -1 refused (logged). */
static int config_number(const char *lume, const char *tart, lm_u64 *out, const char **name)
{
	const char *s = config_env(lume, tart, name), *why;

	if (s == 0 || *s == '\0')
		return 0;
	if ((why = parse_number(s, out)) != 0) {
		lm_shim_log_stock(lm_shim_cfg.why, *name, why, "");
		return -1;
	}
	return 1;
}

static void config_read(void)
{
	const char *s, *name;
	lm_u64 v;
	int rc;

	s = getenv("LUME_METAL_LOG");
	lm_shim_cfg.log = s != 0 && lm_shim_str_eq(s, "1");

	if ((rc = config_number("LUME_METAL_APPLE_FAMILY_MAX", "TART_METAL_APPLE_FAMILY_MAX", &v, &name)) <= 0) {
		if (rc == 0)
#if defined(LM_SHIM_TART_ONLY)
			lm_shim_log_stock(lm_shim_cfg.why, "TART_METAL_APPLE_FAMILY_MAX is not set, or empty", "", "");
#else
			lm_shim_log_stock(lm_shim_cfg.why, "LUME_METAL_APPLE_FAMILY_MAX is not set, or empty", "", "");
#endif
		return;
	}
	if (v < 1001 || v > 1999) {
		lm_shim_log_stock(lm_shim_cfg.why, name, " must be in 1001..1999 (Apple families)", "");
		return;
	}
	lm_shim_cfg.family_max = (long)v;

	lm_shim_cfg.threadgroup_floor = 65536;
	if ((rc = config_number("LUME_METAL_MAX_THREADGROUP_MEMORY", "TART_METAL_MAX_THREADGROUP_MEMORY", &v, &name)) < 0)
		return;
	if (rc == 1)
		lm_shim_cfg.threadgroup_floor = (unsigned long)v;

	if ((rc = config_number("LUME_METAL_RECOMMENDED_WORKING_SET_SIZE", "TART_METAL_RECOMMENDED_WORKING_SET_SIZE",
	        &v, &name)) < 0)
		return;
	if (rc == 1) {
		lm_shim_cfg.has_working_set = 1;
		lm_shim_cfg.working_set_floor = v;
	}
	lm_shim_cfg.valid = 1;
}

__attribute__((constructor)) static void shim_load(void)
{
	lm_shim_record_init();
	lm_shim_kids_read();
#if !defined(__APPLE__)
	lm_shim_spawn_init();
#endif
	config_read();
	if (!lm_shim_cfg.valid) {
		lm_shim_init_why = "profile not active";
		lm_shim_record_update(WRITTEN_LOAD);
		return;
	}
#if !defined(__APPLE__)
	lm_shim_hook_loaded_classes();
#endif
	lm_shim_hook_private_base(objc_lookUpClass("_MTLDevice"));
	lm_shim_record_update(WRITTEN_LOAD);
}

/* At a normal exit: the last record says the process ended (a signal keeps the last update). */
__attribute__((destructor)) static void shim_unload(void)
{
	lm_shim_record_update(WRITTEN_EXIT);
}

/* ---- interposed Metal entry points ---------------------------------------------------- */

static void hook_all(id devices)
{
	SEL count_sel = sel_registerName("count");
	SEL at_sel = sel_registerName("objectAtIndex:");
	Class cls;
	unsigned long n;

	if (devices == 0)
		return;
	cls = object_getClass(devices);
	if (!class_respondsToSelector(cls, count_sel) || !class_respondsToSelector(cls, at_sel))
		return;
	n = ((unsigned long (*)(id, SEL))class_getMethodImplementation(cls, count_sel))(devices, count_sel);
	for (unsigned long i = 0; i < n; i++)
		lm_shim_hook_device(((id (*)(id, SEL, unsigned long))class_getMethodImplementation(cls, at_sel))(
		    devices, at_sel, i));
}

#if defined(__APPLE__)
/* dyld binds every other image's calls to these; calls from this image reach Metal itself. */
static id create_default_device(void)
{
	id device = MTLCreateSystemDefaultDevice();

	lm_shim_hook_device(device);
	return device;
}

static id copy_all_devices(void)
{
	id devices = MTLCopyAllDevices();

	hook_all(devices);
	return devices;
}

__attribute__((used, section("__DATA,__interpose"))) static const struct {
	const void *replacement;
	const void *original;
} interpose[] = {
	{ (const void *)create_default_device, (const void *)MTLCreateSystemDefaultDevice },
	{ (const void *)copy_all_devices, (const void *)MTLCopyAllDevices },
	{ (const void *)lm_shim_execve_hook, (const void *)execve },
	{ (const void *)lm_shim_posix_spawn_hook, (const void *)posix_spawn },
	{ (const void *)lm_shim_posix_spawnp_hook, (const void *)posix_spawnp },
};
#else

LM_EXPORT id MTLCreateSystemDefaultDevice(void)
{
	static void *next;
	id (*fn)(void) = (id (*)(void))lm_shim_next_symbol(&next, "MTLCreateSystemDefaultDevice");
	id device = fn != 0 ? fn() : 0;

	lm_shim_hook_device(device);
	return device;
}

LM_EXPORT id MTLCopyAllDevices(void)
{
	static void *next;
	id (*fn)(void) = (id (*)(void))lm_shim_next_symbol(&next, "MTLCopyAllDevices");
	id devices = fn != 0 ? fn() : 0;

	hook_all(devices);
	return devices;
}
#endif

/* ---- what the probe asks -------------------------------------------------------------- */

/* 1 when at least one device class in this process answers through the shim. */
LM_EXPORT int lume_metal_shim_active(void);
int lume_metal_shim_active(void)
{
	for (lm_size i = 0; i < LM_SLOTS; i++) {
		if (__atomic_load_n(&lm_shim_slots[i].cls, __ATOMIC_ACQUIRE) != 0 &&
		    __atomic_load_n(&lm_shim_slots[i].state, __ATOMIC_ACQUIRE) == SLOT_HOOKED)
			return 1;
	}
	return 0;
}
