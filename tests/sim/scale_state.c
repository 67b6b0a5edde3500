/* Many gone VMs in a state directory (scale_state.h). */
#include "scale_state.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "state.h"

/* An ed25519 public key blob (any 32 bytes make one), base64: what a pin records. */
#define SCALE_KEY "AAAAC3NzaC1lZDI1NTE5AAAAIAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f"

void scale_gone_name(size_t i, char *buf, size_t size)
{
	snprintf(buf, size, "gone-%06zu", i);
}

static int one_vm(FILE *journal, FILE *pins, lm_context *ctx, const char *name, int first, int locks)
{
	lm_vm_lock *lock = NULL;

	fprintf(journal, "%s\"%s\":{\"status\":\"enabled\",\"manager\":\"lume-api\"}", first ? "" : ",", name);
	fprintf(pins, "%s ssh-ed25519 " SCALE_KEY " first seen at 127.0.0.1 port 22\n", name);
	if (!locks)
		return 0;
	if (lm_vm_lock_take(&lock, ctx, name, "test", LM_VM_LOCK_TRY) < 0) {
		fprintf(stderr, "lock of %s: %s\n", name, lm_error_last()->message);
		return -1;
	}
	lm_vm_lock_release(lock);
	return 0;
}

int scale_state_make(lm_context *ctx, size_t n, const char *const *live, int locks)
{
	char *journal_path = NULL, *pins_path = NULL, name[32];
	FILE *journal = NULL, *pins = NULL;
	size_t i;
	int rc = -1;

	if (lm_state_path(ctx, "state.json", &journal_path) < 0 || lm_state_path(ctx, "known_hosts", &pins_path) < 0 ||
	    (journal = fopen(journal_path, "w")) == NULL || (pins = fopen(pins_path, "w")) == NULL) {
		fprintf(stderr, "scale state: %s\n", lm_error_last()->message);
		goto out;
	}
	fprintf(journal, "{\"schema\":1,\"vms\":{");
	for (i = 0; i < n; i++) {
		scale_gone_name(i, name, sizeof(name));
		if (one_vm(journal, pins, ctx, name, i == 0, locks) < 0)
			goto out;
	}
	for (i = 0; live != NULL && live[i] != NULL; i++)
		if (one_vm(journal, pins, ctx, live[i], n == 0 && i == 0, locks) < 0)
			goto out;
	fprintf(journal, "}}\n");
	rc = 0;
out:
	if (journal != NULL && fclose(journal) != 0)
		rc = -1;
	if (pins != NULL && fclose(pins) != 0)
		rc = -1;
	free(journal_path);
	free(pins_path);
	return rc;
}

size_t scale_lock_files(lm_context *ctx)
{
	struct dirent *de;
	size_t n = 0, len;
	DIR *d = opendir(lm_context_state_dir(ctx));

	while (d != NULL && (de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		n += strncmp(de->d_name, "vm-", 3) == 0 && len > 5 && strcmp(de->d_name + len - 5, ".lock") == 0;
	}
	if (d != NULL)
		closedir(d);
	return n;
}

double scale_peak_mb(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) == 0 ? (double)ru.ru_maxrss / 1024.0 : 0;
}

double scale_cpu_seconds(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	    (double)ru.ru_stime.tv_usec / 1e6;
}
