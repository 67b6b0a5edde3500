/* lume-metal: error codes and the last error's message.
 *
 * Every fallible function returns 0 (LM_OK) or a negative lm_error_code and leaves a readable
 * message, for the calling thread, that lm_error_last() returns. The message states facts: what
 * was wrong and what was left; turning a code into advice (which option to pass) is the caller's.
 */
#ifndef LUME_METAL_ERROR_H
#define LUME_METAL_ERROR_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
	LM_OK = 0,
	LM_ERROR = -1,        /* generic failure */
	LM_EINVALID = -2,     /* bad input: a profile, a name, an option, a file's contents */
	LM_ENOTFOUND = -3,    /* a VM, a file, a key that does not exist */
	LM_EIO = -4,          /* reading or writing a local file failed */
	LM_ECONFLICT = -5,    /* somebody else changed what we were about to restore */
	LM_EMANAGED = -6,     /* a configuration profile forces the preference */
	LM_ETIMEOUT = -7,     /* something did not happen in time */
	LM_ENETWORK = -8,     /* HTTP or TCP failure */
	LM_EHOSTKEY = -9,     /* the guest's SSH host key is unknown (strict) or changed */
	LM_EAUTH = -10,       /* SSH authentication failed */
	LM_EREMOTE = -11,     /* a guest command failed */
	LM_EUNSUPPORTED = -12,/* the guest or host cannot do what was asked */
	LM_ECORRUPT = -13,    /* a state or preference file we own is damaged */
	LM_ENOMEM = -14,      /* out of memory */
	LM_ELOCKED = -15,     /* a lock could not be taken in time, or is held and waiting was not wanted */
	LM_EVMOWNER = -16,    /* the VM runs inside a process that runs other VMs too (Lume's server) */
	LM_EWRONGUSER = -17,  /* the preference would go to a user whose VMs do not read it */
	LM_ECANCELED = -18,   /* stopped on request (the embedder's should_cancel; the tool's SIGINT or
	                         SIGTERM) after undoing what the operation did */
	LM_ENOTENABLED = -19, /* the VM is not enabled (probe, run) */
	LM_ENOTRUNNING = -20, /* the VM is not running where it must be */
	LM_ENOBUNDLE = -21,   /* no guest bundle for the guest's platform where it was looked for */
	LM_ENOTPROVEN = -22,  /* the device did not run the kernels its (shimmed) answers promise */
	LM_EAMBIGUOUS = -23,  /* a VM name more than one VM manager knows */
	LM_ENOADDRESS = -24,  /* the VM manager cannot tell the guest's address, and none was given */
	LM_ETOOLARGE = -25,   /* more than a stated limit: a child's or a guest command's output, an
	                         answer, a buffer (the message names the limit); nothing was cut */
	LM_EHARDENED = -26,   /* the workload (or its script's interpreter) is signed with the hardened
	                         runtime without the dyld-environment entitlement: dyld would ignore the
	                         shim, so it was not started (docs/guest.md) */
	LM_ENOSHIM = -27,     /* the workload ran, and no process of it loaded the shim (run's
	                         require_shim; its activation records say so) */
	LM_ENEWER = -28,      /* a file of lume-metal's (the state journal) was written by a newer
	                         version, whose format this one does not know; nothing was changed */
	LM_EOTHERSTATE = -29  /* the guest's files were installed from another state directory (their
	                         owner record names it, or cannot be read): enable and rollback change
	                         nothing there unless told to take them over */
} lm_error_code;

typedef struct {
	int code;             /* one of lm_error_code */
	const char *message;  /* never NULL; "" when there is no error */
} lm_error;

/* The last error of the calling thread. Valid until the next lume-metal call on this thread. */
LM_EXTERN(const lm_error *) lm_error_last(void);

/* Forget the last error of the calling thread. */
LM_EXTERN(void) lm_error_clear(void);

/* A short, stable name for a code ("invalid", "timeout", ...), for JSON output. */
LM_EXTERN(const char *) lm_error_name(int code);

/* Free a string that a lume-metal function returned. NULL is fine. */
LM_EXTERN(void) lm_free(void *ptr);

/* Text that echoes outside input (a rejected name, a path, a message quoting a file or a guest)
 * made safe to print: control bytes (ESC, which starts terminal escape sequences, and the C1
 * controls), DEL and bytes that are not well-formed UTF-8 become the visible text \xNN; newlines
 * and tabs are kept. The result is valid UTF-8. A new string (lm_free), NULL when out of memory.
 * Messages from lm_error_last() may quote such input: print them through this. */
LM_EXTERN(char *) lm_text_printable(const char *text);

#ifdef __cplusplus
}
#endif
#endif
