/* Our own known_hosts, in <state dir>/known_hosts, in our own format (docs/security.md), read and
 * written by this file only:
 *
 *   # comment
 *   NAME KEY-TYPE BASE64-KEY [id=sha256:HEX] [COMMENT]
 *
 * `id=` is the VM's identity as its manager records it (lm_vm_info.vm_id), so that a pin follows
 * the VM and not its name: a name whose identity changed is a new VM (deleted and re-created, a
 * CI job's fresh clone) and its pin is replaced; the same identity with another key is refused.
 * Earlier versions wrote no id (they read it as the comment); such a pin gets one the next time
 * its key matches.
 *
 * one line per VM. Entries are keyed by the VM's name, not its address: Lume hands out addresses
 * by DHCP, so an address can change (or move to another VM) while the VM keeps its keys. The
 * address seen when a key was recorded is kept in the comment, for people reading the file.
 * The format is the plain-name subset of OpenSSH's, so files written by earlier lume-metal
 * versions (through libssh2) read as they are.
 *
 * We parse it ourselves: libssh2 1.10's parser silently dropped names of one or two characters
 * (so their keys were never checked) and over-read its heap on a malformed hashed line.
 *
 * A line we cannot read is never skipped: a skipped line could be the pin of the VM being checked,
 * so every check fails, naming the line, until it is fixed; forget-host still works and keeps it.
 *
 * Readers take no lock: the file is only ever replaced whole (lm_fs_write_atomic). Writers
 * (accept-new, forget-host) hold lm_fs_lock on known_hosts.lock, re-read the file under it, and
 * replace it, so that concurrent lume-metal processes never lose an entry. */
#include "ssh_internal.h"
#include "ssh_pins.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>

#include "fs.h"
#include "sha256.h"
#include "state.h"
#include "str.h"
#include "text.h"
#include "vm_name.h"

#define KH_FILE "known_hosts"
#define KH_LOCK "known_hosts.lock"
#define KH_LOCK_WAIT 10.0 /* seconds */
#define KH_MAX_BLOB 4096
#define KH_FILE_MAX (16u * 1024u * 1024u)
#define KH_TYPE_MAX 63
#define KH_HEADER "# lume-metal known hosts (docs/security.md): one line per VM, NAME KEY-TYPE BASE64-KEY [COMMENT]\n"

/* Host-key algorithms we accept, best first. ssh-rsa host keys are left out: OpenSSH servers
 * no longer offer ssh-rsa (SHA-1) signatures, the only RSA ones libssh2 1.10 can check. */
static const char *const key_types[] = {
	"ssh-ed25519", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521",
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

/* ---- the file ------------------------------------------------------------------------------ */

typedef struct {
	const char *text;      /* the whole line as read, without its '\n' (points into the data) */
	size_t len;
	size_t number;         /* 1-based */
	const char *first;     /* its first field (forget-host matches lines on it), or NULL */
	size_t first_len;
	int entry;             /* a valid entry: name, type and blob below */
	char name[LM_VM_NAME_MAX];
	char type[KH_TYPE_MAX + 1];
	uint8_t *blob;
	size_t blob_len;
	char vm_id[72];        /* the identity recorded with the key ("" none) */
	char *problem;         /* why this line is not a valid entry or comment; NULL when it is */
	int nomem;             /* it could not be read for want of memory */
} kh_line;

typedef struct {
	char *path;
	char *data;
	size_t len;
	kh_line *lines;
	size_t n;
} kh_file;

static void kh_free(kh_file *f)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		free(f->lines[i].blob);
		free(f->lines[i].problem);
	}
	free(f->lines);
	free(f->data);
	free(f->path);
	memset(f, 0, sizeof(*f));
}

/* Only a line that cannot be read carries a message: a file of 100,000 pins is not 100,000
 * message buffers. */
static void set_problem(kh_line *l, const char *fmt, ...) LM_PRINTF(2, 3);
static void set_problem(kh_line *l, const char *fmt, ...)
{
	va_list ap;

	free(l->problem);
	va_start(ap, fmt);
	l->problem = lm_vformat(fmt, ap);
	va_end(ap);
	l->nomem = l->problem == NULL;
}

static void parse_line(kh_line *l)
{
	const char *type, *key;
	size_t n = l->len, tn, kn;
	char shown[80], blob_type[KH_TYPE_MAX + 1];
	uint8_t blob[KH_MAX_BLOB];
	lm_scan fields;
	long blen;

	if (n > 0 && l->text[n - 1] == '\r')
		n--; /* a file edited on another system */
	if (memchr(l->text, '\0', l->len) != NULL) {
		set_problem(l, "it contains a NUL byte");
		return;
	}
	lm_scan_init(&fields, l->text, n);
	if (lm_scan_word(&fields, &l->first, &n) == 0 || l->first[0] == '#') {
		l->first = NULL; /* blank or a comment */
		return;
	}
	l->first_len = n;
	lm_text_quote(shown, sizeof(shown), l->first, n, 40);
	if (l->first[0] == '|') {
		set_problem(l, "a hashed host name (OpenSSH's HashKnownHosts), which lume-metal "
		    "does not use");
		return;
	}
	if (l->first[0] == '@') {
		set_problem(l, "an OpenSSH marker line (%s), which lume-metal does not use", shown);
		return;
	}
	/* The one rule: a line lume-metal wrote always meets it. */
	if (lm_vm_name_check(l->first, n) < 0) {
		set_problem(l, "%s", lm_error_last()->message);
		lm_error_clear();
		return;
	}
	memcpy(l->name, l->first, n);
	l->name[n] = '\0';
	if (lm_scan_word(&fields, &type, &tn) == 0 || lm_scan_word(&fields, &key, &kn) == 0) {
		set_problem(l, "VM '%s' has no key type and key", l->name);
		return;
	}
	if (tn > KH_TYPE_MAX) {
		set_problem(l, "VM '%s': the key type is too long", l->name);
		return;
	}
	memcpy(l->type, type, tn);
	l->type[tn] = '\0';
	blen = lm_b64_decode(key, kn, blob, KH_MAX_BLOB, 0);
	if (blen <= 0) {
		set_problem(l, "VM '%s': the key is not base64 of at most %d bytes", l->name,
		    KH_MAX_BLOB);
		return;
	}
	/* As long as the key: a buffer of the largest size per line made 100,000 pins 500 MB. */
	if ((l->blob = malloc((size_t)blen)) == NULL) {
		l->nomem = 1; /* not a fault of the line's */
		return;
	}
	memcpy(l->blob, blob, (size_t)blen);
	l->blob_len = (size_t)blen;
	lm_ssh_blob_type(l->blob, l->blob_len, blob_type, sizeof(blob_type));
	if (strcmp(blob_type, l->type) != 0) {
		lm_text_quote(shown, sizeof(shown), l->type, tn, 40);
		set_problem(l, "VM '%s': the key is not a '%s' key", l->name, shown);
		return;
	}
	if (lm_scan_word(&fields, &key, &kn) == 1 && kn > 3 && memcmp(key, "id=", 3) == 0 &&
	    kn - 3 < sizeof(l->vm_id)) {
		memcpy(l->vm_id, key + 3, kn - 3);
		l->vm_id[kn - 3] = '\0';
	}
	l->entry = 1;
}

/* Entries by name, then by line: a second entry of a name sorts right after its first. */
static int by_name_then_line(const void *a, const void *b)
{
	const kh_line *x = *(const kh_line *const *)a, *y = *(const kh_line *const *)b;
	int c = strcmp(x->name, y->name);

	return c != 0 ? c : x->number < y->number ? -1 : x->number > y->number;
}

/* One entry per VM: a second one is not a valid line (which of the two is the pin?). Found by
 * sorting, not by comparing every pair (100,000 lines took minutes). */
static int mark_duplicates(kh_file *f)
{
	kh_line **sorted;
	size_t i, n = 0, first = 0;

	if ((sorted = malloc((f->n ? f->n : 1) * sizeof(*sorted))) == NULL)
		return lm_error_nomem();
	for (i = 0; i < f->n; i++)
		if (f->lines[i].entry)
			sorted[n++] = &f->lines[i];
	qsort(sorted, n, sizeof(*sorted), by_name_then_line);
	for (i = 1; i < n; i++) {
		if (strcmp(sorted[i]->name, sorted[first]->name) != 0) {
			first = i;
			continue;
		}
		sorted[i]->entry = 0;
		set_problem(sorted[i], "a second entry for VM '%s' (the first is on line %zu); the file holds one entry "
		    "per VM", sorted[i]->name, sorted[first]->number);
		if (sorted[i]->nomem) {
			free(sorted);
			return lm_error_nomem();
		}
	}
	free(sorted);
	return 0;
}

/* Read and parse <state>/known_hosts (empty when it does not exist). */
static int kh_read(lm_context *ctx, kh_file *f)
{
	lm_scan scan;
	const char *line;
	size_t n, cap = 0;
	kh_line *grown;
	int rc;

	memset(f, 0, sizeof(*f));
	if ((rc = lm_state_path(ctx, KH_FILE, &f->path)) < 0)
		return rc;
	rc = lm_fs_read_file(f->path, KH_FILE_MAX, &f->data, &f->len);
	if (rc == LM_ENOTFOUND) {
		lm_error_clear();
		return 0;
	}
	if (rc < 0) {
		kh_free(f);
		return rc;
	}
	lm_scan_init(&scan, f->data, f->len);
	while (lm_scan_line(&scan, &line, &n) != 0) {
		if (f->n == cap) {
			cap = cap ? cap * 2 : 64;
			if ((grown = realloc(f->lines, cap * sizeof(*grown))) == NULL) {
				kh_free(f);
				return lm_error_nomem();
			}
			f->lines = grown;
		}
		memset(&f->lines[f->n], 0, sizeof(f->lines[0]));
		f->lines[f->n].text = line;
		f->lines[f->n].len = n;
		f->lines[f->n].number = f->n + 1;
		parse_line(&f->lines[f->n]);
		if (f->lines[f->n++].nomem) {
			kh_free(f);
			return lm_error_nomem();
		}
	}
	if ((rc = mark_duplicates(f)) < 0)
		kh_free(f);
	return rc;
}

static const kh_line *first_problem(const kh_file *f)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (f->lines[i].problem != NULL)
			return &f->lines[i];
	return NULL;
}

/* Every check refuses while a line cannot be read. */
static int kh_check_readable(const kh_file *f)
{
	const kh_line *bad = first_problem(f);

	if (bad == NULL)
		return 0;
	return lm_error_set(LM_ECORRUPT, "%s, line %zu: %s. Each line is NAME KEY-TYPE BASE64-KEY [COMMENT], one per "
	    "VM (docs/security.md); a line that cannot be read might be the key of the VM being checked, so no host "
	    "key is trusted until that line is corrected or deleted", f->path, bad->number, bad->problem);
}

static const kh_line *kh_find(const kh_file *f, const char *name)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (f->lines[i].entry && strcmp(f->lines[i].name, name) == 0)
			return &f->lines[i];
	return NULL;
}

/* Replace the file with `keep` lines of f (all when keep is NULL) plus `add` (may be NULL). */
static int kh_write(const kh_file *f, const unsigned char *keep, const char *add)
{
	lm_buf b;
	size_t i, len;
	char *text;
	int rc;

	/* No bigger than the file may be when it is read again. */
	lm_buf_init(&b, KH_FILE_MAX);
	if (f->n == 0)
		lm_buf_adds(&b, KH_HEADER);
	for (i = 0; i < f->n; i++) {
		if (keep != NULL && !keep[i])
			continue;
		lm_buf_add(&b, f->lines[i].text, f->lines[i].len);
		lm_buf_adds(&b, "\n");
	}
	if (add != NULL)
		lm_buf_adds(&b, add);
	if ((rc = lm_buf_take(&b, &text, &len)) < 0)
		return lm_error_prefix("%s: ", f->path);
	rc = lm_fs_write_atomic(f->path, text, len, 0600);
	free(text);
	return rc;
}

static int kh_lock(lm_context *ctx, int *fd)
{
	char *path;
	int rc;

	*fd = -1;
	if ((rc = lm_state_path(ctx, KH_LOCK, &path)) < 0)
		return rc;
	rc = lm_fs_lock(path, LOCK_EX, KH_LOCK_WAIT, "the known-hosts lock", fd);
	free(path);
	return rc;
}

/* ---- checking a server's key ----------------------------------------------------------------- */

int lm_ssh_hostkey_prefs(lm_ssh *ssh, char *buf, size_t size)
{
	const kh_line *e;
	kh_file f;
	size_t i, used = 0;
	int rc, first = -1;

	buf[0] = '\0';
	if ((rc = kh_read(ssh->ctx, &f)) < 0)
		return rc;
	if ((rc = kh_check_readable(&f)) < 0) {
		kh_free(&f);
		return rc;
	}
	/* The type recorded for this VM first, so that a server with several keys shows us the one we
	 * know (as OpenSSH does); then the rest, ed25519 first. */
	if ((e = kh_find(&f, ssh->vm)) != NULL)
		for (i = 0; i < N_KEY_TYPES; i++)
			if (strcmp(key_types[i], e->type) == 0)
				first = (int)i;
	kh_free(&f);
	if (first >= 0)
		used = strlen(key_types[first]);
	if (first >= 0 && lm_text_format(buf, size, "%s", key_types[first]) < 0)
		return lm_error_set(LM_ERROR, "host-key algorithm list longer than %zu bytes", size - 1);
	for (i = 0; i < N_KEY_TYPES; i++) {
		if ((int)i == first)
			continue;
		if (lm_text_format(buf + used, size - used, "%s%s", used ? "," : "", key_types[i]) < 0)
			return lm_error_set(LM_ERROR, "host-key algorithm list longer than %zu bytes", size - 1);
		used += strlen(buf + used);
	}
	return 0;
}

static int accepted_type(const char *type)
{
	size_t i;

	for (i = 0; i < N_KEY_TYPES; i++)
		if (strcmp(key_types[i], type) == 0)
			return 1;
	return 0;
}

int lm_ssh_verify_host_key(lm_ssh *ssh)
{
	const lm_options *opts = lm_context_options(ssh->ctx);
	const kh_line *e = NULL;
	const char *blob;
	char fp[64], type[64], old_fp[64], *b64 = NULL, *address = NULL, *line = NULL, id_field[80] = "";
	unsigned char *keep = NULL;
	size_t len, n, i;
	int htype, rc, lock_fd = -1, attempt, same = 0, new_vm = 0;
	kh_file f = {0};

	if ((blob = libssh2_session_hostkey(ssh->session, &len, &htype)) == NULL || len == 0 || len > KH_MAX_BLOB)
		return lm_ssh_fail(ssh, LIBSSH2_ERROR_HOSTKEY_INIT, "reading the server's host key");
	lm_ssh_fingerprint((const uint8_t *)blob, len, fp);
	lm_ssh_blob_type((const uint8_t *)blob, len, type, sizeof(type));
	if (!accepted_type(type))
		return lm_error_set(LM_EHOSTKEY, "VM '%s' (%s:%d): the server offered a host key of type '%s', which "
		    "lume-metal does not accept (use ed25519 or ECDSA host keys)", ssh->vm, ssh->address, ssh->port, type);
	if ((b64 = malloc(lm_b64_encoded_len(len, 1) + 1)) == NULL)
		return lm_error_nomem();
	lm_b64_encode((const uint8_t *)blob, len, b64, 1);

	for (attempt = 0; attempt < 2; attempt++) {
		/* First without the lock; again under it before recording. */
		if ((rc = kh_read(ssh->ctx, &f)) < 0 || (rc = kh_check_readable(&f)) < 0)
			goto out;
		same = new_vm = 0;
		if ((e = kh_find(&f, ssh->vm)) != NULL) {
			same = strcmp(e->type, type) == 0 && e->blob_len == len && memcmp(e->blob, blob, len) == 0;
			/* Another identity than the pin's: the pinned VM is gone and this is a new one. */
			new_vm = ssh->vm_id[0] != '\0' && e->vm_id[0] != '\0' && strcmp(e->vm_id, ssh->vm_id) != 0;
			if (same && !new_vm && (e->vm_id[0] != '\0' || ssh->vm_id[0] == '\0')) {
				lm_log(ssh->ctx, LM_LOG_DEBUG, "ssh: VM '%s' host key %s %s matches %s", ssh->vm, type, fp, f.path);
				rc = 0;
				goto out;
			}
			lm_ssh_fingerprint(e->blob, e->blob_len, old_fp);
		}
		if (e != NULL && !same && !new_vm && e->vm_id[0] != '\0' && ssh->vm_id[0] != '\0') {
			/* Its manager says it is the very VM the key was pinned for: not a re-created one. */
			rc = lm_error_set(LM_EHOSTKEY,
			    "VM '%s' (%s:%d): the SSH host key has CHANGED while the VM's identity has not, and the "
			    "connection was refused.\n"
			    "  recorded: %s %s\n"
			    "  offered:  %s %s\n"
			    "  identity: %s, the same as when the key was recorded\n"
			    "Its VM manager records the same VM as before, so this is not a new VM under a known name: "
			    "either someone is intercepting the connection (man-in-the-middle), or this VM made new "
			    "host keys (re-installed, its keys removed, or a clone of the same source or image, which "
			    "keeps its identity, whose guest made its own). Compare the offered key with the one inside "
			    "the VM (ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub): only when they match forget it; "
			    "once the old key is forgotten, the next connection records the new one. Known hosts: %s, "
			    "line %zu",
			    ssh->vm, ssh->address, ssh->port, e->type, old_fp, type, fp, ssh->vm_id, f.path, e->number);
			goto out;
		}
		if (e != NULL && !same && !new_vm) {
			rc = lm_error_set(LM_EHOSTKEY,
			    "VM '%s' (%s:%d): the SSH host key has CHANGED and the connection was refused.\n"
			    "  recorded: %s %s\n"
			    "  offered:  %s %s\n"
			    "Someone could be intercepting the connection (man-in-the-middle), or the VM was re-created "
			    "or re-installed and made new host keys; once the old key is forgotten, the next connection "
			    "records the new one. Known hosts: %s, line %zu",
			    ssh->vm, ssh->address, ssh->port, e->type, old_fp, type, fp, f.path, e->number);
			goto out;
		}
		if (opts->host_key_policy == LM_HOST_KEY_STRICT && !same) {
			rc = lm_error_set(LM_EHOSTKEY,
			    "VM '%s' (%s:%d): its SSH host key is not known%s and the host key policy is strict; the "
			    "connection was refused.\n"
			    "  offered: %s %s\n"
			    "Compare it with the key inside the VM (ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub), "
			    "before recording it (policy accept-new) in %s",
			    ssh->vm, ssh->address, ssh->port, new_vm ? " (a new VM under this name: its identity changed)" : "",
			    type, fp, f.path);
			goto out;
		}
		if (attempt == 0) {
			kh_free(&f);
			if ((rc = kh_lock(ssh->ctx, &lock_fd)) < 0)
				goto out;
		}
	}
	/* accept-new: record it, under the lock, in the file just re-read. The address comes from the
	 * VM manager: sanitised, so that it cannot end the line. */
	if ((address = lm_text_sanitized(ssh->address, strlen(ssh->address), 0)) == NULL) {
		rc = lm_error_nomem();
		goto out;
	}
	n = strlen(ssh->vm) + strlen(type) + strlen(b64) + strlen(address) + 64;
	if ((line = malloc(n + sizeof(id_field))) == NULL) {
		rc = lm_error_nomem();
		goto out;
	}
	if (ssh->vm_id[0] != '\0')
		snprintf(id_field, sizeof(id_field), "id=%s ", ssh->vm_id);
	snprintf(line, n + sizeof(id_field), "%s %s %s %sfirst seen at %s port %d\n", ssh->vm, type, b64, id_field, address,
	    ssh->port);
	/* The VM's old pin goes in the same write (a new VM, or a pin without its identity yet). */
	if (e != NULL) {
		if ((keep = calloc(f.n + 1, 1)) == NULL) {
			rc = lm_error_nomem();
			goto out;
		}
		for (i = 0; i < f.n; i++)
			keep[i] = &f.lines[i] != e;
	}
	lm_fs_remove_stale_temps(f.path);
	if ((rc = kh_write(&f, keep, line)) < 0)
		goto out;
	if (e == NULL)
		lm_log(ssh->ctx, LM_LOG_INFO, "VM '%s': first contact, recorded its SSH host key %s %s in %s", ssh->vm, type,
		    fp, f.path);
	else if (new_vm)
		lm_log(ssh->ctx, LM_LOG_WARN, "VM '%s' is a new VM under a known name (its identity changed: deleted and "
		    "re-created, or a new clone); its host-key pin was replaced: was %s %s, now %s %s", ssh->vm, e->type,
		    old_fp, type, fp);
	else
		lm_log(ssh->ctx, LM_LOG_DEBUG, "ssh: VM '%s': its pin now records the VM's identity", ssh->vm);
	rc = 0;
out:
	free(keep);
	lm_fs_unlock(lock_fd);
	kh_free(&f);
	free(line);
	free(address);
	free(b64);
	return rc;
}

int lm_ssh_forget_hosts(lm_context *ctx, char *const *sorted, size_t count, unsigned char *removed, int dry_run)
{
	unsigned char *keep = NULL;
	const kh_line *bad;
	kh_file f = {0};
	size_t i, k;
	int rc, lock_fd = -1, gone = 0;
	char name[LM_VM_NAME_MAX];

	if (!dry_run && (rc = kh_lock(ctx, &lock_fd)) < 0)
		return rc;
	if ((rc = kh_read(ctx, &f)) < 0)
		goto out;
	if ((keep = malloc(f.n ? f.n : 1)) == NULL) {
		rc = lm_error_nomem();
		goto out;
	}
	/* Every line whose first field is one of the names goes, readable or not; every other line
	 * stays as it is, byte for byte, including lines that cannot be read. One pass, one write. */
	for (i = 0; i < f.n; i++) {
		keep[i] = 1;
		if (f.lines[i].first == NULL || f.lines[i].first_len >= sizeof(name))
			continue;
		memcpy(name, f.lines[i].first, f.lines[i].first_len);
		name[f.lines[i].first_len] = '\0';
		if ((k = lm_strv_find(sorted, count, name)) == count)
			continue;
		keep[i] = 0;
		gone++;
		if (removed != NULL)
			removed[k] = 1;
		free(f.lines[i].problem);
		f.lines[i].problem = NULL;
	}
	if (gone > 0 && !dry_run) {
		lm_fs_remove_stale_temps(f.path);
		if ((rc = kh_write(&f, keep, NULL)) < 0)
			goto out;
	}
	if ((bad = first_problem(&f)) != NULL)
		lm_log(ctx, LM_LOG_WARN, "%s, line %zu: %s; no host key is checked (so no VM is connected to) until that "
		    "line is corrected or deleted", f.path, bad->number, bad->problem);
	rc = gone;
out:
	free(keep);
	kh_free(&f);
	lm_fs_unlock(lock_fd);
	return rc;
}

int lm_ssh_forget_host(lm_context *ctx, const char *vm_name)
{
	char *one[1];
	int rc;

	if (ctx == NULL)
		return lm_error_set(LM_EINVALID, "lm_ssh_forget_host: a context is required");
	if ((rc = lm_vm_name_check(vm_name, vm_name != NULL ? strlen(vm_name) : 0)) < 0)
		return rc;
	one[0] = (char *)vm_name;
	return lm_ssh_forget_hosts(ctx, one, 1, NULL, 0);
}

int lm_ssh_pinned_vms(lm_context *ctx, char ***names)
{
	kh_file f = {0};
	size_t i, n = 0;
	int rc;

	*names = NULL;
	if ((rc = kh_read(ctx, &f)) < 0)
		return rc;
	for (i = 0; i < f.n; i++)
		if (f.lines[i].entry)
			n++;
	if (n > 0 && (*names = calloc(n + 1, sizeof(char *))) == NULL) {
		kh_free(&f);
		return lm_error_nomem();
	}
	for (i = 0, n = 0; i < f.n; i++)
		if (f.lines[i].entry && ((*names)[n++] = strdup(f.lines[i].name)) == NULL) {
			kh_free(&f);
			lm_strv_free(*names);
			*names = NULL;
			return lm_error_nomem();
		}
	kh_free(&f);
	return 0;
}
