/* lume-metal shim: what its files share. One library, one file per concept, each calling only the
 * files before it here or reading their data (no circle among the files, checked by
 * tests/hygiene/architecture.sh): state.c (the shared tables, the diagnostics), children.c (the
 * children rule), records.c (activation records), hooks.c (the device classes' methods),
 * interpose.c (the exec and spawn calls), shim.c (configuration, the Metal entry points, load and
 * exit). Every name shared between files starts with lm_shim_ and is hidden: the library exports
 * only lume_metal_shim_active (and, on Linux, the interposed calls). */
#ifndef LUME_METAL_SHIM_INTERNAL_H
#define LUME_METAL_SHIM_INTERNAL_H

#include "../guest_runtime.h"

#define LM_EXPORT __attribute__((visibility("default")))
#define LM_SLOTS 8
#define LM_WHY 201          /* a reason, NUL included (docs/activation-format.md: 200 bytes) */
#define LM_NAME 128         /* a class or device name */
#define LM_QUESTIONS 64
#define LM_TG_READS 4       /* distinct maxThreadgroupMemoryLength stock values per class */
#define LM_SPAWNS 32        /* exec and spawn calls kept in the record; more are counted */
#define LM_SEEN_EMPTY(index) ((index) + 2) /* the key of family index + 1, whose entry is index + 1 */

#if !defined(LM_SHIM_VERSION)
#error "LM_SHIM_VERSION: the project version the shim is built from (guest/CMakeLists.txt)"
#endif

/* dyld splits DYLD_INSERT_LIBRARIES at ':'; ld.so splits LD_PRELOAD at ':' and ' '. The default
 * search path is what each libc's exec*p and posix_spawnp use when PATH is unset (_PATH_DEFPATH
 * on macOS; glibc's own). */
#if defined(__APPLE__)
#define LM_INJECTION_VARIABLE "DYLD_INSERT_LIBRARIES"
#define LM_INJECTION_SPACE_SEPARATES 0
#define LM_DEFAULT_PATH "/usr/bin:/bin"
#else
#define LM_INJECTION_VARIABLE "LD_PRELOAD"
#define LM_INJECTION_SPACE_SEPARATES 1
#define LM_DEFAULT_PATH "/bin:/usr/bin"
#endif
#define LM_PATH 1024        /* a path the spawn rule reads (macOS's PATH_MAX); longer: as given */
#define LM_ENV_STACK 128    /* environment entries rebuilt on the stack; more: in a mapping */
#define LM_ENV_TEXT 2048    /* bytes of rewritten injection variable on the stack; more: mapped */

enum { SLOT_CLAIMED = 0, SLOT_HOOKED = 1, SLOT_REJECTED = 2 };
enum { SHIM_ABSENT = 0, SHIM_KEPT = 1, SHIM_REMOVED = 2 };
enum { WRITTEN_LOAD = 0, WRITTEN_UPDATE = 1, WRITTEN_EXIT = 2 };

typedef unsigned char (*family_fn)(id, SEL, long);
typedef unsigned long (*length_fn)(id, SEL);
typedef lm_u64 (*size_fn)(id, SEL);

/* The calls interposed (interpose.c; on macOS named in shim.c's __DATA,__interpose table). Opaque
 * here: a pointer on both systems (posix_spawnattr_t, posix_spawn_file_actions_t). */
int execve(const char *path, char *const argv[], char *const envp[]);
int posix_spawn(int *pid, const char *path, const void *file_actions, const void *attr, char *const argv[],
    char *const envp[]);
int posix_spawnp(int *pid, const char *file, const void *file_actions, const void *attr, char *const argv[],
    char *const envp[]);

/* Hidden, declarations as well as definitions: calls and reads between the files stay direct,
 * and none of these names is exported from the library. */
#pragma GCC visibility push(hidden)

/* Written once by the constructor, before any hook is installed; read-only afterwards (state.c). */
extern struct lm_shim_config {
	int valid;
	int log;
	long family_max;
	unsigned long threadgroup_floor;
	int has_working_set;
	lm_u64 working_set_floor;
	char why[LM_WHY]; /* when not valid: what LUME_METAL_LOG=1 says after "stock: " */
} lm_shim_cfg;

/* One hooked (or refused) class per slot (state.c). cls is claimed with a CAS; the originals are
 * stored before the hooks are installed; state is published last. */
extern struct slot {
	Class cls;
	int state;
	family_fn supports_family;
	length_fn max_threadgroup_memory;
	size_fn working_set;
	/* For the record only. why: written before state is published. seen[family & 255] holds
	 * family + 1 (as unsigned) once that family was asked: one load and one compare tell a
	 * question already recorded. The families of the table never share an entry; others that do
	 * are recorded under collide_busy. An empty entry holds LM_SEEN_EMPTY(index), the key of a
	 * family that belongs to another entry, so that no family ever matches an empty one. */
	char why[LM_WHY];
	unsigned long seen[256];
	int collide_busy;
	int device_state; /* 0 not read, 1 reading, 2 device[] written */
	char device[LM_NAME];
	int tg_busy, tg_count;
	unsigned long tg_stock[LM_TG_READS], tg_given[LM_TG_READS];
} lm_shim_slots[LM_SLOTS];

extern const char *lm_shim_init_why; /* for the record; NULL once installed (state.c) */

/* Read once at load, before any spawn can be hooked; read-only afterwards (children.c). */
extern struct kids {
	int rule;            /* -1 the spawn rule; 0 LUME_METAL_INHERIT=0; 1 LUME_METAL_INHERIT=1 */
	int sip;             /* LUME_METAL_GUEST_SIP: 1 enabled, 0 disabled or custom, -1 not reported */
	int arm64e;          /* the installed shim has an arm64e slice */
	int inherit;         /* children.inherit: the rule passes the shim on at all */
	const char *setting; /* LUME_METAL_INHERIT as found: "0", "1", "invalid" or NULL */
	const char *self;    /* this image's path (dladdr), NULL when unknown */
	char why[LM_WHY];
} lm_shim_kids;

/* A spawn's target as the rule sees it. */
struct target {
	char path[LM_PATH];   /* the file started (searched, absolute, links followed); "" unknown */
	char interp[LM_PATH]; /* the program that runs it: its #! interpreter, /bin/sh, or "" */
	int protected;        /* the file or its interpreter is in a directory SIP protects */
	int arm64e;           /* the file's or its interpreter's Mach-O header says arm64e only */
};

/* The environment a spawn passes on: the caller's, or a copy without this image's entries in the
 * injection variable (the others kept, in order, joined with ':', which dyld and ld.so both
 * accept; the variable dropped when nothing is left). Small environments are rebuilt on the
 * stack; larger ones in an anonymous mapping (a system call, safe in a forked child where malloc
 * is not), unmapped when the call returns. */
struct env_out {
	char **envp;          /* the copy, NULL: pass the caller's */
	void *map;
	lm_size map_len;
	char *arr[LM_ENV_STACK];
	char text[LM_ENV_TEXT];
};

/* This process's record (records.c). Set at load (on, pid, paths, exe, host_reason), then changed
 * only with atomics. */
extern struct record {
	int on;
	int pid, ppid;
	char path[1100], tmp[1100], dir[1024];
	char exe[1024];
	int has_exe;
	char host_reason[LM_WHY];
	int has_host_reason;
	int incomplete;
	int writing, stale, written;
	unsigned long sequence;
	unsigned q_count;
	struct question {
		int ready;
		int slot;
		long family;
		unsigned char stock, given;
	} questions[LM_QUESTIONS];
	SEL sel_name, sel_utf8;
	unsigned s_count; /* spawns claimed (may exceed LM_SPAWNS: the rest are counted) */
	struct spawn {
		int ready;
		unsigned char call, protected, shim, has_path, cut;
		int pid;          /* posix_spawn's child; 0: none (an exec, or the call failed) */
		int error;        /* the call's error number; 0: none (or an exec that has not returned) */
		const char *why;  /* static text */
		char path[1024], resolved[LM_PATH], interp[LM_PATH];
	} spawns[LM_SPAWNS];
	char text[65536];
} lm_shim_rec;

/* state.c */
int lm_shim_str_eq(const char *a, const char *b);
lm_size lm_shim_join(char *dst, lm_size cap, const char *const parts[], lm_size count);
void lm_shim_log_stock(char *why, const char *a, const char *b, const char *c);

/* children.c */
void lm_shim_kids_read(void);
void lm_shim_target_read(struct target *t, const char *file, int search);
int lm_shim_spawn_rule(const struct target *t, const char **why);
int lm_shim_is_injection(const char *entry);
int lm_shim_env_names_self(char *const envp[]);
int lm_shim_env_without_self(char *const envp[], struct env_out *o);
void lm_shim_env_release(struct env_out *o);

/* records.c */
int lm_shim_copy_cut(char *dst, lm_size cap, const char *src);
void lm_shim_record_init(void);
void lm_shim_record_update(int written);
void lm_shim_record_incomplete(void);
void lm_shim_record_forked(const struct spawn *sp, unsigned long sequence);
void lm_shim_record_question_slow(lm_size i, id self, long family, unsigned char stock, unsigned char given);
void lm_shim_record_threadgroup(lm_size i, unsigned long stock, unsigned long given);

/* hooks.c */
void lm_shim_hook_device(id device);
void lm_shim_hook_private_base(Class base);
#if !defined(__APPLE__)
void lm_shim_hook_loaded_classes(void);
#endif

/* interpose.c */
#if defined(__APPLE__)
int lm_shim_execve_hook(const char *path, char *const argv[], char *const envp[]);
int lm_shim_posix_spawn_hook(int *pid, const char *path, const void *fa, const void *attr, char *const argv[],
    char *const envp[]);
int lm_shim_posix_spawnp_hook(int *pid, const char *file, const void *fa, const void *attr, char *const argv[],
    char *const envp[]);
#else
void *lm_shim_next_symbol(void **cache, const char *name);
void lm_shim_spawn_init(void);
#endif

#pragma GCC visibility pop

/* In the hook: a question already recorded costs this one load and compare. */
static inline void lm_shim_record_question(lm_size i, id self, long family, unsigned char stock,
    unsigned char given)
{
	if (__atomic_load_n(&lm_shim_slots[i].seen[(unsigned long)family & 255], __ATOMIC_RELAXED) !=
	    (unsigned long)family + 1)
		lm_shim_record_question_slow(i, self, family, stock, given);
}

#endif
