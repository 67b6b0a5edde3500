/* Internal: reading a guest's files over SFTP -- a directory's names and a file's bytes, each
 * bounded by the caller (the shim's activation records, docs/activation-format.md).
 *
 * Threat: the guest is not trusted to keep its files small, few or regular (a FIFO never answers,
 * /dev/zero never ends). Rule: the caller states the most it will take; more is LM_ETOOLARGE
 * naming the limit, never a cut result; only a regular file is opened, and every read ends within
 * the session's command timeout. Errors: LM_ENOTFOUND (absent), LM_EREMOTE (the server refused:
 * permission, not a directory, not a regular file), LM_ETOOLARGE, LM_ETIMEOUT, LM_ENOMEM, and the
 * session's transport errors. */
#ifndef LM_SSH_FILES_H
#define LM_SSH_FILES_H

#include <stddef.h>

#include "lume-metal/sys/ssh.h"

/* What a guest path is, by lstat (a link is not followed). */
typedef enum {
	LM_SSH_KIND_ABSENT,
	LM_SSH_KIND_FILE, /* a regular file */
	LM_SSH_KIND_DIR,
	LM_SSH_KIND_LINK,
	LM_SSH_KIND_FIFO,
	LM_SSH_KIND_CHAR,
	LM_SSH_KIND_BLOCK,
	LM_SSH_KIND_SOCKET,
	LM_SSH_KIND_UNKNOWN /* the server did not say */
} lm_ssh_kind;

/* The kind of remote_path; LM_SSH_KIND_ABSENT when it does not exist (not an error). */
int lm_ssh_kind_of(lm_ssh *ssh, const char *remote_path, lm_ssh_kind *kind);
/* "a regular file", "a directory", "a symbolic link", "a FIFO", ... for messages. */
const char *lm_ssh_kind_phrase(lm_ssh_kind kind);

/* When remote_path (not followed when a link) was last modified, epoch seconds; LM_ENOTFOUND when
 * absent. */
int lm_ssh_mtime(lm_ssh *ssh, const char *remote_path, double *mtime);

/* The names in remote_dir ("." and ".." left out), in the server's order, NULL-terminated; free
 * with lm_strv_free. More than max_names entries is LM_ETOOLARGE. */
int lm_ssh_list_dir(lm_ssh *ssh, const char *remote_dir, size_t max_names, char ***names);

/* The bytes of the regular file remote_path (not followed when a link), NUL-terminated (free with
 * free()) and their count. More than max bytes is LM_ETOOLARGE; anything but a regular file is
 * LM_EREMOTE naming what it is ("... is a FIFO, not a file"), never opened; a read that outlasts
 * the session's command timeout is LM_ETIMEOUT. lm_ssh_sha256 (ssh.h) keeps the same rules. */
int lm_ssh_read_file(lm_ssh *ssh, const char *remote_path, size_t max, char **data, size_t *len);
/* At most max bytes of the regular file remote_path from offset on (what a log gained since it
 * was last read: `agent logs -f`), NUL-terminated (free()), fewer at its end (0 past it); absent
 * is LM_ENOTFOUND, anything but a regular file LM_EREMOTE, as lm_ssh_read_file. */
int lm_ssh_read_file_at(lm_ssh *ssh, const char *remote_path, uint64_t offset, size_t max, char **data, size_t *len);

#endif
