/* lume-metal host enable|disable|status: the host preference alone (docs/preferences.md). */
#include <string.h>
#include <time.h>

#include "cli.h"

/* A failure: one JSON document with the error and what was observed, or a line on stderr. */
static int fail(lm_cli *cli, const lm_host_pref_info *info)
{
	const lm_error *e = lm_error_last();
	const char *message = e->message[0] != '\0' ? e->message : "failed";
	const int exit_code = lm_cli_exit_of(e->code, LM_EXIT_FAILURE);
	lm_json_envelope env;
	const char *hint;
	char *doc = NULL;

	if (cli->json) {
		env = lm_cli_envelope(cli, exit_code, e->code != 0 ? e->code : LM_ERROR, message);
		if (lm_host_pref_status_to_json(info, NULL, &env, &doc) < 0)
			doc = NULL;
		lm_cli_print_document(cli, doc == NULL ? -1 : 0, doc);
	}
	lm_cli_printf(stderr, "lume-metal: %s\n", message);
	if ((hint = lm_cli_hint(cli, e->code)) != NULL)
		lm_cli_printf(stderr, "hint: %s\n", hint);
	return exit_code;
}

static const char *or_absent(const lm_host_pref_info *info)
{
	if (info->present)
		return info->value;
	return info->file_present ? "absent (no such key)" : "absent (no such file)";
}

static void print_status(const lm_host_pref_info *info, const lm_host_pref_byhost *byhost,
    lm_host_pref_vm *const *vms, size_t nvms)
{
	char when[32], buf[1800];
	size_t i;

	lm_cli_printf(stdout, "host preference %s %s\n", info->domain, info->key);
	lm_cli_printf(stdout, "  store:    %s\n", info->store);
	lm_cli_printf(stdout, "  value:    %s%s\n", or_absent(info), info->matches ? " (the profile's value)" : "");
	if (info->managed)
		lm_cli_printf(stdout, "  managed:  yes, forced to %s by a configuration profile\n", info->managed_value);
	else
		lm_cli_printf(stdout, "  managed:  no\n");
	if (info->recorded) {
		lm_cli_iso_time(info->changed_at, when, sizeof(when));
		lm_cli_printf(stdout, "  original: %s (recorded; lume-metal set %s at %s)\n", info->original, info->written, when);
	} else {
		lm_cli_printf(stdout, "  original: nothing recorded (no change of lume-metal's is in effect)\n");
	}
	lm_cli_printf(stdout, "  mode:     %s\n", lm_cli_pref_mode(info));
	lm_cli_pref_user_line(info, buf, sizeof(buf));
	lm_cli_printf(stdout, "  user:     %s\n", buf);
	lm_cli_pref_byhost_line(info, byhost, buf, sizeof(buf));
	lm_cli_printf(stdout, "  -currentHost: %s\n", buf);
	/* Who relies on it: the mode each enabled VM ran, and whether it needed the preference. */
	for (i = 0; i < nvms; i++) {
		lm_cli_printf(stdout, "  vm %s: host preference mode %s, %s%s\n", vms[i]->vm, lm_host_pref_mode_name(vms[i]->mode),
		    lm_cli_pref_need(vms[i]->mode, vms[i]->needed), vms[i]->keeps ? "; keeps the preference" : "; does not keep it");
	}
}

static void print_result(const lm_cli *cli, const char *action, const lm_host_pref_info *info, lm_host_pref_vm *const *vms,
    size_t nvms, const lm_host_pref_byhost *byhost)
{
	int dry = cli->lib.dry_run;

	if (strcmp(action, "status") == 0) {
		print_status(info, byhost, vms, nvms);
		return;
	}
	if (strcmp(action, "enable") == 0) {
		if (!info->changed)
			lm_cli_printf(stdout, "already enabled: %s %s is %s in %s; nothing changed\n", info->domain, info->key,
			    info->value, info->store);
		else if (dry)
			lm_cli_printf(stdout, "dry run: would set %s %s to %s in %s (now %s; the original would be recorded)\n",
			    info->domain, info->key, info->written[0] ? info->written : "the wanted value",
			    info->store, or_absent(info));
		else
			lm_cli_printf(stdout, "enabled: %s %s is now %s in %s (original: %s, recorded for restore)\n", info->domain,
			    info->key, info->value, info->store, info->original);
		if (info->recorded || cli->lib.keep_host)
			lm_cli_printf(stdout, "mode: %s\n", lm_cli_pref_mode(info));
		/* Virtualization.framework reads the preference when a VM's process starts; Lume 0.5's
		 * `lume restart` and `lume shutdown` only run `shutdown -r`/`-h` in the guest
		 * (trycua/cua Commands/GuestPower.swift): docs/lume-metal.md, "When a VM is restarted". */
		if (info->changed)
			lm_cli_printf(stdout, "hint: running VMs keep the GPU level they started with until their VM process is "
			    "restarted (stopped and started: `lume-metal enable VM` does it); a guest reboot (`lume restart`, "
			    "`sudo reboot` in the guest, a macOS update) is not a VM restart\n");
		return;
	}
	if (!info->changed && !info->recorded)
		lm_cli_printf(stdout, "nothing to restore: no change of lume-metal's is in effect (%s %s is %s)\n", info->domain,
		    info->key, or_absent(info));
	else if (dry)
		lm_cli_printf(stdout, "dry run: would restore %s %s in %s to %s (now %s)\n", info->domain, info->key, info->store,
		    info->original, or_absent(info));
	else
		lm_cli_printf(stdout, "restored: %s %s in %s is back to %s\n", info->domain, info->key, info->store,
		    info->present ? info->value : (info->file_present ? "absent key" : "absent file"));
}

int lm_cmd_host(lm_cli *cli)
{
	lm_host_pref_byhost byhost;
	lm_host_pref_info info;
	lm_host_pref_vm **vms = NULL;
	size_t nvms = 0;
	lm_pref_setting want;
	lm_context *ctx;
	lm_profile *profile = NULL;
	lm_json_envelope env;
	const char *action;
	char *doc = NULL;
	int rc;

	if (cli->argc != 1)
		return lm_cli_usage_error(cli, "usage: lume-metal host enable|disable|status [--keep] [--format text|json] "
		    "[--dry-run] [--force]");
	action = cli->argv[0];
	if (strcmp(action, "enable") != 0 && strcmp(action, "disable") != 0 && strcmp(action, "status") != 0)
		return lm_cli_unknown_subcommand(cli, "host", action);
	cli->json_command = strcmp(action, "enable") == 0 ? "host enable" : strcmp(action, "disable") == 0 ?
	    "host disable" : "host status";
	/* The preference a profile needs (domain, key, value); the default profile's otherwise. */
	lm_host_pref_default(&want);
	if (cli->profile != NULL) {
		if (lm_profile_resolve(&profile, cli->profile) < 0)
			return lm_cli_fail(cli, LM_EXIT_FAILURE);
		want = *lm_profile_host_preference(profile);
	}
	memset(&info, 0, sizeof(info));
	memset(&byhost, 0, sizeof(byhost));
	if ((rc = lm_cli_context(cli, &ctx)) != 0) {
		lm_profile_free(profile);
		return rc;
	}
	if (strcmp(action, "enable") == 0)
		rc = lm_host_pref_enable(ctx, &want, &info);
	else if (strcmp(action, "disable") == 0)
		rc = lm_host_pref_disable(ctx, &info);
	else if ((rc = lm_host_pref_status(ctx, &want, &info)) == 0 &&
	    (rc = lm_host_pref_byhost_status(ctx, &want, &byhost)) == 0)
		rc = lm_host_pref_vms(ctx, &vms, &nvms);
	lm_context_free(ctx);
	lm_profile_free(profile); /* want's strings are not used past this point */
	if (rc < 0)
		return fail(cli, &info);
	if (cli->json) {
		env = lm_cli_envelope(cli, LM_EXIT_OK, 0, NULL);
		if ((strcmp(action, "status") == 0 ? lm_host_status_to_json(&info, &byhost, vms, nvms, &env, &doc) :
		    lm_host_pref_status_to_json(&info, &byhost, &env, &doc)) < 0)
			doc = NULL;
		lm_cli_print_document(cli, doc == NULL ? -1 : 0, doc);
	} else {
		print_result(cli, action, &info, vms, nvms, &byhost);
	}
	lm_host_pref_vms_free(vms);
	return LM_EXIT_OK;
}
