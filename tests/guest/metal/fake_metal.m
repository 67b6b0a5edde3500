/* A fake Metal for the guest tests: an Objective-C library on the GNU runtime whose device
 * behaves like the paravirtual device of a macOS guest (reference/metal.md).
 *
 *   _MTLDevice              private base class; -init calls -initGPUFamilySupport, which builds
 *                           the family answers (Apple1..5, Common1..3, Mac2 true; the rest false)
 *   AppleParavirtDevice     concrete class; overrides -supportsFamily: and calls super
 *   MTLCreateSystemDefaultDevice(), MTLCopyAllDevices()   the two C entry points
 *
 * The compute path (library from source, function, pipeline, buffers, queue, command buffer,
 * encoder, dispatch, wait) is in fake_metal_compute.m: it runs the probe's exercise kernels on the
 * CPU, and only when the simulated host level is unlocked (LM_FAKE_METAL_FEATURE_LEVEL).
 *
 * Built in several variants from this one file (see CMakeLists.txt):
 *   FAKE_METAL_NO_PRIVATE   the base class has another name (the private class is missing)
 *   FAKE_METAL_NO_INIT      _MTLDevice exists but has no -initGPUFamilySupport
 *   FAKE_METAL_UNSUPPORTED  no private class, and the device methods have unexpected signatures
 *   FAKE_METAL_NO_COMPUTE   the device has no compute path at all (no -newLibraryWithSource:...)
 *
 * LM_FAKE_METAL_NO_DEVICE=1 in the environment makes both entry points return nil (no device);
 * LM_FAKE_METAL_NAME replaces the device name (to test how the probe escapes it).
 */
#include <objc/runtime.h>
#include <stdlib.h>
#include <string.h>

#include "fake_metal.h"

#if defined(FAKE_METAL_NO_PRIVATE) || defined(FAKE_METAL_UNSUPPORTED)
#define FAKE_METAL_BASE MTLParavirtBase
#else
#define FAKE_METAL_BASE _MTLDevice
#endif

/* Exported C entry points; the device classes themselves are reached through the runtime. */
id MTLCreateSystemDefaultDevice(void) __attribute__((visibility("default")));
id MTLCopyAllDevices(void) __attribute__((visibility("default")));

@implementation FakeObject
+ (id)alloc
{
	return class_createInstance(self, 0);
}
- (id)init
{
	return self;
}
- (void)release
{
	object_dispose(self);
}
@end

@implementation FakeString
- (id)initWithUTF8:(const char *)s
{
	utf8 = s;
	return self;
}
- (id)initWithCopyOf:(const char *)s
{
	owned = strdup(s);
	utf8 = owned;
	return owned != NULL ? self : nil;
}
- (void)release
{
	free(owned);
	object_dispose(self);
}
- (const char *)UTF8String
{
	return utf8;
}
@end

@interface FakeArray : FakeObject {
	id item;
}
- (id)initWithItem:(id)obj;
- (unsigned long)count;
- (id)objectAtIndex:(unsigned long)index;
@end

@implementation FakeArray
- (id)initWithItem:(id)obj
{
	item = obj;
	return self;
}
- (unsigned long)count
{
	return item != nil ? 1 : 0;
}
- (id)objectAtIndex:(unsigned long)index
{
	return index == 0 ? item : nil;
}
@end

@interface FAKE_METAL_BASE : FakeObject {
	long apple_max;
	BOOL common;
	BOOL mac2;
	FakeString *device_name;
}
#if defined(FAKE_METAL_UNSUPPORTED)
- (BOOL)supportsFamily:(unsigned long)family;
- (long long)maxThreadgroupMemoryLength;
- (long long)recommendedMaxWorkingSetSize;
#else
- (BOOL)supportsFamily:(long)family;
- (unsigned long)maxThreadgroupMemoryLength;
- (unsigned long)recommendedMaxWorkingSetSize;
#endif
#if !defined(FAKE_METAL_NO_INIT)
- (void)initGPUFamilySupport;
#endif
- (BOOL)hasUnifiedMemory;
- (id)name;
@end

@implementation FAKE_METAL_BASE
- (id)init
{
	const char *name = getenv("LM_FAKE_METAL_NAME");

	device_name = [[FakeString alloc] initWithUTF8:name != NULL ? name : "Apple Paravirtual device"];
#if defined(FAKE_METAL_NO_INIT)
	apple_max = 1005;
	common = YES;
	mac2 = YES;
#else
	[self initGPUFamilySupport];
#endif
	return self;
}
- (void)release
{
	[device_name release];
	object_dispose(self);
}
#if !defined(FAKE_METAL_NO_INIT)
- (void)initGPUFamilySupport
{
	apple_max = 1005;
	common = YES;
	mac2 = YES;
}
#endif
#if defined(FAKE_METAL_UNSUPPORTED)
- (BOOL)supportsFamily:(unsigned long)family
#else
- (BOOL)supportsFamily:(long)family
#endif
{
	if ((long)family >= 1001 && (long)family <= apple_max)
		return YES;
	if (family >= 3001 && family <= 3003)
		return common;
	if (family == 2002)
		return mac2;
	return NO;
}
#if defined(FAKE_METAL_UNSUPPORTED)
- (long long)maxThreadgroupMemoryLength
{
	return 32768;
}
- (long long)recommendedMaxWorkingSetSize
{
	return 11453251584LL;
}
#else
- (unsigned long)maxThreadgroupMemoryLength
{
	return 32768;
}
- (unsigned long)recommendedMaxWorkingSetSize
{
	return 11453251584UL;
}
#endif
- (BOOL)hasUnifiedMemory
{
	return YES;
}
- (id)name
{
	return device_name;
}
@end

@interface AppleParavirtDevice : FAKE_METAL_BASE
@end

#if !defined(FAKE_METAL_NO_COMPUTE)
/* The compute path, on the concrete class as the paravirtual plugin has it (fake_metal_compute.m). */
@implementation AppleParavirtDevice (Compute)
- (id)newLibraryWithSource:(id)source options:(id)options error:(id *)error
{
	return fake_new_library(source, options, error);
}
- (id)newComputePipelineStateWithFunction:(id)function error:(id *)error
{
	return fake_new_pipeline(function, error);
}
- (id)newBufferWithBytes:(const void *)bytes length:(unsigned long)length options:(unsigned long)options
{
	return fake_new_buffer(bytes, length);
}
- (id)newBufferWithLength:(unsigned long)length options:(unsigned long)options
{
	return fake_new_buffer(NULL, length);
}
- (id)newCommandQueue
{
	return fake_new_queue();
}
- (id)newComputePipelineStateWithDescriptor:(id)descriptor options:(unsigned long)options reflection:(id *)reflection
    error:(id *)error
{
	return fake_new_pipeline_desc(descriptor, error);
}
- (id)newBufferWithBytesNoCopy:(void *)bytes length:(unsigned long)length options:(unsigned long)options
    deallocator:(id)deallocator
{
	return fake_new_buffer_nocopy(bytes, length);
}
- (id)newIndirectCommandBufferWithDescriptor:(id)descriptor maxCommandCount:(unsigned long)count
    options:(unsigned long)options
{
	return fake_new_icb(descriptor, count);
}
@end
#endif

@implementation AppleParavirtDevice
#if defined(FAKE_METAL_UNSUPPORTED)
- (BOOL)supportsFamily:(unsigned long)family
#else
- (BOOL)supportsFamily:(long)family
#endif
{
	return [super supportsFamily:family];
}
@end

static int no_device(void)
{
	const char *s = getenv("LM_FAKE_METAL_NO_DEVICE");

	return s != NULL && s[0] == '1' && s[1] == '\0';
}

id MTLCreateSystemDefaultDevice(void)
{
	if (no_device())
		return nil;
	return [[AppleParavirtDevice alloc] init];
}

id MTLCopyAllDevices(void)
{
	if (no_device())
		return nil;
	return [[FakeArray alloc] initWithItem:[[AppleParavirtDevice alloc] init]];
}
