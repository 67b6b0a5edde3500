/* The fault-injecting allocator of test builds (test_hooks.h): compiled into the hooks variant of
 * core only, and reached only by programs linked with the linker's --wrap of the allocation
 * functions (LM_FAULT_ALLOC_LINK_OPTIONS), which turns each call to malloc in their own objects
 * into a call to __wrap_malloc here, and the real one into __real_malloc. */
#include "test_hooks.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

/* Set before main from the environment, or armed by a unit test between its calls
 * (lm_test_alloc_fail_next); the counters change from any thread (a fleet's workers allocate at
 * once). */
static atomic_size_t fail_at;     /* 0: nothing fails */
static atomic_size_t fail_repeat; /* 0: every allocation from fail_at on */
static const char *fail_log;
static const char *fail_trace; /* LUME_METAL_TEST_FAIL_ALLOC_TRACE, or NULL */
static atomic_size_t counted;
static atomic_size_t failed;

size_t lm_test_alloc_count(void)
{
	return atomic_load(&counted);
}

size_t lm_test_alloc_failures(void)
{
	return atomic_load(&failed);
}

/* Append the ordinal to the log without allocating (this is the allocator). */
static void note_failure(size_t n)
{
	char line[32];
	int len, fd, saved = errno;

	if (fail_log == NULL)
		return;
	len = snprintf(line, sizeof(line), "%zu\n", n);
	fd = open(fail_log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0) {
		if (write(fd, line, (size_t)len) != len) {
			/* A test that cannot read the log fails on its own; nothing to add here. */
		}
		close(fd);
	}
	errno = saved;
}

/* Append the call stack of an injected failure to the trace file (alloc_failures.sh resolves its
 * "binary(+0xOFFSET)" lines with addr2line): backtrace_symbols_fd writes without allocating. */
static void trace_failure(void)
{
	void *frames[48];
	int n, fd, saved = errno;

	if (fail_trace == NULL)
		return;
	n = backtrace(frames, (int)(sizeof(frames) / sizeof(frames[0])));
	fd = open(fail_trace, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0) {
		backtrace_symbols_fd(frames, n, fd);
		close(fd);
	}
	errno = saved;
}

/* Count one allocation; 1 when it is to fail. */
static int fail_now(void)
{
	size_t n = atomic_fetch_add(&counted, 1) + 1, at = atomic_load(&fail_at), repeat = atomic_load(&fail_repeat);

	if (at == 0 || n < at || (repeat != 0 && n - at >= repeat))
		return 0;
	atomic_fetch_add(&failed, 1);
	note_failure(n);
	trace_failure();
	errno = ENOMEM;
	return 1;
}

void *__wrap_malloc(size_t size)
{
	return fail_now() ? NULL : __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size)
{
	return fail_now() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size)
{
	return fail_now() ? NULL : __real_realloc(p, size);
}

char *__wrap_strdup(const char *s)
{
	return fail_now() ? NULL : __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
	return fail_now() ? NULL : __real_strndup(s, n);
}

void lm_test_alloc_fail_next(size_t repeat)
{
	atomic_store(&fail_repeat, repeat);
	atomic_store(&fail_at, atomic_load(&counted) + 1);
}

/* A whole decimal number >= 1 at s (*end: the character after it); 0 when there is none. */
static size_t parse_count(const char *s, char **end)
{
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return 0;
	errno = 0;
	v = strtoull(s, end, 10);
	if (errno != 0 || v == 0 || v > (size_t)-1)
		return 0;
	return (size_t)v;
}

__attribute__((constructor)) static void fault_alloc_init(void)
{
	static cJSON_Hooks hooks = {__wrap_malloc, free};
	const char *s = getenv("LUME_METAL_TEST_FAIL_ALLOC");
	char *end = NULL;
	size_t at, repeat = 0;

	/* cJSON is a shared library, not wrapped by the linker: its allocations are ours all the
	 * same (every parse and every document built). */
	cJSON_InitHooks(&hooks);
	fail_log = getenv("LUME_METAL_TEST_FAIL_ALLOC_LOG");
	if (fail_log != NULL && fail_log[0] == '\0')
		fail_log = NULL;
	fail_trace = getenv("LUME_METAL_TEST_FAIL_ALLOC_TRACE");
	if (fail_trace != NULL && fail_trace[0] == '\0')
		fail_trace = NULL;
	else if (fail_trace != NULL) {
		/* backtrace loads its unwinder on first use, which allocates: before any failure. */
		void *warm[1];
		(void)backtrace(warm, 1);
	}
	if (s == NULL || s[0] == '\0')
		return;
	at = parse_count(s, &end);
	if (at != 0 && *end == ',' && (repeat = parse_count(end + 1, &end)) == 0)
		at = 0;
	atomic_store(&fail_at, at);
	atomic_store(&fail_repeat, repeat);
	if (at == 0 || *end != '\0') {
		fprintf(stderr, "LUME_METAL_TEST_FAIL_ALLOC=%s: expected N or N,R (whole numbers from 1)\n", s);
		_exit(125);
	}
}
