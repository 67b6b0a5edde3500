/* lume-metal shim: the exec and spawn calls, interposed: the children rule (children.c) applied
 * at each, and each call recorded (records.c).
 *
 * macOS: __DATA,__interpose tuples (in shim.c, with Metal's), which dyld honours with chained fixups
 * and old-style binds alike (reference metal.md, 2026-11). Every other image's calls reach these;
 * the calls made here reach libSystem's own. execv, execvp and the execl family are libsystem_c's
 * and end in execve; posix_spawnp is libsystem_kernel's and calls posix_spawn within that image,
 * so both spawn calls are interposed (xnu libsyscall/wrappers/spawn/posix_spawn.c); popen() and
 * system() call posix_spawn (apple-oss-distributions/Libc gen/FreeBSD/popen.c,
 * stdlib/FreeBSD/system.c). Linux (the tests): preloaded definitions of every exec and spawn call a
 * program makes through the dynamic linker (glibc's own execv, execvp, execl* and posix_spawnp end
 * in internal calls that preloading cannot reach, so each is its own entry point; its system()
 * and popen() spawn /bin/sh internally and are not reached). glibc has no POSIX_SPAWN_SETEXEC:
 * an exec in place is an execve there.
 */
#include "shim_internal.h"

enum { CALL_EXECVE = 0, CALL_SPAWN = 1, CALL_SPAWNP = 2, CALL_SETEXEC = 3 };

struct spawn_state {
	struct env_out env;
	struct target t;
	int slot;           /* this process's record's entry; -1 none */
	int forked;         /* a forked child's own record: own */
	struct spawn own;
};

static void spawn_fill(struct spawn *sp, const struct spawn_state *st, int call, const char *file, int shim,
    const char *why)
{
	sp->call = (unsigned char)call;
	sp->protected = (unsigned char)st->t.protected;
	sp->shim = (unsigned char)shim;
	sp->why = why;
	sp->has_path = file[0] != '\0';
	sp->cut = (unsigned char)(lm_shim_copy_cut(sp->path, sizeof(sp->path), file) |
	    lm_shim_copy_cut(sp->resolved, sizeof(sp->resolved), st->t.path) |
	    lm_shim_copy_cut(sp->interp, sizeof(sp->interp), st->t.interp));
	sp->pid = sp->error = 0;
}

/* Written before the call: an exec that succeeds never returns. A forked (or vforked) child, whose
 * pid is not the record's, writes a record of its own and leaves the parent's memory alone. */
static void spawn_record(struct spawn_state *st, int call, const char *file, int shim, const char *why)
{
	struct spawn *sp;
	unsigned i;

	st->slot = -1;
	st->forked = 0;
	if (!lm_shim_rec.on)
		return;
	if (getpid() != lm_shim_rec.pid) {
		spawn_fill(&st->own, st, call, file, shim, why);
		st->own.ready = 1;
		st->forked = 1;
		lm_shim_record_forked(&st->own, 1);
		return;
	}
	i = __atomic_fetch_add(&lm_shim_rec.s_count, 1, __ATOMIC_ACQ_REL);
	if (i >= LM_SPAWNS) {
		lm_shim_record_incomplete();
		return;
	}
	sp = &lm_shim_rec.spawns[i];
	spawn_fill(sp, st, call, file, shim, why);
	if (sp->cut)
		__atomic_store_n(&lm_shim_rec.incomplete, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&sp->ready, 1, __ATOMIC_RELEASE);
	st->slot = (int)i;
	lm_shim_record_update(WRITTEN_UPDATE);
}

/* The environment the call passes on, decided and recorded before it is made. Never fails: what
 * cannot be done leaves the caller's environment as it was, and the record says so. */
static char *const *spawn_begin(struct spawn_state *st, int call, const char *file, int search, char *const envp[])
{
	const char *why = "the environment given has no injection variable naming the shim";
	int shim = SHIM_ABSENT, saved = LM_ERRNO;
	int names = envp != 0 && lm_shim_kids.self != 0 && lm_shim_env_names_self(envp);

	st->env.envp = 0;
	st->env.map = 0;
	st->slot = -1;
	st->forked = 0;
	if (file == 0 || (!names && !lm_shim_rec.on))
		return envp; /* nothing to decide, nothing to record */
	lm_shim_target_read(&st->t, file, search);
	if (envp != 0 && lm_shim_kids.self == 0) {
		for (lm_size i = 0; envp[i] != 0; i++) {
			if (lm_shim_is_injection(envp[i])) {
				shim = SHIM_KEPT;
				why = "the shim could not find its own path: the environment is passed on as given";
			}
		}
	} else if (names) {
		shim = lm_shim_spawn_rule(&st->t, &why);
		/* Passed on as given rather than the call refused: a refusal fails every such spawn,
		 * while the original environment is exactly what the program would pass without this
		 * rule (docs/guest.md, "Children"). */
		if (shim == SHIM_REMOVED && lm_shim_env_without_self(envp, &st->env) < 0) {
			shim = SHIM_KEPT;
			why = "no memory for an environment without the shim: passed on as given";
		}
	}
	spawn_record(st, call, file, shim, why);
	LM_ERRNO = saved;
	return st->env.envp != 0 ? st->env.envp : envp;
}

/* After a call that returned: error (0 none) and the child's pid (0 none) for the record. */
static void spawn_end(struct spawn_state *st, int error, int pid)
{
	int saved = LM_ERRNO;

	lm_shim_env_release(&st->env);
	if (st->forked && (error != 0 || pid > 0)) {
		st->own.error = error;
		st->own.pid = pid;
		lm_shim_record_forked(&st->own, 2);
	} else if (st->slot >= 0 && (error != 0 || pid > 0)) {
		__atomic_store_n(&lm_shim_rec.spawns[st->slot].error, error, __ATOMIC_RELEASE);
		__atomic_store_n(&lm_shim_rec.spawns[st->slot].pid, pid, __ATOMIC_RELEASE);
		lm_shim_record_update(WRITTEN_UPDATE);
	}
	LM_ERRNO = saved;
}

static int spawn_call(int call, int search, int *pid, const char *file, const void *fa, const void *attr,
    char *const argv[], char *const envp[]);

#if defined(__APPLE__)
int posix_spawnattr_getflags(const void *attr, short *flags);
#define LM_POSIX_SPAWN_SETEXEC 0x0040

int lm_shim_execve_hook(const char *path, char *const argv[], char *const envp[])
{
	struct spawn_state st;
	char *const *env = spawn_begin(&st, CALL_EXECVE, path, 0, envp);
	int rc = execve(path, argv, env);

	spawn_end(&st, LM_ERRNO, 0);
	return rc;
}

static int spawn_real(int search, int *pid, const char *file, const void *fa, const void *attr, char *const argv[],
    char *const envp[])
{
	return search ? posix_spawnp(pid, file, fa, attr, argv, envp) : posix_spawn(pid, file, fa, attr, argv, envp);
}

/* posix_spawn with POSIX_SPAWN_SETEXEC is an exec in place: what CPython's framework stub does
 * (Mac/Tools/pythonw.c; reference metal.md, 2026-12-02). */
static int spawn_kind(const void *attr, int call)
{
	short flags = 0;

	if (attr != 0 && posix_spawnattr_getflags(attr, &flags) == 0 && (flags & LM_POSIX_SPAWN_SETEXEC) != 0)
		return CALL_SETEXEC;
	return call;
}

int lm_shim_posix_spawn_hook(int *pid, const char *path, const void *fa, const void *attr, char *const argv[],
    char *const envp[])
{
	return spawn_call(spawn_kind(attr, CALL_SPAWN), 0, pid, path, fa, attr, argv, envp);
}

int lm_shim_posix_spawnp_hook(int *pid, const char *file, const void *fa, const void *attr, char *const argv[],
    char *const envp[])
{
	return spawn_call(spawn_kind(attr, CALL_SPAWNP), 1, pid, file, fa, attr, argv, envp);
}
#else
extern char **environ;
int execv(const char *path, char *const argv[]);
int execvp(const char *file, char *const argv[]);
int execvpe(const char *file, char *const argv[], char *const envp[]);
int execl(const char *path, const char *arg, ...);
int execlp(const char *file, const char *arg, ...);
int execle(const char *path, const char *arg, ...);
#define LM_ENOSYS 38

/* Preloaded, these definitions come first in the global scope; the next object's are the real
 * ones (Metal's, libc's). */
void *lm_shim_next_symbol(void **cache, const char *name)
{
	void *fn = __atomic_load_n(cache, __ATOMIC_ACQUIRE);

	if (fn == 0) {
		fn = dlsym(LM_RTLD_NEXT, name);
		__atomic_store_n(cache, fn, __ATOMIC_RELEASE);
	}
	return fn;
}

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*spawn_fn)(int *, const char *, const void *, const void *, char *const[], char *const[]);

/* libc's, found at load (dlsym in a forked child could wait for a lock another thread held). */
static void *next_execve, *next_execvpe, *next_spawn, *next_spawnp;

void lm_shim_spawn_init(void)
{
	(void)lm_shim_next_symbol(&next_execve, "execve");
	(void)lm_shim_next_symbol(&next_execvpe, "execvpe");
	(void)lm_shim_next_symbol(&next_spawn, "posix_spawn");
	(void)lm_shim_next_symbol(&next_spawnp, "posix_spawnp");
}

/* search: execvpe (PATH searched as glibc does it), else execve. */
static int exec_call(const char *file, int search, char *const argv[], char *const envp[])
{
	struct spawn_state st;
	execve_fn fn = (execve_fn)lm_shim_next_symbol(search ? &next_execvpe : &next_execve,
	    search ? "execvpe" : "execve");
	char *const *env;
	int rc;

	if (fn == 0) {
		LM_ERRNO = LM_ENOSYS;
		return -1;
	}
	env = spawn_begin(&st, CALL_EXECVE, file, search, envp);
	rc = fn(file, argv, env);
	spawn_end(&st, LM_ERRNO, 0);
	return rc;
}

/* The execl family: the list as an array (on the stack, as glibc's own execl builds it). */
static int exec_list(const char *file, int search, int with_env, const char *arg, __builtin_va_list ap)
{
	__builtin_va_list count;
	lm_size n = 1;

	__builtin_va_copy(count, ap);
	while (__builtin_va_arg(count, const char *) != 0)
		n++;
	__builtin_va_end(count);
	{
		char *argv[n + 1];
		char *const *envp;

		argv[0] = (char *)arg;
		for (lm_size i = 1; i <= n; i++)
			argv[i] = __builtin_va_arg(ap, char *);
		envp = with_env ? __builtin_va_arg(ap, char *const *) : environ;
		return exec_call(file, search, argv, envp);
	}
}

LM_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	return exec_call(path, 0, argv, envp);
}

LM_EXPORT int execv(const char *path, char *const argv[])
{
	return exec_call(path, 0, argv, environ);
}

LM_EXPORT int execvp(const char *file, char *const argv[])
{
	return exec_call(file, 1, argv, environ);
}

LM_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	return exec_call(file, 1, argv, envp);
}

LM_EXPORT int execl(const char *path, const char *arg, ...)
{
	__builtin_va_list ap;
	int rc;

	__builtin_va_start(ap, arg);
	rc = arg == 0 ? exec_call(path, 0, (char *[]){ 0 }, environ) : exec_list(path, 0, 0, arg, ap);
	__builtin_va_end(ap);
	return rc;
}

LM_EXPORT int execlp(const char *file, const char *arg, ...)
{
	__builtin_va_list ap;
	int rc;

	__builtin_va_start(ap, arg);
	rc = arg == 0 ? exec_call(file, 1, (char *[]){ 0 }, environ) : exec_list(file, 1, 0, arg, ap);
	__builtin_va_end(ap);
	return rc;
}

LM_EXPORT int execle(const char *path, const char *arg, ...)
{
	__builtin_va_list ap;
	int rc;

	__builtin_va_start(ap, arg);
	rc = arg == 0 ? exec_call(path, 0, (char *[]){ 0 }, __builtin_va_arg(ap, char *const *)) :
	    exec_list(path, 0, 1, arg, ap);
	__builtin_va_end(ap);
	return rc;
}

static int spawn_real(int search, int *pid, const char *file, const void *fa, const void *attr, char *const argv[],
    char *const envp[])
{
	spawn_fn fn = (spawn_fn)lm_shim_next_symbol(search ? &next_spawnp : &next_spawn,
	    search ? "posix_spawnp" : "posix_spawn");

	return fn != 0 ? fn(pid, file, fa, attr, argv, envp) : LM_ENOSYS;
}

LM_EXPORT int posix_spawn(int *pid, const char *path, const void *fa, const void *attr, char *const argv[],
    char *const envp[])
{
	return spawn_call(CALL_SPAWN, 0, pid, path, fa, attr, argv, envp);
}

LM_EXPORT int posix_spawnp(int *pid, const char *file, const void *fa, const void *attr, char *const argv[],
    char *const envp[])
{
	return spawn_call(CALL_SPAWNP, 1, pid, file, fa, attr, argv, envp);
}
#endif

/* posix_spawn (search 0) and posix_spawnp (1), recorded as call. They return an error number and
 * leave errno alone. */
static int spawn_call(int call, int search, int *pid, const char *file, const void *fa, const void *attr,
    char *const argv[], char *const envp[])
{
	struct spawn_state st;
	int child = 0, rc;
	char *const *env = spawn_begin(&st, call, file, search, envp);

	rc = spawn_real(search, pid != 0 ? pid : &child, file, fa, attr, argv, env);
	spawn_end(&st, rc, rc == 0 ? (pid != 0 ? *pid : child) : 0);
	return rc;
}
