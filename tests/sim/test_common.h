/* Shared by the VM manager tests: a context for a simulator, and small checks. */
#ifndef LM_TEST_COMMON_H
#define LM_TEST_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lume-metal.h"
#include "lume-metal/sys/ssh.h"
#include "lume-metal/sys/vm.h"
#include "sim_fixture.h"
#include "lm_test.h"

typedef struct {
	sim_fixture sim;
	char state_dir[PATH_MAX + 16];
} test_env;

static inline lm_context *test_context(test_env *env, lm_vm_manager_kind kind, const char *url, const char *lume,
    double ready_timeout)
{
	lm_options o;
	lm_context *ctx = NULL;

	assert_int_equal(lm_options_init(&o, LM_OPTIONS_VERSION), 0);
	snprintf(env->state_dir, sizeof(env->state_dir), "%s/state", env->sim.dir);
	o.state_dir = env->state_dir;
	o.vm_manager = kind;
	o.lume_url = url;
	o.lume_program = lume;
	o.ready_timeout = ready_timeout;
	o.connect_timeout = 5;
	assert_int_equal(lm_context_new(&ctx, &o), 0);
	return ctx;
}

/* A real SSH server answers on ADDRESS:22 with an OpenSSH banner. */
static inline void assert_real_sshd(const char *address)
{
	struct sockaddr_in sa;
	char banner[64] = "";
	ssize_t n;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct timeval tv = {5, 0};

	assert_true(fd >= 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(22);
	assert_int_equal(inet_pton(AF_INET, address, &sa.sin_addr), 1);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	n = read(fd, banner, sizeof(banner) - 1);
	close(fd);
	assert_true(n > 0);
	banner[n] = '\0';
	if (strncmp(banner, "SSH-2.0-OpenSSH", 15) != 0)
		fail_msg("%s:22 answered \"%s\", not an OpenSSH banner", address, banner);
}

static inline int port22_closed(const char *address)
{
	struct sockaddr_in sa;
	int fd = socket(AF_INET, SOCK_STREAM, 0), rc;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(22);
	inet_pton(AF_INET, address, &sa.sin_addr);
	rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	close(fd);
	return rc != 0;
}

#endif
