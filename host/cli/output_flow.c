/* Printing flow results (enable, status, probe, rollback) as text or one JSON document. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

void lm_cli_iso_time(double t, char *buf, size_t size)
{
	time_t tt;
	struct tm tm;

	/* In range before the conversion (a double out of time_t's range converted is undefined). */
	if (!(t >= 0 && t <= 253402300799.0) || (tt = (time_t)t, gmtime_r(&tt, &tm) == NULL) ||
	    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, size, "unknown");
}

static void add_string_or_null(cJSON *doc, const char *name, const char *value)
{
	if (value != NULL && value[0] != '\0')
		cJSON_AddStringToObject(doc, name, value);
	else
		cJSON_AddNullToObject(doc, name);
}

void lm_cli_pref_fields(cJSON *doc, const lm_host_pref_info *info)
{
	char when[32];

	cJSON_AddStringToObject(doc, "store", info->store);
	cJSON_AddStringToObject(doc, "domain", info->domain);
	cJSON_AddStringToObject(doc, "key", info->key);
	cJSON_AddBoolToObject(doc, "file_present", info->file_present);
	cJSON_AddBoolToObject(doc, "present", info->present);
	add_string_or_null(doc, "value", info->value);
	cJSON_AddBoolToObject(doc, "matches", info->matches);
	cJSON_AddBoolToObject(doc, "managed", info->managed);
	add_string_or_null(doc, "managed_value", info->managed_value);
	cJSON_AddBoolToObject(doc, "recorded", info->recorded);
	add_string_or_null(doc, "original", info->original);
	add_string_or_null(doc, "written", info->written);
	if (info->changed_at > 0) {
		cJSON_AddNumberToObject(doc, "changed_at", info->changed_at);
		lm_cli_iso_time(info->changed_at, when, sizeof(when));
		cJSON_AddStringToObject(doc, "changed_at_iso", when);
	} else {
		cJSON_AddNullToObject(doc, "changed_at");
		cJSON_AddNullToObject(doc, "changed_at_iso");
	}
	cJSON_AddBoolToObject(doc, "changed", info->changed);
	add_string_or_null(doc, "user", info->user);
	add_string_or_null(doc, "server_user", info->server_user);
	if (info->server_pid > 0)
		cJSON_AddNumberToObject(doc, "server_pid", (double)info->server_pid);
	else
		cJSON_AddNullToObject(doc, "server_pid");
	cJSON_AddBoolToObject(doc, "user_mismatch", info->user_mismatch);
}

void lm_cli_pref_user_line(const lm_host_pref_info *p, char *buf, size_t size)
{
	if (p->user[0] == '\0')
		snprintf(buf, size, "unknown");
	else if (p->server_user[0] == '\0')
		snprintf(buf, size, "%s's domain (no Lume server found on this host to compare with)%s", p->user,
		    p->user_mismatch ? "; root's domain is not a Lume user's" : "");
	else if (p->user_mismatch)
		snprintf(buf, size, "%s's domain, but the Lume server runs as %s: its VMs do not read this one", p->user,
		    p->server_user);
	else
		snprintf(buf, size, "%s's domain, the Lume server's user's: its VMs read it", p->user);
}

cJSON *lm_cli_pref_json(const lm_host_pref_info *p)
{
	cJSON *o = cJSON_CreateObject();

	lm_cli_pref_fields(o, p);
	return o;
}

static cJSON *report_json(const lm_report *r)
{
	char *text = NULL;
	cJSON *doc;

	if (r == NULL || lm_report_to_json(r, &text) < 0)
		return cJSON_CreateNull();
	doc = cJSON_Parse(text);
	lm_free(text);
	return doc != NULL ? doc : cJSON_CreateNull();
}

static cJSON *flags_json(const lm_workload_flags *f)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddBoolToObject(o, "simdgroup_reduction", f->llama_simdgroup_reduction);
	cJSON_AddBoolToObject(o, "simdgroup_mm", f->llama_simdgroup_mm);
	cJSON_AddBoolToObject(o, "bfloat16", f->llama_bfloat16);
	cJSON_AddBoolToObject(o, "tensor", f->llama_tensor);
	cJSON_AddBoolToObject(o, "mlx_residency_risk", f->mlx_residency_risk);
	return o;
}

const char *lm_cli_outcome_word(const lm_vm_outcome *o)
{
	if (o->rc == LM_EUNSUPPORTED)
		return "unsupported";
	if (o->rc < 0)
		return "failed";
	return "ok";
}

cJSON *lm_cli_outcome_json(const lm_vm_outcome *o)
{
	cJSON *v = cJSON_CreateObject(), *steps, *s, *g, *err;
	size_t i;

	cJSON_AddStringToObject(v, "name", o->vm);
	cJSON_AddBoolToObject(v, "ok", o->rc == 0);
	cJSON_AddStringToObject(v, "result", lm_cli_outcome_word(o));
	cJSON_AddStringToObject(v, "message", o->message);
	if (o->rc < 0) {
		err = cJSON_AddObjectToObject(v, "error");
		cJSON_AddStringToObject(err, "code", lm_error_name(o->rc));
		cJSON_AddStringToObject(err, "message", o->message);
		if (lm_cli_advice(o->rc) != NULL)
			cJSON_AddStringToObject(err, "advice", lm_cli_advice(o->rc));
	}
	cJSON_AddStringToObject(v, "state", o->info.status);
	cJSON_AddStringToObject(v, "ip", o->info.ip);
	if (o->profile[0])
		cJSON_AddStringToObject(v, "profile", o->profile);
	cJSON_AddBoolToObject(v, "enabled", o->already_enabled || (o->rc == 0 && o->bundle_verified));
	cJSON_AddBoolToObject(v, "restarted", o->restarted);
	cJSON_AddBoolToObject(v, "started", o->started);
	cJSON_AddNumberToObject(v, "files_uploaded", o->files_uploaded);
	cJSON_AddBoolToObject(v, "bundle_verified", o->bundle_verified);
	cJSON_AddStringToObject(v, "bundle", o->bundle_id);
	cJSON_AddBoolToObject(v, "restart_pending", o->restart_pending);
	g = cJSON_AddObjectToObject(v, "guest");
	cJSON_AddStringToObject(g, "os", o->guest.os);
	cJSON_AddStringToObject(g, "arch", o->guest.arch);
	cJSON_AddStringToObject(g, "os_version", o->guest.os_version);
	cJSON_AddNumberToObject(g, "boot_time", o->guest.boot_time);
	add_string_or_null(g, "sip", o->guest.sip);
	steps = cJSON_AddArrayToObject(v, "steps");
	for (i = 0; i < o->nsteps; i++) {
		s = cJSON_CreateObject();
		cJSON_AddStringToObject(s, "name", o->steps[i].name);
		cJSON_AddNumberToObject(s, "seconds", o->steps[i].seconds);
		cJSON_AddStringToObject(s, "detail", o->steps[i].detail);
		cJSON_AddItemToArray(steps, s);
	}
	cJSON_AddItemToObject(v, "stock", report_json(o->stock));
	cJSON_AddItemToObject(v, "shimmed", report_json(o->shimmed));
	if (o->stock != NULL)
		cJSON_AddItemToObject(v, "stock_workloads", flags_json(&o->stock_flags));
	if (o->shimmed != NULL)
		cJSON_AddItemToObject(v, "shimmed_workloads", flags_json(&o->shimmed_flags));
	if (o->exercised != NULL)
		cJSON_AddItemToObject(v, "exercise", lm_cli_exercise_json(o->exercised));
	return v;
}

int lm_cli_flow_exit(const lm_flow_result *r)
{
	size_t i, failed = 0, unsupported = 0;

	for (i = 0; i < r->count; i++) {
		if (r->vms[i].rc == LM_EUNSUPPORTED)
			unsupported++;
		else if (r->vms[i].rc < 0)
			failed++;
	}
	if (failed + unsupported == 0)
		return LM_EXIT_OK;
	if (failed + unsupported < r->count)
		return LM_EXIT_PARTIAL;
	return failed == 0 ? LM_EXIT_GUEST_UNSUPPORTED : LM_EXIT_FAILURE;
}

void lm_cli_flow_print(const lm_cli *cli, const lm_flow_result *r, int exit_code)
{
	cJSON *doc, *vms;
	size_t i, k;

	if (cli->json) {
		doc = cJSON_CreateObject();
		cJSON_AddNumberToObject(doc, "schema", 1);
		cJSON_AddStringToObject(doc, "command", cli->command);
		cJSON_AddBoolToObject(doc, "ok", exit_code == 0);
		cJSON_AddNumberToObject(doc, "exit_code", exit_code);
		cJSON_AddBoolToObject(doc, "dry_run", cli->lib.dry_run);
		cJSON_AddNumberToObject(doc, "seconds", r->seconds);
		cJSON_AddItemToObject(doc, "host_preference", lm_cli_pref_json(&r->pref));
		cJSON_AddBoolToObject(doc, "host_preference_changed", r->pref_changed);
		cJSON_AddBoolToObject(doc, "host_preference_restored", r->pref_restored);
		vms = cJSON_AddArrayToObject(doc, "vms");
		for (i = 0; i < r->count; i++)
			cJSON_AddItemToArray(vms, lm_cli_outcome_json(&r->vms[i]));
		lm_cli_print_json(doc);
		return;
	}
	for (i = 0; i < r->count; i++) {
		const lm_vm_outcome *o = &r->vms[i];
		double total = 0;

		for (k = 0; k < o->nsteps; k++)
			total += o->steps[k].seconds;
		lm_cli_printf(stdout, "%s%s (%.2f s)\n", o->rc < 0 ? "FAILED " : "", o->message, total);
		if (o->rc < 0 && lm_cli_advice(o->rc) != NULL)
			lm_cli_printf(stdout, "  %s\n", lm_cli_advice(o->rc));
		for (k = 0; k < o->nsteps; k++)
			lm_cli_printf(stdout, "  %-16s %7.3f s  %s\n", o->steps[k].name, o->steps[k].seconds, o->steps[k].detail);
	}
	if (r->pref_restored)
		lm_cli_printf(stdout, "host preference %s.%s restored: %s\n", r->pref.domain, r->pref.key,
		    r->pref.present ? r->pref.value : "absent");
	fflush(stdout);
}

/* The VM's llama.cpp flags in one short line: "reduction mm bf16 -tensor". */
void lm_cli_flags_line(const lm_workload_flags *f, char *buf, size_t len)
{
	snprintf(buf, len, "%creduction %cmatrix-multiply %cbfloat16 %ctensor%s",
	    f->llama_simdgroup_reduction ? '+' : '-', f->llama_simdgroup_mm ? '+' : '-',
	    f->llama_bfloat16 ? '+' : '-', f->llama_tensor ? '+' : '-',
	    f->mlx_residency_risk ? " (MLX residency-set risk)" : "");
}
