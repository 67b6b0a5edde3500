/* lm_test: the C tests' shared helpers (lm_test.h). */
#define _XOPEN_SOURCE 700 /* nftw */
#include "lm_test.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* The machine failed the test's preparation: say what, and stop the test program. */
static void die(const char *what, const char *path, int err)
{
	fprintf(stderr, "lm_test: %s %s: %s\n", what, path != NULL ? path : "", strerror(err));
	abort();
}

static void *must_alloc(size_t n)
{
	void *p = malloc(n);

	if (p == NULL)
		die("out of memory allocating", NULL, ENOMEM);
	return p;
}

/* ---- text -------------------------------------------------------------------------------- */

int lm_test_contains(const char *hay, const char *needle)
{
	return hay != NULL && strstr(hay, needle) != NULL;
}

size_t lm_test_count(const char *hay, const char *needle)
{
	size_t n = 0;

	if (needle[0] == '\0')
		return 0;
	while (hay != NULL && (hay = strstr(hay, needle)) != NULL) {
		n++;
		hay++;
	}
	return n;
}

/* ---- one document per row of a table ---------------------------------------------------- */

/* A row's edit that cannot be made: the test program stops, saying why and showing the base. */
_Noreturn static void bad_edit(const char *why, const char *text, const char *base)
{
	fprintf(stderr, "lm_test: a row's edit cannot be made: %s%s%s%s\nits base document:\n%s\n", why,
	    text != NULL ? " \"" : "", text != NULL ? text : "", text != NULL ? "\"" : "", base);
	abort();
}

/* A copy of the N bytes at DATA, NUL-terminated; *len = N. */
static char *bytes(const char *data, size_t n, size_t *len)
{
	char *doc = must_alloc(n + 1);

	memcpy(doc, data, n);
	doc[n] = '\0';
	*len = n;
	return doc;
}

char *lm_test_edited(const char *base, const lm_test_edit *edit, size_t *len)
{
	const char *at, *hit;
	size_t from_len, to_len, hits = 0, n = 0;
	char *doc;

	if ((edit->whole != NULL) + (edit->from != NULL) + (edit->cut_after != NULL) != 1 ||
	    (edit->from != NULL) != (edit->to != NULL))
		bad_edit("it is not exactly one of .whole, .from with .to, and .cut_after", NULL, base);
	if (edit->whole != NULL)
		return bytes(edit->whole, strlen(edit->whole), len);
	if (edit->cut_after != NULL) {
		if (edit->cut_after[0] == '\0' || (hit = strstr(base, edit->cut_after)) == NULL)
			bad_edit("the base has no", edit->cut_after, base);
		return bytes(base, (size_t)(hit - base) + strlen(edit->cut_after), len);
	}
	from_len = strlen(edit->from);
	to_len = edit->to_len != 0 ? edit->to_len : strlen(edit->to);
	for (at = base; from_len > 0 && (hit = strstr(at, edit->from)) != NULL; at = hit + from_len)
		hits++;
	if (hits == 0)
		bad_edit("the base has no", edit->from, base);
	if (!edit->every)
		hits = 1;
	doc = must_alloc(strlen(base) + hits * to_len + 1);
	for (at = base; hits > 0; hits--, at = hit + from_len) {
		hit = strstr(at, edit->from);
		memcpy(doc + n, at, (size_t)(hit - at));
		n += (size_t)(hit - at);
		memcpy(doc + n, edit->to, to_len);
		n += to_len;
	}
	memcpy(doc + n, at, strlen(at) + 1);
	*len = n + strlen(at);
	return doc;
}

/* ---- files and directories ------------------------------------------------------------- */

char *lm_test_join(const char *a, const char *b)
{
	size_t n = strlen(a) + strlen(b) + 2;
	char *s = must_alloc(n);

	snprintf(s, n, "%s/%s", a, b);
	return s;
}

char *lm_test_tmpdir_in(const char *parent, const char *tag)
{
	const char *base = parent != NULL ? parent : getenv("TMPDIR");
	size_t n;
	char *path;

	if (base == NULL || base[0] != '/')
		base = "/tmp";
	n = strlen(base) + strlen(tag) + sizeof("/lm-.XXXXXX");
	path = must_alloc(n);
	snprintf(path, n, "%s/lm-%s.XXXXXX", base, tag);
	if (mkdtemp(path) == NULL)
		die("cannot create a directory like", path, errno);
	return path;
}

char *lm_test_tmpdir(const char *tag)
{
	return lm_test_tmpdir_in(NULL, tag);
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		return rmdir(path) < 0 && errno != ENOENT ? -1 : 0;
	return unlink(path) < 0 && errno != ENOENT ? -1 : 0;
}

int lm_test_rmtree(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -1;
	/* A test that took the write bit away to provoke a failure must not leave its tree behind. */
	if (S_ISDIR(st.st_mode))
		chmod(path, 0700);
	return nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

int lm_test_mkdir_p(const char *path, mode_t mode)
{
	size_t n = strlen(path);
	char *buf = must_alloc(n + 1), *p;
	int rc = 0;

	memcpy(buf, path, n + 1);
	for (p = buf + 1; rc == 0 && *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			rc = -1;
		*p = '/';
	}
	if (rc == 0 && mkdir(buf, mode) < 0 && errno != EEXIST)
		rc = -1;
	free(buf);
	return rc;
}

char *lm_test_slurp(const char *path, size_t *len)
{
	size_t cap = 4096, used = 0;
	char *data;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), e;

	if (fd < 0)
		return NULL;
	data = must_alloc(cap);
	for (;;) {
		if (used + 1 == cap) {
			char *bigger = realloc(data, cap * 2);

			if (bigger == NULL)
				die("out of memory reading", path, ENOMEM);
			data = bigger;
			cap *= 2;
		}
		n = read(fd, data + used, cap - 1 - used);
		if (n == 0)
			break;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			e = errno;
			free(data);
			close(fd);
			errno = e;
			return NULL;
		}
		used += (size_t)n;
	}
	close(fd);
	data[used] = '\0';
	if (len != NULL)
		*len = used;
	return data;
}

void lm_test_write(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (f == NULL)
		die("cannot create", path, errno);
	if (fwrite(data, 1, len, f) != len || fclose(f) != 0)
		die("cannot write", path, errno);
}

void lm_test_write_text(const char *path, const char *text)
{
	lm_test_write(path, text, strlen(text));
}

static void put_be(unsigned char *p, uint64_t v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * (n - 1 - i)));
}

char *lm_test_deep_plist(unsigned levels, int binary, size_t *len)
{
	static const char head[] = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\"><dict><key>Deep</key>";
	static const char tail[] = "</dict></plist>\n";
	size_t arrays = levels - 1, nobj = arrays + 2, i, table, n;
	unsigned char *b;
	char *x, *p;

	if (!binary) {
		n = strlen(head) + arrays * (sizeof("<array>") - 1 + sizeof("</array>") - 1) + strlen(tail);
		if ((x = malloc(n + 1)) == NULL)
			die("out of memory", "deep plist", ENOMEM);
		p = x + sprintf(x, "%s", head);
		for (i = 0; i < arrays; i++)
			p += sprintf(p, "<array>");
		for (i = 0; i < arrays; i++)
			p += sprintf(p, "</array>");
		sprintf(p, "%s", tail);
		*len = n;
		return x;
	}
	/* Objects: 0 the dictionary (key 1, value 2), 1 "Deep", 2.. the arrays, each holding the next. */
	n = 8 + 9 + 5 + arrays * 5 + nobj * 4 + 32;
	if ((b = calloc(1, n)) == NULL)
		die("out of memory", "deep plist", ENOMEM);
	memcpy(b, "bplist00", 8);
	table = 8 + 9 + 5 + arrays * 5;
	put_be(b + table, 8, 4);
	b[8] = 0xd1;
	put_be(b + 9, 1, 4);
	put_be(b + 13, 2, 4);
	put_be(b + table + 4, 17, 4);
	memcpy(b + 17, "\x54" "Deep", 5);
	for (i = 0; i < arrays; i++) {
		size_t at = 22 + i * 5;

		put_be(b + table + (2 + i) * 4, at, 4);
		b[at] = i + 1 < arrays ? 0xa1 : 0xa0;
		if (i + 1 < arrays)
			put_be(b + at + 1, 3 + i, 4);
	}
	b[n - 32 + 6] = 4;
	b[n - 32 + 7] = 4;
	put_be(b + n - 24, nobj, 8);
	put_be(b + n - 16, 0, 8);
	put_be(b + n - 8, table, 8);
	*len = n;
	return (char *)b;
}

int lm_test_exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* ---- child processes ------------------------------------------------------------------- */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cloexec_pipe(int fds[2])
{
	if (pipe(fds) < 0)
		return -1;
	fcntl(fds[0], F_SETFD, FD_CLOEXEC);
	fcntl(fds[1], F_SETFD, FD_CLOEXEC);
	return 0;
}

/* Read what is there into BUF (cap bytes with the NUL); the stream is done at EOF. */
static void drain(int *fd, char *buf, size_t cap, size_t *len, const char *argv0, const char *stream)
{
	char over;
	ssize_t n;

	if (*len + 1 < cap)
		n = read(*fd, buf + *len, cap - 1 - *len);
	else
		n = read(*fd, &over, 1);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		close(*fd);
		*fd = -1;
		return;
	}
	if (*len + 1 >= cap) {
		fprintf(stderr, "lm_test: %s wrote more than %zu bytes on %s (LM_TEST_%s_MAX)\n", argv0, cap - 1, stream,
		    strcmp(stream, "stdout") == 0 ? "OUT" : "ERR");
		abort();
	}
	*len += (size_t)n;
	buf[*len] = '\0';
}

void lm_test_run(lm_test_result *r, char *const argv[], char *const envp[], const char *input)
{
	posix_spawn_file_actions_t fa;
	int out[2], err[2], in[2] = {-1, -1}, status, e;
	double deadline = now() + LM_TEST_RUN_LIMIT;
	pid_t pid;

	r->status = -1;
	r->out[0] = r->err[0] = '\0';
	r->out_len = r->err_len = 0;
	if (cloexec_pipe(out) < 0 || cloexec_pipe(err) < 0 || (input != NULL && cloexec_pipe(in) < 0))
		die("cannot make pipes for", argv[0], errno);
	posix_spawn_file_actions_init(&fa);
	if (input != NULL)
		posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	else
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_adddup2(&fa, err[1], 2);
	e = posix_spawn(&pid, argv[0], &fa, NULL, argv, envp != NULL ? envp : environ);
	posix_spawn_file_actions_destroy(&fa);
	close(out[1]);
	close(err[1]);
	if (e != 0)
		die("cannot start", argv[0], e);
	if (input != NULL) {
		/* The tests' inputs are a few lines: they fit in the pipe before the child reads. */
		size_t done = 0, len = strlen(input);
		void (*was)(int) = signal(SIGPIPE, SIG_IGN); /* a child that does not read its input */
		ssize_t n;

		close(in[0]);
		while (done < len && ((n = write(in[1], input + done, len - done)) > 0 || errno == EINTR))
			done += n > 0 ? (size_t)n : 0;
		close(in[1]);
		signal(SIGPIPE, was);
	}
	while (out[0] >= 0 || err[0] >= 0) {
		struct pollfd p[2] = {{.fd = out[0], .events = POLLIN}, {.fd = err[0], .events = POLLIN}};

		if (now() > deadline) {
			kill(pid, SIGKILL);
			fprintf(stderr, "lm_test: %s still ran after %d s (LM_TEST_RUN_LIMIT): killed\n", argv[0],
			    LM_TEST_RUN_LIMIT);
			abort();
		}
		if (poll(p, 2, 1000) <= 0)
			continue;
		if (out[0] >= 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR)))
			drain(&out[0], r->out, sizeof(r->out), &r->out_len, argv[0], "stdout");
		if (err[0] >= 0 && (p[1].revents & (POLLIN | POLLHUP | POLLERR)))
			drain(&err[0], r->err, sizeof(r->err), &r->err_len, argv[0], "stderr");
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("cannot wait for", argv[0], errno);
	r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

char **lm_test_env_with(char *const extra[])
{
	size_t n = 0, k = 0, i, j;
	char **env;

	while (environ[n] != NULL)
		n++;
	while (extra != NULL && extra[k] != NULL)
		k++;
	env = must_alloc((n + k + 1) * sizeof(*env));
	for (i = 0, n = 0; environ[i] != NULL; i++) {
		const char *eq = strchr(environ[i], '=');
		size_t name_len = eq != NULL ? (size_t)(eq - environ[i]) + 1 : strlen(environ[i]);

		for (j = 0; j < k && strncmp(environ[i], extra[j], name_len) != 0; j++)
			;
		if (j == k)
			env[n++] = environ[i];
	}
	for (j = 0; j < k; j++)
		env[n++] = extra[j];
	env[n] = NULL;
	return env;
}

/* ---- the address plan ------------------------------------------------------------------ */

const char *lm_test_address_base(void)
{
	const char *base = getenv("LM_ADDRESS_BASE");
	unsigned block, net, host;
	char end;

	if (base == NULL || sscanf(base, "127.%u.%u.%u%c", &block, &net, &host, &end) != 3 || block > 254 || net == 0 ||
	    net > 254 || host != 2) {
		fprintf(stderr, "lm_test: LM_ADDRESS_BASE is '%s', not 127.B.N.2: this test binds loopback addresses and "
		    "gets them from the address plan (lm_test_loopback in cmake/LumeMetalTesting.cmake); run it through "
		    "ctest, or set LM_ADDRESS_BASE to a /24 of its own\n", base != NULL ? base : "(unset)");
		abort();
	}
	return base;
}

void lm_test_address(char out[16], unsigned host)
{
	unsigned block = 0, net = 0, two = 0;

	sscanf(lm_test_address_base(), "127.%u.%u.%u", &block, &net, &two);
	if (host < 1 || host > 254) {
		fprintf(stderr, "lm_test: host %u is outside a /24's 1..254\n", host);
		abort();
	}
	snprintf(out, 16, "127.%u.%u.%u", block, net, host);
}
