/* The `lume` CLI stand-in of lume-sim: installed as DIR/bin/lume, it reads DIR/bin/lume-sim.json
 * (the simulator's URL, request log and VM store) and behaves like Lume's CLI: JSON with log lines
 * mixed into stdout, `get` as a one-element array, exit codes 0/1/64. `ls` and `get` ask the
 * simulator over Lume's HTTP API. `run` holds the VM's lock itself, as Lume's CLI process does,
 * and stays until it is ended; `run --detach` relaunches it in the background; `stop` signals
 * whichever process holds the VM's lock, never asks the server (see lume_lock.c). */
#include "sim.h"
#include "sim_client.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define EXIT_USAGE 64

typedef struct {
	sim_client sc;         /* the simulator's URL and request log (source "lume-cli") */
	char logs_dir[PATH_MAX];
	char home[PATH_MAX];   /* Lume's VM store: NAME/config.json */
	char version[32];
	double stop_grace;     /* SIGINT, then SIGKILL after this (Lume: 10 s) */
	int level; /* 0 debug, 1 info, 2 warn, 3 error */
} config;

typedef sim_answer answer;

static void log_line(const config *c, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void log_line(const config *c, int level, const char *fmt, ...)
{
	static const char *names[] = {"DEBUG", "INFO", "WARN", "ERROR"};
	char when[32];
	time_t t = time(NULL);
	struct tm tm;
	va_list ap;

	if (level < c->level)
		return;
	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	printf("[%s] %s: ", when, names[level]);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static int version_below_0_5(const config *c)
{
	int major = 0, minor = 0;

	return sscanf(c->version, "%d.%d", &major, &minor) == 2 && major == 0 && minor < 5;
}

static int load_config(config *c)
{
	char exe[PATH_MAX], path[PATH_MAX + 32], *slash, *text = NULL;
	const char *env;
	cJSON *doc;
	ssize_t n;
	FILE *f;
	long len;

	memset(c, 0, sizeof(*c));
	snprintf(c->version, sizeof(c->version), "%s", SIM_VERSION);
	c->sc.source = "lume-cli";
	c->stop_grace = 10;
	c->level = 1;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		if ((slash = strrchr(exe, '/')) != NULL)
			*slash = '\0';
		snprintf(path, sizeof(path), "%s/lume-sim.json", exe);
		if ((f = fopen(path, "r")) != NULL) {
			fseek(f, 0, SEEK_END);
			len = ftell(f);
			fseek(f, 0, SEEK_SET);
			if (len > 0 && len < 65536 && (text = calloc(1, (size_t)len + 1)) != NULL &&
			    fread(text, 1, (size_t)len, f) != (size_t)len) {
				free(text);
				text = NULL;
			}
			fclose(f);
		}
	}
	if (text != NULL && (doc = cJSON_Parse(text)) != NULL) {
		const cJSON *u = cJSON_GetObjectItemCaseSensitive(doc, "url");
		const cJSON *l = cJSON_GetObjectItemCaseSensitive(doc, "log");
		const cJSON *d = cJSON_GetObjectItemCaseSensitive(doc, "logs_dir");
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, "version");
		const cJSON *h = cJSON_GetObjectItemCaseSensitive(doc, "home");
		const cJSON *g = cJSON_GetObjectItemCaseSensitive(doc, "stop_grace");
		if (cJSON_IsString(u))
			snprintf(c->sc.url, sizeof(c->sc.url), "%s", u->valuestring);
		if (cJSON_IsString(l))
			snprintf(c->sc.log, sizeof(c->sc.log), "%s", l->valuestring);
		if (cJSON_IsString(d))
			snprintf(c->logs_dir, sizeof(c->logs_dir), "%s", d->valuestring);
		if (cJSON_IsString(v))
			snprintf(c->version, sizeof(c->version), "%s", v->valuestring);
		if (cJSON_IsString(h))
			snprintf(c->home, sizeof(c->home), "%s", h->valuestring);
		if (cJSON_IsNumber(g) && g->valuedouble >= 0)
			c->stop_grace = g->valuedouble;
		cJSON_Delete(doc);
	}
	free(text);
	if ((env = getenv("LUME_SIM_URL")) != NULL && env[0] != '\0')
		snprintf(c->sc.url, sizeof(c->sc.url), "%s", env);
	if ((env = getenv("LUME_SIM_VERSION")) != NULL && env[0] != '\0')
		snprintf(c->version, sizeof(c->version), "%s", env);
	if ((env = getenv("LUME_SIM_STOP_GRACE")) != NULL && env[0] != '\0') {
		char *end;
		double g = strtod(env, &end);
		if (end != env && *end == '\0' && g >= 0)
			c->stop_grace = g;
	}
	/* Every Lume command records a telemetry event (and flushes it for up to 1.5 s) unless
	 * LUME_TELEMETRY_ENABLED says off, in any case: 0, false, no, off (Commands/Telemetry.swift). */
	env = getenv("LUME_TELEMETRY_ENABLED");
	c->sc.telemetry = env == NULL || !(strcmp(env, "0") == 0 || strcasecmp(env, "false") == 0 ||
	    strcasecmp(env, "no") == 0 || strcasecmp(env, "off") == 0);
	if ((env = getenv("LUME_LOG_LEVEL")) != NULL) {
		if (strcmp(env, "debug") == 0)
			c->level = 0;
		else if (strcmp(env, "warn") == 0 || strcmp(env, "warning") == 0)
			c->level = 2;
		else if (strcmp(env, "error") == 0)
			c->level = 3;
	}
	if (c->sc.url[0] == '\0') {
		fprintf(stderr, "lume (lume-sim stand-in): no simulator configured: lume-sim.json missing next to "
		    "this program and LUME_SIM_URL unset\n");
		return -1;
	}
	return 0;
}

/* One line in the simulator's request log, so tests can see what the CLI was asked. */
static void record(const config *c, int argc, char **argv, int code, const char *note)
{
	sim_client_record(&c->sc, argc, argv, code, note);
}

static int http(const config *c, const char *method, const char *path, const char *body, double timeout, answer *a)
{
	if (sim_client_http(&c->sc, method, path, body, timeout, a) == 0)
		return 0;
	fprintf(stderr, "Error: cannot reach lume-sim at %s: %s\n", c->sc.url, a->error);
	return -1;
}

/* The server's {"message"} on stderr, as Lume's CLI reports its errors. */
static int report_failure(const answer *a)
{
	cJSON *doc = cJSON_Parse(a->body);
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(doc, "message");

	if (cJSON_IsString(m))
		fprintf(stderr, "Error: %s\n", m->valuestring);
	else
		fprintf(stderr, "Error: unexpected answer from the VM store (HTTP %ld)\n", a->status);
	cJSON_Delete(doc);
	return 1;
}

static void normalize(const char *in, char *out, size_t cap)
{
	size_t i;

	snprintf(out, cap, "%s", in);
	for (i = 0; out[i] != '\0'; i++)
		if (out[i] == ':')
			out[i] = '_';
}

static void print_table(cJSON *array)
{
	const cJSON *vm;

	printf("%-24s %-8s %-10s %-16s\n", "name", "os", "status", "ip");
	cJSON_ArrayForEach(vm, array) {
		const cJSON *ip = cJSON_GetObjectItemCaseSensitive(vm, "ipAddress");
		printf("%-24s %-8s %-10s %-16s\n", cJSON_GetObjectItemCaseSensitive(vm, "name")->valuestring,
		    cJSON_GetObjectItemCaseSensitive(vm, "os")->valuestring,
		    cJSON_GetObjectItemCaseSensitive(vm, "status")->valuestring, cJSON_IsString(ip) ? ip->valuestring : "-");
	}
}

/* GET path; print the JSON (wrapped in an array when `wrap`) among log lines. */
static int cmd_show(const config *c, const char *path, int wrap, int json, const char *what)
{
	answer a;
	cJSON *doc, *out;
	char *text;

	log_line(c, 1, "%s", what);
	if (http(c, "GET", path, NULL, 30, &a) < 0)
		return 1;
	if (a.status != 200) {
		report_failure(&a);
		free(a.body);
		return 1;
	}
	if ((doc = cJSON_Parse(a.body)) == NULL) {
		fprintf(stderr, "Error: the VM store answered something that is not JSON\n");
		free(a.body);
		return 1;
	}
	free(a.body);
	if (wrap) {
		out = cJSON_CreateArray();
		cJSON_AddItemToArray(out, doc);
	} else
		out = doc;
	/* Printed at every log level: real Lume lets some lines through LUME_LOG_LEVEL=error too,
	 * and clients must cope. */
	printf("[lume-sim] notice: %s\n", what);
	if (json) {
		text = cJSON_Print(out);
		printf("%s\n", text);
		free(text);
	} else
		print_table(out);
	log_line(c, 1, "done");
	cJSON_Delete(out);
	return 0;
}

static int vm_status(const config *c, const char *name, char *status, size_t cap)
{
	char path[300];
	answer a;
	cJSON *doc;
	const cJSON *st;
	int rc = -1;

	snprintf(path, sizeof(path), "/lume/vms/%s", name);
	if (http(c, "GET", path, NULL, 30, &a) < 0)
		return -2;
	if (a.status == 200 && (doc = cJSON_Parse(a.body)) != NULL) {
		st = cJSON_GetObjectItemCaseSensitive(doc, "status");
		if (cJSON_IsString(st)) {
			snprintf(status, cap, "%s", st->valuestring);
			rc = 0;
		}
		cJSON_Delete(doc);
	} else if (a.status == 400)
		report_failure(&a);
	free(a.body);
	return rc;
}

static void config_path(const config *c, const char *name, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s/%s/config.json", c->home, name);
}

/* `lume run NAME` (VM.swift run()): take the VM's lock on config.json and keep it while the VM
 * runs, in this process; the simulator boots the guest as ours. Lume installs no SIGINT handler:
 * `lume stop`'s SIGINT ends this process, the lock goes with it, and so does the VM (the
 * simulator sees the process gone). Otherwise it stays until the simulator is gone. */
static int run_foreground(const config *c, const char *name, int argc, char **argv)
{
	char status[64], path[PATH_MAX + 300], body[64];
	answer a;
	int fd, rc;

	if (vm_status(c, name, status, sizeof(status)) < 0)
		return 1;
	config_path(c, name, path, sizeof(path));
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0) {
		fprintf(stderr, "Error: Virtual machine not found: %s\n", name);
		return 1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		/* What real Lume does next rewrites the VM's config.json: record it loudly. */
		log_line(c, 3, "VM already running (failed to acquire lock)");
		log_line(c, 1, "Attempting emergency lock cleanup");
		record(c, argc, argv, -1, "emergency lock cleanup: config.json rewritten");
		fprintf(stderr, "Error: Virtual machine already running: %s\n", name);
		close(fd);
		return 1;
	}
	snprintf(body, sizeof(body), "{\"pid\":%ld}", (long)getpid());
	snprintf(path, sizeof(path), "/_sim/vms/%s/attach", name);
	if (http(c, "POST", path, body, 30, &a) < 0)
		return 1;
	rc = a.status == 200 ? 0 : report_failure(&a);
	free(a.body);
	if (rc != 0)
		return rc;
	log_line(c, 1, "VM %s started; running until it stops", name);
	fflush(stdout);
	for (;;) {
		sim_sleep(0.2);
		if ((rc = vm_status(c, name, status, sizeof(status))) == -2)
			return 1; /* the simulator is gone, and its guests with it */
		if (rc == 0 && strcmp(status, "running") != 0)
			return 0;
	}
}

/* `lume run NAME --detach` (DetachedRun.swift): relaunch as `nohup lume run NAME --display none`
 * (the arguments less --detach and --log-file) with its output in the log, print where, exit 0,
 * without looking at the VM: a VM that does not exist fails in the background, in the log. */
static int run_detached(const config *c, const char *name, const char *log_file, int argc, char **argv)
{
	const char *args[40];
	char exe[PATH_MAX], logpath[PATH_MAX + 300];
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, defaults;
	ssize_t len;
	size_t n = 0;
	pid_t pid;
	int i, display = 0, e;

	if ((len = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) < 0) {
		fprintf(stderr, "Error: Cannot locate the Lume executable for detached launch.\n");
		return 1;
	}
	exe[len] = '\0';
	if (log_file != NULL)
		snprintf(logpath, sizeof(logpath), "%s", log_file);
	else
		snprintf(logpath, sizeof(logpath), "%s/%s.log", c->logs_dir[0] ? c->logs_dir : "/tmp", name);
	args[n++] = exe;
	for (i = 1; i < argc && n < 36; i++) {
		if (strcmp(argv[i], "--detach") == 0)
			continue;
		if (strcmp(argv[i], "--log-file") == 0) {
			i++;
			continue;
		}
		if (strcmp(argv[i], "--display") == 0 || strcmp(argv[i], "--no-display") == 0)
			display = 1;
		args[n++] = argv[i];
	}
	if (!display) {
		args[n++] = "--display";
		args[n++] = "none";
	}
	args[n] = NULL;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, logpath, O_WRONLY | O_CREAT | O_APPEND, 0644);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	/* Every signal as default (Foundation's Process), SIGHUP ignored (nohup). */
	sigemptyset(&none);
	sigfillset(&defaults);
	sigdelset(&defaults, SIGHUP);
	signal(SIGHUP, SIG_IGN);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &defaults);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	e = posix_spawn(&pid, exe, &fa, &attr, (char *const *)args, environ);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	if (e != 0) {
		fprintf(stderr, "Error: Failed to launch the detached VM process: %s\n", strerror(e));
		return 1;
	}
	printf("Started '%s' in the background (PID %ld).\n", name, (long)pid);
	printf("Log: %s\n", logpath);
	return 0;
}

/* `lume stop NAME` (VM.swift stop()): the process that holds the VM's config.json gets SIGINT,
 * SIGKILL when it is still there after the grace period. No request goes to the server: for a
 * VM started over HTTP that process is the server, which ends with every VM it runs. */
static int cmd_stop(const config *c, const char *name, int argc, char **argv)
{
	char status[64], path[PATH_MAX + 300], note[SIM_NAME_MAX + 300];
	pid_t pid;
	int sig;

	log_line(c, 1, "Stopping VM %s", name);
	if (vm_status(c, name, status, sizeof(status)) < 0)
		return 1; /* not found, reported */
	config_path(c, name, path, sizeof(path));
	if ((pid = sim_lock_owner(path)) == 0) {
		fprintf(stderr, "Error: Virtual machine not running: %s\n", name);
		return 1;
	}
	log_line(c, 1, "Found process %ld holding lock on config file", (long)pid);
	/* Recorded first: when the holder is the simulator, its log goes with it. */
	snprintf(note, sizeof(note), "SIGINT to PID %ld, which holds %s", (long)pid, name);
	record(c, argc, argv, -1, note);
	if ((sig = sim_signal_owner(pid, c->stop_grace)) < 0) {
		fprintf(stderr, "Error: Internal error: Failed to stop VM process\n");
		return 1;
	}
	/* On a Mac the VM is gone with its process; the simulator needs a moment to stop the guest. */
	while (vm_status(c, name, status, sizeof(status)) == 0 && strcmp(status, "running") == 0)
		sim_sleep(0.05);
	log_line(c, 1, sig == SIGKILL ? "VM forcefully stopped" : "VM stopped successfully via process termination");
	return 0;
}

/* `lume restart NAME` / `lume shutdown NAME` (Lume 0.5.x, Commands/GuestPower.swift): `sudo
 * /sbin/shutdown -r now` (-h) in the guest over SSH; the VM itself is never stopped. The guest
 * reboots in the same VM process, which keeps the host level it read at its start
 * (reference/lume.md, 2026-12-06); a halted guest ends its VM, and a `lume run` with it. */
static int cmd_guest_power(const config *c, const char *name, int reboot)
{
	char status[64], path[300];
	answer a;
	int rc;

	if (vm_status(c, name, status, sizeof(status)) < 0)
		return 1; /* not found, reported */
	if (strcmp(status, "running") != 0) {
		fprintf(stderr, "Error: Virtual machine not running: %s\n", name);
		return 1;
	}
	log_line(c, 1, "Running 'sudo shutdown %s now' in VM %s over SSH", reboot ? "-r" : "-h", name);
	snprintf(path, sizeof(path), "/_sim/vms/%s/%s", name, reboot ? "guest-reboot" : "guest-halt");
	if (http(c, "POST", path, "", 30, &a) < 0)
		return 1;
	rc = a.status == 200 ? 0 : report_failure(&a);
	free(a.body);
	if (rc == 0)
		log_line(c, 1, "VM %s: guest %s requested", name, reboot ? "restart" : "shutdown");
	return rc;
}

/* A clone or delete through the server: 0 and `done` logged on 200, else its message, exit 1. */
static int store_request(const config *c, const char *method, const char *path, const char *body, const char *done)
{
	answer a;
	int rc;

	if (http(c, method, path, body, 600, &a) < 0)
		return 1;
	rc = a.status == 200 ? 0 : report_failure(&a);
	if (rc == 0)
		log_line(c, 1, "%s", done);
	free(a.body);
	return rc;
}

/* `lume clone SRC DST` (Commands/Clone.swift) through the server's clone route. */
static int cmd_clone(const config *c, const char *src, const char *dst)
{
	cJSON *o = cJSON_CreateObject();
	char *body;
	int rc;

	cJSON_AddStringToObject(o, "name", src);
	cJSON_AddStringToObject(o, "newName", dst);
	body = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	log_line(c, 1, "Cloning VM %s to %s", src, dst);
	rc = store_request(c, "POST", "/lume/vms/clone", body, "VM cloned successfully");
	free(body);
	return rc;
}

/* `lume delete NAME [--force]` (Commands/Delete.swift): asks first unless --force. */
static int cmd_delete(const config *c, const char *name, int force)
{
	char path[300], line[16];

	if (!force) {
		printf("Are you sure you want to delete the virtual machine '%s'? [y/N] ", name);
		fflush(stdout);
		if (fgets(line, sizeof(line), stdin) == NULL || (strcmp(line, "y\n") != 0 && strcmp(line, "yes\n") != 0)) {
			printf("Deletion cancelled\n");
			return 0;
		}
	}
	log_line(c, 1, "Deleting VM %s", name);
	snprintf(path, sizeof(path), "/lume/vms/%s", name);
	return store_request(c, "DELETE", path, NULL, "VM deleted successfully");
}

static void usage(FILE *f)
{
	fprintf(f, "OVERVIEW: lume (lume-sim stand-in)\n\n"
	           "USAGE: lume <subcommand>\n\n"
	           "SUBCOMMANDS:\n  ls       List virtual machines\n  get      Get VM details\n"
	           "  run      Run a virtual machine\n  stop     Stop a virtual machine\n"
	           "  restart  Restart the guest OS (0.5: shutdown -r over SSH; the VM keeps running)\n"
	           "  shutdown Shut the guest OS down (0.5: shutdown -h over SSH)\n"
	           "  clone    Clone an existing virtual machine\n  delete   Delete a virtual machine\n"
	           "  config   Get or set lume configuration (here: config storage list)\n");
}

static int usage_error(const char *msg, const char *arg)
{
	if (arg != NULL)
		fprintf(stderr, "Error: %s '%s'\n", msg, arg);
	else
		fprintf(stderr, "Error: %s\n", msg);
	usage(stderr);
	return EXIT_USAGE;
}

static int dispatch(const config *c, int argc, char **argv)
{
	const char *cmd, *name = NULL, *log_file = NULL, *dst = NULL;
	char vm[256], dst_vm[256];
	int i, json = 0, detach = 0, force = 0;

	if (argc < 2)
		return usage_error("Missing expected subcommand", NULL);
	cmd = argv[1];
	if (strcmp(cmd, "--version") == 0) {
		printf("%s\n", c->version);
		return 0;
	}
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(cmd, "config") == 0) {
		/* `lume config storage list` (Config.swift): the simulator's one location, the default. */
		if (argc != 4 || strcmp(argv[2], "storage") != 0 || strcmp(argv[3], "list") != 0)
			return usage_error("lume-sim knows only", "config storage list");
		printf("VM Storage Locations:\n  - home: %s (default)\n", c->home);
		return 0;
	}
	if (strcmp(cmd, "ls") != 0 && strcmp(cmd, "list") != 0 && strcmp(cmd, "get") != 0 && strcmp(cmd, "run") != 0 &&
	    strcmp(cmd, "stop") != 0 && strcmp(cmd, "clone") != 0 && strcmp(cmd, "delete") != 0 &&
	    ((strcmp(cmd, "restart") != 0 && strcmp(cmd, "shutdown") != 0) || version_below_0_5(c)))
		return usage_error("Unknown subcommand", cmd);
	for (i = 2; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--format") == 0 || strcmp(a, "-f") == 0) {
			if (++i == argc)
				return usage_error("Missing value for", a);
			if (strcmp(argv[i], "json") != 0 && strcmp(argv[i], "text") != 0)
				return usage_error("Invalid value for '--format <format>':", argv[i]);
			json = strcmp(argv[i], "json") == 0;
		} else if (strcmp(cmd, "run") == 0 && strcmp(a, "--detach") == 0 && !version_below_0_5(c)) {
			detach = 1;
		} else if (strcmp(cmd, "run") == 0 && strcmp(a, "--no-display") == 0) {
			continue;
		} else if (strcmp(cmd, "run") == 0 && strcmp(a, "--log-file") == 0 && !version_below_0_5(c)) {
			if (++i == argc)
				return usage_error("Missing value for", a);
			log_file = argv[i];
		} else if (strcmp(cmd, "delete") == 0 && strcmp(a, "--force") == 0) {
			force = 1;
		} else if ((strcmp(cmd, "run") == 0 && strcmp(a, "--display") == 0) || strcmp(a, "--storage") == 0 ||
		    (strcmp(cmd, "clone") == 0 && (strcmp(a, "--source-storage") == 0 || strcmp(a, "--dest-storage") == 0))) {
			if (++i == argc)
				return usage_error("Missing value for", a);
		} else if (a[0] == '-') {
			return usage_error("Unknown option", a);
		} else if (name == NULL && strcmp(cmd, "ls") != 0 && strcmp(cmd, "list") != 0) {
			name = a;
		} else if (dst == NULL && strcmp(cmd, "clone") == 0) {
			dst = a;
		} else {
			return usage_error("Unexpected argument", a);
		}
	}
	if (strcmp(cmd, "ls") == 0 || strcmp(cmd, "list") == 0)
		return cmd_show(c, "/lume/vms", 0, json, "Listing VMs");
	if (name == NULL)
		return usage_error("Missing expected argument '<name>'", NULL);
	normalize(name, vm, sizeof(vm));
	if (strcmp(cmd, "get") == 0) {
		char path[300];
		snprintf(path, sizeof(path), "/lume/vms/%s", vm);
		return cmd_show(c, path, 1, json, "Getting VM details");
	}
	if (strcmp(cmd, "clone") == 0) {
		if (dst == NULL)
			return usage_error("Missing expected argument '<new-name>'", NULL);
		normalize(dst, dst_vm, sizeof(dst_vm));
		return cmd_clone(c, vm, dst_vm);
	}
	if (strcmp(cmd, "delete") == 0)
		return cmd_delete(c, vm, force);
	if (strcmp(cmd, "run") == 0)
		return detach ? run_detached(c, vm, log_file, argc, argv) : run_foreground(c, vm, argc, argv);
	if (strcmp(cmd, "restart") == 0 || strcmp(cmd, "shutdown") == 0)
		return cmd_guest_power(c, vm, strcmp(cmd, "restart") == 0);
	return cmd_stop(c, vm, argc, argv);
}

int main(int argc, char **argv)
{
	config c;
	int rc;

	if (load_config(&c) < 0)
		return 1;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	rc = dispatch(&c, argc, argv);
	fflush(stdout);
	record(&c, argc, argv, rc, NULL);
	curl_global_cleanup();
	return rc;
}
