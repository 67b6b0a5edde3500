/* dladdr() and Dl_info are GNU extensions on glibc. */
#define _GNU_SOURCE
#include "context_internal.h"
#include "path.h"
#include "text.h"

#include <dlfcn.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int lm_paths_home(const char **out)
{
	const char *home = getenv("HOME");
	struct passwd *pw;

	if (home == NULL || home[0] == '\0') {
		pw = getpwuid(getuid());
		home = pw != NULL ? pw->pw_dir : NULL;
	}
	if (home == NULL || home[0] != '/')
		return lm_error_set(LM_ENOTFOUND, "cannot tell the home directory: HOME is not set and the password database has none");
	*out = home;
	return 0;
}

void lm_paths_user_name(long uid, char *buf, size_t cap)
{
	struct passwd pw, *res = NULL;
	char tmp[4096];

	if (uid < 0)
		snprintf(buf, cap, "an unknown user");
	/* A name too long for buf is shown by its uid: a cut name could equal another user's. */
	else if (getpwuid_r((uid_t)uid, &pw, tmp, sizeof(tmp), &res) == 0 && res != NULL &&
	    lm_text_format(buf, cap, "%s", res->pw_name) == 0)
		return;
	else
		snprintf(buf, cap, "uid %ld", uid);
}

int lm_paths_state_dir(char **out, const char *explicit_dir)
{
	const char *home = NULL;
	int rc;

	*out = NULL;
	if (explicit_dir != NULL && explicit_dir[0] != '\0')
		return (*out = strdup(explicit_dir)) == NULL ? lm_error_nomem() : 0;
#ifdef __APPLE__
	if ((rc = lm_paths_home(&home)) < 0)
		return rc;
	return lm_path_join(out, home, "Library/Application Support/lume-metal", NULL);
#else
	const char *xdg = getenv("XDG_STATE_HOME");

	if (xdg != NULL && xdg[0] == '/')
		return lm_path_join(out, xdg, "lume-metal", NULL);
	if ((rc = lm_paths_home(&home)) < 0)
		return rc;
	return lm_path_join(out, home, ".local/state/lume-metal", NULL);
#endif
}

int lm_paths_data_dir(char **out)
{
#ifdef LM_TEST_HOOKS
	/* The tests' static library, linked into test programs: the build tree's data. */
	*out = strdup(LM_BUILD_DATADIR);
	return *out == NULL ? lm_error_nomem() : 0;
#else
	char lib[PATH_MAX];
	char *slash;
	Dl_info info;

	*out = NULL;
	/* Where this library was loaded from, not where the program is (inside an app bundle, the
	 * program's folder belongs to the app). */
	if (dladdr((void *)&lm_paths_data_dir, &info) != 0 && info.dli_fname != NULL &&
	    realpath(info.dli_fname, lib) != NULL && (slash = strrchr(lib, '/')) != NULL) {
		*slash = '\0';
		return lm_path_join(out, lib, LM_LIBDIR_TO_DATADIR, NULL);
	}
	*out = strdup(LM_INSTALL_DATADIR);
	return *out == NULL ? lm_error_nomem() : 0;
#endif
}
