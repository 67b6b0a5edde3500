/* The `tart` and `utmctl` stand-ins' link to lume-sim (see sim_client.h). */
#include "sim_client.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char *read_small_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	long len;

	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) > 0 && len < 65536 && fseek(f, 0, SEEK_SET) == 0 &&
	    (text = calloc(1, (size_t)len + 1)) != NULL && fread(text, 1, (size_t)len, f) != (size_t)len) {
		free(text);
		text = NULL;
	}
	fclose(f);
	return text;
}

int sim_client_load(sim_client *c, const char *source)
{
	char exe[PATH_MAX], path[PATH_MAX + 32], *slash, *text = NULL;
	const char *env;
	cJSON *doc;
	ssize_t n;

	memset(c, 0, sizeof(*c));
	c->source = source;
	c->telemetry = -1;
	snprintf(c->tart_version, sizeof(c->tart_version), "2.28.0");
	snprintf(c->utm_version, sizeof(c->utm_version), "5.0.3");
	if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) > 0) {
		exe[n] = '\0';
		if ((slash = strrchr(exe, '/')) != NULL)
			*slash = '\0';
		snprintf(path, sizeof(path), "%s/lume-sim.json", exe);
		text = read_small_file(path);
		/* utmctl inside bin/UTM.app/Contents/MacOS (bin/utmctl links to it, as Homebrew's does) */
		if (text == NULL) {
			snprintf(path, sizeof(path), "%s/../../../lume-sim.json", exe);
			text = read_small_file(path);
		}
	}
	if (text != NULL && (doc = cJSON_Parse(text)) != NULL) {
		const cJSON *u = cJSON_GetObjectItemCaseSensitive(doc, "url");
		const cJSON *l = cJSON_GetObjectItemCaseSensitive(doc, "log");
		const cJSON *tv = cJSON_GetObjectItemCaseSensitive(doc, "tart_version");
		const cJSON *uv = cJSON_GetObjectItemCaseSensitive(doc, "utm_version");
		if (cJSON_IsString(u))
			snprintf(c->url, sizeof(c->url), "%s", u->valuestring);
		if (cJSON_IsString(l))
			snprintf(c->log, sizeof(c->log), "%s", l->valuestring);
		if (cJSON_IsString(tv))
			snprintf(c->tart_version, sizeof(c->tart_version), "%s", tv->valuestring);
		if (cJSON_IsString(uv))
			snprintf(c->utm_version, sizeof(c->utm_version), "%s", uv->valuestring);
		c->utm_no_gui = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc, "utm_no_gui"));
		c->utm_no_arp = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc, "utm_no_arp"));
		cJSON_Delete(doc);
	}
	free(text);
	if ((env = getenv("LUME_SIM_URL")) != NULL && env[0] != '\0')
		snprintf(c->url, sizeof(c->url), "%s", env);
	if (c->url[0] == '\0') {
		fprintf(stderr, "%s (lume-sim stand-in): no simulator configured: lume-sim.json missing next to this "
		    "program and LUME_SIM_URL unset\n", source);
		return -1;
	}
	return 0;
}

typedef struct {
	char *body;
	size_t len;
} sink;

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	sink *s = userdata;
	size_t n = size * nmemb;
	char *nb = realloc(s->body, s->len + n + 1);

	if (nb == NULL)
		return 0;
	s->body = nb;
	memcpy(s->body + s->len, ptr, n);
	s->len += n;
	s->body[s->len] = '\0';
	return n;
}

int sim_client_http(const sim_client *c, const char *method, const char *path, const char *body, double timeout,
    sim_answer *a)
{
	char url[512];
	CURL *h = curl_easy_init();
	struct curl_slist *hdr = NULL;
	sink s = {NULL, 0};
	CURLcode cc;

	memset(a, 0, sizeof(*a));
	if (h == NULL) {
		a->error = "libcurl could not be initialised";
		return -1;
	}
	snprintf(url, sizeof(url), "%s%s", c->url, path);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(timeout * 1000));
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
	if (strcmp(method, "POST") == 0) {
		hdr = curl_slist_append(hdr, "Content-Type: application/json");
		curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body != NULL ? body : "");
	} else if (strcmp(method, "GET") != 0) {
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method); /* DELETE */
	}
	cc = curl_easy_perform(h);
	if (cc == CURLE_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &a->status);
	curl_slist_free_all(hdr);
	curl_easy_cleanup(h);
	if (cc != CURLE_OK) {
		free(s.body);
		a->error = curl_easy_strerror(cc);
		return -1;
	}
	a->body = s.body != NULL ? s.body : calloc(1, 1);
	return 0;
}

cJSON *sim_client_get_json(const sim_client *c, const char *path, long *status)
{
	sim_answer a;
	cJSON *doc = NULL;

	*status = 0;
	if (sim_client_http(c, "GET", path, NULL, 120, &a) < 0)
		return NULL;
	*status = a.status;
	if (a.status == 200)
		doc = cJSON_Parse(a.body);
	free(a.body);
	return doc;
}

void sim_client_message(const sim_answer *a, char *buf, size_t cap)
{
	cJSON *doc = cJSON_Parse(a->body);
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(doc, "message");

	snprintf(buf, cap, "%s", cJSON_IsString(m) ? m->valuestring : "");
	cJSON_Delete(doc);
}

void sim_client_record(const sim_client *c, int argc, char **argv, int code, const char *note)
{
	cJSON *o, *a;
	struct timespec now;
	char *text;
	int fd, i;

	if (c->log[0] == '\0')
		return;
	o = cJSON_CreateObject();
	clock_gettime(CLOCK_REALTIME, &now);
	cJSON_AddNumberToObject(o, "time", (double)now.tv_sec + (double)now.tv_nsec / 1e9);
	cJSON_AddStringToObject(o, "source", c->source);
	a = cJSON_AddArrayToObject(o, "argv");
	for (i = 1; i < argc; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(argv[i]));
	cJSON_AddNumberToObject(o, "exit", code);
	cJSON_AddNumberToObject(o, "pid", (double)getpid());
	if (note != NULL)
		cJSON_AddStringToObject(o, "note", note);
	if (c->telemetry >= 0)
		cJSON_AddBoolToObject(o, "telemetry", c->telemetry);
	text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (text == NULL)
		return;
	if ((fd = open(c->log, O_WRONLY | O_APPEND | O_CLOEXEC)) >= 0) {
		size_t n = strlen(text);
		text[n] = '\n';
		if (write(fd, text, n + 1) < 0)
			fprintf(stderr, "%s: cannot write %s: %s\n", c->source, c->log, strerror(errno));
		text[n] = '\0';
		close(fd);
	}
	free(text);
}
