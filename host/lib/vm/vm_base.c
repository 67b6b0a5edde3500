/* What the backends share of the manager: its cancellation, the options' programs, a program's
 * version, the identity of what a backend answers, a failed command's line, and the detached
 * children the Lume CLI and Tart leave with it. */
#include "vm_internal.h"
#include "text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

const char *lm_vm_option(const char *value, const char *fallback)
{
	return value != NULL && value[0] != '\0' ? value : fallback;
}

int lm_vm_program_present(const char *program)
{
	char *found = NULL;
	int rc;

	if ((rc = lm_proc_find_program(program, &found)) == 0)
		free(found);
	return rc;
}

/* The first version number in a program's answer ("lume 0.2.22" -> "0.2.22"). */
static void version_of(const char *out, char *buf, size_t len)
{
	const char *line = "", *w = "";
	size_t n = 0, wn = 0, i = 0;
	lm_scan lines, l;

	lm_scan_init(&lines, out, strlen(out));
	(void)lm_scan_line(&lines, &line, &n); /* the first line's (none: "") */
	while (i < n && (line[i] < '0' || line[i] > '9'))
		i++;
	lm_scan_init(&l, line + i, n - i);
	(void)lm_scan_token(&l, " \t\r", &w, &wn);
	lm_text_format_cut(buf, len, "%.*s", (int)wn, w);
}

int lm_vm_version_answer(int rc, lm_proc_result *res, char *buf, size_t len)
{
	buf[0] = '\0';
	if (rc < 0)
		return rc;
	if (res->exit_code == 0)
		version_of(res->out, buf, len);
	lm_proc_result_dispose(res);
	return 0;
}

const lm_context *lm_vm_cancel_ctx(const lm_vm_manager *vmm)
{
	return vmm->uncancelable > 0 ? NULL : vmm->ctx;
}

int lm_vm_check_cancel(const lm_vm_manager *vmm, const char *what)
{
	return lm_context_check_cancel(lm_vm_cancel_ctx(vmm), what);
}

int lm_vm_program_version(lm_vm_manager *vmm, const char *program, const char *arg, const char *const *env, char *buf,
    size_t len)
{
	const char *args[] = {arg, NULL};
	const lm_proc_options o = {.env = env, .timeout = LM_VM_VERSION_TIMEOUT, .cancel = lm_vm_cancel_ctx(vmm)};
	char *path = NULL;
	lm_proc_result res;
	int rc;

	buf[0] = '\0';
	if ((rc = lm_proc_find_program(program, &path)) < 0)
		return rc;
	rc = lm_proc_run(path, args, &o, &res);
	free(path);
	return lm_vm_version_answer(rc, &res, buf, len);
}

void lm_vm_fill_identity(lm_vm_info *info, const lm_vm_backend *b)
{
	if (info->manager[0] == '\0')
		snprintf(info->manager, sizeof(info->manager), "%s", b->name);
	if (info->account[0] == '\0' && strcmp(info->manager, "auto") != 0)
		snprintf(info->account, sizeof(info->account), "%s", b->account != NULL ? b->account : "lume");
}

/* The most useful line of a failed command: the last non-empty line of stderr, else of stdout. */
void lm_vm_failure_line(const lm_proc_result *res, char *buf, size_t cap)
{
	const char *texts[2] = {res->err, res->out};
	size_t t;

	buf[0] = '\0';
	for (t = 0; t < 2 && buf[0] == '\0'; t++) {
		const char *s = texts[t], *last = NULL, *line;
		size_t n;
		lm_scan lines, l;
		if (s == NULL)
			continue;
		lm_scan_init(&lines, s, strlen(s));
		while (lm_scan_line(&lines, &line, &n) != 0) {
			lm_scan_init(&l, line, n);
			if (lm_scan_span(&l, " \t\r") < n)
				last = line; /* not blank */
		}
		if (last != NULL)
			lm_vm_excerpt(last, buf, cap);
	}
}

/* Reap detached children that have finished (they are ours until they exit). */
void lm_vm_reap_children(lm_vm_manager *vmm)
{
	size_t i;
	int status;

	for (i = 0; i < LM_VM_MAX_CHILDREN; i++)
		if (vmm->children[i] > 0 && waitpid(vmm->children[i], &status, WNOHANG) != 0)
			vmm->children[i] = 0;
}

void lm_vm_adopt_child(lm_vm_manager *vmm, pid_t pid)
{
	size_t i;

	lm_vm_reap_children(vmm);
	for (i = 0; i < LM_VM_MAX_CHILDREN; i++)
		if (vmm->children[i] == 0) {
			vmm->children[i] = pid;
			return;
		}
}

void lm_vm_note_launch(lm_vm_manager *vmm, pid_t child, const char *what)
{
	vmm->launch.done = 1;
	vmm->launch.child = child;
	vmm->launch.what = what;
}

static int child_adopted(const lm_vm_manager *vmm, pid_t pid)
{
	size_t i;

	for (i = 0; i < LM_VM_MAX_CHILDREN; i++)
		if (vmm->children[i] == pid)
			return 1;
	return 0;
}

int lm_vm_child_wait(lm_vm_manager *vmm, pid_t pid, double seconds)
{
	double deadline = lm_clock_monotonic() + seconds;

	for (;;) {
		lm_vm_reap_children(vmm);
		if (!child_adopted(vmm, pid))
			return 1;
		if (lm_clock_monotonic() >= deadline)
			return 0;
		lm_clock_sleep(0.05);
	}
}
