/* lume-metal shim: the device classes' hooked methods, and their installing.
 *
 * Finding the device class, in order of preference:
 *   1. -[_MTLDevice initGPUFamilySupport], which runs while a device is created, hooks the new
 *      device's concrete class before its first family query;
 *   2. MTLCreateSystemDefaultDevice / MTLCopyAllDevices are interposed (shim.c) and hook the
 *      classes of the devices they return (covers a missing private class or method);
 *   3. on the GNU runtime, classes loaded later (a dlopen'ed Metal) are caught as they load.
 *
 * Only the concrete class is hooked; its superclass is never modified, so a concrete class that
 * overrides supportsFamily: and calls super keeps working. Every class gets its own slot with its
 * own saved originals and its own entry points, installed at most once, from any thread. The
 * hooked methods read their slot and the configuration and call the original: no allocation, no
 * lock.
 *
 * The slots are state.c's (the record writer reads them too); what the hooks see is recorded
 * through records.c.
 */
#include "shim_internal.h"

enum { INIT_NONE = 0, INIT_BUSY = 1, INIT_DONE = 2 };

typedef void *(*init_fn)(id, SEL);

static int init_state;
static init_fn init_original;
#if !defined(__APPLE__)
static void (*load_callback_next)(Class, void *);
#endif

/* ---- the hooked methods: one set of entry points per slot ------------------------------- */

#define LM_HOOKS(i)                                                                                           \
	static unsigned char supports_family_##i(id self, SEL cmd, long family)                               \
	{                                                                                                     \
		family_fn orig = __atomic_load_n(&lm_shim_slots[i].supports_family, __ATOMIC_ACQUIRE);        \
		unsigned char answer = orig(self, cmd, family);                                               \
		unsigned char given = family >= 1001 && family <= lm_shim_cfg.family_max ? 1 : answer;        \
		if (lm_shim_rec.on)                                                                           \
			lm_shim_record_question(i, self, family, answer, given);                              \
		return given;                                                                                 \
	}                                                                                                     \
	static unsigned long max_threadgroup_memory_##i(id self, SEL cmd)                                     \
	{                                                                                                     \
		length_fn orig = __atomic_load_n(&lm_shim_slots[i].max_threadgroup_memory, __ATOMIC_ACQUIRE); \
		unsigned long v = orig(self, cmd);                                                            \
		unsigned long given = v < lm_shim_cfg.threadgroup_floor ? lm_shim_cfg.threadgroup_floor : v;  \
		if (lm_shim_rec.on)                                                                           \
			lm_shim_record_threadgroup(i, v, given);                                              \
		return given;                                                                                 \
	}                                                                                                     \
	static lm_u64 working_set_##i(id self, SEL cmd)                                                       \
	{                                                                                                     \
		size_fn orig = __atomic_load_n(&lm_shim_slots[i].working_set, __ATOMIC_ACQUIRE);              \
		lm_u64 v = orig(self, cmd);                                                                   \
		return v < lm_shim_cfg.working_set_floor ? lm_shim_cfg.working_set_floor : v;                 \
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
	int count = lm_shim_cfg.has_working_set ? 3 : 2;

	for (int i = 0; i < count; i++) {
		sel[i] = sel_registerName(selector_names[i]);
		m[i] = class_getInstanceMethod(cls, sel[i]);
		if (m[i] == 0) {
			lm_shim_log_stock(sl->why, class_getName(cls), " has no method ", selector_names[i]);
			return -1;
		}
		if (!encoding_matches(method_getTypeEncoding(m[i]), patterns[i])) {
			lm_shim_log_stock(sl->why, class_getName(cls), " has an unexpected signature for ",
			    selector_names[i]);
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
	if (!lm_shim_cfg.valid || cls == 0)
		return;
	for (lm_size i = 0; i < LM_SLOTS; i++) {
		struct slot *sl = &lm_shim_slots[i];
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
		lm_shim_record_update(WRITTEN_UPDATE);
		return;
	}
	lm_shim_log_stock(0, class_getName(cls), ": too many device classes", "");
	lm_shim_record_incomplete();
}

void lm_shim_hook_device(id device)
{
	if (device != 0)
		hook_device_class(object_getClass(device));
}

static void *init_gpu_family_support(id self, SEL cmd)
{
	lm_shim_hook_device(self);
	return __atomic_load_n(&init_original, __ATOMIC_ACQUIRE)(self, cmd);
}

/* Hook -[_MTLDevice initGPUFamilySupport] once, when the class is present. */
void lm_shim_hook_private_base(Class base)
{
	int expected = INIT_NONE;
	SEL sel = sel_registerName("initGPUFamilySupport");
	Method m;

	if (base == 0 || !__atomic_compare_exchange_n(&init_state, &expected, INIT_BUSY, 0,
	    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	m = class_getInstanceMethod(base, sel);
	/* Missing or unexpected: the interposed creation functions still find the devices. */
	if (m == 0) {
		__atomic_store_n(&lm_shim_init_why, "_MTLDevice has no method initGPUFamilySupport", __ATOMIC_RELEASE);
	} else if (!encoding_matches(method_getTypeEncoding(m), enc_init)) {
		__atomic_store_n(&lm_shim_init_why, "_MTLDevice has an unexpected signature for initGPUFamilySupport",
		    __ATOMIC_RELEASE);
	} else {
		__atomic_store_n(&init_original, (init_fn)method_getImplementation(m), __ATOMIC_RELEASE);
		set_own_method(base, sel, m, (IMP)init_gpu_family_support);
		__atomic_store_n(&lm_shim_init_why, (const char *)0, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&init_state, INIT_DONE, __ATOMIC_RELEASE);
}

#if !defined(__APPLE__)
static void class_loaded(Class cls, void *category)
{
	if (category == 0 && lm_shim_str_eq(class_getName(cls), "_MTLDevice")) {
		lm_shim_hook_private_base(cls);
		lm_shim_record_update(WRITTEN_UPDATE);
	}
	if (load_callback_next != 0)
		load_callback_next(cls, category);
}

/* From load on (a dlopen'ed Metal): the GNU runtime calls class_loaded for every class it loads. */
void lm_shim_hook_loaded_classes(void)
{
	load_callback_next = _objc_load_callback;
	_objc_load_callback = class_loaded;
}
#endif
