/* Internal (guestops): the shim's activation records (docs/activation-format.md): read, checked
 * and typed (activation.c), where a workload's go in the guest, and what one says (took, summary,
 * JSON). */
#ifndef LM_GUEST_ACTIVATION_H
#define LM_GUEST_ACTIVATION_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "lume-metal/sys/ssh.h"

/* ---- activation.c: the shim's activation records (docs/activation-format.md) ---- */

/* What the reader takes from one guest directory: more is an error naming the limit. */
#define LM_ACTIVATION_MAX_RECORDS 256
#define LM_ACTIVATION_MAX_BYTES 65536
/* The shim's own tables (a record with more is damaged). */
#define LM_ACTIVATION_CLASSES 8
#define LM_ACTIVATION_QUESTIONS 64
#define LM_ACTIVATION_TG_READS 32
#define LM_ACTIVATION_REASON 201 /* 200 bytes and the NUL */
#define LM_ACTIVATION_NAME 128

typedef struct {
	char name[LM_ACTIVATION_NAME];
	int installed;
	char why_not[LM_ACTIVATION_REASON]; /* "" when installed */
	char device[LM_ACTIVATION_NAME];    /* "" until a device of the class was asked */
} lm_activation_class;

typedef struct {
	int device_class;                   /* index into classes */
	int64_t family;                     /* MTLGPUFamily value */
	int stock, given;
} lm_activation_question;

typedef struct {
	int device_class;
	uint64_t stock, given;
} lm_activation_tg_read;

/* One exec or spawn the process made (format 1.1, docs/activation-format.md). */
#define LM_ACTIVATION_SPAWNS 32
typedef struct {
	char call[24];                      /* "execve", "posix_spawn", "posix_spawnp", "posix_spawn_setexec" */
	char path[1024];                    /* the program as given */
	int protected_;                     /* a SIP-protected path */
	char shim[8];                       /* "kept", "removed", "absent" */
	char why[LM_ACTIVATION_REASON];
	int64_t pid;                        /* the child posix_spawn started; 0 for null (an exec, a failed call) */
} lm_activation_spawn;

/* One process's record, every member typed; "" where the record has null. */
typedef struct {
	char file[32];                      /* "<pid>.json" */
	char *text;                         /* the record as read, byte for byte (lm_activation_list owns it) */
	size_t text_len;
	int64_t pid, ppid;
	char exe[1024];
	char arch[8];
	char shim_version[65];
	char written[8];                    /* "load", "update", "exit" */
	uint64_t sequence;
	int incomplete;
	int active;                         /* profile.active */
	char why_stock[LM_ACTIVATION_REASON];
	int64_t apple_family_max;           /* 0 when not active */
	uint64_t max_threadgroup_memory;
	int has_working_set;
	uint64_t working_set;
	int init_installed;
	char init_why_not[LM_ACTIVATION_REASON];
	size_t nclasses;
	lm_activation_class classes[LM_ACTIVATION_CLASSES];
	size_t nquestions;
	lm_activation_question questions[LM_ACTIVATION_QUESTIONS];
	size_t ntg;
	lm_activation_tg_read tg[LM_ACTIVATION_TG_READS];
	int inherit;                        /* children keep the shim */
	char variable[32];                  /* DYLD_INSERT_LIBRARIES or LD_PRELOAD */
	char setting[8];                    /* LUME_METAL_INHERIT: "0", "1", "invalid", "" (absent) */
	char children_why[LM_ACTIVATION_REASON];
	char host_reason[LM_ACTIVATION_REASON];
	size_t nspawns;                     /* 1.1: what it started, in order (none in a 1.0 record) */
	lm_activation_spawn spawns[LM_ACTIVATION_SPAWNS];
	uint64_t spawns_dropped;            /* 1.1: spawns past the ones kept */
} lm_activation;

/* The records of one directory, by pid; what lm_activation_fetch could not take, counted. */
#define LM_ACTIVATION_SKIPPED_KEPT 8
typedef struct {
	size_t count;
	lm_activation *items;
	size_t dropped;  /* records past the first LM_ACTIVATION_MAX_RECORDS (by pid): counted, not read */
	size_t nskipped; /* damaged or unreadable records: skipped, each said */
	char *skipped[LM_ACTIVATION_SKIPPED_KEPT]; /* the first ones' messages (which file, what is wrong) */
} lm_activation_list;

/* 1 when name is a record's file name: <pid>.json, the pid 1..9999999999 without leading zeros. */
int lm_activation_file_name_ok(const char *name);
/* Parse and check one record (text[0..len), at most LM_ACTIVATION_MAX_BYTES): every member of its
 * version, of the right type and within the shim's limits. source names it in messages ("VM 'a':
 * /path/123.json"). LM_EINVALID for a damaged record, LM_EUNSUPPORTED for another major version;
 * out->text is left NULL (see lm_activation_list_add). */
int lm_activation_parse(const char *source, const char *text, size_t len, lm_activation *out);
/* Parse text as the record in file (a name lm_activation_file_name_ok accepts, whose pid the record
 * must carry) and add it, with a copy of the text, in pid order. Nothing is added on failure. */
int lm_activation_list_add(lm_activation_list *list, const char *source, const char *file, const char *text,
    size_t len);
/* Every record in the guest directory remote_dir (other names are ignored: the shim's temporary
 * files, anything else), read in pid order: the first LM_ACTIVATION_MAX_RECORDS of at most
 * LM_ACTIVATION_MAX_BYTES each, the rest counted (out->dropped). A damaged or unreadable record is
 * skipped and said (out->nskipped, out->skipped): the others still count. LM_ENOTFOUND when the
 * directory is absent; more than LM_ACTIVATION_MAX_LISTED names is LM_ETOOLARGE. */
#define LM_ACTIVATION_MAX_LISTED 65536
int lm_activation_fetch(lm_ssh *ssh, const char *remote_dir, lm_activation_list *out);
/* Frees what the list holds (not the struct); empty afterwards. */
void lm_activation_list_dispose(lm_activation_list *list);

/* Where a workload's records go in the guest: HOME/.local/share/lume-metal/activation/NAME (name:
 * [A-Za-z0-9._-], not starting with '.'), made empty and owner-only (0700) by the first call; *dir
 * gets its path (free()). Under the bundle's directory, so rollback removes what is left there.
 * The folder a killed run left (run-*) goes with the next one made: its workload's group is gone,
 * or it never got one and is over 10 minutes old. */
#define LM_ACTIVATION_GUEST_DIR "activation"
/* In a run's record folder: the kill target of its workload's process group, written by the
 * wrapper the guest's shell runs (workload_session.c). The workload can rewrite it: a stop never
 * takes its target from it, only the next run's sweep asks whether it still answers (kill -0). */
#define LM_WORKLOAD_GROUP_FILE "process-group"

int lm_activation_dir_make(lm_ssh *ssh, const char *home, const char *name, char **dir);
int lm_activation_dir_remove(lm_ssh *ssh, const char *dir); /* absent is fine */
/* cmd (a command line from lm_shim_command) with LUME_METAL_RECORD_DIR=dir set before it (free()). */
int lm_activation_command(const char *dir, const char *cmd, char **out);

/* 1 when the shim took in that process: its record shows an answer widened (a supportsFamily:
 * stock answered no and the shim yes, or a maxThreadgroupMemoryLength raised) -- the one rule of
 * "got the unlock" for run, --require-shim, agents, status, doctor and bench. */
int lm_activation_took(const lm_activation *a);
/* One line for people: "pid 123 /usr/local/bin/llama-server: asked Apple7→yes (stock no), Apple9→yes
 * (stock no); maxThreadgroupMemoryLength 64 KiB (stock 32 KiB)"; new string (free()). */
int lm_activation_summary(const lm_activation *a, char **out);
/* The JSON for --format json: {"pid", "ppid", "exe", "took", "summary", "record": the record as
 * written}. */
int lm_activation_json(const lm_activation *a, cJSON **out);

#endif
