/* This machine opened for a local command: the local transport, its facts, the installed bundle
 * used in place, the shim's environment. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "local_internal.h"
#include "guest_bundle.h"
#include "guest_machine.h"
#include "guest_shim.h"

void lm_local_result_free(lm_local_result *result)
{
	if (result == NULL)
		return;
	/* machine belongs to the flow result kept just before the struct's end. */
	lm_flow_result_free(*(lm_flow_result **)(result + 1));
	free(result);
}

int lm_local_open(lm_local_machine *m, lm_context *ctx, const lm_profile *profile, lm_local_result **out)
{
	lm_vm_outcome *o;
	char current[128];
	double t;
	int rc;

	memset(m, 0, sizeof(*m));
	m->ctx = ctx;
	m->started = lm_clock_monotonic();
	if (out == NULL)
		return lm_error_set(LM_EINVALID, "local: no place for the result");
	/* The flow result that owns the outcome lives right after the public struct (see _free). */
	if ((*out = calloc(1, sizeof(lm_local_result) + sizeof(lm_flow_result *))) == NULL)
		return lm_error_nomem();
	m->res = *out;
	m->res->size = sizeof(lm_local_result);
	m->res->hv_vmm_present = m->res->paravirtual_device = m->res->looks_like_vm = -1;
	m->res->answers_hold = m->res->kernels_ran = -1;
	if ((rc = lm_flow_result_new(&m->flow)) < 0 || (rc = lm_flow_outcome_add(m->flow, "local", &o)) < 0) {
		lm_flow_result_free(m->flow);
		m->flow = NULL;
		return rc;
	}
	*(lm_flow_result **)(m->res + 1) = m->flow;
	m->res->machine = o;
	if (profile == NULL && (rc = lm_profile_builtin(&m->own_profile, lm_profile_default_name())) < 0)
		return rc; /* into the outcome by lm_local_close */
	m->profile = profile != NULL ? profile : m->own_profile;
	snprintf(o->profile, sizeof(o->profile), "%s", lm_profile_name(m->profile));
	snprintf(o->info.status, sizeof(o->info.status), "running");
	if ((rc = lm_step_begin(ctx, o, "machine", &t)) < 0 || (rc = lm_ssh_open_local(&m->ssh, ctx)) < 0 ||
	    (rc = lm_guest_facts_read(m->ssh, &o->guest, current, sizeof(current))) < 0 ||
	    (rc = lm_bundle_open(&m->bundle, ctx, &o->guest)) < 0)
		return rc; /* into the outcome by lm_local_close */
	snprintf(m->res->bundle_dir, sizeof(m->res->bundle_dir), "%s", m->bundle->dir);
	snprintf(o->bundle_id, sizeof(o->bundle_id), "%s", m->bundle->id);
	/* Used where it is: its files must be the manifest's, as an installed guest bundle's are. */
	if ((rc = lm_bundle_verify_in_place(m->bundle)) < 0 ||
	    (rc = lm_shim_env_in_place(&m->se, m->bundle, m->profile)) < 0)
		return rc; /* into the outcome by lm_local_close */
	o->bundle_verified = 1;
	lm_step_add(ctx, o, "machine", t, "%s %s %s, bundle %s in place (%s)", o->guest.os, o->guest.os_version[0] ?
	    o->guest.os_version : "(no sw_vers)", o->guest.arch, m->bundle->id, m->bundle->dir);
	return 0;
}

int lm_local_stock(lm_local_machine *m)
{
	lm_local_result *r = m->res;
	int rc;

	if ((rc = lm_guest_probe(m->ssh, &m->se, 0, &r->machine->stock, NULL, 0)) < 0 ||
	    (rc = lm_machine_hv_vmm_present(m->ssh, &r->hv_vmm_present)) < 0)
		return rc;
	lm_workload_derive(r->machine->stock, &r->machine->stock_flags);
	if (r->machine->stock != NULL)
		r->paravirtual_device = strcmp(lm_report_device(r->machine->stock), LM_PARAVIRTUAL_DEVICE_NAME) == 0;
	if (r->hv_vmm_present == 1 || r->paravirtual_device == 1)
		r->looks_like_vm = 1;
	else if (r->hv_vmm_present == 0 && r->paravirtual_device == 0)
		r->looks_like_vm = 0;
	return 0;
}

int lm_local_begin(lm_local_machine *m, lm_context *ctx, const lm_profile *profile, const char *step, double *t,
    lm_local_result **out)
{
	int rc;

	if ((rc = lm_local_open(m, ctx, profile, out)) < 0)
		return rc;
	if ((rc = lm_step_begin(ctx, m->res->machine, step, t)) < 0 || (rc = lm_local_stock(m)) < 0)
		return rc;
	return 0;
}

int lm_local_close(lm_local_machine *m, int rc)
{
	/* A failure not yet in the outcome goes there, with the last error's message. */
	if (rc < 0 && m->res != NULL && m->res->machine != NULL && m->res->machine->rc == 0)
		lm_outcome_fail(m->ctx, m->res->machine, rc);
	if (m->res != NULL) {
		m->res->seconds = lm_clock_monotonic() - m->started;
		if (m->flow != NULL)
			m->flow->seconds = m->res->seconds;
	}
	lm_bundle_free(m->bundle);
	lm_ssh_free(m->ssh);
	lm_profile_free(m->own_profile);
	return rc;
}
