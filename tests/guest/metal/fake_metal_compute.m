/* The fake Metal's compute path: library from source, function, pipeline, buffers, queue, command
 * buffer, encoder, dispatch, wait — enough for the probe's exercise kernels (guest/probe/exercise.c),
 * which it recognises by function name and computes on the CPU.
 *
 * The simulated host level. A macOS guest's paravirtual device gets its feature level from the
 * host process that runs the VM, which reads the host preference when it starts. The Lume
 * simulator records, per VM, the preference in effect when the VM started and gives the guest
 * LM_FAKE_METAL_FEATURE_LEVEL=unlocked or restricted (absent: restricted, as a stock host). What
 * the kernels of the unlocked features do at the restricted level is a mode, because public
 * reports disagree (reference/metal.md, "Corrections and additions (2026-12-02)"):
 * LM_FAKE_METAL_STOCK_KERNELS=fail (the default: their pipelines fail, restricted_error()),
 * zeros (they compile and write zeros: a wrong result, not an error, as JuliaGPU/Metal.jl #309
 * saw on a VM in 2024) or run (they run correctly, as Metal.jl PR #789 and GitHub's hosted
 * runners report). stock_mode() is the one place that reads it (docs/guest.md, "The level the VM
 * started with").
 *
 * Test hooks: LM_FAKE_METAL_HANG=<kernel> makes that kernel's command buffer never complete (the
 * probe's timeout); LM_FAKE_METAL_WRONG=<kernel> makes it compute a wrong result (a "fail"), and
 * LM_FAKE_METAL_WRONG=<kernel>:<mistake> makes it compute wrongly in one particular way a real GPU
 * could (wrong_mistakes[] lists them): each exercise must fail on each mistake it is for.
 *
 * The paravirtual device's known defects (docs/guest.md, "Known defects"), switched on per VM by
 * the simulator like the level: LM_FAKE_METAL_DEFECTS=<name>[,<name>] with nocopy_buffer (a buffer
 * made with newBufferWithBytesNoCopy: is a copy taken when it is made: the GPU never sees what the
 * CPU writes afterwards) and indirect_command_buffer (executing an indirect command buffer runs
 * nothing, and reports no error).
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

typedef struct {
	unsigned long location, length;
} FakeRange; /* NSRange */

#define FAKE_TG_LIMIT 32768u   /* maxThreadgroupMemoryLength at either level (reference/metal.md) */
#define FAKE_LANGUAGE_3_1 ((3u << 16) + 1u)
#define FAKE_MAX_BUFFERS 8

const void *CFStringCreateWithCString(const void *allocator, const char *cstr, unsigned int encoding)
    __attribute__((visibility("default")));
void CFRelease(const void *cf) __attribute__((visibility("default")));

typedef enum { K_NONE = 0, K_SIMD_SUM, K_MMA, K_BFLOAT, K_TG, K_READ } kernel_kind;

static const struct {
	const char *name;
	kernel_kind kind;
} known_kernels[] = {
	{"lm_simd_sum", K_SIMD_SUM},
	{"lm_simdgroup_mma", K_MMA},
	{"lm_bfloat_fma", K_BFLOAT},
	{"lm_threadgroup_memory", K_TG},
	{"lm_read_words", K_READ},
};

/* LM_FAKE_METAL_WRONG's mistakes, per kernel: what a GPU could get wrong that a badly chosen input
 * would hide. M_OFF is the kernel named alone: its result off by one somewhere. */
typedef enum {
	M_NONE = 0,
	M_OFF,
	M_LANES,       /* simd_sum, mma: values in another lane than the kernel expects (lanes reversed) */
	M_HALF_SIMD,   /* simd_sum: each SIMD group's sum leaves out its upper 16 lanes */
	M_TRANSPOSE_A, /* mma: A loaded transposed */
	M_TRANSPOSE_B, /* mma: B loaded transposed */
	M_SWAP,        /* mma: B * A instead of A * B */
	M_FLOAT,       /* bfloat: computed in float, no bfloat rounding */
	M_TRUNCATE,    /* bfloat: rounded to bfloat by truncation, not to nearest */
	M_ALIAS,       /* threadgroup memory: half the size, addresses wrap onto it */
	M_UNKNOWN
} mistake;

static const struct {
	kernel_kind kind;
	const char *name;
	mistake m;
} wrong_mistakes[] = {
	{K_SIMD_SUM, "lanes", M_LANES},
	{K_SIMD_SUM, "half_simd", M_HALF_SIMD},
	{K_MMA, "transpose_a", M_TRANSPOSE_A},
	{K_MMA, "transpose_b", M_TRANSPOSE_B},
	{K_MMA, "swap", M_SWAP},
	{K_MMA, "lanes", M_LANES},
	{K_BFLOAT, "float", M_FLOAT},
	{K_BFLOAT, "truncate", M_TRUNCATE},
	{K_TG, "alias", M_ALIAS},
};

/* The mistake LM_FAKE_METAL_WRONG asks of the kernel `name` of `kind`; M_UNKNOWN for a mistake it
 * does not know (a typo in a test must not pass as a right result). */
static mistake wrong_for(const char *name, kernel_kind kind)
{
	const char *w = getenv("LM_FAKE_METAL_WRONG");
	size_t n = strlen(name), i;

	if (w == NULL || strncmp(w, name, n) != 0)
		return M_NONE;
	if (w[n] == '\0')
		return M_OFF;
	if (w[n] != ':')
		return M_NONE;
	for (i = 0; i < sizeof(wrong_mistakes) / sizeof(wrong_mistakes[0]); i++)
		if (wrong_mistakes[i].kind == kind && strcmp(wrong_mistakes[i].name, w + n + 1) == 0)
			return wrong_mistakes[i].m;
	return M_UNKNOWN;
}

/* 1 when LM_FAKE_METAL_DEFECTS lists `name` (comma-separated). */
static int defect_on(const char *name)
{
	const char *s = getenv("LM_FAKE_METAL_DEFECTS"), *end;
	size_t n = strlen(name);

	for (; s != NULL && *s != '\0'; s = *end != '\0' ? end + 1 : end) {
		if ((end = strchr(s, ',')) == NULL)
			end = s + strlen(s);
		if ((size_t)(end - s) == n && strncmp(s, name, n) == 0)
			return 1;
	}
	return 0;
}

static int env_is(const char *name, const char *value)
{
	const char *s = getenv(name);

	return s != NULL && strcmp(s, value) == 0;
}

static int level_unlocked(void)
{
	return env_is("LM_FAKE_METAL_FEATURE_LEVEL", "unlocked");
}

typedef enum { STOCK_FAIL = 0, STOCK_ZEROS, STOCK_RUN, STOCK_UNKNOWN } stock_kernels;

/* What the unlocked features' kernels do at the restricted level (LM_FAKE_METAL_STOCK_KERNELS;
 * absent or empty: fail). A value it does not know is STOCK_UNKNOWN, which fails every such
 * pipeline saying so: a typo in a test must not pass as one of the modes. */
static stock_kernels stock_mode(void)
{
	const char *s = getenv("LM_FAKE_METAL_STOCK_KERNELS");

	if (s == NULL || s[0] == '\0' || strcmp(s, "fail") == 0)
		return STOCK_FAIL;
	if (strcmp(s, "zeros") == 0)
		return STOCK_ZEROS;
	if (strcmp(s, "run") == 0)
		return STOCK_RUN;
	return STOCK_UNKNOWN;
}

/* The kernels of the features the unlock is for (the ones the restricted level changes). */
static int unlocked_feature(kernel_kind kind)
{
	return kind == K_SIMD_SUM || kind == K_MMA || kind == K_BFLOAT;
}

/* At the restricted level in the zeros mode: this kernel compiles, runs, and writes zeros. */
static int writes_zeros(kernel_kind kind)
{
	return !level_unlocked() && unlocked_feature(kind) && stock_mode() == STOCK_ZEROS;
}

/* The fail mode of the restricted level, in one place: which kernels fail to become pipelines and
 * with what message. Modelled on the GPU compiler's errors for an AIR intrinsic the target GPU
 * cannot lower; whether a real paravirtual device at the restricted level fails like this, writes
 * zeros or runs the kernels depends on host and guest versions (the modes above). */
static const char *restricted_error(kernel_kind kind)
{
	if (level_unlocked() || !unlocked_feature(kind))
		return NULL;
	switch (stock_mode()) {
	case STOCK_ZEROS:
	case STOCK_RUN: return NULL;
	case STOCK_UNKNOWN: return "LM_FAKE_METAL_STOCK_KERNELS must be fail, zeros or run (fake Metal)";
	case STOCK_FAIL: break;
	}
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

@interface MTLComputePipelineDescriptor : FakeObject {
@public
	id function;
	BOOL icb;
}
- (void)setComputeFunction:(id)f;
- (void)setSupportIndirectCommandBuffers:(BOOL)v;
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
	int icb; /* made from a descriptor with supportIndirectCommandBuffers */
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

@implementation MTLComputePipelineDescriptor
- (void)setComputeFunction:(id)f
{
	function = f;
}
- (void)setSupportIndirectCommandBuffers:(BOOL)v
{
	icb = v;
}
@end

id fake_new_pipeline_desc(id descriptor, id *error)
{
	MTLComputePipelineDescriptor *d = descriptor;
	FakePipeline *p;

	if (d == nil || d->function == nil)
		return set_error(error, "the descriptor has no compute function");
	if ((p = fake_new_pipeline(d->function, error)) != nil)
		p->icb = d->icb != 0;
	return p;
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
	int borrowed; /* newBufferWithBytesNoCopy: the caller's memory, not freed here */
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
	if (!borrowed)
		free(bytes);
	object_dispose(self);
}
@end

id fake_new_buffer_nocopy(void *bytes, unsigned long length)
{
	FakeBuffer *b;

	/* Metal's rule: page-aligned memory, a whole number of pages. */
	if (bytes == NULL || ((uintptr_t)bytes % 4096u) != 0 || length == 0 || length % 4096u != 0)
		return nil;
	if (defect_on("nocopy_buffer"))
		return fake_new_buffer(bytes, length); /* the defect: a copy taken now */
	b = [[FakeBuffer alloc] init];
	b->bytes = bytes;
	b->length = length;
	b->borrowed = 1;
	return b;
}

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

/* Truncate a float to bfloat16 (the M_TRUNCATE mistake). */
static float bf16_truncated(float f)
{
	union {
		float f;
		uint32_t u;
	} v;

	v.f = f;
	v.u &= 0xffff0000u;
	return v.f;
}

/* Each buffer the kernel reads or writes must hold what the dispatch touches. */
static int fits(FakeBuffer *b, unsigned long bytes)
{
	return b != nil && b->length >= bytes;
}

/* Element e of an 8x8 matrix as a SIMD group of 32 lanes holds it (two per lane), with the lanes
 * reversed: the M_LANES mistake in a load. */
static int lanes_reversed(int e)
{
	return (31 - e / 2) * 2 + e % 2;
}

/* An 8x8 load as the mistake m makes it: transposed, lanes reversed, or as it is. */
static void load8x8(float *to, const float *from, int transpose, int lanes)
{
	int e;

	for (e = 0; e < 64; e++)
		to[e] = transpose ? from[(e % 8) * 8 + e / 8] : lanes ? from[lanes_reversed(e)] : from[e];
}

static int run_kernel(FakePipeline *p, FakeBuffer **buf, MTLSize groups, MTLSize threads, mistake m)
{
	unsigned long g, t, i, n = threads.width, ng = groups.width;

	if (m == M_UNKNOWN)
		return -2;
	switch (p->kind) {
	case K_SIMD_SUM: {
		if (n > 64 || !fits(buf[0], ng * n * sizeof(float)) || !fits(buf[1], ng * sizeof(float)) ||
		    !fits(buf[2], ng * n * sizeof(float)))
			return -1;
		const float *in = buf[0]->bytes;
		float *out = buf[1]->bytes, *prefix = buf[2]->bytes;
		for (g = 0; g < ng; g++) {
			float total = 0;
			/* per SIMD group of 32 lanes, then across groups, as the kernel does */
			for (t = 0; t < n; t += 32) {
				float s = 0, before = 0;
				for (i = t; i < t + 32 && i < n; i++) {
					/* the lane that holds thread i's value */
					unsigned long from = m == M_LANES ? t + 31 - (i - t) : i;
					if (from >= n)
						from = i;
					prefix[g * n + i] = before;
					before += in[g * n + from];
					if (m != M_HALF_SIMD || i - t < 16)
						s += in[g * n + from];
				}
				total += s;
			}
			out[g] = total + (m == M_OFF ? 1.0f : 0.0f);
		}
		return 0;
	}
	case K_MMA: {
		int row, col, k;
		float a[64], b[64], c[64];
		for (i = 0; i < 4; i++)
			if (!fits(buf[i], 64 * sizeof(float)))
				return -1;
		float *d = buf[3]->bytes;
		load8x8(a, buf[0]->bytes, m == M_TRANSPOSE_A, m == M_LANES);
		load8x8(b, buf[1]->bytes, m == M_TRANSPOSE_B, m == M_LANES);
		load8x8(c, buf[2]->bytes, 0, m == M_LANES);
		for (row = 0; row < 8; row++)
			for (col = 0; col < 8; col++) {
				float s = c[row * 8 + col];
				for (k = 0; k < 8; k++)
					s += m == M_SWAP ? b[row * 8 + k] * a[k * 8 + col] : a[row * 8 + k] * b[k * 8 + col];
				d[row * 8 + col] = s;
			}
		if (m == M_OFF)
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
		for (i = 0; i < total; i++) {
			if (m == M_FLOAT)
				d[i] = a[i] * b[i] + c[i];
			else if (m == M_TRUNCATE)
				d[i] = bf16_truncated(bf16_truncated(bf16_truncated(a[i]) * bf16_truncated(b[i])) +
				    bf16_truncated(c[i]));
			else
				d[i] = bf16(bf16(bf16(a[i]) * bf16(b[i])) + bf16(c[i])) + (m == M_OFF ? 1.0f : 0.0f);
		}
		return 0;
	}
	case K_TG: {
		unsigned words = p->tg_bytes / 4, cells = m == M_ALIAS ? words / 2 : words;
		uint32_t *mem, *out;
		if (ng != 1 || !fits(buf[0], n * sizeof(uint32_t)) || cells == 0 ||
		    (mem = calloc(cells, sizeof(uint32_t))) == NULL)
			return -1;
		out = buf[0]->bytes;
		for (i = 0; i < words; i++)
			mem[i % cells] = (uint32_t)i * 2654435761u;
		for (t = 0; t < n; t++) {
			uint32_t acc = 0;
			for (i = t; i < words; i += n)
				acc ^= mem[(words - 1 - i) % cells] + (uint32_t)i;
			out[t] = acc ^ (m == M_OFF ? 1u : 0u);
		}
		free(mem);
		return 0;
	}
	case K_READ: {
		unsigned long total = ng * n;
		if (!fits(buf[0], total * sizeof(float)) || !fits(buf[1], total * sizeof(float)))
			return -1;
		const float *in = buf[0]->bytes;
		float *out = buf[1]->bytes;
		for (i = 0; i < total; i++)
			out[i] = in[i] * 2.0f + 1.0f + (m == M_OFF ? 1.0f : 0.0f);
		return 0;
	}
	default:
		return -1;
	}
}

/* ---- indirect command buffers ------------------------------------------------------------------ */

@interface MTLIndirectCommandBufferDescriptor : FakeObject {
@public
	unsigned long types, max_bind;
	BOOL inherit_pipeline, inherit_buffers;
}
@end

@implementation MTLIndirectCommandBufferDescriptor
- (void)setCommandTypes:(unsigned long)v
{
	types = v;
}
- (void)setInheritPipelineState:(BOOL)v
{
	inherit_pipeline = v;
}
- (void)setInheritBuffers:(BOOL)v
{
	inherit_buffers = v;
}
- (void)setMaxKernelBufferBindCount:(unsigned long)v
{
	max_bind = v;
}
@end

/* One command of an indirect command buffer: what a direct dispatch records. */
@interface FakeIndirectCommand : FakeObject {
@public
	FakePipeline *pipeline;
	FakeBuffer *buffers[FAKE_MAX_BUFFERS];
	unsigned long max_bind;
	MTLSize groups, threads;
	int dispatched;
}
@end

@implementation FakeIndirectCommand
- (void)setComputePipelineState:(id)p
{
	pipeline = p;
}
- (void)setKernelBuffer:(id)b offset:(unsigned long)offset atIndex:(unsigned long)index
{
	if (index < max_bind && index < FAKE_MAX_BUFFERS && offset == 0)
		buffers[index] = b;
}
- (void)concurrentDispatchThreadgroups:(MTLSize)g threadsPerThreadgroup:(MTLSize)t
{
	groups = g;
	threads = t;
	dispatched = 1;
}
@end

#define FAKE_ICB_CONCURRENT_DISPATCH 32u /* MTLIndirectCommandTypeConcurrentDispatch */

@interface FakeIndirectCommandBuffer : FakeObject {
@public
	unsigned long count;
	FakeIndirectCommand **commands;
}
- (id)indirectComputeCommandAtIndex:(unsigned long)index;
@end

@implementation FakeIndirectCommandBuffer
- (id)indirectComputeCommandAtIndex:(unsigned long)index
{
	return index < count ? commands[index] : nil;
}
- (void)release
{
	unsigned long i;

	for (i = 0; i < count; i++)
		[commands[i] release];
	free(commands);
	object_dispose(self);
}
@end

id fake_new_icb(id descriptor, unsigned long max_commands)
{
	MTLIndirectCommandBufferDescriptor *d = descriptor;
	FakeIndirectCommandBuffer *icb;
	unsigned long i;

	/* Compute commands with their own pipeline and buffers: what the probe asks for. */
	if (d == nil || (d->types & FAKE_ICB_CONCURRENT_DISPATCH) == 0 || d->inherit_pipeline || d->inherit_buffers ||
	    max_commands == 0 || max_commands > 16)
		return nil;
	icb = [[FakeIndirectCommandBuffer alloc] init];
	if ((icb->commands = calloc(max_commands, sizeof(*icb->commands))) == NULL) {
		object_dispose(icb);
		return nil;
	}
	for (i = 0; i < max_commands; i++) {
		icb->commands[i] = [[FakeIndirectCommand alloc] init];
		icb->commands[i]->max_bind = d->max_bind;
		icb->count = i + 1;
	}
	return icb;
}

/* ---- queue, command buffer, encoder ----------------------------------------------------------- */

@interface FakeCommandBuffer : FakeObject {
@public
	unsigned long status; /* MTLCommandBufferStatus: 0 not enqueued, 2 committed, 4 completed, 5 error */
	FakePipeline *pipeline;
	FakeBuffer *buffers[FAKE_MAX_BUFFERS];
	MTLSize groups, threads;
	int dispatched;
	FakeIndirectCommandBuffer *icb; /* executeCommandsInBuffer:withRange: */
	unsigned long icb_from, icb_count;
	FakeBuffer *resident[FAKE_MAX_BUFFERS]; /* useResource:usage: */
	int nresident;
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
- (void)useResource:(id)b usage:(unsigned long)usage
{
	if (cmd->nresident < FAKE_MAX_BUFFERS)
		cmd->resident[cmd->nresident++] = b;
}
- (void)executeCommandsInBuffer:(id)icb withRange:(FakeRange)range
{
	cmd->icb = icb;
	cmd->icb_from = range.location;
	cmd->icb_count = range.length;
}
- (void)endEncoding
{
}
@end

static int resident(FakeCommandBuffer *cmd, FakeBuffer *b)
{
	int i;

	for (i = 0; i < cmd->nresident; i++)
		if (cmd->resident[i] == b)
			return 1;
	return 0;
}

/* The zeros mode: every buffer the kernel writes reads back as zeros, as if nothing ran (the
 * buffers' indices are those of run_kernel). */
static void zero_outputs(kernel_kind kind, FakeBuffer **buf)
{
	int outputs[2] = {-1, -1}, i;

	switch (kind) {
	case K_SIMD_SUM: outputs[0] = 1, outputs[1] = 2; break;
	case K_MMA:
	case K_BFLOAT: outputs[0] = 3; break;
	default: return;
	}
	for (i = 0; i < 2; i++)
		if (outputs[i] >= 0 && buf[outputs[i]] != nil)
			memset(buf[outputs[i]]->bytes, 0, buf[outputs[i]]->length);
}

static const char *const aborted = "Execution of the command buffer was aborted due to an error during execution. ";

/* One dispatch: 0 done, 1 never completes (LM_FAKE_METAL_HANG), or -1 with *why. */
static int run_dispatch(FakePipeline *pipeline, FakeBuffer **buffers, MTLSize groups, MTLSize threads, const char **why)
{
	const char *hang = getenv("LM_FAKE_METAL_HANG");
	int rc;

	if (hang != NULL && strcmp(hang, pipeline->name) == 0)
		return 1;
	rc = run_kernel(pipeline, buffers, groups, threads, wrong_for(pipeline->name, pipeline->kind));
	if (rc == 0 && writes_zeros(pipeline->kind))
		zero_outputs(pipeline->kind, buffers);
	if (rc == -2)
		*why = "LM_FAKE_METAL_WRONG names a mistake the fake Metal does not know for this kernel";
	else if (rc != 0)
		*why = "Invalid buffer or dispatch size (fake Metal)";
	return rc != 0 ? -1 : 0;
}

/* The commands of an indirect command buffer, in order; the defect runs none of them. */
static int run_indirect(FakeCommandBuffer *cmd, const char **why)
{
	unsigned long c;
	int i, rc;

	if (cmd->icb_from + cmd->icb_count > cmd->icb->count) {
		*why = "the range is outside the indirect command buffer (fake Metal)";
		return -1;
	}
	if (defect_on("indirect_command_buffer"))
		return 0;
	for (c = cmd->icb_from; c < cmd->icb_from + cmd->icb_count; c++) {
		FakeIndirectCommand *ic = cmd->icb->commands[c];
		if (!ic->dispatched || ic->pipeline == nil)
			continue;
		if (!ic->pipeline->icb) {
			*why = "a pipeline without supportIndirectCommandBuffers in an indirect command buffer (fake Metal)";
			return -1;
		}
		for (i = 0; i < FAKE_MAX_BUFFERS; i++)
			if (ic->buffers[i] != nil && !resident(cmd, ic->buffers[i])) {
				*why = "GPU address fault: a buffer of an indirect command is not resident (useResource:usage:) "
				    "(fake Metal)";
				return -1;
			}
		if ((rc = run_dispatch(ic->pipeline, ic->buffers, ic->groups, ic->threads, why)) != 0)
			return rc;
	}
	return 0;
}

@implementation FakeCommandBuffer
- (id)computeCommandEncoder
{
	FakeEncoder *e = [[FakeEncoder alloc] init];

	e->cmd = self;
	return e;
}
- (void)commit
{
	const char *why = NULL;
	char text[512];
	int rc;

	status = 2;
	if (icb != nil)
		rc = run_indirect(self, &why);
	else if (dispatched && pipeline != nil)
		rc = run_dispatch(pipeline, buffers, groups, threads, &why);
	else
		rc = 0; /* nothing to do */
	if (rc == 1)
		return; /* never completes */
	if (rc != 0) {
		snprintf(text, sizeof(text), "%s%s", aborted, why);
		err = [[FakeError alloc] initWithText:text];
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
