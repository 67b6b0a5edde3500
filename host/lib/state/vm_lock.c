/* One operation at a time per VM (state.h): a lock file per VM next to the journal. */
#include "state.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "context_internal.h"
#include "fs.h"
#include "sha256.h"
#include "text.h"

/* The largest pid a note can name: pid_t's (an int here and on macOS). */
#define PID_NOTE_MAX INT_MAX

struct lm_vm_lock {
	lm_context *ctx;
	int fd;
	int exclusive;
	char *path;
};

/* "vm-<32 hex>.lock": named after a hash of the VM's name, so that any valid name gives a short,
 * safe file name. */
static int lock_path(lm_context *ctx, const char *vm, char **out)
{
	uint8_t digest[32];
	char hex[65], name[48];

	lm_sha256(vm, strlen(vm), digest);
	lm_sha256_hex(digest, hex);
	snprintf(name, sizeof(name), "vm-%.32s.lock", hex);
	return lm_state_path(ctx, name, out);
}

/* Who holds it, from the notes the holders wrote: "pid 4242, enable", or the shared holders'
 * "pid 4242, run; pid 4250, run". A note whose process has ended is left out (a shared holder
 * cannot remove its own line without racing the others; the next exclusive holder clears them).
 * Printable bytes only. */
static void holder(const char *path, char *out, size_t len)
{
	char buf[512];
	const char *line;
	ssize_t n = -1;
	size_t i, k = 0, ln;
	off_t end, from = 0;
	uint64_t pid;
	lm_scan notes, l;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

	out[0] = '\0';
	if (fd >= 0) {
		/* The newest notes are the last: read the file's end, from a line's start. */
		if ((end = lseek(fd, 0, SEEK_END)) > (off_t)sizeof(buf) - 1)
			from = end - (off_t)sizeof(buf) + 1;
		n = pread(fd, buf, sizeof(buf) - 1, from);
		close(fd);
	}
	if (n <= 0)
		return;
	lm_scan_init(&notes, buf, (size_t)n);
	/* from the middle of the file: its first line is the end of one */
	if (from > 0 && lm_scan_line(&notes, &line, &ln) != 1)
		return;
	while (lm_scan_line(&notes, &line, &ln) != 0) {
		/* "pid N, OPERATION" (note_holder) */
		lm_scan_init(&l, line, ln);
		if (!lm_scan_skip(&l, "pid ") || lm_scan_u64(&l, PID_NOTE_MAX, &pid) < 0 || pid == 0 ||
		    (kill((pid_t)pid, 0) != 0 && errno != EPERM))
			continue;
		if (k > 0 && k + 2 < len) {
			out[k++] = ';';
			out[k++] = ' ';
		}
		for (i = 0; i < ln && k + 1 < len; i++)
			if (isprint((unsigned char)line[i]))
				out[k++] = line[i];
		out[k] = '\0';
	}
}

/* The note for whoever waits: an exclusive holder's replaces every other; a shared holder's is
 * added to those of the others holding it with it. Only a courtesy: the lock itself is the flock. */
static void note_holder(lm_vm_lock *lock, const char *path, const char *operation)
{
	char line[128];
	int n = snprintf(line, sizeof(line), "pid %ld, %s\n", (long)getpid(), operation);

	if (n < 0 || (size_t)n >= sizeof(line))
		return;
	if (lock->exclusive ? ftruncate(lock->fd, 0) != 0 || pwrite(lock->fd, line, (size_t)n, 0) != n :
	    lseek(lock->fd, 0, SEEK_END) < 0 || write(lock->fd, line, (size_t)n) != n)
		lm_log(lock->ctx, LM_LOG_DEBUG, "%s: cannot note the holder: %s", path, strerror(errno));
}

int lm_vm_lock_take(lm_vm_lock **out, lm_context *ctx, const char *vm, const char *operation, unsigned flags)
{
	lm_vm_lock *lock;
	char *path = NULL, who[160], waiting[224];
	int how = (flags & LM_VM_LOCK_SHARED) ? LOCK_SH : LOCK_EX, rc;

	*out = NULL;
	if ((rc = lock_path(ctx, vm, &path)) < 0)
		return rc;
	if ((lock = calloc(1, sizeof(*lock))) == NULL) {
		free(path);
		return lm_error_nomem();
	}
	lock->ctx = ctx;
	lock->exclusive = how == LOCK_EX;
	if ((rc = lm_fs_lock(path, how, 0, "this VM's lock", &lock->fd)) == LM_ELOCKED) {
		holder(path, who, sizeof(who));
		if ((flags & LM_VM_LOCK_TRY) || lm_context_options(ctx)->no_wait) {
			rc = lm_error_set(LM_ELOCKED, "VM '%s' is busy: another lume-metal process%s%s%s is working on it; "
			    "try again when it is done", vm, who[0] ? " (" : "", who, who[0] ? ")" : "");
			goto fail;
		}
		lm_log(ctx, LM_LOG_INFO, "%s: another lume-metal process%s%s%s is working on this VM; waiting for it "
		    "to finish", vm, who[0] ? " (" : "", who, who[0] ? ")" : "");
		snprintf(waiting, sizeof(waiting), "another lume-metal process%s%s%s is working on this VM", who[0] ? " (" : "",
		    who, who[0] ? ")" : "");
		rc = lm_fs_lock_wait(path, how, ctx, "this VM's lock", vm, waiting, &lock->fd);
	}
	if (rc < 0)
		goto fail;
	note_holder(lock, path, operation);
	lock->path = path;
	*out = lock;
	return 0;
fail:
	free(lock);
	free(path);
	return rc;
}

void lm_vm_lock_release(lm_vm_lock *lock)
{
	if (lock == NULL)
		return;
	if (lock->exclusive && ftruncate(lock->fd, 0) != 0)
		lm_log(lock->ctx, LM_LOG_DEBUG, "cannot clear a VM lock file: %s", strerror(errno));
	lm_fs_unlock(lock->fd); /* releases the flock */
	free(lock->path);
	free(lock);
}

void lm_vm_lock_drop(lm_vm_lock *lock)
{
	if (lock == NULL)
		return;
	/* Only an exclusive holder removes it: whoever waits finds it gone and takes the new one. */
	if (lock->exclusive && unlink(lock->path) != 0 && errno != ENOENT)
		lm_log(lock->ctx, LM_LOG_DEBUG, "%s: cannot remove the VM's lock file: %s", lock->path, strerror(errno));
	lm_vm_lock_release(lock);
}

void lm_vm_lock_remove(lm_context *ctx, const char *vm)
{
	lm_vm_lock *lock = NULL;
	char *path = NULL;

	/* No lock file, nothing to take (taking it would create one). */
	if (lock_path(ctx, vm, &path) < 0 || access(path, F_OK) != 0) {
		free(path);
		lm_error_clear();
		return;
	}
	free(path);
	if (lm_vm_lock_take(&lock, ctx, vm, "gc", LM_VM_LOCK_TRY) < 0) {
		lm_error_clear(); /* another process works on it: its file stays */
		return;
	}
	lm_vm_lock_drop(lock);
}
