/* guest-devices: a Metal client for the guest tests, reaching devices the ways real programs do.
 *
 *   guest-devices default          one device from MTLCreateSystemDefaultDevice
 *   guest-devices all              every device from MTLCopyAllDevices
 *   guest-devices ask F...         one device from MTLCreateSystemDefaultDevice asked each family F
 *                                  in turn: "F=answer" per family
 *   guest-devices threads 0|1      16 threads create devices at once; each answer must be the
 *                                  stock one (0) or the widened one for the ceiling 1009 (1)
 *   guest-devices-dlopen PATH      Metal dlopen'ed (RTLD_LOCAL) after start, entry points from
 *                                  dlsym on its handle (built with LM_DLOPEN)
 *
 * For each device one line: the answers, and "base.Apple9", the answer of -[_MTLDevice
 * supportsFamily:] called directly, which shows whether the private base class was modified.
 * Compiled with the shim's source (LM_SHIM_LINKED) it is the in-process test run under
 * ASan/UBSan or ThreadSanitizer.
 */
#include "../../../guest/guest_runtime.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 16
#define DEVICES_PER_THREAD 64

typedef id (*entry_fn)(void);
#if defined(LM_DLOPEN)
static entry_fn create_default;
static entry_fn copy_all;
#else
static entry_fn create_default = MTLCreateSystemDefaultDevice;
static entry_fn copy_all = MTLCopyAllDevices;
#endif

static IMP imp_of(id obj, const char *name, SEL *sel)
{
	*sel = sel_registerName(name);
	return class_getMethodImplementation(object_getClass(obj), *sel);
}

static int family(id dev, long f)
{
	SEL sel;
	IMP imp = imp_of(dev, "supportsFamily:", &sel);

	return ((unsigned char (*)(id, SEL, long))imp)(dev, sel, f) != 0;
}

static unsigned long ulong_of(id dev, const char *name)
{
	SEL sel;
	IMP imp = imp_of(dev, name, &sel);

	return ((unsigned long (*)(id, SEL))imp)(dev, sel);
}

static void release(id obj)
{
	SEL sel;
	IMP imp = imp_of(obj, "release", &sel);

	((void (*)(id, SEL))imp)(obj, sel);
}

static const char *name_of(id dev)
{
	SEL sel;
	IMP imp = imp_of(dev, "name", &sel);
	id s = ((id (*)(id, SEL))imp)(dev, sel);

	imp = imp_of(s, "UTF8String", &sel);
	return ((const char *(*)(id, SEL))imp)(s, sel);
}

/* -[_MTLDevice supportsFamily:] itself: '-' when the class is absent. */
static char base_answer(id dev, long f)
{
	Class base = objc_lookUpClass("_MTLDevice");
	SEL sel = sel_registerName("supportsFamily:");

	if (base == 0)
		return '-';
	return ((unsigned char (*)(id, SEL, long))class_getMethodImplementation(base, sel))(dev, sel, f) ? '1' : '0';
}

static void print_device(id dev)
{
	static const struct { const char *name; long value; } fams[] = {
		{ "Apple5", 1005 }, { "Apple6", 1006 }, { "Apple7", 1007 }, { "Apple9", 1009 },
		{ "Apple10", 1010 }, { "Mac1", 2001 }, { "Mac2", 2002 }, { "Common1", 3001 },
		{ "Common3", 3003 }, { "Metal3", 5001 }, { "Metal4", 5002 }, { "Unknown9999", 9999 },
	};

	printf("class=%s name=%s", class_getName(object_getClass(dev)), name_of(dev));
	for (size_t i = 0; i < sizeof(fams) / sizeof(fams[0]); i++)
		printf(" %s=%d", fams[i].name, family(dev, fams[i].value));
	printf(" tg=%lu wss=%lu base.Apple9=%c\n", ulong_of(dev, "maxThreadgroupMemoryLength"),
	    ulong_of(dev, "recommendedMaxWorkingSetSize"), base_answer(dev, 1009));
}

static id device_at(id devices, unsigned long i)
{
	SEL sel;
	IMP imp = imp_of(devices, "objectAtIndex:", &sel);

	return ((id (*)(id, SEL, unsigned long))imp)(devices, sel, i);
}

static unsigned long device_count(id devices)
{
	return ulong_of(devices, "count");
}

static pthread_barrier_t start;
static int expect_widened;

static void *worker(void *arg)
{
	long index = (long)arg;
	long mismatches = 0;

	pthread_barrier_wait(&start);
	for (int i = 0; i < DEVICES_PER_THREAD; i++) {
		id devices = 0;
		id dev;

		if ((i + index) % 2 == 0) {
			dev = create_default();
		} else {
			devices = copy_all();
			dev = devices != 0 && device_count(devices) == 1 ? device_at(devices, 0) : 0;
		}
		if (dev == 0) {
			mismatches++;
			continue;
		}
		if (family(dev, 1009) != expect_widened || family(dev, 1005) != 1 ||
		    family(dev, 5001) != 0 || ulong_of(dev, "maxThreadgroupMemoryLength") !=
		    (expect_widened ? 65536UL : 32768UL))
			mismatches++;
		release(dev);
		if (devices != 0)
			release(devices);
	}
	return (void *)mismatches;
}

static int run_threads(void)
{
	pthread_t t[THREADS];
	long mismatches = 0;

	pthread_barrier_init(&start, 0, THREADS);
	for (long i = 0; i < THREADS; i++) {
		if (pthread_create(&t[i], 0, worker, (void *)i) != 0) {
			fprintf(stderr, "pthread_create failed\n");
			return 1;
		}
	}
	for (int i = 0; i < THREADS; i++) {
		void *r;
		pthread_join(t[i], &r);
		mismatches += (long)r;
	}
	pthread_barrier_destroy(&start);
	printf("threads=%d devices=%d mismatches=%ld\n", THREADS, THREADS * DEVICES_PER_THREAD, mismatches);
	return mismatches == 0 ? 0 : 1;
}

static int usage(void)
{
	fprintf(stderr, "usage: guest-devices default|all|threads 0|1\n"
	    "       guest-devices-dlopen PATH-TO-libMetal.so default|all|threads 0|1\n");
	return 2;
}

int main(int argc, char **argv)
{
	id dev;

#if defined(LM_DLOPEN)
	void *metal;

	if (argc < 2)
		return usage();
	metal = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (metal == 0) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	create_default = (entry_fn)dlsym(metal, "MTLCreateSystemDefaultDevice");
	copy_all = (entry_fn)dlsym(metal, "MTLCopyAllDevices");
	if (create_default == 0 || copy_all == 0)
		return 1;
	argc--;
	argv++;
#endif
	if (argc == 2 && strcmp(argv[1], "default") == 0) {
		if ((dev = create_default()) == 0)
			return 1;
		print_device(dev);
		release(dev);
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "all") == 0) {
		id devices = copy_all();
		unsigned long n = devices != 0 ? device_count(devices) : 0;

		printf("count=%lu\n", n);
		for (unsigned long i = 0; i < n; i++) {
			print_device(device_at(devices, i));
			release(device_at(devices, i));
		}
		if (devices != 0)
			release(devices);
		return n > 0 ? 0 : 1;
	}
	if (argc >= 3 && strcmp(argv[1], "ask") == 0) {
		if ((dev = create_default()) == 0)
			return 1;
		for (int i = 2; i < argc; i++)
			printf("%s%s=%d", i > 2 ? " " : "", argv[i], family(dev, atol(argv[i])));
		printf("\n");
		release(dev);
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "threads") == 0) {
		expect_widened = strcmp(argv[2], "1") == 0;
		return run_threads();
	}
	return usage();
}
