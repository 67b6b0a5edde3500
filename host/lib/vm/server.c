/* The Lume server's owner (lm_vm_server_lookup, lume-metal/vm.h): who listens on the API's port,
 * from the host's process table (host_process.h), remembered for a moment in the context. */
#include "vm_internal.h"
#include "host_process.h"
#include "text.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A character of a host name or an IPv4 address, or (inside brackets) of an IPv6 literal with
 * its zone. */
static int host_char(char c, int bracketed)
{
	if (isalnum((unsigned char)c) || c == '-' || c == '.')
		return 1;
	return bracketed ? c == ':' || c == '%' : c == '_';
}

int lm_vm_url_endpoint(const char *url, char *address, size_t cap, int *port, int *local)
{
	const char *host, *host_end, *end, *d;
	size_t hostlen;
	long n = 0;
	int bracketed;

	*local = 0;
	*port = 0;
	if (strncmp(url, "http://", 7) == 0) {
		host = url + 7;
		*port = 80;
	} else if (strncmp(url, "https://", 8) == 0) {
		host = url + 8;
		*port = 443;
	} else
		goto refused;
	end = host + strcspn(host, "/?#");
	bracketed = *host == '[';
	for (host_end = host + bracketed; host_end < end && host_char(*host_end, bracketed); host_end++)
		;
	if (bracketed && (host_end == end || *host_end++ != ']'))
		goto refused;
	hostlen = (size_t)(host_end - host);
	if (hostlen == (size_t)(bracketed ? 2 : 0))
		goto refused;
	if (host_end < end) {
		if (*host_end != ':' || host_end + 1 == end)
			goto refused; /* a userinfo ("user@"), a character no host has, an empty port */
		for (d = host_end + 1; d < end; d++) {
			if (!isdigit((unsigned char)*d) || (n = n * 10 + (*d - '0')) > 65535)
				goto refused;
		}
		if (n == 0)
			goto refused;
		*port = (int)n;
	}
	if (lm_text_format(address, cap, "%.*s:%d", (int)hostlen, host, *port) < 0)
		goto refused;
	/* address begins with the host: 127.0.0.0/8 only as a dotted address, never a name "127.x". */
	address[hostlen] = '\0';
	*local = strcasecmp(address, "localhost") == 0 || strcmp(address, "[::1]") == 0 ||
	    (strncmp(address, "127.", 4) == 0 && lm_vm_is_ipv4(address));
	address[hostlen] = ':';
	return 0;
refused:
	*port = 0;
	return lm_error_set(LM_EINVALID, "Lume URL '%s': expected http://HOST:PORT (default %s)", url, LM_LUME_URL_DEFAULT);
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
	if ((rc = lm_vm_url_endpoint(url, out->address, sizeof(out->address), &port, &local)) < 0)
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
