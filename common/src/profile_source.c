/* Where profiles come from: the built-in ones (the JSON files in common/profiles, embedded at build time)
 * and files given by the user. */
#include "profile_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error_internal.h"
#include "text.h"

#define DEFAULT_PROFILE "published"

size_t lm_profile_builtin_count(void)
{
	return lm_builtin_profile_source_count;
}

const char *lm_profile_builtin_name(size_t index)
{
	return index < lm_builtin_profile_source_count ? lm_builtin_profile_sources[index].name : NULL;
}

const char *lm_profile_default_name(void)
{
	return DEFAULT_PROFILE;
}

int lm_profile_builtin(lm_profile **out, const char *name)
{
	char known[256], source[96];
	const char *hint = NULL;
	size_t i, o = 0, best = 3, d;

	*out = NULL;
	for (i = 0; name != NULL && i < lm_builtin_profile_source_count; i++) {
		const lm_builtin_profile_source *b = &lm_builtin_profile_sources[i];
		if (strcmp(b->name, name) == 0) {
			snprintf(source, sizeof(source), "built-in %s", b->file);
			return lm_profile_parse(out, b->data, b->len, source);
		}
	}
	known[0] = '\0';
	for (i = 0; i < lm_builtin_profile_source_count && o < sizeof(known); i++) {
		o += (size_t)snprintf(known + o, sizeof(known) - o, "%s%s", i ? ", " : "",
		    lm_builtin_profile_sources[i].name);
		if (name != NULL && (d = lm_text_distance(name, lm_builtin_profile_sources[i].name, 2)) < best) {
			best = d;
			hint = lm_builtin_profile_sources[i].name;
		}
	}
	if (hint != NULL)
		return lm_error_set(LM_ENOTFOUND, "no built-in profile '%s'; did you mean '%s'? (built-in: %s; "
		    "a path to a JSON file works too)", name, hint, known);
	return lm_error_set(LM_ENOTFOUND, "no built-in profile '%s' (built-in: %s; a path to a JSON file works too)",
	    name == NULL ? "" : name, known);
}

int lm_profile_load_file(lm_profile **out, const char *path)
{
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	ssize_t n;
	int fd, rc, err;

	*out = NULL;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) < 0) {
		err = errno;
		return lm_error_set(err == ENOENT ? LM_ENOTFOUND : LM_EIO, "%s: cannot open the profile: %s",
		    path, strerror(err));
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return lm_error_set(LM_EINVALID, "%s: not a regular file (a profile is a JSON file)", path);
	}
	if (st.st_size > LM_PROFILE_MAX_BYTES) {
		close(fd);
		return lm_error_set(LM_EINVALID, "%s: the file is %lld bytes; a profile is at most %d bytes (1 MiB)",
		    path, (long long)st.st_size, LM_PROFILE_MAX_BYTES);
	}
	/* Read one byte more than allowed, so that a file that grew since fstat is still caught. */
	if ((buf = malloc(LM_PROFILE_MAX_BYTES + 1)) == NULL) {
		close(fd);
		return lm_error_nomem();
	}
	while (len < LM_PROFILE_MAX_BYTES + 1) {
		n = read(fd, buf + len, LM_PROFILE_MAX_BYTES + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = errno;
			close(fd);
			free(buf);
			return lm_error_set(LM_EIO, "%s: cannot read the profile: %s", path, strerror(err));
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	rc = lm_profile_parse(out, buf, len, path);
	free(buf);
	return rc;
}

int lm_profile_resolve(lm_profile **out, const char *name_or_path)
{
	size_t n;

	*out = NULL;
	if (name_or_path == NULL || name_or_path[0] == '\0')
		return lm_error_set(LM_EINVALID, "no profile given (a built-in name or a path to a JSON file)");
	n = strlen(name_or_path);
	if (strchr(name_or_path, '/') != NULL || (n > 5 && strcmp(name_or_path + n - 5, ".json") == 0))
		return lm_profile_load_file(out, name_or_path);
	return lm_profile_builtin(out, name_or_path);
}
