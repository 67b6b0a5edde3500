/* Internal (guestops): the guest bundle -- read and checked on the host (bundle.c), installed and
 * verified at its place (guest.c, place.c: a guest's home or `local install`'s directory) -- and
 * the lume-metal directory it lives in, written through no link and emptied only of what a
 * manifest names (guest_files.c). */
#ifndef LM_GUEST_BUNDLE_H
#define LM_GUEST_BUNDLE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "lume-metal/flow.h"
#include "lume-metal/sys/ssh.h"
#include "buf.h"
#include "context_internal.h"
#include "guest_owner.h"
#include "ssh_files.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

/* Where the guest keeps its files, relative to its home. */
#define LM_GUEST_BASE ".local/share/lume-metal"

/* ---- bundle.c: a guest bundle on the host ---- */

#define LM_BUNDLE_MAX_FILES 32
typedef struct {
	char name[256];      /* relative path inside the bundle: "metal-capabilities", "profiles/x.json" */
	char sha256[65];
	uint64_t size;
	int mode;
} lm_bundle_file;

typedef struct {
	char dir[PATH_MAX];
	char id[LM_BUNDLE_ID_MAX]; /* "0.1.0-0123456789ab": the guest directory's name */
	char platform[64];
	char os[32];             /* "Darwin", "Linux" */
	char injection[64];      /* "DYLD_INSERT_LIBRARIES", "LD_PRELOAD" */
	char shim[256];
	char probe[256];
	size_t nfiles;
	lm_bundle_file files[LM_BUNDLE_MAX_FILES];
	char *manifest;          /* manifest.json's bytes, uploaded last */
	size_t manifest_len;
} lm_bundle;

/* The bundle for a guest: ctx's bundle_dir when set, else the installed one for facts->os/arch. */
int lm_bundle_open(lm_bundle **out, lm_context *ctx, const lm_guest_facts *facts);
/* The same, for undoing: *out NULL (and no error) when this installation has no bundle for the guest;
 * only running out of memory fails. */
int lm_bundle_open_if_any(lm_bundle **out, lm_context *ctx, const lm_guest_facts *facts);
/* b->manifest's bytes into b's fields and files; `path` names them in messages. Also reads the
 * manifests found in a guest (guest_files.c). */
int lm_bundle_parse_manifest(lm_bundle *b, const char *path);
/* The bundle in `dir` (an installed copy: `local install`'s place), whatever its OS. */
int lm_bundle_open_dir(lm_bundle **out, const char *dir);
/* Read one file, checking size and SHA-256 against the manifest. */
int lm_bundle_read(const lm_bundle *b, const lm_bundle_file *f, void **data, size_t *len);
void lm_bundle_free(lm_bundle *b);
/* ctx's bundle_dir, when set: its manifest and every file checked, before any VM is touched. */
int lm_bundle_check(lm_context *ctx);

/* ---- guest.c: the bundle installed in one place, over the session beneath ----
 *
 * One installer for both places a bundle lives: a guest's ~/.local/share/lume-metal over SSH, and
 * this machine's PREFIX/lib/lume-metal (`local install`) over ssh/'s local transport, which serves
 * the same calls here (ssh_local.h). The place says where, and what belongs to a guest's home only:
 * the parents on the way checked and the ones the first install made noted, the owner record. */
typedef struct {
	char dir[PATH_MAX];   /* the install directory (absolute) */
	char home[PATH_MAX];  /* a guest's home, when dir is its LM_GUEST_BASE; "" for a place the caller
	                         checked itself (local/image.c: owner-writable real directories) */
	char shown[PATH_MAX]; /* dir as messages name it: "~/.local/share/lume-metal", or dir */
	int bsd_mv;           /* the place's mv is BSD's (-h; Darwin), not GNU's (-T) */
	const char *keep;     /* an entry of the place's own the removal leaves unsaid (".lock"), or NULL */
} lm_install_place;

/* place.c. A guest's: facts->home's LM_GUEST_BASE, as the guest's OS moves links. */
int lm_install_place_guest(lm_install_place *p, const lm_guest_facts *facts);
/* Any other absolute directory of a machine running os ("Darwin", "Linux"). */
int lm_install_place_dir(lm_install_place *p, const char *dir, const char *os, const char *keep);

/* Installed at the place and every file matches -- a regular file with the manifest's mode and
 * SHA-256, the manifest itself too? (1/0). When not, why says what is there instead ("... is a
 * FIFO, not a file", a link on the way); an error (no memory, the connection lost, a timeout) is
 * returned, its message in why too. */
int lm_bundle_verify_at(lm_ssh *ssh, const lm_install_place *p, const lm_bundle *b, int *ok, char *why,
    size_t why_len);
/* What an install did. */
typedef struct {
	int uploaded;    /* the bundle's files written and read back (the manifest included) */
	int replaced;    /* the bundle's name held a copy that did not verify: removed by its manifest first */
	size_t removed;  /* other entries removed afterwards: older bundles, what interrupted installs left */
} lm_install_result;
/* Install atomically: a staging directory of this run's own, every file uploaded and read back
 * (the manifest last), renamed to the bundle's name, `current` switched with one rename, then
 * every older version and leftover removed by its manifest (guest_files.c). A copy at the
 * bundle's name is removed by its manifest before the rename; anything else left in it (a file of
 * someone else's) stops the install with `current` untouched. owner (may be NULL: not a guest's
 * home) is recorded once the install directory exists: an install interrupted at any point names
 * its state directory (guest_owner.h). A failure removes the staging directory. */
int lm_bundle_install_at(lm_ssh *ssh, const lm_install_place *p, const lm_bundle *b, const lm_guest_owner *owner,
    lm_install_result *out);
/* Their guest forms (enable, status, doctor): the place is facts' home. *uploaded counts the
 * bundle's files. */
int lm_guest_bundle_verify(lm_ssh *ssh, const lm_guest_facts *facts, const lm_bundle *b, int *ok, char *why,
    size_t why_len);
int lm_guest_bundle_install(lm_ssh *ssh, const lm_guest_facts *facts, const lm_bundle *b, const lm_guest_owner *owner,
    int *uploaded);
/* The installer's two shell commands (the same under zsh and sh): a fresh staging directory; the
 * staged bundle into place, `current` switched. */
int lm_guest_install_prepare_command(const lm_install_place *p, const char *stage, char **out);
int lm_guest_install_switch_command(const lm_install_place *p, const lm_bundle *b, const char *stage, char **out);

/* ---- guest_files.c: the guest's lume-metal directory, written and removed with care ----
 *
 * Threat: the guest's user may have made ~/.local/share/lume-metal (or ~/.local, or
 * ~/.local/share) a link to a folder of their own, put a file at its name, or files of their own
 * inside it. Rule: lume-metal writes only through real directories below the home (no link is
 * followed on the way: what it installs, and later removes, is where it says); it removes only
 * the files a lume-metal manifest names (and the upload's temporary names for them), the links it
 * makes (`current`), and then its directories when they are empty. Everything else is left, and
 * said. */

/* One component of the install path, by its kind: 0 for absent or a directory; else
 * LM_EREMOTE naming `shown` ("~/.local") and what to do. */
int lm_guest_base_refuse(const char *shown, lm_ssh_kind kind);
/* Every component from ~/.local to ~/.local/share/lume-metal checked (lm_guest_base_refuse). */
int lm_guest_base_check(lm_ssh *ssh, const lm_guest_facts *facts);
/* The same for a place: a guest's home's components; for another place, that its directory is
 * absent or a directory (the caller checked the rest). */
int lm_install_base_check(lm_ssh *ssh, const lm_install_place *p);
/* What a removal did: counts, and every entry it left with why ("~/.local/share/lume-metal/x
 * (not lume-metal's)"), "; "-separated. */
typedef struct {
	size_t files, links, dirs, nleft;
	size_t entries; /* entries of the install directory itself removed whole */
	const char *shown; /* the directory as "left" names it (set by the removal; "~/.local/share/lume-metal") */
	lm_buf left;
} lm_guest_removal;
void lm_guest_removal_init(lm_guest_removal *r);
void lm_guest_removal_dispose(lm_guest_removal *r);
/* "removed 5 files, 1 link and 3 directories of ~/.local/share/lume-metal; left: ..." */
void lm_guest_removal_describe(const lm_guest_removal *r, char *buf, size_t len);
/* Which entries of ~/.local/share/lume-metal lume-metal may have made: 'l' a link of its own
 * (current, .current.new: removed when a link), 'a' the activation record directories, 'r' the
 * re-signed copies (resign.c), 'p' the note of the parents the first install made, 'o' the owner
 * record (guest_owner.h) and 't' its upload's temporary name, when regular files, 'd' a
 * directory that is a bundle or a staging directory when a lume-metal manifest (or, for a staging
 * directory or the local bundle's id, the local bundle's) names its files, 0 anything else (left). */
int lm_guest_entry_class(const char *name, lm_ssh_kind kind);
/* A name the shim gives an activation record (<pid>.json) or its temporary file (.<pid>.tmp)? */
int lm_guest_is_record(const char *entry);
/* The upload's temporary name for a file named `base` (".<base>.lm-<16 hex>", sftp.c)? */
int lm_guest_is_upload_temp(const char *entry, const char *base);
/* Remove what lume-metal put in the guest's directory, except the entry named keep (and
 * `current` and the owner record) when keep is not NULL; local (may be NULL) names the files of a
 * staging directory whose manifest was not uploaded yet. The owner record goes last, with the
 * note of the parents (neither is counted). What was left is no error: it is in r. */
int lm_guest_files_remove(lm_ssh *ssh, const lm_guest_facts *facts, const lm_bundle *local, const char *keep,
    lm_guest_removal *r);
/* The same at any place (p->keep left unsaid; parents only in a guest's home). */
int lm_install_files_remove(lm_ssh *ssh, const lm_install_place *p, const lm_bundle *local, const char *keep,
    lm_guest_removal *r);
/* One bundle or staging directory of the install directory, by its manifest (or local's). */
int lm_install_entry_remove(lm_ssh *ssh, const lm_install_place *p, const lm_bundle *local, const char *name,
    lm_guest_removal *r);
/* The whole directory: lm_guest_files_remove, described into said (may be NULL). Returns how
 * many entries were left (0: everything of lume-metal's is gone and nothing else was there), or
 * an error. */
int lm_guest_remove_all(lm_ssh *ssh, const lm_guest_facts *facts, const lm_bundle *local, char *said,
    size_t said_len);

/* In the install directory: which of ~/.local and ~/.local/share the first install made (one a
 * line), so that rollback leaves the home as it was before the first enable. */
#define LM_GUEST_PARENTS_FILE ".parents-made"

/* machine.c: a bundle used where it is installed (`local`). */
/* Every file of b read and checked against its manifest (size, SHA-256). */
int lm_bundle_verify_in_place(const lm_bundle *b);

#endif
