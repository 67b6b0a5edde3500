/* lume-sim as Tart and UTM: their stores, and the hooks their stand-ins (tart_cli.c,
 * utmctl_cli.c) drive the same guests through.
 *   Tart: TART_HOME/vms/NAME/{config.json,disk.img,nvram.bin}; the `tart run` stand-in holds the
 *         fcntl lock on config.json and attaches (POST /_sim/vms/NAME/attach), like `lume run`.
 *   UTM:  DOCUMENTS/NAME.utm/config.plist (Backend Apple, Information.Name/UUID, a Display unless
 *         --utm-headless); the simulator is UTM.app and holds the VMs it runs.
 * Hooks: GET /_sim/vms/NAME/state, GET /_sim/utm/vms, POST /_sim/vms/NAME/{poweroff,utm-start,
 * request-stop,power-off,guest-reboot,guest-halt}. */
#include "sim.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	int rc = 0;

	if (f == NULL)
		return -1;
	if (fputs(text, f) < 0)
		rc = -1;
	if (fclose(f) != 0)
		rc = -1;
	return rc;
}

/* Tart's VMConfig (VMConfig.swift): its macAddress and its ecid (the machine identifier's data,
 * base64); a sparse 50 GB disk and the NVRAM. */
static int prepare_tart(sim *s, sim_vm *vm)
{
	char dir[sizeof(s->tart_home) + SIM_NAME_MAX + 8], path[sizeof(dir) + 16], text[1024];
	int fd;

	snprintf(dir, sizeof(dir), "%s/vms/%s", s->tart_home, vm->name);
	if (lm_test_mkdir_p(dir, 0755) < 0)
		return -1;
	snprintf(vm->config, sizeof(vm->config), "%s/config.json", dir);
	snprintf(text, sizeof(text),
	    "{\n  \"version\" : 1,\n  \"os\" : \"darwin\",\n  \"arch\" : \"arm64\",\n  \"cpuCountMin\" : 4,\n"
	    "  \"cpuCount\" : 4,\n  \"memorySizeMin\" : 8589934592,\n  \"memorySize\" : 8589934592,\n"
	    "  \"macAddress\" : \"%s\",\n  \"ecid\" : \"%s\",\n  \"display\" : {\n    \"width\" : 1024,\n"
	    "    \"height\" : 768\n  }\n}\n", vm->mac, vm->machine_id);
	if (write_text(vm->config, text) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/disk.img", dir);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) < 0 || ftruncate(fd, 50LL * 1000 * 1000 * 1000) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	snprintf(path, sizeof(path), "%s/nvram.bin", dir);
	return write_text(path, "NVRAM");
}

/* UTM's config.plist for an Apple VM (UTMAppleConfiguration.swift's keys). */
static int prepare_utm(sim *s, sim_vm *vm, size_t index)
{
	char dir[sizeof(s->utm_documents) + SIM_NAME_MAX + 8], data[sizeof(dir) + 8], text[2560], mac[24];
	size_t i;

	/* UTM writes the MAC in capitals (the lease file has it in lower case, without leading zeros) */
	for (i = 0; i < sizeof(mac) - 1 && vm->mac[i] != '\0'; i++)
		mac[i] = (char)toupper((unsigned char)vm->mac[i]);
	mac[i] = '\0';
	snprintf(vm->uuid, sizeof(vm->uuid), "5A1B0C2D-3E4F-4A5B-8C6D-%012zX", index + 1);
	snprintf(dir, sizeof(dir), "%s/%s.utm", s->utm_documents, vm->name);
	snprintf(data, sizeof(data), "%s/Data", dir);
	if (lm_test_mkdir_p(data, 0755) < 0)
		return -1;
	snprintf(vm->config, sizeof(vm->config), "%s/config.plist", dir);
	snprintf(text, sizeof(text),
	    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	    "<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n"
	    "<plist version=\"1.0\">\n<dict>\n"
	    "\t<key>Backend</key>\n\t<string>Apple</string>\n"
	    "\t<key>ConfigurationVersion</key>\n\t<integer>4</integer>\n"
	    "\t<key>Display</key>\n\t<array>%s</array>\n"
	    "\t<key>Information</key>\n\t<dict>\n\t\t<key>Name</key>\n\t\t<string>%s</string>\n"
	    "\t\t<key>UUID</key>\n\t\t<string>%s</string>\n\t</dict>\n"
	    "\t<key>Network</key>\n\t<array>\n\t\t<dict>\n\t\t\t<key>MacAddress</key>\n\t\t\t<string>%s</string>\n"
	    "\t\t\t<key>Mode</key>\n\t\t\t<string>Shared</string>\n\t\t</dict>\n\t</array>\n"
	    "\t<key>System</key>\n\t<dict>\n\t\t<key>Boot</key>\n\t\t<dict>\n\t\t\t<key>OperatingSystem</key>\n"
	    "\t\t\t<string>macOS</string>\n\t\t</dict>\n\t\t<key>CPUCount</key>\n\t\t<integer>4</integer>\n"
	    "\t\t<key>MemorySize</key>\n\t\t<integer>8192</integer>\n\t</dict>\n"
	    "</dict>\n</plist>\n",
	    vm->no_display ? "" :
	    "\n\t\t<dict>\n\t\t\t<key>DynamicResolution</key>\n\t\t\t<true/>\n\t\t\t<key>HeightPixels</key>\n"
	    "\t\t\t<integer>768</integer>\n\t\t\t<key>PixelsPerInch</key>\n\t\t\t<integer>80</integer>\n"
	    "\t\t\t<key>WidthPixels</key>\n\t\t\t<integer>1024</integer>\n\t\t</dict>\n\t",
	    vm->name, vm->uuid, mac);
	return write_text(vm->config, text);
}

/* Another of Tart's local VMs (the source among them) has this MAC. Caller holds store_lock. */
static int tart_mac_taken(const sim *s, const char *mac)
{
	size_t i;

	for (i = 0; i < s->nvms; i++)
		if (s->vms[i].manager == SIM_MGR_TART && !s->vms[i].deleted && strcmp(s->vms[i].mac, mac) == 0)
			return 1;
	return 0;
}

int sim_managers_clone(sim *s, sim_vm *src, sim_vm *dst, size_t index)
{
	if (dst->manager == SIM_MGR_TART) {
		/* `tart clone` copies config.json, the ecid with it, and gives the clone a new MAC only when
		 * another local VM already has the source's (Commands/Clone.swift, VMDirectory.swift
		 * clone(to:generateMAC:)). A local source has it itself: the clone of one always gets a
		 * new MAC (dst's, drawn by the caller); only an OCI image's first clone keeps it. */
		snprintf(dst->machine_id, sizeof(dst->machine_id), "%s", src->machine_id);
		if (!tart_mac_taken(s, src->mac))
			snprintf(dst->mac, sizeof(dst->mac), "%s", src->mac);
		return prepare_tart(s, dst);
	}
	dst->no_display = src->no_display;
	return prepare_utm(s, dst, index); /* a new Information.UUID */
}

int sim_managers_prepare(sim *s)
{
	size_t i;

	for (i = 0; i < s->nvms; i++) {
		sim_vm *vm = &s->vms[i];
		int rc = 0;
		if (vm->manager == SIM_MGR_TART)
			rc = prepare_tart(s, vm);
		else if (vm->manager == SIM_MGR_UTM)
			rc = prepare_utm(s, vm, i);
		if (rc < 0) {
			fprintf(stderr, "lume-sim: cannot prepare %s's store: %s\n", vm->name, strerror(errno));
			return -1;
		}
	}
	return 0;
}

static int install_one(const char *program, const char *dir, const char *name)
{
	char path[PATH_MAX + 16];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
	if (link(program, path) < 0 && symlink(program, path) < 0) {
		fprintf(stderr, "lume-sim: cannot install %s as %s: %s\n", program, path, strerror(errno));
		return -1;
	}
	return 0;
}

int sim_managers_install(sim *s, void *cli_config)
{
	cJSON *cfg = cli_config;
	char macos[sizeof(s->bin_dir) + 32], link_path[sizeof(s->bin_dir) + 16];

	/* As the Homebrew cask has it: bin/utmctl links to UTM.app/Contents/MacOS/utmctl, next to the
	 * app's own executable. */
	snprintf(macos, sizeof(macos), "%s/UTM.app/Contents/MacOS", s->bin_dir);
	snprintf(s->utm_app, sizeof(s->utm_app), "%s/UTM", macos);
	snprintf(link_path, sizeof(link_path), "%s/utmctl", s->bin_dir);
	if (install_one(s->tart_program, s->bin_dir, "tart") < 0 || lm_test_mkdir_p(macos, 0755) < 0 ||
	    install_one(s->utmctl_program, macos, "utmctl") < 0)
		return -1;
	unlink(link_path);
	/* UTM.app's executable: a copy of the utmctl stand-in (which plays the app when called UTM), a
	 * file of its own so that this simulator's UTM.app is told from another's by its inode, as a
	 * real one is by its path. */
	unlink(s->utm_app);
	if (symlink("UTM.app/Contents/MacOS/utmctl", link_path) < 0 || sim_copy_file(s->utmctl_program, s->utm_app) < 0) {
		fprintf(stderr, "lume-sim: cannot install UTM.app in %s: %s\n", macos, strerror(errno));
		return -1;
	}
	cJSON_AddStringToObject(cfg, "tart_version", s->tart_version);
	cJSON_AddStringToObject(cfg, "utm_version", s->utm_version);
	cJSON_AddBoolToObject(cfg, "utm_no_gui", s->utm_no_gui);
	cJSON_AddBoolToObject(cfg, "utm_no_arp", s->utm_no_arp);
	return 0;
}

int sim_utm_app_launch(sim *s, int quiet)
{
	char *argv[] = {s->utm_app, NULL};
	extern char **environ;
	pid_t pid;
	int rc = 0, launched = 0;

	pthread_mutex_lock(&s->lock);
	if (s->utm_app_pid == 0) {
		if (posix_spawn(&pid, s->utm_app, NULL, NULL, argv, environ) != 0)
			rc = -1;
		else
			s->utm_app_pid = pid;
		launched = rc == 0;
	}
	pthread_mutex_unlock(&s->lock);
	if (launched && !quiet) /* running from the start is not an event */
		sim_log_event(s, "utm-app", "", "running");
	return rc;
}

void sim_utm_app_quit(sim *s)
{
	pid_t pid;

	pthread_mutex_lock(&s->lock);
	pid = s->utm_app_pid;
	s->utm_app_pid = 0;
	pthread_mutex_unlock(&s->lock);
	if (pid > 0) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
		sim_log_event(s, "utm-app", "", "quit");
	}
}

/* UTM's saved state of an Apple VM: Data/vmstate in its bundle (QEMUPackageFileName.vmState). */
static void utm_vmstate(sim *s, sim_vm *vm, int present)
{
	char path[sizeof(s->utm_documents) + SIM_NAME_MAX + 24];

	snprintf(path, sizeof(path), "%s/%s.utm/Data/vmstate", s->utm_documents, vm->name);
	if (present)
		write_text(path, "saved machine state");
	else
		unlink(path);
}

static char *message(const char *text)
{
	cJSON *o = cJSON_CreateObject();
	char *json;

	cJSON_AddStringToObject(o, "message", text);
	json = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return json;
}

/* "/_sim/vms/NAME/ACTION" -> the VM (any manager's). */
static sim_vm *hook_vm(sim *s, const char *path, const char *action)
{
	char name[SIM_NAME_MAX + 1];
	size_t n = strlen(path), a = strlen(action);

	if (strncmp(path, "/_sim/vms/", 10) != 0 || n <= 10 + a + 1 || path[n - a - 1] != '/' ||
	    strcmp(path + n - a, action) != 0 || n - a - 11 >= sizeof(name))
		return NULL;
	snprintf(name, sizeof(name), "%.*s", (int)(n - a - 11), path + 10);
	return strchr(name, '/') == NULL ? sim_vm_find(s, name) : NULL;
}

static const char *manager_name(sim_manager m)
{
	return m == SIM_MGR_TART ? "tart" : m == SIM_MGR_UTM ? "utm" : "lume";
}

static cJSON *state_object(sim *s, sim_vm *vm)
{
	cJSON *o = cJSON_CreateObject();

	pthread_mutex_lock(&s->lock);
	cJSON_AddStringToObject(o, "name", vm->name);
	cJSON_AddStringToObject(o, "manager", manager_name(vm->manager));
	cJSON_AddBoolToObject(o, "running", vm->running);
	cJSON_AddBoolToObject(o, "booted", vm->booted);
	cJSON_AddStringToObject(o, "address", !vm->booted ? "" : vm->address_answer[0] ? vm->address_answer : vm->address);
	cJSON_AddStringToObject(o, "uuid", vm->uuid);
	/* UTM's words (UTMScriptingStatus) */
	cJSON_AddStringToObject(o, "status", !vm->running ? "stopped" : vm->stopping ? "stopping" : vm->paused ? "paused" :
	    "started");
	cJSON_AddBoolToObject(o, "saved", vm->saved);
	pthread_mutex_unlock(&s->lock);
	return o;
}

/* A guest asked to shut down is down after the request delay, unless it was stopped or started
 * again meanwhile. */
static void *request_stop(void *arg)
{
	sim_vm_job *j = arg;
	int current;

	sim_sleep(j->s->utm_request_delay);
	pthread_mutex_lock(&j->s->lock);
	current = j->vm->running && j->vm->generation == j->generation;
	pthread_mutex_unlock(&j->s->lock);
	if (current)
		sim_vm_power_off(j->s, j->vm, "the guest shut down when asked");
	pthread_mutex_lock(&j->s->lock);
	j->s->active--;
	pthread_cond_broadcast(&j->s->idle);
	pthread_mutex_unlock(&j->s->lock);
	free(j);
	return NULL;
}

static int owner_matches(sim *s, sim_vm *vm, const char *body)
{
	cJSON *doc = cJSON_Parse(body);
	const cJSON *pid = cJSON_GetObjectItemCaseSensitive(doc, "pid");
	int ok;

	pthread_mutex_lock(&s->lock);
	ok = cJSON_IsNumber(pid) && vm->running && vm->owner == SIM_OWNER_CLI && (pid_t)pid->valuedouble == vm->owner_pid;
	pthread_mutex_unlock(&s->lock);
	cJSON_Delete(doc);
	return ok;
}

int sim_managers_route(sim *s, const char *method, const char *path, const char *body, int *status, char **json)
{
	int get = strcmp(method, "GET") == 0, post = strcmp(method, "POST") == 0;
	char why[256];
	sim_vm *vm;
	size_t i;

	if (get && strcmp(path, "/_sim/utm/vms") == 0) {
		cJSON *a = cJSON_CreateArray();
		for (i = 0; i < s->nvms; i++)
			if (s->vms[i].manager == SIM_MGR_UTM && !s->vms[i].deleted)
				cJSON_AddItemToArray(a, state_object(s, &s->vms[i]));
		*status = 200;
		*json = cJSON_PrintUnformatted(a);
		cJSON_Delete(a);
		return 1;
	}
	if (get && (vm = hook_vm(s, path, "state")) != NULL) {
		cJSON *o = state_object(s, vm);
		*status = 200;
		*json = cJSON_PrintUnformatted(o);
		cJSON_Delete(o);
		return 1;
	}
	if (!post)
		return 0;
	if (strcmp(path, "/_sim/tart/clone") == 0 || strcmp(path, "/_sim/tart/delete") == 0 ||
	    strcmp(path, "/_sim/utm/clone") == 0 || strcmp(path, "/_sim/utm/delete") == 0) {
		/* `tart clone|delete`, `utmctl clone|delete`: {"name", "newName"?} */
		cJSON *doc = cJSON_Parse(body);
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(doc, "name");
		const cJSON *dst = cJSON_GetObjectItemCaseSensitive(doc, "newName");
		sim_manager mgr = strncmp(path, "/_sim/tart/", 11) == 0 ? SIM_MGR_TART : SIM_MGR_UTM;
		int rc = !cJSON_IsString(name) ? -1 : strstr(path, "/clone") != NULL ?
		    (cJSON_IsString(dst) ? sim_vm_clone(s, mgr, name->valuestring, dst->valuestring, why, sizeof(why)) : -1) :
		    sim_vm_delete(s, mgr, name->valuestring, why, sizeof(why));
		if (rc < 0 && (!cJSON_IsString(name) || (strstr(path, "/clone") != NULL && !cJSON_IsString(dst))))
			snprintf(why, sizeof(why), "expected {\"name\", \"newName\"}");
		*status = rc < 0 ? 400 : 200;
		*json = message(rc < 0 ? why : "done");
		cJSON_Delete(doc);
		return 1;
	}
	if ((vm = hook_vm(s, path, "guest-reboot")) != NULL) {
		/* The guest reboots itself, any manager's (sim_vm_guest_reboot): `lume restart`, a
		 * guest `sudo reboot`. Its VM process goes on. */
		if (sim_vm_guest_reboot(s, vm) < 0) {
			*status = 409;
			*json = message("not running, or its guest has not booted");
		} else {
			*status = 200;
			*json = message("rebooting");
		}
		return 1;
	}
	if ((vm = hook_vm(s, path, "guest-halt")) != NULL) {
		/* The guest halts itself (`lume shutdown`: `sudo shutdown -h now` in the guest): on a Mac
		 * the VM stops when its guest powers off (guestDidStop), and a `lume run` with it. */
		pthread_mutex_lock(&s->lock);
		int up = vm->running && vm->booted;
		pthread_mutex_unlock(&s->lock);
		if (!up) {
			*status = 409;
			*json = message("not running, or its guest has not booted");
		} else {
			sim_vm_power_off(s, vm, "its guest shut down");
			*status = 200;
			*json = message("stopped");
		}
		return 1;
	}
	if ((vm = hook_vm(s, path, "poweroff")) != NULL) {
		/* `tart run` got SIGINT: VZVirtualMachine.stop(), then it exits. */
		if (!owner_matches(s, vm, body)) {
			*status = 409;
			*json = message("not the process that runs this VM");
		} else {
			sim_vm_power_off(s, vm, "powered off by its tart run process");
			*status = 200;
			*json = message("stopped");
		}
		return 1;
	}
	if (strcmp(path, "/_sim/utm/launch") == 0 || strcmp(path, "/_sim/utm/quit") == 0) {
		/* utmctl launches UTM.app (hidden) when it is not running; the user quits it */
		int launch = strstr(path, "launch") != NULL, busy = 0;
		pthread_mutex_lock(&s->lock);
		for (i = 0; i < s->nvms; i++)
			busy += s->vms[i].manager == SIM_MGR_UTM && s->vms[i].running;
		pthread_mutex_unlock(&s->lock);
		if (!launch && busy) { /* UTM asks before it quits with VMs running: the user said no */
			*status = 409;
			*json = message("UTM.app has VMs running and was not quit");
		} else if (launch ? sim_utm_app_launch(s, 0) < 0 : (sim_utm_app_quit(s), 0)) {
			*status = 500;
			*json = message("UTM.app could not be launched");
		} else {
			*status = 200;
			*json = message(launch ? "running" : "quit");
		}
		return 1;
	}
	if ((vm = hook_vm(s, path, "utm-pause")) != NULL) {
		/* `utmctl suspend [--save-state]`: paused, and with --save-state its state saved too */
		cJSON *doc = cJSON_Parse(body);
		int save = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc, "save"));
		cJSON_Delete(doc);
		if (vm->manager != SIM_MGR_UTM || sim_vm_pause(s, vm, save, 1) < 0) {
			*status = 400;
			*json = message("The virtual machine is not running.");
		} else {
			if (save)
				utm_vmstate(s, vm, 1);
			*status = 200;
			*json = message("paused");
		}
		return 1;
	}
	if ((vm = hook_vm(s, path, "suspend")) != NULL) {
		/* `tart run` got SIGUSR1: the VM's state saved (state.vzvmsave is the stand-in's to write),
		 * then it exits */
		if (!owner_matches(s, vm, body) || sim_vm_pause(s, vm, 1, 0) < 0) {
			*status = 409;
			*json = message("not the process that runs this VM, or it has not booted");
		} else {
			*status = 200;
			*json = message("suspended");
		}
		return 1;
	}
	if ((vm = hook_vm(s, path, "restore")) != NULL) {
		/* `tart run` of a suspended VM {"pid"}: its snapshot restored (Run.swift) */
		cJSON *doc = cJSON_Parse(body);
		const cJSON *pid = cJSON_GetObjectItemCaseSensitive(doc, "pid");
		if (!cJSON_IsNumber(pid) || pid->valuedouble < 2 ||
		    sim_vm_resume(s, vm, (pid_t)pid->valuedouble, why, sizeof(why)) < 0) {
			*status = 400;
			*json = message(cJSON_IsNumber(pid) ? why : "expected {\"pid\": N}");
		} else {
			*status = 200;
			*json = message("running");
		}
		cJSON_Delete(doc);
		return 1;
	}
	if ((vm = hook_vm(s, path, "utm-start")) != NULL) {
		int resume, restore;
		pthread_mutex_lock(&s->lock);
		restore = !vm->running && vm->saved;
		resume = vm->paused || restore;
		pthread_mutex_unlock(&s->lock);
		if (vm->manager != SIM_MGR_UTM) {
			*status = 400;
			*json = message("Virtual machine not found.");
		} else if (resume) {
			/* start resumes a paused VM and restores a saved one (UTMAppleVirtualMachine.start):
			 * the saved state is deleted once restored */
			if (sim_vm_resume(s, vm, 0, why, sizeof(why)) < 0) {
				*status = 400;
				*json = message(why);
			} else {
				if (restore)
					utm_vmstate(s, vm, 0);
				*status = 200;
				*json = message("started");
			}
		} else if (sim_vm_run(s, vm, 0, why, sizeof(why)) < 0) {
			*status = 400;
			*json = message(why);
		} else {
			*status = 200;
			*json = message("started");
		}
		return 1;
	}
	if ((vm = hook_vm(s, path, "power-off")) != NULL) {
		pthread_mutex_lock(&s->lock);
		i = (size_t)vm->running;
		pthread_mutex_unlock(&s->lock);
		if (!i) {
			*status = 400;
			*json = message("The virtual machine is not running.");
		} else {
			sim_vm_power_off(s, vm, "powered off by its manager");
			*status = 200;
			*json = message("stopped");
		}
		return 1;
	}
	if ((vm = hook_vm(s, path, "request-stop")) != NULL) {
		sim_vm_job *j;
		pthread_t t;
		pthread_mutex_lock(&s->lock);
		if (!vm->running) {
			pthread_mutex_unlock(&s->lock);
			*status = 400;
			*json = message("The virtual machine is not running.");
			return 1;
		}
		if (s->utm_ignore_request) {
			pthread_mutex_unlock(&s->lock);
			sim_log_event(s, "request-ignored", vm->name, "the guest ignores shutdown requests");
			*status = 200;
			*json = message("requested");
			return 1;
		}
		vm->stopping = 1;
		if ((j = calloc(1, sizeof(*j))) != NULL) {
			j->s = s;
			j->vm = vm;
			j->generation = vm->generation;
			s->active++;
		}
		pthread_mutex_unlock(&s->lock);
		sim_log_event(s, "request-stop", vm->name, "the guest was asked to shut down");
		if (j != NULL && pthread_create(&t, NULL, request_stop, j) == 0) {
			pthread_detach(t);
		} else if (j != NULL) {
			request_stop(j);
		}
		*status = 200;
		*json = message("requested");
		return 1;
	}
	return 0;
}
