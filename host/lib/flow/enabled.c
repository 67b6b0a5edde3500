/* An enabled VM opened for work (probe, run, agent, bench): its record, the VM running, its guest
 * reached over SSH and its installed bundle the one the record names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow_internal.h"
#include "ssh_pins.h"

int lm_flow_connect(lm_context *ctx, const char *vm, const lm_vm_info *info, lm_ssh **out)
{
	if (info->ip[0] == '\0')
		return lm_error_set(LM_ERROR, "%s has no IP address (is it running?)", vm);
	return lm_ssh_connect_vm(out, ctx, vm, info->ip, 22, info->account, info->vm_id);
}

int lm_flow_open_enabled(lm_context *ctx, lm_vm_manager *vmm, lm_vm_outcome *o, lm_vm_record *r, lm_ssh **ssh,
    lm_shim_env *se)
{
	char current[128];
	int rc;

	if ((rc = lm_vm_record_load(ctx, o->vm, r)) < 0)
		return rc;
	if (!r->known || r->status != LM_VM_STATUS_ENABLED || r->profile == NULL)
		return lm_error_set(LM_ENOTENABLED, "%s is not enabled", o->vm);
	if ((rc = lm_vm_get(vmm, o->vm, &o->info)) < 0)
		return rc;
	/* Not "guest unsupported": nothing is wrong with the guest, it is just not running. */
	if (strcmp(o->info.status, "running") != 0)
		return lm_error_set(LM_ENOTRUNNING, "%s is %s, not running", o->vm, o->info.status);
	if ((rc = lm_flow_connect(ctx, o->vm, &o->info, ssh)) < 0 ||
	    (rc = lm_guest_facts_read(*ssh, &o->guest, current, sizeof(current))) < 0)
		return rc;
	if (strcmp(current, r->bundle.id) != 0)
		return lm_error_set(LM_ECORRUPT, "%s: the installed bundle is %s, the state says %s", o->vm,
		    current[0] ? current : "missing", r->bundle.id);
	return lm_shim_env_make(se, &o->guest, r->bundle.injection, r->bundle.shim, r->bundle.probe, r->profile);
}

/* What the pre-flight says of each executable shipped beside the program: one it may start that
 * dyld would not give the shim is named before the run (reference/metal.md, 2026-12-02: a
 * hardened child gets nothing, and passes nothing on). Returns how many were named. */
static size_t warn_siblings(lm_context *ctx, const lm_vm_outcome *o, const lm_run_target *t)
{
	const char *program = t->program_real[0] ? t->program_real : t->program;
	size_t i, named = 0;

	for (i = 0; i < t->nsiblings; i++) {
		const lm_run_sibling *s = &t->siblings[i];
		const char *base = strrchr(s->path, '/') != NULL ? strrchr(s->path, '/') + 1 : s->path;

		if (lm_codesign_ignores_injection(&s->sig))
			lm_log(ctx, LM_LOG_WARN, "%s: %s (%s), shipped beside %s, is signed with the hardened runtime (flags=%s) "
			    "without the entitlement com.apple.security.cs.allow-dyld-environment-variables: if the workload "
			    "starts it, it runs stock (dyld ignores DYLD_INSERT_LIBRARIES in it)", o->vm, base, s->path, program,
			    s->sig.flags[0] ? s->sig.flags : "not shown");
		else if (lm_codesign_validates_libraries(&s->sig))
			lm_log(ctx, LM_LOG_WARN, "%s: %s (%s), shipped beside %s, is signed with library validation (flags=%s) "
			    "without the entitlement com.apple.security.cs.disable-library-validation: if the workload starts "
			    "it, library validation refuses the shim and it runs stock", o->vm, base, s->path, program,
			    s->sig.flags[0] ? s->sig.flags : "not shown");
		else
			continue;
		named++;
	}
	return named;
}

/* The program, or an executable shipped beside it, that dyld would not give the shim. */
static int needs_resign(const lm_run_target *t)
{
	size_t i;

	if (lm_codesign_ignores_injection(&t->program_sig) || lm_codesign_validates_libraries(&t->program_sig))
		return 1;
	for (i = 0; i < t->nsiblings; i++)
		if (lm_codesign_ignores_injection(&t->siblings[i].sig) || lm_codesign_validates_libraries(&t->siblings[i].sig))
			return 1;
	return 0;
}

int lm_flow_workload_argv(const lm_flow_workload *w, const char *const *argv, size_t argc, const char *const **out)
{
	const char **v;
	int own;
	size_t i = lm_run_program_index(argv, argc, &own);

	*out = argv;
	if (w->copy[0] == '\0' || i >= argc)
		return 0;
	if ((v = malloc(argc * sizeof(*v))) == NULL)
		return lm_error_nomem();
	memcpy(v, argv, argc * sizeof(*v));
	v[i] = w->copy;
	*out = v;
	return 0;
}

/* --resign-copy: the program (and what is beside it) as a re-signed copy, and the copy looked at
 * as the original was: the checks below are the copy's. */
static int resign(lm_context *ctx, lm_ssh *ssh, lm_shim_env *se, const lm_vm_outcome *o, const char *const *argv,
    size_t argc, size_t i, const char *copy_name, lm_flow_workload *w)
{
	const char *program = w->target.program_real[0] ? w->target.program_real : w->target.program;
	const char *const *v = NULL;
	char name[64];
	lm_resign_copy c;
	int rc;

	if (w->target.interpreter[0] != '\0')
		return lm_error_set(LM_EHARDENED, "%s: %s is a script: --resign-copy re-signs a program, not a script's "
		    "interpreter", o->vm, argv[i]);
	if (copy_name == NULL) {
		if ((rc = lm_resign_name(program, name, sizeof(name))) < 0)
			return rc;
		copy_name = name;
	}
	if ((rc = lm_guest_resign_copy(ssh, o->guest.home, copy_name, program, &c)) < 0)
		return lm_error_prefix("%s: ", o->vm);
	snprintf(w->copy, sizeof(w->copy), "%s", c.program);
	if (c.reused)
		lm_log(ctx, LM_LOG_INFO, "%s: runs the re-signed copy %s (made before from the same %s)", o->vm, c.program,
		    program);
	else
		lm_log(ctx, LM_LOG_INFO, "%s: runs a re-signed copy: %s, %zu file%s re-signed ad hoc with the dyld "
		    "entitlements (the original is untouched)", o->vm, c.program, c.nsigned, c.nsigned == 1 ? "" : "s");
	if ((rc = lm_flow_workload_argv(w, argv, argc, &v)) < 0)
		return rc;
	rc = lm_guest_run_target(ssh, se, v, argc, &w->target);
	if (v != argv)
		free((void *)v);
	return rc;
}

int lm_flow_workload_check(lm_context *ctx, lm_ssh *ssh, lm_shim_env *se, const lm_vm_outcome *o,
    const char *const *argv, size_t argc, const lm_workload_options *opts, const char *copy_name,
    lm_flow_workload *w)
{
	char msg[4 * PATH_MAX];
	size_t i;
	int rc, own;

	memset(w, 0, sizeof(*w));
	if ((rc = lm_guest_run_target(ssh, se, argv, argc, &w->target)) < 0)
		return rc;
	i = lm_run_program_index(argv, argc, &own);
	if (i < argc && lm_workload_resign_copy(opts) && w->target.program[0] != '\0') {
		if (!needs_resign(&w->target))
			lm_log(ctx, LM_LOG_INFO, "%s: --resign-copy: neither %s nor an executable shipped beside it keeps the "
			    "shim out: the original runs", o->vm, w->target.program);
		else if ((rc = resign(ctx, ssh, se, o, argv, argc, i, copy_name, w)) < 0)
			return rc;
	}
	if (i < argc && lm_sip_warning(&o->guest, argv[i], &w->target, msg, sizeof(msg)))
		lm_log(ctx, LM_LOG_WARN, "%s: %s", o->vm, msg);
	(void)warn_siblings(ctx, o, &w->target);
	if (i < argc && lm_codesign_refusal(argv[i], &w->target, msg, sizeof(msg))) {
		if (opts == NULL || !opts->run_hardened_stock)
			return lm_error_set(LM_EHARDENED, "%s: %s", o->vm, msg);
		lm_log(ctx, LM_LOG_WARN, "%s: %s; started all the same, as asked: it runs stock", o->vm, msg);
		w->hardened = 1;
	} else if (i < argc && lm_codesign_warning(argv[i], &w->target, msg, sizeof(msg))) {
		lm_log(ctx, LM_LOG_WARN, "%s: %s", o->vm, msg);
	}
	/* The user's own LUME_METAL_INHERIT wins: nothing of ours beside it. */
	if (own) {
		w->inherit = -1;
		return 0;
	}
	w->inherit = lm_children_policy(&o->guest, w->target.shim_arm64e, w->inherit_reason, sizeof(w->inherit_reason));
	return lm_shim_env_workload(se, w->inherit ? "1" : "0", w->inherit_reason, NULL);
}
