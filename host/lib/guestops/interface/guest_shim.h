/* Internal (guestops): the shim in a guest -- its environment and command lines (guest.c), the
 * probe stock and shimmed, the exercise, and an enabled guest's one-round-trip confirmation
 * (exercise.c). */
#ifndef LM_GUEST_SHIM_H
#define LM_GUEST_SHIM_H

#include <stddef.h>

#include "lume-metal/flow.h"
#include "lume-metal/sys/ssh.h"
#include "guest_bundle.h"

/* Where Homebrew installs programs: Apple silicon, then Intel. Put on the workload's PATH. */
#define LM_GUEST_HOMEBREW_PATH "/opt/homebrew/bin:/usr/local/bin"

/* ---- guest.c: the shim's environment, its command lines, the probe ---- */

/* What the shim needs on a command line: injection variable and the LUME_METAL_* values. */
typedef struct {
	char injection[64];
	char shim_path[PATH_MAX];
	char probe_path[PATH_MAX];
	size_t nenv;
	lm_env_entry env[LM_PROFILE_ENV_MAX];
	/* A workload's (run, agent): LUME_METAL_INHERIT ("1", "0"; "" not set: the user's own or
	 * none), LUME_METAL_INHERIT_REASON, LUME_METAL_RECORD_DIR ("" not set); set with
	 * lm_shim_env_workload, given with the shim's variables (docs/activation-format.md). And what
	 * the shim's spawn rule needs to know of the guest: LUME_METAL_GUEST_SIP ("enabled",
	 * "disabled", "custom"; "" not known) and LUME_METAL_SHIM_ARM64E ("1", "0"; "" not known), set
	 * with lm_shim_env_guest. */
	char inherit[2];
	char inherit_reason[256];
	char record_dir[PATH_MAX];
	char guest_sip[16];
	char shim_arm64e[2];
} lm_shim_env;

int lm_shim_env_make(lm_shim_env *se, const lm_guest_facts *facts, const char *injection,
    const char *shim, const char *probe, const lm_profile *profile);
/* The same for the Tart image's own shim (LM_TART_SHIM_PATH, TART_METAL_* as its guest agent
 * sets them), the probe still ours. */
int lm_shim_env_tart(lm_shim_env *tart, const lm_shim_env *se);
/* The children policy and the record directory for a workload (either may be NULL: not set). */
int lm_shim_env_workload(lm_shim_env *se, const char *inherit, const char *reason, const char *record_dir);
/* The guest's SIP state (csrutil's word; "" or anything else: not known) and whether the installed
 * shim has an arm64e slice, for the shim's spawn rule. */
void lm_shim_env_guest(lm_shim_env *se, const char *sip, int shim_arm64e);
/* Those that are set, as names and values (at most LM_SHIM_WORKLOAD_VARS): the count. */
#define LM_SHIM_WORKLOAD_VARS 5
size_t lm_shim_env_workload_vars(const lm_shim_env *se, const char *names[LM_SHIM_WORKLOAD_VARS],
    const char *values[LM_SHIM_WORKLOAD_VARS]);
/* `env VAR=... argv...` quoted for the guest's shell. with_shim: 0 nothing before argv;
 * LM_SHIM_ALL the shim's variables and the bundle's PATH; LM_SHIM_PATH_ONLY the PATH alone (what
 * the workload's name is looked up in, without loading the shim). */
#define LM_SHIM_ALL 1
#define LM_SHIM_PATH_ONLY 2
int lm_shim_command(const lm_shim_env *se, int with_shim, const char *const *argv, size_t argc, char **out);
/* Run the probe's --report stock or shimmed. *diag gets the shim's diagnostic (stderr) if any. */
int lm_guest_probe(lm_ssh *ssh, const lm_shim_env *se, int shimmed, lm_report **out,
    char *diag, size_t diag_len);

/* ---- machine.c: the machine lume-metal runs on (`local`) ---- */

/* The stock device's name in a macOS VM (reference/metal.md). */
#define LM_PARAVIRTUAL_DEVICE_NAME "Apple Paravirtual device"
/* The shim's environment with the installed bundle b used where it is (nothing copied). */
int lm_shim_env_in_place(lm_shim_env *se, const lm_bundle *b, const lm_profile *profile);

/* ---- exercise.c: does the device run what it answers? ---- */

/* The shimmed probe with --exercise; LM_EUNSUPPORTED when the probe prints no exercise lines. */
int lm_guest_exercise(lm_ssh *ssh, const lm_shim_env *se, lm_report **out);

/* An enabled guest's re-enable in one round trip: one command that prints the boot time, the
 * home and whether the Tart image's shim is there; the bundle directory `current` names and the
 * SHA-256 of each of its files and of its manifest (computed in the guest by its OpenSSL); the
 * probe's report stock; and its report with the shim and the exercise (one process). `known` is
 * what the journal recorded of the guest: facts are `known` with what was printed (the caller
 * compares the boot time with the recorded one). Every field is set only from a part that ran
 * and read well: facts_ok, sums_ok (`current` is a directory beside it, whose name goes to
 * current, and every file of `b` and the manifest are listed, each with the bundle's hash),
 * stock, shimmed and exercised (the same report twice: the shimmed answers and the exercise come
 * from one process). Returns < 0 only when the command could not run (SSH); a guest that answers
 * otherwise leaves fields unset. */
typedef struct {
	lm_guest_facts facts;
	char current[128];
	int facts_ok;
	int sums_ok;
	lm_report *stock, *shimmed, *exercised;
} lm_guest_confirmation;
int lm_guest_confirm_command(const lm_guest_facts *known, const lm_bundle *b, const lm_shim_env *se,
    const char *mark, char **out);
int lm_guest_confirm(lm_ssh *ssh, const lm_guest_facts *known, const lm_bundle *b, const lm_shim_env *se,
    lm_guest_confirmation *c);
/* Frees the reports a confirmation holds (not the struct). */
void lm_guest_confirmation_dispose(lm_guest_confirmation *c);
/* The confirmation's probe parts alone, in one command: stock, then with the shim and its
 * exercise in one process (c->stock, c->shimmed, c->exercised; NULL where a part did not answer
 * or its report is unreadable: the single steps then ask again and say why). */
int lm_guest_probe_exercise(lm_ssh *ssh, const lm_shim_env *se, lm_guest_confirmation *c);
/* "reduction pass, matrix pass, bfloat16 pass; threadgroup memory 32768 bytes". */
void lm_exercise_summary(const lm_report *r, char *buf, size_t len);
/* The paravirtual device's known defects in an exercise (reported, never required): `checked` lists
 * those that ran, `shown` those that showed with their messages; 0 when none ran (an older probe). */
int lm_exercise_defects(const lm_report *exercised, char *shown, size_t shown_len, char *checked, size_t checked_len);
/* The profile's expected kernels checked against `exercised` for this guest: a feature the
 * guest's macOS cannot run (bfloat16 below macOS 14) is not required, since llama.cpp never uses
 * it there; `note` says which and why ("" when none). lm_profile_check_exercise_waived's answer. */
int lm_guest_exercise_check(const lm_profile *profile, const lm_report *exercised, const lm_guest_facts *g,
    char *note, size_t len);

#endif
