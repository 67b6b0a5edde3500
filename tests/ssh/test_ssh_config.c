/* ~/.ssh/config's reader (host/lib/ssh/ssh_config.c), by ssh_config(5)'s rules: Host patterns
 * with * and ? and negation, the first obtained value wins, keyword case and `=`, quotes, the
 * lines before any Host, Match not evaluated, IdentityFile's ~ and tokens, and every bad value an
 * error naming its line (issue 50). The same file against a real sshd: test_ssh_guest.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "lume-metal/error.h"
#include "ssh_config.h"

static int parse(const char *text, const char *host, lm_ssh_config_host *out)
{
	return lm_ssh_config_parse(text, strlen(text), "/h/.ssh/config", host, "/h", "me", out);
}

static void test_patterns(void **state)
{
	(void)state;
	assert_true(lm_ssh_config_match("*", "192.168.64.2"));
	assert_true(lm_ssh_config_match("192.168.64.*", "192.168.64.2"));
	assert_true(lm_ssh_config_match("192.168.64.?", "192.168.64.2"));
	assert_false(lm_ssh_config_match("192.168.64.?", "192.168.64.20"));
	assert_true(lm_ssh_config_match("*.64.*", "192.168.64.20"));
	assert_true(lm_ssh_config_match("1*2*3", "1xx2yy3"));
	assert_false(lm_ssh_config_match("1*2*3", "1xx2yy4"));
	assert_true(lm_ssh_config_match("a**", "a"));
	assert_false(lm_ssh_config_match("", "a"));
	assert_false(lm_ssh_config_match("192.168.64.2", "192.168.64.20"));
}

static void test_first_value_wins(void **state)
{
	lm_ssh_config_host c;

	(void)state;
	/* The lines before any Host apply to every host; the first value of each key is used. */
	assert_int_equal(parse("# mine\n"
	                       "\n"
	                       "Host 192.168.64.2\n"
	                       "  User admin\n"
	                       "  port=2222\n"
	                       "Host 192.168.64.*\n"
	                       "  User other\n"
	                       "  IdentityFile ~/.ssh/id_vm\n"
	                       "  Port 2200\n"
	                       "Host *\n"
	                       "  IDENTITYFILE ~/.ssh/id_all\n"
	                       "  User = everyone\n", "192.168.64.2", &c), 0);
	assert_string_equal(c.user, "admin");
	assert_int_equal(c.port, 2222);
	assert_string_equal(c.identity, "/h/.ssh/id_vm");
	assert_string_equal(c.proxy_jump, "");
	/* Another host of the /24: the second section first. */
	assert_int_equal(parse("Host 192.168.64.2\n User admin\nHost 192.168.64.*\n User other\n", "192.168.64.3", &c), 0);
	assert_string_equal(c.user, "other");
	assert_int_equal(c.port, 0);
	/* No section matches: nothing set. */
	assert_int_equal(parse("Host build-*\n User ci\n", "10.0.0.1", &c), 0);
	assert_string_equal(c.user, "");
	/* Before any Host: for every host. */
	assert_int_equal(parse("User early\nHost *\n User late\n", "10.0.0.1", &c), 0);
	assert_string_equal(c.user, "early");
}

static void test_negation_and_lists(void **state)
{
	lm_ssh_config_host c;

	(void)state;
	/* A negated pattern that matches ignores the section, whatever else matches. */
	assert_int_equal(parse("Host 192.168.64.* !192.168.64.9\n User vm\nHost *\n User rest\n", "192.168.64.9", &c), 0);
	assert_string_equal(c.user, "rest");
	assert_int_equal(parse("Host 192.168.64.* !192.168.64.9\n User vm\n", "192.168.64.8", &c), 0);
	assert_string_equal(c.user, "vm");
	/* A negation alone matches nothing. */
	assert_int_equal(parse("Host !10.0.0.1\n User not\n", "10.0.0.2", &c), 0);
	assert_string_equal(c.user, "");
	/* Comma-separated pattern-lists and quoted arguments. */
	assert_int_equal(parse("Host a,192.168.64.?\n IdentityFile \"/keys/my key\"\n", "192.168.64.5", &c), 0);
	assert_string_equal(c.identity, "/keys/my key");
	/* Match sections are not evaluated: their lines apply to no host. */
	assert_int_equal(parse("Match host 10.0.0.1\n User matched\nHost *\n User host\n", "10.0.0.1", &c), 0);
	assert_string_equal(c.user, "host");
	/* Windows line ends. */
	assert_int_equal(parse("Host *\r\n  User crlf\r\n", "10.0.0.1", &c), 0);
	assert_string_equal(c.user, "crlf");
}

static void test_identity_tokens(void **state)
{
	lm_ssh_config_host c;

	(void)state;
	assert_int_equal(parse("IdentityFile %d/.ssh/%h-%u%%\n", "10.0.0.1", &c), 0);
	assert_string_equal(c.identity, "/h/.ssh/10.0.0.1-me%");
	assert_int_equal(parse("IdentityFile ~\n", "10.0.0.1", &c), 0);
	assert_string_equal(c.identity, "/h");
	/* A token lume-metal does not expand is refused, never a file guessed at. */
	assert_int_equal(parse("Host *\n\n  IdentityFile ~/.ssh/%C\n", "10.0.0.1", &c), LM_EINVALID);
	assert_non_null(strstr(lm_error_last()->message, "/h/.ssh/config line 3"));
	assert_non_null(strstr(lm_error_last()->message, "%C"));
}

static void test_proxy_jump_and_errors(void **state)
{
	lm_ssh_config_host c;
	char long_user[200];

	(void)state;
	assert_int_equal(parse("Host 10.*\n ProxyJump bastion\n", "10.0.0.1", &c), 0);
	assert_string_equal(c.proxy_jump, "bastion");
	assert_int_equal(c.proxy_line, 2);
	/* ProxyJump none first: no jump, whatever comes after. */
	assert_int_equal(parse("Host 10.0.0.1\n ProxyJump none\nHost *\n ProxyJump bastion\n", "10.0.0.1", &c), 0);
	assert_string_equal(c.proxy_jump, "");
	assert_int_equal(parse("Port 0\n", "h", &c), LM_EINVALID);
	assert_non_null(strstr(lm_error_last()->message, "line 1: Port 0"));
	assert_int_equal(parse("Port 22x\n", "h", &c), LM_EINVALID);
	assert_int_equal(parse("Port 65536\n", "h", &c), LM_EINVALID);
	assert_int_equal(parse("Host *\n User \"unclosed\n", "h", &c), LM_EINVALID);
	assert_non_null(strstr(lm_error_last()->message, "line 2"));
	memset(long_user, 'u', sizeof(long_user) - 1);
	long_user[sizeof(long_user) - 1] = '\0';
	{
		char text[300];
		snprintf(text, sizeof(text), "User %s\n", long_user);
		assert_int_equal(parse(text, "h", &c), LM_EINVALID); /* too long: refused, not cut */
		assert_non_null(strstr(lm_error_last()->message, "User is longer than"));
	}
	/* A key without a value, and keys lume-metal does not read, are passed over. */
	assert_int_equal(parse("User\nHostName elsewhere\nForwardAgent yes\nUser ok\n", "h", &c), 0);
	assert_string_equal(c.user, "ok");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_patterns),
		cmocka_unit_test(test_first_value_wins),
		cmocka_unit_test(test_negation_and_lists),
		cmocka_unit_test(test_identity_tokens),
		cmocka_unit_test(test_proxy_jump_and_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
