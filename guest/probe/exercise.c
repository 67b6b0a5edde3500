/* metal-capabilities --exercise: does the device run what it claims?
 *
 * For each feature the unlock is for (SIMD-group reduction, SIMD-group matrix multiply, bfloat16,
 * threadgroup memory) a tiny compute kernel is compiled from source at run time, dispatched on a
 * small input and its output compared with the same computation done here on the CPU. Inputs are
 * small integers (and, for bfloat16, values bfloat16 must round), so every correct GPU gives
 * exactly the reference: any difference is a wrong result, not a rounding question.
 *
 * Only the Objective-C runtime's C API, Metal's classes reached through it, and CoreFoundation's
 * CFString (an NSString) for the sources and names: no SDK header, no Foundation, no blocks.
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

/* Source -> library -> function -> pipeline; 0 with the error recorded. */
static id make_pipeline(run *r, const char *source, const char *function, unsigned language)
{
	SEL sel;
	IMP imp;
	id options = 0, library, fn, pipeline, error = 0;
	CFStringRef src, name;

	if (need(r, r->device, "newLibraryWithSource:options:error:", &sel) == 0 ||
	    need(r, r->device, "newComputePipelineStateWithFunction:error:", &sel) == 0)
		return 0;
	if (language != 0) {
		Class cls = objc_lookUpClass("MTLCompileOptions");
		if (cls == 0) {
			msg_set(r->out, LM_EX_ERROR);
			msg_add(r->out, "Metal has no MTLCompileOptions class");
			return 0;
		}
		if ((options = send0(r, (id)(void *)cls, "alloc")) == 0 || (options = send0(r, options, "init")) == 0)
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
	imp = need(r, r->device, "newComputePipelineStateWithFunction:error:", &sel);
	pipeline = ((id (*)(id, SEL, id, id *))imp)(r->device, sel, fn, &error);
	release(fn);
	release(library);
	if (pipeline == 0)
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

/* Encode one dispatch, commit, and wait for it at most timeout_ms. 0 when it completed; -1 with
 * the error recorded (and the command buffer abandoned, not released, when it did not finish). */
static int dispatch(run *r, id pipeline, id *buffers, int nbuffers, lm_size groups, lm_size threads)
{
	SEL sel;
	IMP imp;
	id queue, cmd, enc;
	lm_mtl_size g = {groups, 1, 1}, t = {threads, 1, 1};
	lm_u64 waited_us = 0, limit_us = (lm_u64)r->timeout_ms * 1000;
	lm_size status;
	int i, spins = 0;

	if ((queue = send0(r, r->device, "newCommandQueue")) == 0) {
		if (r->out->message[0] == '\0')
			fail_with(r, "newCommandQueue", 0);
		return -1;
	}
	if ((cmd = send0(r, queue, "commandBuffer")) == 0 || (enc = send0(r, cmd, "computeCommandEncoder")) == 0) {
		if (r->out->message[0] == '\0')
			fail_with(r, "commandBuffer/computeCommandEncoder", 0);
		release(queue);
		return -1;
	}
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

/* ---- the kernels ------------------------------------------------------------------------ */

/* simd_sum within each SIMD group, then the groups' partial sums through threadgroup memory: one
 * total per threadgroup, whatever the SIMD width (up to 64 lanes per group). */
static const char reduction_source[] =
    "#include <metal_stdlib>\n"
    "using namespace metal;\n"
    "kernel void lm_simd_sum(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],\n"
    "    uint gid [[thread_position_in_grid]], uint lid [[thread_position_in_threadgroup]],\n"
    "    uint group [[threadgroup_position_in_grid]], uint lane [[thread_index_in_simdgroup]],\n"
    "    uint sg [[simdgroup_index_in_threadgroup]], uint nsg [[simdgroups_per_threadgroup]])\n"
    "{\n"
    "    threadgroup float partial[64];\n"
    "    float s = simd_sum(in[gid]);\n"
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

static int compare(run *r, const float *got, const float *want, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (got[i] != want[i]) {
			msg_set(r->out, LM_EX_FAIL);
			msg_add(r->out, "element ");
			msg_add_u64(r->out, (lm_u64)i);
			msg_add(r->out, " is ");
			msg_add_float(r->out, got[i]);
			msg_add(r->out, ", expected ");
			msg_add_float(r->out, want[i]);
			return -1;
		}
	return 0;
}

static void exercise_reduction(run *r)
{
	float in[REDUCTION_GROUPS * REDUCTION_THREADS], want[REDUCTION_GROUPS];
	id pipeline, bufs[2] = {0, 0};
	const float *got;
	int i;

	for (i = 0; i < REDUCTION_GROUPS * REDUCTION_THREADS; i++)
		in[i] = (float)((i * 7) % 13 - 6);
	for (i = 0; i < REDUCTION_GROUPS; i++) {
		int k;
		want[i] = 0;
		for (k = 0; k < REDUCTION_THREADS; k++)
			want[i] += in[i * REDUCTION_THREADS + k];
	}
	if ((pipeline = make_pipeline(r, reduction_source, "lm_simd_sum", 0)) == 0)
		return;
	if ((bufs[0] = make_buffer(r, in, sizeof(in))) != 0 && (bufs[1] = make_buffer(r, 0, sizeof(want))) != 0 &&
	    dispatch(r, pipeline, bufs, 2, REDUCTION_GROUPS, REDUCTION_THREADS) == 0 &&
	    (got = contents(r, bufs[1])) != 0 && compare(r, got, want, REDUCTION_GROUPS) == 0)
		msg_set(r->out, LM_EX_PASS);
	release(bufs[0]);
	release(bufs[1]);
	release(pipeline);
}

static void exercise_matrix(run *r)
{
	float a[64], b[64], c[64], want[64];
	id pipeline, bufs[4] = {0, 0, 0, 0};
	const float *got;
	int i, row, col;

	for (i = 0; i < 64; i++) {
		a[i] = (float)(i % 5 - 2);
		b[i] = (float)((i * 3) % 7 - 3);
		c[i] = (float)(i % 4);
	}
	for (row = 0; row < 8; row++)
		for (col = 0; col < 8; col++) {
			float s = c[row * 8 + col];
			for (i = 0; i < 8; i++)
				s += a[row * 8 + i] * b[i * 8 + col];
			want[row * 8 + col] = s;
		}
	if ((pipeline = make_pipeline(r, matrix_source, "lm_simdgroup_mma", 0)) == 0)
		return;
	if ((bufs[0] = make_buffer(r, a, sizeof(a))) != 0 && (bufs[1] = make_buffer(r, b, sizeof(b))) != 0 &&
	    (bufs[2] = make_buffer(r, c, sizeof(c))) != 0 && (bufs[3] = make_buffer(r, 0, sizeof(want))) != 0 &&
	    dispatch(r, pipeline, bufs, 4, 1, 32) == 0 && (got = contents(r, bufs[3])) != 0 &&
	    compare(r, got, want, 64) == 0)
		msg_set(r->out, LM_EX_PASS);
	for (i = 0; i < 4; i++)
		release(bufs[i]);
	release(pipeline);
}

static void exercise_bfloat(run *r)
{
	float a[BFLOAT_N], b[BFLOAT_N], c[BFLOAT_N], want[BFLOAT_N];
	id pipeline, bufs[4] = {0, 0, 0, 0};
	const float *got;
	int i;

	/* a is k + 2^-10: below half a bfloat16 step from k (1..8), so bfloat(a) must be k exactly;
	 * a GPU computing in float instead gives a result off by b * 2^-10. */
	for (i = 0; i < BFLOAT_N; i++) {
		a[i] = (float)(i % 8 + 1) + 1.0f / 1024.0f;
		b[i] = (float)(i % 7 - 3);
		c[i] = (float)(i % 5);
		want[i] = bf16(bf16(bf16(a[i]) * bf16(b[i])) + bf16(c[i]));
	}
	if ((pipeline = make_pipeline(r, bfloat_source, "lm_bfloat_fma", LM_MTL_LANGUAGE_3_1)) == 0)
		return;
	if ((bufs[0] = make_buffer(r, a, sizeof(a))) != 0 && (bufs[1] = make_buffer(r, b, sizeof(b))) != 0 &&
	    (bufs[2] = make_buffer(r, c, sizeof(c))) != 0 && (bufs[3] = make_buffer(r, 0, sizeof(want))) != 0 &&
	    dispatch(r, pipeline, bufs, 4, 1, BFLOAT_N) == 0 && (got = contents(r, bufs[3])) != 0 &&
	    compare(r, got, want, BFLOAT_N) == 0)
		msg_set(r->out, LM_EX_PASS);
	for (i = 0; i < 4; i++)
		release(bufs[i]);
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
	else
		msg_add(out, "no such exercise");
}

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
	if ((pipeline = make_pipeline(&r, source, "lm_threadgroup_memory", 0)) == 0)
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
