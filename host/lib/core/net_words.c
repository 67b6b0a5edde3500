/* The words for a failed TCP connect (net_words.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "net_words.h"

void lm_connect_error_words(int err, char *buf, size_t len)
{
	switch (err) {
	case ECONNREFUSED:
		snprintf(buf, len, "connection refused (ECONNREFUSED): the address answers, nothing listens on the port");
		break;
	case EHOSTUNREACH:
		/* A denied program's connect fails at once with this (Apple TN3179; Tart's FAQ): it
		 * must not read as a guest that is still booting. */
		snprintf(buf, len, "no route to host (EHOSTUNREACH); from macOS 15 on, this is also what Local "
		    "Network privacy answers a program it has not allowed to reach the local network");
		break;
	case ENETUNREACH:
		snprintf(buf, len, "network unreachable (ENETUNREACH)");
		break;
	case ETIMEDOUT:
		snprintf(buf, len, "no answer (timed out)");
		break;
	default:
		snprintf(buf, len, "%s", strerror(err));
		break;
	}
}
