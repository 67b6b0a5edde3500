/* Where a bundle is installed (guest_bundle.h, lm_install_place): a guest's
 * ~/.local/share/lume-metal, or a directory of this machine's that `local install` checked. Its
 * own file: the installer (guest.c) and the removal (guest_files.c) both start from it. */
#include <string.h>

#include "guest_bundle.h"
#include "path.h"
#include "text.h"

static int place_fill(lm_install_place *p, const char *home, const char *dir, const char *shown, const char *os,
    const char *keep)
{
	memset(p, 0, sizeof(*p));
	if (dir[0] != '/')
		return lm_error_set(LM_EINVALID, "the install directory '%s' is not an absolute path", dir);
	if (lm_text_format(p->dir, sizeof(p->dir), "%s", dir) < 0 || lm_text_format(p->home, sizeof(p->home), "%s", home) < 0 ||
	    lm_text_format(p->shown, sizeof(p->shown), "%s", shown) < 0)
		return lm_error_set(LM_EINVALID, "the install directory %s is longer than %zu bytes", dir, sizeof(p->dir) - 1);
	/* BSD mv (macOS) moves a link over a link with -h, GNU mv with -T. */
	p->bsd_mv = strcmp(os, "Darwin") == 0;
	p->keep = keep;
	return 0;
}

int lm_install_place_guest(lm_install_place *p, const lm_guest_facts *facts)
{
	char dir[PATH_MAX];
	int rc;

	if ((rc = lm_path_join_buf(dir, sizeof(dir), facts->home, LM_GUEST_BASE, NULL)) < 0)
		return rc;
	return place_fill(p, facts->home, dir, "~/" LM_GUEST_BASE, facts->os, NULL);
}

int lm_install_place_dir(lm_install_place *p, const char *dir, const char *os, const char *keep)
{
	return place_fill(p, "", dir, dir, os, keep);
}
