/* lume-sim: the HTTP server. Lume's routes, bodies, status codes and quirks (docs/simulator.md):
 * run answers 202 to anything, stop blocks then sleeps, failures are 400 {"message"}, an
 * unknown route is 404 text/plain "Not found", paths are routed raw (no percent-decoding, no
 * query splitting), the host status is slow. Routes under /_sim/ are the simulator's own test
 * hooks, not Lume's. */
#include "sim.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define SIM_HEAD_MAX (64 * 1024)
#define SIM_BODY_MAX (1024 * 1024)

typedef struct {
	sim *s;
	int fd;
} conn;

typedef struct {
	int status;
	const char *type;
	char *body; /* malloc'ed */
} reply;

static const char *reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 202: return "Accepted";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	default: return "Internal Server Error";
	}
}

static void set_reply(reply *r, int status, const char *type, const char *body)
{
	r->status = status;
	r->type = type;
	r->body = strdup(body);
}

/* {"message": text + arg} */
static void set_message(reply *r, int status, const char *text, const char *arg)
{
	cJSON *o = cJSON_CreateObject();
	char msg[512];

	snprintf(msg, sizeof(msg), "%s%s", text, arg != NULL ? arg : "");
	cJSON_AddStringToObject(o, "message", msg);
	r->status = status;
	r->type = "application/json";
	r->body = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
}

static void set_json(reply *r, int status, char *json)
{
	r->status = status;
	r->type = "application/json";
	r->body = json;
}

/* "/lume/vms/NAME" + suffix ("" or "/run"...): NAME into name, 1 on a match. */
static int match_vm(const char *path, const char *suffix, char *name, size_t cap)
{
	const char *p = path + strlen("/lume/vms/"), *slash;
	size_t n;

	if (strncmp(path, "/lume/vms/", 10) != 0)
		return 0;
	slash = strchr(p, '/');
	n = slash != NULL ? (size_t)(slash - p) : strlen(p);
	if (n == 0 || n >= cap)
		return 0;
	if (strcmp(slash != NULL ? slash : "", suffix) != 0)
		return 0;
	memcpy(name, p, n);
	name[n] = '\0';
	return 1;
}

static void route_fault(sim *s, const char *body, reply *r)
{
	cJSON *doc = cJSON_Parse(body);
	const cJSON *mode = cJSON_GetObjectItemCaseSensitive(doc, "mode");
	const cJSON *count = cJSON_GetObjectItemCaseSensitive(doc, "count");
	sim_fault f;

	if (!cJSON_IsString(mode)) {
		cJSON_Delete(doc);
		set_message(r, 400, "expected {\"mode\": \"500\"|\"garbage\"|\"none\", \"count\": N}", NULL);
		return;
	}
	if (strcmp(mode->valuestring, "500") == 0)
		f = SIM_FAULT_500;
	else if (strcmp(mode->valuestring, "garbage") == 0)
		f = SIM_FAULT_GARBAGE;
	else if (strcmp(mode->valuestring, "none") == 0)
		f = SIM_FAULT_NONE;
	else {
		set_message(r, 400, "unknown fault mode: ", mode->valuestring);
		cJSON_Delete(doc);
		return;
	}
	pthread_mutex_lock(&s->lock);
	s->fault = f;
	s->fault_count = cJSON_IsNumber(count) ? count->valueint : -1;
	pthread_mutex_unlock(&s->lock);
	cJSON_Delete(doc);
	set_message(r, 200, "fault set", NULL);
}

/* A fault injected by --fault or POST /_sim/fault, for Lume's routes only. */
static int take_fault(sim *s, const char *path, reply *r)
{
	sim_fault f = SIM_FAULT_NONE;

	if (strncmp(path, "/lume/", 6) != 0)
		return 0;
	pthread_mutex_lock(&s->lock);
	if (s->fault != SIM_FAULT_NONE && s->fault_count != 0) {
		f = s->fault;
		if (s->fault_count > 0 && --s->fault_count == 0)
			s->fault = SIM_FAULT_NONE;
	}
	pthread_mutex_unlock(&s->lock);
	if (f == SIM_FAULT_500)
		set_message(r, 500, "The operation couldn't be completed. (lume-sim injected failure)", NULL);
	else if (f == SIM_FAULT_GARBAGE)
		set_reply(r, 200, "application/json", "<html>lume-sim: this is not JSON {\"");
	return f != SIM_FAULT_NONE;
}

/* A run body as Lume decodes it (RunVMRequest, every field optional): a body that is not a JSON
 * object with fields of these types is refused with 400 (Handlers.swift handleRunVM). `vnc` is
 * "enabled" or "disabled", and "disabled" only with noDisplay true; any other value is 400 (Lume
 * main since ab957bd, reference/lume.md 2026-12-06; the tagged 0.5.3 ignored the key). *vnc_off is
 * set when the body asks for no VNC listener. */
static int run_body_ok(const char *body, int *vnc_off)
{
	static const char *const bools[] = {"noDisplay", "recoveryMode", "clipboard"};
	static const char *const strings[] = {"storage", "network", "vnc", "diskPath", "nvramPath"};
	cJSON *doc;
	const cJSON *v;
	size_t i;
	int ok;

	*vnc_off = 0;
	if (body[0] == '\0')
		return 1; /* no body: every default */
	doc = cJSON_Parse(body);
	ok = cJSON_IsObject(doc);
	for (i = 0; ok && i < sizeof(bools) / sizeof(bools[0]); i++)
		ok = (v = cJSON_GetObjectItemCaseSensitive(doc, bools[i])) == NULL || cJSON_IsBool(v) || cJSON_IsNull(v);
	for (i = 0; ok && i < sizeof(strings) / sizeof(strings[0]); i++)
		ok = (v = cJSON_GetObjectItemCaseSensitive(doc, strings[i])) == NULL || cJSON_IsString(v) || cJSON_IsNull(v);
	if (ok && (v = cJSON_GetObjectItemCaseSensitive(doc, "sharedDirectories")) != NULL)
		ok = cJSON_IsArray(v) || cJSON_IsNull(v);
	if (ok && cJSON_IsString(v = cJSON_GetObjectItemCaseSensitive(doc, "vnc"))) {
		*vnc_off = strcmp(v->valuestring, "disabled") == 0;
		ok = strcmp(v->valuestring, "enabled") == 0 ||
		    (*vnc_off && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc, "noDisplay")));
	}
	cJSON_Delete(doc);
	return ok;
}

/* Lume's host status lists every VM, which runs `nc -z -w 2` against port 22 of each running VM
 * with an address (NetworkUtils.swift): status_delay per running VM, twice that for one whose SSH
 * does not answer (nc waits out its timeout, the process deadline is 2 s more). */
static void route_host_status(sim *s, reply *r)
{
	cJSON *o = cJSON_CreateObject();
	size_t i;
	int running = 0;

	for (i = 0; i < s->nvms; i++) {
		sim_vm *vm = &s->vms[i];
		int up, booted;
		pthread_mutex_lock(&s->lock);
		up = vm->running;
		booted = vm->booted;
		pthread_mutex_unlock(&s->lock);
		if (!up)
			continue;
		running++;
		sim_sleep(booted && sim_tcp_probe(vm->address, 22, 2.0) ? s->status_delay : 2 * s->status_delay);
	}
	cJSON_AddStringToObject(o, "status", "healthy");
	cJSON_AddNumberToObject(o, "vm_count", running);
	cJSON_AddNumberToObject(o, "max_vms", s->max_running);
	cJSON_AddNumberToObject(o, "available_slots", running < s->max_running ? s->max_running - running : 0);
	cJSON_AddStringToObject(o, "version", SIM_STATUS_VERSION);
	set_json(r, 200, cJSON_PrintUnformatted(o));
	cJSON_Delete(o);
}

/* POST /_sim/vms/NAME/attach {"pid": N}: the `lume run` stand-in, holding the VM's lock, runs it. */
static void route_attach(sim *s, sim_vm *vm, const char *body, reply *r)
{
	cJSON *doc = cJSON_Parse(body);
	const cJSON *pid = cJSON_GetObjectItemCaseSensitive(doc, "pid");
	char why[256];

	if (!cJSON_IsNumber(pid) || pid->valuedouble < 2) {
		set_message(r, 400, "expected {\"pid\": N}", NULL);
	} else if (sim_vm_run(s, vm, (pid_t)pid->valuedouble, why, sizeof(why)) < 0) {
		set_message(r, 400, why, NULL);
	} else {
		set_message(r, 200, "running", NULL);
	}
	cJSON_Delete(doc);
}

/* POST /lume/vms/clone {"name", "newName", "sourceLocation"?, "destLocation"?} (Lume's
 * CloneRequest): 200 {"message":"VM cloned successfully","source","destination"}; 400 otherwise. */
static void route_clone(sim *s, const char *body, reply *r)
{
	cJSON *doc = cJSON_Parse(body), *o;
	const cJSON *src = cJSON_GetObjectItemCaseSensitive(doc, "name");
	const cJSON *dst = cJSON_GetObjectItemCaseSensitive(doc, "newName");
	char why[256];

	if (!cJSON_IsString(src) || !cJSON_IsString(dst)) {
		set_message(r, 400, "Invalid clone request body", NULL);
	} else if (sim_vm_clone(s, SIM_MGR_LUME, src->valuestring, dst->valuestring, why, sizeof(why)) < 0) {
		set_message(r, 400, why, NULL);
	} else {
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "message", "VM cloned successfully");
		cJSON_AddStringToObject(o, "source", src->valuestring);
		cJSON_AddStringToObject(o, "destination", dst->valuestring);
		set_json(r, 200, cJSON_PrintUnformatted(o));
		cJSON_Delete(o);
	}
	cJSON_Delete(doc);
}

/* POST /_sim/vms/NAME/ACTION: the simulator's own hooks. */
static int match_hook(const char *path, const char *action, char *name, size_t cap)
{
	size_t n = strlen(path), a = strlen(action);

	if (strncmp(path, "/_sim/vms/", 10) != 0 || n <= 10 + a + 1 || path[n - a - 1] != '/' ||
	    strcmp(path + n - a, action) != 0 || n - a - 11 >= cap)
		return 0;
	snprintf(name, cap, "%.*s", (int)(n - a - 11), path + 10);
	return strchr(name, '/') == NULL;
}

/* GET /lume/config/locations (Server.swift, Handlers.swift handleGetLocations): the storage
 * locations as Lume's settings keep them, [{"name", "path"}], a path under the home with "~" as
 * Lume's default "~/.lume" is kept. The simulator has one, the store the `lume` stand-in lists. */
static void route_locations(sim *s, reply *r)
{
	const char *home = getenv("HOME");
	size_t n = home != NULL ? strlen(home) : 0;
	cJSON *a = cJSON_CreateArray(), *o = cJSON_CreateObject();
	char path[sizeof(s->home) + 2];

	if (n > 1 && strncmp(s->home, home, n) == 0 && s->home[n] == '/')
		snprintf(path, sizeof(path), "~%s", s->home + n);
	else
		snprintf(path, sizeof(path), "%s", s->home);
	cJSON_AddStringToObject(o, "name", "home");
	cJSON_AddStringToObject(o, "path", path);
	cJSON_AddItemToArray(a, o);
	set_json(r, 200, cJSON_PrintUnformatted(a));
	cJSON_Delete(a);
}

static void route(sim *s, const char *method, const char *path, const char *body, reply *r)
{
	char name[SIM_NAME_MAX + 64], why[256];
	const sim_pull *pull;
	sim_vm *vm;
	char *json = NULL;
	int status = 0;
	int get = strcmp(method, "GET") == 0, post = strcmp(method, "POST") == 0;

	if (take_fault(s, path, r))
		return;
	if (get && strcmp(path, "/lume/vms") == 0) {
		set_json(r, 200, sim_vms_json(s));
	} else if (get && match_vm(path, "", name, sizeof(name))) {
		if ((pull = sim_pull_find(s, name)) != NULL)
			set_json(r, 200, sim_pull_json(pull)); /* a pull in progress, answered without the disk */
		else if ((vm = sim_lume_vm_find(s, name)) == NULL)
			set_message(r, 400, "Virtual machine not found: ", name);
		else
			set_json(r, 200, sim_vm_json(s, vm));
	} else if (post && match_vm(path, "/run", name, sizeof(name))) {
		cJSON *o;
		int vnc_off;
		if (!run_body_ok(body, &vnc_off)) {
			set_message(r, 400, "Invalid run request body", NULL);
			return;
		}
		/* Lume starts the VM in the background and answers at once, whatever happens. */
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "message", "VM start initiated");
		cJSON_AddStringToObject(o, "name", name);
		cJSON_AddStringToObject(o, "status", "pending");
		set_json(r, 202, cJSON_PrintUnformatted(o));
		cJSON_Delete(o);
		if ((vm = sim_lume_vm_find(s, name)) == NULL) {
			sim_log_event(s, "start-failed", name, "Virtual machine not found");
		} else if (sim_vm_run(s, vm, 0, why, sizeof(why)) == 0) { /* a failure is in the log only */
			pthread_mutex_lock(&s->lock);
			vm->vnc_off = vnc_off;
			pthread_mutex_unlock(&s->lock);
		}
		/* The answer after the start began (--run-answer-delay): a client canceled while it waits
		 * has launched the VM all the same. */
		if (s->run_answer_delay > 0) {
			sim_log_event(s, "run-answer-held", name, NULL);
			sim_sleep(s->run_answer_delay);
		}
	} else if (post && match_vm(path, "/stop", name, sizeof(name))) {
		if ((vm = sim_lume_vm_find(s, name)) == NULL) {
			set_message(r, 400, "Virtual machine not found: ", name);
		} else if (sim_vm_stop(s, vm) < 0) {
			set_message(r, 400, "Virtual machine not running: ", name);
		} else {
			sim_sleep(s->stop_delay); /* Lume's fixed delay after the VM is down */
			set_message(r, 200, "VM stopped successfully", NULL);
		}
	} else if (post && strcmp(path, "/lume/vms/clone") == 0) {
		route_clone(s, body, r);
	} else if (strcmp(method, "DELETE") == 0 && match_vm(path, "", name, sizeof(name))) {
		/* Lume answers a delete with 200 and an empty body. */
		if (sim_vm_delete(s, SIM_MGR_LUME, name, why, sizeof(why)) < 0)
			set_message(r, 400, why, NULL);
		else
			set_reply(r, 200, "application/json", "");
	} else if (get && strcmp(path, "/lume/host/status") == 0) {
		route_host_status(s, r);
	} else if (get && strcmp(path, "/lume/config/locations") == 0) {
		route_locations(s, r);
	} else if (post && strcmp(path, "/_sim/fault") == 0) {
		route_fault(s, body, r);
	} else if (post && match_hook(path, "rekey", name, sizeof(name))) {
		if ((vm = sim_vm_find(s, name)) == NULL)
			set_message(r, 400, "Virtual machine not found: ", name);
		else if (sim_vm_rekey(s, vm) < 0)
			set_message(r, 500, "guest-sshd rekey failed for ", name);
		else
			set_message(r, 200, "host keys replaced", NULL);
	} else if (post && match_hook(path, "address", name, sizeof(name))) {
		cJSON *doc = cJSON_Parse(body);
		const cJSON *a = cJSON_GetObjectItemCaseSensitive(doc, "answer");
		if ((vm = sim_vm_find(s, name)) == NULL) {
			set_message(r, 400, "Virtual machine not found: ", name);
		} else if (!cJSON_IsString(a) || strlen(a->valuestring) >= sizeof(vm->address_answer)) {
			set_message(r, 400, "expected {\"answer\": \"what the managers say\"} of at most 63 bytes", NULL);
		} else {
			pthread_mutex_lock(&s->lock);
			snprintf(vm->address_answer, sizeof(vm->address_answer), "%s", a->valuestring);
			pthread_mutex_unlock(&s->lock);
			set_message(r, 200, "address answer set", NULL);
		}
		cJSON_Delete(doc);
	} else if (post && match_hook(path, "hold-boot", name, sizeof(name))) {
		/* {"hold": true}: the VM's boots wait (it stays running, its guest down) until false. */
		cJSON *doc = cJSON_Parse(body);
		const cJSON *h = cJSON_GetObjectItemCaseSensitive(doc, "hold");
		if ((vm = sim_vm_find(s, name)) == NULL) {
			set_message(r, 400, "Virtual machine not found: ", name);
		} else if (!cJSON_IsBool(h)) {
			set_message(r, 400, "expected {\"hold\": true or false}", NULL);
		} else {
			pthread_mutex_lock(&s->lock);
			vm->never_ready = cJSON_IsTrue(h);
			pthread_cond_signal(&s->wake);
			pthread_mutex_unlock(&s->lock);
			set_message(r, 200, cJSON_IsTrue(h) ? "boots held" : "boots go on", NULL);
		}
		cJSON_Delete(doc);
	} else if (post && match_hook(path, "attach", name, sizeof(name))) {
		if ((vm = sim_vm_find(s, name)) == NULL)
			set_message(r, 400, "Virtual machine not found: ", name);
		else
			route_attach(s, vm, body, r);
	} else if (sim_managers_route(s, method, path, body, &status, &json)) {
		set_json(r, status, json);
	} else {
		set_reply(r, 404, "text/plain", "Not found");
	}
}

static int send_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t w = send(fd, buf, len, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

static void log_request(sim *s, const char *method, const char *path, const char *body, int status)
{
	cJSON *o = cJSON_CreateObject();
	char *text;

	cJSON_AddNumberToObject(o, "time", sim_epoch());
	cJSON_AddStringToObject(o, "source", "http");
	cJSON_AddStringToObject(o, "method", method);
	cJSON_AddStringToObject(o, "path", path);
	cJSON_AddNumberToObject(o, "status", status);
	if (body != NULL && body[0] != '\0')
		cJSON_AddStringToObject(o, "body", body);
	if ((text = cJSON_PrintUnformatted(o)) != NULL)
		sim_log_json(s, text);
	free(text);
	cJSON_Delete(o);
}

/* Read one request: head up to the blank line, then Content-Length bytes of body. */
static int read_request(int fd, char **head_out, char **body_out)
{
	char *buf = malloc(SIM_HEAD_MAX + 1), *end = NULL, *cl, *body;
	size_t len = 0, head_len, body_len = 0, have;
	ssize_t r;

	if (buf == NULL)
		return -1;
	while (end == NULL) {
		if (len == SIM_HEAD_MAX)
			goto fail;
		r = recv(fd, buf + len, SIM_HEAD_MAX - len, 0);
		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			goto fail;
		}
		len += (size_t)r;
		buf[len] = '\0';
		end = strstr(buf, "\r\n\r\n");
	}
	head_len = (size_t)(end - buf) + 4;
	for (cl = buf; (cl = strchr(cl, '\n')) != NULL && cl < end;) {
		cl++;
		if (strncasecmp(cl, "Content-Length:", 15) == 0) {
			body_len = strtoul(cl + 15, NULL, 10);
			break;
		}
	}
	if (body_len > SIM_BODY_MAX || (body = malloc(body_len + 1)) == NULL)
		goto fail;
	have = len - head_len < body_len ? len - head_len : body_len;
	memcpy(body, buf + head_len, have);
	while (have < body_len) {
		r = recv(fd, body + have, body_len - have, 0);
		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			free(body);
			goto fail;
		}
		have += (size_t)r;
	}
	body[body_len] = '\0';
	buf[head_len - 4] = '\0';
	*head_out = buf;
	*body_out = body;
	return 0;
fail:
	free(buf);
	return -1;
}

static void *serve(void *arg)
{
	conn *c = arg;
	sim *s = c->s;
	char *head = NULL, *body = NULL, method[16], path[2048], hdr[256];
	reply r = {0, NULL, NULL};
	struct timeval tv = {10, 0};

	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (read_request(c->fd, &head, &body) == 0) {
		if (sscanf(head, "%15s %2047s HTTP/", method, path) != 2) {
			set_reply(&r, 400, "text/plain", "Bad request");
			snprintf(method, sizeof(method), "?");
			snprintf(path, sizeof(path), "?");
		} else {
			route(s, method, path, body, &r);
		}
		if (r.body == NULL)
			set_reply(&r, 500, "application/json", "{\"message\":\"lume-sim: out of memory\"}");
		snprintf(hdr, sizeof(hdr),
		    "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n", r.status,
		    reason(r.status), r.type, r.body != NULL ? strlen(r.body) : 0);
		/* Logged before answering: a client that reads the log after its answer finds it. */
		log_request(s, method, path, body, r.status);
		if (send_all(c->fd, hdr, strlen(hdr)) == 0 && r.body != NULL)
			send_all(c->fd, r.body, strlen(r.body));
	}
	free(r.body);
	free(head);
	free(body);
	close(c->fd);
	free(c);
	pthread_mutex_lock(&s->lock);
	if (--s->active == 0)
		pthread_cond_broadcast(&s->idle);
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

void *sim_accept_loop(void *arg)
{
	sim *s = arg;
	pthread_attr_t attr;
	pthread_t t;
	conn *c;
	int fd;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (;;) {
		fd = accept(s->listen_fd, NULL, NULL);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			break; /* shut down */
		}
		pthread_mutex_lock(&s->lock);
		if (s->stopping) {
			pthread_mutex_unlock(&s->lock);
			close(fd);
			break;
		}
		s->active++;
		pthread_mutex_unlock(&s->lock);
		if ((c = malloc(sizeof(*c))) == NULL || (c->s = s, c->fd = fd, pthread_create(&t, &attr, serve, c)) != 0) {
			free(c);
			close(fd);
			pthread_mutex_lock(&s->lock);
			s->active--;
			pthread_mutex_unlock(&s->lock);
		}
	}
	pthread_attr_destroy(&attr);
	return NULL;
}
