/* lume-metal doctor: what the host and each VM look like to lume-metal, one check at a time.
 * Reads only: the preference, the journal, the VM managers and the guests over SSH. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#ifdef __APPLE__
#include <sys/sysctl.h>
#endif

#include "lume-metal/doctor.h"
#include "flow_internal.h"
#include "net_words.h"
#include "str.h"
#include "vm_probe.h"
#include "guest_bundle.h"
#include "guest_machine.h"
#include "guest_shim.h"

/* The result and what only the run needs: whether memory ran out in a check. Such a check would
 * say something that is not so ("warn" where the host is fine), so the run fails with the
 * no-memory error instead of printing it (issue 36: whole or absent). */
typedef struct {
	lm_doctor_result pub; /* first: the result handed out is this */
	int nomem;
} doctor_run;

static void add(lm_doctor_result *r, const char *vm, const char *name, lm_check_level level, const char *fmt, ...)
    LM_PRINTF(5, 6);

static void add(lm_doctor_result *r, const char *vm, const char *name, lm_check_level level, const char *fmt, ...)
{
	lm_doctor_check **grown, *c;
	va_list ap;

	if (level != LM_CHECK_OK && lm_error_last()->code == LM_ENOMEM)
		((doctor_run *)r)->nomem = 1; /* the check failed for want of memory, not for what it checks */
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		((doctor_run *)r)->nomem = 1;
		return;
	}
	if ((grown = realloc(r->checks, (r->count + 1) * sizeof(*r->checks))) == NULL) {
		((doctor_run *)r)->nomem = 1;
		free(c);
		return;
	}
	r->checks = grown;
	c->size = sizeof(*c);
	snprintf(c->vm, sizeof(c->vm), "%s", vm != NULL ? vm : "");
	c->name = name;
	c->level = level;
	va_start(ap, fmt);
	c->message = lm_vformat(fmt, ap);
	va_end(ap);
	if (c->message == NULL) {
		((doctor_run *)r)->nomem = 1;
		free(c);
		return;
	}
	r->checks[r->count++] = c;
	r->failed += level == LM_CHECK_FAIL;
	r->warned += level == LM_CHECK_WARN;
}

void lm_doctor_result_free(lm_doctor_result *r)
{
	size_t i;

	if (r == NULL)
		return;
	for (i = 0; i < r->count; i++) {
		free(r->checks[i]->message);
		free(r->checks[i]);
	}
	free(r->checks);
	free(r);
}

/* ---- the host ---- */

static void check_os_chip(lm_doctor_result *r)
{
	struct utsname u;
	char chip[128] = "";
	int arm;

	if (uname(&u) != 0) {
		add(r, NULL, "os", LM_CHECK_FAIL, "uname failed: the operating system is unknown");
		return;
	}
	if (strcmp(u.sysname, "Darwin") == 0)
		add(r, NULL, "os", LM_CHECK_OK, "macOS (Darwin %s)", u.release);
	else
		add(r, NULL, "os", LM_CHECK_WARN, "%s %s, not macOS: the preference is a plist file that no VM here reads",
		    u.sysname, u.release);
#ifdef __APPLE__
	{
		size_t len = sizeof(chip);
		if (sysctlbyname("machdep.cpu.brand_string", chip, &len, NULL, 0) != 0)
			chip[0] = '\0';
	}
#endif
	arm = strcmp(u.machine, "arm64") == 0 || strcmp(u.machine, "aarch64") == 0;
	add(r, NULL, "chip", arm ? LM_CHECK_OK : LM_CHECK_WARN, "%s%s%s%s%s", chip, chip[0] ? " (" : "", u.machine,
	    chip[0] ? ")" : "", arm ? "" : ": not Apple silicon");
}

static void check_manager(lm_context *ctx, lm_doctor_result *r, lm_vm_manager **vmm)
{
	char versions[512];

	if (lm_vm_manager_open(vmm, ctx) < 0) {
		add(r, NULL, "vm-manager", LM_CHECK_FAIL, "%s", lm_error_last()->message);
		return;
	}
	lm_vm_manager_versions(*vmm, versions, sizeof(versions));
	add(r, NULL, "vm-manager", strstr(versions, "not answering") != NULL ? LM_CHECK_WARN : LM_CHECK_OK, "%s%s", versions,
	    lm_context_options(ctx)->vm_manager == LM_VM_MANAGER_AUTO ? " (chosen per VM among these)" : " (forced)");
}

static void check_preference(lm_context *ctx, lm_doctor_result *r, size_t enabled)
{
	lm_host_pref_info p;

	if (lm_host_pref_status(ctx, NULL, &p) < 0) {
		add(r, NULL, "preference", LM_CHECK_FAIL, "%s", lm_error_last()->message);
		return;
	}
	if (p.user_mismatch)
		add(r, NULL, "user", LM_CHECK_FAIL, "lume-metal runs as %s, the Lume server as %s: its VMs read %s's "
		    "preference, not this one", p.user, p.server_user[0] ? p.server_user : "another user",
		    p.server_user[0] ? p.server_user : "that user");
	else if (p.server_user[0] == '\0')
		add(r, NULL, "user", LM_CHECK_WARN, "lume-metal runs as %s; no Lume server found to compare with", p.user);
	else
		add(r, NULL, "user", LM_CHECK_OK, "lume-metal and the Lume server run as %s", p.user);
	if (p.managed && !p.matches)
		add(r, NULL, "preference", LM_CHECK_FAIL, "%s %s is %s, forced by a configuration profile (%s)", p.domain,
		    p.key, p.managed_value[0] ? p.managed_value : p.value, p.store);
	else if (p.matches)
		add(r, NULL, "preference", LM_CHECK_OK, "%s %s = %s in %s%s", p.domain, p.key, p.value, p.store,
		    p.recorded ? ", set by lume-metal (original recorded)" : ", set outside lume-metal");
	else if (enabled > 0)
		add(r, NULL, "preference", LM_CHECK_FAIL, "%s %s is %s in %s, but %zu VM%s enabled", p.domain, p.key,
		    p.present ? p.value : "absent", p.store, enabled, enabled == 1 ? " is" : "s are");
	else
		add(r, NULL, "preference", LM_CHECK_OK, "%s %s is %s in %s; no VM is enabled", p.domain, p.key,
		    p.present ? p.value : "absent", p.store);
}

/* The bundle for macOS guests on Apple silicon (or the one given), every file checked. */
static void check_bundle(lm_context *ctx, lm_doctor_result *r)
{
	lm_guest_facts mac;
	lm_bundle *b = NULL;
	void *data;
	size_t i, len;
	int rc;

	memset(&mac, 0, sizeof(mac));
	snprintf(mac.os, sizeof(mac.os), "Darwin");
	snprintf(mac.arch, sizeof(mac.arch), "arm64");
	if ((rc = lm_bundle_open(&b, ctx, &mac)) == 0)
		for (i = 0; i < b->nfiles && rc == 0; i++)
			if ((rc = lm_bundle_read(b, &b->files[i], &data, &len)) == 0)
				free(data);
	if (rc < 0)
		add(r, NULL, "bundle", LM_CHECK_FAIL, "%s", lm_error_last()->message);
	else
		add(r, NULL, "bundle", LM_CHECK_OK, "%s for %s: %zu files verified by SHA-256 (%s)", b->id, b->platform,
		    b->nfiles, b->dir);
	lm_bundle_free(b);
}

/* ---- one VM ---- */

static void check_shell(lm_ssh *ssh, lm_doctor_result *r, const char *vm)
{
	char shell[256];
	int written_for = 0;

	if (lm_guest_login_shell(ssh, shell, sizeof(shell), &written_for) < 0)
		add(r, vm, "shell", LM_CHECK_WARN, "the login shell could not be told: %s", lm_error_last()->message);
	else if (written_for)
		add(r, vm, "shell", LM_CHECK_OK, "%s", shell);
	else
		add(r, vm, "shell", LM_CHECK_FAIL, "%s: lume-metal's guest commands are written for zsh, bash and sh",
		    shell[0] ? shell : "unknown");
}

static void check_guest_facts(lm_doctor_result *r, const char *vm, const lm_guest_facts *g)
{
	add(r, vm, "guest-os", strcmp(g->os, "Darwin") == 0 ? LM_CHECK_OK : LM_CHECK_WARN, "%s %s %s%s",
	    g->os, g->os_version, g->arch, strcmp(g->os, "Darwin") == 0 ? "" : " (not macOS)");
	if (strcmp(g->sip, "enabled") == 0)
		add(r, vm, "sip", LM_CHECK_OK, "enabled: programs under /usr/bin, /bin and /System run without the shim");
	else
		add(r, vm, "sip", LM_CHECK_WARN, "%s: dyld loads the shim into system programs too (arm64e)",
		    g->sip[0] ? g->sip : "not reported");
	if (g->tart_shim)
		add(r, vm, "tart-shim", LM_CHECK_WARN, "the Tart image carries Cirrus Labs' own shim (" LM_TART_SHIM_PATH
		    "), installed but not enabled: no session gets it, `tart exec` ones included; lume-metal's shim "
		    "is used for its own commands");
}

/* The paravirtual device's known defects in the last exercise: a warning when one showed (a
 * workload that uses the feature breaks), never a failure (no profile requires them). */
static void check_defects(lm_doctor_result *r, const char *vm, const lm_report *exercised)
{
	char shown[1024], checked[128];

	if (!lm_exercise_defects(exercised, shown, sizeof(shown), checked, sizeof(checked)))
		return; /* an exercise from a probe older than these checks */
	if (shown[0] != '\0')
		add(r, vm, "known-defects", LM_CHECK_WARN, "shown in the last exercise (reported, not required): %s", shown);
	else
		add(r, vm, "known-defects", LM_CHECK_OK, "none shown in the last exercise (%s checked)", checked);
}

static void check_record(lm_context *ctx, lm_doctor_result *r, const char *vm, lm_ssh *ssh, const lm_guest_facts *g,
    const lm_vm_record *rec, lm_vm_outcome *o)
{
	lm_bundle *b = NULL;
	char summary[256], note[200] = "", why[512] = "";
	size_t i, running = 0;
	int ok = 0;

	if (rec->known && rec->status == LM_VM_STATUS_ROLLING_BACK) {
		add(r, vm, "bundle", LM_CHECK_WARN, "not enabled: a rollback began and did not finish (its guest's files "
		    "may be partly removed); the next rollback finishes it, an enable enables it afresh");
		return;
	}
	if (!rec->known || rec->status != LM_VM_STATUS_ENABLED) {
		add(r, vm, "bundle", LM_CHECK_OK, "not enabled: no bundle installed");
		return;
	}
	if (ssh == NULL)
		add(r, vm, "bundle", LM_CHECK_WARN, "%s recorded; not checked (guest not reachable)", rec->bundle.id);
	else if (lm_bundle_open(&b, ctx, g) == 0 && strcmp(b->id, rec->bundle.id) == 0 &&
	    lm_guest_bundle_verify(ssh, g, b, &ok, why, sizeof(why)) == 0 && ok)
		add(r, vm, "bundle", LM_CHECK_OK, "%s installed, every file verified by SHA-256", rec->bundle.id);
	else
		add(r, vm, "bundle", LM_CHECK_FAIL, "%s recorded, but the guest's files do not verify%s%s", rec->bundle.id,
		    b != NULL && strcmp(b->id, rec->bundle.id) != 0 ? " (another bundle is installed on this host)" : ": ", why);
	lm_bundle_free(b);
	if (rec->shimmed == NULL)
		add(r, vm, "last-probe", LM_CHECK_WARN, "no probe recorded");
	else if (!lm_report_shim_active(rec->shimmed))
		add(r, vm, "last-probe", LM_CHECK_FAIL, "the shim was not active in the last probe");
	else
		add(r, vm, "last-probe", LM_CHECK_OK, "shim active: Apple%d, %llu bytes threadgroup memory (profile %s)",
		    lm_report_apple_family(rec->shimmed) - 1000,
		    (unsigned long long)lm_report_max_threadgroup_memory(rec->shimmed), rec->profile_name);
	if (rec->exercised == NULL) {
		add(r, vm, "last-exercise", LM_CHECK_WARN, "no exercise recorded");
	} else {
		lm_exercise_summary(rec->exercised, summary, sizeof(summary));
		ok = rec->profile == NULL || lm_guest_exercise_check(rec->profile, rec->exercised, g, note, sizeof(note)) == 0;
		add(r, vm, "last-exercise", ok ? LM_CHECK_OK : LM_CHECK_FAIL, "%s%s%s", summary, note[0] ? "; " : "", note);
		check_defects(r, vm, rec->exercised);
	}
	if (lm_flow_agents_status(ssh, rec, o) < 0) {
		add(r, vm, "agents", LM_CHECK_WARN, "%s", lm_error_last()->message);
	} else if (o->nagents > 0) {
		for (i = 0; i < o->nagents; i++)
			running += strcmp(o->agents[i]->state, "running") == 0;
		add(r, vm, "agents", ssh == NULL || running == o->nagents ? LM_CHECK_OK : LM_CHECK_WARN,
		    "%zu agent%s, %zu running%s", o->nagents, o->nagents == 1 ? "" : "s", running,
		    ssh == NULL ? " (not checked: guest not reachable)" : "");
		/* Whether each running agent's process got the shim: its activation record. */
		for (i = 0; i < o->nagents; i++) {
			const lm_agent_info *a = o->agents[i];

			/* OK only for an answer widened (lm_activation_took): a record alone is not the unlock. */
			if (a->shim_widened == 1 && a->shim_loaded == 1)
				add(r, vm, "agent-shim", LM_CHECK_OK, "%s (pid %ld) loaded the shim: %s", a->label, a->pid, a->shim);
			else if (a->shim_widened == 1 && a->widened_exited_pid > 0) /* the line names the worker */
				add(r, vm, "agent-shim", LM_CHECK_OK, "%s (pid %ld) did not load the shim; %s", a->label, a->pid, a->shim);
			else if (a->shim_widened == 1)
				add(r, vm, "agent-shim", LM_CHECK_OK, "%s (pid %ld): a process it started: %s", a->label, a->pid, a->shim);
			else if (a->shim_loaded == 1)
				add(r, vm, "agent-shim", LM_CHECK_WARN, "%s (pid %ld) loaded the shim but no answer was widened "
				    "(none of its processes was given more than stock): %s", a->label, a->pid, a->shim);
			else if (a->shim_loaded == 0)
				add(r, vm, "agent-shim", LM_CHECK_FAIL, "%s (pid %ld) has not loaded the shim since it started "
				    "(no activation record in %s): it runs stock", a->label, a->pid, a->record_dir);
		}
	}
}

static void check_vm(lm_context *ctx, lm_vm_manager *vmm, lm_doctor_result *r, lm_vm_outcome *o)
{
	lm_vm_record rec;
	lm_ssh *ssh = NULL;
	lm_guest_facts g;
	char current[128], words[256];
	int probe_err;

	if (lm_vm_record_load(ctx, o->vm, &rec) < 0) {
		add(r, o->vm, "record", LM_CHECK_FAIL, "%s", lm_error_last()->message);
		return;
	}
	if (vmm == NULL || lm_vm_get(vmm, o->vm, &o->info) < 0) {
		add(r, o->vm, "manager", LM_CHECK_FAIL, "%s", vmm == NULL ? "no VM manager to ask" : lm_error_last()->message);
		lm_vm_record_dispose(&rec);
		return;
	}
	add(r, o->vm, "manager", LM_CHECK_OK, "%s%s", o->info.manager,
	    lm_context_options(ctx)->vm_manager == LM_VM_MANAGER_AUTO ? " (found automatically)" : " (forced)");
	g = rec.guest;
	if ((probe_err = lm_vm_ssh_probe_error(vmm)) != 0 && probe_err != ETIMEDOUT && o->info.ip[0] != '\0') {
		lm_connect_error_words(probe_err, words, sizeof(words));
		/* Refused or unreachable: said by name, not as a guest still booting; EHOSTUNREACH is
		 * its own check, as macOS 15's Local Network privacy answers so (the tool says what to do). */
		add(r, o->vm, probe_err == EHOSTUNREACH ? "local-network" : "reachable", LM_CHECK_FAIL,
		    "%s at %s, SSH (port 22): %s", o->info.status, o->info.ip, words);
	} else if (strcmp(o->info.status, "running") != 0) {
		add(r, o->vm, "reachable", LM_CHECK_WARN, "%s: the guest's checks need it running",
		    o->info.status[0] ? o->info.status : "no status");
	} else if (o->info.ip[0] == '\0' || !o->info.ssh_available) {
		add(r, o->vm, "reachable", LM_CHECK_FAIL, "running, %s", o->info.ip[0] == '\0' ? "no IP address" :
		    "SSH (port 22) does not answer");
	} else if (lm_flow_connect(ctx, o->vm, &o->info, &ssh) < 0 || lm_guest_facts_read(ssh, &g, current,
	    sizeof(current)) < 0) {
		add(r, o->vm, "reachable", LM_CHECK_FAIL, "%s", lm_error_last()->message);
		lm_ssh_free(ssh);
		ssh = NULL;
	} else {
		add(r, o->vm, "reachable", LM_CHECK_OK, "SSH at %s as %s", o->info.ip,
		    o->info.account[0] ? o->info.account : "lume");
		check_guest_facts(r, o->vm, &g);
		check_shell(ssh, r, o->vm);
	}
	check_record(ctx, r, o->vm, ssh, &g, &rec, o);
	lm_ssh_free(ssh);
	lm_vm_record_dispose(&rec);
}

int lm_doctor_run(lm_context *ctx, const char *const *vms, size_t n, lm_doctor_result **out)
{
	lm_doctor_result *result;
	lm_vm_manager *vmm = NULL;
	lm_flow_result *known = NULL;
	size_t i, enabled = 0;
	int rc;

	*out = NULL;
	if ((result = calloc(1, sizeof(doctor_run))) == NULL)
		return lm_error_nomem();
	result->size = sizeof(*result);
	check_os_chip(result);
	check_manager(ctx, result, &vmm);
	/* Every VM the journal knows is enabled (rollback forgets it). */
	if (lm_flow_result_new(&known) == 0 && lm_flow_open_known(ctx, known) == 0)
		enabled = known->count;
	check_preference(ctx, result, enabled);
	check_bundle(ctx, result);
	if (n > 0) {
		lm_flow_result_free(known);
		if ((rc = lm_flow_result_new(&known)) < 0 || (rc = lm_flow_open_outcomes(known, vms, n)) < 0) {
			lm_flow_result_free(known);
			lm_vm_manager_free(vmm);
			lm_doctor_result_free(result);
			return rc;
		}
	}
	for (i = 0; known != NULL && i < known->count; i++)
		check_vm(ctx, vmm, result, known->vms[i]);
	lm_flow_result_free(known);
	lm_vm_manager_free(vmm);
	if (result->count == 0 || ((doctor_run *)result)->nomem) {
		lm_doctor_result_free(result);
		return lm_error_nomem();
	}
	*out = result;
	return 0;
}
