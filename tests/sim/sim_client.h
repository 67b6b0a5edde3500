/* What the `lume`, `tart` and `utmctl` stand-ins share: the simulator's address and request log, read from
 * lume-sim.json next to the program (as the `lume` stand-in does), and HTTP to its hooks. */
#ifndef SIM_CLIENT_H
#define SIM_CLIENT_H

#include <limits.h>
#include <stddef.h>

#include <cjson/cJSON.h>

typedef struct {
	char url[256];
	char log[PATH_MAX];
	char tart_version[32];
	char utm_version[32];
	int utm_no_gui;
	int utm_no_arp;
	const char *source; /* "tart", "utmctl": the request log's "source" */
	int telemetry;      /* `lume`: 1 when this invocation records telemetry, 0 when
	                       LUME_TELEMETRY_ENABLED turns it off; -1 for the other stand-ins */
} sim_client;

typedef struct {
	long status;       /* 0: no answer */
	char *body;
	const char *error; /* when the simulator could not be reached: libcurl's reason (static) */
} sim_answer;

/* -1 (after a message on stderr) when the simulator is not configured. */
int sim_client_load(sim_client *c, const char *source);
/* HTTP to the simulator within timeout seconds: 0 with a->status and a->body (free it), -1 with
 * a->error when it cannot be reached (nothing to free). */
int sim_client_http(const sim_client *c, const char *method, const char *path, const char *body, double timeout,
    sim_answer *a);
/* GET path as JSON; NULL when unreachable or not 200 (*status says which). */
cJSON *sim_client_get_json(const sim_client *c, const char *path, long *status);
/* One line in the request log: {"source", "argv", "exit", "pid", "note"?, "telemetry"?}. */
void sim_client_record(const sim_client *c, int argc, char **argv, int code, const char *note);
/* {"message"} of an answer, or "" */
void sim_client_message(const sim_answer *a, char *buf, size_t cap);

#endif
