/* CoreFoundation for the macOS cross-build of the host on Linux (cmake/darwin/DarwinHost.cmake),
 * where no Apple SDK exists: our own declarations of exactly what the host uses
 * (host/lib/prefs/cf_store.c), nothing more. A Mac build uses the SDK's real header instead.
 *
 * The types, values and signatures are those of Apple's open-source CoreFoundation headers
 * (apple-oss-distributions/CF, also vendored by swift-corelibs-foundation as
 * Sources/CoreFoundation/include): CFBase.h, CFArray.h, CFData.h, CFError.h, CFString.h,
 * CFPropertyList.h and CFPreferences.h, for LP64 (arm64 and x86_64). The enumerations Apple
 * declares with CF_ENUM/CF_OPTIONS (a fixed underlying type) are plain constants and typedefs of
 * that type here: the same values and the same argument types at every call.
 *
 * Every function and constant below is exported by CoreFoundation.framework and is listed in
 * ../CoreFoundation.tbd, which the link and cmake/darwin/check-host-macho.sh read; a function
 * added here must be added there. */
#ifndef LUME_METAL_CROSS_COREFOUNDATION_H
#define LUME_METAL_CROSS_COREFOUNDATION_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* CFBase.h (MacTypes.h for Boolean, UInt8, UInt32) */
typedef unsigned char Boolean;
typedef uint8_t UInt8;
typedef uint32_t UInt32;
typedef signed long CFIndex;
typedef unsigned long CFOptionFlags;
typedef unsigned long CFTypeID;
typedef const void *CFTypeRef;
typedef CFTypeRef CFPropertyListRef;
typedef const struct __CFAllocator *CFAllocatorRef;
typedef const struct __CFString *CFStringRef;

extern const CFAllocatorRef kCFAllocatorDefault;

extern CFTypeID CFGetTypeID(CFTypeRef cf);
extern CFTypeRef CFRetain(CFTypeRef cf);
extern void CFRelease(CFTypeRef cf);

/* CFString.h: CFStringEncoding is a UInt32; kCFStringEncodingUTF8 is a CFStringBuiltInEncodings. */
typedef UInt32 CFStringEncoding;
enum { kCFStringEncodingUTF8 = 0x08000100 };

extern CFStringRef CFStringCreateWithCString(CFAllocatorRef alloc, const char *cStr, CFStringEncoding encoding);
extern Boolean CFStringGetCString(CFStringRef theString, char *buffer, CFIndex bufferSize, CFStringEncoding encoding);

/* CFArray.h */
typedef const struct __CFArray *CFArrayRef;
typedef const void *(*CFArrayRetainCallBack)(CFAllocatorRef allocator, const void *value);
typedef void (*CFArrayReleaseCallBack)(CFAllocatorRef allocator, const void *value);
typedef CFStringRef (*CFArrayCopyDescriptionCallBack)(const void *value);
typedef Boolean (*CFArrayEqualCallBack)(const void *value1, const void *value2);
typedef struct {
	CFIndex version;
	CFArrayRetainCallBack retain;
	CFArrayReleaseCallBack release;
	CFArrayCopyDescriptionCallBack copyDescription;
	CFArrayEqualCallBack equal;
} CFArrayCallBacks;

extern const CFArrayCallBacks kCFTypeArrayCallBacks;

extern CFTypeID CFArrayGetTypeID(void);
extern CFArrayRef CFArrayCreate(CFAllocatorRef allocator, const void **values, CFIndex numValues,
    const CFArrayCallBacks *callBacks);
extern CFIndex CFArrayGetCount(CFArrayRef theArray);
extern const void *CFArrayGetValueAtIndex(CFArrayRef theArray, CFIndex idx);

/* CFData.h */
typedef const struct __CFData *CFDataRef;

extern CFDataRef CFDataCreate(CFAllocatorRef allocator, const UInt8 *bytes, CFIndex length);
extern CFIndex CFDataGetLength(CFDataRef theData);
extern const UInt8 *CFDataGetBytePtr(CFDataRef theData);

/* CFError.h */
typedef struct __CFError *CFErrorRef;

extern CFStringRef CFErrorCopyDescription(CFErrorRef err);

/* CFPropertyList.h: CF_OPTIONS(CFOptionFlags, CFPropertyListMutabilityOptions) and
 * CF_ENUM(CFIndex, CFPropertyListFormat). */
typedef CFOptionFlags CFPropertyListMutabilityOptions;
enum { kCFPropertyListImmutable = 0 };
typedef CFIndex CFPropertyListFormat;
enum { kCFPropertyListBinaryFormat_v1_0 = 200 };

extern CFDataRef CFPropertyListCreateData(CFAllocatorRef allocator, CFPropertyListRef propertyList,
    CFPropertyListFormat format, CFOptionFlags options, CFErrorRef *error);
extern CFPropertyListRef CFPropertyListCreateWithData(CFAllocatorRef allocator, CFDataRef data, CFOptionFlags options,
    CFPropertyListFormat *format, CFErrorRef *error);

/* CFPreferences.h */
extern const CFStringRef kCFPreferencesAnyHost;
extern const CFStringRef kCFPreferencesCurrentHost;
extern const CFStringRef kCFPreferencesCurrentUser;

extern CFPropertyListRef CFPreferencesCopyAppValue(CFStringRef key, CFStringRef applicationID);
extern Boolean CFPreferencesAppValueIsForced(CFStringRef key, CFStringRef applicationID);
extern CFPropertyListRef CFPreferencesCopyValue(CFStringRef key, CFStringRef applicationID, CFStringRef userName,
    CFStringRef hostName);
extern void CFPreferencesSetValue(CFStringRef key, CFPropertyListRef value, CFStringRef applicationID,
    CFStringRef userName, CFStringRef hostName);
extern Boolean CFPreferencesSynchronize(CFStringRef applicationID, CFStringRef userName, CFStringRef hostName);
extern CFArrayRef CFPreferencesCopyKeyList(CFStringRef applicationID, CFStringRef userName, CFStringRef hostName);

#ifdef __cplusplus
}
#endif

#endif
