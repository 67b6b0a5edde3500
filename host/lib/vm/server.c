/* The Lume server's owner (lm_vm_server_lookup, lume-metal/vm.h): who listens on the API's port,
 * from the host's process table (host_process.h), remembered for a moment in the context. */
#include "vm_internal.h"
#include "host_process.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* host and port of a Lume URL; *local when the host is this machine's loopback. */
static int url_endpoint(const char *url, char *address, size_t cap, int *port, int *local)
{
	CURLU *u = curl_url();
	char *host = NULL, *portstr = NULL;
	int rc = 0;

	*local = 0;
	*port = 0;
	if (u == NULL)
		return lm_error_nomem();
	if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK || curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_PORT, &portstr, CURLU_DEFAULT_PORT) != CURLUE_OK) {
		rc = lm_error_set(LM_EINVALID, "Lume URL '%s': expected http://HOST:PORT (default %s)", url,
		    LM_LUME_URL_DEFAULT);
	} else {
		*port = atoi(portstr);
		snprintf(address, cap, "%s:%d", host, *port);
		*local = strcmp(host, "localhost") == 0 || strncmp(host, "127.", 4) == 0 || strcmp(host, "[::1]") == 0;
	}
	curl_free(host);
	curl_free(portstr);
	curl_url_cleanup(u);
	return rc;
}

static int server_lookup(lm_context *ctx, lm_vm_server_info *out);

int lm_vm_server_lookup(lm_context *ctx, lm_vm_server_info *out)
{
	double now = lm_clock_monotonic();
	int rc = 0;

	/* Under the memo's lock: workers of one enable that ask at once scan the processes once. */
	pthread_mutex_lock(&ctx->memo_lock);
	if (ctx->server_memo != NULL && now - ctx->server_memo_at < LM_SERVER_MEMO_SECONDS) {
		*out = *(const lm_vm_server_info *)ctx->server_memo;
	} else if ((rc = server_lookup(ctx, out)) == 0) {
		if (ctx->server_memo == NULL)
			ctx->server_memo = malloc(sizeof(*out));
		if (ctx->server_memo != NULL) {
			*(lm_vm_server_info *)ctx->server_memo = *out;
			ctx->server_memo_at = now;
		}
	}
	pthread_mutex_unlock(&ctx->memo_lock);
	return rc;
}

static int server_lookup(lm_context *ctx, lm_vm_server_info *out)
{
	const lm_options *o = lm_context_options(ctx);
	const char *url = (o->lume_url != NULL && o->lume_url[0] != '\0') ? o->lume_url : LM_LUME_URL_DEFAULT;
	lm_host_process p;
	int port, local, found, rc;

	memset(out, 0, sizeof(*out));
	out->uid = -1;
	if ((rc = url_endpoint(url, out->address, sizeof(out->address), &port, &local)) < 0)
		return rc;
	out->local = local;
	if (!local)
		return 0; /* another machine's server: its users are not ours to compare */
	if ((rc = lm_host_port_listener(port, &found, &p)) < 0)
		return rc;
	/* Not in the table this user can see, but answering: another user's process (macOS). */
	if (!found && lm_vm_api_reachable(url, 2.0) == 0)
		found = 1;
	out->found = found;
	out->pid = p.pid;
	out->uid = p.uid;
	snprintf(out->command, sizeof(out->command), "%s", p.command);
	if (found)
		lm_paths_user_name(p.uid, out->user, sizeof(out->user));
	return 0;
}
