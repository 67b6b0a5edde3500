/* Internal (for the modules that depend on proc): the one way this host's library runs a child
 * process (host/lib/proc/proc.c) -- the VM managers' programs (lume, tart, utmctl), their versions,
 * bench's bare-metal workload. Always posix_spawn, never a shell; any number of arguments.
 *
 * The child's environment is ours less the secrets below (the guest password is ours alone,
 * docs/security.md), with the caller's variables set (never a secret either); stdin is
 * /dev/null; it starts with no blocked signals and the default SIGPIPE, whatever the host
 * application blocks or ignores. A VM's
 * owner -- a detached child (`tart run`, old Lume's `lume run`), or a child that leaves one
 * behind (`lume run --detach` relaunches itself with our environment) -- also goes without the
 * CI job-tracking variables below. */
#ifndef LM_PROC_H
#define LM_PROC_H

#include <stddef.h>
#include <sys/types.h>

/* The variables by which a CI runner finds a job's processes to kill them when the job ends
 * (docs/vm-managers.md, "VMs outlive the CI job"): the GitHub Actions runner's
 * RUNNER_TRACKING_ID (actions/runner #598, #4601: its maintainers' way out is starting the process
 * without it), Jenkins' ProcessTreeKiller's JENKINS_NODE_COOKIE and BUILD_ID. A VM that
 * lume-metal starts must outlive the job that asked for it, so its owner never carries them. */
#define LM_PROC_JOB_TRACKING_VARS {"RUNNER_TRACKING_ID", "JENKINS_NODE_COOKIE", "BUILD_ID"}

/* The variables that give whoever reads them a way into the guests, kept from every child (none
 * of lume, tart, utmctl or a bare-metal workload needs them): the guest password, and the SSH
 * agent's socket, through which any process can sign with the user's unlocked keys (lume-metal
 * reads no key passphrase: such keys are used through the agent, docs/security.md). */
#define LM_PROC_SECRET_VARS {"LUME_METAL_SSH_PASSWORD", "SSH_AUTH_SOCK"}

/* What lm_proc_run keeps of each stream when the caller states no limit. */
#define LM_PROC_OUTPUT_MAX ((size_t)16 << 20)

typedef struct {
	const char *const *env; /* "NAME=VALUE" set for the child (replacing ours), NULL-terminated;
	                           or NULL */
	double timeout;         /* lm_proc_run: seconds until the child is killed */
	size_t output_max;      /* lm_proc_run: bytes kept per stream (0: LM_PROC_OUTPUT_MAX); more is
	                           LM_ETOOLARGE once the child has ended, never a cut result */
	const char *log;        /* lm_proc_spawn_detached: stdout and stderr appended to this file
	                           (created 0600); NULL: /dev/null */
	int vm_owner;           /* lm_proc_run: the child leaves a VM's owner behind; without the
	                           job-tracking variables (always so for lm_proc_spawn_detached) */
	const struct lm_context *cancel; /* lm_proc_run: asked (lm_context_check_cancel) at least ten
	                           times a second while the child runs; when it asks to stop, the child
	                           is killed and reaped and LM_ECANCELED returned. NULL: not asked */
} lm_proc_options;

typedef struct {
	char *out;       /* stdout, NUL-terminated */
	size_t out_len;
	char *err;       /* stderr, NUL-terminated */
	size_t err_len;
	int exit_code;   /* exit status, or 128 + signal */
	int timed_out;   /* killed after the timeout */
} lm_proc_result;

/* lm_proc_spawn: where the child's standard streams go. */
typedef enum {
	LM_PROC_STDIO_NULL = 0, /* all three /dev/null */
	LM_PROC_STDIO_FDS,      /* stdin /dev/null, stdout and stderr to out_fd and err_fd */
	LM_PROC_STDIO_LOG,      /* stdin /dev/null, stdout and stderr appended to log (created 0600) */
	LM_PROC_STDIO_INHERIT   /* the caller's (a workload in the caller's terminal) */
} lm_proc_stdio;

/* lm_proc_spawn: the one posix_spawn of the host library, for lm_proc_run, lm_proc_spawn_detached
 * and ssh/'s local transport (which runs a login shell as sshd would: the one place a shell is
 * started on purpose, with the command a guest's sshd would be sent). */
typedef struct {
	char *const *argv;      /* argv[0]: the program's path */
	char *const *env;       /* the child's whole environment, NULL-terminated */
	const char *dir;        /* the directory it starts in (NULL: ours) */
	lm_proc_stdio stdio;
	int out_fd, err_fd;     /* LM_PROC_STDIO_FDS */
	const char *log;        /* LM_PROC_STDIO_LOG */
	int own_group;          /* a process group of its own (a stop or a timeout ends the whole group) */
	int own_session;        /* a session of its own where posix_spawn offers it (else a group) */
	int shell_signals;      /* also SIGINT, SIGTERM, SIGHUP, SIGQUIT and job control at their defaults,
	                           as a shell gives the programs it starts */
} lm_proc_spawn_spec;

/* Start spec->argv[0] and return without waiting (*pid is the caller's to reap). It starts with no
 * blocked signals and the default SIGPIPE, whatever the host application blocks or ignores.
 * LM_ENOTFOUND or LM_ERROR, the message starting with the program's path. */
int lm_proc_spawn(const lm_proc_spawn_spec *spec, pid_t *pid);

/* Find `name` on PATH (or check it when it contains '/'); *out is malloc'ed. LM_ENOTFOUND. */
int lm_proc_find_program(const char *name, char **out);

/* Run `program` (a path) with args (NULL-terminated, not counting the program; any number),
 * capturing stdout and stderr. Returns 0 when the program ran (whatever its exit code; a timeout
 * is res->timed_out), LM_ENOTFOUND or LM_ERROR when it could not be started, LM_ETOOLARGE when a
 * stream was longer than opts->output_max (the child still ran to its end, its output read and
 * dropped; res is empty), LM_ECANCELED when opts->cancel asked to stop (the child killed).
 * Messages start with the program's path. */
int lm_proc_run(const char *program, const char *const args[], const lm_proc_options *opts, lm_proc_result *res);

/* Start `program` with args in its own session (a terminal's ^C or hang-up on ours must not stop
 * it) and return without waiting: *pid is the caller's to reap. */
int lm_proc_spawn_detached(const char *program, const char *const args[], const lm_proc_options *opts, pid_t *pid);

/* Contents only: the struct is the caller's. */
void lm_proc_result_dispose(lm_proc_result *res);

#endif
