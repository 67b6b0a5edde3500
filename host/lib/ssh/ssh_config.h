/* The user's OpenSSH client configuration (~/.ssh/config), the few keys lume-metal honours for a
 * VM's address, as ssh(1) and Ansible would: IdentityFile, User, Port and ProxyJump. libssh2 reads
 * no configuration, so this small reader does, by ssh_config(5)'s rules:
 *
 *  - a line is a keyword and its arguments, separated by whitespace or by one '=' with optional
 *    whitespace; keywords are case-insensitive, arguments case-sensitive and may be in double
 *    quotes; empty lines and lines starting with '#' are comments;
 *  - `Host PATTERN...` starts a section that applies when the host matches one of its patterns and
 *    none of its negated ones ("!PATTERN"); `*` matches zero or more characters, `?` exactly one;
 *    the lines before the first Host or Match apply to every host;
 *  - for each keyword the first obtained value is used ("Since the first obtained value for each
 *    parameter is used, more host-specific declarations should be given near the beginning");
 *  - IdentityFile's `~` is the home directory; its tokens %d (home), %h (the host), %u (the local
 *    user) and %% are expanded; another token is refused (never a file guessed at).
 *
 * What it does not do, each said: `Match` sections are not evaluated (their lines apply to no
 * host here), `Include` is not followed (a debug line says so), and ProxyJump other than `none` is
 * refused by the connection (lume-metal reaches its VMs directly).
 * The host matched is the address lume-metal connects to (the VM manager's IP address). */
#ifndef LM_SSH_CONFIG_H
#define LM_SSH_CONFIG_H

#include <stddef.h>

#define LM_SSH_CONFIG_MAX (1024 * 1024) /* a larger file is refused, not read in part */

typedef struct {
	int port;               /* 0: not set */
	char user[64];          /* "": not set */
	char identity[4096];    /* "": not set; expanded (an absolute path, or as given) */
	char proxy_jump[512];   /* "": not set; "none" counts as not set */
	int proxy_line;         /* the line ProxyJump came from */
	char path[1024];        /* the file read ("" when none) */
} lm_ssh_config_host;

/* What `text` (a configuration file's bytes, `path` for messages) says for `host`; home and
 * local_user for IdentityFile's expansion. LM_EINVALID naming the file and line for a value that
 * is not one (a Port out of range, a User or IdentityFile too long, an unknown token), never a
 * guess. */
int lm_ssh_config_parse(const char *text, size_t len, const char *path, const char *host, const char *home,
    const char *local_user, lm_ssh_config_host *out);

/* ~/.ssh/config for `host`: nothing set when the file does not exist. */
int lm_ssh_config_read(const char *host, lm_ssh_config_host *out);

/* Whether `host` matches one `Host` pattern (no negation): * and ? as ssh_config(5) says. */
int lm_ssh_config_match(const char *pattern, const char *host);

#endif
