/* One operation at a time per VM (state.h): a lock file per VM next to the journal. */
#include "state.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "context_internal.h"
#include "fs.h"
#include "sha256.h"

struct lm_vm_lock {
	lm_context *ctx;
	int fd;
	int exclusive;
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

/* Who holds it, from what an exclusive holder wrote: "pid 4242, enable"; printable bytes only. */
static void holder(const char *path, char *out, size_t len)
{
	char buf[96];
	ssize_t n = -1;
	size_t i, k = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	for (i = 0; n > 0 && i < (size_t)n && buf[i] != '\n' && k + 1 < len; i++)
		if (isprint((unsigned char)buf[i]))
			out[k++] = buf[i];
	out[k] = '\0';
}

int lm_vm_lock_take(lm_vm_lock **out, lm_context *ctx, const char *vm, const char *operation, unsigned flags)
{
	lm_vm_lock *lock;
	char *path = NULL, who[96], line[128], waiting[160];
	int how = (flags & LM_VM_LOCK_SHARED) ? LOCK_SH : LOCK_EX, rc, n;

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
	if (lock->exclusive) {
		n = snprintf(line, sizeof(line), "pid %ld, %s\n", (long)getpid(), operation);
		/* Only a courtesy for whoever waits: the lock itself is the flock. */
		if (ftruncate(lock->fd, 0) != 0 || pwrite(lock->fd, line, (size_t)n, 0) != n)
			lm_log(ctx, LM_LOG_DEBUG, "%s: cannot note the holder: %s", path, strerror(errno));
	}
	free(path);
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
	free(lock);
}
