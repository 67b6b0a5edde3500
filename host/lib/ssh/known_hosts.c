/* Our own known_hosts, in <state dir>/known_hosts (OpenSSH format, read and written by libssh2).
 *
 * Entries are keyed by the VM's name, not its address: Lume hands out addresses by DHCP, so an
 * address can change (or move to another VM) while the VM keeps its keys. The address seen when a
 * key was recorded is kept in the entry's comment, for people reading the file.
 *
 * Readers take no lock: the file is only ever replaced whole (temporary file, fsync, rename).
 * Writers (accept-new, forget-host) hold an exclusive flock on known_hosts.lock, re-read the file
 * under it, and replace it, so that concurrent lume-metal processes never lose an entry. */
#include "ssh_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sha256.h"

#define KH_FILE "known_hosts"
#define KH_LOCK "known_hosts.lock"
#define KH_LOCK_WAIT 10.0 /* seconds */
#define KH_MAX_BLOB 4096

/* Host-key algorithms we accept, best first. ssh-rsa host keys are left out: OpenSSH servers
 * no longer offer ssh-rsa (SHA-1) signatures, the only RSA ones libssh2 1.10 can check. */
static const struct {
	const char *name;
	int mask;
} key_types[] = {
	{"ssh-ed25519", LIBSSH2_KNOWNHOST_KEY_ED25519},
	{"ecdsa-sha2-nistp256", LIBSSH2_KNOWNHOST_KEY_ECDSA_256},
	{"ecdsa-sha2-nistp384", LIBSSH2_KNOWNHOST_KEY_ECDSA_384},
	{"ecdsa-sha2-nistp521", LIBSSH2_KNOWNHOST_KEY_ECDSA_521},
};
#define N_KEY_TYPES (sizeof(key_types) / sizeof(key_types[0]))

void lm_ssh_fingerprint(const uint8_t *blob, size_t len, char out[64])
{
	uint8_t digest[32];

	lm_sha256(blob, len, digest);
	memcpy(out, "SHA256:", 7);
	lm_b64_encode(digest, sizeof(digest), out + 7, 0);
}

void lm_ssh_blob_type(const uint8_t *blob, size_t len, char *out, size_t size)
{
	uint32_t n;

	out[0] = '\0';
	if (len < 4 || size == 0)
		return;
	n = (uint32_t)blob[0] << 24 | (uint32_t)blob[1] << 16 | (uint32_t)blob[2] << 8 | blob[3];
	if (n > len - 4 || n >= size)
		return;
	memcpy(out, blob + 4, n);
	out[n] = '\0';
}

int lm_ssh_check_vm_name(const char *name)
{
	const char *p;

	if (name == NULL || name[0] == '\0')
		return lm_error_set(LM_EINVALID, "a VM name is required");
	for (p = name; *p; p++) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '.' ||
		        *p == '_' || *p == '-'))
			return lm_error_set(LM_EINVALID, "VM name '%s' is not valid: use letters, digits, '.', '_' and '-' "
			    "(Lume's name:tag is written name_tag)", name);
	}
	if (strlen(name) > 255)
		return lm_error_set(LM_EINVALID, "VM name '%.40s...' is too long (255 characters at most)", name);
	return 0;
}

/* mkdir -p with mode 0700 for what we create. */
static int make_dirs(const char *dir)
{
	char *path, *p;
	struct stat st;
	int rc = 0;

	if (stat(dir, &st) == 0)
		return S_ISDIR(st.st_mode) ? 0 : lm_error_set(LM_EIO, "state directory %s exists but is not a directory", dir);
	if ((path = strdup(dir)) == NULL)
		return lm_error_nomem();
	for (p = path + 1; ; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;
		*p = '\0';
		if (mkdir(path, 0700) != 0 && errno != EEXIST) {
			rc = lm_error_set(LM_EIO, "cannot create the state directory %s: %s", path, strerror(errno));
			break;
		}
		*p = c;
		if (c == '\0')
			break;
	}
	free(path);
	return rc;
}

static int state_file(lm_context *ctx, const char *name, int create_dir, char **out)
{
	const char *dir = lm_context_state_dir(ctx);
	size_t n;
	int rc;

	*out = NULL;
	if (dir == NULL || dir[0] == '\0')
		return lm_error_set(LM_EINVALID, "no state directory is set");
	if (create_dir && (rc = make_dirs(dir)) < 0)
		return rc;
	n = strlen(dir) + strlen(name) + 2;
	if ((*out = malloc(n)) == NULL)
		return lm_error_nomem();
	snprintf(*out, n, "%s/%s", dir, name);
	return 0;
}

static int lock_take(lm_context *ctx, int *fd_out)
{
	char *path;
	double deadline = lm_clock_monotonic() + KH_LOCK_WAIT;
	int fd, rc;

	*fd_out = -1;
	if ((rc = state_file(ctx, KH_LOCK, 1, &path)) < 0)
		return rc;
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0) {
		rc = lm_error_set(LM_EIO, "cannot open %s: %s", path, strerror(errno));
		free(path);
		return rc;
	}
	while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		if ((errno != EWOULDBLOCK && errno != EINTR) || lm_clock_monotonic() > deadline) {
			rc = lm_error_set(LM_ELOCKED, "cannot lock %s within %.0f s: another lume-metal is changing "
			    "the known hosts; try again", path, KH_LOCK_WAIT);
			close(fd);
			free(path);
			return rc;
		}
		usleep(20000);
	}
	free(path);
	*fd_out = fd;
	return 0;
}

static void lock_release(int fd)
{
	if (fd >= 0)
		close(fd); /* releases the flock */
}

/* Load <state>/known_hosts into a collection (empty when the file does not exist). */
static int kh_load(lm_context *ctx, LIBSSH2_SESSION *session, LIBSSH2_KNOWNHOSTS **out, char **path_out)
{
	LIBSSH2_KNOWNHOSTS *hosts;
	struct stat st;
	char *path;
	int rc;

	*out = NULL;
	if ((rc = state_file(ctx, KH_FILE, 0, &path)) < 0)
		return rc;
	if ((hosts = libssh2_knownhost_init(session)) == NULL) {
		free(path);
		return lm_error_nomem();
	}
	if (stat(path, &st) == 0 &&
	    libssh2_knownhost_readfile(hosts, path, LIBSSH2_KNOWNHOST_FILE_OPENSSH) < 0) {
		rc = lm_error_set(LM_ECORRUPT, "%s cannot be read as a known_hosts file; fix or remove the "
		    "damaged line (lume-metal will record the keys again on next contact)", path);
		libssh2_knownhost_free(hosts);
		free(path);
		return rc;
	}
	*out = hosts;
	if (path_out != NULL)
		*path_out = path;
	else
		free(path);
	return 0;
}

/* Replace <state>/known_hosts with the collection: temporary file, fsync, rename, dir fsync. */
static int kh_save(lm_context *ctx, LIBSSH2_KNOWNHOSTS *hosts)
{
	char *path = NULL, *tmp = NULL;
	size_t n;
	int fd, rc;

	if ((rc = state_file(ctx, KH_FILE, 1, &path)) < 0)
		return rc;
	n = strlen(path) + 8;
	if ((tmp = malloc(n)) == NULL) {
		free(path);
		return lm_error_nomem();
	}
	snprintf(tmp, n, "%s.tmp", path); /* unique: we hold the lock */
	unlink(tmp);
	if (libssh2_knownhost_writefile(hosts, tmp, LIBSSH2_KNOWNHOST_FILE_OPENSSH) != 0) {
		rc = lm_error_set(LM_EIO, "cannot write %s", tmp);
		goto out;
	}
	if (chmod(tmp, 0600) != 0 || (fd = open(tmp, O_RDONLY | O_CLOEXEC)) < 0) {
		rc = lm_error_set(LM_EIO, "cannot prepare %s: %s", tmp, strerror(errno));
		goto out;
	}
	if (fsync(fd) != 0) {
		rc = lm_error_set(LM_EIO, "cannot write %s to disk: %s", tmp, strerror(errno));
		close(fd);
		goto out;
	}
	close(fd);
	if (rename(tmp, path) != 0) {
		rc = lm_error_set(LM_EIO, "cannot replace %s: %s", path, strerror(errno));
		goto out;
	}
	if ((fd = open(lm_context_state_dir(ctx), O_RDONLY | O_CLOEXEC)) >= 0) {
		fsync(fd);
		close(fd);
	}
out:
	if (rc < 0)
		unlink(tmp);
	free(tmp);
	free(path);
	return rc;
}

/* Entries recorded for `name` (plain host names; we never write hashed ones). */
typedef struct {
	int count;
	int match;                  /* one of them is exactly `key_b64` */
	char recorded_fp[64];       /* fingerprint of the first differing entry (same type preferred) */
	char recorded_type[64];
	int masks[N_KEY_TYPES + 1]; /* key types recorded, in file order */
	int n_masks;
} kh_lookup;

static void fingerprint_b64(const char *b64, char fp[64], char *type, size_t type_size)
{
	uint8_t blob[KH_MAX_BLOB];
	long n = lm_b64_decode(b64, strlen(b64), blob, sizeof(blob));

	if (n <= 0) {
		snprintf(fp, 64, "(unreadable key)");
		type[0] = '\0';
		return;
	}
	lm_ssh_fingerprint(blob, (size_t)n, fp);
	lm_ssh_blob_type(blob, (size_t)n, type, type_size);
}

static int kh_find(LIBSSH2_KNOWNHOSTS *hosts, const char *name, const char *key_b64, int key_mask, kh_lookup *res)
{
	struct libssh2_knownhost *e = NULL, *prev = NULL;
	int rc, i, same_type_found = 0;

	memset(res, 0, sizeof(*res));
	while ((rc = libssh2_knownhost_get(hosts, &e, prev)) == 0) {
		prev = e;
		if ((e->typemask & LIBSSH2_KNOWNHOST_TYPE_MASK) != LIBSSH2_KNOWNHOST_TYPE_PLAIN || e->name == NULL ||
		    strcmp(e->name, name) != 0)
			continue;
		res->count++;
		int mask = e->typemask & LIBSSH2_KNOWNHOST_KEY_MASK;
		for (i = 0; i < res->n_masks && res->masks[i] != mask; i++)
			;
		if (i == res->n_masks && res->n_masks < (int)(sizeof(res->masks) / sizeof(res->masks[0])))
			res->masks[res->n_masks++] = mask;
		if (key_b64 != NULL && e->key != NULL && strcmp(e->key, key_b64) == 0) {
			res->match = 1;
		} else if (e->key != NULL && (res->recorded_fp[0] == '\0' || (!same_type_found && mask == key_mask))) {
			fingerprint_b64(e->key, res->recorded_fp, res->recorded_type, sizeof(res->recorded_type));
			same_type_found = mask == key_mask;
		}
	}
	return rc < 0 ? lm_error_set(LM_ECORRUPT, "cannot walk the known hosts (libssh2 error %d)", rc) : 0;
}

int lm_ssh_hostkey_prefs(lm_ssh *ssh, char *buf, size_t size)
{
	LIBSSH2_KNOWNHOSTS *hosts;
	kh_lookup found;
	size_t i, used = 0;
	int k, rc, taken[N_KEY_TYPES] = {0};

	buf[0] = '\0';
	if ((rc = kh_load(ssh->ctx, ssh->session, &hosts, NULL)) < 0)
		return rc;
	rc = kh_find(hosts, ssh->vm, NULL, 0, &found);
	libssh2_knownhost_free(hosts);
	if (rc < 0)
		return rc;
	/* The types recorded for this VM first, so that a server with several keys shows us the one
	 * we know; then the rest, ed25519 first. */
	for (k = 0; k <= found.n_masks; k++) {
		for (i = 0; i < N_KEY_TYPES; i++) {
			if (taken[i] || (k < found.n_masks && key_types[i].mask != found.masks[k]))
				continue;
			taken[i] = 1;
			used += (size_t)snprintf(buf + used, size - used, "%s%s", used ? "," : "", key_types[i].name);
			if (used >= size)
				return lm_error_set(LM_ERROR, "host-key algorithm list too long");
		}
	}
	return 0;
}

static int mask_of_type(const char *type)
{
	size_t i;

	for (i = 0; i < N_KEY_TYPES; i++)
		if (strcmp(key_types[i].name, type) == 0)
			return key_types[i].mask;
	return 0;
}

int lm_ssh_verify_host_key(lm_ssh *ssh)
{
	const lm_options *opts = lm_context_options(ssh->ctx);
	LIBSSH2_KNOWNHOSTS *hosts = NULL;
	const char *blob;
	char fp[64], type[64], *b64 = NULL, *path = NULL, comment[320];
	size_t len;
	int htype, mask, rc, lock_fd = -1;
	kh_lookup found;

	if ((blob = libssh2_session_hostkey(ssh->session, &len, &htype)) == NULL || len == 0 || len > KH_MAX_BLOB)
		return lm_ssh_fail(ssh, LIBSSH2_ERROR_HOSTKEY_INIT, "reading the server's host key");
	lm_ssh_fingerprint((const uint8_t *)blob, len, fp);
	lm_ssh_blob_type((const uint8_t *)blob, len, type, sizeof(type));
	if ((mask = mask_of_type(type)) == 0)
		return lm_error_set(LM_EHOSTKEY, "VM '%s' (%s:%d): the server offered a host key of type '%s', which "
		    "lume-metal does not accept (use ed25519 or ECDSA host keys)", ssh->vm, ssh->address, ssh->port, type);
	if ((b64 = malloc(4 * ((len + 2) / 3) + 1)) == NULL)
		return lm_error_nomem();
	lm_b64_encode((const uint8_t *)blob, len, b64, 1);

	for (int attempt = 0; attempt < 2; attempt++) {
		/* First without the lock; again under it before recording. */
		if ((rc = kh_load(ssh->ctx, ssh->session, &hosts, &path)) < 0)
			goto out;
		if ((rc = kh_find(hosts, ssh->vm, b64, mask, &found)) < 0)
			goto out;
		if (found.match) {
			lm_log(ssh->ctx, LM_LOG_DEBUG, "ssh: VM '%s' host key %s %s matches %s", ssh->vm, type, fp, path);
			rc = 0;
			goto out;
		}
		if (found.count > 0) {
			rc = lm_error_set(LM_EHOSTKEY,
			    "VM '%s' (%s:%d): the SSH host key has CHANGED and the connection was refused.\n"
			    "  recorded: %s %s\n"
			    "  offered:  %s %s\n"
			    "Someone could be intercepting the connection (man-in-the-middle), or the VM was re-created "
			    "or re-installed and made new host keys; once the old key is forgotten, the next connection "
			    "records the new one. Known hosts: %s",
			    ssh->vm, ssh->address, ssh->port, found.recorded_type, found.recorded_fp, type, fp, path);
			goto out;
		}
		if (opts->host_key_policy == LM_HOST_KEY_STRICT) {
			rc = lm_error_set(LM_EHOSTKEY,
			    "VM '%s' (%s:%d): its SSH host key is not known and the host key policy is strict; the "
			    "connection was refused.\n"
			    "  offered: %s %s\n"
			    "Compare it with the key inside the VM (ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub), "
			    "before recording it (policy accept-new) in %s",
			    ssh->vm, ssh->address, ssh->port, type, fp, path);
			goto out;
		}
		if (attempt == 0) {
			libssh2_knownhost_free(hosts);
			hosts = NULL;
			free(path);
			path = NULL;
			if ((rc = lock_take(ssh->ctx, &lock_fd)) < 0)
				goto out;
		}
	}
	/* accept-new: record it, under the lock, in the collection just re-read. */
	snprintf(comment, sizeof(comment), "lume-metal: first seen at %s port %d", ssh->address, ssh->port);
	if (libssh2_knownhost_addc(hosts, ssh->vm, NULL, b64, strlen(b64), comment, strlen(comment),
	        LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_BASE64 | mask, NULL) != 0) {
		rc = lm_error_set(LM_ERROR, "VM '%s': cannot record its host key", ssh->vm);
		goto out;
	}
	if ((rc = kh_save(ssh->ctx, hosts)) < 0)
		goto out;
	lm_log(ssh->ctx, LM_LOG_INFO, "VM '%s': first contact, recorded its SSH host key %s %s in %s", ssh->vm, type,
	    fp, path);
	rc = 0;
out:
	lock_release(lock_fd);
	if (hosts != NULL)
		libssh2_knownhost_free(hosts);
	free(path);
	free(b64);
	return rc;
}

int lm_ssh_forget_host(lm_context *ctx, const char *vm_name)
{
	LIBSSH2_SESSION *session;
	LIBSSH2_KNOWNHOSTS *hosts = NULL;
	struct libssh2_knownhost *e = NULL, *next = NULL;
	int rc, lock_fd = -1, removed = 0, more;

	if (ctx == NULL)
		return lm_error_set(LM_EINVALID, "lm_ssh_forget_host: a context is required");
	if ((rc = lm_ssh_check_vm_name(vm_name)) < 0)
		return rc;
	/* libssh2 ties a known-hosts collection to a session; this one never connects. */
	lm_ssh_global_init();
	if ((session = libssh2_session_init()) == NULL)
		return lm_error_nomem();
	if ((rc = lock_take(ctx, &lock_fd)) < 0)
		goto out;
	if ((rc = kh_load(ctx, session, &hosts, NULL)) < 0)
		goto out;
	more = libssh2_knownhost_get(hosts, &e, NULL) == 0;
	while (more) {
		more = libssh2_knownhost_get(hosts, &next, e) == 0;
		if ((e->typemask & LIBSSH2_KNOWNHOST_TYPE_MASK) == LIBSSH2_KNOWNHOST_TYPE_PLAIN && e->name != NULL &&
		    strcmp(e->name, vm_name) == 0) {
			if (libssh2_knownhost_del(hosts, e) != 0) {
				rc = lm_error_set(LM_ERROR, "cannot remove a known host entry of VM '%s'", vm_name);
				goto out;
			}
			removed++;
		}
		e = next;
	}
	if (removed > 0 && (rc = kh_save(ctx, hosts)) < 0)
		goto out;
	rc = removed;
out:
	if (hosts != NULL)
		libssh2_knownhost_free(hosts);
	lock_release(lock_fd);
	libssh2_session_free(session);
	return rc;
}
