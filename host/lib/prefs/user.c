/* Whose preference domain lume-metal writes, and whether the VMs read it.
 *
 * The preference is per user, read by the process that runs a VM, as the user it runs as: for
 * VMs started through the API that is the Lume server (`lume serve`, normally a LaunchAgent of the
 * logged-in user). lume-metal writes the domain of the user it runs as. So (docs/preferences.md):
 *   - a Lume server on this host (the process listening on the API's port) that runs as another
 *     user: refused, nothing written; its VMs would never read this domain;
 *   - lume-metal as root with no Lume server found, on the default store (no prefs dir given):
 *     refused; root's domain is read only by VMs that root itself runs, never by a user's
 *     `lume serve`, and nothing shows that root runs these VMs;
 *   - root with a server that runs as root: the same user, accepted (that server's VMs read
 *     root's domain; it is also the simulator's world, where tests run as root).
 * force_user_mismatch turns a refusal into a warning. */
#include "prefs_internal.h"
#include "context_internal.h"
#include "lume-metal/sys/vm.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void describe_server(const lm_vm_server_info *srv, char *buf, size_t cap)
{
	if (srv->pid > 0)
		snprintf(buf, cap, "the Lume server at %s (PID %ld, %s)", srv->address, srv->pid,
		    srv->command[0] ? srv->command : "command line not visible");
	else
		snprintf(buf, cap, "the Lume server at %s", srv->address);
}

int lm_prefs_check_user(lm_context *ctx, lm_host_pref_info *info, int writing)
{
	const lm_options *o = lm_context_options(ctx);
	long euid = (long)geteuid();
	lm_vm_server_info srv;
	char server[512], why[1024], advice[400];
	int rc, explicit_store = o->prefs_dir != NULL && o->prefs_dir[0] != '\0';

	lm_paths_user_name(euid, info->user, sizeof(info->user));
	info->server_user[0] = '\0';
	info->server_pid = 0;
	info->user_mismatch = 0;
	/* Tart's, UTM's or an unmanaged VM's process runs as whoever started it: Lume's server says
	 * nothing about them. Only root is known to be wrong (a desktop user's VMs never read root's). */
	if (o->vm_manager == LM_VM_MANAGER_TART || o->vm_manager == LM_VM_MANAGER_UTM ||
	    o->vm_manager == LM_VM_MANAGER_NONE) {
		if (euid != 0 || explicit_store || !writing)
			return 0;
		if (o->force_user_mismatch) {
			lm_log(ctx, LM_LOG_WARN, "forced: writing root's preference domain");
			return 0;
		}
		info->user_mismatch = 1;
		return lm_error_set(LM_EWRONGUSER, "lume-metal runs as root: root's preference domain is read only by VMs "
		    "that root itself runs (`tart run`, UTM.app and `lume serve` normally run as the logged-in user). "
		    "Nothing was written. Run lume-metal as the user who runs the VMs (without sudo)");
	}
	if ((rc = lm_vm_server_lookup(ctx, &srv)) < 0)
		return rc;
	describe_server(&srv, server, sizeof(server));
	if (srv.found) {
		snprintf(info->server_user, sizeof(info->server_user), "%s", srv.user);
		info->server_pid = srv.pid;
	}
	if (srv.found && srv.uid != euid) {
		info->user_mismatch = 1;
		if (srv.uid >= 0) {
			snprintf(why, sizeof(why), "%s runs as %s, but lume-metal runs as %s: the preference would go to "
			    "%s's domain, which %s's VMs never read", server, srv.user, info->user, info->user, srv.user);
			snprintf(advice, sizeof(advice), "Run lume-metal as %s (for example `sudo -u %s -H lume-metal ...`, "
			    "or from %s's login session)", srv.user, srv.user, srv.user);
		} else {
			snprintf(why, sizeof(why), "%s is not one of %s's processes (it runs as a user whose name %s cannot "
			    "see), but lume-metal runs as %s: the preference would go to %s's domain, which that server's "
			    "VMs never read", server, info->user, info->user, info->user, info->user);
			snprintf(advice, sizeof(advice), "Run lume-metal as the user who runs `lume serve`");
		}
	} else if (!srv.found && euid == 0 && !explicit_store) {
		info->user_mismatch = 1;
		snprintf(why, sizeof(why), "lume-metal runs as root and no Lume server answers at %s%s to show whose VMs "
		    "read the preference: root's domain is read only by VMs that root itself runs, never by a user's "
		    "`lume serve`", srv.address, srv.local ? "" : " on this host");
		snprintf(advice, sizeof(advice), "Run lume-metal as the user who runs the VMs (without sudo)");
	}
	if (!info->user_mismatch || !writing)
		return 0;
	if (o->force_user_mismatch) {
		lm_log(ctx, LM_LOG_WARN, "forced: writing %s's preference domain although %s", info->user, why);
		return 0;
	}
	return lm_error_set(LM_EWRONGUSER, "%s. Nothing was written. %s", why, advice);
}
