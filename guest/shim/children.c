/* lume-metal shim: children, decided at each spawn (docs/guest.md, "Children").
 *
 * Children are decided at each spawn, configured or not: the shim leaves its own environment
 * alone (an exec in place, a server's worker, a venv interpreter keep it) and interposes the exec
 * and spawn calls. It takes its own path out of the injection variable only for a target that
 * cannot take it: an arm64e program (its Mach-O header: a thin arm64e file, or a universal one
 * whose arm64 slices are all arm64e) or a SIP-protected one (its folder: all are arm64e), on a
 * guest whose SIP is not enabled when the shim has no arm64e slice, which dyld would terminate.
 * LUME_METAL_INHERIT=0/1 overrides. A spawn never fails because of the shim; the record lists what
 * each was given.
 *
 * This file holds the rule: what the host says (lm_shim_kids_read, at load), what a target is (its path,
 * interpreter and Mach-O header), whether it keeps the shim, and the environment without it. The
 * calls it is applied at are interpose.c's.
 */
#include "shim_internal.h"

#define LM_LINKS 8          /* symbolic links followed to the file itself */

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

/* Read once at load, before any spawn can be hooked; read-only afterwards (shim_internal.h). */
struct kids lm_shim_kids;

/* What the host says about the guest (docs/activation-format.md, "Children"), and the override. A
 * SIP state the shim is not told counts as not enabled: removing the shim from a protected
 * program loses nothing on a SIP-on guest, since such a program purges it itself, while keeping it
 * on a SIP-off guest gets the program terminated. */
void lm_shim_kids_read(void)
{
	const char *inherit = getenv("LUME_METAL_INHERIT"), *sip = getenv("LUME_METAL_GUEST_SIP");
	const char *arm64e = getenv("LUME_METAL_SHIM_ARM64E");
	const char *prefix = "", *rule, *sip_words = "guest SIP not reported";
	lm_dl_info info;

	lm_shim_kids.rule = -1;
	if (inherit != 0 && *inherit != '\0') {
		lm_shim_kids.setting = lm_shim_str_eq(inherit, "1") ? "1" :
		    lm_shim_str_eq(inherit, "0") ? "0" : "invalid";
		if (lm_shim_kids.setting[0] != 'i')
			lm_shim_kids.rule = lm_shim_kids.setting[0] - '0';
		else
			prefix = "LUME_METAL_INHERIT is neither 0 nor 1, so ignored: ";
	}
	lm_shim_kids.sip = -1;
	if (sip != 0 && lm_shim_str_eq(sip, "enabled"))
		lm_shim_kids.sip = 1;
	else if (sip != 0 && (lm_shim_str_eq(sip, "disabled") || lm_shim_str_eq(sip, "custom"))) {
		lm_shim_kids.sip = 0;
		sip_words = lm_shim_str_eq(sip, "custom") ? "guest SIP custom" : "guest SIP disabled";
	}
#if defined(__arm64e__)
	(void)arm64e;
	lm_shim_kids.arm64e = 1; /* this very slice */
#else
	lm_shim_kids.arm64e = arm64e != 0 && lm_shim_str_eq(arm64e, "1");
#endif
	if (dladdr((const void *)lm_shim_kids_read, &info) != 0 && info.dli_fname != 0 && info.dli_fname[0] != '\0')
		lm_shim_kids.self = info.dli_fname;
	lm_shim_kids.inherit = lm_shim_kids.rule != 0;
	if (getenv(LM_INJECTION_VARIABLE) == 0) {
		lm_shim_kids.inherit = 0;
		prefix = "";
		rule = "the injection variable is not set";
	} else if (lm_shim_kids.rule == 1) {
		rule = "LUME_METAL_INHERIT=1: every child keeps the shim";
	} else if (lm_shim_kids.rule == 0) {
		rule = "LUME_METAL_INHERIT=0: every child starts without the shim";
	} else if (lm_shim_kids.sip == 1) {
		rule = "decided at each spawn: guest SIP enabled, so every child keeps the shim (protected programs ignore it)";
	} else if (lm_shim_kids.arm64e) {
		rule = "decided at each spawn: the shim has an arm64e slice, so every child keeps it";
	} else {
		const char *parts[] = { prefix, "decided at each spawn: protected and arm64e programs start without the shim (",
			sip_words, ", no arm64e slice); every other child keeps it" };

		(void)lm_shim_join(lm_shim_kids.why, LM_WHY, parts, 4);
		return;
	}
	{
		const char *parts[] = { prefix, rule };

		(void)lm_shim_join(lm_shim_kids.why, LM_WHY, parts, 2);
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


void lm_shim_target_read(struct target *t, const char *file, int search)
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

/* Whether the target gets the shim, and why (a static text for the record). */
int lm_shim_spawn_rule(const struct target *t, const char **why)
{
	if (lm_shim_kids.rule >= 0) {
		*why = lm_shim_kids.rule == 1 ? "LUME_METAL_INHERIT=1" : "LUME_METAL_INHERIT=0";
		return lm_shim_kids.rule == 1 ? SHIM_KEPT : SHIM_REMOVED;
	}
	if (!t->protected && !t->arm64e) {
		*why = "not a protected program";
		return SHIM_KEPT;
	}
	/* The header is the first reason, the folder the second (a protected program is arm64e too). */
	if (lm_shim_kids.sip == 1) {
		*why = t->protected ? "protected program on a SIP-on guest: it purges the variable itself" :
		    "arm64e program on a SIP-on guest";
		return SHIM_KEPT;
	}
	if (lm_shim_kids.arm64e) {
		*why = t->arm64e ? "arm64e program, and the shim has an arm64e slice" :
		    "protected program, and the shim has an arm64e slice";
		return SHIM_KEPT;
	}
	if (t->arm64e)
		*why = lm_shim_kids.sip == 0 ? "arm64e program (its Mach-O header) on a SIP-off guest and the shim has no arm64e slice" :
		    "arm64e program (its Mach-O header), the guest's SIP not reported, and the shim has no arm64e slice";
	else
		*why = lm_shim_kids.sip == 0 ? "protected program on a SIP-off guest and the shim has no arm64e slice" :
		    "protected program, the guest's SIP not reported, and the shim has no arm64e slice";
	return SHIM_REMOVED;
}

int lm_shim_is_injection(const char *entry)
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
int lm_shim_env_names_self(char *const envp[])
{
	for (lm_size i = 0; envp != 0 && envp[i] != 0; i++) {
		const char *r, *e, *end;

		if (!lm_shim_is_injection(envp[i]))
			continue;
		r = envp[i] + sizeof(LM_INJECTION_VARIABLE);
		while (*r != '\0') {
			next_entry(&r, &e, &end);
			if (end != e && names_self(e, end, lm_shim_kids.self))
				return 1;
		}
	}
	return 0;
}

/* Builds o->envp. 0 done; -1 no memory for it (o->envp NULL: the caller's is passed on). */
int lm_shim_env_without_self(char *const envp[], struct env_out *o)
{
	lm_size n = 0, text = 0, k = 0, t = 0;
	char **arr = o->arr, *buf = o->text;

	o->envp = 0;
	o->map = 0;
	for (; envp[n] != 0; n++) {
		if (lm_shim_is_injection(envp[n]))
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

		if (!lm_shim_is_injection(envp[i])) {
			arr[k++] = envp[i];
			continue;
		}
		for (r = LM_INJECTION_VARIABLE "="; *r != '\0'; r++)
			buf[t++] = *r;
		r = envp[i] + sizeof(LM_INJECTION_VARIABLE);
		while (*r != '\0') {
			next_entry(&r, &e, &end);
			if (end == e || names_self(e, end, lm_shim_kids.self))
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

void lm_shim_env_release(struct env_out *o)
{
	if (o->map != 0)
		(void)munmap(o->map, o->map_len);
	o->map = 0;
}
