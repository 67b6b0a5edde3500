/* What both of Lume's backends share (lume_common.h): the child environment, the storage
 * locations, and the identity read from them. */
#if defined(__linux__)
#define _GNU_SOURCE /* statx(2), for a directory's birth time */
#endif
#include "lume_common.h"
#include "text.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Every `lume` this library runs gets these (reference/lume.md): its log level at error, since
 * Lume prints its log lines on stdout among the JSON; and telemetry off, since every Lume command
 * records an event and flushes it for up to 1.5 s before it exits. */
const char *const lm_vm_lume_env[] = {"LUME_LOG_LEVEL=error", "LUME_TELEMETRY_ENABLED=0", NULL};

int lm_vm_lume_storage_add(lm_vm_lume_storage *st, const char *path)
{
	const char *home = NULL;
	size_t n = 0;
	char *copy;

	if (st->locations == NULL && (st->locations = calloc(LM_VM_MAX_LOCATIONS + 1, sizeof(char *))) == NULL)
		return lm_error_nomem();
	while (st->locations[n] != NULL)
		n++;
	if (path == NULL || n == LM_VM_MAX_LOCATIONS)
		return 0;
	/* Lume keeps its default as "~/.lume" (Settings.swift) and expands it for the user it runs as. */
	if (path[0] == '~' && (path[1] == '/' || path[1] == '\0')) {
		if (lm_paths_home(&home) < 0) {
			lm_error_clear(); /* a location that cannot be placed is not looked at */
			return 0;
		}
		copy = lm_format("%s%s", home, path + 1);
	} else {
		copy = strdup(path);
	}
	if (copy == NULL)
		return lm_error_nomem();
	st->locations[n] = copy;
	return 0;
}

int lm_vm_lume_storage_default(lm_vm_lume_storage *st)
{
	if (st->locations[0] != NULL)
		return 0;
	if (st->why[0] == '\0')
		lm_text_format_cut(st->why, sizeof(st->why), "it listed none");
	return lm_vm_lume_storage_add(st, "~/.lume");
}

void lm_vm_lume_storage_dispose(lm_vm_lume_storage *st)
{
	lm_strv_free(st->locations);
	st->locations = NULL;
}

int lm_vm_lume_identity(const lm_vm_lume_storage *st, const char *name, lm_vm_info *info, const char *listed_by)
{
	char *path;
	size_t i;
	int rc;

	for (i = 0; st->locations != NULL && st->locations[i] != NULL; i++) {
		if ((rc = lm_path_join(&path, st->locations[i], name, "config.json", NULL)) < 0) {
			if (rc == LM_ENOMEM)
				return rc;
			lm_vm_id_why(info, "%s", lm_error_last()->message);
			lm_error_clear();
			return 0;
		}
		rc = lm_vm_id_from_json(info, "lume", path, "macAddress", "machineIdentifier");
		free(path);
		if (rc != 0)
			return rc == LM_ENOMEM ? rc : 0;
	}
	if (st->why[0] != '\0')
		lm_vm_id_why(info, "no config.json for %s in ~/.lume, and Lume did not list its other storage locations: %s",
		    name, st->why);
	else
		lm_vm_id_why(info, "no config.json for %s in Lume's storage locations (%s)", name, listed_by);
	return 0;
}

int lm_vm_lume_stored(const lm_vm_lume_storage *st, const char *name)
{
	static const char *const files[] = {"config.json", "disk.img", "nvram.bin"};
	char *path;
	size_t i, f;
	int rc, found;

	for (i = 0; st->locations != NULL && st->locations[i] != NULL; i++) {
		for (f = 0, found = 1; f < sizeof(files) / sizeof(files[0]) && found; f++) {
			if ((rc = lm_path_join(&path, st->locations[i], name, files[f], NULL)) < 0) {
				if (rc == LM_ENOMEM)
					return rc;
				lm_error_clear(); /* a path too long for this location: not here */
				found = 0;
				break;
			}
			found = access(path, F_OK) == 0;
			free(path);
		}
		if (found)
			return 1;
	}
	return 0;
}

/* When `path` was created (its birth time), 0 when the file system does not keep it: statx(2)'s
 * STATX_BTIME on Linux (ext4, btrfs, xfs, tmpfs), stat(2)'s st_birthtimespec on macOS (APFS). */
static double born_at(const char *path)
{
#if defined(__linux__)
	struct statx sx;

	if (statx(AT_FDCWD, path, 0, STATX_BTIME, &sx) == 0 && (sx.stx_mask & STATX_BTIME) != 0)
		return (double)sx.stx_btime.tv_sec + (double)sx.stx_btime.tv_nsec / 1e9;
#elif defined(__APPLE__)
	struct stat st;

	if (stat(path, &st) == 0)
		return (double)st.st_birthtimespec.tv_sec + (double)st.st_birthtimespec.tv_nsec / 1e9;
#else
	(void)path;
#endif
	return 0;
}

int lm_vm_lume_created(const lm_vm_lume_storage *st, const char *name, double *at)
{
	char *dir, *config;
	size_t i;
	int rc;

	*at = 0;
	for (i = 0; st->locations != NULL && st->locations[i] != NULL; i++) {
		if ((rc = lm_path_join(&dir, st->locations[i], name, NULL)) < 0) {
			if (rc == LM_ENOMEM)
				return rc;
			lm_error_clear(); /* a path too long for this location: not here */
			continue;
		}
		if ((rc = lm_path_join(&config, dir, "config.json", NULL)) < 0) {
			free(dir);
			if (rc == LM_ENOMEM)
				return rc;
			lm_error_clear();
			continue;
		}
		if (access(config, F_OK) == 0)
			*at = born_at(dir);
		free(config);
		free(dir);
		if (*at > 0)
			return 0;
	}
	return 0;
}
