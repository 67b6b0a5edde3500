/* metal-capabilities: what this process's Metal device answers.
 *
 *   metal-capabilities [FAMILY]   the published four lines (FAMILY defaults to 1009, Apple9):
 *                                 device=, family=, supports_family=, max_threadgroup_memory=
 *   metal-capabilities --report   the full capability report (docs/report-format.md)
 *   metal-capabilities --exercise [--timeout-ms=N]
 *                                 the report, then whether the unlocked features really run:
 *                                 small kernels checked against the CPU (exercise.c)
 *   metal-capabilities --exec-self | --spawn-self
 *                                 this program again with --report, in place (the same pid) or
 *                                 as a child it waits for: selftest's launchers (run_self)
 *
 * Exit 0; 1 when no Metal device is available; 2 for a bad argument. Run it plainly for the stock
 * answers and with the shim injected for the widened ones. Like the shim it uses no library beyond
 * the Objective-C runtime and Metal, so the same source builds for macOS guests and for the tests.
 */
#include "../guest_runtime.h"
#include "exercise.h"
#include "lume-metal/exercise_list.h"
#include "lume-metal/family_list.h"

/* The exercise's own time (exercise_us=): a monotonic clock, declared here rather than in
 * guest_runtime.h, which test drivers include beside <time.h>: timespec's two longs
 * on LP64 macOS and Linux; CLOCK_MONOTONIC is each system's own number. */
struct lm_timespec { long tv_sec; long tv_nsec; };
int clock_gettime(int clock, struct lm_timespec *ts);
#if defined(__APPLE__)
#define LM_CLOCK_MONOTONIC 6
#else
#define LM_CLOCK_MONOTONIC 1
#endif

#ifndef LM_PROBE_VERSION
#error "LM_PROBE_VERSION must be defined by the build"
#endif

/* How long one exercise kernel may take before it is abandoned (--timeout-ms=N). */
#define LM_EXERCISE_TIMEOUT_MS 5000u

/* What run_self needs of libc and the loader; opaque pointers for the attribute types (a pointer
 * on macOS: <spawn.h>). */
extern char **environ;
int execve(const char *path, char *const argv[], char *const envp[]);
int posix_spawn(int *pid, const char *path, const void *file_actions, const void *attr, char *const argv[],
    char *const envp[]);
int waitpid(int pid, int *status, int options);
#if defined(__APPLE__)
int posix_spawnattr_init(void **attr);
int posix_spawnattr_setflags(void **attr, short flags);
#define LM_POSIX_SPAWN_SETEXEC 0x0040 /* <spawn.h> */
#endif

/* ---- output: one buffer, flushed with write(2) ------------------------------------------ */

struct out {
	int fd;
	int failed;
	lm_size len;
	char buf[4096];
};

static void out_flush(struct out *o)
{
	lm_size done = 0;

	while (done < o->len) {
		long n = write(o->fd, o->buf + done, o->len - done);
		if (n <= 0) {
			o->failed = 1;
			break;
		}
		done += (lm_size)n;
	}
	o->len = 0;
}

static void out_byte(struct out *o, char c)
{
	if (o->len == sizeof(o->buf))
		out_flush(o);
	o->buf[o->len++] = c;
}

static void out_str(struct out *o, const char *s)
{
	while (*s != '\0')
		out_byte(o, *s++);
}

static void out_u64(struct out *o, lm_u64 v)
{
	char d[20];
	int n = 0;

	do {
		d[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	while (n > 0)
		out_byte(o, d[--n]);
}

/* Report value escaping: \ \n \r \t spelled out, other control bytes as \xHH, the rest verbatim. */
static void out_escaped(struct out *o, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '\\') {
			out_str(o, "\\\\");
		} else if (c == '\n') {
			out_str(o, "\\n");
		} else if (c == '\r') {
			out_str(o, "\\r");
		} else if (c == '\t') {
			out_str(o, "\\t");
		} else if (c < 0x20 || c == 0x7f) {
			out_str(o, "\\x");
			out_byte(o, hex[c >> 4]);
			out_byte(o, hex[c & 0xf]);
		} else {
			out_byte(o, (char)c);
		}
	}
}

/* ---- asking the device --------------------------------------------------------------- */

static IMP method_for(id obj, const char *name, SEL *sel)
{
	Class cls = object_getClass(obj);

	*sel = sel_registerName(name);
	return class_respondsToSelector(cls, *sel) ? class_getMethodImplementation(cls, *sel) : 0;
}

static const char *device_name(id device)
{
	SEL sel;
	IMP imp = method_for(device, "name", &sel);
	id name;
	const char *s;

	if (imp == 0 || (name = ((id (*)(id, SEL))imp)(device, sel)) == 0)
		return "";
	imp = method_for(name, "UTF8String", &sel);
	if (imp == 0 || (s = ((const char *(*)(id, SEL))imp)(name, sel)) == 0)
		return "";
	return s;
}

static int supports_family(id device, long family)
{
	SEL sel;
	IMP imp = method_for(device, "supportsFamily:", &sel);

	return imp != 0 && ((unsigned char (*)(id, SEL, long))imp)(device, sel, family) != 0;
}

static lm_u64 unsigned_property(id device, const char *name)
{
	SEL sel;
	IMP imp = method_for(device, name, &sel);

	return imp != 0 ? ((lm_u64 (*)(id, SEL))imp)(device, sel) : 0;
}

static int bool_property(id device, const char *name)
{
	SEL sel;
	IMP imp = method_for(device, name, &sel);

	return imp != 0 && ((unsigned char (*)(id, SEL))imp)(device, sel) != 0;
}

/* The shim exports lume_metal_shim_active when it is loaded into this process. */
static int shim_active(void)
{
	int (*active)(void) = (int (*)(void))dlsym(LM_RTLD_DEFAULT, "lume_metal_shim_active");

	return active != 0 && active() != 0;
}

/* ---- commands ------------------------------------------------------------------------ */

static void print_outcome(struct out *o, const lm_ex_outcome *x)
{
	if (x->result == LM_EX_PASS) {
		out_str(o, "pass\n");
		return;
	}
	out_str(o, x->result == LM_EX_FAIL ? "fail: " : "error: ");
	out_escaped(o, x->message);
	out_byte(o, '\n');
}

/* The exercise lines, each printed (and flushed) as soon as it is known. */
static void print_exercises(struct out *o, id device, unsigned timeout_ms)
{
	lm_ex_outcome x;

#define LM_PRINT_EXERCISE(name)                                       \
	lm_exercise_run(device, #name, timeout_ms, &x);                 \
	out_str(o, "exercise." #name "=");                              \
	print_outcome(o, &x);                                           \
	out_flush(o);
	LM_EXERCISE_LIST(LM_PRINT_EXERCISE)
#define LM_PRINT_TG(bytes)                                            \
	lm_exercise_threadgroup(device, bytes, timeout_ms, &x);         \
	out_str(o, "exercise.threadgroup_memory." #bytes "=");          \
	print_outcome(o, &x);                                           \
	out_flush(o);
	LM_EXERCISE_TG_LIST(LM_PRINT_TG)
#undef LM_PRINT_TG
	/* The known defects last: reported, and a fail there is the defect showing. */
	LM_EXERCISE_DEFECT_LIST(LM_PRINT_EXERCISE)
#undef LM_PRINT_EXERCISE
}

static void print_report(struct out *o, id device, int exercise, unsigned timeout_ms)
{
	out_str(o, exercise ? "format=" LM_EXERCISE_REPORT_FORMAT "\ndevice=" : "format=lume-metal-report/1\ndevice=");
	out_escaped(o, device_name(device));
	out_byte(o, '\n');
#define LM_PRINT_FAMILY(name, value)                                  \
	out_str(o, "family." #name "=");                                \
	out_str(o, supports_family(device, value) ? "1\n" : "0\n");
	LM_FAMILY_LIST(LM_PRINT_FAMILY)
#undef LM_PRINT_FAMILY
	out_str(o, "max_threadgroup_memory=");
	out_u64(o, unsigned_property(device, "maxThreadgroupMemoryLength"));
	out_str(o, "\nrecommended_max_working_set_size=");
	out_u64(o, unsigned_property(device, "recommendedMaxWorkingSetSize"));
	out_str(o, "\nhas_unified_memory=");
	out_str(o, bool_property(device, "hasUnifiedMemory") ? "1" : "0");
	out_str(o, "\nshim_active=");
	out_str(o, shim_active() ? "1" : "0");
	out_str(o, "\nprobe_version=");
	out_escaped(o, LM_PROBE_VERSION);
	out_byte(o, '\n');
	if (exercise) {
		struct lm_timespec t0, t1;
		char num[24];
		int timed = clock_gettime(LM_CLOCK_MONOTONIC, &t0) == 0;

		print_exercises(o, device, timeout_ms);
		/* How long the exercise itself took, on the guest's monotonic clock (the host sees only
		 * the round trip it is part of): microseconds, the guest's one number format. */
		if (timed && clock_gettime(LM_CLOCK_MONOTONIC, &t1) == 0) {
			long long ns = (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec);
			if (ns >= 0) {
				out_str(o, "exercise_us=");
				out_str(o, lm_decimal(num, (lm_u64)ns / 1000u));
				out_byte(o, '\n');
			}
		}
	}
	out_str(o, "end=1\n");
}

static void print_family(struct out *o, id device, long family)
{
	out_str(o, "device=");
	out_str(o, device_name(device));
	out_str(o, "\nfamily=");
	out_u64(o, (lm_u64)family);
	out_str(o, "\nsupports_family=");
	out_str(o, supports_family(device, family) ? "true" : "false");
	out_str(o, "\nmax_threadgroup_memory=");
	out_u64(o, unsigned_property(device, "maxThreadgroupMemoryLength"));
	out_byte(o, '\n');
}

/* A family is a plain decimal number, 1..99999: no sign, no space, no leading zero. */
static int parse_family(const char *s, long *family)
{
	long v = 0;
	int n = 0;

	if (*s < '1' || *s > '9')
		return -1;
	for (; *s != '\0'; s++, n++) {
		if (*s < '0' || *s > '9' || n == 5)
			return -1;
		v = v * 10 + (*s - '0');
	}
	*family = v;
	return 0;
}

static int str_eq(const char *s, const char *want)
{
	while (*s != '\0' && *s == *want) {
		s++;
		want++;
	}
	return *s == *want;
}

/* "--timeout-ms=N": N a plain decimal 1..3600000. */
static int parse_timeout(const char *s, unsigned *ms)
{
	const char *prefix = "--timeout-ms=";
	unsigned long v = 0;
	int n = 0;

	while (*prefix != '\0')
		if (*s++ != *prefix++)
			return -1;
	if (*s < '1' || *s > '9')
		return -1;
	for (; *s != '\0'; s++, n++) {
		if (*s < '0' || *s > '9' || n == 7)
			return -1;
		v = v * 10 + (unsigned long)(*s - '0');
	}
	if (v > 3600000)
		return -1;
	*ms = (unsigned)v;
	return 0;
}

static int fail(const char *what, const char *arg)
{
	static struct out err = { .fd = 2 };

	out_str(&err, what);
	if (arg != 0)
		out_escaped(&err, arg);
	out_byte(&err, '\n');
	out_flush(&err);
	return arg != 0 ? 2 : 1;
}

/* --exec-self, --spawn-self: argv[0] (an absolute path: nothing is searched or guessed) started
 * again with --report. In place (the same pid, this image replaced), as CPython's framework launcher
 * re-executes Python.app's Python: posix_spawn with POSIX_SPAWN_SETEXEC on macOS (Mac/Tools/
 * pythonw.c; reference/metal.md, 2026-12-02), execve where the flag does not exist (glibc), which
 * is what the flag makes of posix_spawn. Or spawned, waited for, and its exit status passed on.
 * These are launchers that can carry the shim whatever the guest's SIP state, unlike /usr/bin/env
 * and /bin/sh, which SIP protects (purged, SIP on) or which are arm64e (stopped, SIP off): selftest's
 * probe_exec_in_place and probe_spawned_child (docs/selftest.md). 127 when it cannot start. */
static int cannot(const char *what, const char *arg)
{
	(void)fail(what, arg);
	return 127;
}

static int run_self(char *self, int in_place)
{
	char *args[3];
	int pid = 0, rc, status = 0;

	if (self == 0 || self[0] != '/')
		return cannot("--exec-self and --spawn-self need the probe started by its absolute path", 0);
	args[0] = self;
	args[1] = "--report";
	args[2] = 0;
	if (in_place) {
#if defined(__APPLE__)
		void *attr = 0;
		if ((rc = posix_spawnattr_init(&attr)) == 0 && (rc = posix_spawnattr_setflags(&attr, LM_POSIX_SPAWN_SETEXEC)) == 0)
			rc = posix_spawn(0, self, 0, &attr, args, environ);
#else
		rc = execve(self, args, environ);
#endif
		(void)rc;
		return cannot("could not execute itself in place: ", self);
	}
	if (posix_spawn(&pid, self, 0, 0, args, environ) != 0)
		return cannot("could not spawn itself: ", self);
	while ((rc = waitpid(pid, &status, 0)) < 0 && LM_ERRNO == 4 /* EINTR, the same on both */)
		;
	if (rc < 0)
		return cannot("could not wait for itself: ", self);
	/* The wait status's layout is the same on macOS and Linux: exit code in bits 8-15 when bits 0-6
	 * are 0; otherwise the signal. */
	if ((status & 0x7f) == 0)
		return (status >> 8) & 0xff;
	return cannot("itself was killed by a signal: ", self);
}

int main(int argc, char **argv)
{
	static struct out o = { .fd = 1 };
	long family = 1009;
	int report = 0, exercise = 0, i;
	unsigned timeout_ms = LM_EXERCISE_TIMEOUT_MS;
	id device;

	if (argc == 2 && (str_eq(argv[1], "--exec-self") || str_eq(argv[1], "--spawn-self")))
		return run_self(argv[0], str_eq(argv[1], "--exec-self"));
	if (argc >= 2 && (str_eq(argv[1], "--report") || str_eq(argv[1], "--exercise"))) {
		report = 1;
		for (i = 1; i < argc; i++) {
			if (str_eq(argv[i], "--report"))
				continue;
			if (str_eq(argv[i], "--exercise"))
				exercise = 1;
			else if (parse_timeout(argv[i], &timeout_ms) != 0)
				return fail("invalid option: ", argv[i]);
		}
	} else if (argc > 2) {
		return fail("invalid family: ", argv[2]);
	} else if (argc == 2 && parse_family(argv[1], &family) != 0) {
		return fail("invalid family: ", argv[1]);
	}
	device = MTLCreateSystemDefaultDevice();
	if (device == 0)
		return fail("Metal device unavailable", 0);
	if (report)
		print_report(&o, device, exercise, timeout_ms);
	else
		print_family(&o, device, family);
	out_flush(&o);
	return o.failed ? 1 : 0;
}
