/* The Lume HTTP API backend (`lume serve`), with libcurl.
 *
 * Lume's quirks that shape this file (reference: docs/vm-managers.md): almost every failure is a
 * 400 with {"message": ...}; an unknown route is a 404 with a text body; `run` answers 202 to
 * anything; `stop` blocks until the VM is down and then sleeps a fixed 5 s.
 *
 * Every request runs through a multi handle whose poll waits at most LM_API_POLL_MS: between polls
 * should_cancel is asked, so that a canceled command leaves even a stop that blocks for a minute
 * within that (curl_easy_perform would hold it until the request's own timeout). */
#include <pthread.h>

#include "vm_internal.h"
#include "lume_common.h"
#include "buf.h"
#include "json.h"
#include "text.h"
#include "trace.h"
#include "curl_lib.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define LM_API_BODY_MAX ((size_t)8 << 20)
#define LM_API_GET_TIMEOUT 30.0   /* sshAvailable costs Lume up to 2 s per running VM */
#define LM_API_STOP_MIN 60.0      /* a stop blocks until the VM is down, then 5 s more */
#define LM_API_POLL_MS 100        /* the longest wait between two questions to should_cancel */

/* The backend's state. */
typedef struct {
	char *url;                  /* base URL without a trailing '/' */
	const lm_curl_lib *c;       /* libcurl, loaded at the backend's first request */
	CURL *curl;                 /* reused for every request */
	CURLM *curlm;               /* runs it: its poll is where cancellation is asked */
	lm_vm_lume_storage storage; /* GET /lume/config/locations, asked once */
} api_state;

typedef struct {
	long status;
	char content_type[64];
	lm_buf body;
} api_response;

/* The answer's body, whole or not at all: an add that fails stops the transfer. */
static size_t on_data(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	size_t n = size * nmemb;

	return lm_buf_add(userdata, ptr, n) == 0 ? n : 0;
}

static void response_dispose(api_response *r)
{
	lm_buf_dispose(&r->body);
	memset(r, 0, sizeof(*r));
}

/* The transfer set up on s->curl, to its end or until should_cancel asks (*canceled, with the
 * error set). */
static CURLcode perform(lm_vm_manager *vmm, api_state *s, int *canceled)
{
	const lm_curl_lib *c = s->c;
	CURLM *m = s->curlm;
	CURLMcode mc = CURLM_OK;
	CURLcode cc = CURLE_OK;
	CURLMsg *msg;
	int running = 1, left;

	if ((*canceled = lm_vm_check_cancel(vmm, "before asking Lume") < 0))
		return CURLE_ABORTED_BY_CALLBACK;
	if (c->multi_add_handle(m, s->curl) != CURLM_OK)
		return CURLE_FAILED_INIT;
	while (mc == CURLM_OK && (mc = c->multi_perform(m, &running)) == CURLM_OK && running) {
		if ((*canceled = lm_vm_check_cancel(vmm, "while waiting for Lume's answer") < 0))
			break;
		mc = c->multi_poll(m, NULL, 0, LM_API_POLL_MS, NULL);
	}
	if (mc != CURLM_OK)
		cc = CURLE_RECV_ERROR;
	while ((msg = c->multi_info_read(m, &left)) != NULL)
		if (msg->msg == CURLMSG_DONE)
			cc = msg->data.result;
	c->multi_remove_handle(m, s->curl);
	return *canceled ? CURLE_ABORTED_BY_CALLBACK : cc;
}

/* libcurl and the backend's handles, at its first request: a command that never asks the API
 * (Tart's, UTM's, --help) loads none of it (curl_lib.h). */
static int api_handles(api_state *s)
{
	int rc;

	if (s->curlm != NULL)
		return 0;
	if ((rc = lm_curl_lib_get(&s->c)) < 0)
		return rc;
	if ((s->curl == NULL && (s->curl = s->c->easy_init()) == NULL) || (s->curlm = s->c->multi_init()) == NULL)
		return lm_error_set(LM_ERROR, "libcurl could not be initialised");
	return 0;
}

/* Only http and https, whatever a URL or a redirect asks. CURLOPT_PROTOCOLS_STR says so since
 * libcurl 7.85.0; macOS 13.0, the oldest system the host supports, ships 7.84.0 (Apple's release
 * manifests, shared/reference/toolchain.md), which answers it CURLE_UNKNOWN_OPTION. The bit mask it
 * replaced, CURLOPT_PROTOCOLS (deprecated in 7.85.0, still honoured), then says the same: the
 * restriction holds with every libcurl, never silently dropped. A library that takes neither is
 * refused before any request. LM_CURL_HAVE_PROTOCOLS_STR: what the headers built against declare
 * (cmake/LumeMetalDependencies.cmake). */
static int restrict_protocols(const lm_curl_lib *c, CURL *curl)
{
	CURLcode cc = CURLE_UNKNOWN_OPTION;

#if LM_CURL_HAVE_PROTOCOLS_STR
	if ((cc = c->easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https")) == CURLE_OK)
		return 0;
#endif
	if (cc == CURLE_UNKNOWN_OPTION) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
		cc = c->easy_setopt(curl, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#pragma GCC diagnostic pop
		if (cc == CURLE_OK)
			return 0;
	}
	return lm_error_set(LM_EUNSUPPORTED,
	    "libcurl (%s) cannot be limited to http and https (CURLOPT_PROTOCOLS_STR and CURLOPT_PROTOCOLS: %s), "
	    "so lume-metal sends it no request. The Lume HTTP API needs libcurl 7.84.0 or later (macOS 13's): "
	    "update it, or use Lume's command line instead (the lume-cli VM manager)",
	    c->name, c->easy_strerror(cc));
}

/* curl's words for a failed transfer, and the local cause where curl hides it: it answers "Couldn't
 * connect to server" also when no socket could be made at all (socket_open in curl's
 * lib/cf-socket.c returns CURLE_COULDNT_CONNECT without keeping errno), as with too many open files
 * (issue 49, 9). That case is told apart by trying to make one. */
static void curl_failure(const lm_curl_lib *c, CURLcode cc, const char *errbuf, char *out, size_t len)
{
	int fd;

	if (cc == CURLE_COULDNT_CONNECT && (fd = socket(AF_INET, SOCK_STREAM, 0)) < 0) {
		(void)lm_text_format_cut(out, len, "%s; this process cannot make a socket: %s",
		    errbuf[0] ? errbuf : c->easy_strerror(cc), strerror(errno));
		return;
	} else if (cc == CURLE_COULDNT_CONNECT)
		close(fd);
	(void)lm_text_format_cut(out, len, "%s", errbuf[0] ? errbuf : c->easy_strerror(cc));
}

/* One request. 0 with r filled when an HTTP answer came back, whatever its status. */
static int api_request(lm_vm_manager *vmm, api_state *s, const char *url, const char *method,
    const char *json_body, double timeout, api_response *r)
{
	const lm_curl_lib *c;
	CURL *curl;
	int canceled, rc;
	struct curl_slist *headers = NULL;
	char errbuf[CURL_ERROR_SIZE] = "", why[CURL_ERROR_SIZE + 128];
	const char *ct = NULL;
	CURLcode cc;

	memset(r, 0, sizeof(*r));
	if ((rc = api_handles(s)) < 0)
		return rc;
	c = s->c;
	curl = s->curl;
	c->easy_reset(curl);
	if ((rc = restrict_protocols(c, curl)) < 0)
		return rc;
	lm_buf_init(&r->body, LM_API_BODY_MAX);
	c->easy_setopt(curl, CURLOPT_URL, url);
	c->easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	c->easy_setopt(curl, CURLOPT_NOPROXY, "*"); /* Lume listens on this host: never via a proxy */
	c->easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, (long)(vmm->connect_timeout * 1000));
	c->easy_setopt(curl, CURLOPT_TIMEOUT_MS, (long)(timeout * 1000));
	c->easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
	c->easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_data);
	c->easy_setopt(curl, CURLOPT_WRITEDATA, &r->body);
	if (strcmp(method, "POST") == 0) {
		headers = c->slist_append(headers, "Content-Type: application/json");
		c->easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
		c->easy_setopt(curl, CURLOPT_POSTFIELDS, json_body != NULL ? json_body : "");
		c->easy_setopt(curl, CURLOPT_POSTFIELDSIZE, (long)(json_body != NULL ? strlen(json_body) : 0));
	}
	cc = perform(vmm, s, &canceled);
	c->slist_free_all(headers);
	if (canceled) {
		response_dispose(r);
		return lm_error_prefix("lume: %s %s: ", method, url);
	}
	if (cc != CURLE_OK) {
		int code = cc == CURLE_OPERATION_TIMEDOUT ? LM_ETIMEOUT : LM_ENETWORK, body = lm_buf_error(&r->body);
		response_dispose(r);
		if (body == LM_ETOOLARGE)
			return lm_error_set(LM_ETOOLARGE, "lume: the answer to %s %s is larger than %zu bytes (the limit)", method,
			    url, LM_API_BODY_MAX);
		if (body != 0)
			return lm_error_nomem();
		curl_failure(c, cc, errbuf, why, sizeof(why));
		return lm_error_set(code, "lume: %s %s failed: %s", method, url, why);
	}
	c->easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &r->status);
	if (c->easy_getinfo(curl, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct != NULL)
		(void)lm_text_format(r->content_type, sizeof(r->content_type), "%s", ct); /* too long: "", not JSON's */
	return 0;
}

/* A non-2xx answer as a readable error: "lume: Virtual machine not found: my-vm (HTTP 400)". */
static int api_error(const api_response *r, const char *method, const char *path)
{
	char excerpt[120];
	cJSON *doc;
	const cJSON *msg;
	int code = LM_ERROR;

	/* Not JSON is an answer too (a 404's text); a JSON one that could not be held is not. */
	if (lm_json_parse(&doc, lm_buf_ptr(&r->body), lm_buf_len(&r->body) + 1, NULL, 0) == LM_ENOMEM)
		return LM_ENOMEM;
	msg = cJSON_GetObjectItemCaseSensitive(doc, "message");
	if (cJSON_IsString(msg)) {
		if (r->status == 400 && strncmp(msg->valuestring, "Virtual machine not found", 25) == 0)
			code = LM_ENOTFOUND;
		lm_vm_excerpt(msg->valuestring, excerpt, sizeof(excerpt));
		cJSON_Delete(doc);
		return lm_error_set(code, "lume: %s (HTTP %ld)", excerpt, r->status);
	}
	cJSON_Delete(doc);
	lm_vm_excerpt(lm_buf_ptr(&r->body), excerpt, sizeof(excerpt));
	if (r->status == 404)
		return lm_error_set(LM_ERROR,
		    "lume: %s %s: no such route (HTTP 404%s%s): is the URL the Lume API (lume serve)?", method, path,
		    excerpt[0] ? ", " : "", excerpt);
	return lm_error_set(LM_ERROR, "lume: %s %s failed (HTTP %ld)%s%s", method, path, r->status,
	    excerpt[0] ? ": " : "", excerpt);
}

/* method + path, expecting a JSON document of want_type (or none when want_type is 0). */
static int api_call(lm_vm_manager *vmm, api_state *s, const char *method, const char *path, const char *json_body,
    double timeout, int want_type, cJSON **out)
{
	api_response r;
	char *url, excerpt[120];
	cJSON *doc;
	double t0;
	int rc;

	if (out != NULL)
		*out = NULL;
	if ((url = malloc(strlen(s->url) + strlen(path) + 1)) == NULL)
		return lm_error_nomem();
	sprintf(url, "%s%s", s->url, path);
	t0 = lm_clock_monotonic();
	rc = api_request(vmm, s, url, method, json_body, timeout, &r);
	free(url);
	lm_trace_request(vmm->ctx, "vm-request", method, path, t0);
	if (rc < 0)
		return rc;
	if (r.status < 200 || r.status > 299) {
		rc = api_error(&r, method, path);
		response_dispose(&r);
		return rc;
	}
	if (want_type == 0) {
		response_dispose(&r);
		return 0;
	}
	if (lm_json_parse(&doc, lm_buf_ptr(&r.body), lm_buf_len(&r.body) + 1, NULL, 0) == LM_ENOMEM) {
		response_dispose(&r);
		return LM_ENOMEM;
	}
	if (doc == NULL || (doc->type & 0xff) != want_type) {
		lm_vm_excerpt(lm_buf_ptr(&r.body), excerpt, sizeof(excerpt));
		cJSON_Delete(doc);
		rc = lm_error_set(LM_ERROR, "lume: %s %s: expected a JSON %s, got %s'%s' (HTTP %ld)", method, path,
		    want_type == cJSON_Array ? "array" : "object", doc == NULL ? "something that is not JSON: " : "",
		    excerpt, r.status);
		response_dispose(&r);
		return rc;
	}
	response_dispose(&r);
	*out = doc;
	return 0;
}

static int api_list(lm_vm_manager *vmm, void *state, lm_vm_info **out, size_t *count)
{
	cJSON *doc;
	int rc;

	if ((rc = api_call(vmm, state, "GET", "/lume/vms", NULL, LM_API_GET_TIMEOUT, cJSON_Array, &doc)) < 0)
		return rc;
	rc = lm_vm_info_array_from_json(doc, out, count, "lume: GET /lume/vms");
	cJSON_Delete(doc);
	return rc;
}

static int api_get(lm_vm_manager *vmm, void *state, const char *name, lm_vm_info *out)
{
	char path[LM_VM_NAME_MAX + 32], what[LM_VM_NAME_MAX + 48];
	cJSON *doc;
	int rc;

	snprintf(path, sizeof(path), "/lume/vms/%s", name);
	if ((rc = api_call(vmm, state, "GET", path, NULL, LM_API_GET_TIMEOUT, cJSON_Object, &doc)) < 0)
		return rc;
	snprintf(what, sizeof(what), "lume: GET %s", path);
	rc = lm_vm_info_from_json(doc, out, what);
	cJSON_Delete(doc);
	return rc;
}

static int api_start(lm_vm_manager *vmm, void *state, const char *name)
{
	char path[LM_VM_NAME_MAX + 32];

	snprintf(path, sizeof(path), "/lume/vms/%s/run", name);
	/* noDisplay: without it `lume serve` opens a VNC viewer on the host's desktop. vnc disabled:
	 * no VNC listener (with its password in vncUrl) for a VM nobody is going to look at; Lume main
	 * since ab957bd takes it (with noDisplay true only), older Lume ignores keys it does not know
	 * (reference/lume.md, 2026-12-06), so one body serves both. The 202 says nothing about the
	 * outcome: lm_vm_wait_ready() finds out. Lume starts the VM before it answers, whatever it then
	 * answers (reference/lume.md): once sent, the start is launched. */
	lm_vm_note_launch(vmm, 0, NULL);
	return api_call(vmm, state, "POST", path, "{\"noDisplay\":true,\"vnc\":\"disabled\"}", LM_API_GET_TIMEOUT, 0, NULL);
}

static int api_stop(lm_vm_manager *vmm, void *state, const char *name)
{
	char path[LM_VM_NAME_MAX + 32];
	double timeout = vmm->command_timeout > LM_API_STOP_MIN ? vmm->command_timeout : LM_API_STOP_MIN;

	snprintf(path, sizeof(path), "/lume/vms/%s/stop", name);
	return api_call(vmm, state, "POST", path, NULL, timeout, 0, NULL);
}

/* Is the host full, as Lume's server counts (GET /lume/host/status: {"vm_count", "max_vms": 2,
 * "available_slots"}; Apple allows two macOS VMs per host; reference/lume.md)? Slow -- Lume lists
 * its VMs for it, checking SSH of each running one -- so asked only when a VM whose start it
 * accepted stays stopped (vm.c). 1 when available_slots is 0. */
static int api_full(lm_vm_manager *vmm, void *state, char *why, size_t cap)
{
	const cJSON *slots, *count, *max;
	cJSON *doc;
	int rc;

	why[0] = '\0';
	if ((rc = api_call(vmm, state, "GET", "/lume/host/status", NULL, LM_API_GET_TIMEOUT, cJSON_Object, &doc)) < 0)
		return rc;
	slots = cJSON_GetObjectItemCaseSensitive(doc, "available_slots");
	count = cJSON_GetObjectItemCaseSensitive(doc, "vm_count");
	max = cJSON_GetObjectItemCaseSensitive(doc, "max_vms");
	rc = cJSON_IsNumber(slots) && slots->valuedouble <= 0;
	if (rc == 1 && cJSON_IsNumber(count) && cJSON_IsNumber(max))
		snprintf(why, cap, "Lume runs its maximum of %d VMs (GET /lume/host/status: vm_count %d, max_vms %d, "
		    "available_slots 0; Apple allows two macOS VMs per host)", max->valueint, count->valueint, max->valueint);
	else if (rc == 1)
		snprintf(why, cap, "Lume runs its maximum of VMs (GET /lume/host/status: available_slots 0; Apple allows two "
		    "macOS VMs per host)");
	cJSON_Delete(doc);
	return rc;
}

/* Lume's storage locations (Server.swift: GET /lume/config/locations, Lume 0.5.3): a JSON array
 * of {"name", "path"}, the paths as Lume's settings keep them ("~/.lume"). A server that does not
 * answer it (an older Lume, a failure) leaves Lume's default, and the reason. Asked once. */
static int api_storage(lm_vm_manager *vmm, api_state *s)
{
	const cJSON *loc;
	cJSON *doc = NULL;
	int rc;

	if (s->storage.locations != NULL)
		return 0;
	if ((rc = lm_vm_lume_storage_add(&s->storage, NULL)) < 0)
		return rc;
	rc = api_call(vmm, s, "GET", "/lume/config/locations", NULL, LM_API_GET_TIMEOUT, cJSON_Array, &doc);
	if (rc == LM_ENOMEM)
		return rc;
	if (rc < 0) {
		lm_text_format_cut(s->storage.why, sizeof(s->storage.why), "%s", lm_error_last()->message);
		lm_error_clear();
	}
	rc = 0;
	cJSON_ArrayForEach(loc, doc) {
		const cJSON *path = cJSON_GetObjectItemCaseSensitive(loc, "path");
		if (rc == 0 && cJSON_IsString(path) && path->valuestring[0] != '\0')
			rc = lm_vm_lume_storage_add(&s->storage, path->valuestring);
	}
	cJSON_Delete(doc);
	return rc < 0 ? rc : lm_vm_lume_storage_default(&s->storage);
}

static int api_identity(lm_vm_manager *vmm, void *state, const char *name, lm_vm_info *info)
{
	api_state *s = state;
	int rc;

	if ((rc = api_storage(vmm, s)) < 0)
		return rc;
	return lm_vm_lume_identity(&s->storage, name, info, "GET /lume/config/locations");
}

/* The VM's directory in Lume's storage, its birth time (vm_process.h): read where the server's
 * locations are this host's (a server elsewhere has none here: 0). */
static int api_created(lm_vm_manager *vmm, void *state, const char *name, double *at)
{
	api_state *s = state;
	int rc;

	*at = 0;
	if ((rc = api_storage(vmm, s)) < 0)
		return rc;
	return lm_vm_lume_created(&s->storage, name, at);
}

static int api_stored(lm_vm_manager *vmm, void *state, const char *name)
{
	api_state *s = state;
	int rc;

	if ((rc = api_storage(vmm, s)) < 0)
		return rc;
	return lm_vm_lume_stored(&s->storage, name);
}

static void api_release(lm_vm_manager *vmm, void *state)
{
	api_state *s = state;

	(void)vmm;
	if (s->curl != NULL)
		s->c->easy_cleanup(s->curl);
	if (s->curlm != NULL)
		s->c->multi_cleanup(s->curlm);
	lm_vm_lume_storage_dispose(&s->storage);
	free(s->url);
	free(s);
}

/* `lume --version`: the server's GET /lume/host/status says "1.0.0" whatever Lume's version
 * (reference/lume.md), so the program installed with the server is asked, as its users ask it.
 * Without it on PATH the version is unknown (""), which says nothing against the API. */
static int api_version(lm_vm_manager *vmm, void *state, char *buf, size_t len)
{
	int rc;

	(void)state;
	rc = lm_vm_program_version(vmm, lm_vm_option(lm_context_options(vmm->ctx)->lume_program, LM_VM_LUME_PROGRAM),
	    "--version", lm_vm_lume_env, buf, len);
	return rc == LM_ENOTFOUND ? 0 : rc;
}

static int check_url(const char *url)
{
	if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0)
		return lm_error_set(LM_EINVALID, "Lume URL '%s': expected http://HOST:PORT (default " LM_LUME_URL_DEFAULT ")",
		    url);
	if (strchr(url, '?') != NULL || strchr(url, '#') != NULL)
		return lm_error_set(LM_EINVALID, "Lume URL '%s': no query or fragment please (Lume routes the raw path)",
		    url);
	return 0;
}

static char *trimmed_url(const char *url)
{
	char *u = strdup(url);
	size_t n;

	if (u == NULL)
		return NULL;
	n = strlen(u);
	while (n > 0 && u[n - 1] == '/')
		u[--n] = '\0';
	return u;
}

int lm_vm_api_reachable(const char *url, double timeout)
{
	char errbuf[CURL_ERROR_SIZE] = "", why[CURL_ERROR_SIZE + 128];
	const lm_curl_lib *c;
	CURLcode cc;
	CURL *curl;
	int rc;

	if ((rc = check_url(url)) < 0)
		return rc;
	if ((rc = lm_curl_lib_get(&c)) < 0)
		return rc;
	if ((curl = c->easy_init()) == NULL)
		return lm_error_set(LM_ERROR, "libcurl could not be initialised");
	/* A connection and nothing more: whether the answer to any request comes quickly is another
	 * matter (Lume's host status takes seconds per running VM). */
	if ((rc = restrict_protocols(c, curl)) < 0) {
		c->easy_cleanup(curl);
		return rc;
	}
	c->easy_setopt(curl, CURLOPT_URL, url);
	c->easy_setopt(curl, CURLOPT_CONNECT_ONLY, 1L);
	c->easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	c->easy_setopt(curl, CURLOPT_NOPROXY, "*");
	c->easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, (long)(timeout * 1000));
	c->easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
	cc = c->easy_perform(curl);
	if (cc != CURLE_OK) {
		curl_failure(c, cc, errbuf, why, sizeof(why));
		rc = lm_error_set(cc == CURLE_OPERATION_TIMEDOUT ? LM_ETIMEOUT : LM_ENETWORK, "nothing accepts connections at %s: %s",
		    url, why);
	}
	c->easy_cleanup(curl);
	return rc;
}

static const char *option_url(const lm_vm_manager *vmm)
{
	return lm_vm_option(lm_context_options(vmm->ctx)->lume_url, LM_LUME_URL_DEFAULT);
}

/* Whatever accepts connections at the URL is taken for the API (the automatic choice's test). */
static int api_present(lm_vm_manager *vmm)
{
	double t0 = lm_clock_monotonic();
	int rc = lm_vm_api_reachable(option_url(vmm), vmm->connect_timeout);

	lm_trace_request(vmm->ctx, "vm-reach", "connect", option_url(vmm), t0);
	return rc;
}

static int api_init(lm_vm_manager *vmm, void **state)
{
	const char *url = option_url(vmm);
	api_state *s;
	int rc;

	if ((rc = check_url(url)) < 0)
		return rc;
	if ((*state = s = calloc(1, sizeof(*s))) == NULL || (s->url = trimmed_url(url)) == NULL)
		return lm_error_nomem();
	return 0;
}

const lm_vm_backend lm_vm_backend_api = {.name = "lume-api", .account = "lume", .present = api_present,
	.init = api_init, .list = api_list, .get = api_get, .start = api_start, .stop = api_stop,
	.version = api_version, .identity = api_identity, .stored = api_stored, .full = api_full,
	.created = api_created,
	.release = api_release};
