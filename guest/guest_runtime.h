/* lume-metal guest: the few runtime, dyld and libc functions the shim and the probe use.
 *
 * Declared here rather than taken from system headers so that one source builds three ways:
 * natively on macOS (Apple Objective-C runtime), cross-built from Linux with no Apple SDK, and on
 * Linux against the GNU Objective-C runtime for the tests. Every function below exists under the
 * same name and C signature in both runtimes; only object_getClass differs (an inline function in
 * the GNU runtime's header, a real function in Apple's).
 */
#ifndef LUME_METAL_GUEST_RUNTIME_H
#define LUME_METAL_GUEST_RUNTIME_H

/* The guest code runs on LP64 only (arm64/x86_64 macOS, x86_64/arm64 Linux). */
_Static_assert(sizeof(long) == 8 && sizeof(void *) == 8, "lume-metal guest code needs LP64");

typedef unsigned long lm_size;
typedef unsigned long long lm_u64;

/* Objective-C runtime: opaque pointers, identical in size and passing on both runtimes. */
typedef struct objc_object *id;
typedef struct objc_class *Class;
typedef const struct objc_selector *SEL;
typedef struct objc_method *Method;
typedef void (*IMP)(void);

Class objc_lookUpClass(const char *name);
SEL sel_registerName(const char *name);
const char *class_getName(Class cls);
Class class_getSuperclass(Class cls);
Method class_getInstanceMethod(Class cls, SEL sel);
IMP class_getMethodImplementation(Class cls, SEL sel);
unsigned char class_addMethod(Class cls, SEL sel, IMP imp, const char *types);
unsigned char class_respondsToSelector(Class cls, SEL sel);
IMP method_getImplementation(Method m);
IMP method_setImplementation(Method m, IMP imp);
const char *method_getTypeEncoding(Method m);

#if defined(__APPLE__)
Class object_getClass(id obj);
#else
/* GNU runtime: the class pointer is the object's first word (its header inlines the same). */
static inline Class object_getClass(id obj) { return obj ? *(Class *)(void *)obj : (Class)0; }
/* Called by the GNU runtime for every class it loads, including from a later dlopen. */
extern void (*_objc_load_callback)(Class cls, void *category);
#endif

/* libc / dyld */
char *getenv(const char *name);
int unsetenv(const char *name);
long write(int fd, const void *buf, lm_size len);
int sched_yield(void);
int usleep(unsigned int usec);
void *dlsym(void *handle, const char *name);
/* The probe's no-copy exercise: a shared mapping of a temporary file, as llama.cpp maps weights.
 * The protection and sharing values are the same on macOS and Linux. */
int mkstemp(char *path);
int close(int fd);
int unlink(const char *path);
void *mmap(void *addr, lm_size len, int prot, int flags, int fd, long offset);
int munmap(void *addr, lm_size len);
#define LM_PROT_READ 1
#define LM_PROT_WRITE 2
#define LM_MAP_SHARED 1
#define LM_MAP_PRIVATE 2
#if defined(__APPLE__)
#define LM_MAP_ANON 0x1000
#else
#define LM_MAP_ANON 0x20
#endif
#define LM_MAP_FAILED ((void *)-1)

/* v in decimal, written backwards from the end of buf (24 bytes: every 64-bit value fits); returns
 * where it starts. The guest's one number formatter (no printf in the shim). */
static inline const char *lm_decimal(char buf[24], lm_u64 v)
{
	char *p = buf + 23;

	*p = '\0';
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	return p;
}

/* Files and the process, for the shim's activation records (docs/activation-format.md). pid_t is
 * int on both systems; the flag values are each system's own. errno is saved and restored around
 * every record write, so a hooked call never changes what the program sees in it. */
int open(const char *path, int flags, ...);
int close(int fd);
int rename(const char *from, const char *to);
int unlink(const char *path);
int getpid(void);
int getppid(void);
/* What the shim reads of a program a spawn starts (its path, links and first line). */
long read(int fd, void *buf, lm_size len);
long readlink(const char *path, char *buf, lm_size size);
int access(const char *path, int mode);
char *getcwd(char *buf, lm_size size);
#define LM_O_RDONLY 0
#if defined(__APPLE__)
#define LM_O_NONBLOCK 0x0004
#else
#define LM_O_NONBLOCK 04000
#endif
#define LM_X_OK 1
#if defined(__APPLE__)
int _NSGetExecutablePath(char *buf, unsigned int *size);
int *__error(void);
#define LM_ERRNO (*__error())
#define LM_O_WRONLY 0x0001
#define LM_O_CREAT 0x0200
#define LM_O_EXCL 0x0800
#define LM_O_NOFOLLOW 0x0100
#define LM_O_CLOEXEC 0x01000000
#else
int *__errno_location(void);
#define LM_ERRNO (*__errno_location())
#define LM_O_WRONLY 01
#define LM_O_CREAT 0100
#define LM_O_EXCL 0200
#if defined(__aarch64__)
#define LM_O_NOFOLLOW 0100000
#else
#define LM_O_NOFOLLOW 0400000
#endif
#define LM_O_CLOEXEC 02000000
#endif

/* dladdr's answer: the same four fields, in this order, on macOS and glibc. */
typedef struct {
	const char *dli_fname;
	void *dli_fbase;
	const char *dli_sname;
	void *dli_saddr;
} lm_dl_info;
int dladdr(const void *addr, lm_dl_info *info);

#if defined(__APPLE__)
#define LM_RTLD_NEXT ((void *)-1)
#define LM_RTLD_DEFAULT ((void *)-2)
#else
#define LM_RTLD_NEXT ((void *)-1)
#define LM_RTLD_DEFAULT ((void *)0)
#endif

/* Metal's two C entry points (Metal.framework on macOS, libMetal.so in the Linux tests). */
id MTLCreateSystemDefaultDevice(void);
id MTLCopyAllDevices(void);

/* CoreFoundation's strings, for the probe's kernel sources (a CFString is an NSString: toll-free
 * bridged). CoreFoundation.framework on macOS; the Linux tests' fake libMetal.so exports both. */
typedef const void *CFTypeRef;
typedef const struct __CFString *CFStringRef;
#define LM_CF_STRING_ENCODING_UTF8 0x08000100u /* kCFStringEncodingUTF8 */
CFStringRef CFStringCreateWithCString(const void *allocator, const char *cstr, unsigned int encoding);
void CFRelease(CFTypeRef cf);

#endif
