/* Internal: the one way lume-metal opens a local file to read it (profiles, the state journal,
 * preference plists, bundle manifests and files, known_hosts, SSH keys, password files).
 *
 * A FIFO or a device named where a file is expected would block open() or read() forever -- under
 * the state lock, so every other lume-metal process would fail too. So the file is opened with
 * O_NONBLOCK, must be a regular file (fstat on the open descriptor: no race with a rename), and
 * only then is the flag cleared for ordinary blocking reads.
 */
#ifndef LM_FILE_H
#define LM_FILE_H

#include <stddef.h>
#include <sys/stat.h>

/* Open a regular file read-only (close-on-exec, no controlling terminal). *fd and *st on success.
 * LM_ENOTFOUND when it does not exist; LM_EINVALID when it is not a regular file (FIFO, socket,
 * device, directory); LM_EIO otherwise. Messages name the file. */
int lm_fs_open_read(const char *path, int *fd, struct stat *st);

/* Read a whole regular file (opened as above) of at most `max` bytes (else LM_EINVALID naming the
 * size and the limit). *data is NUL-terminated; free with free(). A file that changes size while
 * it is read is LM_EIO ("try again"). Buffers are cleared before they are freed on failure, so
 * that a secret read with it (a password file) does not linger in freed memory. */
int lm_fs_read_file(const char *path, size_t max, char **data, size_t *len);

#endif
