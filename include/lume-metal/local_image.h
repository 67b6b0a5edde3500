/* lume-metal: this machine's guest bundle installed into an image, and the environment a job step
 * exports to run its workload with the shim -- for CI runners that live inside the VM (Cirrus
 * Runners, Orchard, the GitLab Tart executor: the job runs in the guest; docs/ci-topologies.md).
 *
 * The installed place is PREFIX/lib/lume-metal (PREFIX default /usr/local, where Tart's image
 * templates put their shim):
 *
 *   PREFIX/lib/lume-metal/<bundle id>/   the bundle's files and manifest.json
 *   PREFIX/lib/lume-metal/current        -> <bundle id>, switched with one rename
 *
 * the same layout as a guest's ~/.local/share/lume-metal (docs/bundle-format.md). */
#ifndef LUME_METAL_LOCAL_IMAGE_H
#define LUME_METAL_LOCAL_IMAGE_H

#include "common.h"

#include <stddef.h>

#include "context.h"
#include "flow.h"
#include "profile.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LM_LOCAL_PREFIX_DEFAULT "/usr/local"
#define LM_LOCAL_SUBDIR "lib/lume-metal"
#include "local.h" /* LM_LOCAL_PATH_MAX */

typedef struct {
	size_t size;                        /* sizeof(lm_local_install_result) as the library was built */
	char dir[LM_LOCAL_PATH_MAX];        /* PREFIX/lib/lume-metal */
	char bundle_id[LM_BUNDLE_ID_MAX];   /* what `current` names now */
	char previous[LM_BUNDLE_ID_MAX];    /* what it named before ("" none) */
	int changed;                        /* 0: this bundle was installed already and every file verified */
	int repaired;                       /* its directory was there (damaged, or not `current`'s): replaced */
	int files;                          /* files written (the manifest included) */
	int removed;                        /* other entries removed (older bundles, interrupted installs) */
} lm_local_install_result;

/* Install this machine's bundle (ctx's bundle_dir when set, else the installation's bundle for
 * this machine's OS and architecture) into prefix (NULL: LM_LOCAL_PREFIX_DEFAULT; else an absolute
 * path), with the installer `enable` uses in a guest, run here. Every file is checked against the
 * manifest's SHA-256 before anything is created, and read back after its copy; the copy goes to a
 * staging directory beside the others, which becomes the bundle's directory with one rename
 * before `current` is switched with one more: a reader sees the old bundle or the new one, never
 * a mix. A damaged copy at the bundle's name is removed by its manifest first; a file of
 * someone else's inside it stops the install (LM_EREMOTE naming it; `current` untouched). Older
 * bundles and what interrupted installs left are removed by their manifests; anything else in
 * PREFIX/lib/lume-metal stays. Idempotent: an installed bundle that `current` names and that
 * verifies (every file a regular one with its mode and SHA-256) is left as it is. Refused
 * (LM_EINVALID, nothing changed): a relative prefix; a symbolic link, or a directory group or
 * others can write, at PREFIX, PREFIX/lib or PREFIX/lib/lume-metal (the shim is loaded into every
 * workload started with its environment). Commands run as `local` runs them: the account's login
 * shell. out->size must be set. */
LM_EXTERN(int) lm_local_install(lm_context *ctx, const char *prefix, lm_local_install_result *out);

/* The installed bundle's environment: the variables `run` gives a workload (the injection
 * variable, the profile's LUME_METAL_*, the children policy and, when record_dir is given, the
 * activation records' directory) and PATH with the bundle's tools and Homebrew's first. */
typedef struct lm_local_env lm_local_env;

/* Reads PREFIX/lib/lume-metal/current (prefix NULL: LM_LOCAL_PREFIX_DEFAULT) and verifies every
 * file there against its manifest (LM_ECORRUPT naming the file when one does not match;
 * LM_ENOBUNDLE when nothing is installed). profile NULL: the default profile. record_dir: NULL,
 * or an absolute path. */
LM_EXTERN(int) lm_local_env_open(lm_local_env **out, const char *prefix, const lm_profile *profile,
    const char *record_dir);
LM_EXTERN(size_t) lm_local_env_count(const lm_local_env *env);
/* Entry i (0 <= i < count): its name and value, valid until lm_local_env_free. */
LM_EXTERN(int) lm_local_env_entry(const lm_local_env *env, size_t i, const char **name, const char **value);
/* The bundle id `current` named. */
LM_EXTERN(const char *) lm_local_env_bundle_id(const lm_local_env *env);

/* Entry 0 is the injection variable (DYLD_INSERT_LIBRARIES, LD_PRELOAD). A process that loads
 * the shim drops it from that variable for its children (unless LUME_METAL_INHERIT=1), so it
 * reaches the workload only when set by the workload's parent itself: the shell that evaluates
 * the sh form, or `env` on the workload's command line. */
typedef enum {
	LM_LOCAL_ENV_SH = 0,     /* `export NAME='value'` lines, for eval in the step that starts the
	                            workload; PATH keeps "$PATH" */
	LM_LOCAL_ENV_GITHUB = 1  /* NAME=value lines for $GITHUB_ENV: every later step's shell starts with
	                            them, so the injection is LUME_METAL_INJECT=NAME=path, for
	                            `env "$LUME_METAL_INJECT" CMD`; PATH with this process's PATH at the end */
} lm_local_env_form;

/* The environment as text in the form asked (free with lm_free). */
LM_EXTERN(int) lm_local_env_format(const lm_local_env *env, lm_local_env_form form, char **out);
LM_EXTERN(void) lm_local_env_free(lm_local_env *env);

#ifdef __cplusplus
}
#endif

#endif
