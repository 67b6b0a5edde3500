/* Internal (guestops): whose guest files these are -- the owner record in the guest's lume-metal
 * directory (docs/bundle-format.md, "The owner record").
 *
 * Threat: two state directories (two CI jobs' LUME_METAL_STATE_DIR, a developer's and a fleet's,
 * two Macs reaching one VM) each believe they enabled the same VM; one's enable reinstalls over
 * the other's install, one's rollback removes the files the other still counts as enabled, and
 * neither says a word. Rule: every install records the identity of the state directory that made
 * it (owner.json: its 32-hex identity, its path and host, for people); enable and rollback act on
 * files that name another state directory -- or whose record cannot be read -- only when told to
 * take them over, and otherwise fail with LM_EOTHERSTATE naming that directory, having changed
 * nothing in the guest. Files an older lume-metal installed carry no record: the state directory
 * that enables the VM next records itself, and says so; a rollback removes them as before. */
#ifndef LM_GUEST_OWNER_H
#define LM_GUEST_OWNER_H

#include <stddef.h>

#include "lume-metal/flow.h"
#include "lume-metal/sys/ssh.h"

/* In the install directory (LM_GUEST_BASE), beside `current`. */
#define LM_GUEST_OWNER_FILE "owner.json"
/* The record's largest size: an identity, a path and a host name. */
#define LM_GUEST_OWNER_MAX 4096

/* A state directory as an owner. */
typedef struct {
	char state_id[33];   /* 32 lowercase hex digits (the state directory's identity file) */
	char state_dir[1024]; /* its path, as it was given (for people; never compared) */
	char host[256];      /* the host name lume-metal ran on (for people) */
} lm_guest_owner;

/* This state directory as an owner: its identity (state_id, "" when it has none yet), its path
 * and this machine's host name. */
int lm_guest_owner_make(lm_guest_owner *out, const char *state_id, const char *state_dir);

/* The record's bytes (JSON, one object, a trailing newline; free()) and back. A record that is
 * not one (not JSON, another format, a bad identity, a path or host with control characters) is
 * LM_EINVALID saying why. */
int lm_guest_owner_render(const lm_guest_owner *o, char **out, size_t *len);
int lm_guest_owner_parse(const char *text, size_t len, lm_guest_owner *out);

/* What the install directory holds at LM_GUEST_OWNER_FILE. */
typedef enum {
	LM_GUEST_OWNER_ABSENT,     /* nothing (a fresh guest, or files of an older lume-metal) */
	LM_GUEST_OWNER_FOUND,      /* a record: owner */
	LM_GUEST_OWNER_UNREADABLE  /* something that is no record (a FIFO, a damaged file): why */
} lm_guest_owner_state;

typedef struct {
	lm_guest_owner_state state;
	lm_guest_owner owner;      /* FOUND */
	char why[512];             /* UNREADABLE */
	char *raw;                 /* FOUND, or an unreadable regular file: its bytes (put back on undo) */
	size_t raw_len;
} lm_guest_owner_seen;

/* Read the record. A link (or a file) on the way to the install directory reads as no record:
 * nothing is written or removed through it (lm_guest_base_check, the install rule). Errors only
 * for what is not the guest's answer (memory, the connection, a timeout); dispose *seen
 * afterwards, also on failure. */
int lm_guest_owner_read(lm_ssh *ssh, const lm_guest_facts *facts, lm_guest_owner_seen *seen);
void lm_guest_owner_seen_dispose(lm_guest_owner_seen *seen);

/* Write o as the record (upload to a temporary name, hash check, rename: lm_ssh_upload). The
 * install directory must exist. */
int lm_guest_owner_write(lm_ssh *ssh, const lm_guest_facts *facts, const lm_guest_owner *o);
/* The same into an install directory dir (the installer's place, guest_bundle.h). */
int lm_guest_owner_write_in(lm_ssh *ssh, const char *dir, const lm_guest_owner *o);
/* Put back what `seen` found: its bytes, or no record when there was none. */
int lm_guest_owner_restore(lm_ssh *ssh, const lm_guest_facts *facts, const lm_guest_owner_seen *seen);

/* The rule, for one command on the files `seen` describes. */
typedef enum {
	LM_GUEST_OWNER_OURS,    /* this state directory's record, or nothing installed and no record */
	LM_GUEST_OWNER_ADOPT,   /* installed without a record (an older lume-metal): this one records itself */
	LM_GUEST_OWNER_TAKE     /* another's (or unreadable), and take_over: this one replaces the record */
} lm_guest_owner_verdict;
/* installed: the install directory's `current` names a bundle. `refused` ends the message of a
 * refusal ("nothing was changed in the guest"). LM_EOTHERSTATE, naming the other state directory
 * and this one (self), when the files are another's (or their record unreadable) and not
 * take_over. */
int lm_guest_owner_judge(const lm_guest_owner_seen *seen, const lm_guest_owner *self, int installed, int take_over,
    const char *vm, const char *refused, lm_guest_owner_verdict *out);
/* "/path (identity 0123..., host mac-1)" into buf, for messages and step details; what `seen`
 * found ("an unreadable owner record (why)") with lm_guest_owner_seen_describe. */
void lm_guest_owner_describe(const lm_guest_owner *o, char *buf, size_t len);
void lm_guest_owner_seen_describe(const lm_guest_owner_seen *seen, char *buf, size_t len);

#endif
