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
 *   LUME_METAL_INHERIT=1                    keep the shim in the injection variable for children.
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
 * Children start clean: whether configured or not, the shim removes its own path from the
 * injection variable at load (dropping the variable when nothing else is left in it). A
 * SIP-protected arm64e program started by the workload with SIP off would otherwise inherit a
 * dylib it cannot load, and dyld terminates such a process.
 *
 * Finding the device class, in order of preference:
 *   1. -[_MTLDevice initGPUFamilySupport], which runs while a device is created, hooks the new
 *      device's concrete class before its first family query;
 *   2. MTLCreateSystemDefaultDevice / MTLCopyAllDevices are interposed and hook the classes of the
 *      devices they return (covers a missing private class or method);
 *   3. on the GNU runtime, classes loaded later (a dlopen'ed Metal) are caught as they load.
 *
 * Only the concrete class is hooked; its superclass is never modified, so a concrete class that
 * overrides supportsFamily: and calls super keeps working. Every class gets its own slot with its
 * own saved originals and its own entry points, installed at most once, from any thread. The
 * hooked methods read their slot and the configuration and call the original: no allocation, no
 * lock.
 */
#include "../guest_runtime.h"

#define LM_EXPORT __attribute__((visibility("default")))
#define LM_SLOTS 8

enum { SLOT_CLAIMED = 0, SLOT_HOOKED = 1, SLOT_REJECTED = 2 };
enum { INIT_NONE = 0, INIT_BUSY = 1, INIT_DONE = 2 };

typedef unsigned char (*family_fn)(id, SEL, long);
typedef unsigned long (*length_fn)(id, SEL);
typedef lm_u64 (*size_fn)(id, SEL);
typedef void *(*init_fn)(id, SEL);

/* Written once by the constructor, before any hook is installed; read-only afterwards. */
static struct {
	int valid;
	int log;
	long family_max;
	unsigned long threadgroup_floor;
	int has_working_set;
	lm_u64 working_set_floor;
} cfg;

/* One hooked (or refused) class per slot. cls is claimed with a CAS; the originals are stored
 * before the hooks are installed; state is published last. */
static struct slot {
	Class cls;
	int state;
	family_fn supports_family;
	length_fn max_threadgroup_memory;
	size_fn working_set;
} slots[LM_SLOTS];

static int init_state;
static init_fn init_original;
#if !defined(__APPLE__)
static void (*load_callback_next)(Class, void *);
#endif

/* ---- diagnostics ---------------------------------------------------------------------- */

static int str_eq(const char *a, const char *b)
{
	while (*a != '\0' && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

/* One line on stderr, only with LUME_METAL_LOG=1: "lume-metal-shim: stock: A B C\n". */
static void log_stock(const char *a, const char *b, const char *c)
{
	char line[256];
	const char *parts[] = { "lume-metal-shim: stock: ", a, b, c, "\n" };
	lm_size n = 0;

	if (!cfg.log)
		return;
	for (lm_size i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		for (const char *p = parts[i]; p != 0 && *p != '\0' && n < sizeof(line) - 1; p++)
			line[n++] = (*p >= 0x20 && *p != 0x7f) || *p == '\n' ? *p : '?';
	}
	line[n - 1] = '\n';
	(void)write(2, line, n);
}

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
		log_stock(*name, why, "");
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
	cfg.log = s != 0 && str_eq(s, "1");

	if ((rc = config_number("LUME_METAL_APPLE_FAMILY_MAX", "TART_METAL_APPLE_FAMILY_MAX", &v, &name)) <= 0) {
		if (rc == 0)
#if defined(LM_SHIM_TART_ONLY)
			log_stock("TART_METAL_APPLE_FAMILY_MAX is not set, or empty", "", "");
#else
			log_stock("LUME_METAL_APPLE_FAMILY_MAX is not set, or empty", "", "");
#endif
		return;
	}
	if (v < 1001 || v > 1999) {
		log_stock(name, " must be in 1001..1999 (Apple families)", "");
		return;
	}
	cfg.family_max = (long)v;

	cfg.threadgroup_floor = 65536;
	if ((rc = config_number("LUME_METAL_MAX_THREADGROUP_MEMORY", "TART_METAL_MAX_THREADGROUP_MEMORY", &v, &name)) < 0)
		return;
	if (rc == 1)
		cfg.threadgroup_floor = (unsigned long)v;

	if ((rc = config_number("LUME_METAL_RECOMMENDED_WORKING_SET_SIZE", "TART_METAL_RECOMMENDED_WORKING_SET_SIZE",
	        &v, &name)) < 0)
		return;
	if (rc == 1) {
		cfg.has_working_set = 1;
		cfg.working_set_floor = v;
	}
	cfg.valid = 1;
}

/* ---- children start clean -------------------------------------------------------------- */

/* dyld splits DYLD_INSERT_LIBRARIES at ':'; ld.so splits LD_PRELOAD at ':' and ' '. */
#if defined(__APPLE__)
#define LM_INJECTION_VARIABLE "DYLD_INSERT_LIBRARIES"
#define LM_INJECTION_SPACE_SEPARATES 0
#else
#define LM_INJECTION_VARIABLE "LD_PRELOAD"
#define LM_INJECTION_SPACE_SEPARATES 1
#endif

static const char *base_name(const char *path, const char *end)
{
	const char *b = path;

	for (const char *p = path; p < end; p++) {
		if (*p == '/')
			b = p + 1;
	}
	return b;
}

/* The entry [e, end) names this image: it has the file name this image was loaded from (the same
 * path, the name found through a search path, or a link with the same name). */
static int names_self(const char *e, const char *end, const char *self)
{
	const char *self_end = self, *eb = base_name(e, end), *sb;

	while (*self_end != '\0')
		self_end++;
	sb = base_name(self, self_end);
	if (eb == end || end - eb != self_end - sb)
		return 0;
	for (; eb < end; eb++, sb++) {
		if (*eb != *sb)
			return 0;
	}
	return 1;
}

/* Remove this image from the injection variable, in place: the value only ever gets shorter, so
 * no allocation. (The strings a process receives at exec, and those setenv makes, are writable.)
 * Kept entries are joined with ':', which both dyld and ld.so accept. */
static void injection_clean(void)
{
	const char *inherit = getenv("LUME_METAL_INHERIT");
	char *value = getenv(LM_INJECTION_VARIABLE), *r, *w;
	lm_dl_info info;

	if ((inherit != 0 && str_eq(inherit, "1")) || value == 0)
		return;
	if (dladdr((const void *)injection_clean, &info) == 0 || info.dli_fname == 0)
		return;
	r = w = value;
	while (*r != '\0') {
		char *e = r, *end;

		while (*r != '\0' && *r != ':' && !(LM_INJECTION_SPACE_SEPARATES && *r == ' '))
			r++;
		end = r;
		if (*r != '\0')
			r++;
		if (end == e || names_self(e, end, info.dli_fname))
			continue;
		if (w != value)
			*w++ = ':';
		while (e < end)
			*w++ = *e++;
	}
	*w = '\0';
	if (w == value)
		(void)unsetenv(LM_INJECTION_VARIABLE);
}

/* ---- the hooked methods: one set of entry points per slot ------------------------------- */

#define LM_HOOKS(i)                                                                        \
	static unsigned char supports_family_##i(id self, SEL cmd, long family)                \
	{                                                                                      \
		family_fn orig = __atomic_load_n(&slots[i].supports_family, __ATOMIC_ACQUIRE); \
		unsigned char answer = orig(self, cmd, family);                                \
		if (family >= 1001 && family <= cfg.family_max)                                \
			return 1;                                                              \
		return answer;                                                                 \
	}                                                                                      \
	static unsigned long max_threadgroup_memory_##i(id self, SEL cmd)                      \
	{                                                                                      \
		length_fn orig = __atomic_load_n(&slots[i].max_threadgroup_memory, __ATOMIC_ACQUIRE); \
		unsigned long v = orig(self, cmd);                                             \
		return v < cfg.threadgroup_floor ? cfg.threadgroup_floor : v;                  \
	}                                                                                      \
	static lm_u64 working_set_##i(id self, SEL cmd)                                        \
	{                                                                                      \
		size_fn orig = __atomic_load_n(&slots[i].working_set, __ATOMIC_ACQUIRE);       \
		lm_u64 v = orig(self, cmd);                                                    \
		return v < cfg.working_set_floor ? cfg.working_set_floor : v;                  \
	}

LM_HOOKS(0) LM_HOOKS(1) LM_HOOKS(2) LM_HOOKS(3) LM_HOOKS(4) LM_HOOKS(5) LM_HOOKS(6) LM_HOOKS(7)

#define LM_HOOK_ROW(i) { (IMP)supports_family_##i, (IMP)max_threadgroup_memory_##i, (IMP)working_set_##i }
static const IMP hooks[LM_SLOTS][3] = {
	LM_HOOK_ROW(0), LM_HOOK_ROW(1), LM_HOOK_ROW(2), LM_HOOK_ROW(3),
	LM_HOOK_ROW(4), LM_HOOK_ROW(5), LM_HOOK_ROW(6), LM_HOOK_ROW(7),
};

/* ---- installing ----------------------------------------------------------------------- */

/* Reduce a type encoding to its type letters ("C24@0:8l16" -> "C@:l"; qualifiers and offsets
 * dropped) and accept it when it matches one of the '|'-separated patterns, in which a '['
 * group lists the letters allowed at that place. */
static int encoding_matches(const char *enc, const char *patterns)
{
	char t[8];
	lm_size n = 0;

	if (enc == 0)
		return 0;
	for (; *enc != '\0'; enc++) {
		if ((*enc >= '0' && *enc <= '9') || *enc == 'r' || *enc == 'n' || *enc == 'N' ||
		    *enc == 'o' || *enc == 'O' || *enc == 'R' || *enc == 'V')
			continue;
		if (n == sizeof(t) - 1)
			return 0;
		t[n++] = *enc;
	}
	t[n] = '\0';
	for (const char *p = patterns; *p != '\0';) {
		lm_size k = 0;
		int ok = 1;

		for (; *p != '\0' && *p != '|'; p++) {
			if (*p == '[') {
				int any = 0;
				for (p++; *p != ']'; p++)
					any |= k < n && t[k] == *p;
				ok &= any;
			} else {
				ok &= k < n && t[k] == *p;
			}
			k++;
		}
		if (ok && k == n)
			return 1;
		if (*p == '|')
			p++;
	}
	return 0;
}

/* BOOL is 'c' (x86_64 Apple), 'B' (arm64 Apple) or 'C' (GNU); NSInteger 'q' (Apple) or 'l' (GNU);
 * NSUInteger and uint64_t 'Q' (Apple) or 'L' (GNU). */
static const char enc_supports_family[] = "[cCB]@:[ql]";
static const char enc_length[] = "[QL]@:";
static const char enc_init[] = "[v@cCBiIlLqQ]@:";

static const char *selector_names[3] = {
	"supportsFamily:", "maxThreadgroupMemoryLength", "recommendedMaxWorkingSetSize",
};

/* Make imp the class's own implementation of sel, leaving every superclass untouched: replace the
 * class's own method, or add one that overrides the inherited method. (The GNU runtime's
 * class_replaceMethod would change an inherited method in the superclass, so it is not used.) */
static void set_own_method(Class cls, SEL sel, Method m, IMP imp)
{
	Class super = class_getSuperclass(cls);

	if (super != 0 && class_getInstanceMethod(super, sel) == m) {
		if (class_addMethod(cls, sel, imp, method_getTypeEncoding(m)))
			return;
		m = class_getInstanceMethod(cls, sel);
	}
	(void)method_setImplementation(m, imp);
}

/* Check, then hook, the methods of one claimed class. Returns 0 when hooked. */
static int hook_class(struct slot *sl, lm_size index, Class cls)
{
	const char *patterns[3] = { enc_supports_family, enc_length, enc_length };
	Method m[3];
	SEL sel[3];
	int count = cfg.has_working_set ? 3 : 2;

	for (int i = 0; i < count; i++) {
		sel[i] = sel_registerName(selector_names[i]);
		m[i] = class_getInstanceMethod(cls, sel[i]);
		if (m[i] == 0) {
			log_stock(class_getName(cls), " has no method ", selector_names[i]);
			return -1;
		}
		if (!encoding_matches(method_getTypeEncoding(m[i]), patterns[i])) {
			log_stock(class_getName(cls), " has an unexpected signature for ", selector_names[i]);
			return -1;
		}
	}
	/* The effective implementation, the class's own or inherited, is the original. Storing it
	 * before installing means a call racing with the install always finds it. */
	__atomic_store_n(&sl->supports_family, (family_fn)method_getImplementation(m[0]), __ATOMIC_RELEASE);
	__atomic_store_n(&sl->max_threadgroup_memory, (length_fn)method_getImplementation(m[1]), __ATOMIC_RELEASE);
	if (count == 3)
		__atomic_store_n(&sl->working_set, (size_fn)method_getImplementation(m[2]), __ATOMIC_RELEASE);
	for (int i = 0; i < count; i++)
		set_own_method(cls, sel[i], m[i], hooks[index][i]);
	return 0;
}

/* Hook cls once. Safe from any thread: the first caller claims a slot and installs; the others
 * wait until the slot is settled, so no caller returns before the class is hooked. */
static void hook_device_class(Class cls)
{
	if (!cfg.valid || cls == 0)
		return;
	for (lm_size i = 0; i < LM_SLOTS; i++) {
		struct slot *sl = &slots[i];
		Class seen = 0;

		if (!__atomic_compare_exchange_n(&sl->cls, &seen, cls, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			if (seen != cls)
				continue;
			while (__atomic_load_n(&sl->state, __ATOMIC_ACQUIRE) == SLOT_CLAIMED)
				(void)sched_yield();
			return;
		}
		__atomic_store_n(&sl->state, hook_class(sl, i, cls) == 0 ? SLOT_HOOKED : SLOT_REJECTED,
		    __ATOMIC_RELEASE);
		return;
	}
	log_stock(class_getName(cls), ": too many device classes", "");
}

static void hook_device(id device)
{
	if (device != 0)
		hook_device_class(object_getClass(device));
}

static void *init_gpu_family_support(id self, SEL cmd)
{
	hook_device(self);
	return __atomic_load_n(&init_original, __ATOMIC_ACQUIRE)(self, cmd);
}

/* Hook -[_MTLDevice initGPUFamilySupport] once, when the class is present. */
static void hook_private_base(Class base)
{
	int expected = INIT_NONE;
	SEL sel = sel_registerName("initGPUFamilySupport");
	Method m;

	if (base == 0 || !__atomic_compare_exchange_n(&init_state, &expected, INIT_BUSY, 0,
	    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	m = class_getInstanceMethod(base, sel);
	/* Missing or unexpected: the interposed creation functions still find the devices. */
	if (m != 0 && encoding_matches(method_getTypeEncoding(m), enc_init)) {
		__atomic_store_n(&init_original, (init_fn)method_getImplementation(m), __ATOMIC_RELEASE);
		set_own_method(base, sel, m, (IMP)init_gpu_family_support);
	}
	__atomic_store_n(&init_state, INIT_DONE, __ATOMIC_RELEASE);
}

#if !defined(__APPLE__)
static void class_loaded(Class cls, void *category)
{
	if (category == 0 && str_eq(class_getName(cls), "_MTLDevice"))
		hook_private_base(cls);
	if (load_callback_next != 0)
		load_callback_next(cls, category);
}
#endif

__attribute__((constructor)) static void shim_load(void)
{
	injection_clean();
	config_read();
	if (!cfg.valid)
		return;
#if !defined(__APPLE__)
	load_callback_next = _objc_load_callback;
	_objc_load_callback = class_loaded;
#endif
	hook_private_base(objc_lookUpClass("_MTLDevice"));
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
		hook_device(((id (*)(id, SEL, unsigned long))class_getMethodImplementation(cls, at_sel))(
		    devices, at_sel, i));
}

#if defined(__APPLE__)
/* dyld binds every other image's calls to these; calls from this image reach Metal itself. */
static id create_default_device(void)
{
	id device = MTLCreateSystemDefaultDevice();

	hook_device(device);
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
};
#else
/* Preloaded, these definitions come first in the global scope; the next object's are Metal's. */
static void *next_symbol(void **cache, const char *name)
{
	void *fn = __atomic_load_n(cache, __ATOMIC_ACQUIRE);

	if (fn == 0) {
		fn = dlsym(LM_RTLD_NEXT, name);
		__atomic_store_n(cache, fn, __ATOMIC_RELEASE);
	}
	return fn;
}

LM_EXPORT id MTLCreateSystemDefaultDevice(void)
{
	static void *next;
	id (*fn)(void) = (id (*)(void))next_symbol(&next, "MTLCreateSystemDefaultDevice");
	id device = fn != 0 ? fn() : 0;

	hook_device(device);
	return device;
}

LM_EXPORT id MTLCopyAllDevices(void)
{
	static void *next;
	id (*fn)(void) = (id (*)(void))next_symbol(&next, "MTLCopyAllDevices");
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
		if (__atomic_load_n(&slots[i].cls, __ATOMIC_ACQUIRE) != 0 &&
		    __atomic_load_n(&slots[i].state, __ATOMIC_ACQUIRE) == SLOT_HOOKED)
			return 1;
	}
	return 0;
}
