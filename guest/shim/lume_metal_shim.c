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
 * Children are decided at each spawn, configured or not: the shim leaves its own environment
 * alone (an exec in place, a server's worker, a venv interpreter keep it) and interposes the exec
 * and spawn calls. It takes its own path out of the injection variable only for a target that
 * cannot take it: an arm64e program (its Mach-O header: a thin arm64e file, or a universal one
 * whose arm64 slices are all arm64e) or a SIP-protected one (its folder: all are arm64e), on a
 * guest whose SIP is not enabled when the shim has no arm64e slice, which dyld would terminate. LUME_METAL_INHERIT=0/1 overrides. A spawn
 * never fails because of the shim; the record lists what each was given.
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
 *
 * Activation records (only with LUME_METAL_RECORD_DIR; never in the TART_METAL_*-only build): the
 * process, the configuration, the hooks, and every distinct question and answer, kept in fixed
 * static tables and written to <dir>/<pid>.json through a temporary file and a rename at load, on
 * news (from inside the hooked call that brings it), at each spawn and at exit; a forked child
 * writes one under its own pid before its exec. A call that brings nothing new
 * costs one load and one bit test; one thread writes at a time and the others never wait.
 */
#include "../guest_runtime.h"

#define LM_EXPORT __attribute__((visibility("default")))
#define LM_SLOTS 8
#define LM_WHY 201          /* a reason, NUL included (docs/activation-format.md: 200 bytes) */
#define LM_NAME 128         /* a class or device name */
#define LM_QUESTIONS 64
#define LM_TG_READS 4       /* distinct maxThreadgroupMemoryLength stock values per class */
#define LM_SPAWNS 32        /* exec and spawn calls kept in the record; more are counted */
#define LM_SEEN_EMPTY(index) ((index) + 2) /* the key of family index + 1, whose entry is index + 1 */

#if !defined(LM_SHIM_VERSION)
#error "LM_SHIM_VERSION: the project version the shim is built from (guest/CMakeLists.txt)"
#endif

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
	char why[LM_WHY]; /* when not valid: what LUME_METAL_LOG=1 says after "stock: " */
} cfg;

/* One hooked (or refused) class per slot. cls is claimed with a CAS; the originals are stored
 * before the hooks are installed; state is published last. */
static struct slot {
	Class cls;
	int state;
	family_fn supports_family;
	length_fn max_threadgroup_memory;
	size_fn working_set;
	/* For the record only. why: written before state is published. seen[family & 255] holds
	 * family + 1 (as unsigned) once that family was asked: one load and one compare tell a
	 * question already recorded. The families of the table never share an entry; others that do
	 * are recorded under collide_busy. An empty entry holds LM_SEEN_EMPTY(index), the key of a
	 * family that belongs to another entry, so that no family ever matches an empty one. */
	char why[LM_WHY];
	unsigned long seen[256];
	int collide_busy;
	int device_state; /* 0 not read, 1 reading, 2 device[] written */
	char device[LM_NAME];
	int tg_busy, tg_count;
	unsigned long tg_stock[LM_TG_READS], tg_given[LM_TG_READS];
} slots[LM_SLOTS];

static int init_state;
static init_fn init_original;
static const char *init_why = "class _MTLDevice not found"; /* for the record; NULL once installed */
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

/* The parts joined into dst (cap bytes; NUL-terminated, cut at cap - 1), control characters but
 * the line feed replaced with '?'. Returns the length. */
static lm_size join(char *dst, lm_size cap, const char *const parts[], lm_size count)
{
	lm_size n = 0;

	for (lm_size i = 0; i < count; i++) {
		for (const char *p = parts[i]; p != 0 && *p != '\0' && n < cap - 1; p++)
			dst[n++] = (*p >= 0x20 && *p != 0x7f) || *p == '\n' ? *p : '?';
	}
	dst[n] = '\0';
	return n;
}

/* Why the process (why = cfg.why) or a class (its slot's why) stays stock: kept for the record
 * when why is not NULL, and one line on stderr with LUME_METAL_LOG=1:
 * "lume-metal-shim: stock: A B C\n". */
static void log_stock(char *why, const char *a, const char *b, const char *c)
{
	char line[256];
	const char *parts[] = { "lume-metal-shim: stock: ", a, b, c, "\n" };
	lm_size n;

	if (why != 0)
		(void)join(why, LM_WHY, parts + 1, 3);
	if (!cfg.log)
		return;
	n = join(line, sizeof(line), parts, sizeof(parts) / sizeof(parts[0]));
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
		log_stock(cfg.why, *name, why, "");
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
			log_stock(cfg.why, "TART_METAL_APPLE_FAMILY_MAX is not set, or empty", "", "");
#else
			log_stock(cfg.why, "LUME_METAL_APPLE_FAMILY_MAX is not set, or empty", "", "");
#endif
		return;
	}
	if (v < 1001 || v > 1999) {
		log_stock(cfg.why, name, " must be in 1001..1999 (Apple families)", "");
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

/* ---- children: decided at each spawn ----------------------------------------------------- */

/* dyld splits DYLD_INSERT_LIBRARIES at ':'; ld.so splits LD_PRELOAD at ':' and ' '. The default
 * search path is what each libc's exec*p and posix_spawnp use when PATH is unset (_PATH_DEFPATH
 * on macOS; glibc's own). */
#if defined(__APPLE__)
#define LM_INJECTION_VARIABLE "DYLD_INSERT_LIBRARIES"
#define LM_INJECTION_SPACE_SEPARATES 0
#define LM_DEFAULT_PATH "/usr/bin:/bin"
#else
#define LM_INJECTION_VARIABLE "LD_PRELOAD"
#define LM_INJECTION_SPACE_SEPARATES 1
#define LM_DEFAULT_PATH "/bin:/usr/bin"
#endif
#define LM_PATH 1024        /* a path the spawn rule reads (macOS's PATH_MAX); longer: as given */
#define LM_LINKS 8          /* symbolic links followed to the file itself */
#define LM_ENV_STACK 128    /* environment entries rebuilt on the stack; more: in a mapping */
#define LM_ENV_TEXT 2048    /* bytes of rewritten injection variable on the stack; more: mapped */

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

/* Read once at load, before any spawn can be hooked; read-only afterwards. */
static struct {
	int rule;            /* -1 the spawn rule; 0 LUME_METAL_INHERIT=0; 1 LUME_METAL_INHERIT=1 */
	int sip;             /* LUME_METAL_GUEST_SIP: 1 enabled, 0 disabled or custom, -1 not reported */
	int arm64e;          /* the installed shim has an arm64e slice */
	int inherit;         /* children.inherit: the rule passes the shim on at all */
	const char *setting; /* LUME_METAL_INHERIT as found: "0", "1", "invalid" or NULL */
	const char *self;    /* this image's path (dladdr), NULL when unknown */
	char why[LM_WHY];
} kids;

/* What the host says about the guest (docs/activation-format.md, "Children"), and the override. A
 * SIP state the shim is not told counts as not enabled: removing the shim from a protected
 * program loses nothing on a SIP-on guest, since such a program purges it itself, while keeping it
 * on a SIP-off guest gets the program terminated. */
static void kids_read(void)
{
	const char *inherit = getenv("LUME_METAL_INHERIT"), *sip = getenv("LUME_METAL_GUEST_SIP");
	const char *arm64e = getenv("LUME_METAL_SHIM_ARM64E");
	const char *prefix = "", *rule, *sip_words = "guest SIP not reported";
	lm_dl_info info;

	kids.rule = -1;
	if (inherit != 0 && *inherit != '\0') {
		kids.setting = str_eq(inherit, "1") ? "1" : str_eq(inherit, "0") ? "0" : "invalid";
		if (kids.setting[0] != 'i')
			kids.rule = kids.setting[0] - '0';
		else
			prefix = "LUME_METAL_INHERIT is neither 0 nor 1, so ignored: ";
	}
	kids.sip = -1;
	if (sip != 0 && str_eq(sip, "enabled"))
		kids.sip = 1;
	else if (sip != 0 && (str_eq(sip, "disabled") || str_eq(sip, "custom"))) {
		kids.sip = 0;
		sip_words = str_eq(sip, "custom") ? "guest SIP custom" : "guest SIP disabled";
	}
#if defined(__arm64e__)
	(void)arm64e;
	kids.arm64e = 1; /* this very slice */
#else
	kids.arm64e = arm64e != 0 && str_eq(arm64e, "1");
#endif
	if (dladdr((const void *)kids_read, &info) != 0 && info.dli_fname != 0 && info.dli_fname[0] != '\0')
		kids.self = info.dli_fname;
	kids.inherit = kids.rule != 0;
	if (getenv(LM_INJECTION_VARIABLE) == 0) {
		kids.inherit = 0;
		prefix = "";
		rule = "the injection variable is not set";
	} else if (kids.rule == 1) {
		rule = "LUME_METAL_INHERIT=1: every child keeps the shim";
	} else if (kids.rule == 0) {
		rule = "LUME_METAL_INHERIT=0: every child starts without the shim";
	} else if (kids.sip == 1) {
		rule = "decided at each spawn: guest SIP enabled, so every child keeps the shim (protected programs ignore it)";
	} else if (kids.arm64e) {
		rule = "decided at each spawn: the shim has an arm64e slice, so every child keeps it";
	} else {
		const char *parts[] = { prefix, "decided at each spawn: protected and arm64e programs start without the shim (",
			sip_words, ", no arm64e slice); every other child keeps it" };

		(void)join(kids.why, LM_WHY, parts, 4);
		return;
	}
	{
		const char *parts[] = { prefix, rule };

		(void)join(kids.why, LM_WHY, parts, 2);
	}
}

/* The directories SIP protects, as the host lists them (host/lib/guestops/sip.c): dyld purges
 * DYLD_* in their programs on a SIP-on guest and, with SIP off, terminates one (all are arm64e)
 * that inherits a library without an arm64e slice (docs/guest.md; /work reference metal.md,
 * "dyld and inserted libraries"). The data volume, mounted below /System, is not protected. */
static int starts_with(const char *s, const char *prefix)
{
	while (*prefix != '\0' && *s == *prefix)
		s++, prefix++;
	return *prefix == '\0';
}

static int in_protected_dir(const char *path)
{
	static const char *const dirs[] = { "/bin/", "/sbin/", "/usr/bin/", "/usr/sbin/", "/usr/libexec/", "/System/" };

	if (starts_with(path, "/System/Volumes/Data/"))
		return 0;
	for (lm_size i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		if (starts_with(path, dirs[i]))
			return 1;
	}
	return 0;
}

static lm_size str_len(const char *s)
{
	lm_size n = 0;

	while (s[n] != '\0')
		n++;
	return n;
}

/* dst = the n bytes at a, '/' unless a is empty or ends in one, then b (LM_PATH bytes). 0 when it
 * does not fit. dst may be a's own buffer. */
static int path_join(char *dst, const char *a, lm_size n, const char *b)
{
	lm_size m = str_len(b), k = n;

	if (n + 1 + m + 1 > LM_PATH)
		return 0;
	for (lm_size i = 0; i < n; i++)
		dst[i] = a[i];
	if (k > 0 && dst[k - 1] != '/')
		dst[k++] = '/';
	for (lm_size i = 0; i <= m; i++)
		dst[k + i] = b[i];
	return 1;
}

/* "." and ".." components and repeated slashes of an absolute path taken out, in place (as the
 * kernel walks them once the links are followed). */
static void path_normalize(char *p)
{
	lm_size r = 0, w = 0;

	while (p[r] != '\0') {
		lm_size s = r, len;

		while (p[r] == '/')
			r++;
		s = r;
		while (p[r] != '\0' && p[r] != '/')
			r++;
		len = r - s;
		if (len == 0 || (len == 1 && p[s] == '.'))
			continue;
		if (len == 2 && p[s] == '.' && p[s + 1] == '.') {
			while (w > 0 && p[w - 1] != '/')
				w--;
			if (w > 0)
				w--;
			continue;
		}
		p[w++] = '/';
		for (lm_size i = 0; i < len; i++)
			p[w++] = p[s + i];
	}
	if (w == 0)
		p[w++] = '/';
	p[w] = '\0';
}

/* path made absolute (against the working directory), its links followed and normalized into dst
 * (LM_PATH bytes). 0 when it does not fit. */
static int path_resolve(char *dst, const char *path)
{
	char link[LM_PATH];

	if (path[0] == '/') {
		if (!path_join(dst, "", 0, path))
			return 0;
	} else if (getcwd(link, sizeof(link)) == 0 || !path_join(dst, link, str_len(link), path)) {
		return 0;
	}
	for (int hops = 0; hops < LM_LINKS; hops++) {
		long n = readlink(dst, link, sizeof(link) - 1);

		if (n <= 0)
			break;
		link[n] = '\0';
		if (link[0] == '/') {
			if (!path_join(dst, "", 0, link))
				return 0;
		} else if (!path_join(dst, dst, (lm_size)(base_name(dst, dst + str_len(dst)) - dst), link)) {
			return 0;
		}
	}
	path_normalize(dst);
	return 1;
}

/* The file a call with file starts (LM_PATH bytes): search: through PATH as exec*p and
 * posix_spawnp look (the first executable candidate; an empty entry is the working directory),
 * when file has no '/'. 0 when none is found or a path does not fit. */
static int target_locate(char *dst, const char *file, int search)
{
	const char *path, *p;
	char cand[LM_PATH];

	for (p = file; *p != '\0' && *p != '/'; p++)
		;
	if (!search || *p == '/')
		return file[0] != '\0' && path_resolve(dst, file);
	if (file[0] == '\0' || (path = getenv("PATH")) == 0)
		path = LM_DEFAULT_PATH;
	for (p = path;; p++) {
		const char *start = p;

		while (*p != '\0' && *p != ':')
			p++;
		if (path_join(cand, p == start ? "." : start, p == start ? 1 : (lm_size)(p - start), file) &&
		    access(cand, LM_X_OK) == 0)
			return path_resolve(dst, cand);
		if (*p == '\0')
			return 0;
	}
}

/* A Mach-O header that runs only as arm64e on Apple silicon: a thin 64-bit file (MH_MAGIC_64,
 * little-endian) of CPU_TYPE_ARM64 (0x0100000c) with CPU_SUBTYPE_ARM64E (2) in cpusubtype's low
 * bytes -- the top byte, CPU_SUBTYPE_MASK (0xff000000), carries the pointer-authentication ABI
 * bits -- or a universal file (FAT_MAGIC, FAT_MAGIC_64, big-endian) with at least one arm64 slice,
 * each of them arm64e (<mach/machine.h>, <mach-o/fat.h>; reference metal.md, 2026-12-06). Apple's
 * arm64e tools also live outside the folders SIP protects (Xcode.app, the Command Line Tools), and
 * dyld terminates an arm64e process whose inserted library has no arm64e slice
 * ("terminating because inserted dylib ... could not be loaded", DyldRuntimeState.cpp). Only the
 * slice table that fits in head is read; a fat file's other slices (x86_64) do not count. */
static unsigned int be32(const unsigned char *p)
{
	return (unsigned int)p[0] << 24 | (unsigned int)p[1] << 16 | (unsigned int)p[2] << 8 | p[3];
}

static unsigned int le32(const unsigned char *p)
{
	return (unsigned int)p[3] << 24 | (unsigned int)p[2] << 16 | (unsigned int)p[1] << 8 | p[0];
}

#define LM_CPU_TYPE_ARM64 0x0100000cU
#define LM_CPU_SUBTYPE_ARM64E 2U
#define LM_CPU_SUBTYPE_MASK 0xff000000U

static int macho_arm64e_only(const unsigned char *head, lm_size n)
{
	unsigned int magic, count, arm64 = 0;
	lm_size entry;

	if (n < 12)
		return 0;
	if (le32(head) == 0xfeedfacfU)
		return le32(head + 4) == LM_CPU_TYPE_ARM64 && (le32(head + 8) & ~LM_CPU_SUBTYPE_MASK) == LM_CPU_SUBTYPE_ARM64E;
	magic = be32(head);
	if (magic != 0xcafebabeU && magic != 0xcafebabfU)
		return 0;
	entry = magic == 0xcafebabeU ? 20 : 32; /* struct fat_arch, fat_arch_64 */
	count = be32(head + 4);
	for (lm_size i = 0; i < count && 8 + (i + 1) * entry <= n; i++) {
		const unsigned char *a = head + 8 + i * entry;

		if (be32(a) != LM_CPU_TYPE_ARM64)
			continue;
		if ((be32(a + 4) & ~LM_CPU_SUBTYPE_MASK) != LM_CPU_SUBTYPE_ARM64E)
			return 0;
		arm64++;
	}
	return arm64 > 0;
}

/* 1 when path's header says arm64e only (macho_arm64e_only); 0 otherwise or unreadable. */
static int file_arm64e_only(const char *path)
{
	unsigned char head[512];
	long n;
	int fd = open(path, LM_O_RDONLY | LM_O_CLOEXEC | LM_O_NONBLOCK);

	if (fd < 0)
		return 0;
	n = read(fd, head, sizeof(head));
	(void)close(fd);
	return n > 0 && macho_arm64e_only(head, (lm_size)n);
}

/* What runs when the kernel is handed path: 1 a script, its #! interpreter in interp; 2 neither
 * a script nor an executable format (exec*p and posix_spawnp then run it with /bin/sh); 0 an
 * executable or unreadable. *arm64e: the header says arm64e only (macho_arm64e_only). */
static int target_interpreter(const char *path, char *interp, int *arm64e)
{
	static const unsigned char magics[][4] = {
		{ 0x7f, 'E', 'L', 'F' },                                  /* ELF */
		{ 0xfe, 0xed, 0xfa, 0xce }, { 0xce, 0xfa, 0xed, 0xfe },   /* Mach-O 32-bit */
		{ 0xfe, 0xed, 0xfa, 0xcf }, { 0xcf, 0xfa, 0xed, 0xfe },   /* Mach-O 64-bit */
		{ 0xca, 0xfe, 0xba, 0xbe }, { 0xca, 0xfe, 0xba, 0xbf },   /* universal */
	};
	unsigned char head[LM_PATH + 3];
	long n;
	lm_size i = 2, k = 0;
	int fd = open(path, LM_O_RDONLY | LM_O_CLOEXEC | LM_O_NONBLOCK); /* a FIFO named by mistake never blocks */

	if (fd < 0)
		return 0;
	n = read(fd, head, sizeof(head) - 1);
	(void)close(fd);
	*arm64e = 0;
	if (n < 0)
		return 0;
	*arm64e = macho_arm64e_only(head, (lm_size)n);
	if (n < 2 || head[0] != '#' || head[1] != '!') {
		for (lm_size m = 0; n >= 4 && m < sizeof(magics) / sizeof(magics[0]); m++) {
			if (head[0] == magics[m][0] && head[1] == magics[m][1] && head[2] == magics[m][2] &&
			    head[3] == magics[m][3])
				return 0;
		}
		return 2;
	}
	while (i < (lm_size)n && (head[i] == ' ' || head[i] == '\t'))
		i++;
	while (i < (lm_size)n && head[i] != ' ' && head[i] != '\t' && head[i] != '\n' && head[i] != '\0' &&
	    k < LM_PATH - 1)
		interp[k++] = (char)head[i++];
	interp[k] = '\0';
	return k > 0 ? 1 : 0;
}

/* A spawn's target as the rule sees it. */
struct target {
	char path[LM_PATH];   /* the file started (searched, absolute, links followed); "" unknown */
	char interp[LM_PATH]; /* the program that runs it: its #! interpreter, /bin/sh, or "" */
	int protected;        /* the file or its interpreter is in a directory SIP protects */
	int arm64e;           /* the file's or its interpreter's Mach-O header says arm64e only */
};

static void target_read(struct target *t, const char *file, int search)
{
	char interp[LM_PATH];
	int kind;

	t->path[0] = t->interp[0] = '\0';
	t->arm64e = 0;
	if (!target_locate(t->path, file, search)) {
		t->path[0] = '\0';
		t->protected = in_protected_dir(file);
		return;
	}
	t->protected = in_protected_dir(t->path);
	kind = target_interpreter(t->path, interp, &t->arm64e);
	if (kind == 2)
		(void)path_join(interp, "", 0, "/bin/sh");
	if (kind != 0 && !path_resolve(t->interp, interp))
		(void)path_join(t->interp, "", 0, interp);
	if (t->interp[0] != '\0') {
		t->protected |= in_protected_dir(t->interp);
		t->arm64e |= file_arm64e_only(t->interp);
	}
}

enum { SHIM_ABSENT = 0, SHIM_KEPT = 1, SHIM_REMOVED = 2 };

/* Whether the target gets the shim, and why (a static text for the record). */
static int spawn_rule(const struct target *t, const char **why)
{
	if (kids.rule >= 0) {
		*why = kids.rule == 1 ? "LUME_METAL_INHERIT=1" : "LUME_METAL_INHERIT=0";
		return kids.rule == 1 ? SHIM_KEPT : SHIM_REMOVED;
	}
	if (!t->protected && !t->arm64e) {
		*why = "not a protected program";
		return SHIM_KEPT;
	}
	/* The header is the first reason, the folder the second (a protected program is arm64e too). */
	if (kids.sip == 1) {
		*why = t->protected ? "protected program on a SIP-on guest: it purges the variable itself" :
		    "arm64e program on a SIP-on guest";
		return SHIM_KEPT;
	}
	if (kids.arm64e) {
		*why = t->arm64e ? "arm64e program, and the shim has an arm64e slice" :
		    "protected program, and the shim has an arm64e slice";
		return SHIM_KEPT;
	}
	if (t->arm64e)
		*why = kids.sip == 0 ? "arm64e program (its Mach-O header) on a SIP-off guest and the shim has no arm64e slice" :
		    "arm64e program (its Mach-O header), the guest's SIP not reported, and the shim has no arm64e slice";
	else
		*why = kids.sip == 0 ? "protected program on a SIP-off guest and the shim has no arm64e slice" :
		    "protected program, the guest's SIP not reported, and the shim has no arm64e slice";
	return SHIM_REMOVED;
}

/* The environment a spawn passes on: the caller's, or a copy without this image's entries in the
 * injection variable (the others kept, in order, joined with ':', which dyld and ld.so both
 * accept; the variable dropped when nothing is left). Small environments are rebuilt on the
 * stack; larger ones in an anonymous mapping (a system call, safe in a forked child where malloc
 * is not), unmapped when the call returns. */
struct env_out {
	char **envp;          /* the copy, NULL: pass the caller's */
	void *map;
	lm_size map_len;
	char *arr[LM_ENV_STACK];
	char text[LM_ENV_TEXT];
};

static int is_injection(const char *entry)
{
	return starts_with(entry, LM_INJECTION_VARIABLE "=");
}

/* An entry of the injection variable's value, from *r: [*e, *end). */
static void next_entry(const char **r, const char **e, const char **end)
{
	*e = *r;
	while (**r != '\0' && **r != ':' && !(LM_INJECTION_SPACE_SEPARATES && **r == ' '))
		(*r)++;
	*end = *r;
	if (**r != '\0')
		(*r)++;
}

/* 1 when some injection variable of envp names this image. */
static int env_names_self(char *const envp[])
{
	for (lm_size i = 0; envp != 0 && envp[i] != 0; i++) {
		const char *r, *e, *end;

		if (!is_injection(envp[i]))
			continue;
		r = envp[i] + sizeof(LM_INJECTION_VARIABLE);
		while (*r != '\0') {
			next_entry(&r, &e, &end);
			if (end != e && names_self(e, end, kids.self))
				return 1;
		}
	}
	return 0;
}

/* Builds o->envp. 0 done; -1 no memory for it (o->envp NULL: the caller's is passed on). */
static int env_without_self(char *const envp[], struct env_out *o)
{
	lm_size n = 0, text = 0, k = 0, t = 0;
	char **arr = o->arr, *buf = o->text;

	o->envp = 0;
	o->map = 0;
	for (; envp[n] != 0; n++) {
		if (is_injection(envp[n]))
			text += str_len(envp[n]) + 1;
	}
	if (n + 1 > LM_ENV_STACK || text > LM_ENV_TEXT) {
		lm_size len = (n + 1) * sizeof(char *) + text, page = 16384;

		o->map_len = (len + page - 1) / page * page;
		o->map = mmap(0, o->map_len, LM_PROT_READ | LM_PROT_WRITE, LM_MAP_PRIVATE | LM_MAP_ANON, -1, 0);
		if (o->map == LM_MAP_FAILED) {
			o->map = 0;
			return -1;
		}
		arr = (char **)o->map;
		buf = (char *)o->map + (n + 1) * sizeof(char *);
	}
	for (lm_size i = 0; i < n; i++) {
		const char *r, *e, *end;
		lm_size start = t, kept = 0;

		if (!is_injection(envp[i])) {
			arr[k++] = envp[i];
			continue;
		}
		for (r = LM_INJECTION_VARIABLE "="; *r != '\0'; r++)
			buf[t++] = *r;
		r = envp[i] + sizeof(LM_INJECTION_VARIABLE);
		while (*r != '\0') {
			next_entry(&r, &e, &end);
			if (end == e || names_self(e, end, kids.self))
				continue;
			if (kept++ > 0)
				buf[t++] = ':';
			while (e < end)
				buf[t++] = *e++;
		}
		buf[t++] = '\0';
		if (kept > 0)
			arr[k++] = buf + start;
	}
	arr[k] = 0;
	o->envp = arr;
	return 0;
}

static void env_release(struct env_out *o)
{
	if (o->map != 0)
		(void)munmap(o->map, o->map_len);
	o->map = 0;
}

/* ---- activation records (docs/activation-format.md) -------------------------------------- */

enum { WRITTEN_LOAD = 0, WRITTEN_UPDATE = 1, WRITTEN_EXIT = 2 };

/* Set at load (on, pid, paths, exe, host_reason), then changed only with atomics. */
static struct {
	int on;
	int pid, ppid;
	char path[1100], tmp[1100], dir[1024];
	char exe[1024];
	int has_exe;
	char host_reason[LM_WHY];
	int has_host_reason;
	int incomplete;
	int writing, stale, written;
	unsigned long sequence;
	unsigned q_count;
	struct question {
		int ready;
		int slot;
		long family;
		unsigned char stock, given;
	} questions[LM_QUESTIONS];
	SEL sel_name, sel_utf8;
	unsigned s_count; /* spawns claimed (may exceed LM_SPAWNS: the rest are counted) */
	struct spawn {
		int ready;
		unsigned char call, protected, shim, has_path, cut;
		int pid;          /* posix_spawn's child; 0: none (an exec, or the call failed) */
		int error;        /* the call's error number; 0: none (or an exec that has not returned) */
		const char *why;  /* static text */
		char path[1024], resolved[LM_PATH], interp[LM_PATH];
	} spawns[LM_SPAWNS];
	char text[65536];
} rec;

/* The length of the well-formed UTF-8 sequence at s (1 for ASCII), 0 when there is none. Stops at
 * the first byte that does not fit, so it never reads past a NUL. */
static lm_size utf8_valid(const unsigned char *s)
{
	unsigned char c = s[0];
	lm_size n;
	unsigned char lo = 0x80, hi = 0xbf;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
	else
		return 0;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (lm_size i = 2; i < n; i++) {
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	}
	return n;
}

/* src copied into dst (cap bytes, NUL-terminated); a longer text is cut before a whole UTF-8
 * sequence that does not fit: returns 1 then. */
static int copy_cut(char *dst, lm_size cap, const char *src)
{
	lm_size n = 0;
	int cut = 0;

	while (src[n] != '\0') {
		lm_size k = utf8_valid((const unsigned char *)src + n);

		if (k == 0)
			k = 1;
		if (n + k > cap - 1) {
			cut = 1;
			break;
		}
		for (lm_size i = 0; i < k; i++)
			dst[n + i] = src[n + i];
		n += k;
	}
	dst[n] = '\0';
	return cut;
}

/* The same into this process's record, which a cut marks incomplete. */
static void copy_text(char *dst, lm_size cap, const char *src)
{
	if (copy_cut(dst, cap, src))
		__atomic_store_n(&rec.incomplete, 1, __ATOMIC_RELAXED);
}

/* The record's text: a bounded buffer that fails instead of truncating (full is set). */
struct out {
	char *p;
	lm_size n, cap;
	int full;
};

static void put(struct out *o, const char *s)
{
	for (; *s != '\0'; s++) {
		if (o->n == o->cap) {
			o->full = 1;
			return;
		}
		o->p[o->n++] = *s;
	}
}

static void put_u64(struct out *o, lm_u64 v)
{
	char b[24];

	put(o, lm_decimal(b, v));
}

static void put_long(struct out *o, long v)
{
	if (v < 0) {
		put(o, "-");
		put_u64(o, 0ULL - (lm_u64)v);
	} else {
		put_u64(o, (lm_u64)v);
	}
}

/* A JSON string (or null): '"' and '\' escaped, control characters as \u00XX, bytes that are not
 * valid UTF-8 as '?'. */
static void put_str(struct out *o, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	if (s == 0) {
		put(o, "null");
		return;
	}
	put(o, "\"");
	while (*s != '\0') {
		unsigned char c = (unsigned char)*s;
		lm_size k = utf8_valid((const unsigned char *)s);
		char b[8] = { 0 };

		if (c == '"' || c == '\\') {
			b[0] = '\\', b[1] = (char)c;
		} else if (c < 0x20 || c == 0x7f) {
			b[0] = '\\', b[1] = 'u', b[2] = '0', b[3] = '0', b[4] = hex[c >> 4], b[5] = hex[c & 15];
		} else if (k == 0) {
			b[0] = '?';
		} else {
			for (lm_size i = 0; i < k; i++)
				b[i] = s[i];
			s += k - 1;
		}
		put(o, b);
		s++;
	}
	put(o, "\"");
}

static void put_bool(struct out *o, int v)
{
	put(o, v ? "true" : "false");
}

/* Settled slots from the first (claimed in order), so indices stay those of the questions. */
static lm_size settled_slots(void)
{
	lm_size n = 0;

	while (n < LM_SLOTS && __atomic_load_n(&slots[n].cls, __ATOMIC_ACQUIRE) != 0 &&
	    __atomic_load_n(&slots[n].state, __ATOMIC_ACQUIRE) != SLOT_CLAIMED)
		n++;
	return n;
}

/* Whose record is written: this process's own (from rec), or the one a forked child writes just
 * before its exec (its own pid, no question of its own, the one spawn it is making). */
struct view {
	int pid, ppid;
	unsigned long sequence;
	const struct spawn *forked; /* NULL: this process's own record */
};

/* The spawns, then the end of the record. An entry that does not fit in what is left of the
 * buffer (with room kept for the end) is left out and counted with those beyond the table: returns
 * how many were left out that way. */
static unsigned record_spawns(struct out *o, const struct view *v)
{
	static const char *const calls[] = { "execve", "posix_spawn", "posix_spawnp", "posix_spawn_setexec" };
	static const char *const shims[] = { "absent", "kept", "removed" };
	unsigned n = v->forked != 0 ? 1 : __atomic_load_n(&rec.s_count, __ATOMIC_ACQUIRE), cut = 0, first = 1;
	lm_size cap = o->cap;

	o->cap = cap - 64; /* the end: "],\n  \"spawns_dropped\": N\n}\n" */
	for (unsigned i = 0; i < n && i < LM_SPAWNS; i++) {
		const struct spawn *sp = v->forked != 0 ? v->forked : &rec.spawns[i];
		lm_size before = o->n;

		if (!__atomic_load_n(&sp->ready, __ATOMIC_ACQUIRE))
			continue;
		put(o, first ? "\n    {\"call\": \"" : ",\n    {\"call\": \"");
		put(o, calls[sp->call]);
		put(o, "\", \"path\": ");
		put_str(o, sp->has_path ? sp->path : 0);
		put(o, ", \"resolved\": ");
		put_str(o, sp->resolved[0] != '\0' ? sp->resolved : 0);
		put(o, ", \"interpreter\": ");
		put_str(o, sp->interp[0] != '\0' ? sp->interp : 0);
		put(o, ", \"protected\": ");
		put_bool(o, sp->protected);
		put(o, ", \"shim\": \"");
		put(o, shims[sp->shim]);
		put(o, "\", \"why\": ");
		put_str(o, sp->why);
		put(o, ", \"pid\": ");
		if (__atomic_load_n(&sp->pid, __ATOMIC_ACQUIRE) > 0)
			put_u64(o, (lm_u64)__atomic_load_n(&sp->pid, __ATOMIC_ACQUIRE));
		else
			put(o, "null");
		put(o, ", \"error\": ");
		if (__atomic_load_n(&sp->error, __ATOMIC_ACQUIRE) > 0)
			put_u64(o, (lm_u64)__atomic_load_n(&sp->error, __ATOMIC_ACQUIRE));
		else
			put(o, "null");
		put(o, "}");
		if (o->full) {
			o->n = before;
			o->full = 0;
			cut++;
			continue;
		}
		first = 0;
	}
	o->cap = cap;
	put(o, first ? "],\n  \"spawns_dropped\": " : "\n  ],\n  \"spawns_dropped\": ");
	put_u64(o, (lm_u64)(n > LM_SPAWNS ? n - LM_SPAWNS : 0) + cut);
	put(o, "\n}\n");
	return cut;
}

static unsigned record_text(struct out *o, int written, const struct view *v)
{
	static const char *const written_names[] = { "load", "update", "exit" };
	lm_size classes = settled_slots(), first = 1;
	unsigned nq = __atomic_load_n(&rec.q_count, __ATOMIC_ACQUIRE);
	const char *init_not = __atomic_load_n(&init_why, __ATOMIC_ACQUIRE);

	put(o, "{\n  \"format\": \"lume-metal-activation/1.1\",\n  \"pid\": ");
	put_u64(o, (lm_u64)v->pid);
	put(o, ",\n  \"ppid\": ");
	put_u64(o, (lm_u64)v->ppid);
	put(o, ",\n  \"forked\": ");
	put_bool(o, v->forked != 0);
	put(o, ",\n  \"exe\": ");
	put_str(o, rec.has_exe ? rec.exe : 0);
#if defined(__arm64e__)
	put(o, ",\n  \"arch\": \"arm64e\"");
#elif defined(__aarch64__) || defined(__arm64__)
	put(o, ",\n  \"arch\": \"arm64\"");
#else
	put(o, ",\n  \"arch\": \"x86_64\"");
#endif
	put(o, ",\n  \"shim_version\": ");
	put_str(o, LM_SHIM_VERSION);
	put(o, ",\n  \"written\": \"");
	put(o, written_names[written]);
	put(o, "\",\n  \"sequence\": ");
	put_u64(o, v->sequence);
	put(o, ",\n  \"incomplete\": ");
	put_bool(o, v->forked != 0 ? v->forked->cut : __atomic_load_n(&rec.incomplete, __ATOMIC_RELAXED));

	put(o, ",\n  \"profile\": {\"active\": ");
	put_bool(o, cfg.valid);
	put(o, ", \"why_stock\": ");
	put_str(o, cfg.valid ? 0 : cfg.why);
	put(o, ", \"apple_family_max\": ");
	if (cfg.valid)
		put_long(o, cfg.family_max);
	else
		put(o, "null");
	put(o, ", \"max_threadgroup_memory\": ");
	if (cfg.valid)
		put_u64(o, cfg.threadgroup_floor);
	else
		put(o, "null");
	put(o, ", \"recommended_working_set_size\": ");
	if (cfg.valid && cfg.has_working_set)
		put_u64(o, cfg.working_set_floor);
	else
		put(o, "null");

	put(o, "},\n  \"hooks\": {\n    \"init_gpu_family_support\": {\"installed\": ");
	put_bool(o, init_not == 0);
	put(o, ", \"why_not\": ");
	put_str(o, init_not);
	put(o, "},\n    \"device_classes\": [");
	for (lm_size i = 0; i < classes; i++) {
		struct slot *sl = &slots[i];
		int hooked = __atomic_load_n(&sl->state, __ATOMIC_ACQUIRE) == SLOT_HOOKED;

		put(o, i == 0 ? "\n      {\"class\": " : ",\n      {\"class\": ");
		put_str(o, class_getName(__atomic_load_n(&sl->cls, __ATOMIC_ACQUIRE)));
		put(o, ", \"installed\": ");
		put_bool(o, hooked);
		put(o, ", \"why_not\": ");
		put_str(o, hooked ? 0 : sl->why);
		put(o, ", \"device\": ");
		put_str(o, __atomic_load_n(&sl->device_state, __ATOMIC_ACQUIRE) == 2 ? sl->device : 0);
		put(o, "}");
	}
	put(o, classes == 0 ? "]\n  },\n  \"questions\": [" : "\n    ]\n  },\n  \"questions\": [");

	for (unsigned i = 0; v->forked == 0 && i < nq && i < LM_QUESTIONS; i++) {
		struct question *q = &rec.questions[i];

		if (!__atomic_load_n(&q->ready, __ATOMIC_ACQUIRE) || (lm_size)q->slot >= classes)
			continue;
		put(o, first ? "\n    {\"device_class\": " : ",\n    {\"device_class\": ");
		first = 0;
		put_u64(o, (lm_u64)q->slot);
		put(o, ", \"family\": ");
		put_long(o, q->family);
		put(o, ", \"stock\": ");
		put_bool(o, q->stock);
		put(o, ", \"given\": ");
		put_bool(o, q->given);
		put(o, "}");
	}
	put(o, first ? "],\n  \"threadgroup_memory_reads\": [" : "\n  ],\n  \"threadgroup_memory_reads\": [");

	first = 1;
	for (lm_size i = 0; v->forked == 0 && i < classes; i++) {
		int n = __atomic_load_n(&slots[i].tg_count, __ATOMIC_ACQUIRE);

		for (int k = 0; k < n; k++) {
			put(o, first ? "\n    {\"device_class\": " : ",\n    {\"device_class\": ");
			first = 0;
			put_u64(o, (lm_u64)i);
			put(o, ", \"stock\": ");
			put_u64(o, slots[i].tg_stock[k]);
			put(o, ", \"given\": ");
			put_u64(o, slots[i].tg_given[k]);
			put(o, "}");
		}
	}
	put(o, first ? "],\n  \"children\": {\"inherit\": " : "\n  ],\n  \"children\": {\"inherit\": ");
	put_bool(o, kids.inherit);
	put(o, ", \"variable\": \"" LM_INJECTION_VARIABLE "\", \"setting\": ");
	put_str(o, kids.setting);
	put(o, ", \"why\": ");
	put_str(o, kids.why);
	put(o, ", \"host_reason\": ");
	put_str(o, rec.has_host_reason ? rec.host_reason : 0);
	put(o, "},\n  \"spawns\": [");
	return record_spawns(o, v);
}

/* The text to tmp, then renamed over path. Any failure leaves the previous record (or none) and
 * no temporary file. */
static void record_file(const char *tmp, const char *path, const char *text, lm_size n)
{
	lm_size off = 0;
	int fd;

	/* Exclusive: never through a link planted at the name. A stale file (an earlier process with
	 * this pid, killed mid-write) is removed and the open tried once more. */
	fd = open(tmp, LM_O_WRONLY | LM_O_CREAT | LM_O_EXCL | LM_O_NOFOLLOW | LM_O_CLOEXEC, 0644);
	if (fd < 0 && unlink(tmp) == 0)
		fd = open(tmp, LM_O_WRONLY | LM_O_CREAT | LM_O_EXCL | LM_O_NOFOLLOW | LM_O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	while (off < n) {
		long w = write(fd, text + off, n - off);

		if (w <= 0)
			break;
		off += (lm_size)w;
	}
	if (close(fd) != 0 || off != n || rename(tmp, path) != 0)
		(void)unlink(tmp);
}

/* The text of v's record into o. Spawns that do not fit are left out, counted: the record then
 * says incomplete. 0 when the text is whole. */
static int record_render(struct out *o, int written, const struct view *v)
{
	if (record_text(o, written, v) > 0 && !__atomic_exchange_n(&rec.incomplete, 1, __ATOMIC_ACQ_REL)) {
		o->n = 0;
		(void)record_text(o, written, v);
	}
	return o->full ? -1 : 0; /* the fixed tables keep the rest far below the buffer; never write a cut one */
}

/* One write of this process's record: .<pid>.tmp, renamed over <pid>.json. */
static void record_write(int written)
{
	struct out o = { rec.text, 0, sizeof(rec.text), 0 };
	struct view v = { rec.pid, rec.ppid, ++rec.sequence, 0 };

	if (record_render(&o, written, &v) == 0)
		record_file(rec.tmp, rec.path, o.p, o.n);
}

/* Text into a fixed buffer: the directory's path and the pid, then suffix. 0 when it does not fit. */
static int record_path(char *dst, lm_size cap, const char *dir, const char *dot, int pid, const char *suffix)
{
	char b[24];
	struct out o = { dst, 0, cap - 1, 0 };

	put(&o, dir);
	put(&o, "/");
	put(&o, dot);
	put(&o, lm_decimal(b, (lm_u64)(unsigned)pid));
	put(&o, suffix);
	dst[o.n] = '\0';
	return !o.full;
}

/* The record a forked child writes under its own pid just before it execs (sequence 1) and, when
 * the exec fails, after (2): what it was given. If the program it starts loads the shim, that
 * program's record replaces it; if not, it stays and says what the program was given. Nothing of
 * the parent's memory is written: the text goes to a mapping of its own (a vfork child shares the
 * parent's memory, and malloc is not safe after a fork). */
static void record_forked(const struct spawn *sp, unsigned long sequence)
{
	lm_size cap = sizeof(rec.text);
	char path[1100], tmp[1100];
	struct view v = { getpid(), getppid(), sequence, sp };
	struct out o = { 0, 0, cap, 0 };
	int saved = LM_ERRNO;

	if (!record_path(path, sizeof(path), rec.dir, "", v.pid, ".json") ||
	    !record_path(tmp, sizeof(tmp), rec.dir, ".", v.pid, ".tmp"))
		return;
	o.p = mmap(0, cap, LM_PROT_READ | LM_PROT_WRITE, LM_MAP_PRIVATE | LM_MAP_ANON, -1, 0);
	if (o.p == LM_MAP_FAILED) {
		LM_ERRNO = saved;
		return;
	}
	if (record_text(&o, WRITTEN_UPDATE, &v) == 0 && !o.full)
		record_file(tmp, path, o.p, o.n);
	(void)munmap(o.p, cap);
	LM_ERRNO = saved;
}

/* Rewrite the record. One thread writes at a time: a thread that finds a write under way marks
 * the record stale and returns; the writer writes again until nothing is stale. A forked child
 * (same memory, another pid) writes nothing: its parent's file is not its own. */
static void record_update(int written)
{
	int saved;

	if (!rec.on)
		return;
	saved = LM_ERRNO;
	if (getpid() != rec.pid)
		goto out;
	if (written > __atomic_load_n(&rec.written, __ATOMIC_RELAXED))
		__atomic_store_n(&rec.written, written, __ATOMIC_RELAXED);
	__atomic_store_n(&rec.stale, 1, __ATOMIC_RELEASE);
	for (;;) {
		int idle = 0;

		if (!__atomic_compare_exchange_n(&rec.writing, &idle, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			break;
		while (__atomic_exchange_n(&rec.stale, 0, __ATOMIC_ACQ_REL))
			record_write(__atomic_load_n(&rec.written, __ATOMIC_RELAXED));
		__atomic_store_n(&rec.writing, 0, __ATOMIC_RELEASE);
		/* News that arrived between the last check and the release has no writer yet. */
		if (!__atomic_load_n(&rec.stale, __ATOMIC_ACQUIRE))
			break;
	}
out:
	LM_ERRNO = saved;
}

static void record_incomplete(void)
{
	if (rec.on && !__atomic_exchange_n(&rec.incomplete, 1, __ATOMIC_ACQ_REL))
		record_update(WRITTEN_UPDATE);
}

/* At load, before anything else reads rec: on only with an absolute directory whose paths fit. */
static void record_init(void)
{
	const char *dir = getenv("LUME_METAL_RECORD_DIR"), *reason = getenv("LUME_METAL_INHERIT_REASON");
	lm_size len = 0;

#if defined(LM_SHIM_TART_ONLY)
	dir = 0; /* the Tart images' shim writes no records */
#endif
	if (dir == 0 || dir[0] != '/')
		return;
	while (dir[len] != '\0')
		len++;
	if (len > 1023)
		return;
	rec.pid = getpid();
	rec.ppid = getppid();
	if (!record_path(rec.path, sizeof(rec.path), dir, "", rec.pid, ".json") ||
	    !record_path(rec.tmp, sizeof(rec.tmp), dir, ".", rec.pid, ".tmp"))
		return;
	copy_text(rec.dir, sizeof(rec.dir), dir);
#if defined(__APPLE__)
	{
		char exe[4096];
		unsigned int size = sizeof(exe);

		if (_NSGetExecutablePath(exe, &size) == 0) {
			copy_text(rec.exe, sizeof(rec.exe), exe);
			rec.has_exe = 1;
		}
	}
#else
	{
		char exe[4096];
		long n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		if (n > 0) {
			exe[n] = '\0';
			copy_text(rec.exe, sizeof(rec.exe), exe);
			rec.has_exe = 1;
		}
	}
#endif
	if (reason != 0 && *reason != '\0') {
		char clean[LM_WHY];
		const char *parts[] = { reason };

		/* Control characters out first (join), then cut at a character boundary (copy_text). */
		(void)join(clean, sizeof(clean), parts, 1);
		copy_text(rec.host_reason, sizeof(rec.host_reason), clean);
		rec.has_host_reason = 1;
	}
	for (lm_size i = 0; i < LM_SLOTS; i++) {
		for (unsigned long k = 0; k < 256; k++)
			slots[i].seen[k] = LM_SEEN_EMPTY(k);
	}
	rec.sel_name = sel_registerName("name");
	rec.sel_utf8 = sel_registerName("UTF8String");
	rec.on = 1;
}

/* The device's name, once per class, from the first device of the class that is asked. */
static void record_device(struct slot *sl, id self)
{
	int expected = 0;
	Class cls = object_getClass(self), scls;
	id name;
	const char *text;

	if (!__atomic_compare_exchange_n(&sl->device_state, &expected, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	if (class_respondsToSelector(cls, rec.sel_name) &&
	    (name = ((id (*)(id, SEL))class_getMethodImplementation(cls, rec.sel_name))(self, rec.sel_name)) != 0 &&
	    class_respondsToSelector((scls = object_getClass(name)), rec.sel_utf8) &&
	    (text = ((const char *(*)(id, SEL))class_getMethodImplementation(scls, rec.sel_utf8))(name,
	        rec.sel_utf8)) != 0) {
		copy_text(sl->device, sizeof(sl->device), text);
		__atomic_store_n(&sl->device_state, 2, __ATOMIC_RELEASE);
	}
}

/* Recorded already (the slow path's scan, for a family whose seen entry another family holds). */
static int question_recorded(lm_size i, long family)
{
	unsigned n = __atomic_load_n(&rec.q_count, __ATOMIC_ACQUIRE);

	for (unsigned q = 0; q < n && q < LM_QUESTIONS; q++) {
		if (__atomic_load_n(&rec.questions[q].ready, __ATOMIC_ACQUIRE) && rec.questions[q].slot == (int)i &&
		    rec.questions[q].family == family)
			return 1;
	}
	return 0;
}

/* The first question for a family on a class, recorded once: the thread whose compare-and-swap
 * fills the family's seen entry records it. */
static void record_question_slow(lm_size i, id self, long family, unsigned char stock, unsigned char given)
{
	struct slot *sl = &slots[i];
	unsigned long index = (unsigned long)family & 255, key = (unsigned long)family + 1;
	unsigned long *entry = &sl->seen[index], empty = LM_SEEN_EMPTY(index);
	int idle = 0, locked = 0;
	unsigned q;

	if (!__atomic_compare_exchange_n(entry, &empty, key, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		if (empty == key)
			return; /* another thread recorded it meanwhile */
		/* The entry is another family's: one thread at a time scans and records; one that finds
		 * it busy leaves the question to the next time it is asked, and the record says it may
		 * lack one. */
		if (!__atomic_compare_exchange_n(&sl->collide_busy, &idle, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			record_incomplete();
			return;
		}
		locked = 1;
		if (question_recorded(i, family)) {
			__atomic_store_n(&sl->collide_busy, 0, __ATOMIC_RELEASE);
			return;
		}
	}
	record_device(sl, self);
	q = __atomic_fetch_add(&rec.q_count, 1, __ATOMIC_ACQ_REL);
	if (q < LM_QUESTIONS) {
		rec.questions[q].slot = (int)i;
		rec.questions[q].family = family;
		rec.questions[q].stock = stock;
		rec.questions[q].given = given;
		__atomic_store_n(&rec.questions[q].ready, 1, __ATOMIC_RELEASE);
	}
	if (locked)
		__atomic_store_n(&sl->collide_busy, 0, __ATOMIC_RELEASE);
	if (q >= LM_QUESTIONS)
		record_incomplete();
	else
		record_update(WRITTEN_UPDATE);
}

/* In the hook: a question already recorded costs this one load and compare. */
static inline void record_question(lm_size i, id self, long family, unsigned char stock, unsigned char given)
{
	if (__atomic_load_n(&slots[i].seen[(unsigned long)family & 255], __ATOMIC_RELAXED) != (unsigned long)family + 1)
		record_question_slow(i, self, family, stock, given);
}

/* A maxThreadgroupMemoryLength read with a stock value not seen on this class. A thread that finds
 * another recording returns at once; the value is seen again on its next read. */
static void record_threadgroup(lm_size i, unsigned long stock, unsigned long given)
{
	struct slot *sl = &slots[i];
	int n = __atomic_load_n(&sl->tg_count, __ATOMIC_ACQUIRE), idle = 0;

	for (int k = 0; k < n; k++) {
		if (sl->tg_stock[k] == stock)
			return;
	}
	if (n == LM_TG_READS) {
		record_incomplete();
		return;
	}
	if (!__atomic_compare_exchange_n(&sl->tg_busy, &idle, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	n = __atomic_load_n(&sl->tg_count, __ATOMIC_ACQUIRE);
	for (int k = 0; k < n; k++) {
		if (sl->tg_stock[k] == stock)
			n = -1;
	}
	if (n >= 0 && n < LM_TG_READS) {
		sl->tg_stock[n] = stock;
		sl->tg_given[n] = given;
		__atomic_store_n(&sl->tg_count, n + 1, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&sl->tg_busy, 0, __ATOMIC_RELEASE);
	if (n >= 0)
		record_update(WRITTEN_UPDATE);
}

/* ---- the hooked methods: one set of entry points per slot ------------------------------- */

#define LM_HOOKS(i)                                                                        \
	static unsigned char supports_family_##i(id self, SEL cmd, long family)                \
	{                                                                                      \
		family_fn orig = __atomic_load_n(&slots[i].supports_family, __ATOMIC_ACQUIRE); \
		unsigned char answer = orig(self, cmd, family);                                \
		unsigned char given = family >= 1001 && family <= cfg.family_max ? 1 : answer; \
		if (rec.on)                                                                    \
			record_question(i, self, family, answer, given);                       \
		return given;                                                                  \
	}                                                                                      \
	static unsigned long max_threadgroup_memory_##i(id self, SEL cmd)                      \
	{                                                                                      \
		length_fn orig = __atomic_load_n(&slots[i].max_threadgroup_memory, __ATOMIC_ACQUIRE); \
		unsigned long v = orig(self, cmd);                                             \
		unsigned long given = v < cfg.threadgroup_floor ? cfg.threadgroup_floor : v;   \
		if (rec.on)                                                                    \
			record_threadgroup(i, v, given);                                       \
		return given;                                                                  \
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
			log_stock(sl->why, class_getName(cls), " has no method ", selector_names[i]);
			return -1;
		}
		if (!encoding_matches(method_getTypeEncoding(m[i]), patterns[i])) {
			log_stock(sl->why, class_getName(cls), " has an unexpected signature for ", selector_names[i]);
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
		record_update(WRITTEN_UPDATE);
		return;
	}
	log_stock(0, class_getName(cls), ": too many device classes", "");
	record_incomplete();
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
	if (m == 0) {
		__atomic_store_n(&init_why, "_MTLDevice has no method initGPUFamilySupport", __ATOMIC_RELEASE);
	} else if (!encoding_matches(method_getTypeEncoding(m), enc_init)) {
		__atomic_store_n(&init_why, "_MTLDevice has an unexpected signature for initGPUFamilySupport",
		    __ATOMIC_RELEASE);
	} else {
		__atomic_store_n(&init_original, (init_fn)method_getImplementation(m), __ATOMIC_RELEASE);
		set_own_method(base, sel, m, (IMP)init_gpu_family_support);
		__atomic_store_n(&init_why, (const char *)0, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&init_state, INIT_DONE, __ATOMIC_RELEASE);
}

#if !defined(__APPLE__)
static void class_loaded(Class cls, void *category)
{
	if (category == 0 && str_eq(class_getName(cls), "_MTLDevice")) {
		hook_private_base(cls);
		record_update(WRITTEN_UPDATE);
	}
	if (load_callback_next != 0)
		load_callback_next(cls, category);
}
#endif

/* ---- interposed exec and spawn calls: the rule applied at each --------------------------- */

/* macOS: __DATA,__interpose tuples (below, with Metal's), which dyld honours with chained fixups
 * and old-style binds alike (reference metal.md, 2026-11). Every other image's calls reach these;
 * the calls made here reach libSystem's own. execv, execvp and the execl family are libsystem_c's
 * and end in execve; posix_spawnp is libsystem_kernel's and calls posix_spawn within that image,
 * so both spawn calls are interposed (xnu libsyscall/wrappers/spawn/posix_spawn.c); popen() and
 * system() call posix_spawn (apple-oss-distributions/Libc gen/FreeBSD/popen.c,
 * stdlib/FreeBSD/system.c). Linux (the tests): preloaded definitions of every exec and spawn call a
 * program makes through the dynamic linker (glibc's own execv, execvp, execl* and posix_spawnp end
 * in internal calls that preloading cannot reach, so each is its own entry point; its system()
 * and popen() spawn /bin/sh internally and are not reached). glibc has no POSIX_SPAWN_SETEXEC:
 * an exec in place is an execve there. */
enum { CALL_EXECVE = 0, CALL_SPAWN = 1, CALL_SPAWNP = 2, CALL_SETEXEC = 3 };

struct spawn_state {
	struct env_out env;
	struct target t;
	int slot;           /* this process's record's entry; -1 none */
	int forked;         /* a forked child's own record: own */
	struct spawn own;
};

static void spawn_fill(struct spawn *sp, const struct spawn_state *st, int call, const char *file, int shim,
    const char *why)
{
	sp->call = (unsigned char)call;
	sp->protected = (unsigned char)st->t.protected;
	sp->shim = (unsigned char)shim;
	sp->why = why;
	sp->has_path = file[0] != '\0';
	sp->cut = (unsigned char)(copy_cut(sp->path, sizeof(sp->path), file) |
	    copy_cut(sp->resolved, sizeof(sp->resolved), st->t.path) | copy_cut(sp->interp, sizeof(sp->interp), st->t.interp));
	sp->pid = sp->error = 0;
}

/* Written before the call: an exec that succeeds never returns. A forked (or vforked) child, whose
 * pid is not the record's, writes a record of its own and leaves the parent's memory alone. */
static void spawn_record(struct spawn_state *st, int call, const char *file, int shim, const char *why)
{
	struct spawn *sp;
	unsigned i;

	st->slot = -1;
	st->forked = 0;
	if (!rec.on)
		return;
	if (getpid() != rec.pid) {
		spawn_fill(&st->own, st, call, file, shim, why);
		st->own.ready = 1;
		st->forked = 1;
		record_forked(&st->own, 1);
		return;
	}
	i = __atomic_fetch_add(&rec.s_count, 1, __ATOMIC_ACQ_REL);
	if (i >= LM_SPAWNS) {
		record_incomplete();
		return;
	}
	sp = &rec.spawns[i];
	spawn_fill(sp, st, call, file, shim, why);
	if (sp->cut)
		__atomic_store_n(&rec.incomplete, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&sp->ready, 1, __ATOMIC_RELEASE);
	st->slot = (int)i;
	record_update(WRITTEN_UPDATE);
}

/* The environment the call passes on, decided and recorded before it is made. Never fails: what
 * cannot be done leaves the caller's environment as it was, and the record says so. */
static char *const *spawn_begin(struct spawn_state *st, int call, const char *file, int search, char *const envp[])
{
	const char *why = "the environment given has no injection variable naming the shim";
	int shim = SHIM_ABSENT, saved = LM_ERRNO, names = envp != 0 && kids.self != 0 && env_names_self(envp);

	st->env.envp = 0;
	st->env.map = 0;
	st->slot = -1;
	st->forked = 0;
	if (file == 0 || (!names && !rec.on))
		return envp; /* nothing to decide, nothing to record */
	target_read(&st->t, file, search);
	if (envp != 0 && kids.self == 0) {
		for (lm_size i = 0; envp[i] != 0; i++) {
			if (is_injection(envp[i])) {
				shim = SHIM_KEPT;
				why = "the shim could not find its own path: the environment is passed on as given";
			}
		}
	} else if (names) {
		shim = spawn_rule(&st->t, &why);
		/* Passed on as given rather than the call refused: a refusal fails every such spawn,
		 * while the original environment is exactly what the program would pass without this
		 * rule (docs/guest.md, "Children"). */
		if (shim == SHIM_REMOVED && env_without_self(envp, &st->env) < 0) {
			shim = SHIM_KEPT;
			why = "no memory for an environment without the shim: passed on as given";
		}
	}
	spawn_record(st, call, file, shim, why);
	LM_ERRNO = saved;
	return st->env.envp != 0 ? st->env.envp : envp;
}

/* After a call that returned: error (0 none) and the child's pid (0 none) for the record. */
static void spawn_end(struct spawn_state *st, int error, int pid)
{
	int saved = LM_ERRNO;

	env_release(&st->env);
	if (st->forked && (error != 0 || pid > 0)) {
		st->own.error = error;
		st->own.pid = pid;
		record_forked(&st->own, 2);
	} else if (st->slot >= 0 && (error != 0 || pid > 0)) {
		__atomic_store_n(&rec.spawns[st->slot].error, error, __ATOMIC_RELEASE);
		__atomic_store_n(&rec.spawns[st->slot].pid, pid, __ATOMIC_RELEASE);
		record_update(WRITTEN_UPDATE);
	}
	LM_ERRNO = saved;
}

/* Opaque here: a pointer on both systems (posix_spawnattr_t, posix_spawn_file_actions_t). */
int execve(const char *path, char *const argv[], char *const envp[]);
int posix_spawn(int *pid, const char *path, const void *file_actions, const void *attr, char *const argv[],
    char *const envp[]);
int posix_spawnp(int *pid, const char *file, const void *file_actions, const void *attr, char *const argv[],
    char *const envp[]);

static int spawn_call(int call, int search, int *pid, const char *file, const void *fa, const void *attr,
    char *const argv[], char *const envp[]);

#if defined(__APPLE__)
int posix_spawnattr_getflags(const void *attr, short *flags);
#define LM_POSIX_SPAWN_SETEXEC 0x0040

static int execve_hook(const char *path, char *const argv[], char *const envp[])
{
	struct spawn_state st;
	char *const *env = spawn_begin(&st, CALL_EXECVE, path, 0, envp);
	int rc = execve(path, argv, env);

	spawn_end(&st, LM_ERRNO, 0);
	return rc;
}

static int spawn_real(int search, int *pid, const char *file, const void *fa, const void *attr, char *const argv[],
    char *const envp[])
{
	return search ? posix_spawnp(pid, file, fa, attr, argv, envp) : posix_spawn(pid, file, fa, attr, argv, envp);
}

/* posix_spawn with POSIX_SPAWN_SETEXEC is an exec in place: what CPython's framework stub does
 * (Mac/Tools/pythonw.c; reference metal.md, 2026-12-02). */
static int spawn_kind(const void *attr, int call)
{
	short flags = 0;

	if (attr != 0 && posix_spawnattr_getflags(attr, &flags) == 0 && (flags & LM_POSIX_SPAWN_SETEXEC) != 0)
		return CALL_SETEXEC;
	return call;
}

static int posix_spawn_hook(int *pid, const char *path, const void *fa, const void *attr, char *const argv[],
    char *const envp[])
{
	return spawn_call(spawn_kind(attr, CALL_SPAWN), 0, pid, path, fa, attr, argv, envp);
}

static int posix_spawnp_hook(int *pid, const char *file, const void *fa, const void *attr, char *const argv[],
    char *const envp[])
{
	return spawn_call(spawn_kind(attr, CALL_SPAWNP), 1, pid, file, fa, attr, argv, envp);
}
#else
extern char **environ;
int execv(const char *path, char *const argv[]);
int execvp(const char *file, char *const argv[]);
int execvpe(const char *file, char *const argv[], char *const envp[]);
int execl(const char *path, const char *arg, ...);
int execlp(const char *file, const char *arg, ...);
int execle(const char *path, const char *arg, ...);
#define LM_ENOSYS 38

/* Preloaded, these definitions come first in the global scope; the next object's are the real
 * ones (Metal's, libc's). */
static void *next_symbol(void **cache, const char *name)
{
	void *fn = __atomic_load_n(cache, __ATOMIC_ACQUIRE);

	if (fn == 0) {
		fn = dlsym(LM_RTLD_NEXT, name);
		__atomic_store_n(cache, fn, __ATOMIC_RELEASE);
	}
	return fn;
}

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*spawn_fn)(int *, const char *, const void *, const void *, char *const[], char *const[]);

/* libc's, found at load (dlsym in a forked child could wait for a lock another thread held). */
static void *next_execve, *next_execvpe, *next_spawn, *next_spawnp;

static void spawn_init(void)
{
	(void)next_symbol(&next_execve, "execve");
	(void)next_symbol(&next_execvpe, "execvpe");
	(void)next_symbol(&next_spawn, "posix_spawn");
	(void)next_symbol(&next_spawnp, "posix_spawnp");
}

/* search: execvpe (PATH searched as glibc does it), else execve. */
static int exec_call(const char *file, int search, char *const argv[], char *const envp[])
{
	struct spawn_state st;
	execve_fn fn = (execve_fn)next_symbol(search ? &next_execvpe : &next_execve, search ? "execvpe" : "execve");
	char *const *env;
	int rc;

	if (fn == 0) {
		LM_ERRNO = LM_ENOSYS;
		return -1;
	}
	env = spawn_begin(&st, CALL_EXECVE, file, search, envp);
	rc = fn(file, argv, env);
	spawn_end(&st, LM_ERRNO, 0);
	return rc;
}

/* The execl family: the list as an array (on the stack, as glibc's own execl builds it). */
static int exec_list(const char *file, int search, int with_env, const char *arg, __builtin_va_list ap)
{
	__builtin_va_list count;
	lm_size n = 1;

	__builtin_va_copy(count, ap);
	while (__builtin_va_arg(count, const char *) != 0)
		n++;
	__builtin_va_end(count);
	{
		char *argv[n + 1];
		char *const *envp;

		argv[0] = (char *)arg;
		for (lm_size i = 1; i <= n; i++)
			argv[i] = __builtin_va_arg(ap, char *);
		envp = with_env ? __builtin_va_arg(ap, char *const *) : environ;
		return exec_call(file, search, argv, envp);
	}
}

LM_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	return exec_call(path, 0, argv, envp);
}

LM_EXPORT int execv(const char *path, char *const argv[])
{
	return exec_call(path, 0, argv, environ);
}

LM_EXPORT int execvp(const char *file, char *const argv[])
{
	return exec_call(file, 1, argv, environ);
}

LM_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	return exec_call(file, 1, argv, envp);
}

LM_EXPORT int execl(const char *path, const char *arg, ...)
{
	__builtin_va_list ap;
	int rc;

	__builtin_va_start(ap, arg);
	rc = arg == 0 ? exec_call(path, 0, (char *[]){ 0 }, environ) : exec_list(path, 0, 0, arg, ap);
	__builtin_va_end(ap);
	return rc;
}

LM_EXPORT int execlp(const char *file, const char *arg, ...)
{
	__builtin_va_list ap;
	int rc;

	__builtin_va_start(ap, arg);
	rc = arg == 0 ? exec_call(file, 1, (char *[]){ 0 }, environ) : exec_list(file, 1, 0, arg, ap);
	__builtin_va_end(ap);
	return rc;
}

LM_EXPORT int execle(const char *path, const char *arg, ...)
{
	__builtin_va_list ap;
	int rc;

	__builtin_va_start(ap, arg);
	rc = arg == 0 ? exec_call(path, 0, (char *[]){ 0 }, __builtin_va_arg(ap, char *const *)) :
	    exec_list(path, 0, 1, arg, ap);
	__builtin_va_end(ap);
	return rc;
}

static int spawn_real(int search, int *pid, const char *file, const void *fa, const void *attr, char *const argv[],
    char *const envp[])
{
	spawn_fn fn = (spawn_fn)next_symbol(search ? &next_spawnp : &next_spawn, search ? "posix_spawnp" : "posix_spawn");

	return fn != 0 ? fn(pid, file, fa, attr, argv, envp) : LM_ENOSYS;
}

LM_EXPORT int posix_spawn(int *pid, const char *path, const void *fa, const void *attr, char *const argv[],
    char *const envp[])
{
	return spawn_call(CALL_SPAWN, 0, pid, path, fa, attr, argv, envp);
}

LM_EXPORT int posix_spawnp(int *pid, const char *file, const void *fa, const void *attr, char *const argv[],
    char *const envp[])
{
	return spawn_call(CALL_SPAWNP, 1, pid, file, fa, attr, argv, envp);
}
#endif

/* posix_spawn (search 0) and posix_spawnp (1), recorded as call. They return an error number and
 * leave errno alone. */
static int spawn_call(int call, int search, int *pid, const char *file, const void *fa, const void *attr,
    char *const argv[], char *const envp[])
{
	struct spawn_state st;
	int child = 0, rc;
	char *const *env = spawn_begin(&st, call, file, search, envp);

	rc = spawn_real(search, pid != 0 ? pid : &child, file, fa, attr, argv, env);
	spawn_end(&st, rc, rc == 0 ? (pid != 0 ? *pid : child) : 0);
	return rc;
}

__attribute__((constructor)) static void shim_load(void)
{
	record_init();
	kids_read();
#if !defined(__APPLE__)
	spawn_init();
#endif
	config_read();
	if (!cfg.valid) {
		init_why = "profile not active";
		record_update(WRITTEN_LOAD);
		return;
	}
#if !defined(__APPLE__)
	load_callback_next = _objc_load_callback;
	_objc_load_callback = class_loaded;
#endif
	hook_private_base(objc_lookUpClass("_MTLDevice"));
	record_update(WRITTEN_LOAD);
}

/* At a normal exit: the last record says the process ended (a signal keeps the last update). */
__attribute__((destructor)) static void shim_unload(void)
{
	record_update(WRITTEN_EXIT);
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
	{ (const void *)execve_hook, (const void *)execve },
	{ (const void *)posix_spawn_hook, (const void *)posix_spawn },
	{ (const void *)posix_spawnp_hook, (const void *)posix_spawnp },
};
#else

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
