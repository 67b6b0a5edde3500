/* Authentication, in this order: the SSH agent, key files (--ssh-key, then ~/.ssh/id_ed25519 and
 * ~/.ssh/id_ecdsa), then a password: from $LUME_METAL_SSH_PASSWORD or --ssh-password-file when
 * one is given (a file that cannot be used is an error), else Lume's default password for its
 * `lume` account.
 *
 * Passwords live only in buffers of ours that are overwritten after use; they never reach a log
 * line, an error message or a child process. RSA keys are refused with an explanation: libssh2
 * 1.10 can only sign with ssh-rsa (SHA-1), which current OpenSSH servers, macOS's included, refuse. */
#include "ssh_internal.h"
#include "path.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file.h"
#include "secret.h"
#include "text.h"

#define LUME_DEFAULT_PASSWORD "lume" /* Lume's unattended images: user lume, password lume */
#define MAX_KEY_FILE (64 * 1024)
#define MAX_PASSWORD 1024

typedef enum { KEY_UNKNOWN, KEY_ED25519, KEY_ECDSA, KEY_RSA, KEY_DSA, KEY_NOT_A_KEY } key_kind;

static const char *const rsa_explanation =
    "is an RSA key, which lume-metal cannot use: libssh2 1.10 cannot sign with rsa-sha2-256/512, only "
    "with the old ssh-rsa (SHA-1) algorithm, which current OpenSSH servers, macOS's included, refuse. "
    "Use an ed25519 or ECDSA key instead (ssh-keygen -t ed25519, then add its .pub to "
    "~/.ssh/authorized_keys in the guest)";

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Read one SSH "string" at *off; bounds-checked. */
static int take_string(const uint8_t *buf, size_t len, size_t *off, const uint8_t **s, size_t *n)
{
	uint32_t l;

	if (len - *off < 4)
		return -1;
	l = be32(buf + *off);
	if (l > len - *off - 4)
		return -1;
	*s = buf + *off + 4;
	*n = l;
	*off += 4 + (size_t)l;
	return 0;
}

static key_kind kind_of_type(const uint8_t *s, size_t n)
{
	if (n == 11 && memcmp(s, "ssh-ed25519", 11) == 0)
		return KEY_ED25519;
	if (n >= 10 && memcmp(s, "ecdsa-sha2", 10) == 0)
		return KEY_ECDSA;
	if (n == 7 && memcmp(s, "ssh-rsa", 7) == 0)
		return KEY_RSA;
	if (n == 7 && memcmp(s, "ssh-dss", 7) == 0)
		return KEY_DSA;
	return KEY_UNKNOWN;
}

/* The OpenSSH private key format keeps the public key (hence the type) and the cipher in clear. */
static key_kind classify_openssh(const char *text, int *encrypted)
{
	static const char begin[] = "-----BEGIN OPENSSH PRIVATE KEY-----";
	static const char magic[] = "openssh-key-v1"; /* followed by a NUL */
	const char *b = strstr(text, begin), *e;
	const uint8_t *s, *pub;
	uint8_t *raw;
	size_t off = 0, n, publen, poff = 0;
	long len;
	key_kind kind = KEY_NOT_A_KEY;

	b += sizeof(begin) - 1;
	if ((e = strstr(b, "-----END")) == NULL || (raw = malloc((size_t)(e - b))) == NULL)
		return KEY_NOT_A_KEY;
	len = lm_b64_decode(b, (size_t)(e - b), raw, (size_t)(e - b), 0);
	if (len > (long)sizeof(magic) && memcmp(raw, magic, sizeof(magic)) == 0) {
		off = sizeof(magic);
		if (take_string(raw, (size_t)len, &off, &s, &n) == 0) { /* cipher */
			*encrypted = !(n == 4 && memcmp(s, "none", 4) == 0);
			if (take_string(raw, (size_t)len, &off, &s, &n) == 0 && /* kdf name */
			    take_string(raw, (size_t)len, &off, &s, &n) == 0 && /* kdf options */
			    (size_t)len - off >= 4 && be32(raw + off) >= 1) {
				off += 4;
				if (take_string(raw, (size_t)len, &off, &pub, &publen) == 0 &&
				    take_string(pub, publen, &poff, &s, &n) == 0)
					kind = kind_of_type(s, n);
			}
		}
	}
	lm_secret_scrub(raw, (size_t)(e - b));
	free(raw);
	return kind;
}

/* What kind of private key a file holds (from its public parts only). The file is read through
 * the one reader (no hang on a FIFO, a size limit instead of a silent cut). */
static int classify_key_file(const char *path, key_kind *kind, int *encrypted)
{
	char *text = NULL;
	size_t used = 0;
	int rc;

	*kind = KEY_NOT_A_KEY;
	*encrypted = 0;
	if ((rc = lm_fs_read_file(path, MAX_KEY_FILE, &text, &used)) < 0)
		return rc;
	if (strstr(text, "-----BEGIN OPENSSH PRIVATE KEY-----") != NULL)
		*kind = classify_openssh(text, encrypted);
	else if (strstr(text, "-----BEGIN RSA PRIVATE KEY-----") != NULL)
		*kind = KEY_RSA;
	else if (strstr(text, "-----BEGIN EC PRIVATE KEY-----") != NULL)
		*kind = KEY_ECDSA;
	else if (strstr(text, "-----BEGIN DSA PRIVATE KEY-----") != NULL)
		*kind = KEY_DSA;
	else if (strstr(text, "PRIVATE KEY-----") != NULL)
		*kind = KEY_UNKNOWN; /* PKCS#8: let libssh2 decide */
	if (*kind != KEY_UNKNOWN && *kind != KEY_NOT_A_KEY && strstr(text, "ENCRYPTED") != NULL)
		*encrypted = 1;
	lm_secret_scrub(text, used);
	free(text);
	return 0;
}

int lm_ssh_check_key_option(const lm_context *ctx)
{
	const char *key = lm_context_options(ctx)->ssh_key;
	key_kind kind;
	int encrypted, rc;

	if (key == NULL || key[0] == '\0')
		return 0;
	if ((rc = classify_key_file(key, &kind, &encrypted)) < 0)
		return lm_error_prefix("SSH key file: ");
	if (kind == KEY_RSA)
		return lm_error_set(LM_EUNSUPPORTED, "SSH key file %s %s", key, rsa_explanation);
	if (kind == KEY_DSA)
		return lm_error_set(LM_EUNSUPPORTED, "SSH key file %s is a DSA key, which OpenSSH no longer accepts; use an "
		    "ed25519 or ECDSA key (ssh-keygen -t ed25519)", key);
	if (kind == KEY_NOT_A_KEY)
		return lm_error_set(LM_EINVALID, "SSH key file %s is not a private key (expected an ed25519 or ECDSA key in "
		    "OpenSSH format; pass the private key, not the .pub)", key);
	return 0;
}

/* What was tried, for the final message (no secrets in it). */
typedef struct {
	char text[768];
	size_t used;
} tried_list;

static void tried_add(tried_list *t, const char *fmt, ...) LM_PRINTF(2, 3);
static void tried_add(tried_list *t, const char *fmt, ...)
{
	char item[512];
	va_list ap;
	int n;

	if (t->used >= sizeof(t->text) - 1)
		return; /* already full and marked */
	va_start(ap, fmt);
	n = vsnprintf(item, sizeof(item), fmt, ap);
	va_end(ap);
	lm_text_mark_cut(item, sizeof(item), n);
	n = snprintf(t->text + t->used, sizeof(t->text) - t->used, "%s%s", t->used > 0 ? "; " : "", item);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(t->text) - t->used) {
		lm_text_mark_cut(t->text + t->used, sizeof(t->text) - t->used, n); /* the list ends in "..." */
		t->used = sizeof(t->text) - 1;
		return;
	}
	t->used += (size_t)n;
}

/* A failed attempt that took the connection down ends authentication. */
static int lost(lm_ssh *ssh, int rc)
{
	if (rc == LIBSSH2_ERROR_SOCKET_SEND || rc == LIBSSH2_ERROR_SOCKET_RECV || rc == LIBSSH2_ERROR_SOCKET_DISCONNECT ||
	    rc == LIBSSH2_ERROR_TIMEOUT || rc == LIBSSH2_ERROR_SOCKET_TIMEOUT) {
		lm_ssh_fail(ssh, rc, "authentication");
		if (rc == LIBSSH2_ERROR_SOCKET_DISCONNECT || rc == LIBSSH2_ERROR_SOCKET_RECV)
			lm_error_prefix("the server closed the connection during authentication (too many keys offered "
			    "for its MaxAuthTries?): ");
		return 1;
	}
	return 0;
}

static int try_agent(lm_ssh *ssh, const char *user, tried_list *tried, int *done)
{
	LIBSSH2_AGENT *agent;
	struct libssh2_agent_publickey *id = NULL, *prev = NULL;
	const char *sock = getenv("SSH_AUTH_SOCK");
	int rc, offered = 0, result = 0;
	char type[64];

	if (sock == NULL || sock[0] == '\0')
		return 0;
	if ((agent = libssh2_agent_init(ssh->session)) == NULL)
		return 0;
	if (libssh2_agent_connect(agent) != 0) {
		lm_log(ssh->ctx, LM_LOG_DEBUG, "ssh: the SSH agent at %s does not answer; skipped", sock);
		libssh2_agent_free(agent);
		return 0;
	}
	if (libssh2_agent_list_identities(agent) == 0) {
		while (libssh2_agent_get_identity(agent, &id, prev) == 0) {
			prev = id;
			lm_ssh_blob_type(id->blob, id->blob_len, type, sizeof(type));
			if (strcmp(type, "ssh-rsa") == 0 || strcmp(type, "ssh-dss") == 0) {
				lm_log(ssh->ctx, LM_LOG_DEBUG, "ssh: agent key '%s' is %s, which libssh2 1.10 cannot use; skipped",
				    id->comment != NULL ? id->comment : "", type);
				continue;
			}
			offered++;
			rc = libssh2_agent_userauth(agent, user, id);
			if (rc == 0) {
				lm_log(ssh->ctx, LM_LOG_DEBUG, "ssh: VM '%s': logged in with agent key '%s'", ssh->vm,
				    id->comment != NULL ? id->comment : "");
				*done = 1;
				break;
			}
			if (lost(ssh, rc)) {
				result = lm_error_last()->code;
				break;
			}
		}
	}
	tried_add(tried, "ssh-agent (%s)", offered == 1 ? "1 usable key" : offered == 0 ? "no usable key" : "several keys");
	libssh2_agent_disconnect(agent);
	libssh2_agent_free(agent);
	return result;
}

static int try_key_file(lm_ssh *ssh, const char *user, const char *path, int explicit, tried_list *tried, int *done)
{
	key_kind kind;
	int encrypted, rc;

	rc = classify_key_file(path, &kind, &encrypted);
	if (rc == LM_ENOTFOUND && !explicit) {
		lm_error_clear();
		return 0;
	}
	if (rc < 0) {
		lm_log(ssh->ctx, LM_LOG_DEBUG, "ssh: cannot read key file: %s", lm_error_last()->message);
		tried_add(tried, "%s (unreadable)", path);
		lm_error_clear();
		return 0;
	}
	if (kind == KEY_RSA || kind == KEY_DSA || kind == KEY_NOT_A_KEY) {
		tried_add(tried, "%s (not an ed25519/ECDSA key; skipped)", path);
		return 0;
	}
	if (encrypted) {
		tried_add(tried, "%s (protected by a passphrase: load it into ssh-agent)", path);
		return 0;
	}
	rc = libssh2_userauth_publickey_fromfile(ssh->session, user, NULL, path, NULL);
	if (rc == 0) {
		lm_log(ssh->ctx, LM_LOG_DEBUG, "ssh: VM '%s': logged in with key file %s", ssh->vm, path);
		*done = 1;
		return 0;
	}
	if (lost(ssh, rc))
		return lm_error_last()->code;
	tried_add(tried, "%s (refused)", path);
	return 0;
}

/* The first line of the password file into buf (MAX_PASSWORD bytes). A file that cannot be used
 * -- missing, unreadable, not a regular file (a FIFO would block), larger than MAX_PASSWORD bytes,
 * or with an empty first line -- is an error, never a reason to try another password. */
static int read_password_file(const lm_context *ctx, const char *path, char *buf, size_t size)
{
	struct stat st;
	char *data = NULL;
	size_t len = 0, n;
	int rc;

	buf[0] = '\0';
	if ((rc = lm_fs_read_file(path, size, &data, &len)) < 0)
		return lm_error_prefix("password file: ");
	n = strcspn(data, "\r\n");
	if (n == 0 || n >= size) {
		lm_secret_scrub(data, len);
		free(data);
		if (n == 0)
			return lm_error_set(LM_EINVALID, "password file %s: the first line is empty (expected the "
			    "password on it)", path);
		return lm_error_set(LM_EINVALID, "password file %s: the password is longer than %zu bytes", path,
		    size - 1);
	}
	memcpy(buf, data, n);
	buf[n] = '\0';
	lm_secret_scrub(data, len);
	free(data);
	if (stat(path, &st) == 0 && (st.st_mode & 077))
		lm_log(ctx, LM_LOG_WARN, "password file %s can be read by other users; chmod 600 it", path);
	return 0;
}

int lm_ssh_check_password_option(const lm_context *ctx)
{
	const char *file = lm_context_options(ctx)->ssh_password_file;
	char password[MAX_PASSWORD];
	int rc;

	if (file == NULL || file[0] == '\0')
		return 0;
	rc = read_password_file(ctx, file, password, sizeof(password));
	lm_secret_scrub(password, sizeof(password));
	return rc;
}

static int try_password(lm_ssh *ssh, const char *user, const char *password, const char *label, tried_list *tried,
    int *done)
{
	int rc = libssh2_userauth_password(ssh->session, user, password);

	if (rc == 0) {
		lm_log(ssh->ctx, LM_LOG_DEBUG, "ssh: VM '%s': logged in with the %s", ssh->vm, label);
		*done = 1;
		return 0;
	}
	if (lost(ssh, rc))
		return lm_error_last()->code;
	tried_add(tried, "%s (refused)", label);
	return 0;
}

int lm_ssh_authenticate(lm_ssh *ssh)
{
	const lm_options *opts = lm_context_options(ssh->ctx);
	/* The user: --ssh-user, else ~/.ssh/config's User for the address, else the manager's account. */
	const char *user = opts->ssh_user != NULL && opts->ssh_user[0] ? opts->ssh_user :
	    ssh->config.user[0] ? ssh->config.user : ssh->account;
	const char *home = NULL, *env;
	char *methods, path[4096], password[MAX_PASSWORD];
	tried_list tried;
	int rc = 0, done = 0;
	size_t i;
	static const char *const default_keys[] = {".ssh/id_ed25519", ".ssh/id_ecdsa"};

	memset(&tried, 0, sizeof(tried));
	methods = libssh2_userauth_list(ssh->session, user, (unsigned int)strlen(user));
	if (methods == NULL) {
		if (libssh2_userauth_authenticated(ssh->session))
			return 0;
		return lm_ssh_fail(ssh, libssh2_session_last_errno(ssh->session), "asking which login methods the server accepts");
	}
	if (strstr(methods, "publickey") != NULL) {
		if ((rc = try_agent(ssh, user, &tried, &done)) < 0 || done)
			return rc;
		if (opts->ssh_key != NULL && opts->ssh_key[0] != '\0' &&
		    ((rc = try_key_file(ssh, user, opts->ssh_key, 1, &tried, &done)) < 0 || done))
			return rc;
		/* ~/.ssh/config's IdentityFile for the address, after --ssh-key (the command line wins, as
		 * ssh -i's keys come before the configuration's); a file that is not there is skipped, as
		 * ssh(1) does. */
		if (ssh->config.identity[0] != '\0' &&
		    ((rc = try_key_file(ssh, user, ssh->config.identity, 0, &tried, &done)) < 0 || done))
			return rc;
		if (lm_paths_home(&home) == 0) {
			for (i = 0; i < sizeof(default_keys) / sizeof(default_keys[0]); i++) {
				if (lm_path_join_buf(path, sizeof(path), home, default_keys[i], NULL) < 0) {
					tried_add(&tried, "~/%s (HOME is longer than %zu bytes; skipped)", default_keys[i],
					    sizeof(path) - 40);
					continue;
				}
				if ((rc = try_key_file(ssh, user, path, 0, &tried, &done)) < 0 || done)
					return rc;
			}
		}
		lm_error_clear();
	}
	if (strstr(methods, "password") != NULL) {
		/* A password given by the user is the one to use: when it is refused, Lume's default is not
		 * tried behind the user's back. */
		env = ssh->ctx->ssh_password; /* taken from the environment by lm_context_new */
		if (env != NULL) {
			if (strlen(env) >= sizeof(password))
				return lm_error_set(LM_EINVALID, "$" LM_SSH_PASSWORD_ENV " is longer than %zu bytes", sizeof(password) - 1);
			memcpy(password, env, strlen(env) + 1);
			rc = try_password(ssh, user, password, "password from $" LM_SSH_PASSWORD_ENV, &tried, &done);
		} else if (opts->ssh_password_file != NULL && opts->ssh_password_file[0] != '\0') {
			if ((rc = read_password_file(ssh->ctx, opts->ssh_password_file, password, sizeof(password))) < 0) {
				lm_secret_scrub(password, sizeof(password));
				return rc;
			}
			rc = try_password(ssh, user, password, "password from the password file", &tried, &done);
		} else {
			/* The manager's images: lume/lume (Cua's), admin/admin (Cirrus Labs' Tart images). */
			rc = strcmp(ssh->account, "admin") == 0 ?
			    try_password(ssh, user, "admin", "the Tart images' default password", &tried, &done) :
			    try_password(ssh, user, LUME_DEFAULT_PASSWORD, "Lume's default password", &tried, &done);
		}
		lm_secret_scrub(password, sizeof(password));
		if (rc < 0 || done)
			return rc;
	}
	return lm_error_set(LM_EAUTH,
	    "VM '%s' (%s:%d): cannot log in as '%s'. Tried: %s. The server accepts: %s",
	    ssh->vm, ssh->address, ssh->port, user, tried.used > 0 ? tried.text : "nothing", methods);
}
