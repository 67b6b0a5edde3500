/* A guest bundle on the host: its manifest, and its files checked against it before upload. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guest_bundle.h"
#include "path.h"
#include "fs.h"
#include "json.h"
#include "sha256.h"
#include "text.h"

#define LM_MANIFEST_MAX (256 * 1024)
#define LM_BUNDLE_FILE_MAX (64 * 1024 * 1024)

static const char *platform_for(const lm_guest_facts *facts, char *buf, size_t len)
{
	if (strcmp(facts->os, "Darwin") == 0)
		return "darwin-universal"; /* one universal bundle serves arm64 and x86_64 guests */
	snprintf(buf, len, "%s-%s", strcmp(facts->os, "Linux") == 0 ? "linux" : facts->os, facts->arch);
	return buf;
}

/* A manifest file name must stay inside the bundle and inside the guest's directory. */
static int safe_name(const char *name)
{
	const char *p;

	if (name[0] == '\0' || name[0] == '/' || strlen(name) >= 256)
		return 0;
	for (p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    *p == '.' || *p == '_' || *p == '-' || *p == '/'))
			return 0;
	return strstr(name, "..") == NULL && strstr(name, "//") == NULL;
}

static int copy_field(const cJSON *obj, const char *key, char *out, size_t len, const char *path)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (!cJSON_IsString(v) || v->valuestring[0] == '\0' || strlen(v->valuestring) >= len)
		return lm_error_set(LM_EINVALID, "%s: $.%s: expected a non-empty string", path, key);
	memcpy(out, v->valuestring, strlen(v->valuestring) + 1);
	return 0;
}

int lm_bundle_parse_manifest(lm_bundle *b, const char *path)
{
	cJSON *doc;
	const cJSON *files, *f, *v;
	int64_t num;
	int rc = 0;
	size_t i = 0;

	if (lm_json_parse(&doc, b->manifest, b->manifest_len, NULL, 0) == LM_ENOMEM)
		return LM_ENOMEM;
	if (doc == NULL || !cJSON_IsObject(doc)) {
		cJSON_Delete(doc);
		return lm_error_set(LM_EINVALID, "%s: not a JSON object: rebuild the bundle", path);
	}
	v = cJSON_GetObjectItemCaseSensitive(doc, "format");
	if (!cJSON_IsString(v) || strcmp(v->valuestring, "lume-metal-bundle") != 0 ||
	    lm_json_int(cJSON_GetObjectItemCaseSensitive(doc, "version"), 1, 1, &num) != 0) {
		cJSON_Delete(doc);
		return lm_error_set(LM_EINVALID, "%s: not a lume-metal bundle manifest of version 1", path);
	}
	if ((rc = copy_field(doc, "bundle_id", b->id, sizeof(b->id), path)) < 0 ||
	    (rc = copy_field(doc, "platform", b->platform, sizeof(b->platform), path)) < 0 ||
	    (rc = copy_field(doc, "os", b->os, sizeof(b->os), path)) < 0 ||
	    (rc = copy_field(doc, "injection_variable", b->injection, sizeof(b->injection), path)) < 0 ||
	    (rc = copy_field(doc, "shim", b->shim, sizeof(b->shim), path)) < 0 ||
	    (rc = copy_field(doc, "probe", b->probe, sizeof(b->probe), path)) < 0)
		goto out;
	if (!safe_name(b->id) || strchr(b->id, '/') != NULL) {
		rc = lm_error_set(LM_EINVALID, "%s: $.bundle_id: unsafe directory name '%s'", path, b->id);
		goto out;
	}
	files = cJSON_GetObjectItemCaseSensitive(doc, "files");
	if (!cJSON_IsArray(files)) {
		rc = lm_error_set(LM_EINVALID, "%s: $.files: expected an array", path);
		goto out;
	}
	cJSON_ArrayForEach(f, files) {
		lm_bundle_file *bf;
		const cJSON *hash = cJSON_GetObjectItemCaseSensitive(f, "sha256");
		const cJSON *size = cJSON_GetObjectItemCaseSensitive(f, "size");
		const cJSON *mode = cJSON_GetObjectItemCaseSensitive(f, "mode");

		if (i >= LM_BUNDLE_MAX_FILES) {
			rc = lm_error_set(LM_EINVALID, "%s: $.files: more than %d files", path, LM_BUNDLE_MAX_FILES);
			goto out;
		}
		bf = &b->files[i];
		if ((rc = copy_field(f, "name", bf->name, sizeof(bf->name), path)) < 0)
			goto out;
		if (!safe_name(bf->name)) {
			rc = lm_error_set(LM_EINVALID, "%s: $.files[%zu].name: unsafe file name '%s'", path, i, bf->name);
			goto out;
		}
		if (!cJSON_IsString(hash) || strlen(hash->valuestring) != 64 ||
		    strspn(hash->valuestring, "0123456789abcdef") != 64 ||
		    lm_json_int(size, 0, LM_BUNDLE_FILE_MAX, &num) != 0 || !cJSON_IsString(mode)) {
			rc = lm_error_set(LM_EINVALID, "%s: $.files[%zu]: expected sha256 (64 hex), size (a whole number of "
			    "bytes, at most %d) and mode", path, i, LM_BUNDLE_FILE_MAX);
			goto out;
		}
		memcpy(bf->sha256, hash->valuestring, 65);
		bf->size = (uint64_t)num;
		bf->mode = (int)strtol(mode->valuestring, NULL, 8) & 0755; /* owner-writable only */
		i++;
	}
	b->nfiles = i;
out:
	cJSON_Delete(doc);
	return rc;
}

/* The manifest in b->dir read and parsed; `what` names the directory in the error of a missing
 * manifest. */
static int bundle_load(lm_bundle *b, const char *what)
{
	char path[PATH_MAX + 32];
	int rc;

	if ((rc = lm_path_join_buf(path, sizeof(path), b->dir, "manifest.json", NULL)) < 0)
		return rc;
	if ((rc = lm_fs_read_file(path, LM_MANIFEST_MAX, &b->manifest, &b->manifest_len)) < 0) {
		if (rc == LM_ENOTFOUND)
			rc = lm_error_set(LM_ENOBUNDLE, "%s", what);
		return rc;
	}
	return lm_bundle_parse_manifest(b, path);
}

int lm_bundle_open(lm_bundle **out, lm_context *ctx, const lm_guest_facts *facts)
{
	const char *given = lm_context_options(ctx)->bundle_dir;
	char platform[2 * LM_GUEST_FIELD_MAX + 8], *data = NULL, what[PATH_MAX + 128];
	lm_bundle *b;
	int rc;

	*out = NULL;
	if ((b = calloc(1, sizeof(*b))) == NULL)
		return lm_error_nomem();
	if (given != NULL) {
		if (lm_text_format(b->dir, sizeof(b->dir), "%s", given) < 0) {
			rc = lm_error_set(LM_EINVALID, "the bundle directory is longer than %zu bytes (the limit)",
			    sizeof(b->dir) - 1);
			goto fail;
		}
	} else {
		if ((rc = lm_paths_data_dir(&data)) < 0)
			goto fail;
		if ((rc = lm_path_join_buf(b->dir, sizeof(b->dir), data, "bundles",
		    platform_for(facts, platform, sizeof(platform)), NULL)) < 0)
			goto fail;
	}
	if (given != NULL)
		lm_text_format_cut(what, sizeof(what), "%s is not a guest bundle (no manifest.json in it)", b->dir);
	else
		lm_text_format_cut(what, sizeof(what), "no guest bundle for %s %s at %s (the installation's bundles)",
		    facts->os, facts->arch, b->dir);
	if ((rc = bundle_load(b, what)) < 0)
		goto fail;
	if (facts->os[0] != '\0' && strcmp(b->os, facts->os) != 0) {
		rc = lm_error_set(LM_EINVALID, "bundle %s is for %s guests, but this guest runs %s", b->dir, b->os,
		    facts->os);
		goto fail;
	}
	free(data);
	*out = b;
	return 0;
fail:
	free(data);
	lm_bundle_free(b);
	return rc;
}

int lm_bundle_open_dir(lm_bundle **out, const char *dir)
{
	char what[PATH_MAX + 64];
	lm_bundle *b;
	int rc;

	*out = NULL;
	if ((b = calloc(1, sizeof(*b))) == NULL)
		return lm_error_nomem();
	if (lm_text_format(b->dir, sizeof(b->dir), "%s", dir) < 0) {
		lm_bundle_free(b);
		return lm_error_set(LM_EINVALID, "the bundle directory is longer than %zu bytes (the limit)",
		    sizeof(b->dir) - 1);
	}
	lm_text_format_cut(what, sizeof(what), "%s is not a guest bundle (no manifest.json in it)", dir);
	if ((rc = bundle_load(b, what)) < 0) {
		lm_bundle_free(b);
		return rc;
	}
	*out = b;
	return 0;
}

int lm_bundle_read(const lm_bundle *b, const lm_bundle_file *f, void **data, size_t *len)
{
	char path[PATH_MAX], hex[65];
	uint8_t digest[32];
	char *buf;
	int rc;

	if ((rc = lm_path_join_buf(path, sizeof(path), b->dir, f->name, NULL)) < 0)
		return rc;
	if ((rc = lm_fs_read_file(path, LM_BUNDLE_FILE_MAX, &buf, len)) < 0)
		return rc;
	lm_sha256(buf, *len, digest);
	lm_sha256_hex(digest, hex);
	if (strcmp(hex, f->sha256) != 0 || *len != f->size) {
		free(buf);
		return lm_error_set(LM_ECORRUPT, "bundle file %s does not match its manifest (SHA-256 %s, "
		    "manifest says %s): the bundle is damaged or was modified; rebuild or reinstall it",
		    path, hex, f->sha256);
	}
	*data = buf;
	return 0;
}

int lm_bundle_check(lm_context *ctx)
{
	lm_guest_facts any;
	lm_bundle *b = NULL;
	void *data = NULL;
	size_t i, len;
	int rc;

	if (lm_context_options(ctx)->bundle_dir == NULL)
		return 0;
	memset(&any, 0, sizeof(any)); /* no guest yet: its OS is checked once it is known */
	if ((rc = lm_bundle_open(&b, ctx, &any)) < 0)
		return rc;
	for (i = 0; i < b->nfiles && rc == 0; i++) {
		if ((rc = lm_bundle_read(b, &b->files[i], &data, &len)) == 0)
			free(data);
	}
	lm_bundle_free(b);
	return rc;
}

int lm_bundle_open_if_any(lm_bundle **out, lm_context *ctx, const lm_guest_facts *facts)
{
	int rc = lm_bundle_open(out, ctx, facts);

	if (rc == LM_ENOMEM)
		return rc;
	if (rc < 0)
		lm_error_clear();
	return 0;
}

void lm_bundle_free(lm_bundle *b)
{
	if (b == NULL)
		return;
	free(b->manifest);
	free(b);
}
