/* Files on the guest over SFTP: verified upload, hash, remove, stat; bounded listing and reading
 * (interface/ssh_files.h).
 *
 * An upload never leaves a partial or unverified file at its final name: the bytes go to a
 * temporary name in the same directory (created exclusively, owner-only), are read back and
 * compared by SHA-256, get their mode, and only then take the final name. SFTP version 3 (what
 * OpenSSH speaks and libssh2 1.10 uses) cannot rename over an existing file and libssh2 1.10 has
 * no posix-rename extension, so an existing file is removed just before the rename. */
#include "ssh_internal.h"
#include "text.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "buf.h"
#include "random.h"
#include "sha256.h"
#include "ssh_files.h"
#include "str.h"

#define IO_CHUNK 65536

/* libssh2's path macros pass strlen() where the function takes an unsigned int: the _ex forms
 * with the length converted here, once (no path of ours is near 4 GB; one that were would be
 * refused by the server, never cut silently: it is passed as 0 bytes long). */
static unsigned int path_len(const char *path)
{
	size_t n = strlen(path);

	return n <= UINT_MAX ? (unsigned int)n : 0;
}

static LIBSSH2_SFTP_HANDLE *sftp_open(LIBSSH2_SFTP *sftp, const char *path, unsigned long flags, long mode)
{
	return libssh2_sftp_open_ex(sftp, path, path_len(path), flags, mode, LIBSSH2_SFTP_OPENFILE);
}

static int sftp_unlink(LIBSSH2_SFTP *sftp, const char *path)
{
	return libssh2_sftp_unlink_ex(sftp, path, path_len(path));
}

static int sftp_rmdir(LIBSSH2_SFTP *sftp, const char *path)
{
	return libssh2_sftp_rmdir_ex(sftp, path, path_len(path));
}

static int sftp_stat(LIBSSH2_SFTP *sftp, const char *path, int type, LIBSSH2_SFTP_ATTRIBUTES *attrs)
{
	return libssh2_sftp_stat_ex(sftp, path, path_len(path), type, attrs);
}

static int sftp_open_session(lm_ssh *ssh)
{
	int rc;

	if ((rc = lm_ssh_check_usable(ssh)) < 0)
		return rc;
	if (ssh->sftp != NULL)
		return 0;
	if ((ssh->sftp = libssh2_sftp_init(ssh->session)) == NULL)
		return lm_ssh_fail(ssh, libssh2_session_last_errno(ssh->session),
		    "starting SFTP (is the sftp subsystem enabled in the guest's sshd?)");
	return 0;
}

/* Error from the last SFTP call: the server's status when it gave one, else the session's. */
static int sftp_fail(lm_ssh *ssh, const char *what, const char *path)
{
	char full[1200];
	int rc = libssh2_session_last_errno(ssh->session);
	unsigned long status;

	lm_text_format_cut(full, sizeof(full), "%s %s", what, path); /* for the message only */
	if (rc == LIBSSH2_ERROR_SFTP_PROTOCOL) {
		status = libssh2_sftp_last_error(ssh->sftp);
		switch (status) {
		case LIBSSH2_FX_NO_SUCH_FILE:
		case LIBSSH2_FX_NO_SUCH_PATH:
			return lm_error_set(LM_ENOTFOUND, "VM '%s': %s: no such file or directory", ssh->vm, full);
		case LIBSSH2_FX_PERMISSION_DENIED:
			return lm_error_set(LM_EREMOTE, "VM '%s': %s: permission denied", ssh->vm, full);
		case LIBSSH2_FX_NO_SPACE_ON_FILESYSTEM:
		case LIBSSH2_FX_QUOTA_EXCEEDED:
			return lm_error_set(LM_EREMOTE, "VM '%s': %s: the guest's disk is full", ssh->vm, full);
		case LIBSSH2_FX_FILE_ALREADY_EXISTS:
			return lm_error_set(LM_EREMOTE, "VM '%s': %s: the file already exists", ssh->vm, full);
		case LIBSSH2_FX_FAILURE:
			return lm_error_set(LM_EREMOTE, "VM '%s': %s: the guest's SFTP server reported a failure (SSH_FX_FAILURE)",
			    ssh->vm, full);
		default:
			return lm_error_set(LM_EREMOTE, "VM '%s': %s: the guest's SFTP server answered status %lu", ssh->vm, full,
			    status);
		}
	}
	return lm_ssh_fail(ssh, rc, full);
}

static int is_not_found(lm_ssh *ssh)
{
	unsigned long status;

	if (libssh2_session_last_errno(ssh->session) != LIBSSH2_ERROR_SFTP_PROTOCOL)
		return 0;
	status = libssh2_sftp_last_error(ssh->sftp);
	return status == LIBSSH2_FX_NO_SUCH_FILE || status == LIBSSH2_FX_NO_SUCH_PATH;
}

/* A read of a guest file ends by the session's command timeout, however steadily the guest
 * answers (a file that grows as it is read would otherwise never end). */
static double read_deadline(const lm_ssh *ssh)
{
	return ssh->command_timeout > 0 ? lm_clock_monotonic() + ssh->command_timeout : 0;
}

static int read_too_long(lm_ssh *ssh, const char *path)
{
	return lm_error_set(LM_ETIMEOUT, "VM '%s': reading %s took longer than %.0f s (the command timeout); "
	    "the guest may be hung", ssh->vm, path, ssh->command_timeout);
}

static lm_ssh_kind kind_of_attrs(const LIBSSH2_SFTP_ATTRIBUTES *a)
{
	static const struct {
		unsigned long type;
		lm_ssh_kind kind;
	} kinds[] = {{LIBSSH2_SFTP_S_IFREG, LM_SSH_KIND_FILE}, {LIBSSH2_SFTP_S_IFDIR, LM_SSH_KIND_DIR},
		{LIBSSH2_SFTP_S_IFLNK, LM_SSH_KIND_LINK}, {LIBSSH2_SFTP_S_IFIFO, LM_SSH_KIND_FIFO},
		{LIBSSH2_SFTP_S_IFCHR, LM_SSH_KIND_CHAR}, {LIBSSH2_SFTP_S_IFBLK, LM_SSH_KIND_BLOCK},
		{LIBSSH2_SFTP_S_IFSOCK, LM_SSH_KIND_SOCKET}};
	size_t i;

	for (i = 0; (a->flags & LIBSSH2_SFTP_ATTR_PERMISSIONS) && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if ((a->permissions & LIBSSH2_SFTP_S_IFMT) == kinds[i].type)
			return kinds[i].kind;
	return LM_SSH_KIND_UNKNOWN;
}

const char *lm_ssh_kind_phrase(lm_ssh_kind kind)
{
	static const char *const phrases[] = {"absent", "a regular file", "a directory", "a symbolic link", "a FIFO",
		"a character device", "a block device", "a socket", "of a type the SFTP server did not say"};

	return (size_t)kind < sizeof(phrases) / sizeof(phrases[0]) ? phrases[kind] : phrases[LM_SSH_KIND_UNKNOWN];
}

/* lstat: a FIFO or a device is refused before anything opens it (an open of a FIFO blocks the
 * guest's SFTP server until a writer comes; /dev/zero never ends), a link is not followed. */
static int stat_regular(lm_ssh *ssh, const char *path, LIBSSH2_SFTP_ATTRIBUTES *attrs)
{
	lm_ssh_kind kind;

	if (sftp_stat(ssh->sftp, path, LIBSSH2_SFTP_LSTAT, attrs) != 0)
		return sftp_fail(ssh, "reading", path);
	if ((kind = kind_of_attrs(attrs)) != LM_SSH_KIND_FILE)
		return lm_error_set(LM_EREMOTE, "VM '%s': %s is %s, not a file", ssh->vm, path, lm_ssh_kind_phrase(kind));
	return 0;
}

/* The SHA-256 of a regular file: at most the size lstat gave (a file still growing is an error,
 * not a hash of some prefix), within the command timeout. */
static int hash_remote(lm_ssh *ssh, const char *path, uint8_t digest[32], uint64_t *size)
{
	LIBSSH2_SFTP_HANDLE *h;
	LIBSSH2_SFTP_ATTRIBUTES attrs;
	lm_sha256_ctx c;
	char *buf;
	ssize_t n;
	uint64_t total = 0;
	double deadline = read_deadline(ssh);
	int rc = 0;

	if ((rc = stat_regular(ssh, path, &attrs)) < 0)
		return rc;
	if ((h = sftp_open(ssh->sftp, path, LIBSSH2_FXF_READ, 0)) == NULL)
		return sftp_fail(ssh, "opening", path);
	if ((buf = malloc(IO_CHUNK)) == NULL) {
		libssh2_sftp_close(h);
		return lm_error_nomem();
	}
	lm_sha256_init(&c);
	while ((n = libssh2_sftp_read(h, buf, IO_CHUNK)) > 0) {
		lm_sha256_update(&c, buf, (size_t)n);
		total += (uint64_t)n;
		if ((attrs.flags & LIBSSH2_SFTP_ATTR_SIZE) && total > attrs.filesize) {
			rc = lm_error_set(LM_EREMOTE, "VM '%s': %s grew while it was read (past %llu bytes)", ssh->vm, path,
			    (unsigned long long)attrs.filesize);
			break;
		}
		if (deadline > 0 && lm_clock_monotonic() > deadline) {
			rc = read_too_long(ssh, path);
			break;
		}
	}
	if (rc == 0 && n < 0)
		rc = sftp_fail(ssh, "reading", path);
	libssh2_sftp_close(h);
	free(buf);
	if (rc == 0) {
		lm_sha256_final(&c, digest);
		if (size != NULL)
			*size = total;
	}
	return rc;
}

int lm_ssh_sha256(lm_ssh *ssh, const char *remote_path, uint8_t digest[32])
{
	int rc;

	if (remote_path == NULL || remote_path[0] == '\0' || digest == NULL)
		return lm_error_set(LM_EINVALID, "lm_ssh_sha256: a remote path and a digest buffer are required");
	if (ssh != NULL && ssh->local)
		return lm_ssh_local_sha256(remote_path, digest);
	if ((rc = sftp_open_session(ssh)) < 0)
		return rc;
	return hash_remote(ssh, remote_path, digest, NULL);
}

static int remove_path(lm_ssh *ssh, const char *path)
{
	LIBSSH2_SFTP_ATTRIBUTES attrs;

	if (sftp_unlink(ssh->sftp, path) == 0)
		return 0;
	if (is_not_found(ssh))
		return 0;
	/* A directory: rmdir (empty ones only, as `rmdir` would). */
	if (sftp_stat(ssh->sftp, path, LIBSSH2_SFTP_LSTAT, &attrs) == 0 && (attrs.flags & LIBSSH2_SFTP_ATTR_PERMISSIONS) &&
	    LIBSSH2_SFTP_S_ISDIR(attrs.permissions)) {
		if (sftp_rmdir(ssh->sftp, path) == 0)
			return 0;
		return sftp_fail(ssh, "removing the directory (it must be empty)", path);
	}
	return sftp_fail(ssh, "removing", path);
}

int lm_ssh_remove(lm_ssh *ssh, const char *remote_path)
{
	int rc;

	if (remote_path == NULL || remote_path[0] == '\0')
		return lm_error_set(LM_EINVALID, "lm_ssh_remove: a remote path is required");
	if (ssh != NULL && ssh->local)
		return lm_ssh_local_remove(remote_path);
	if ((rc = sftp_open_session(ssh)) < 0)
		return rc;
	return remove_path(ssh, remote_path);
}

int lm_ssh_stat(lm_ssh *ssh, const char *remote_path, lm_ssh_stat_info *out)
{
	LIBSSH2_SFTP_ATTRIBUTES attrs;
	int rc;

	if (remote_path == NULL || remote_path[0] == '\0' || out == NULL)
		return lm_error_set(LM_EINVALID, "lm_ssh_stat: a remote path and an output are required");
	memset(out, 0, sizeof(*out));
	if (ssh != NULL && ssh->local)
		return lm_ssh_local_stat(remote_path, out);
	if ((rc = sftp_open_session(ssh)) < 0)
		return rc;
	if (sftp_stat(ssh->sftp, remote_path, LIBSSH2_SFTP_LSTAT, &attrs) != 0)
		return is_not_found(ssh) ? 0 : sftp_fail(ssh, "looking at", remote_path);
	out->exists = 1;
	if (attrs.flags & LIBSSH2_SFTP_ATTR_PERMISSIONS) {
		out->is_dir = LIBSSH2_SFTP_S_ISDIR(attrs.permissions);
		out->is_link = LIBSSH2_SFTP_S_ISLNK(attrs.permissions);
		out->mode = (int)(attrs.permissions & 07777);
	}
	if (attrs.flags & LIBSSH2_SFTP_ATTR_SIZE)
		out->size = attrs.filesize;
	return 0;
}

int lm_ssh_mtime(lm_ssh *ssh, const char *remote_path, double *mtime)
{
	LIBSSH2_SFTP_ATTRIBUTES attrs;
	struct stat st;
	int rc;

	*mtime = 0;
	if (ssh != NULL && ssh->local) {
		if (lstat(remote_path, &st) != 0)
			return errno == ENOENT || errno == ENOTDIR ? lm_error_set(LM_ENOTFOUND, "this machine: %s does not exist",
			    remote_path) : lm_error_set(LM_EIO, "this machine: cannot look at %s: %s", remote_path, strerror(errno));
		*mtime = (double)st.st_mtime;
		return 0;
	}
	if ((rc = sftp_open_session(ssh)) < 0)
		return rc;
	if (sftp_stat(ssh->sftp, remote_path, LIBSSH2_SFTP_LSTAT, &attrs) != 0)
		return is_not_found(ssh) ? lm_error_set(LM_ENOTFOUND, "%s does not exist in the guest", remote_path) :
		    sftp_fail(ssh, "looking at", remote_path);
	if (!(attrs.flags & LIBSSH2_SFTP_ATTR_ACMODTIME))
		return lm_error_set(LM_EREMOTE, "the guest's SFTP server gave no modification time for %s", remote_path);
	*mtime = (double)attrs.mtime;
	return 0;
}

int lm_ssh_kind_of(lm_ssh *ssh, const char *remote_path, lm_ssh_kind *kind)
{
	LIBSSH2_SFTP_ATTRIBUTES attrs;
	int rc;

	*kind = LM_SSH_KIND_ABSENT;
	if (ssh != NULL && ssh->local) {
		struct stat st;

		if (lstat(remote_path, &st) != 0)
			return errno == ENOENT || errno == ENOTDIR ? 0 :
			    lm_error_set(LM_EIO, "this machine: cannot look at %s: %s", remote_path, strerror(errno));
		attrs.flags = LIBSSH2_SFTP_ATTR_PERMISSIONS; /* SFTP's S_IF* values are POSIX's */
		attrs.permissions = (unsigned long)st.st_mode;
		*kind = kind_of_attrs(&attrs);
		return 0;
	}
	if ((rc = sftp_open_session(ssh)) < 0)
		return rc;
	if (sftp_stat(ssh->sftp, remote_path, LIBSSH2_SFTP_LSTAT, &attrs) != 0)
		return is_not_found(ssh) ? 0 : sftp_fail(ssh, "looking at", remote_path);
	*kind = kind_of_attrs(&attrs);
	return 0;
}

/* "<dir>/.<base>.lm-<16 hex>": hidden, in the same directory (so that rename stays on one
 * filesystem), unique enough with random bytes (the open is exclusive anyway). */
static int temp_name(const char *final_path, char **out)
{
	const char *slash = strrchr(final_path, '/');
	const char *base = slash != NULL ? slash + 1 : final_path;
	size_t dir_len = slash != NULL ? (size_t)(slash - final_path) + 1 : 0, n;
	char hex[17];
	int rc;

	if (base[0] == '\0')
		return lm_error_set(LM_EINVALID, "upload target '%s' names a directory, not a file", final_path);
	if ((rc = lm_random_hex(hex, 8)) < 0)
		return lm_error_prefix("a temporary name for %s: ", final_path);
	n = dir_len + 1 + strlen(base) + 4 + 16 + 1;
	if ((*out = malloc(n)) == NULL)
		return lm_error_nomem();
	snprintf(*out, n, "%.*s.%s.lm-%s", (int)dir_len, final_path, base, hex);
	return 0;
}

/* SFTP version 3 reports a full disk as a plain failure; statvfs@openssh.com tells them apart. */
static int write_failed(lm_ssh *ssh, LIBSSH2_SFTP_HANDLE *h, const char *tmp, size_t left)
{
	LIBSSH2_SFTP_STATVFS vfs;
	unsigned long long avail;
	int protocol = libssh2_session_last_errno(ssh->session) == LIBSSH2_ERROR_SFTP_PROTOCOL &&
	    libssh2_sftp_last_error(ssh->sftp) == LIBSSH2_FX_FAILURE;
	int rc = sftp_fail(ssh, "writing", tmp);

	if (protocol && libssh2_sftp_fstatvfs(h, &vfs) == 0) {
		avail = (unsigned long long)vfs.f_bavail * (unsigned long long)vfs.f_frsize;
		if (avail < left)
			return lm_error_set(LM_EREMOTE, "VM '%s': writing %s: the guest's disk is full (%llu bytes free, "
			    "%zu more needed); free some space in the guest", ssh->vm, tmp, avail, left);
	}
	return rc;
}

static int write_all(lm_ssh *ssh, LIBSSH2_SFTP_HANDLE *h, const char *tmp, const uint8_t *bytes, size_t len)
{
	size_t done = 0, chunk;
	ssize_t n;

	while (done < len) {
		chunk = len - done < IO_CHUNK * 4 ? len - done : IO_CHUNK * 4;
		n = libssh2_sftp_write(h, (const char *)bytes + done, chunk);
		if (n < 0)
			return write_failed(ssh, h, tmp, len - done);
		done += (size_t)n;
	}
	return 0;
}

int lm_ssh_upload(lm_ssh *ssh, const void *bytes, size_t len, const char *remote_path, int mode)
{
	LIBSSH2_SFTP_HANDLE *h = NULL;
	LIBSSH2_SFTP_ATTRIBUTES attrs;
	uint8_t want[32], got[32];
	char *tmp = NULL, want_hex[65], got_hex[65];
	uint64_t size = 0;
	int rc, created = 0;

	if (remote_path == NULL || remote_path[0] == '\0' || (bytes == NULL && len > 0))
		return lm_error_set(LM_EINVALID, "lm_ssh_upload: bytes and a remote path are required");
	if (mode < 0 || mode > 07777)
		return lm_error_set(LM_EINVALID, "lm_ssh_upload: mode %o is not a file mode", (unsigned)mode);
	if (ssh != NULL && ssh->local)
		return lm_ssh_local_upload(bytes, len, remote_path, mode);
	if ((rc = sftp_open_session(ssh)) < 0)
		return rc;
	if ((rc = temp_name(remote_path, &tmp)) < 0)
		return rc;
	lm_sha256(bytes, len, want);

	h = sftp_open(ssh->sftp, tmp, LIBSSH2_FXF_WRITE | LIBSSH2_FXF_CREAT | LIBSSH2_FXF_EXCL, 0600);
	if (h == NULL) {
		rc = sftp_fail(ssh, "creating", tmp);
		goto fail;
	}
	created = 1;
	if ((rc = write_all(ssh, h, tmp, bytes, len)) < 0)
		goto fail;
	/* fsync@openssh.com: the bytes are on the guest's disk before they take the final name. */
	if (libssh2_sftp_fsync(h) != 0 && libssh2_session_last_errno(ssh->session) != LIBSSH2_ERROR_SFTP_PROTOCOL) {
		rc = sftp_fail(ssh, "flushing", tmp);
		goto fail;
	}
	if (libssh2_sftp_close(h) != 0) {
		h = NULL;
		rc = sftp_fail(ssh, "closing", tmp);
		goto fail;
	}
	h = NULL;

	if ((rc = hash_remote(ssh, tmp, got, &size)) < 0)
		goto fail;
	if (size != len || memcmp(want, got, sizeof(got)) != 0) {
		lm_sha256_hex(want, want_hex);
		lm_sha256_hex(got, got_hex);
		rc = lm_error_set(LM_EREMOTE,
		    "VM '%s': %s was not stored intact (sent %zu bytes, SHA-256 %s; read back %llu bytes, SHA-256 %s); "
		    "check the guest's disk", ssh->vm, remote_path, len, want_hex, (unsigned long long)size, got_hex);
		goto fail;
	}
	memset(&attrs, 0, sizeof(attrs));
	attrs.flags = LIBSSH2_SFTP_ATTR_PERMISSIONS;
	attrs.permissions = (unsigned long)mode;
	if (sftp_stat(ssh->sftp, tmp, LIBSSH2_SFTP_SETSTAT, &attrs) != 0) {
		rc = sftp_fail(ssh, "setting the mode of", tmp);
		goto fail;
	}
	if (libssh2_sftp_rename_ex(ssh->sftp, tmp, (unsigned int)strlen(tmp), remote_path,
	        (unsigned int)strlen(remote_path), LIBSSH2_SFTP_RENAME_OVERWRITE | LIBSSH2_SFTP_RENAME_ATOMIC |
	        LIBSSH2_SFTP_RENAME_NATIVE) != 0) {
		if (ssh->broken || libssh2_session_last_errno(ssh->session) != LIBSSH2_ERROR_SFTP_PROTOCOL) {
			rc = sftp_fail(ssh, "renaming into place", remote_path);
			goto fail;
		}
		/* SFTP v3 refuses to rename over an existing file: remove it, then rename. */
		if ((rc = remove_path(ssh, remote_path)) < 0)
			goto fail;
		if (libssh2_sftp_rename_ex(ssh->sftp, tmp, (unsigned int)strlen(tmp), remote_path,
		        (unsigned int)strlen(remote_path), LIBSSH2_SFTP_RENAME_OVERWRITE | LIBSSH2_SFTP_RENAME_ATOMIC |
		        LIBSSH2_SFTP_RENAME_NATIVE) != 0) {
			rc = sftp_fail(ssh, "renaming into place", remote_path);
			goto fail;
		}
	}
	lm_log(ssh->ctx, LM_LOG_DEBUG, "ssh: VM '%s': uploaded %s (%zu bytes, mode %o, SHA-256 verified)", ssh->vm,
	    remote_path, len, (unsigned)mode);
	free(tmp);
	return 0;
fail:
	if (h != NULL) {
		libssh2_session_set_timeout(ssh->session, ssh->broken ? 200 : 2000);
		libssh2_sftp_close(h);
	}
	if (created && !ssh->broken)
		sftp_unlink(ssh->sftp, tmp); /* best effort; the error above is what matters */
	lm_ssh_set_blocking_timeout(ssh, ssh->command_timeout);
	lm_error_prefix("upload of %s failed (nothing was left at that name): ", remote_path);
	free(tmp);
	return rc;
}

/* ---- reading (ssh_files.h) -------------------------------------------------------------- */

int lm_ssh_list_dir(lm_ssh *ssh, const char *remote_dir, size_t max_names, char ***names)
{
	LIBSSH2_SFTP_HANDLE *h;
	LIBSSH2_SFTP_ATTRIBUTES attrs;
	char entry[1024], **list = NULL, **grown;
	size_t count = 0;
	ssize_t n;
	int rc;

	if (remote_dir == NULL || remote_dir[0] == '\0' || names == NULL)
		return lm_error_set(LM_EINVALID, "lm_ssh_list_dir: a remote directory and an output are required");
	*names = NULL;
	if (ssh != NULL && ssh->local)
		return lm_ssh_local_list_dir(remote_dir, max_names, names);
	if ((rc = sftp_open_session(ssh)) < 0)
		return rc;
	h = libssh2_sftp_open_ex(ssh->sftp, remote_dir, path_len(remote_dir), 0, 0, LIBSSH2_SFTP_OPENDIR);
	if (h == NULL)
		return sftp_fail(ssh, "listing", remote_dir);
	if ((list = calloc(1, sizeof(*list))) == NULL) {
		rc = lm_error_nomem();
		goto done;
	}
	while ((n = libssh2_sftp_readdir(h, entry, sizeof(entry), &attrs)) > 0) {
		if (strcmp(entry, ".") == 0 || strcmp(entry, "..") == 0)
			continue;
		if (count == max_names) {
			rc = lm_error_set(LM_ETOOLARGE, "VM '%s': %s holds more than %zu entries (the limit)", ssh->vm,
			    remote_dir, max_names);
			goto done;
		}
		if ((grown = realloc(list, (count + 2) * sizeof(*list))) == NULL) {
			rc = lm_error_nomem();
			goto done;
		}
		list = grown;
		if ((list[count] = strdup(entry)) == NULL) {
			rc = lm_error_nomem();
			goto done;
		}
		list[++count] = NULL;
	}
	/* A name longer than the buffer is an error (LIBSSH2_ERROR_BUFFER_TOO_SMALL), not a cut name. */
	if (n < 0)
		rc = sftp_fail(ssh, "listing", remote_dir);
done:
	libssh2_sftp_close(h);
	if (rc < 0) {
		lm_strv_free(list);
		return rc;
	}
	*names = list;
	return 0;
}

int lm_ssh_read_file(lm_ssh *ssh, const char *remote_path, size_t max, char **data, size_t *len)
{
	LIBSSH2_SFTP_HANDLE *h;
	LIBSSH2_SFTP_ATTRIBUTES attrs;
	char chunk[IO_CHUNK / 4];
	lm_buf b;
	ssize_t n;
	double deadline = read_deadline(ssh);
	int rc = 0;

	if (remote_path == NULL || remote_path[0] == '\0' || data == NULL)
		return lm_error_set(LM_EINVALID, "lm_ssh_read_file: a remote path and an output are required");
	*data = NULL;
	if (len != NULL)
		*len = 0;
	if (ssh != NULL && ssh->local) {
		size_t ignored;
		return lm_ssh_local_read_file(remote_path, max, data, len != NULL ? len : &ignored);
	}
	if ((rc = sftp_open_session(ssh)) < 0)
		return rc;
	if ((rc = stat_regular(ssh, remote_path, &attrs)) < 0)
		return rc;
	if ((h = sftp_open(ssh->sftp, remote_path, LIBSSH2_FXF_READ, 0)) == NULL)
		return sftp_fail(ssh, "opening", remote_path);
	lm_buf_init(&b, max);
	/* The file may grow between the stat and the reads: the limit is checked on what is read. */
	while ((n = libssh2_sftp_read(h, chunk, sizeof(chunk))) > 0) {
		if ((rc = lm_buf_add(&b, chunk, (size_t)n)) < 0)
			break;
		if (deadline > 0 && lm_clock_monotonic() > deadline) {
			rc = read_too_long(ssh, remote_path);
			break;
		}
	}
	if (rc == LM_ETOOLARGE)
		rc = lm_error_set(LM_ETOOLARGE, "VM '%s': %s is larger than %zu bytes (the limit)", ssh->vm, remote_path, max);
	else if (rc == 0 && n < 0)
		rc = sftp_fail(ssh, "reading", remote_path);
	libssh2_sftp_close(h);
	if (rc == 0)
		rc = lm_buf_take(&b, data, len);
	lm_buf_dispose(&b);
	return rc;
}

/* The local machine's file from offset: what a `local` session reads. */
static int read_local_at(const char *path, uint64_t offset, size_t max, char **data, size_t *len)
{
	struct stat st;
	ssize_t n;
	int fd, rc = 0;

	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) < 0)
		return errno == ENOENT ? lm_error_set(LM_ENOTFOUND, "%s does not exist", path) :
		    lm_error_set(LM_EIO, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return lm_error_set(LM_EREMOTE, "%s is not a regular file", path);
	}
	if ((*data = malloc(max + 1)) == NULL) {
		close(fd);
		return lm_error_nomem();
	}
	if ((n = pread(fd, *data, max, (off_t)offset)) < 0)
		rc = lm_error_set(LM_EIO, "%s: %s", path, strerror(errno));
	close(fd);
	if (rc < 0) {
		free(*data);
		*data = NULL;
		return rc;
	}
	(*data)[n] = '\0';
	*len = (size_t)n;
	return 0;
}

int lm_ssh_read_file_at(lm_ssh *ssh, const char *remote_path, uint64_t offset, size_t max, char **data, size_t *len)
{
	LIBSSH2_SFTP_HANDLE *h;
	LIBSSH2_SFTP_ATTRIBUTES attrs;
	char *buf;
	size_t got = 0;
	ssize_t n = 0;
	int rc;

	if (remote_path == NULL || remote_path[0] == '\0' || data == NULL || len == NULL || max == 0)
		return lm_error_set(LM_EINVALID, "lm_ssh_read_file_at: a remote path, a size and an output are required");
	*data = NULL;
	*len = 0;
	if (ssh != NULL && ssh->local)
		return read_local_at(remote_path, offset, max, data, len);
	if ((rc = sftp_open_session(ssh)) < 0 || (rc = stat_regular(ssh, remote_path, &attrs)) < 0)
		return rc;
	if ((h = sftp_open(ssh->sftp, remote_path, LIBSSH2_FXF_READ, 0)) == NULL)
		return sftp_fail(ssh, "opening", remote_path);
	if ((buf = malloc(max + 1)) == NULL) {
		libssh2_sftp_close(h);
		return lm_error_nomem();
	}
	libssh2_sftp_seek64(h, offset);
	while (got < max && (n = libssh2_sftp_read(h, buf + got, max - got)) > 0)
		got += (size_t)n;
	libssh2_sftp_close(h);
	if (n < 0) {
		free(buf);
		return sftp_fail(ssh, "reading", remote_path);
	}
	buf[got] = '\0';
	*data = buf;
	*len = got;
	return 0;
}
