/* `agent logs`: an agent's stdout and stderr logs read over SFTP from where the last read ended,
 * as `tail -f` reads a file; no command runs in the guest for it (nothing to quote, nothing left
 * running there when the follower stops). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "guest_agents.h"
#include "ssh_files.h"

/* How much of a log one read takes, and how often a followed one is looked at again (tail -f's
 * own interval is 1 s; a quarter of it keeps a follower's lines close to the agent's). */
#define LOG_CHUNK (256 * 1024)
#define LOG_POLL 0.25

/* What of one log was given already. */
typedef struct {
	const char *path;
	uint64_t offset;
	int which; /* 1 stdout, 2 stderr */
} log_reader;

/* What log gained since it was last read, given to on_data; absent (the agent wrote nothing
 * yet) is no error, on_data refusing the bytes is (LM_EIO). A log shorter than what was read (truncated, replaced) is read again from
 * its start, as `tail -F` does. */
static int log_read_new(lm_ssh *ssh, log_reader *log, lm_agent_log_fn on_data, void *data)
{
	lm_ssh_stat_info si;
	char *bytes = NULL;
	size_t len = 0;
	int rc;

	if (log->path[0] == '\0')
		return 0;
	if ((rc = lm_ssh_stat(ssh, log->path, &si)) < 0)
		return rc;
	if (!si.exists)
		return 0;
	if (si.size < log->offset)
		log->offset = 0;
	while (log->offset < si.size) {
		if ((rc = lm_ssh_read_file_at(ssh, log->path, log->offset, LOG_CHUNK, &bytes, &len)) < 0)
			return rc == LM_ENOTFOUND ? 0 : rc;
		/* A consumer that cannot take the bytes (its output is gone) ends the reading: a follower
		 * would otherwise read and drop the log forever. */
		if (len > 0 && on_data(data, log->which, bytes, len) != 0) {
			free(bytes);
			return lm_error_set(LM_EIO, "%s: the log's reader did not take its bytes (its output could not be "
			    "written); reading stopped", log->path);
		}
		free(bytes);
		if (len == 0)
			break;
		log->offset += len;
	}
	return 0;
}

int lm_guest_agent_logs(lm_context *ctx, lm_ssh *ssh, const lm_agent_info *a, int follow, lm_agent_log_fn on_data,
    void *data)
{
	log_reader logs[2] = {{a->stdout_path, 0, 1}, {a->stderr_path, 0, 2}};
	int rc, i;

	if (strcmp(a->stdout_path, a->stderr_path) == 0)
		logs[1].path = ""; /* one file for both: read once */
	for (;;) {
		for (i = 0; i < 2; i++)
			if ((rc = log_read_new(ssh, &logs[i], on_data, data)) < 0) {
				if (rc != LM_ECANCELED || !follow)
					return rc;
				lm_error_clear(); /* stopped in a read: the same end as below */
				return 0;
			}
		if (!follow)
			return 0;
		/* A request to stop is the follower's end, not a failure (tail -f ends by ^C). */
		if (lm_context_check_cancel(ctx, "following the logs") < 0) {
			lm_error_clear();
			return 0;
		}
		lm_clock_sleep(LOG_POLL);
	}
}
