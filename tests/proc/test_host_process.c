/* This host's process table (host/lib/proc/interface/host_process.h), through its header alone, on
 * Linux's /proc: real processes that each case starts -- a copy of a program, a listener on
 * 127.0.0.1, holders of a file, a child to date -- found by what they run or hold, and no longer
 * once they are stopped by their PID. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "host_process.h"
#include "proc.h"
#include "children.h"
#include "lm_test.h"

/* What every process this program forks runs: its own path, in the command the table reads. */
#define THIS_PROGRAM "test_proc_host_process"

/* A process of this user runs the program file at a path: the same file (device and inode),
 * whatever path it was started by; not before it starts, nor once it has ended. */
static void test_program_running(void **state)
{
	children *c = *state;
	char *copy = children_path(c, "lm-sleep"), *other_name = children_path(c, "lm-sleep-2"), *data;
	const char *args[] = {"600", NULL};
	const lm_proc_options o = {.timeout = 60};
	int running = -1;
	size_t len;
	pid_t pid;

	/* A copy of sleep of this case's own: no other process runs that file. */
	data = lm_test_slurp("/bin/sleep", &len);
	assert_non_null(data);
	lm_test_write(copy, data, len);
	free(data);
	assert_int_equal(chmod(copy, 0755), 0);
	assert_int_equal(link(copy, other_name), 0);
	lm_assert_ok(lm_host_program_running(copy, &running));
	assert_int_equal(running, 0);

	/* Started by its other name; asked by the first. posix_spawn returns once the child runs it. */
	lm_assert_ok(lm_proc_spawn_detached(other_name, args, &o, &pid));
	children_add(c, pid);
	lm_assert_ok(lm_host_program_running(copy, &running));
	assert_int_equal(running, 1);
	children_stop(c, pid);
	lm_assert_ok(lm_host_program_running(copy, &running));
	assert_int_equal(running, 0);

	lm_assert_ok(lm_host_program_running("/nonexistent/lume", &running));
	assert_int_equal(running, 0);
	free(copy);
	free(other_name);
}

/* A port no IPv4 socket is bound to at this moment: the kernel's choice for a bind to the wildcard
 * address, which conflicts with every other IPv4 socket bound to a port. lm_host_port_listener
 * names the first listener it finds, and the simulators of the tests running beside this one
 * listen on ports the kernel chose, on addresses of their own; a port chosen for 127.0.0.1 alone
 * could be one of theirs. The socket never listens, and is closed before the case takes the port. */
static int unbound_port(void)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_ANY);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	close(fd);
	return ntohs(sa.sin_port);
}

/* A TCP socket bound to 127.0.0.1:port; -1 with errno. */
static int loopback_socket(int port)
{
	struct sockaddr_in sa;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? -1 : fd;
}

/* children_fork's work: listen on 127.0.0.1:*port. */
static int listen_on_loopback(const void *port)
{
	int fd = loopback_socket(*(const int *)port);

	return fd < 0 || listen(fd, 4) < 0 ? errno : 0;
}

typedef struct {
	int listen; /* a listener of the child's own */
	int from;   /* the port its connection to that listener comes from */
} connection;

/* children_fork's work: a connection from 127.0.0.1:from to a listener on 127.0.0.1:listen; on
 * loopback the handshake is done when connect returns. */
static int connect_from(const void *arg)
{
	const connection *c = arg;
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int server = loopback_socket(c->listen), client;

	if (server < 0 || listen(server, 4) < 0 || getsockname(server, (struct sockaddr *)&sa, &len) < 0)
		return errno;
	if ((client = loopback_socket(c->from)) < 0 || connect(client, (struct sockaddr *)&sa, len) < 0)
		return errno;
	return 0;
}

/* The process listening on a TCP port at a loopback address: found with its PID, user and command;
 * none once it has gone, and none for a socket on the port that does not listen (a connection
 * from it). */
static void test_port_listener(void **state)
{
	children *c = *state;
	lm_host_process p;
	connection conn;
	int port = unbound_port(), found = -1;
	pid_t pid;

	pid = children_fork(c, listen_on_loopback, &port);
	lm_assert_ok(lm_host_port_listener(port, &found, &p));
	assert_int_equal(found, 1);
	assert_int_equal(p.pid, pid);
	assert_int_equal(p.uid, geteuid());
	lm_assert_contains(p.command, THIS_PROGRAM);
	children_stop(c, pid);
	lm_assert_ok(lm_host_port_listener(port, &found, &p));
	assert_int_equal(found, 0);
	assert_int_equal(p.pid, 0);

	conn.from = port;
	conn.listen = unbound_port();
	pid = children_fork(c, connect_from, &conn);
	lm_assert_ok(lm_host_port_listener(conn.from, &found, &p));
	assert_int_equal(found, 0);
	assert_int_equal(p.pid, 0);
	lm_assert_ok(lm_host_port_listener(conn.listen, &found, &p));
	assert_int_equal(found, 1);
	assert_int_equal(p.pid, pid);
	children_stop(c, pid);
}

/* children_fork's work: keep the file at *path open. */
static int hold_open(const void *path)
{
	return open(path, O_RDONLY) < 0 ? errno : 0;
}

/* A VM's owner is the process that has one of its files open, looked up by any of its paths (the
 * same file: device and inode): the lowest PID when several do, as `lsof -F p` lists first; none
 * when nobody has (or the files do not exist). */
static void test_vm_holder(void **state)
{
	children *c = *state;
	char *config = children_path(c, "config.json"), *missing = children_path(c, "elsewhere/config.json");
	char *other_name = children_path(c, "config-link.json");
	const char *files[] = {missing, other_name};
	lm_host_process p;
	pid_t a, b, low, high;

	lm_test_write_text(config, "{}");
	assert_int_equal(link(config, other_name), 0);
	lm_assert_ok(lm_host_vm_holder(files, 2, &p));
	assert_int_equal(p.pid, 0);
	assert_int_equal(p.uid, -1);

	a = children_fork(c, hold_open, config);
	b = children_fork(c, hold_open, config);
	low = a < b ? a : b;
	high = a < b ? b : a;
	lm_assert_ok(lm_host_vm_holder(files, 2, &p));
	assert_int_equal(p.pid, low);
	assert_int_equal(p.uid, geteuid());
	lm_assert_contains(p.command, THIS_PROGRAM);
	assert_string_equal(p.subcommand, ""); /* no argument after the program */
	children_stop(c, low);
	lm_assert_ok(lm_host_vm_holder(files, 2, &p));
	assert_int_equal(p.pid, high);
	children_stop(c, high);
	lm_assert_ok(lm_host_vm_holder(files, 2, &p));
	assert_int_equal(p.pid, 0);
	lm_assert_ok(lm_host_vm_holder(files, 1, &p)); /* the missing one alone */
	assert_int_equal(p.pid, 0);
	lm_assert_ok(lm_host_vm_holder(NULL, 0, &p));
	assert_int_equal(p.pid, 0);
	free(config);
	free(missing);
	free(other_name);
}

/* children_fork's work: none; the child only waits to be killed. */
static int nothing(const void *arg)
{
	(void)arg;
	return 0;
}

static double now_epoch(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

/* The restart rule's evidence from the OS (record/level.c): a process started after a moment is
 * seen starting after it, to the clock tick (10 ms on Linux), and one that is not there has no
 * start. */
static void test_process_started(void **state)
{
	children *c = *state;
	double before, after, at = -1;
	pid_t pid;

	before = now_epoch();
	pid = children_fork(c, nothing, NULL);
	lm_assert_ok(lm_host_process_started((long)pid, &at));
	after = now_epoch();
	print_message("started %.3f s after the moment before it, %.3f s before the moment after\n", at - before,
	    after - at);
	assert_true(at >= before - 0.02);
	assert_true(at <= after + 0.02);
	children_stop(c, pid);
	lm_assert_ok(lm_host_process_started((long)pid, &at)); /* reaped: gone */
	assert_true(at == 0);
	lm_assert_ok(lm_host_process_started(0, &at));
	assert_true(at == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_program_running, children_setup, children_teardown),
		cmocka_unit_test_setup_teardown(test_port_listener, children_setup, children_teardown),
		cmocka_unit_test_setup_teardown(test_vm_holder, children_setup, children_teardown),
		cmocka_unit_test_setup_teardown(test_process_started, children_setup, children_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
