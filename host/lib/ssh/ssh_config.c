/* ~/.ssh/config's IdentityFile, User, Port and ProxyJump for a VM's address (ssh_config.h; the
 * rules are ssh_config(5)'s, cited where each applies). Bounded throughout: a line, a value, a
 * path too long for its field fails naming the file and line; nothing is cut. */
#include <ctype.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "ssh_config.h"
#include "context_internal.h"
#include "error_internal.h"
#include "file.h"
#include "path.h"
#include "text.h"

/* The longest line read, newline excluded, is one byte less. */
#define LINE_MAX_BYTES 4096

/* ssh_config(5), PATTERNS: "`*' matches zero or more characters, `?' matches exactly one
 * character". Iterative, with one backtrack point per `*` (no recursion a long pattern could
 * exhaust). */
int lm_ssh_config_match(const char *pattern, const char *host)
{
	const char *p = pattern, *h = host, *star = NULL, *mark = NULL;

	while (*h != '\0') {
		if (*p == '*') {
			star = p++;
			mark = h;
		} else if (*p == '?' || *p == *h) {
			p++;
			h++;
		} else if (star != NULL) {
			p = star + 1;
			h = ++mark;
		} else {
			return 0;
		}
	}
	while (*p == '*')
		p++;
	return *p == '\0';
}

/* The next argument of a line: whitespace-separated, or in double quotes (ssh_config(5):
 * "Arguments may optionally be enclosed in double quotes (") in order to represent arguments
 * containing spaces"). *s moves past it; 0 when there is none, -1 for an unclosed quote. */
static int next_word(char **s, char **word)
{
	char *p = *s, *end;

	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '\0')
		return 0;
	if (*p == '"') {
		if ((end = strchr(p + 1, '"')) == NULL)
			return -1;
		*end = '\0';
		*word = p + 1;
		*s = end + 1;
		return 1;
	}
	end = p + strcspn(p, " \t");
	if (*end != '\0')
		*end++ = '\0';
	*word = p;
	*s = end;
	return 1;
}

/* ssh_config(5): "If a pattern is negated and matches, the entry is ignored regardless of any
 * other pattern on the line"; otherwise one pattern that matches applies the section. A
 * pattern-list's commas separate patterns too (PATTERNS). */
static int host_line_matches(char *args, const char *host)
{
	char *word, pat[LINE_MAX_BYTES];
	const char *p;
	size_t n;
	lm_scan list;
	int any = 0, rc;

	while ((rc = next_word(&args, &word)) > 0) {
		lm_scan_init(&list, word, strlen(word));
		while (lm_scan_token(&list, ",", &p, &n) == 1) {
			/* a part of the line: it always fits */
			if (lm_text_copy(pat, sizeof(pat), p, n) < 0)
				return 0;
			if (pat[0] == '!') {
				if (lm_ssh_config_match(pat + 1, host))
					return 0;
			} else if (lm_ssh_config_match(pat, host)) {
				any = 1;
			}
		}
	}
	return any;
}

/* IdentityFile's value with ~ and the tokens ssh_config(5) lists under TOKENS that mean something
 * here: %d (the local home), %h (the remote host), %u (the local user), %%. */
static int expand_identity(const char *v, const char *path, int line, const char *host, const char *home,
    const char *local_user, char *out, size_t size)
{
	size_t n = 0, k;
	const char *add;
	char one[2] = {0, 0};

	if (v[0] == '~' && (v[1] == '/' || v[1] == '\0')) {
		if (home == NULL)
			return lm_error_set(LM_EINVALID, "%s line %d: IdentityFile %s: no home directory for ~", path, line, v);
		if ((k = strlen(home)) >= size)
			goto too_long;
		memcpy(out, home, k);
		n = k;
		v++;
	}
	for (; *v != '\0'; v++) {
		add = one;
		one[0] = *v;
		if (*v == '%') {
			switch (v[1]) {
			case '%': add = "%"; break;
			case 'd': add = home; break;
			case 'h': add = host; break;
			case 'u': add = local_user; break;
			default:
				return lm_error_set(LM_EINVALID, "%s line %d: IdentityFile: the token %%%c is not one lume-metal "
				    "expands (%%d, %%h, %%u, %%%%), so the key's path is not known", path, line, v[1] ? v[1] : ' ');
			}
			if (add == NULL)
				return lm_error_set(LM_EINVALID, "%s line %d: IdentityFile: %%%c is not known here", path, line, v[1]);
			v++;
		}
		if ((k = strlen(add)) >= size - n)
			goto too_long;
		memcpy(out + n, add, k);
		n += k;
	}
	out[n] = '\0';
	return 0;
too_long:
	return lm_error_set(LM_EINVALID, "%s line %d: IdentityFile is longer than %zu bytes", path, line, size - 1);
}

static int set_text(char *field, size_t size, const char *value, const char *path, int line, const char *key)
{
	if (strlen(value) >= size)
		return lm_error_set(LM_EINVALID, "%s line %d: %s is longer than %zu bytes", path, line, key, size - 1);
	memcpy(field, value, strlen(value) + 1);
	return 0;
}

int lm_ssh_config_parse(const char *text, size_t len, const char *path, const char *host, const char *home,
    const char *local_user, lm_ssh_config_host *out)
{
	char line[LINE_MAX_BYTES], *s, *key, *value, *eq;
	const char *p;
	size_t n;
	lm_scan lines;
	int lineno = 0, applies = 1, has_port = 0, has_user = 0, has_identity = 0, has_jump = 0, rc;
	long port;

	memset(out, 0, sizeof(*out));
	snprintf(out->path, sizeof(out->path), "%s", path);
	lm_scan_init(&lines, text, len);
	while (lm_scan_line(&lines, &p, &n) != 0) {
		lineno++;
		if (n >= sizeof(line))
			return lm_error_set(LM_EINVALID, "%s line %d: longer than %zu bytes", path, lineno, sizeof(line) - 1);
		if (lm_text_copy(line, sizeof(line), p, n) < 0)
			return lm_error_set(LM_EINVALID, "%s line %d: a NUL byte", path, lineno);
		if (n > 0 && line[n - 1] == '\r')
			line[--n] = '\0';
		s = line;
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == '\0' || *s == '#')
			continue;
		/* ssh_config(5): "Configuration options may be separated by whitespace or optional
		 * whitespace and exactly one `='". */
		key = s;
		s += strcspn(s, " \t=");
		eq = s + strspn(s, " \t");
		if (*eq == '=')
			eq++;
		if (*s != '\0')
			*s = '\0';
		s = eq;
		if (strcasecmp(key, "Host") == 0) {
			applies = host_line_matches(s, host);
			continue;
		}
		if (strcasecmp(key, "Match") == 0) { /* not evaluated: its lines apply to no host here */
			applies = 0;
			continue;
		}
		if (!applies)
			continue;
		if ((rc = next_word(&s, &value)) < 0)
			return lm_error_set(LM_EINVALID, "%s line %d: %s: a quote that is not closed", path, lineno, key);
		if (rc == 0)
			continue;
		/* ssh_config(5): "for each parameter, the first obtained value will be used". */
		if (strcasecmp(key, "Port") == 0 && !has_port) {
			char *e;
			port = strtol(value, &e, 10);
			if (*e != '\0' || port < 1 || port > 65535)
				return lm_error_set(LM_EINVALID, "%s line %d: Port %s is not a port (1-65535)", path, lineno, value);
			out->port = (int)port;
			has_port = 1;
		} else if (strcasecmp(key, "User") == 0 && !has_user) {
			if ((rc = set_text(out->user, sizeof(out->user), value, path, lineno, "User")) < 0)
				return rc;
			has_user = 1;
		} else if (strcasecmp(key, "IdentityFile") == 0 && !has_identity) {
			if ((rc = expand_identity(value, path, lineno, host, home, local_user, out->identity,
			    sizeof(out->identity))) < 0)
				return rc;
			has_identity = 1;
		} else if (strcasecmp(key, "ProxyJump") == 0 && !has_jump) {
			if (strcasecmp(value, "none") != 0) {
				if ((rc = set_text(out->proxy_jump, sizeof(out->proxy_jump), value, path, lineno, "ProxyJump")) < 0)
					return rc;
				out->proxy_line = lineno;
			}
			has_jump = 1;
		}
	}
	return 0;
}

int lm_ssh_config_read(const char *host, lm_ssh_config_host *out)
{
	const char *home = NULL;
	struct passwd pw, *found = NULL;
	char path[1024], pwbuf[4096], *data = NULL;
	size_t len = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	if (lm_paths_home(&home) < 0 || home == NULL) {
		lm_error_clear();
		return 0; /* no home: no configuration of the user's */
	}
	if (lm_path_join_buf(path, sizeof(path), home, ".ssh/config", NULL) < 0)
		return lm_error_prefix("~/.ssh/config: ");
	if ((rc = lm_fs_read_file(path, LM_SSH_CONFIG_MAX, &data, &len)) == LM_ENOTFOUND) {
		lm_error_clear();
		return 0;
	}
	if (rc < 0)
		return lm_error_prefix("the SSH client configuration: ");
	(void)getpwuid_r(getuid(), &pw, pwbuf, sizeof(pwbuf), &found);
	rc = lm_ssh_config_parse(data, len, path, host, home, found != NULL ? found->pw_name : NULL, out);
	free(data);
	return rc;
}
