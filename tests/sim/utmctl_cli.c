/* The `utmctl` stand-in of lume-sim (installed as DIR/bin/utmctl): utmctl/UTMCtl.swift's commands
 * and fixed text output, with the simulator playing UTM.app. Apple Events that fail are printed by
 * utmctl's event delegate ("Error from event: ...") rather than thrown, so such failures exit 0;
 * the simulator's --utm-no-gui makes every event fail as it does without a logged-in GUI session.
 * `ip-address` works for Apple VMs from UTM 5.0.3 on (the host's ARP cache: only once the guest
 * is up; nothing with --utm-no-arp, as for NAT guests, whose traffic the ARP cache does not see);
 * older versions answer "Operation not supported by the backend.".
 * Without a GUI session every event fails with -1743, but only `list` says so: a VM looked up by
 * name is "not found" (the lookup runs with error reporting off; UTM issues #5001, #7061).
 * Every command launches UTM.app (hidden) when it is not running; called UTM, this program plays
 * the app's process: bin/UTM.app/Contents/MacOS/UTM, which runs until it is quit. */
#include "sim_client.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EX_USAGE 64

static sim_client client;

static int usage_error(const char *msg)
{
	fprintf(stderr, "Error: %s\nUsage: utmctl <subcommand>\n  See 'utmctl --help' for more information.\n", msg);
	return EX_USAGE;
}

/* The event delegate's line: on stderr, no newline of its own (UTMCtl.swift). */
static int event_error(const char *what)
{
	fprintf(stderr, "Error from event: %s", what);
	fputc('\n', stderr);
	return 0;
}

static int no_gui(void)
{
	fprintf(stderr, "Error from event: The operation couldn\xe2\x80\x99t be completed. (OSStatus error -1743.)\n");
	fprintf(stderr, "NOTE: utmctl does not work from SSH sessions or before logging in.\n");
	return 0;
}

/* UTM.app's process: runs until it is quit (SIGTERM from the simulator), or the simulator that
 * launched it is gone (looked at twice a second: PR_SET_PDEATHSIG would follow the launching
 * thread, not the process). */
static int play_app(void)
{
	struct timespec tick = {0, 500 * 1000 * 1000};
	pid_t parent = getppid();
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	while (getppid() == parent && sigtimedwait(&set, NULL, &tick) < 0)
		;
	return 0;
}

static int version_at_least(const char *v, int a, int b, int c)
{
	int x = 0, y = 0, z = 0;

	sscanf(v, "%d.%d.%d", &x, &y, &z);
	return x != a ? x > a : y != b ? y > b : z >= c;
}

/* The VM by UUID, then by name (VMIdentifier); NULL after "Virtual machine not found.". */
static cJSON *find_vm(cJSON *list, const char *id)
{
	cJSON *vm;
	const char *keys[] = {"uuid", "name"};
	size_t k;

	for (k = 0; k < 2; k++)
		cJSON_ArrayForEach(vm, list) {
			const cJSON *v = cJSON_GetObjectItemCaseSensitive(vm, keys[k]);
			if (cJSON_IsString(v) && strcmp(v->valuestring, id) == 0)
				return vm;
		}
	fprintf(stderr, "Error: Virtual machine not found.\n");
	return NULL;
}

static const char *field(const cJSON *vm, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(vm, key);

	return cJSON_IsString(v) ? v->valuestring : "";
}

static int post(const char *name, const char *hook, const char *body, char *message, size_t cap)
{
	char path[300];
	sim_answer a;
	long status;

	if (hook[0] == '/') /* a route of its own (the store's clone and delete) */
		snprintf(path, sizeof(path), "%s", hook);
	else
		snprintf(path, sizeof(path), "/_sim/vms/%s/%s", name, hook);
	if (sim_client_http(&client, "POST", path, body, 120, &a) < 0) {
		snprintf(message, cap, "Connection is invalid.");
		return -1;
	}
	sim_client_message(&a, message, cap);
	status = a.status;
	free(a.body);
	return status == 200 ? 0 : -1;
}

int main(int argc, char **argv)
{
	const char *cmd = NULL, *id = NULL, *new_name = NULL;
	int force = 0, kill_ = 0, request = 0, disposable = 0, save = 0, rc = 0, i;
	const char *base = strrchr(argv[0], '/');
	char message[512];
	cJSON *list = NULL, *vm;
	long status;
	sim_answer a;

	if (strcmp(base != NULL ? base + 1 : argv[0], "UTM") == 0)
		return play_app();
	if (sim_client_load(&client, "utmctl") < 0)
		return 1;
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-d") == 0 || strcmp(argv[i], "--debug") == 0 || strcmp(argv[i], "--hide") == 0)
			continue;
		if (strcmp(argv[i], "--name") == 0 && i + 1 < argc)
			new_name = argv[++i]; /* clone */
		else if (strcmp(argv[i], "--force") == 0)
			force = 1;
		else if (strcmp(argv[i], "--kill") == 0)
			kill_ = 1;
		else if (strcmp(argv[i], "--request") == 0)
			request = 1;
		else if (strcmp(argv[i], "--disposable") == 0)
			disposable = 1;
		else if (strcmp(argv[i], "-s") == 0 || strcmp(argv[i], "--save-state") == 0)
			save = 1; /* suspend */
		else if (strcmp(argv[i], "--recovery") == 0 || strcmp(argv[i], "-a") == 0 || strcmp(argv[i], "--attach") == 0)
			continue;
		else if (argv[i][0] == '-')
			return usage_error("Unknown option");
		else if (cmd == NULL)
			cmd = argv[i];
		else if (id == NULL)
			id = argv[i];
		else
			return usage_error("Unexpected argument");
	}
	if (cmd == NULL)
		return usage_error("Missing subcommand");
	if (strcmp(cmd, "version") == 0) {
		printf("%s\n", client.utm_version);
		goto out;
	}
	if (strcmp(cmd, "list") != 0 && strcmp(cmd, "status") != 0 && strcmp(cmd, "start") != 0 &&
	    strcmp(cmd, "stop") != 0 && strcmp(cmd, "ip-address") != 0 && strcmp(cmd, "clone") != 0 &&
	    strcmp(cmd, "delete") != 0 && strcmp(cmd, "suspend") != 0)
		return usage_error("Unknown subcommand");
	if (strcmp(cmd, "clone") == 0 && new_name == NULL) /* the stand-in needs the clone's name */
		return usage_error("Missing expected argument '--name <name>'");
	if (strcmp(cmd, "list") != 0 && id == NULL)
		return usage_error("Missing expected argument '<identifier>'");
	if (force + kill_ + request > 1) {
		/* checked in the command's run(), not by the argument parser: exit 1, not 64 */
		fprintf(stderr, "Error: You can only specify one of: --force, --kill, or --request\n");
		rc = 1;
		goto out;
	}
	if (client.utm_no_gui) {
		/* Only `list` reports the failed event; a VM looked up by name is simply not found. */
		if (strcmp(cmd, "list") == 0) {
			rc = no_gui();
		} else {
			fprintf(stderr, "Error: Virtual machine not found.\n");
			rc = 1;
		}
		goto out;
	}
	/* The first event launches UTM.app, hidden, when it is not running. */
	if (sim_client_http(&client, "POST", "/_sim/utm/launch", "{}", 30, &a) == 0)
		free(a.body);
	if ((list = sim_client_get_json(&client, "/_sim/utm/vms", &status)) == NULL) {
		rc = event_error("Connection is invalid.");
		goto out;
	}
	if (strcmp(cmd, "list") == 0) {
		printf("UUID                                 Status   Name\n");
		cJSON_ArrayForEach(vm, list)
			printf("%s %-8s %s\n", field(vm, "uuid"), field(vm, "status"), field(vm, "name"));
		goto out;
	}
	if ((vm = find_vm(list, id)) == NULL) {
		rc = 1;
		goto out;
	}
	if (strcmp(cmd, "status") == 0) {
		printf("%s\n", field(vm, "status"));
	} else if (strcmp(cmd, "start") == 0) {
		if (disposable) /* the Apple backend has no disposable mode */
			rc = event_error("Operation not supported by the backend.");
		else if (post(field(vm, "name"), "utm-start", "{}", message, sizeof(message)) < 0)
			rc = event_error(message);
	} else if (strcmp(cmd, "suspend") == 0) {
		/* pause(), and with --save-state saveSnapshot() too: the VM stays paused */
		if (strcmp(field(vm, "status"), "started") != 0)
			rc = event_error("The virtual machine is not running.");
		else if (post(field(vm, "name"), "utm-pause", save ? "{\"save\":true}" : "{}", message, sizeof(message)) < 0)
			rc = event_error(message);
	} else if (strcmp(cmd, "stop") == 0) {
		/* Apple VMs: --kill is --force (VZVirtualMachine.stop); --request is requestStop(). UTM's
		 * guard (Scripting/UTMScriptingVirtualMachineImpl.swift, UTM 5.0.3: `guard vm.state ==
		 * .started || stopMethod == .kill`; reference/vm-managers-and-bench.md, 2026-12): a VM that
		 * is not started -- stopped, paused, pausing, resuming -- is refused unless --kill. */
		if (strcmp(field(vm, "status"), "started") != 0 && !kill_)
			rc = event_error("The virtual machine is not running.");
		else if (post(field(vm, "name"), request ? "request-stop" : "power-off", "{}", message, sizeof(message)) < 0 &&
		    !kill_)
			rc = event_error(message);
	} else if (strcmp(cmd, "clone") == 0 || strcmp(cmd, "delete") == 0) {
		/* UTM.app copies the bundle under a new Information.UUID; delete removes it. */
		cJSON *o = cJSON_CreateObject();
		char *body;
		cJSON_AddStringToObject(o, "name", field(vm, "name"));
		if (new_name != NULL)
			cJSON_AddStringToObject(o, "newName", new_name);
		body = cJSON_PrintUnformatted(o);
		cJSON_Delete(o);
		if (post(field(vm, "name"), strcmp(cmd, "clone") == 0 ? "/_sim/utm/clone" : "/_sim/utm/delete", body, message,
		        sizeof(message)) < 0)
			rc = event_error(message);
		free(body);
	} else { /* ip-address */
		if (!version_at_least(client.utm_version, 5, 0, 3))
			rc = event_error("Operation not supported by the backend.");
		else if (strcmp(field(vm, "status"), "started") != 0)
			rc = event_error("The virtual machine is not running.");
		else if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(vm, "booted")) && !client.utm_no_arp)
			printf("%s\n", field(vm, "address")); /* one address from the ARP cache, or nothing */
	}
out:
	cJSON_Delete(list);
	fflush(stdout);
	sim_client_record(&client, argc, argv, rc, NULL);
	return rc;
}
