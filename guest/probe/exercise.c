/* metal-capabilities --exercise: does the device run what it claims?
 *
 * For each feature the unlock is for (SIMD-group reduction, SIMD-group matrix multiply, bfloat16,
 * threadgroup memory) a tiny compute kernel is compiled from source at run time, dispatched on a
 * small input and its output compared with the same computation done here on the CPU. Inputs are
 * small integers (and, for bfloat16, values bfloat16 must round), so every correct GPU gives
 * exactly the reference: any difference is a wrong result, not a rounding question. Each
 * exercise's inputs are chosen so that the mistakes it exists to catch change the checked result
 * (its comment says which and why); the fake Metal of the tests makes each mistake on demand.
 *
 * Then the paravirtual device's two known defects that break real workloads while every answer
 * looks right, reported and not required: stale data through newBufferWithBytesNoCopy: buffers,
 * and indirect command buffers (docs/guest.md, "Known defects").
 *
 * Only the Objective-C runtime's C API, Metal's classes reached through it, CoreFoundation's
 * CFString (an NSString) for the sources and names, and a temporary file mapped with mmap: no SDK
 * header, no Foundation, no blocks.
 */
#include "exercise.h"

/* ---- messages --------------------------------------------------------------------------- */

static void msg_set(lm_ex_outcome *o, lm_ex_result result)
{
	o->result = result;
	o->message[0] = '\0';
}

static void msg_add(lm_ex_outcome *o, const char *s)
{
	lm_size n = 0;

	while (o->message[n] != '\0')
		n++;
	while (*s != '\0' && n + 1 < sizeof(o->message))
		o->message[n++] = *s++;
	o->message[n] = '\0';
}

static void msg_add_u64(lm_ex_outcome *o, lm_u64 v)
{
	char d[24];

	msg_add(o, lm_decimal(d, v));
}

/* Whole numbers as such, anything else with six decimals (truncated): enough to see a difference. */
static void msg_add_float(lm_ex_outcome *o, float f)
{
	lm_u64 whole, frac;
	double d = f;
	int i;

	if (f != f) {
		msg_add(o, "nan");
		return;
	}
	if (d < 0) {
		msg_add(o, "-");
		d = -d;
	}
	if (d > 1e15) {
		msg_add(o, "huge");
		return;
	}
	whole = (lm_u64)d;
	msg_add_u64(o, whole);
	frac = (lm_u64)((d - (double)whole) * 1e6);
	if (frac == 0 && d == (double)whole)
		return;
	msg_add(o, ".");
	for (i = 100000; i >= 1; i /= 10)
		msg_add_u64(o, (frac / (lm_u64)i) % 10);
}

/* ---- messages to objects ---------------------------------------------------------------- */

typedef struct {
	lm_size width, height, depth;
} lm_mtl_size; /* MTLSize */

#define LM_MTL_STORAGE_SHARED 0u           /* MTLResourceStorageModeShared */
#define LM_MTL_STATUS_COMPLETED 4u         /* MTLCommandBufferStatusCompleted */
#define LM_MTL_STATUS_ERROR 5u             /* MTLCommandBufferStatusError */
#define LM_MTL_LANGUAGE_3_1 ((3u << 16) + 1u) /* MTLLanguageVersion3_1 */

typedef struct {
	id device;
	unsigned timeout_ms;
	lm_ex_outcome *out;
} run;

/* The implementation of `name` for obj, or 0 after recording an error naming what is missing. */
static IMP need(run *r, id obj, const char *name, SEL *sel)
{
	Class cls = object_getClass(obj);

	*sel = sel_registerName(name);
	if (class_respondsToSelector(cls, *sel))
		return class_getMethodImplementation(cls, *sel);
	msg_set(r->out, LM_EX_ERROR);
	msg_add(r->out, "Metal's ");
	msg_add(r->out, class_getName(cls));
	msg_add(r->out, " does not implement -");
	msg_add(r->out, name);
	msg_add(r->out, " (no compute path)");
	return 0;
}

static id send0(run *r, id obj, const char *name)
{
	SEL sel;
	IMP imp = need(r, obj, name, &sel);

	return imp != 0 ? ((id (*)(id, SEL))imp)(obj, sel) : 0;
}

static int send_void(run *r, id obj, const char *name)
{
	SEL sel;
	IMP imp = need(r, obj, name, &sel);

	if (imp == 0)
		return -1;
	((void (*)(id, SEL))imp)(obj, sel);
	return 0;
}

static void release(id obj)
{
	SEL sel = sel_registerName("release");
	Class cls;

	if (obj == 0)
		return;
	cls = object_getClass(obj);
	if (class_respondsToSelector(cls, sel))
		((void (*)(id, SEL))class_getMethodImplementation(cls, sel))(obj, sel);
}

static const char *utf8_of(id string)
{
	SEL sel = sel_registerName("UTF8String");
	const char *s;

	if (string == 0 || !class_respondsToSelector(object_getClass(string), sel))
		return 0;
	s = ((const char *(*)(id, SEL))class_getMethodImplementation(object_getClass(string), sel))(string, sel);
	return s;
}

/* error: Metal's own message (the NSError's localizedDescription), or what failed when it gave none. */
static void fail_with(run *r, const char *what, id error)
{
	SEL sel = sel_registerName("localizedDescription");
	const char *text = 0;

	if (error != 0 && class_respondsToSelector(object_getClass(error), sel))
		text = utf8_of(((id (*)(id, SEL))class_getMethodImplementation(object_getClass(error), sel))(error, sel));
	msg_set(r->out, LM_EX_ERROR);
	if (text != 0 && text[0] != '\0') {
		msg_add(r->out, text);
	} else {
		msg_add(r->out, what);
		msg_add(r->out, " failed without a message");
	}
}

/* An instance of the Metal class `name` (alloc, init); 0 with the error recorded. */
static id make_object(run *r, const char *name)
{
	Class cls = objc_lookUpClass(name);
	id obj;

	if (cls == 0) {
		msg_set(r->out, LM_EX_ERROR);
		msg_add(r->out, "Metal has no ");
		msg_add(r->out, name);
		msg_add(r->out, " class");
		return 0;
	}
	if ((obj = send0(r, (id)(void *)cls, "alloc")) == 0)
		return 0;
	return send0(r, obj, "init");
}

/* Send a setter that takes one word-sized argument (an NSUInteger, a BOOL, an object). */
static int set_word(run *r, id obj, const char *name, lm_size value)
{
	SEL sel;
	IMP imp = need(r, obj, name, &sel);

	if (imp == 0)
		return -1;
	((void (*)(id, SEL, lm_size))imp)(obj, sel, value);
	return 0;
}

static id icb_pipeline(run *r, id fn, id *error)
{
	SEL sel;
	IMP imp;
	id desc, pipeline = 0;

	if ((desc = make_object(r, "MTLComputePipelineDescriptor")) == 0)
		return 0;
	if (set_word(r, desc, "setComputeFunction:", (lm_size)fn) == 0 &&
	    set_word(r, desc, "setSupportIndirectCommandBuffers:", 1) == 0 &&
	    (imp = need(r, r->device, "newComputePipelineStateWithDescriptor:options:reflection:error:", &sel)) != 0)
		pipeline = ((id (*)(id, SEL, id, lm_size, id *, id *))imp)(r->device, sel, desc, 0, 0, error);
	release(desc);
	return pipeline;
}

/* Source -> library -> function -> pipeline; 0 with the error recorded. for_icb: a pipeline an
 * indirect command buffer may use (made from a descriptor that says so, as Metal requires). */
static id make_pipeline(run *r, const char *source, const char *function, unsigned language, int for_icb)
{
	SEL sel;
	IMP imp;
	id options = 0, library, fn, pipeline, error = 0;
	CFStringRef src, name;

	if (need(r, r->device, "newLibraryWithSource:options:error:", &sel) == 0 ||
	    need(r, r->device, "newComputePipelineStateWithFunction:error:", &sel) == 0)
		return 0;
	if (language != 0) {
		if ((options = make_object(r, "MTLCompileOptions")) == 0)
			return 0;
		if ((imp = need(r, options, "setLanguageVersion:", &sel)) == 0)
			return 0;
		((void (*)(id, SEL, lm_size))imp)(options, sel, language);
	}
	if ((src = CFStringCreateWithCString(0, source, LM_CF_STRING_ENCODING_UTF8)) == 0) {
		msg_set(r->out, LM_EX_ERROR);
		msg_add(r->out, "CFStringCreateWithCString failed");
		release(options);
		return 0;
	}
	imp = need(r, r->device, "newLibraryWithSource:options:error:", &sel);
	library = ((id (*)(id, SEL, id, id, id *))imp)(r->device, sel, (id)(void *)src, options, &error);
	CFRelease(src);
	release(options);
	if (library == 0) {
		fail_with(r, "newLibraryWithSource:options:error:", error);
		return 0;
	}
	if ((imp = need(r, library, "newFunctionWithName:", &sel)) == 0)
		return 0;
	name = CFStringCreateWithCString(0, function, LM_CF_STRING_ENCODING_UTF8);
	fn = name != 0 ? ((id (*)(id, SEL, id))imp)(library, sel, (id)(void *)name) : 0;
	if (name != 0)
		CFRelease(name);
	if (fn == 0) {
		msg_set(r->out, LM_EX_ERROR);
		msg_add(r->out, "the compiled library has no function ");
		msg_add(r->out, function);
		release(library);
		return 0;
	}
	error = 0;
	if (for_icb)
		pipeline = icb_pipeline(r, fn, &error);
	else {
		imp = need(r, r->device, "newComputePipelineStateWithFunction:error:", &sel);
		pipeline = ((id (*)(id, SEL, id, id *))imp)(r->device, sel, fn, &error);
	}
	release(fn);
	release(library);
	if (pipeline == 0 && r->out->message[0] == '\0')
		fail_with(r, "newComputePipelineStateWithFunction:error:", error);
	return pipeline;
}

static id make_buffer(run *r, const void *bytes, lm_size length)
{
	SEL sel;
	IMP imp;
	id buffer;

	if (bytes != 0) {
		if ((imp = need(r, r->device, "newBufferWithBytes:length:options:", &sel)) == 0)
			return 0;
		buffer = ((id (*)(id, SEL, const void *, lm_size, lm_size))imp)(r->device, sel, bytes, length,
		    LM_MTL_STORAGE_SHARED);
	} else {
		if ((imp = need(r, r->device, "newBufferWithLength:options:", &sel)) == 0)
			return 0;
		buffer = ((id (*)(id, SEL, lm_size, lm_size))imp)(r->device, sel, length, LM_MTL_STORAGE_SHARED);
	}
	if (buffer == 0) {
		msg_set(r->out, LM_EX_ERROR);
		msg_add(r->out, "Metal could not allocate a buffer of ");
		msg_add_u64(r->out, length);
		msg_add(r->out, " bytes");
	}
	return buffer;
}

static void *contents(run *r, id buffer)
{
	SEL sel;
	IMP imp = need(r, buffer, "contents", &sel);

	return imp != 0 ? ((void *(*)(id, SEL))imp)(buffer, sel) : 0;
}

/* A command queue, a command buffer and a compute encoder on it; -1 with the error recorded. */
static int encoder_begin(run *r, id *queue, id *cmd, id *enc)
{
	if ((*queue = send0(r, r->device, "newCommandQueue")) == 0) {
		if (r->out->message[0] == '\0')
			fail_with(r, "newCommandQueue", 0);
		return -1;
	}
	if ((*cmd = send0(r, *queue, "commandBuffer")) == 0 || (*enc = send0(r, *cmd, "computeCommandEncoder")) == 0) {
		if (r->out->message[0] == '\0')
			fail_with(r, "commandBuffer/computeCommandEncoder", 0);
		release(*queue);
		return -1;
	}
	return 0;
}

/* End the encoding, commit, and wait for it at most timeout_ms. 0 when it completed; -1 with the
 * error recorded (and the command buffer abandoned, not released, when it did not finish). */
static int commit_wait(run *r, id queue, id cmd, id enc)
{
	SEL sel;
	IMP imp;
	lm_u64 waited_us = 0, limit_us = (lm_u64)r->timeout_ms * 1000;
	lm_size status;
	int spins = 0;

	if (send_void(r, enc, "endEncoding") < 0 || send_void(r, cmd, "commit") < 0)
		return -1;
	/* -waitUntilCompleted cannot be given up on; the status can. A first few yields catch a kernel
	 * that is done at once; then a millisecond at a time (counted, not read from a clock). */
	if ((imp = need(r, cmd, "status", &sel)) == 0)
		return -1;
	for (;;) {
		status = ((lm_size (*)(id, SEL))imp)(cmd, sel);
		if (status >= LM_MTL_STATUS_COMPLETED)
			break;
		if (waited_us >= limit_us) {
			msg_set(r->out, LM_EX_ERROR);
			msg_add(r->out, "the kernel did not complete within ");
			msg_add_u64(r->out, r->timeout_ms);
			msg_add(r->out, " ms; abandoned");
			return -1;
		}
		if (spins < 64) {
			spins++;
			sched_yield();
		} else {
			usleep(1000);
			waited_us += 1000;
		}
	}
	if (status == LM_MTL_STATUS_ERROR) {
		fail_with(r, "the command buffer", send0(r, cmd, "error"));
		release(queue);
		return -1;
	}
	release(queue);
	return 0;
}

/* Encode one dispatch of pipeline over buffers (bound at 0, 1, ...), commit, and wait. */
static int dispatch(run *r, id pipeline, id *buffers, int nbuffers, lm_size groups, lm_size threads)
{
	SEL sel;
	IMP imp;
	id queue, cmd, enc;
	lm_mtl_size g = {groups, 1, 1}, t = {threads, 1, 1};
	int i;

	if (encoder_begin(r, &queue, &cmd, &enc) < 0)
		return -1;
	if ((imp = need(r, enc, "setComputePipelineState:", &sel)) == 0)
		return -1;
	((void (*)(id, SEL, id))imp)(enc, sel, pipeline);
	if ((imp = need(r, enc, "setBuffer:offset:atIndex:", &sel)) == 0)
		return -1;
	for (i = 0; i < nbuffers; i++)
		((void (*)(id, SEL, id, lm_size, lm_size))imp)(enc, sel, buffers[i], 0, (lm_size)i);
	if ((imp = need(r, enc, "dispatchThreadgroups:threadsPerThreadgroup:", &sel)) == 0)
		return -1;
	((void (*)(id, SEL, lm_mtl_size, lm_mtl_size))imp)(enc, sel, g, t);
	return commit_wait(r, queue, cmd, enc);
}

/* ---- the kernels ------------------------------------------------------------------------ */

/* simd_sum within each SIMD group, then the groups' partial sums through threadgroup memory: one
 * total per threadgroup, whatever the SIMD width (up to 64 lanes per group); and each thread's
 * simd_prefix_exclusive_sum, the one answer that depends on which lane holds which value. */
static const char reduction_source[] =
    "#include <metal_stdlib>\n"
    "using namespace metal;\n"
    "kernel void lm_simd_sum(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],\n"
    "    device float *prefix [[buffer(2)]],\n"
    "    uint gid [[thread_position_in_grid]], uint lid [[thread_position_in_threadgroup]],\n"
    "    uint group [[threadgroup_position_in_grid]], uint lane [[thread_index_in_simdgroup]],\n"
    "    uint sg [[simdgroup_index_in_threadgroup]], uint nsg [[simdgroups_per_threadgroup]])\n"
    "{\n"
    "    threadgroup float partial[64];\n"
    "    float x = in[gid];\n"
    "    float s = simd_sum(x);\n"
    "    prefix[gid] = simd_prefix_exclusive_sum(x);\n"
    "    if (lane == 0) partial[sg] = s;\n"
    "    threadgroup_barrier(mem_flags::mem_threadgroup);\n"
    "    if (lid == 0) {\n"
    "        float t = 0.0f;\n"
    "        for (uint i = 0; i < nsg; i++) t += partial[i];\n"
    "        out[group] = t;\n"
    "    }\n"
    "}\n";

/* One 8x8 multiply-accumulate by one SIMD group: d = a * b + c, row-major. */
static const char matrix_source[] =
    "#include <metal_stdlib>\n"
    "using namespace metal;\n"
    "kernel void lm_simdgroup_mma(device const float *a [[buffer(0)]], device const float *b [[buffer(1)]],\n"
    "    device const float *c [[buffer(2)]], device float *d [[buffer(3)]])\n"
    "{\n"
    "    simdgroup_float8x8 ma, mb, mc, md;\n"
    "    simdgroup_load(ma, a, 8);\n"
    "    simdgroup_load(mb, b, 8);\n"
    "    simdgroup_load(mc, c, 8);\n"
    "    simdgroup_multiply_accumulate(md, ma, mb, mc);\n"
    "    simdgroup_store(md, d, 8);\n"
    "}\n";

/* bfloat16 (MSL 3.1): inputs converted to bfloat (which must round them), a * b + c in bfloat. */
static const char bfloat_source[] =
    "#include <metal_stdlib>\n"
    "using namespace metal;\n"
    "kernel void lm_bfloat_fma(device const float *a [[buffer(0)]], device const float *b [[buffer(1)]],\n"
    "    device const float *c [[buffer(2)]], device float *d [[buffer(3)]],\n"
    "    uint i [[thread_position_in_grid]])\n"
    "{\n"
    "    bfloat x = bfloat(a[i]), y = bfloat(b[i]), z = bfloat(c[i]);\n"
    "    bfloat r = x * y + z;\n"
    "    d[i] = float(r);\n"
    "}\n";

/* The two known defects' kernel: each thread reads one word and writes a function of it, so a
 * word the GPU did not read as the CPU left it, or a dispatch that did not run, shows. */
static const char read_source[] =
    "#include <metal_stdlib>\n"
    "using namespace metal;\n"
    "kernel void lm_read_words(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],\n"
    "    uint i [[thread_position_in_grid]])\n"
    "{\n"
    "    out[i] = in[i] * 2.0f + 1.0f;\n"
    "}\n";

/* LM_TG_BYTES of threadgroup memory: every word written, then every thread reads words other
 * threads wrote (reversed order) and folds them into one value. */
static const char threadgroup_source_tail[] =
    "#include <metal_stdlib>\n"
    "using namespace metal;\n"
    "kernel void lm_threadgroup_memory(device uint *out [[buffer(0)]],\n"
    "    uint lid [[thread_position_in_threadgroup]], uint n [[threads_per_threadgroup]])\n"
    "{\n"
    "    threadgroup uint mem[LM_TG_BYTES / 4];\n"
    "    const uint words = LM_TG_BYTES / 4;\n"
    "    for (uint i = lid; i < words; i += n) mem[i] = i * 2654435761u;\n"
    "    threadgroup_barrier(mem_flags::mem_threadgroup);\n"
    "    uint acc = 0;\n"
    "    for (uint i = lid; i < words; i += n) acc ^= mem[words - 1 - i] + i;\n"
    "    out[lid] = acc;\n"
    "}\n";

#define REDUCTION_GROUPS 4
#define REDUCTION_THREADS 64
#define BFLOAT_N 32
#define TG_THREADS 64
/* One 16 KB page of arm64 macOS (four of 4 KB elsewhere): newBufferWithBytesNoCopy: wants whole
 * pages, and mmap gives page-aligned memory. */
#define NOCOPY_BYTES 16384u
#define NOCOPY_N (NOCOPY_BYTES / 4u)
#define NOCOPY_GROUP 64u
#define ICB_N 256u
#define LM_MTL_ICB_CONCURRENT_DISPATCH 32u /* MTLIndirectCommandTypeConcurrentDispatch */
#define LM_MTL_USAGE_READ 1u               /* MTLResourceUsageRead */
#define LM_MTL_USAGE_WRITE 2u              /* MTLResourceUsageWrite */

/* Round a float to bfloat16 (nearest, ties to even), as a float. */
static float bf16(float f)
{
	union {
		float f;
		unsigned u;
	} v;

	v.f = f;
	if ((v.u & 0x7f800000u) == 0x7f800000u)
		return f;
	v.u = (v.u + 0x7fffu + ((v.u >> 16) & 1u)) & 0xffff0000u;
	return v.f;
}

/* "WHAT N is GOT, expected WANT" for the first difference. */
static int compare(run *r, const char *what, const float *got, const float *want, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (got[i] != want[i]) {
			msg_set(r->out, LM_EX_FAIL);
			msg_add(r->out, what);
			msg_add(r->out, " ");
			msg_add_u64(r->out, (lm_u64)i);
			msg_add(r->out, " is ");
			msg_add_float(r->out, got[i]);
			msg_add(r->out, ", expected ");
			msg_add_float(r->out, want[i]);
			return -1;
		}
	return 0;
}

/* The SIMD width the pipeline runs with, when this exercise can check it (1..64, dividing 64). */
static lm_size simd_width(run *r, id pipeline)
{
	SEL sel;
	IMP imp = need(r, pipeline, "threadExecutionWidth", &sel);
	lm_size w;

	if (imp == 0)
		return 0;
	w = ((lm_size (*)(id, SEL))imp)(pipeline, sel);
	if (w == 0 || w > REDUCTION_THREADS || REDUCTION_THREADS % w != 0) {
		msg_set(r->out, LM_EX_ERROR);
		msg_add(r->out, "the pipeline's threadExecutionWidth is ");
		msg_add_u64(r->out, w);
		msg_add(r->out, ", not a SIMD width that divides 64");
		return 0;
	}
	return w;
}

/* Catches: lanes in the wrong order, lanes left out of a SIMD group's sum, partial sums not
 * combined. The inputs 1, 2, 3, ... are distinct and positive: a lane left out lowers a total
 * (no values that cancel, as the earlier -6..6 cycle did, whose 13 consecutive values sum to 0),
 * and any reordering of the lanes changes at least one exclusive prefix sum (at the first lane k
 * that holds another lane's value, the prefix of lane k + 1 adds a different number). */
static void exercise_reduction(run *r)
{
	float in[REDUCTION_GROUPS * REDUCTION_THREADS], want[REDUCTION_GROUPS];
	float want_prefix[REDUCTION_GROUPS * REDUCTION_THREADS];
	id pipeline, bufs[3] = {0, 0, 0};
	const float *got;
	lm_size w;
	int i;

	for (i = 0; i < REDUCTION_GROUPS * REDUCTION_THREADS; i++)
		in[i] = (float)(i + 1);
	if ((pipeline = make_pipeline(r, reduction_source, "lm_simd_sum", 0, 0)) == 0)
		return;
	if ((w = simd_width(r, pipeline)) == 0) {
		release(pipeline);
		return;
	}
	for (i = 0; i < REDUCTION_GROUPS; i++) {
		int k;
		want[i] = 0;
		for (k = 0; k < REDUCTION_THREADS; k++) {
			int at = i * REDUCTION_THREADS + k;
			want_prefix[at] = (lm_size)k % w == 0 ? 0.0f : want_prefix[at - 1] + in[at - 1];
			want[i] += in[at];
		}
	}
	if ((bufs[0] = make_buffer(r, in, sizeof(in))) != 0 && (bufs[1] = make_buffer(r, 0, sizeof(want))) != 0 &&
	    (bufs[2] = make_buffer(r, 0, sizeof(want_prefix))) != 0 &&
	    dispatch(r, pipeline, bufs, 3, REDUCTION_GROUPS, REDUCTION_THREADS) == 0 &&
	    (got = contents(r, bufs[1])) != 0 && compare(r, "total", got, want, REDUCTION_GROUPS) == 0 &&
	    (got = contents(r, bufs[2])) != 0 &&
	    compare(r, "prefix of thread", got, want_prefix, REDUCTION_GROUPS * REDUCTION_THREADS) == 0)
		msg_set(r->out, LM_EX_PASS);
	for (i = 0; i < 3; i++)
		release(bufs[i]);
	release(pipeline);
}

/* Catches: A or B loaded transposed, the product taken the other way round (B * A), elements
 * spread over the SIMD group's lanes in another order than the multiply expects. A = 2I + S (S
 * the cyclic shift) is invertible and not symmetric; B holds 64 distinct values (37k mod 64 - 32)
 * and is invertible. A GPU that loads B transposed or reordered multiplies A by some B' != B (its
 * values are distinct, so any rearrangement changes it), and A * B' != A * B because A is
 * invertible; A loaded transposed is A^T != A, and A^T * B != A * B because B is invertible;
 * B * A != A * B because B is not circulant, so it does not commute with S. Every such mistake
 * changes every element here (checked by the fake Metal's wrong kernels, docs/guest.md). */
static void exercise_matrix(run *r)
{
	float a[64], b[64], c[64], want[64];
	id pipeline, bufs[4] = {0, 0, 0, 0};
	const float *got;
	int i, row, col;

	for (row = 0; row < 8; row++)
		for (col = 0; col < 8; col++) {
			i = row * 8 + col;
			a[i] = (float)((row == col ? 2 : 0) + (col == (row + 1) % 8 ? 1 : 0));
			b[i] = (float)((i * 37) % 64 - 32);
			c[i] = (float)(i % 4);
		}
	for (row = 0; row < 8; row++)
		for (col = 0; col < 8; col++) {
			float s = c[row * 8 + col];
			for (i = 0; i < 8; i++)
				s += a[row * 8 + i] * b[i * 8 + col];
			want[row * 8 + col] = s;
		}
	if ((pipeline = make_pipeline(r, matrix_source, "lm_simdgroup_mma", 0, 0)) == 0)
		return;
	if ((bufs[0] = make_buffer(r, a, sizeof(a))) != 0 && (bufs[1] = make_buffer(r, b, sizeof(b))) != 0 &&
	    (bufs[2] = make_buffer(r, c, sizeof(c))) != 0 && (bufs[3] = make_buffer(r, 0, sizeof(want))) != 0 &&
	    dispatch(r, pipeline, bufs, 4, 1, 32) == 0 && (got = contents(r, bufs[3])) != 0 &&
	    compare(r, "element", got, want, 64) == 0)
		msg_set(r->out, LM_EX_PASS);
	for (i = 0; i < 4; i++)
		release(bufs[i]);
	release(pipeline);
}

/* Catches: float computed instead of bfloat, bfloat rounded by truncation instead of to nearest.
 * a = k + 3/4 of a bfloat16 step at k (k = 1..8): bfloat(a) must round up to k + step; truncation
 * gives k, float keeps k + 3/4 step. b is a power of two (+-1, 2, 4), so a * b is exact in bfloat
 * and a fused or a rounded multiply-add agree; c (-1, 0, 1) keeps the sum in the binade where the
 * step survives the final rounding. Every element then differs: by a quarter step * |b| computed
 * in float, by a whole step * |b| truncated. */
static void exercise_bfloat(run *r)
{
	static const float pow2[6] = {1.0f, -2.0f, 4.0f, -1.0f, 2.0f, -4.0f};
	float a[BFLOAT_N], b[BFLOAT_N], c[BFLOAT_N], want[BFLOAT_N];
	id pipeline, bufs[4] = {0, 0, 0, 0};
	const float *got;
	int i;

	for (i = 0; i < BFLOAT_N; i++) {
		int k = i % 8 + 1;
		/* a bfloat16 step at k: 2^(e - 7) for k in [2^e, 2^(e+1)) */
		float step = k >= 8 ? 1.0f / 16.0f : k >= 4 ? 1.0f / 32.0f : k >= 2 ? 1.0f / 64.0f : 1.0f / 128.0f;
		a[i] = (float)k + 0.75f * step;
		b[i] = pow2[i % 6];
		c[i] = (float)(i % 3 - 1);
		want[i] = bf16(bf16(bf16(a[i]) * bf16(b[i])) + bf16(c[i]));
	}
	if ((pipeline = make_pipeline(r, bfloat_source, "lm_bfloat_fma", LM_MTL_LANGUAGE_3_1, 0)) == 0)
		return;
	if ((bufs[0] = make_buffer(r, a, sizeof(a))) != 0 && (bufs[1] = make_buffer(r, b, sizeof(b))) != 0 &&
	    (bufs[2] = make_buffer(r, c, sizeof(c))) != 0 && (bufs[3] = make_buffer(r, 0, sizeof(want))) != 0 &&
	    dispatch(r, pipeline, bufs, 4, 1, BFLOAT_N) == 0 && (got = contents(r, bufs[3])) != 0 &&
	    compare(r, "element", got, want, BFLOAT_N) == 0)
		msg_set(r->out, LM_EX_PASS);
	for (i = 0; i < 4; i++)
		release(bufs[i]);
	release(pipeline);
}

/* ---- the paravirtual device's known defects (reported, not required) ---------------------- */

/* The value the CPU put in word i the first time (before) and the second time (after). */
static float nocopy_word(unsigned i, int after)
{
	return (float)(i + 1u) + (after ? 10000.0f : 0.0f);
}

/* One read of the mapping through buf; `after`: which of the CPU's two writes it must see. */
static int nocopy_read(run *r, id pipeline, id buf, int after)
{
	id bufs[2] = {buf, 0};
	const float *got;
	unsigned i;
	int rc = -1;

	if ((bufs[1] = make_buffer(r, 0, NOCOPY_BYTES)) == 0 ||
	    dispatch(r, pipeline, bufs, 2, NOCOPY_N / NOCOPY_GROUP, NOCOPY_GROUP) < 0 ||
	    (got = contents(r, bufs[1])) == 0) {
		release(bufs[1]);
		return -1;
	}
	for (i = 0; i < NOCOPY_N && got[i] == nocopy_word(i, after) * 2.0f + 1.0f; i++)
		;
	if (i == NOCOPY_N) {
		rc = 0;
	} else {
		msg_set(r->out, LM_EX_FAIL);
		msg_add(r->out, after ? "after the CPU wrote the mapped file's memory again, word " :
		                        "the mapped file's word ");
		msg_add_u64(r->out, i);
		msg_add(r->out, " reached the GPU as ");
		msg_add_float(r->out, (got[i] - 1.0f) / 2.0f);
		msg_add(r->out, ", expected ");
		msg_add_float(r->out, nocopy_word(i, after));
		if (after && got[i] == nocopy_word(i, 0) * 2.0f + 1.0f)
			msg_add(r->out, " (the value before the write: the GPU read a stale copy)");
	}
	release(bufs[1]);
	return rc;
}

/* "$TMPDIR/lume-metal-nocopy.XXXXXX" (TMPDIR when set and short enough, else /tmp). */
static void nocopy_template(char *path, lm_size size)
{
	const char *dir = getenv("TMPDIR"), *s;
	lm_size n = 0, len = 0;

	while (dir != 0 && dir[len] != '\0')
		len++;
	if (dir == 0 || len == 0 || len + 40 > size)
		dir = "/tmp";
	for (s = dir; *s != '\0'; s++)
		path[n++] = *s;
	if (n > 0 && path[n - 1] == '/')
		n--;
	for (s = "/lume-metal-nocopy.XXXXXX"; *s != '\0'; s++)
		path[n++] = *s;
	path[n] = '\0';
}

/* Catches the stale reads reported on macOS 14 guests (llama.cpp over mmap'd weights, docs/guest.md):
 * a buffer made with newBufferWithBytesNoCopy: over a shared mapping of a file, read by the GPU
 * once with the file's contents, then again after the CPU wrote other values into the same
 * memory. Each word is distinct and the two writes differ in every word, so a GPU that reads the
 * mapping's first contents (or anything but what the CPU last wrote) fails, naming the word. */
static void exercise_nocopy(run *r)
{
	static float words[NOCOPY_N];
	char path[256];
	SEL sel;
	IMP imp;
	id pipeline, buf = 0;
	float *mem;
	void *map;
	lm_size done = 0;
	unsigned i;
	int fd;

	nocopy_template(path, sizeof(path));
	if ((fd = mkstemp(path)) < 0) {
		msg_set(r->out, LM_EX_ERROR);
		msg_add(r->out, "cannot create a temporary file like ");
		msg_add(r->out, path);
		msg_add(r->out, " (set TMPDIR to a writable directory)");
		return;
	}
	unlink(path); /* the mapping keeps it; nothing is left behind whatever happens next */
	for (i = 0; i < NOCOPY_N; i++)
		words[i] = nocopy_word(i, 0);
	while (done < NOCOPY_BYTES) {
		long n = write(fd, (const char *)words + done, NOCOPY_BYTES - done);
		if (n <= 0)
			break;
		done += (lm_size)n;
	}
	map = done == NOCOPY_BYTES ? mmap(0, NOCOPY_BYTES, LM_PROT_READ | LM_PROT_WRITE, LM_MAP_SHARED, fd, 0) :
	                             LM_MAP_FAILED;
	close(fd);
	if (map == LM_MAP_FAILED) {
		msg_set(r->out, LM_EX_ERROR);
		msg_add(r->out, "cannot write and map a temporary file in ");
		msg_add(r->out, path);
		return;
	}
	mem = map;
	if ((pipeline = make_pipeline(r, read_source, "lm_read_words", 0, 0)) == 0) {
		munmap(map, NOCOPY_BYTES);
		return;
	}
	if ((imp = need(r, r->device, "newBufferWithBytesNoCopy:length:options:deallocator:", &sel)) != 0) {
		/* No deallocator: the mapping is ours, unmapped after the buffer is released. */
		buf = ((id (*)(id, SEL, void *, lm_size, lm_size, id))imp)(r->device, sel, map, NOCOPY_BYTES,
		    LM_MTL_STORAGE_SHARED, 0);
		if (buf == 0) {
			msg_set(r->out, LM_EX_ERROR);
			msg_add(r->out, "Metal could not make a buffer over the mapped file (newBufferWithBytesNoCopy:)");
		}
	}
	if (buf != 0 && nocopy_read(r, pipeline, buf, 0) == 0) {
		for (i = 0; i < NOCOPY_N; i++)
			mem[i] = nocopy_word(i, 1);
		if (nocopy_read(r, pipeline, buf, 1) == 0)
			msg_set(r->out, LM_EX_PASS);
	}
	release(buf);
	release(pipeline);
	munmap(map, NOCOPY_BYTES);
}

/* Encode one concurrent dispatch of pipeline over in and out into a new indirect command buffer. */
static id icb_encode(run *r, id pipeline, id in, id out)
{
	SEL sel;
	IMP imp;
	id desc, icb = 0, cmd;
	lm_mtl_size g = {ICB_N / 64u, 1, 1}, t = {64, 1, 1};

	if ((desc = make_object(r, "MTLIndirectCommandBufferDescriptor")) == 0)
		return 0;
	if (set_word(r, desc, "setCommandTypes:", LM_MTL_ICB_CONCURRENT_DISPATCH) == 0 &&
	    set_word(r, desc, "setInheritPipelineState:", 0) == 0 && set_word(r, desc, "setInheritBuffers:", 0) == 0 &&
	    set_word(r, desc, "setMaxKernelBufferBindCount:", 2) == 0 &&
	    (imp = need(r, r->device, "newIndirectCommandBufferWithDescriptor:maxCommandCount:options:", &sel)) != 0) {
		icb = ((id (*)(id, SEL, id, lm_size, lm_size))imp)(r->device, sel, desc, 1, LM_MTL_STORAGE_SHARED);
		if (icb == 0) {
			msg_set(r->out, LM_EX_ERROR);
			msg_add(r->out, "Metal could not make an indirect command buffer for compute");
		}
	}
	release(desc);
	if (icb == 0)
		return 0;
	if ((imp = need(r, icb, "indirectComputeCommandAtIndex:", &sel)) == 0 ||
	    (cmd = ((id (*)(id, SEL, lm_size))imp)(icb, sel, 0)) == 0 ||
	    set_word(r, cmd, "setComputePipelineState:", (lm_size)pipeline) < 0 ||
	    (imp = need(r, cmd, "setKernelBuffer:offset:atIndex:", &sel)) == 0) {
		if (r->out->message[0] == '\0')
			fail_with(r, "indirectComputeCommandAtIndex:", 0);
		release(icb);
		return 0;
	}
	((void (*)(id, SEL, id, lm_size, lm_size))imp)(cmd, sel, in, 0, 0);
	((void (*)(id, SEL, id, lm_size, lm_size))imp)(cmd, sel, out, 0, 1);
	if ((imp = need(r, cmd, "concurrentDispatchThreadgroups:threadsPerThreadgroup:", &sel)) == 0) {
		release(icb);
		return 0;
	}
	((void (*)(id, SEL, lm_mtl_size, lm_mtl_size))imp)(cmd, sel, g, t);
	return icb;
}

/* Catches indirect command buffers that do not run, or run wrongly (reported broken on
 * paravirtual Metal by tinygrad, docs/guest.md): one dispatch encoded into an indirect command
 * buffer and executed from a compute encoder. The output starts as -1 everywhere, which the kernel
 * (2x + 1 of positive inputs) never writes, so a dispatch that did not run fails as such. */
static void exercise_icb(run *r)
{
	float in[ICB_N], want[ICB_N], initial[ICB_N];
	typedef struct {
		lm_size location, length;
	} lm_range; /* NSRange */
	lm_range range = {0, 1};
	SEL sel;
	IMP imp;
	id pipeline, icb = 0, in_buf = 0, out_buf = 0, queue, cmd, enc;
	const float *got;
	unsigned i;

	for (i = 0; i < ICB_N; i++) {
		in[i] = (float)(i + 1u);
		want[i] = in[i] * 2.0f + 1.0f;
		initial[i] = -1.0f;
	}
	if ((pipeline = make_pipeline(r, read_source, "lm_read_words", 0, 1)) == 0)
		return;
	if ((in_buf = make_buffer(r, in, sizeof(in))) == 0 || (out_buf = make_buffer(r, initial, sizeof(initial))) == 0 ||
	    (icb = icb_encode(r, pipeline, in_buf, out_buf)) == 0 || encoder_begin(r, &queue, &cmd, &enc) < 0)
		goto out;
	/* Resources an indirect command uses must be made resident by the encoder that runs it. */
	if ((imp = need(r, enc, "useResource:usage:", &sel)) == 0)
		goto out;
	((void (*)(id, SEL, id, lm_size))imp)(enc, sel, in_buf, LM_MTL_USAGE_READ);
	((void (*)(id, SEL, id, lm_size))imp)(enc, sel, out_buf, LM_MTL_USAGE_WRITE);
	if ((imp = need(r, enc, "executeCommandsInBuffer:withRange:", &sel)) == 0)
		goto out;
	((void (*)(id, SEL, id, lm_range))imp)(enc, sel, icb, range);
	if (commit_wait(r, queue, cmd, enc) < 0 || (got = contents(r, out_buf)) == 0)
		goto out;
	if (got[0] == -1.0f && got[ICB_N - 1] == -1.0f) {
		msg_set(r->out, LM_EX_FAIL);
		msg_add(r->out, "the dispatch in the indirect command buffer did not run (its output is untouched)");
	} else if (compare(r, "element", got, want, (int)ICB_N) == 0) {
		msg_set(r->out, LM_EX_PASS);
	}
out:
	release(icb);
	release(in_buf);
	release(out_buf);
	release(pipeline);
}

static int str_eq(const char *a, const char *b)
{
	while (*a != '\0' && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

void lm_exercise_run(id device, const char *name, unsigned timeout_ms, lm_ex_outcome *out)
{
	run r = {device, timeout_ms, out};

	msg_set(out, LM_EX_ERROR);
	if (str_eq(name, "simdgroup_reduction"))
		exercise_reduction(&r);
	else if (str_eq(name, "simdgroup_matrix"))
		exercise_matrix(&r);
	else if (str_eq(name, "bfloat16"))
		exercise_bfloat(&r);
	else if (str_eq(name, "nocopy_buffer"))
		exercise_nocopy(&r);
	else if (str_eq(name, "indirect_command_buffer"))
		exercise_icb(&r);
	else
		msg_add(out, "no such exercise");
}

/* Catches: less threadgroup memory than asked for (addresses that wrap onto a smaller allocation,
 * or words shared between threads): every word gets a distinct value and every thread reads words
 * others wrote, so two words that land in one place change what some thread reads back. */
void lm_exercise_threadgroup(id device, unsigned bytes, unsigned timeout_ms, lm_ex_outcome *out)
{
	static char source[sizeof(threadgroup_source_tail) + 64];
	static unsigned want[TG_THREADS];
	const unsigned words = bytes / 4;
	unsigned lid, i;
	run r = {device, timeout_ms, out};
	id pipeline, buf = 0;
	const unsigned *got;
	char digits[12];
	int nd = 0;
	lm_size n = 0;
	const char *s;

	msg_set(out, LM_EX_ERROR);
	/* "#define LM_TG_BYTES <bytes>\n" and the kernel. */
	for (s = "#define LM_TG_BYTES "; *s != '\0'; s++)
		source[n++] = *s;
	do {
		digits[nd++] = (char)('0' + bytes % 10);
		bytes /= 10;
	} while (bytes != 0 && nd < (int)sizeof(digits));
	while (nd > 0)
		source[n++] = digits[--nd];
	source[n++] = '\n';
	for (s = threadgroup_source_tail; *s != '\0'; s++)
		source[n++] = *s;
	source[n] = '\0';
	for (lid = 0; lid < TG_THREADS; lid++) {
		unsigned acc = 0;
		for (i = lid; i < words; i += TG_THREADS)
			acc ^= (words - 1 - i) * 2654435761u + i;
		want[lid] = acc;
	}
	if ((pipeline = make_pipeline(&r, source, "lm_threadgroup_memory", 0, 0)) == 0)
		return;
	if ((buf = make_buffer(&r, 0, sizeof(want))) != 0 && dispatch(&r, pipeline, &buf, 1, 1, TG_THREADS) == 0 &&
	    (got = contents(&r, buf)) != 0) {
		msg_set(out, LM_EX_PASS);
		for (lid = 0; lid < TG_THREADS; lid++)
			if (got[lid] != want[lid]) {
				msg_set(out, LM_EX_FAIL);
				msg_add(out, "thread ");
				msg_add_u64(out, lid);
				msg_add(out, " read back ");
				msg_add_u64(out, got[lid]);
				msg_add(out, ", expected ");
				msg_add_u64(out, want[lid]);
				break;
			}
	}
	release(buf);
	release(pipeline);
}
