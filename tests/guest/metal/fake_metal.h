/* The fake Metal's shared classes (fake_metal.m) and its compute path (fake_metal_compute.m). */
#ifndef LM_FAKE_METAL_H
#define LM_FAKE_METAL_H

#include <objc/runtime.h>

__attribute__((objc_root_class))
@interface FakeObject {
	Class isa;
}
+ (id)alloc;
- (id)init;
- (void)release;
@end

/* A string: a device name (not owned), or a CFString made by CFStringCreateWithCString (owned). */
@interface FakeString : FakeObject {
	const char *utf8;
	char *owned;
}
- (id)initWithUTF8:(const char *)s;
- (id)initWithCopyOf:(const char *)s;
- (const char *)UTF8String;
@end

/* The device's compute methods, implemented in fake_metal_compute.m. */
id fake_new_library(id source, id options, id *error);
id fake_new_pipeline(id function, id *error);
id fake_new_pipeline_desc(id descriptor, id *error);
id fake_new_buffer(const void *bytes, unsigned long length);
id fake_new_buffer_nocopy(void *bytes, unsigned long length);
id fake_new_icb(id descriptor, unsigned long max_commands);
id fake_new_queue(void);

#endif
