/* lume-metal shim: activation records (docs/activation-format.md).
 *
 * Activation records (only with LUME_METAL_RECORD_DIR; never in the TART_METAL_*-only build): the
 * process, the configuration, the hooks, and every distinct question and answer, kept in fixed
 * static tables and written to <dir>/<pid>.json through a temporary file and a rename at load, on
 * news (from inside the hooked call that brings it), at each spawn and at exit; a forked child
 * writes one under its own pid before its exec. A call that brings nothing new
 * costs one load and one bit test; one thread writes at a time and the others never wait.
 *
 * This file owns the record (lm_shim_rec) and writes it; it reads the shared tables (state.c) and
 * the children rule's settings (children.c). The hooks' fast path, lm_shim_record_question, is
 * inline in shim_internal.h.
 */
#include "shim_internal.h"

/* Set at load (on, pid, paths, exe, host_reason), then changed only with atomics (shim_internal.h). */
struct record lm_shim_rec;

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
int lm_shim_copy_cut(char *dst, lm_size cap, const char *src)
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
	if (lm_shim_copy_cut(dst, cap, src))
		__atomic_store_n(&lm_shim_rec.incomplete, 1, __ATOMIC_RELAXED);
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

	while (n < LM_SLOTS && __atomic_load_n(&lm_shim_slots[n].cls, __ATOMIC_ACQUIRE) != 0 &&
	    __atomic_load_n(&lm_shim_slots[n].state, __ATOMIC_ACQUIRE) != SLOT_CLAIMED)
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
	unsigned n = v->forked != 0 ? 1 : __atomic_load_n(&lm_shim_rec.s_count, __ATOMIC_ACQUIRE), cut = 0, first = 1;
	lm_size cap = o->cap;

	o->cap = cap - 64; /* the end: "],\n  \"spawns_dropped\": N\n}\n" */
	for (unsigned i = 0; i < n && i < LM_SPAWNS; i++) {
		const struct spawn *sp = v->forked != 0 ? v->forked : &lm_shim_rec.spawns[i];
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
	unsigned nq = __atomic_load_n(&lm_shim_rec.q_count, __ATOMIC_ACQUIRE);
	const char *init_not = __atomic_load_n(&lm_shim_init_why, __ATOMIC_ACQUIRE);

	put(o, "{\n  \"format\": \"lume-metal-activation/1.1\",\n  \"pid\": ");
	put_u64(o, (lm_u64)v->pid);
	put(o, ",\n  \"ppid\": ");
	put_u64(o, (lm_u64)v->ppid);
	put(o, ",\n  \"forked\": ");
	put_bool(o, v->forked != 0);
	put(o, ",\n  \"exe\": ");
	put_str(o, lm_shim_rec.has_exe ? lm_shim_rec.exe : 0);
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
	put_bool(o, v->forked != 0 ? v->forked->cut : __atomic_load_n(&lm_shim_rec.incomplete, __ATOMIC_RELAXED));

	put(o, ",\n  \"profile\": {\"active\": ");
	put_bool(o, lm_shim_cfg.valid);
	put(o, ", \"why_stock\": ");
	put_str(o, lm_shim_cfg.valid ? 0 : lm_shim_cfg.why);
	put(o, ", \"apple_family_max\": ");
	if (lm_shim_cfg.valid)
		put_long(o, lm_shim_cfg.family_max);
	else
		put(o, "null");
	put(o, ", \"max_threadgroup_memory\": ");
	if (lm_shim_cfg.valid)
		put_u64(o, lm_shim_cfg.threadgroup_floor);
	else
		put(o, "null");
	put(o, ", \"recommended_working_set_size\": ");
	if (lm_shim_cfg.valid && lm_shim_cfg.has_working_set)
		put_u64(o, lm_shim_cfg.working_set_floor);
	else
		put(o, "null");

	put(o, "},\n  \"hooks\": {\n    \"init_gpu_family_support\": {\"installed\": ");
	put_bool(o, init_not == 0);
	put(o, ", \"why_not\": ");
	put_str(o, init_not);
	put(o, "},\n    \"device_classes\": [");
	for (lm_size i = 0; i < classes; i++) {
		struct slot *sl = &lm_shim_slots[i];
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
		struct question *q = &lm_shim_rec.questions[i];

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
		int n = __atomic_load_n(&lm_shim_slots[i].tg_count, __ATOMIC_ACQUIRE);

		for (int k = 0; k < n; k++) {
			put(o, first ? "\n    {\"device_class\": " : ",\n    {\"device_class\": ");
			first = 0;
			put_u64(o, (lm_u64)i);
			put(o, ", \"stock\": ");
			put_u64(o, lm_shim_slots[i].tg_stock[k]);
			put(o, ", \"given\": ");
			put_u64(o, lm_shim_slots[i].tg_given[k]);
			put(o, "}");
		}
	}
	put(o, first ? "],\n  \"children\": {\"inherit\": " : "\n  ],\n  \"children\": {\"inherit\": ");
	put_bool(o, lm_shim_kids.inherit);
	put(o, ", \"variable\": \"" LM_INJECTION_VARIABLE "\", \"setting\": ");
	put_str(o, lm_shim_kids.setting);
	put(o, ", \"why\": ");
	put_str(o, lm_shim_kids.why);
	put(o, ", \"host_reason\": ");
	put_str(o, lm_shim_rec.has_host_reason ? lm_shim_rec.host_reason : 0);
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
	if (record_text(o, written, v) > 0 && !__atomic_exchange_n(&lm_shim_rec.incomplete, 1, __ATOMIC_ACQ_REL)) {
		o->n = 0;
		(void)record_text(o, written, v);
	}
	return o->full ? -1 : 0; /* the fixed tables keep the rest far below the buffer; never write a cut one */
}

/* One write of this process's record: .<pid>.tmp, renamed over <pid>.json. */
static void record_write(int written)
{
	struct out o = { lm_shim_rec.text, 0, sizeof(lm_shim_rec.text), 0 };
	struct view v = { lm_shim_rec.pid, lm_shim_rec.ppid, ++lm_shim_rec.sequence, 0 };

	if (record_render(&o, written, &v) == 0)
		record_file(lm_shim_rec.tmp, lm_shim_rec.path, o.p, o.n);
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
void lm_shim_record_forked(const struct spawn *sp, unsigned long sequence)
{
	lm_size cap = sizeof(lm_shim_rec.text);
	char path[1100], tmp[1100];
	struct view v = { getpid(), getppid(), sequence, sp };
	struct out o = { 0, 0, cap, 0 };
	int saved = LM_ERRNO;

	if (!record_path(path, sizeof(path), lm_shim_rec.dir, "", v.pid, ".json") ||
	    !record_path(tmp, sizeof(tmp), lm_shim_rec.dir, ".", v.pid, ".tmp"))
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
void lm_shim_record_update(int written)
{
	int saved;

	if (!lm_shim_rec.on)
		return;
	saved = LM_ERRNO;
	if (getpid() != lm_shim_rec.pid)
		goto out;
	if (written > __atomic_load_n(&lm_shim_rec.written, __ATOMIC_RELAXED))
		__atomic_store_n(&lm_shim_rec.written, written, __ATOMIC_RELAXED);
	__atomic_store_n(&lm_shim_rec.stale, 1, __ATOMIC_RELEASE);
	for (;;) {
		int idle = 0;

		if (!__atomic_compare_exchange_n(&lm_shim_rec.writing, &idle, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			break;
		while (__atomic_exchange_n(&lm_shim_rec.stale, 0, __ATOMIC_ACQ_REL))
			record_write(__atomic_load_n(&lm_shim_rec.written, __ATOMIC_RELAXED));
		__atomic_store_n(&lm_shim_rec.writing, 0, __ATOMIC_RELEASE);
		/* News that arrived between the last check and the release has no writer yet. */
		if (!__atomic_load_n(&lm_shim_rec.stale, __ATOMIC_ACQUIRE))
			break;
	}
out:
	LM_ERRNO = saved;
}

void lm_shim_record_incomplete(void)
{
	if (lm_shim_rec.on && !__atomic_exchange_n(&lm_shim_rec.incomplete, 1, __ATOMIC_ACQ_REL))
		lm_shim_record_update(WRITTEN_UPDATE);
}

/* At load, before anything else reads rec: on only with an absolute directory whose paths fit. */
void lm_shim_record_init(void)
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
	lm_shim_rec.pid = getpid();
	lm_shim_rec.ppid = getppid();
	if (!record_path(lm_shim_rec.path, sizeof(lm_shim_rec.path), dir, "", lm_shim_rec.pid, ".json") ||
	    !record_path(lm_shim_rec.tmp, sizeof(lm_shim_rec.tmp), dir, ".", lm_shim_rec.pid, ".tmp"))
		return;
	copy_text(lm_shim_rec.dir, sizeof(lm_shim_rec.dir), dir);
#if defined(__APPLE__)
	{
		char exe[4096];
		unsigned int size = sizeof(exe);

		if (_NSGetExecutablePath(exe, &size) == 0) {
			copy_text(lm_shim_rec.exe, sizeof(lm_shim_rec.exe), exe);
			lm_shim_rec.has_exe = 1;
		}
	}
#else
	{
		char exe[4096];
		long n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		if (n > 0) {
			exe[n] = '\0';
			copy_text(lm_shim_rec.exe, sizeof(lm_shim_rec.exe), exe);
			lm_shim_rec.has_exe = 1;
		}
	}
#endif
	if (reason != 0 && *reason != '\0') {
		char clean[LM_WHY];
		const char *parts[] = { reason };

		/* Control characters out first (lm_shim_join), then cut at a character boundary (copy_text). */
		(void)lm_shim_join(clean, sizeof(clean), parts, 1);
		copy_text(lm_shim_rec.host_reason, sizeof(lm_shim_rec.host_reason), clean);
		lm_shim_rec.has_host_reason = 1;
	}
	for (lm_size i = 0; i < LM_SLOTS; i++) {
		for (unsigned long k = 0; k < 256; k++)
			lm_shim_slots[i].seen[k] = LM_SEEN_EMPTY(k);
	}
	lm_shim_rec.sel_name = sel_registerName("name");
	lm_shim_rec.sel_utf8 = sel_registerName("UTF8String");
	lm_shim_rec.on = 1;
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
	if (class_respondsToSelector(cls, lm_shim_rec.sel_name) &&
	    (name = ((id (*)(id, SEL))class_getMethodImplementation(cls, lm_shim_rec.sel_name))(self,
	        lm_shim_rec.sel_name)) != 0 &&
	    class_respondsToSelector((scls = object_getClass(name)), lm_shim_rec.sel_utf8) &&
	    (text = ((const char *(*)(id, SEL))class_getMethodImplementation(scls, lm_shim_rec.sel_utf8))(name,
	        lm_shim_rec.sel_utf8)) != 0) {
		copy_text(sl->device, sizeof(sl->device), text);
		__atomic_store_n(&sl->device_state, 2, __ATOMIC_RELEASE);
	}
}

/* Recorded already (the slow path's scan, for a family whose seen entry another family holds). */
static int question_recorded(lm_size i, long family)
{
	unsigned n = __atomic_load_n(&lm_shim_rec.q_count, __ATOMIC_ACQUIRE);

	for (unsigned q = 0; q < n && q < LM_QUESTIONS; q++) {
		if (__atomic_load_n(&lm_shim_rec.questions[q].ready, __ATOMIC_ACQUIRE) &&
		    lm_shim_rec.questions[q].slot == (int)i &&
		    lm_shim_rec.questions[q].family == family)
			return 1;
	}
	return 0;
}

/* The first question for a family on a class, recorded once: the thread whose compare-and-swap
 * fills the family's seen entry records it. */
void lm_shim_record_question_slow(lm_size i, id self, long family, unsigned char stock, unsigned char given)
{
	struct slot *sl = &lm_shim_slots[i];
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
			lm_shim_record_incomplete();
			return;
		}
		locked = 1;
		if (question_recorded(i, family)) {
			__atomic_store_n(&sl->collide_busy, 0, __ATOMIC_RELEASE);
			return;
		}
	}
	record_device(sl, self);
	q = __atomic_fetch_add(&lm_shim_rec.q_count, 1, __ATOMIC_ACQ_REL);
	if (q < LM_QUESTIONS) {
		lm_shim_rec.questions[q].slot = (int)i;
		lm_shim_rec.questions[q].family = family;
		lm_shim_rec.questions[q].stock = stock;
		lm_shim_rec.questions[q].given = given;
		__atomic_store_n(&lm_shim_rec.questions[q].ready, 1, __ATOMIC_RELEASE);
	}
	if (locked)
		__atomic_store_n(&sl->collide_busy, 0, __ATOMIC_RELEASE);
	if (q >= LM_QUESTIONS)
		lm_shim_record_incomplete();
	else
		lm_shim_record_update(WRITTEN_UPDATE);
}

/* A maxThreadgroupMemoryLength read with a stock value not seen on this class. A thread that finds
 * another recording returns at once; the value is seen again on its next read. */
void lm_shim_record_threadgroup(lm_size i, unsigned long stock, unsigned long given)
{
	struct slot *sl = &lm_shim_slots[i];
	int n = __atomic_load_n(&sl->tg_count, __ATOMIC_ACQUIRE), idle = 0;

	for (int k = 0; k < n; k++) {
		if (sl->tg_stock[k] == stock)
			return;
	}
	if (n == LM_TG_READS) {
		lm_shim_record_incomplete();
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
		lm_shim_record_update(WRITTEN_UPDATE);
}
