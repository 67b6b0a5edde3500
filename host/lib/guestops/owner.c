/* The owner record in the guest's lume-metal directory (the rule is in guest_owner.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "guest_bundle.h"
#include "guest_owner.h"
#include "json.h"
#include "path.h"
#include "text.h"

#define OWNER_FORMAT "lume-metal-owner"
#define OWNER_VERSION 1

static int is_identity(const char *s)
{
	return strlen(s) == 32 && strspn(s, "0123456789abcdef") == 32;
}

int lm_guest_owner_make(lm_guest_owner *out, const char *state_id, const char *state_dir)
{
	memset(out, 0, sizeof(*out));
	if (state_id[0] != '\0' && !is_identity(state_id))
		return lm_error_set(LM_EINVALID, "'%s' is not a state directory identity (32 hex digits)", state_id);
	snprintf(out->state_id, sizeof(out->state_id), "%s", state_id);
	if (lm_text_format(out->state_dir, sizeof(out->state_dir), "%s", state_dir) < 0)
		return lm_error_set(LM_EINVALID, "the state directory's path is longer than %zu bytes, the owner record's "
		    "limit", sizeof(out->state_dir) - 1);
	/* For people only: a name that does not fit (or none) is left out, never cut. */
	if (gethostname(out->host, sizeof(out->host)) != 0 || memchr(out->host, '\0', sizeof(out->host)) == NULL)
		out->host[0] = '\0';
	return 0;
}

int lm_guest_owner_render(const lm_guest_owner *o, char **out, size_t *len)
{
	cJSON *doc;
	char *text;

	*out = NULL;
	*len = 0;
	if (!is_identity(o->state_id))
		return lm_error_set(LM_EINVALID, "an owner record needs the state directory's identity");
	if ((doc = cJSON_CreateObject()) == NULL || cJSON_AddStringToObject(doc, "format", OWNER_FORMAT) == NULL ||
	    cJSON_AddNumberToObject(doc, "version", OWNER_VERSION) == NULL ||
	    cJSON_AddStringToObject(doc, "state_id", o->state_id) == NULL ||
	    cJSON_AddStringToObject(doc, "state_dir", o->state_dir) == NULL ||
	    cJSON_AddStringToObject(doc, "host", o->host) == NULL || (text = lm_json_print_canonical(doc)) == NULL) {
		cJSON_Delete(doc);
		return lm_error_nomem();
	}
	cJSON_Delete(doc);
	*out = text;
	*len = strlen(text);
	return 0;
}

/* A member that is text for people: a string of at most size - 1 bytes without control
 * characters (it is printed in messages as it is). */
static int text_member(const cJSON *doc, const char *key, int required, char *dst, size_t size)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(doc, key);
	const unsigned char *p;

	dst[0] = '\0';
	if (item == NULL && !required)
		return 0;
	if (!cJSON_IsString(item))
		return lm_error_set(LM_EINVALID, LM_GUEST_OWNER_FILE ": $.%s is not a string", key);
	for (p = (const unsigned char *)item->valuestring; *p != '\0'; p++)
		if (*p < 0x20 || *p == 0x7f)
			return lm_error_set(LM_EINVALID, LM_GUEST_OWNER_FILE ": $.%s holds a control character", key);
	if (lm_text_format(dst, size, "%s", item->valuestring) < 0)
		return lm_error_set(LM_EINVALID, LM_GUEST_OWNER_FILE ": $.%s is longer than %zu bytes", key, size - 1);
	return 0;
}

int lm_guest_owner_parse(const char *text, size_t len, lm_guest_owner *out)
{
	const cJSON *format, *version;
	cJSON *doc = NULL;
	int64_t v;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = lm_json_parse_object(&doc, text, len, LM_GUEST_OWNER_FILE, LM_GUEST_OWNER_MAX)) < 0)
		return rc;
	format = cJSON_GetObjectItemCaseSensitive(doc, "format");
	version = cJSON_GetObjectItemCaseSensitive(doc, "version");
	/* A later version may add members; the ones read here keep their meaning. */
	if (!cJSON_IsString(format) || strcmp(format->valuestring, OWNER_FORMAT) != 0)
		rc = lm_error_set(LM_EINVALID, LM_GUEST_OWNER_FILE ": $.format is not \"" OWNER_FORMAT "\"");
	else if (lm_json_int(version, 1, 1000000, &v) < 0)
		rc = lm_error_set(LM_EINVALID, LM_GUEST_OWNER_FILE ": $.version is not a version number");
	else if ((rc = text_member(doc, "state_id", 1, out->state_id, sizeof(out->state_id))) == 0 &&
	    !is_identity(out->state_id))
		rc = lm_error_set(LM_EINVALID, LM_GUEST_OWNER_FILE ": $.state_id is not 32 hex digits");
	if (rc == 0 && (rc = text_member(doc, "state_dir", 1, out->state_dir, sizeof(out->state_dir))) == 0)
		rc = text_member(doc, "host", 0, out->host, sizeof(out->host));
	cJSON_Delete(doc);
	if (rc < 0)
		memset(out, 0, sizeof(*out));
	return rc;
}

static int owner_path(char *buf, size_t len, const lm_guest_facts *facts)
{
	return lm_path_join_buf(buf, len, facts->home, LM_GUEST_BASE, LM_GUEST_OWNER_FILE, NULL);
}

int lm_guest_owner_read(lm_ssh *ssh, const lm_guest_facts *facts, lm_guest_owner_seen *seen)
{
	char path[PATH_MAX + 64];
	int rc;

	memset(seen, 0, sizeof(*seen));
	/* Nothing is written or removed through a link on the way (the install rule): what lies
	 * behind one is no record of this install directory's. */
	if ((rc = lm_guest_base_check(ssh, facts)) == LM_EREMOTE) {
		lm_error_clear();
		seen->state = LM_GUEST_OWNER_ABSENT;
		return 0;
	}
	if (rc < 0 || (rc = owner_path(path, sizeof(path), facts)) < 0)
		return rc;
	rc = lm_ssh_read_file(ssh, path, LM_GUEST_OWNER_MAX, &seen->raw, &seen->raw_len);
	if (rc == LM_ENOTFOUND) {
		lm_error_clear();
		seen->state = LM_GUEST_OWNER_ABSENT;
		return 0;
	}
	/* Anything the guest answered is what is there; the rest is this command's failure. */
	if (rc == LM_EREMOTE || rc == LM_ETOOLARGE || (rc == 0 && (rc = lm_guest_owner_parse(seen->raw, seen->raw_len,
	    &seen->owner)) == LM_EINVALID)) {
		seen->state = LM_GUEST_OWNER_UNREADABLE;
		lm_text_format_cut(seen->why, sizeof(seen->why), "%s", lm_error_last()->message);
		lm_error_clear();
		return 0;
	}
	if (rc == 0)
		seen->state = LM_GUEST_OWNER_FOUND;
	return rc;
}

void lm_guest_owner_seen_dispose(lm_guest_owner_seen *seen)
{
	lm_free(seen->raw);
	seen->raw = NULL;
	seen->raw_len = 0;
}

int lm_guest_owner_write_in(lm_ssh *ssh, const char *dir, const lm_guest_owner *o)
{
	char path[PATH_MAX + 64], *text = NULL;
	size_t len;
	int rc;

	if ((rc = lm_path_join_buf(path, sizeof(path), dir, LM_GUEST_OWNER_FILE, NULL)) < 0 ||
	    (rc = lm_guest_owner_render(o, &text, &len)) < 0)
		return rc;
	rc = lm_ssh_upload(ssh, text, len, path, 0644);
	free(text);
	return rc;
}

int lm_guest_owner_write(lm_ssh *ssh, const lm_guest_facts *facts, const lm_guest_owner *o)
{
	char dir[PATH_MAX];
	int rc;

	if ((rc = lm_path_join_buf(dir, sizeof(dir), facts->home, LM_GUEST_BASE, NULL)) < 0)
		return rc;
	return lm_guest_owner_write_in(ssh, dir, o);
}

int lm_guest_owner_restore(lm_ssh *ssh, const lm_guest_facts *facts, const lm_guest_owner_seen *seen)
{
	char path[PATH_MAX + 64];
	int rc;

	if ((rc = owner_path(path, sizeof(path), facts)) < 0)
		return rc;
	if (seen->state == LM_GUEST_OWNER_ABSENT)
		return lm_ssh_remove(ssh, path);
	if (seen->raw == NULL) /* not a regular file: nothing of it was replaced (the upload fails over it) */
		return 0;
	return lm_ssh_upload(ssh, seen->raw, seen->raw_len, path, 0644);
}

void lm_guest_owner_describe(const lm_guest_owner *o, char *buf, size_t len)
{
	lm_text_format_cut(buf, len, "%s (%s%s%s%s%s)", o->state_dir, o->state_id[0] ? "identity " : "no identity yet",
	    o->state_id, o->host[0] ? ", host " : "", o->host, "");
}

void lm_guest_owner_seen_describe(const lm_guest_owner_seen *seen, char *buf, size_t len)
{
	if (seen->state == LM_GUEST_OWNER_FOUND)
		lm_guest_owner_describe(&seen->owner, buf, len);
	else if (seen->state == LM_GUEST_OWNER_UNREADABLE)
		lm_text_format_cut(buf, len, "an owner record that cannot be read (%s)", seen->why);
	else
		lm_text_format_cut(buf, len, "no owner recorded (installed by an older lume-metal)");
}

int lm_guest_owner_judge(const lm_guest_owner_seen *seen, const lm_guest_owner *self, int installed, int take_over,
    const char *vm, const char *refused, lm_guest_owner_verdict *out)
{
	char theirs[1400], ours[1400];

	*out = LM_GUEST_OWNER_OURS;
	if (seen->state == LM_GUEST_OWNER_ABSENT) {
		*out = installed ? LM_GUEST_OWNER_ADOPT : LM_GUEST_OWNER_OURS;
		return 0;
	}
	if (seen->state == LM_GUEST_OWNER_FOUND && self->state_id[0] != '\0' &&
	    strcmp(seen->owner.state_id, self->state_id) == 0)
		return 0;
	if (take_over) {
		*out = LM_GUEST_OWNER_TAKE;
		return 0;
	}
	lm_guest_owner_describe(self, ours, sizeof(ours));
	if (seen->state == LM_GUEST_OWNER_UNREADABLE)
		return lm_error_set(LM_EOTHERSTATE, "%s: the guest's ~/%s/%s is no owner record lume-metal can read (%s), "
		    "so which state directory installed the files there is unknown; this one is %s. %s", vm, LM_GUEST_BASE,
		    LM_GUEST_OWNER_FILE, seen->why, ours, refused);
	lm_guest_owner_describe(&seen->owner, theirs, sizeof(theirs));
	return lm_error_set(LM_EOTHERSTATE, "%s: its guest files were installed from another state directory, %s; "
	    "this one is %s. %s", vm, theirs, ours, refused);
}
