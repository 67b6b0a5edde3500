/* The local transport: the same calls as an SSH session (lm_ssh_exec, the file operations), served
 * on the machine lume-metal runs on, so that guestops and the commands run unchanged there
 * (`lume-metal local`, docs/design.md "The local transport").
 *
 * Commands are what we would send a guest's sshd, written in its login shell's language; they run
 * the way sshd runs them: the user's login shell from the password database (not $SHELL), as
 * `SHELL -c COMMAND`, stdin /dev/null, in a process group of its own (a timeout or a cancel ends
 * the whole group), with no blocked signals. The environment is the caller's -- on a CI runner
 * that is the job's session, as sshd's is the guest's -- less what must never reach a command of
 * ours: the guest password, and the shim's variables (an injection variable or LUME_METAL_* that
 * an earlier step exported would make the "stock" probe shimmed). Files are read and written
 * directly: an upload is the state module's atomic write (temporary name, fsync, chmod, rename). */
/* posix_spawn_file_actions_addchdir_np (glibc 2.29, macOS 10.15). */
#define _GNU_SOURCE
#include "ssh_internal.h"
#include "ssh_files.h"
#include "ssh_local.h"
#include "proc.h"

#include "buf.h"
#include "file.h"
#include "fs.h"
#include "sha256.h"
#include "str.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define LOCAL_READ_CHUNK 32768

/* Never passed to a command of ours (see the header comment). */
static int dropped_variable(const char *entry)
{
	static const char *const exact[] = {"LUME_METAL_SSH_PASSWORD", "DYLD_INSERT_LIBRARIES", "LD_PRELOAD"};
	size_t i, n = strcspn(entry, "=");

	for (i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (strlen(exact[i]) == n && strncmp(entry, exact[i], n) == 0)
			return 1;
	/* The shim's own configuration (docs/guest.md), lume-metal's and the Tart image's. */
	return strncmp(entry, "LUME_METAL_", 11) == 0 || strncmp(entry, "TART_METAL_", 11) == 0;
}

static int make_env(lm_ssh *ssh)
{
	size_t n = 0, k = 0;
	char **e;

	for (e = environ; e != NULL && *e != NULL; e++)
		n++;
	if ((ssh->local_env = calloc(n + 1, sizeof(char *))) == NULL)
		return lm_error_nomem();
	for (e = environ; e != NULL && *e != NULL; e++)
		if (!dropped_variable(*e) && (ssh->local_env[k++] = strdup(*e)) == NULL)
			return lm_error_nomem();
	return 0;
}

int lm_ssh_open_local(lm_ssh **out, lm_context *ctx)
{
	const lm_options *opts;
	struct passwd *pw;
	lm_ssh *ssh;
	int rc;

	*out = NULL;
	opts = ctx != NULL ? lm_context_options(ctx) : NULL;
	if ((ssh = calloc(1, sizeof(*ssh))) == NULL)
		return lm_error_nomem();
	ssh->fd = -1;
	ssh->ctx = ctx;
	ssh->local = 1;
	ssh->command_timeout = opts != NULL && opts->command_timeout > 0 ? opts->command_timeout : 120;
	/* sshd's choice of shell: the account's, from the password database. */
	errno = 0;
	pw = getpwuid(getuid());
	if ((ssh->vm = strdup("this machine")) == NULL || (ssh->address = strdup("local")) == NULL ||
	    (ssh->local_shell = strdup(pw != NULL && pw->pw_shell != NULL && pw->pw_shell[0] == '/' ? pw->pw_shell :
	    "/bin/sh")) == NULL || (rc = make_env(ssh)) < 0 ||
	    (getenv("HOME") != NULL && getenv("HOME")[0] == '/' && (ssh->local_home = strdup(getenv("HOME"))) == NULL)) {
		lm_ssh_free(ssh);
		return lm_error_nomem();
	}
	if (ctx != NULL)
		lm_log(ctx, LM_LOG_DEBUG, "local: commands run as %s -c", ssh->local_shell);
	*out = ssh;
	return 0;
}

int lm_ssh_local_spawn(const lm_ssh *ssh, const char *command, const int out[2], pid_t *pid)
{
	lm_proc_spawn_spec spec = {0};
	char *argv[4];

	if (ssh == NULL || !ssh->local)
		return lm_error_set(LM_EINVALID, "lm_ssh_local_spawn: a local session is required");
	argv[0] = ssh->local_shell;
	argv[1] = (char *)"-c";
	argv[2] = (char *)command;
	argv[3] = NULL;
	/* proc's one spawn, with the signal state a shell gives the programs it starts, whatever ours
	 * is, and a process group of its own. A command sshd would run starts in the account's home,
	 * reading nothing; the workload (no out) keeps the caller's terminal and streams. */
	spec.argv = argv;
	spec.env = ssh->local_env;
	spec.shell_signals = 1;
	spec.own_group = 1;
	if (out != NULL) {
		spec.dir = ssh->local_home;
		spec.stdio = LM_PROC_STDIO_FDS;
		spec.out_fd = out[0];
		spec.err_fd = out[1];
	} else {
		spec.stdio = LM_PROC_STDIO_INHERIT;
	}
	if (lm_proc_spawn(&spec, pid) < 0)
		return lm_error_prefix("this machine: the shell: ");
	return 0;
}

/* SHELL -c command with both output streams on pipes (their read ends in fds). */
static int spawn_shell(lm_ssh *ssh, const char *command, int fds[2], pid_t *pid)
{
	int p[2][2] = {{-1, -1}, {-1, -1}}, w[2], i, k, rc = 0;

	for (i = 0; i < 2 && rc == 0; i++) {
		if (pipe(p[i]) != 0)
			rc = lm_error_set(LM_ERROR, "this machine: cannot make a pipe: %s", strerror(errno));
		for (k = 0; k < 2 && rc == 0; k++) /* the child keeps only what dup2 gives it */
			(void)fcntl(p[i][k], F_SETFD, FD_CLOEXEC);
	}
	w[0] = p[0][1];
	w[1] = p[1][1];
	if (rc == 0)
		rc = lm_ssh_local_spawn(ssh, command, w, pid);
	for (i = 0; i < 2; i++) {
		if (p[i][1] >= 0)
			close(p[i][1]);
		fds[i] = p[i][0];
		if (rc < 0 && p[i][0] >= 0)
			close(p[i][0]);
	}
	return rc;
}

/* Both streams until their end, to out; LM_ETIMEOUT past the deadline, LM_ECANCELED on request. */
static int pump(lm_ssh *ssh, int fds[2], double deadline, double timeout, lm_ssh_output_fn out, void *data)
{
	struct pollfd pfd[2];
	char *buf;
	int open_fds = 2, i, timeout_ms, rc = 0;
	ssize_t n;

	if ((buf = malloc(LOCAL_READ_CHUNK)) == NULL)
		return lm_error_nomem();
	while (open_fds > 0) {
		for (i = 0; i < 2; i++) {
			pfd[i].fd = fds[i];
			pfd[i].events = POLLIN;
			pfd[i].revents = 0;
		}
		timeout_ms = 250; /* should_cancel is asked four times a second */
		if (deadline > 0) {
			double left = deadline - lm_clock_monotonic();
			if (left <= 0) {
				rc = lm_error_set(LM_ETIMEOUT, "this machine: the command did not finish within the command "
				    "timeout (%.0f s)", timeout);
				break;
			}
			if (left * 1000.0 < timeout_ms)
				timeout_ms = (int)(left * 1000.0) + 1;
		}
		if (poll(pfd, 2, timeout_ms) < 0) {
			if (errno == EINTR)
				continue;
			rc = lm_error_set(LM_EIO, "this machine: waiting for the command's output failed: %s", strerror(errno));
			break;
		}
		if (!ssh->uncancelable && (rc = lm_context_check_cancel(ssh->ctx, "the command")) < 0)
			break;
		for (i = 0; i < 2; i++) {
			if (fds[i] < 0 || pfd[i].revents == 0)
				continue;
			n = read(fds[i], buf, LOCAL_READ_CHUNK);
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n > 0) {
				if (out != NULL)
					out(data, i + 1, buf, (size_t)n);
				continue;
			}
			close(fds[i]);
			fds[i] = -1;
			open_fds--;
		}
	}
	free(buf);
	return rc;
}

/* timeout: seconds the whole command may take (0: no limit), as over SSH. */
int lm_ssh_local_exec(lm_ssh *ssh, const char *command, double timeout, lm_ssh_output_fn out, void *data,
    int *exit_status)
{
	double deadline = timeout > 0 ? lm_clock_monotonic() + timeout : 0;
	int fds[2] = {-1, -1}, rc, status = 0, i;
	pid_t pid;

	if (ssh->ctx == NULL)
		return lm_error_set(LM_EINVALID, "this machine: a session opened without a context serves files only; "
		    "no command runs in it");
	if ((rc = spawn_shell(ssh, command, fds, &pid)) < 0)
		return rc;
	rc = pump(ssh, fds, deadline, timeout, out, data);
	/* Stopped early: the whole group goes, as a lost SSH session takes the guest's command. */
	if (rc < 0)
		(void)kill(-pid, SIGKILL);
	for (i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (rc < 0)
		return rc;
	*exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 255;
	return 0;
}

/* ---- files ---- */

static int local_errno(const char *what, const char *path, int err)
{
	if (err == ENOENT || err == ENOTDIR)
		return lm_error_set(LM_ENOTFOUND, "this machine: %s: %s does not exist", what, path);
	return lm_error_set(LM_EREMOTE, "this machine: %s %s: %s", what, path, strerror(err));
}

int lm_ssh_local_upload(const void *bytes, size_t len, const char *path, int mode)
{
	uint8_t want[32], got[32];
	int rc;

	if ((rc = lm_fs_write_atomic(path, bytes, len, (mode_t)mode)) < 0)
		return rc;
	/* Read back as an upload is: what is there is what was meant, or nothing is. */
	lm_sha256(bytes, len, want);
	if ((rc = lm_sha256_file(path, got)) < 0 || memcmp(want, got, sizeof(want)) != 0) {
		(void)unlink(path);
		return rc < 0 ? rc : lm_error_set(LM_EIO, "this machine: %s read back differs from what was written; "
		    "removed", path);
	}
	return 0;
}

int lm_ssh_local_sha256(const char *path, uint8_t digest[32])
{
	struct stat st;

	/* As over SFTP (sftp.c's stat_regular): a link is not followed, and only a regular file is
	 * opened -- a FIFO would block the read. */
	if (lstat(path, &st) != 0)
		return local_errno("reading", path, errno);
	if (!S_ISREG(st.st_mode))
		return lm_error_set(LM_EREMOTE, "this machine: %s is not a regular file", path);
	return lm_sha256_file(path, digest);
}

int lm_ssh_local_remove(const char *path)
{
	struct stat st;

	if (unlink(path) == 0 || errno == ENOENT)
		return 0;
	/* A directory: rmdir (empty ones only, as over SFTP). */
	if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && rmdir(path) == 0)
		return 0;
	return local_errno("removing", path, errno);
}

int lm_ssh_local_stat(const char *path, lm_ssh_stat_info *out)
{
	struct stat st;

	memset(out, 0, sizeof(*out));
	if (lstat(path, &st) != 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : local_errno("reading", path, errno);
	out->exists = 1;
	out->is_dir = S_ISDIR(st.st_mode);
	out->is_link = S_ISLNK(st.st_mode);
	out->size = (uint64_t)st.st_size;
	out->mode = (int)(st.st_mode & 07777);
	return 0;
}

int lm_ssh_local_list_dir(const char *dir, size_t max_names, char ***names)
{
	struct dirent *de;
	char **v = NULL;
	size_t n = 0;
	DIR *d;
	int rc = 0;

	*names = NULL;
	if ((d = opendir(dir)) == NULL)
		return local_errno("listing", dir, errno);
	if ((v = calloc(max_names + 1, sizeof(char *))) == NULL) {
		closedir(d);
		return lm_error_nomem();
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (n == max_names) {
			rc = lm_error_set(LM_ETOOLARGE, "this machine: %s holds more than %zu entries (the limit)", dir, max_names);
			break;
		}
		if ((v[n++] = strdup(de->d_name)) == NULL) {
			rc = lm_error_nomem();
			break;
		}
	}
	closedir(d);
	if (rc < 0) {
		lm_strv_free(v);
		return rc;
	}
	*names = v;
	return 0;
}

int lm_ssh_local_read_file(const char *path, size_t max, char **data, size_t *len)
{
	struct stat st;
	int rc;

	*data = NULL;
	*len = 0;
	/* Not followed when a link, as over SFTP (lstat first). */
	if (lstat(path, &st) != 0)
		return local_errno("reading", path, errno);
	if (!S_ISREG(st.st_mode))
		return lm_error_set(LM_EREMOTE, "this machine: %s is not a regular file", path);
	if ((uint64_t)st.st_size > max)
		return lm_error_set(LM_ETOOLARGE, "this machine: %s is %lld bytes, more than %zu (the limit)", path,
		    (long long)st.st_size, max);
	if ((rc = lm_fs_read_file(path, max, data, len)) == LM_EINVALID)
		rc = lm_error_set(LM_ETOOLARGE, "this machine: %s is more than %zu bytes (the limit)", path, max);
	return rc;
}
