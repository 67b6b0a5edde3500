#include "sim_fixture.h"
#include "lm_test.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* Simulators started by this test process, killed at exit if a teardown never ran. */
static pid_t started[4];

static void kill_started(void)
{
	size_t i;

	for (i = 0; i < sizeof(started) / sizeof(started[0]); i++)
		if (started[i] > 0) {
			kill(started[i], SIGTERM);
			waitpid(started[i], NULL, 0);
			started[i] = 0;
		}
}

static void remember(pid_t pid, pid_t forget)
{
	static int registered;
	size_t i;

	if (!registered) {
		atexit(kill_started);
		registered = 1;
	}
	for (i = 0; i < sizeof(started) / sizeof(started[0]); i++)
		if (started[i] == forget) {
			started[i] = pid;
			return;
		}
}

static void nap(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};

	nanosleep(&ts, NULL);
}

static int read_info(sim_fixture *f, const char *path)
{
	char *text = lm_test_slurp(path, NULL);
	cJSON *doc = text != NULL ? cJSON_Parse(text) : NULL;
	const cJSON *vm;
	int ok = 0;

	free(text);
	if (doc == NULL)
		return -1;
	if (cJSON_IsString(cJSON_GetObjectItem(doc, "url")) && cJSON_IsString(cJSON_GetObjectItem(doc, "lume")) &&
	    cJSON_IsString(cJSON_GetObjectItem(doc, "log"))) {
		snprintf(f->url, sizeof(f->url), "%s", cJSON_GetObjectItem(doc, "url")->valuestring);
		snprintf(f->lume, sizeof(f->lume), "%s", cJSON_GetObjectItem(doc, "lume")->valuestring);
		snprintf(f->log, sizeof(f->log), "%s", cJSON_GetObjectItem(doc, "log")->valuestring);
		f->nvms = 0;
		cJSON_ArrayForEach(vm, cJSON_GetObjectItem(doc, "vms")) {
			if (f->nvms == SIM_FIXTURE_MAX_VMS)
				break;
			snprintf(f->names[f->nvms], sizeof(f->names[0]), "%s", cJSON_GetObjectItem(vm, "name")->valuestring);
			snprintf(f->addresses[f->nvms], sizeof(f->addresses[0]), "%s",
			    cJSON_GetObjectItem(vm, "address")->valuestring);
			snprintf(f->vm_dirs[f->nvms], sizeof(f->vm_dirs[0]), "%s", cJSON_GetObjectItem(vm, "dir")->valuestring);
			snprintf(f->vm_configs[f->nvms], sizeof(f->vm_configs[0]), "%s",
			    cJSON_GetObjectItem(vm, "config")->valuestring);
			f->nvms++;
		}
		ok = 1;
	}
	cJSON_Delete(doc);
	return ok ? 0 : -1;
}

int sim_fixture_start(sim_fixture *f, const char *tag, const char *const args[])
{
	const char *argv[64];
	char simdir[PATH_MAX + 8], info[PATH_MAX + 16], out[PATH_MAX + 16];
	posix_spawn_file_actions_t fa;
	size_t n = 0, i;
	double waited;
	int status, e;
	char *dir = lm_test_tmpdir(tag);
	long http_timeout = f->http_timeout;

	memset(f, 0, sizeof(*f));
	f->http_timeout = http_timeout;
	if (snprintf(f->dir, sizeof(f->dir), "%s", dir) >= (int)sizeof(f->dir)) {
		fprintf(stderr, "fixture: %s: path too long\n", dir);
		free(dir);
		return -1;
	}
	free(dir);
	snprintf(simdir, sizeof(simdir), "%s/sim", f->dir);
	snprintf(info, sizeof(info), "%s/info.json", f->dir);
	argv[n++] = LUME_SIM_PROGRAM;
	argv[n++] = "--port";
	argv[n++] = "0";
	argv[n++] = "--dir";
	argv[n++] = simdir;
	argv[n++] = "--info";
	argv[n++] = info;
	argv[n++] = "--exit-with-parent";
	/* The guests' /24 is the test's own, from the address plan. */
	argv[n++] = "--address-base";
	argv[n++] = lm_test_address_base();
	for (i = 0; args != NULL && args[i] != NULL && n < 63; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	/* The simulator's summary goes to a file; its warnings stay on our stderr. */
	snprintf(out, sizeof(out), "%s/sim.out", f->dir);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	e = posix_spawn(&f->pid, argv[0], &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (e != 0) {
		fprintf(stderr, "fixture: cannot start %s: %s\n", argv[0], strerror(e));
		f->pid = 0;
		return -1;
	}
	remember(f->pid, 0);
	for (waited = 0; waited < 20; waited += 0.02) {
		if (access(info, R_OK) == 0 && read_info(f, info) == 0)
			return 0;
		if (waitpid(f->pid, &status, WNOHANG) == f->pid) {
			fprintf(stderr, "fixture: lume-sim exited at once (status %d)\n", status);
			remember(0, f->pid);
			f->pid = 0;
			return -1;
		}
		nap(0.02);
	}
	fprintf(stderr, "fixture: lume-sim did not write %s in time\n", info);
	sim_fixture_stop(f);
	return -1;
}

int sim_fixture_stop(sim_fixture *f)
{
	double waited;
	int status = 0, rc = 0;

	if (f->pid > 0) {
		kill(f->pid, SIGTERM);
		for (waited = 0; waited < 15; waited += 0.02) {
			if (waitpid(f->pid, &status, WNOHANG) == f->pid)
				break;
			nap(0.02);
		}
		if (waited >= 15) {
			fprintf(stderr, "fixture: lume-sim %ld ignored SIGTERM; killing it\n", (long)f->pid);
			kill(f->pid, SIGKILL);
			waitpid(f->pid, &status, 0);
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "fixture: lume-sim did not exit cleanly (status %d)\n", status);
			rc = -1;
		}
		remember(0, f->pid);
		f->pid = 0;
	}
	if (f->dir[0] != '\0')
		lm_test_rmtree(f->dir);
	f->dir[0] = '\0';
	return rc;
}

int sim_fixture_count(const sim_fixture *f, const char *const needles[])
{
	char *text = lm_test_slurp(f->log, NULL), *line, *save = NULL;
	int count = 0;
	size_t i;

	if (text == NULL)
		return -1;
	for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		for (i = 0; needles[i] != NULL && strstr(line, needles[i]) != NULL; i++)
			;
		if (needles[i] == NULL)
			count++;
	}
	free(text);
	return count;
}

static size_t collect(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	char **body = userdata;
	size_t old = *body != NULL ? strlen(*body) : 0, n = size * nmemb;
	char *nb = realloc(*body, old + n + 1);

	if (nb == NULL)
		return 0;
	memcpy(nb + old, ptr, n);
	nb[old + n] = '\0';
	*body = nb;
	return n;
}

int sim_fixture_http(const sim_fixture *f, const char *method, const char *path, const char *data, long *status,
    char **body, char *content_type, size_t ct_cap)
{
	CURL *h = curl_easy_init();
	char url[512];
	const char *ct = NULL;
	CURLcode cc;

	*body = NULL;
	*status = 0;
	if (h == NULL)
		return -1;
	snprintf(url, sizeof(url), "%s%s", f->url, path);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(h, CURLOPT_TIMEOUT, f->http_timeout > 0 ? f->http_timeout : 30L);
	curl_easy_setopt(h, CURLOPT_PATH_AS_IS, 1L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, body);
	if (strcmp(method, "POST") == 0)
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, data != NULL ? data : "");
	else if (strcmp(method, "GET") != 0)
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	cc = curl_easy_perform(h);
	if (cc == CURLE_OK) {
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
		if (content_type != NULL && curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct != NULL)
			snprintf(content_type, ct_cap, "%s", ct);
	}
	curl_easy_cleanup(h);
	if (*body == NULL)
		*body = calloc(1, 1);
	return cc == CURLE_OK ? 0 : cc == CURLE_OPERATION_TIMEDOUT ? -2 : -1;
}

int sim_fixture_vm(const sim_fixture *f, const char *name)
{
	int i;

	for (i = 0; i < f->nvms; i++)
		if (strcmp(f->names[i], name) == 0)
			return i;
	return -1;
}

const char *sim_fixture_address(const sim_fixture *f, const char *name)
{
	int i = sim_fixture_vm(f, name);

	return i >= 0 ? f->addresses[i] : "";
}
