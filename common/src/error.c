#include "error_internal.h"
#include "text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Thread-local, as in libgit2: each thread sees its own last error; nothing else is global. */
static _Thread_local char lm_error_buf[2048];
static _Thread_local lm_error lm_error_current = {0, ""};

const lm_error *lm_error_last(void)
{
	if (lm_error_current.message == NULL)
		lm_error_current.message = "";
	return &lm_error_current;
}

void lm_error_clear(void)
{
	lm_error_buf[0] = '\0';
	lm_error_current.code = LM_OK;
	lm_error_current.message = "";
}

int lm_error_set(int code, const char *fmt, ...)
{
	va_list ap;

	char text[sizeof(lm_error_buf)];
	int n;

	/* Formatted aside first: the arguments may quote the current message (lm_error_last()). */
	va_start(ap, fmt);
	n = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	lm_text_mark_cut(text, sizeof(text), n); /* a message too long ends in "..." */
	memcpy(lm_error_buf, text, sizeof(text));
	lm_error_current.code = code;
	lm_error_current.message = lm_error_buf;
	return code;
}

int lm_error_prefix(const char *fmt, ...)
{
	char prefix[512];
	char old[sizeof(lm_error_buf)];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	lm_text_mark_cut(prefix, sizeof(prefix), n);
	memcpy(old, lm_error_buf, sizeof(old));
	old[sizeof(old) - 1] = '\0';
	/* The old message follows; what does not fit ends in "...". */
	n = snprintf(lm_error_buf, sizeof(lm_error_buf), "%s%s", prefix, old);
	lm_text_mark_cut(lm_error_buf, sizeof(lm_error_buf), n);
	lm_error_current.message = lm_error_buf;
	if (lm_error_current.code == LM_OK)
		lm_error_current.code = LM_ERROR;
	return lm_error_current.code;
}

int lm_error_nomem(void)
{
	return lm_error_set(LM_ENOMEM, "out of memory");
}

const char *lm_error_name(int code)
{
	switch (code) {
	case LM_OK: return "ok";
	case LM_EINVALID: return "invalid";
	case LM_ENOTFOUND: return "not-found";
	case LM_EIO: return "io";
	case LM_ECONFLICT: return "conflict";
	case LM_EMANAGED: return "managed";
	case LM_ETIMEOUT: return "timeout";
	case LM_ENETWORK: return "network";
	case LM_EHOSTKEY: return "host-key";
	case LM_EAUTH: return "auth";
	case LM_EREMOTE: return "remote";
	case LM_EUNSUPPORTED: return "unsupported";
	case LM_ECORRUPT: return "corrupt";
	case LM_ENOMEM: return "no-memory";
	case LM_ELOCKED: return "locked";
	case LM_EVMOWNER: return "vm-owner";
	case LM_EWRONGUSER: return "wrong-user";
	case LM_ECANCELED: return "canceled";
	case LM_ENOTENABLED: return "not-enabled";
	case LM_ENOTRUNNING: return "not-running";
	case LM_ENOBUNDLE: return "no-bundle";
	case LM_ENOTPROVEN: return "not-proven";
	case LM_EAMBIGUOUS: return "ambiguous";
	case LM_ENOADDRESS: return "no-address";
	case LM_ETOOLARGE: return "too-large";
	case LM_EHARDENED: return "hardened";
	case LM_ENOSHIM: return "no-shim";
	case LM_ENEWER: return "newer";
	case LM_EOTHERSTATE: return "other-state";
	default: return "error";
	}
}

void lm_free(void *ptr)
{
	free(ptr);
}
