/* Internal: what the two ways into Lume -- its HTTP API (vm_api.c) and its CLI (vm_cli.c) -- share
 * (lume_common.c): the environment of every `lume` child, Lume's VM storage locations, and a VM's
 * identity read from them. Neither backend calls the other's functions. */
#ifndef LM_VM_LUME_COMMON_H
#define LM_VM_LUME_COMMON_H

#include "vm_internal.h"

/* The environment of every `lume` child: quiet, telemetry off. */
extern const char *const lm_vm_lume_env[];

/* Lume's VM storage directories, asked once per backend: the CLI's `lume config storage list`,
 * the API's GET /lume/config/locations; ~/.lume alone when Lume does not list them (`why` says
 * why). Kept in each Lume backend's state. */
#define LM_VM_MAX_LOCATIONS 16
typedef struct {
	char **locations; /* NULL-terminated; NULL until asked */
	char why[256];    /* why they are ~/.lume alone: Lume did not list them ("" when it did) */
} lm_vm_lume_storage;

/* Add one of Lume's location paths (a leading ~ is this user's home); path NULL only makes the
 * list. Paths past LM_VM_MAX_LOCATIONS are not looked at. Fails only when out of memory. */
int lm_vm_lume_storage_add(lm_vm_lume_storage *st, const char *path);
/* When Lume listed none: its default ~/.lume alone, with the reason in st->why. */
int lm_vm_lume_storage_default(lm_vm_lume_storage *st);
void lm_vm_lume_storage_dispose(lm_vm_lume_storage *st);
/* The VM's identity from LOCATION/NAME/config.json in the listed locations (vm_id.c); `listed_by`
 * names how they were asked for the reason when none has it. Fails only when out of memory. */
int lm_vm_lume_identity(const lm_vm_lume_storage *st, const char *name, lm_vm_info *info, const char *listed_by);
/* 1 when one of the listed locations holds NAME/config.json, NAME/disk.img and NAME/nvram.bin:
 * what Lume itself takes for a VM that exists (VMDirectory.initialized(), which
 * VMController.validateVMExists asks; trycua/cua libs/lume, 0.5.3). 0 when none does: that proves
 * nothing (a location Lume did not list, a VM being made), so the caller asks Lume. < 0 only
 * when out of memory. */
int lm_vm_lume_stored(const lm_vm_lume_storage *st, const char *name);
/* *at: when NAME's directory (the first location whose NAME/config.json exists) was created, its
 * birth time; 0 when none is found or the file system does not keep birth times. A VM process
 * runs a VM whose files exist: none of it started before this (vm_process.h). < 0 only when out
 * of memory. */
int lm_vm_lume_created(const lm_vm_lume_storage *st, const char *name, double *at);

#endif
