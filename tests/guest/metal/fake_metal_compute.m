/* The fake Metal's compute path: library from source, function, pipeline, buffers, queue, command
 * buffer, encoder, dispatch, wait — enough for the probe's exercise kernels (guest/probe/exercise.c),
 * which it recognises by function name and computes on the CPU.
 *
 * The simulated host level. A macOS guest's paravirtual device gets its feature level from the
 * host process that runs the VM, which reads the host preference when it starts. The Lume
 * simulator records, per VM, the preference in effect when the VM started and gives the guest
 * LM_FAKE_METAL_FEATURE_LEVEL=unlocked or restricted (absent: restricted, as a stock host). At the
 * restricted level the pipelines of the unlocked features fail — see restricted_error(), the one
 * place that decides what the fake does there (docs/guest.md, "The fake Metal at the restricted
 * level": what the real device does is not known).
 *
 * Test hooks: LM_FAKE_METAL_HANG=<kernel> makes that kernel's command buffer never complete (the
 * probe's timeout); LM_FAKE_METAL_WRONG=<kernel> makes it compute a wrong result (a "fail").
 *
 * CoreFoundation: the probe builds its kernel sources as CFStrings; on macOS a CFString is an
 * NSString. This library exports the two CoreFoundation functions the probe uses, returning the
 * fake's own string objects.
 */
#include <objc/runtime.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_metal.h"

typedef struct {
	unsigned long width, height, depth;
} MTLSize;

#define FAKE_TG_LIMIT 32768u   /* maxThreadgroupMemoryLength at either level (reference/metal.md) */
#define FAKE_LANGUAGE_3_1 ((3u << 16) + 1u)
#define FAKE_MAX_BUFFERS 8

const void *CFStringCreateWithCString(const void *allocator, const char *cstr, unsigned int encoding)
    __attribute__((visibility("default")));
void CFRelease(const void *cf) __attribute__((visibility("default")));

typedef enum { K_NONE = 0, K_SIMD_SUM, K_MMA, K_BFLOAT, K_TG } kernel_kind;

static const struct {
	const char *name;
	kernel_kind kind;
} known_kernels[] = {
	{"lm_simd_sum", K_SIMD_SUM},
	{"lm_simdgroup_mma", K_MMA},
	{"lm_bfloat_fma", K_BFLOAT},
	{"lm_threadgroup_memory", K_TG},
};

static int env_is(const char *name, const char *value)
{
	const char *s = getenv(name);

	return s != NULL && strcmp(s, value) == 0;
}

static int level_unlocked(void)
{
	return env_is("LM_FAKE_METAL_FEATURE_LEVEL", "unlocked");
}

/* THE choice for the restricted level, in one place: which kernels fail to become pipelines and
 * with what message. Modelled on the GPU compiler's errors for an AIR intrinsic the target GPU
 * cannot lower; whether the real paravirtual device at the restricted level fails like this, fails
 * otherwise, or runs the kernels anyway is unknown until someone runs the probe on a Mac. */
static const char *restricted_error(kernel_kind kind)
{
	if (level_unlocked())
		return NULL;
	switch (kind) {
	case K_SIMD_SUM: return "Encountered unlowered function call to air.simd_sum.f32";
	case K_MMA:
		return "Encountered unlowered function call to "
		       "air.simdgroup_matrix_8x8_multiply_accumulate.v64f32.v64f32.v64f32.v64f32";
	case K_BFLOAT: return "Encountered unlowered function call to air.convert.bf16.f32";
	default: return NULL;
	}
}

/* ---- errors and options ------------------------------------------------------------------ */

@interface FakeError : FakeObject {
	FakeString *text;
}
- (id)initWithText:(const char *)s;
- (id)localizedDescription;
@end

@implementation FakeError
- (id)initWithText:(const char *)s
{
	text = [[FakeString alloc] initWithCopyOf:s];
	return self;
}
- (id)localizedDescription
{
	return text;
}
@end

static id set_error(id *error, const char *text)
{
	if (error != NULL)
		*error = [[FakeError alloc] initWithText:text];
	return nil;
}

@interface MTLCompileOptions : FakeObject {
	unsigned long language;
}
- (void)setLanguageVersion:(unsigned long)v;
- (unsigned long)languageVersion;
@end

@implementation MTLCompileOptions
- (void)setLanguageVersion:(unsigned long)v
{
	language = v;
}
- (unsigned long)languageVersion
{
	return language;
}
@end

/* ---- library, function, pipeline ---------------------------------------------------------- */

@interface FakeLibrary : FakeObject {
@public
	char *source;
}
- (id)newFunctionWithName:(id)name;
@end

@interface FakeFunction : FakeObject {
@public
	kernel_kind kind;
	unsigned tg_bytes;
	char name[64];
}
@end

@implementation FakeFunction
@end

@interface FakePipeline : FakeObject {
@public
	kernel_kind kind;
	unsigned tg_bytes;
	char name[64];
}
- (unsigned long)threadExecutionWidth;
- (unsigned long)maxTotalThreadsPerThreadgroup;
@end

@implementation FakePipeline
- (unsigned long)threadExecutionWidth
{
	return 32;
}
- (unsigned long)maxTotalThreadsPerThreadgroup
{
	return 1024;
}
@end

@implementation FakeLibrary
- (void)release
{
	free(source);
	object_dispose(self);
}
- (id)newFunctionWithName:(id)name
{
	const char *n = [name UTF8String], *at, *def;
	char pattern[96];
	FakeFunction *f;
	size_t i;

	if (n == NULL || strlen(n) >= sizeof(f->name))
		return nil;
	/* Only a function the source defines, as a real library. */
	snprintf(pattern, sizeof(pattern), "kernel void %s(", n);
	if ((at = strstr(source, pattern)) == NULL)
		return nil;
	f = [[FakeFunction alloc] init];
	snprintf(f->name, sizeof(f->name), "%s", n);
	for (i = 0; i < sizeof(known_kernels) / sizeof(known_kernels[0]); i++)
		if (strcmp(known_kernels[i].name, n) == 0)
			f->kind = known_kernels[i].kind;
	if (f->kind == K_TG && (def = strstr(source, "#define LM_TG_BYTES ")) != NULL)
		f->tg_bytes = (unsigned)strtoul(def + strlen("#define LM_TG_BYTES "), NULL, 10);
	return f;
}
@end

/* The newest Metal Shading Language the guest's macOS compiles: 3.1 (and bfloat with it) came with
 * macOS 14 (reference/metal.md). LM_FAKE_METAL_OS_VERSION is the guest's sw_vers version, set by
 * the guest fixture; absent: a current macOS. */
static unsigned long newest_language(void)
{
	const char *v = getenv("LM_FAKE_METAL_OS_VERSION");

	return v != NULL && v[0] != '\0' && atoi(v) < 14 ? FAKE_LANGUAGE_3_1 - 1 : ~0ul;
}

id fake_new_library(id source, id options, id *error)
{
	const char *text = source != nil ? [source UTF8String] : NULL;
	unsigned long language = options != nil ? [options languageVersion] : 0, newest = newest_language();
	FakeLibrary *lib;

	if (text == NULL)
		return set_error(error, "no source");
	if (strstr(text, "kernel void") == NULL)
		return set_error(error, "program_source: error: no kernel function in the source");
	/* What the real compiler says is not known (inferred): a version this macOS does not have fails. */
	if (language > newest)
		return set_error(error, "program_source: error: Metal Shading Language 3.1 is not available before macOS 14");
	if (strstr(text, "bfloat") != NULL && (language != 0 ? language : newest) < FAKE_LANGUAGE_3_1)
		return set_error(error, "program_source:7:5: error: unknown type name 'bfloat'");
	lib = [[FakeLibrary alloc] init];
	if ((lib->source = strdup(text)) == NULL)
		return set_error(error, "out of memory");
	return lib;
}

id fake_new_pipeline(id function, id *error)
{
	FakeFunction *f = function;
	FakePipeline *p;
	const char *why;
	char text[160];

	if (f == nil)
		return set_error(error, "no function");
	if (f->kind == K_NONE)
		return set_error(error, "the fake Metal computes only the probe's exercise kernels");
	if ((why = restricted_error(f->kind)) != NULL)
		return set_error(error, why);
	if (f->kind == K_TG && (f->tg_bytes == 0 || f->tg_bytes > FAKE_TG_LIMIT)) {
		snprintf(text, sizeof(text), "Threadgroup memory size (%u) exceeds the maximum threadgroup memory "
		    "allowed (%u)", f->tg_bytes, FAKE_TG_LIMIT);
		return set_error(error, text);
	}
	p = [[FakePipeline alloc] init];
	p->kind = f->kind;
	p->tg_bytes = f->tg_bytes;
	memcpy(p->name, f->name, sizeof(p->name));
	return p;
}

/* ---- buffers ------------------------------------------------------------------------------- */

@interface FakeBuffer : FakeObject {
@public
	void *bytes;
	unsigned long length;
}
- (void *)contents;
- (unsigned long)length;
@end

@implementation FakeBuffer
- (void *)contents
{
	return bytes;
}
- (unsigned long)length
{
	return length;
}
- (void)release
{
	free(bytes);
	object_dispose(self);
}
@end

id fake_new_buffer(const void *bytes, unsigned long length)
{
	FakeBuffer *b = [[FakeBuffer alloc] init];

	if ((b->bytes = calloc(1, length != 0 ? length : 1)) == NULL) {
		[b release];
		return nil;
	}
	if (bytes != NULL)
		memcpy(b->bytes, bytes, length);
	b->length = length;
	return b;
}

/* ---- the CPU's version of each kernel ------------------------------------------------------- */

static float bf16(float f)
{
	union {
		float f;
		uint32_t u;
	} v;

	v.f = f;
	if ((v.u & 0x7f800000u) == 0x7f800000u)
		return f;
	v.u = (v.u + 0x7fffu + ((v.u >> 16) & 1u)) & 0xffff0000u;
	return v.f;
}

/* Each buffer the kernel reads or writes must hold what the dispatch touches. */
static int fits(FakeBuffer *b, unsigned long bytes)
{
	return b != nil && b->length >= bytes;
}

static int run_kernel(FakePipeline *p, FakeBuffer **buf, MTLSize groups, MTLSize threads, int wrong)
{
	unsigned long g, t, i, n = threads.width, ng = groups.width;

	switch (p->kind) {
	case K_SIMD_SUM: {
		if (n > 64 || !fits(buf[0], ng * n * sizeof(float)) || !fits(buf[1], ng * sizeof(float)))
			return -1;
		const float *in = buf[0]->bytes;
		float *out = buf[1]->bytes;
		for (g = 0; g < ng; g++) {
			float total = 0;
			/* per SIMD group of 32 lanes, then across groups, as the kernel does */
			for (t = 0; t < n; t += 32) {
				float s = 0;
				for (i = t; i < t + 32 && i < n; i++)
					s += in[g * n + i];
				total += s;
			}
			out[g] = total + (wrong ? 1.0f : 0.0f);
		}
		return 0;
	}
	case K_MMA: {
		int row, col, k;
		for (i = 0; i < 4; i++)
			if (!fits(buf[i], 64 * sizeof(float)))
				return -1;
		const float *a = buf[0]->bytes, *b = buf[1]->bytes, *c = buf[2]->bytes;
		float *d = buf[3]->bytes;
		for (row = 0; row < 8; row++)
			for (col = 0; col < 8; col++) {
				float s = c[row * 8 + col];
				for (k = 0; k < 8; k++)
					s += a[row * 8 + k] * b[k * 8 + col];
				d[row * 8 + col] = s;
			}
		if (wrong)
			d[9] += 1.0f;
		return 0;
	}
	case K_BFLOAT: {
		unsigned long total = ng * n;
		for (i = 0; i < 4; i++)
			if (!fits(buf[i], total * sizeof(float)))
				return -1;
		const float *a = buf[0]->bytes, *b = buf[1]->bytes, *c = buf[2]->bytes;
		float *d = buf[3]->bytes;
		for (i = 0; i < total; i++)
			d[i] = wrong ? a[i] * b[i] + c[i] : bf16(bf16(bf16(a[i]) * bf16(b[i])) + bf16(c[i]));
		return 0;
	}
	case K_TG: {
		unsigned words = p->tg_bytes / 4;
		uint32_t *mem, *out;
		if (ng != 1 || !fits(buf[0], n * sizeof(uint32_t)) || (mem = calloc(words, sizeof(uint32_t))) == NULL)
			return -1;
		out = buf[0]->bytes;
		for (i = 0; i < words; i++)
			mem[i] = (uint32_t)i * 2654435761u;
		for (t = 0; t < n; t++) {
			uint32_t acc = 0;
			for (i = t; i < words; i += n)
				acc ^= mem[words - 1 - i] + (uint32_t)i;
			out[t] = acc ^ (wrong ? 1u : 0u);
		}
		free(mem);
		return 0;
	}
	default:
		return -1;
	}
}

/* ---- queue, command buffer, encoder ----------------------------------------------------------- */

@interface FakeCommandBuffer : FakeObject {
@public
	unsigned long status; /* MTLCommandBufferStatus: 0 not enqueued, 2 committed, 4 completed, 5 error */
	FakePipeline *pipeline;
	FakeBuffer *buffers[FAKE_MAX_BUFFERS];
	MTLSize groups, threads;
	int dispatched;
	FakeError *err;
}
- (id)computeCommandEncoder;
- (void)commit;
- (unsigned long)status;
- (id)error;
- (void)waitUntilCompleted;
@end

@interface FakeEncoder : FakeObject {
@public
	FakeCommandBuffer *cmd;
}
@end

@implementation FakeEncoder
- (void)setComputePipelineState:(id)p
{
	cmd->pipeline = p;
}
- (void)setBuffer:(id)b offset:(unsigned long)offset atIndex:(unsigned long)index
{
	if (index < FAKE_MAX_BUFFERS && offset == 0)
		cmd->buffers[index] = b;
}
- (void)dispatchThreadgroups:(MTLSize)g threadsPerThreadgroup:(MTLSize)t
{
	cmd->groups = g;
	cmd->threads = t;
	cmd->dispatched = 1;
}
- (void)endEncoding
{
}
@end

@implementation FakeCommandBuffer
- (id)computeCommandEncoder
{
	FakeEncoder *e = [[FakeEncoder alloc] init];

	e->cmd = self;
	return e;
}
- (void)commit
{
	const char *hang = getenv("LM_FAKE_METAL_HANG"), *wrong = getenv("LM_FAKE_METAL_WRONG");

	status = 2;
	if (!dispatched || pipeline == nil) {
		status = 4; /* nothing to do */
		return;
	}
	if (hang != NULL && strcmp(hang, pipeline->name) == 0)
		return; /* never completes */
	if (run_kernel(pipeline, buffers, groups, threads, wrong != NULL && strcmp(wrong, pipeline->name) == 0) != 0) {
		err = [[FakeError alloc] initWithText:"Execution of the command buffer was aborted due to an error "
		    "during execution. Invalid buffer or dispatch size (fake Metal)"];
		status = 5;
		return;
	}
	status = 4;
}
- (unsigned long)status
{
	return status;
}
- (id)error
{
	return err;
}
- (void)waitUntilCompleted
{
	/* A hung kernel never completes: wait as the real one would, for ever. */
	while (status != 4 && status != 5)
		sched_yield();
}
@end

@interface FakeQueue : FakeObject
- (id)commandBuffer;
@end

@implementation FakeQueue
- (id)commandBuffer
{
	return [[FakeCommandBuffer alloc] init];
}
@end

id fake_new_queue(void)
{
	return [[FakeQueue alloc] init];
}

/* ---- CoreFoundation's strings ----------------------------------------------------------------- */

const void *CFStringCreateWithCString(const void *allocator, const char *cstr, unsigned int encoding)
{
	(void)allocator;
	if (cstr == NULL || encoding != 0x08000100u) /* kCFStringEncodingUTF8 only */
		return NULL;
	return [[FakeString alloc] initWithCopyOf:cstr];
}

void CFRelease(const void *cf)
{
	if (cf != NULL)
		[(id)cf release];
}
