/* Internal: reading a guest's files over SFTP -- a directory's names and a file's bytes, each
 * bounded by the caller (the shim's activation records, docs/activation-format.md).
 *
 * Threat: the guest is not trusted to keep its files small or few. Rule: the caller states the
 * most it will take; more is LM_ETOOLARGE naming the limit, never a cut result. Errors:
 * LM_ENOTFOUND (absent), LM_EREMOTE (the server refused: permission, not a directory, not a
 * regular file), LM_ETOOLARGE, LM_ENOMEM, and the session's transport errors. */
#ifndef LM_SSH_FILES_H
#define LM_SSH_FILES_H

#include <stddef.h>

#include "lume-metal/ssh.h"

/* The names in remote_dir ("." and ".." left out), in the server's order, NULL-terminated; free
 * with lm_strv_free. More than max_names entries is LM_ETOOLARGE. */
int lm_ssh_list_dir(lm_ssh *ssh, const char *remote_dir, size_t max_names, char ***names);

/* The bytes of the regular file remote_path (not followed when a link), NUL-terminated (free with
 * free()) and their count. More than max bytes is LM_ETOOLARGE. */
int lm_ssh_read_file(lm_ssh *ssh, const char *remote_path, size_t max, char **data, size_t *len);

#endif
