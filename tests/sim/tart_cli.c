/* The `tart` stand-in of lume-sim (installed as DIR/bin/tart): Tart's CLI as
 * docs/vm-managers.md lists it, over the simulator's guests. Its store is Tart's: $TART_HOME, else
 * ~/.tart, with vms/NAME/{config.json,disk.img,nvram.bin} (or the stacked layout: manifest.json and
 * overlay.asif for disk.img); a VM runs while a `tart run` process
 * holds an fcntl write lock on its config.json (Sources/tart/PIDLock.swift), and every command
 * finds that out the way Tart does (F_GETLK). `tart run` blocks for the VM's life; the simulator
 * boots the guest for it (POST /_sim/vms/NAME/attach) and powers it off when SIGINT comes
 * (VZVirtualMachine.stop), before the process exits and lets go of the lock. `tart suspend` sends
 * it SIGUSR1: the VM's state goes to state.vzvmsave and the process exits; the next `tart run`
 * restores that snapshot (the same guest, with the devices it had) and removes it. */
#include "sim_client.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define EX_USAGE 64

static sim_client client;
static char home[PATH_MAX];

static void tart_home(void)
{
	const char *env = getenv("TART_HOME"), *h = getenv("HOME");

	if (env != NULL && env[0] != '\0')
		snprintf(home, sizeof(home), "%s", env);
	else
		snprintf(home, sizeof(home), "%s/.tart", h != NULL ? h : "");
}

static void vm_file(char *buf, size_t cap, const char *name, const char *file)
{
	snprintf(buf, cap, "%s/vms/%s/%s", home, name, file);
}

static int vm_has(const char *name, const char *file)
{
	char path[PATH_MAX + 300];
	struct stat st;

	vm_file(path, sizeof(path), name, file);
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* VMDirectory.initialized: config.json and nvram.bin, with disk.img, or with manifest.json and
 * overlay.asif and no disk.img: the stacked layout (Layout.stackedLocal, openai/tart 16d186c;
 * reference/vm-managers-and-bench.md, 2026-12-06). */
static int vm_exists(const char *name)
{
	if (name[0] == '\0' || name[0] == '.' || strchr(name, '/') != NULL)
		return 0;
	if (!vm_has(name, "config.json") || !vm_has(name, "nvram.bin"))
		return 0;
	return vm_has(name, "disk.img") || (vm_has(name, "manifest.json") && vm_has(name, "overlay.asif"));
}

/* VMDirectory.running(): the PID of the F_GETLK holder of config.json, 0: none. */
static long lock_pid(const char *name)
{
	char path[PATH_MAX + 300];
	struct flock fl;
	long pid = 0;
	int fd;

	vm_file(path, sizeof(path), name, "config.json");
	if ((fd = open(path, O_RDWR | O_CLOEXEC)) < 0)
		return 0;
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	if (fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK)
		pid = fl.l_pid;
	close(fd);
	return pid;
}

static const char *state_of(const char *name)
{
	char path[PATH_MAX + 300];

	if (lock_pid(name) != 0)
		return "running";
	vm_file(path, sizeof(path), name, "state.vzvmsave");
	return access(path, F_OK) == 0 ? "suspended" : "stopped";
}

static cJSON *read_config(const char *name)
{
	char path[PATH_MAX + 300], buf[65536];
	size_t n;
	FILE *f;

	vm_file(path, sizeof(path), name, "config.json");
	if ((f = fopen(path, "r")) == NULL)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return cJSON_Parse(buf);
}

static double number(const cJSON *o, const char *key, double dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

/* Disk: the disk image's size in decimal GB; Size: what it takes on the host. */
static void disk_sizes(const char *name, long *disk, double *size)
{
	char path[PATH_MAX + 300];
	struct stat st;

	*disk = 0;
	*size = 0;
	/* A stacked VM has no disk.img: its overlay stands in (what Tart says of its Disk is not in the
	 * reference; nothing in lume-metal reads it). */
	vm_file(path, sizeof(path), name, "disk.img");
	if (stat(path, &st) != 0)
		vm_file(path, sizeof(path), name, "overlay.asif");
	if (stat(path, &st) == 0) {
		*disk = (long)(st.st_size / 1000000000LL);
		*size = (double)st.st_blocks * 512.0 / 1e9;
	}
}

/* swift-argument-parser's usage error: "Error: ...", the usage line, exit 64. */
static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "Error: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nUsage: tart <subcommand>\n  See 'tart --help' for more information.\n");
	return EX_USAGE;
}

static int not_found(const char *name, int validate)
{
	/* From validate() ArgumentParser prefixes "Error: " and exits 1; from run() it is
	 * RuntimeError.VMDoesNotExist: no prefix, exit 2 (Root.swift). */
	fprintf(stderr, "%sthe specified VM \"%s\" does not exist\n", validate ? "Error: " : "", name);
	return validate ? 1 : 2;
}

static int names_sorted(char ***out)
{
	char path[PATH_MAX + 8], **names = NULL;
	struct dirent *e;
	size_t n = 0, i, j;
	DIR *d;

	snprintf(path, sizeof(path), "%s/vms", home);
	if ((d = opendir(path)) != NULL) {
		while ((e = readdir(d)) != NULL) {
			char **bigger;
			if (e->d_name[0] == '.' || !vm_exists(e->d_name) || (bigger = realloc(names, (n + 1) * sizeof(*names))) == NULL)
				continue;
			names = bigger;
			names[n++] = strdup(e->d_name);
		}
		closedir(d);
	}
	for (i = 1; i < n; i++) /* sorted by name (List.swift) */
		for (j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
			char *t = names[j];
			names[j] = names[j - 1];
			names[j - 1] = t;
		}
	*out = names;
	return (int)n;
}

/* Swift's JSONEncoder with .prettyPrinted: two-space indentation, "key" : value. */
static void json_string(const char *s)
{
	cJSON *node = cJSON_CreateString(s);
	char *q = cJSON_PrintUnformatted(node);

	printf("%s", q != NULL ? q : "\"\"");
	free(q);
	cJSON_Delete(node);
}

static int cmd_list(int argc, char **argv)
{
	const char *format = "text", *source = NULL;
	int quiet = 0, i, n;
	char **names;

	for (i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--format") == 0 && i + 1 < argc)
			format = argv[++i];
		else if (strcmp(argv[i], "--source") == 0 && i + 1 < argc)
			source = argv[++i];
		else if (strcmp(argv[i], "-q") == 0 || strcmp(argv[i], "--quiet") == 0)
			quiet = 1;
		else
			return usage_error("Unknown option '%s'", argv[i]);
	}
	if (strcmp(format, "text") != 0 && strcmp(format, "json") != 0)
		return usage_error("The value '%s' is invalid for '--format <format>'", format);
	if (source != NULL && strcmp(source, "local") != 0 && strcmp(source, "oci") != 0)
		return usage_error("'%s' is not a valid source: use local or oci", source);
	n = (source == NULL || strcmp(source, "local") == 0) ? names_sorted(&names) : 0;
	if (n == 0)
		names = NULL;
	if (quiet) {
		for (i = 0; i < n; i++)
			printf("%s\n", names[i]);
	} else if (strcmp(format, "json") == 0) {
		printf("[\n");
		for (i = 0; i < n; i++) {
			long disk;
			double size;
			char when[32];
			time_t t = time(NULL);
			struct tm tm;
			const char *state = state_of(names[i]);
			disk_sizes(names[i], &disk, &size);
			gmtime_r(&t, &tm);
			strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
			printf("  {\n    \"Source\" : \"local\",\n    \"Name\" : ");
			json_string(names[i]);
			printf(",\n    \"Disk\" : %ld,\n    \"Size\" : %ld,\n    \"Accessed\" : \"%s\",\n"
			       "    \"Running\" : %s,\n    \"State\" : \"%s\"\n  }%s\n",
			    disk, (long)size, when, strcmp(state, "running") == 0 ? "true" : "false", state, i + 1 < n ? "," : "");
		}
		printf("%s]\n", n == 0 ? "\n" : "");
	} else if (n == 0) {
		printf("\n"); /* no VMs: an empty line */
	} else {
		/* The text table hides Running (kept in JSON only). */
		printf("%-7s %-24s %-6s %-6s %-16s %s\n", "Source", "Name", "Disk", "Size", "Accessed", "State");
		for (i = 0; i < n; i++) {
			long disk;
			double size;
			disk_sizes(names[i], &disk, &size);
			printf("%-7s %-24s %-6ld %-6ld %-16s %s\n", "local", names[i], disk, (long)size, "just now",
			    state_of(names[i]));
		}
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return 0;
}

static int cmd_get(int argc, char **argv)
{
	const char *format = "text", *name = NULL, *state;
	const cJSON *display;
	cJSON *cfg;
	long disk;
	double size;
	int i;

	for (i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--format") == 0 && i + 1 < argc)
			format = argv[++i];
		else if (argv[i][0] == '-')
			return usage_error("Unknown option '%s'", argv[i]);
		else if (name == NULL)
			name = argv[i];
		else
			return usage_error("Unexpected argument '%s'", argv[i]);
	}
	if (name == NULL)
		return usage_error("Missing expected argument '%s'", "<name>");
	if (!vm_exists(name))
		return not_found(name, 0);
	cfg = read_config(name);
	state = state_of(name);
	disk_sizes(name, &disk, &size);
	display = cJSON_GetObjectItemCaseSensitive(cfg, "display");
	if (strcmp(format, "json") == 0) {
		printf("{\n  \"OS\" : \"%s\",\n  \"CPU\" : %d,\n  \"Memory\" : %ld,\n  \"Disk\" : %ld,\n"
		       "  \"DiskFormat\" : \"raw\",\n  \"Size\" : \"%.3f\",\n  \"Display\" : \"%dx%d\",\n"
		       "  \"Running\" : %s,\n  \"State\" : \"%s\"\n}\n",
		    "darwin", (int)number(cfg, "cpuCount", 4), (long)(number(cfg, "memorySize", 8589934592.0) / 1048576.0),
		    disk, size, (int)number(display, "width", 1024), (int)number(display, "height", 768),
		    strcmp(state, "running") == 0 ? "true" : "false", state);
	} else {
		printf("%-4s %-3s %-6s %-4s %-10s %-10s %-9s %s\n", "OS", "CPU", "Memory", "Disk", "DiskFormat", "Size",
		    "Display", "State");
		printf("%-4s %-3d %-6ld %-4ld %-10s %-10.3f %dx%-5d %s\n", "darwin", (int)number(cfg, "cpuCount", 4),
		    (long)(number(cfg, "memorySize", 8589934592.0) / 1048576.0), disk, "raw", size,
		    (int)number(display, "width", 1024), (int)number(display, "height", 768), state);
	}
	cJSON_Delete(cfg);
	return 0;
}

/* The simulator's view of the guest: booted and its address. 0 known, -1 unreachable. */
static int guest_state(const char *name, int *running, int *booted, char *address, size_t cap)
{
	char path[300];
	cJSON *doc;
	long status;
	const cJSON *a;

	snprintf(path, sizeof(path), "/_sim/vms/%s/state", name);
	if ((doc = sim_client_get_json(&client, path, &status)) == NULL)
		return -1;
	*running = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc, "running"));
	*booted = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc, "booted"));
	a = cJSON_GetObjectItemCaseSensitive(doc, "address");
	snprintf(address, cap, "%s", cJSON_IsString(a) ? a->valuestring : "");
	cJSON_Delete(doc);
	return 0;
}

static int post_pid(const char *name, const char *hook, char *message, size_t cap)
{
	char path[300], body[64];
	sim_answer a;
	long status;

	snprintf(path, sizeof(path), "/_sim/vms/%s/%s", name, hook);
	snprintf(body, sizeof(body), "{\"pid\":%ld}", (long)getpid());
	if (sim_client_http(&client, "POST", path, body, 120, &a) < 0) {
		snprintf(message, cap, "the simulator at %s cannot be reached", client.url);
		return -1;
	}
	sim_client_message(&a, message, cap);
	status = a.status;
	free(a.body);
	return status == 200 ? 0 : -1;
}

static int cmd_run(int argc, char **argv)
{
	const char *name = NULL;
	char path[PATH_MAX + 300], state[PATH_MAX + 300], message[512];
	int no_graphics = 0, graphics = 0, i, fd, fd2, sig, running, booted, restore;
	struct flock fl;
	struct timespec tick = {0, 500 * 1000 * 1000};
	sigset_t set;

	for (i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--no-graphics") == 0)
			no_graphics = 1;
		else if (strcmp(argv[i], "--graphics") == 0)
			graphics = 1;
		else if (argv[i][0] == '-')
			continue; /* --vnc, --dir ...: no difference to the simulated guest */
		else if (name == NULL)
			name = argv[i];
	}
	if (no_graphics && graphics)
		return usage_error("%s", "--graphics and --no-graphics are mutually exclusive");
	if (name == NULL)
		return usage_error("Missing expected argument '%s'", "<name>");
	if (!vm_exists(name))
		return not_found(name, 1);
	vm_file(path, sizeof(path), name, "config.json");
	if ((fd = open(path, O_RDWR | O_CLOEXEC)) < 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return 1;
	}
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	if (fcntl(fd, F_SETLK, &fl) < 0) { /* RuntimeError.VMAlreadyRunning: exit 2 */
		fprintf(stderr, "VM \"%s\" is already running!\n", name);
		close(fd);
		return 2;
	}
	/* SIGINT, SIGUSR1 and SIGUSR2 are the process's own business from here on (Run.swift). */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	vm_file(state, sizeof(state), name, "state.vzvmsave");
	restore = access(state, F_OK) == 0;
	if (post_pid(name, restore ? "restore" : "attach", message, sizeof(message)) < 0) {
		if (strstr(message, "maximum number") != NULL)
			fprintf(stderr, "The number of VMs exceeds the system limit (other running VMs: %s)\n", message);
		else
			fprintf(stderr, "%s\n", message);
		return 1;
	}
	if (restore) /* restored: the snapshot is used up */
		unlink(state);
	fflush(stdout);
	for (;;) {
		sig = sigtimedwait(&set, NULL, &tick);
		if (sig == SIGUSR1) {
			/* VZVirtualMachine.saveMachineStateTo(state.vzvmsave), then the process ends */
			if (post_pid(name, "suspend", message, sizeof(message)) < 0) {
				fprintf(stderr, "failed to suspend the VM: %s\n", message);
				continue;
			}
			if ((fd2 = open(state, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) >= 0) {
				if (write(fd2, "saved machine state", 19) != 19)
					fprintf(stderr, "%s: %s\n", state, strerror(errno));
				close(fd2);
			}
			printf("VM suspended\n");
			return 0;
		}
		if (sig == SIGINT) {
			printf("Stopping VM...\n");
			fflush(stdout);
			post_pid(name, "poweroff", message, sizeof(message)); /* VZVirtualMachine.stop() */
			return 0;
		}
		if (sig == SIGUSR2) {
			printf("Requesting guest OS to stop...\n");
			fflush(stdout);
			post_pid(name, "request-stop", message, sizeof(message)); /* requestStop() */
			continue;
		}
		if (guest_state(name, &running, &booted, message, sizeof(message)) < 0) {
			printf("VM has stopped due to error: the simulator is gone\n");
			return 0;
		}
		if (!running) {
			printf("guest has stopped the virtual machine\n");
			return 0;
		}
	}
}

static int cmd_stop(int argc, char **argv)
{
	const char *name = NULL;
	char path[PATH_MAX + 300], *end;
	double timeout = 30, waited;
	long pid;
	int i;

	for (i = 2; i < argc; i++) {
		if ((strcmp(argv[i], "--timeout") == 0 || strcmp(argv[i], "-t") == 0) && i + 1 < argc) {
			timeout = strtod(argv[++i], &end);
			if (*end != '\0' || timeout < 0)
				return usage_error("The value '%s' is invalid for '-t <timeout>'", argv[i]);
		} else if (argv[i][0] == '-') {
			return usage_error("Unknown option '%s'", argv[i]);
		} else if (name == NULL) {
			name = argv[i];
		}
	}
	if (name == NULL)
		return usage_error("Missing expected argument '%s'", "<name>");
	if (!vm_exists(name))
		return not_found(name, 0);
	if ((pid = lock_pid(name)) == 0) {
		vm_file(path, sizeof(path), name, "state.vzvmsave");
		if (unlink(path) == 0)
			return 0; /* suspended: the snapshot is discarded */
		fprintf(stderr, "VM \"%s\" is not running\n", name);
		return 2;
	}
	/* SIGINT to the lock holder, the lock polled every 100 ms, SIGKILL after the timeout. */
	kill((pid_t)pid, SIGINT);
	for (waited = 0; waited < timeout; waited += 0.1) {
		struct timespec t = {0, 100 * 1000 * 1000};
		if (lock_pid(name) == 0)
			return 0;
		nanosleep(&t, NULL);
	}
	if (lock_pid(name) == 0)
		return 0;
	if (kill((pid_t)pid, SIGKILL) < 0) {
		fprintf(stderr, "failed to forcefully terminate the VM \"%s\": %d\n", name, errno);
		return 1;
	}
	while (lock_pid(name) != 0) {
		struct timespec t = {0, 100 * 1000 * 1000};
		nanosleep(&t, NULL);
	}
	return 0;
}

/* `tart suspend NAME` (Commands/Suspend.swift): SIGUSR1 to the `tart run` that holds the VM. */
static int cmd_suspend(int argc, char **argv)
{
	long pid;

	if (argc != 3)
		return usage_error("Missing expected argument '%s'", "<name>");
	if (!vm_exists(argv[2]))
		return not_found(argv[2], 0);
	if ((pid = lock_pid(argv[2])) == 0) {
		fprintf(stderr, "VM \"%s\" is not running\n", argv[2]);
		return 2;
	}
	if (kill((pid_t)pid, SIGUSR1) < 0) {
		fprintf(stderr, "failed to send SIGUSR1 to the VM \"%s\": %d\n", argv[2], errno);
		return 1;
	}
	return 0;
}

static int cmd_ip(int argc, char **argv)
{
	const char *name = NULL, *resolver = "dhcp";
	char address[64], *end;
	long wait = 0, waited;
	int i, running = 0, booted = 0;

	for (i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--wait") == 0 && i + 1 < argc) {
			wait = strtol(argv[++i], &end, 10);
			if (*end != '\0' || wait < 0)
				return usage_error("The value '%s' is invalid for '--wait <wait>'", argv[i]);
		} else if (strcmp(argv[i], "--resolver") == 0 && i + 1 < argc) {
			resolver = argv[++i];
			if (strcmp(resolver, "dhcp") != 0 && strcmp(resolver, "arp") != 0 && strcmp(resolver, "agent") != 0)
				return usage_error("The value '%s' is invalid for '--resolver <resolver>'", resolver);
		} else if (argv[i][0] == '-') {
			return usage_error("Unknown option '%s'", argv[i]);
		} else if (name == NULL) {
			name = argv[i];
		}
	}
	if (name == NULL)
		return usage_error("Missing expected argument '%s'", "<name>");
	if (!vm_exists(name))
		return not_found(name, 0);
	/* The lease appears once the guest has booted; Tart looks once a second. */
	for (waited = 0;; waited++) {
		int held = lock_pid(name) != 0;
		if (held && guest_state(name, &running, &booted, address, sizeof(address)) == 0 && booted &&
		    address[0] != '\0') {
			printf("%s\n", address);
			return 0;
		}
		if (waited >= wait) {
			fprintf(stderr, "no IP address found%s\n", held ? "" : ", is your VM running?");
			return 1;
		}
		sleep(1);
	}
}

/* `tart clone SRC DST` (Commands/Clone.swift: config.json copied, the ecid kept, a new MAC only
 * when another local VM has the source's) and `tart delete NAME`, through the simulator's store. */
static int cmd_store(int argc, char **argv)
{
	int clone = strcmp(argv[1], "clone") == 0;
	cJSON *o;
	char *body, msg[300];
	sim_answer a;
	int rc;

	if (argc != (clone ? 4 : 3))
		return usage_error("Missing expected argument '%s'", clone ? "<new-name>" : "<name>");
	if (!vm_exists(argv[2]))
		return not_found(argv[2], 0);
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", argv[2]);
	if (clone)
		cJSON_AddStringToObject(o, "newName", argv[3]);
	body = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	rc = sim_client_http(&client, "POST", clone ? "/_sim/tart/clone" : "/_sim/tart/delete", body, 600, &a);
	free(body);
	if (rc < 0) {
		fprintf(stderr, "cannot reach lume-sim: %s\n", a.error);
		return 1;
	}
	rc = a.status == 200 ? 0 : 1;
	if (rc != 0) {
		sim_client_message(&a, msg, sizeof(msg));
		fprintf(stderr, "%s\n", msg);
	}
	free(a.body);
	return rc;
}

int main(int argc, char **argv)
{
	int rc;

	if (sim_client_load(&client, "tart") < 0)
		return 1;
	tart_home();
	if (argc < 2)
		rc = usage_error("%s", "Missing subcommand");
	else if (strcmp(argv[1], "--version") == 0) {
		printf("%s\n", client.tart_version);
		rc = 0;
	} else if (strcmp(argv[1], "list") == 0)
		rc = cmd_list(argc, argv);
	else if (strcmp(argv[1], "get") == 0)
		rc = cmd_get(argc, argv);
	else if (strcmp(argv[1], "run") == 0)
		rc = cmd_run(argc, argv);
	else if (strcmp(argv[1], "stop") == 0)
		rc = cmd_stop(argc, argv);
	else if (strcmp(argv[1], "suspend") == 0)
		rc = cmd_suspend(argc, argv);
	else if (strcmp(argv[1], "ip") == 0)
		rc = cmd_ip(argc, argv);
	else if (strcmp(argv[1], "clone") == 0 || strcmp(argv[1], "delete") == 0)
		rc = cmd_store(argc, argv);
	else
		rc = usage_error("Unknown subcommand '%s'", argv[1]);
	fflush(stdout);
	sim_client_record(&client, argc, argv, rc, NULL);
	return rc;
}
