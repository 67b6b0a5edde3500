/* Where profiles come from: the built-in ones (the JSON files in common/profiles, embedded at build time)
 * and files given by the user. */
#include "profile_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error_internal.h"
#include "file.h"
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
	char *buf = NULL;
	size_t len = 0;
	int rc;

	*out = NULL;
	if ((rc = lm_fs_read_file(path, LM_PROFILE_MAX_BYTES, &buf, &len)) < 0)
		return lm_error_prefix("profile ");
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
