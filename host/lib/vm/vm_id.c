/* A VM's identity, read from its manager's own configuration, so that what lume-metal remembers
 * about a VM (its host-key pin) follows the VM and not its name (docs/security.md):
 *   Lume  LOCATION/NAME/config.json in one of Lume's storage locations (`lume config storage
 *         list`, GET /lume/config/locations; ~/.lume by default): `macAddress` and
 *         `machineIdentifier` (base64 data), both new for every clone (trycua/cua libs/lume,
 *         VMConfig); neither is in the API's VM object;
 *   Tart  TART_HOME/vms/NAME/config.json: `ecid` (the machine identifier's data, base64) alone.
 *         `tart clone` copies config.json and keeps the ecid; it changes the MAC only when
 *         another local VM has it, and `tart run` changes a MAC that a running VM has
 *         (Commands/Clone.swift, VMDirectory.swift, Commands/Run.swift): the MAC says which
 *         VMs happened to exist, not which VM this is;
 *   UTM   NAME.utm/config.plist: `Information.UUID`, new for every `utmctl clone`;
 *   none  nothing to read: the VM is only an address.
 * The identity is the SHA-256 of the manager's name and those fields: fixed-size, comparable,
 * and it does not spread the machine identifier into lume-metal's files. */
#include "vm_internal.h"
#include "file.h"
#include "json.h"
#include "sha256.h"
#include "text.h"

#include <errno.h>
#include <stdarg.h>
#include <plist/plist.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LM_VM_CONFIG_MAX (1u << 20)

static void set_id(lm_vm_info *info, const char *kind, const char *a, const char *b)
{
	lm_sha256_ctx c;
	uint8_t digest[32];
	char hex[65];

	lm_sha256_init(&c);
	lm_sha256_update(&c, kind, strlen(kind) + 1);
	lm_sha256_update(&c, a, strlen(a) + 1);
	lm_sha256_update(&c, b, strlen(b) + 1);
	lm_sha256_final(&c, digest);
	lm_sha256_hex(digest, hex);
	snprintf(info->vm_id, sizeof(info->vm_id), "sha256:%s", hex);
	info->vm_id_why[0] = '\0';
}

static void why(lm_vm_info *info, const char *fmt, ...) LM_PRINTF(2, 3);
static void why(lm_vm_info *info, const char *fmt, ...)
{
	va_list ap;

	info->vm_id[0] = '\0';
	va_start(ap, fmt);
	vsnprintf(info->vm_id_why, sizeof(info->vm_id_why), fmt, ap); /* a reason, cut if long */
	va_end(ap);
}

static const char *json_text(const cJSON *doc, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, key);

	return cJSON_IsString(v) && v->valuestring[0] != '\0' ? v->valuestring : NULL;
}

/* One config.json: 1 read (identity set), 0 no such file, -1 unreadable (reason set), LM_ENOMEM.
 * mac_key NULL: the identity is id_key's alone. */
static int from_json(lm_vm_info *info, const char *kind, const char *path, const char *mac_key, const char *id_key)
{
	char *data = NULL;
	size_t len;
	cJSON *doc;
	const char *mac, *id;
	int rc = lm_fs_read_file(path, LM_VM_CONFIG_MAX, &data, &len);

	if (rc == LM_ENOTFOUND) {
		lm_error_clear();
		return 0;
	}
	if (rc == LM_ENOMEM)
		return rc;
	if (rc < 0) {
		why(info, "%s cannot be read: %s", path, lm_error_last()->message);
		lm_error_clear();
		return -1;
	}
	rc = lm_json_parse(&doc, data, len, NULL, 0);
	free(data);
	if (rc == LM_ENOMEM)
		return rc;
	mac = mac_key != NULL ? json_text(doc, mac_key) : "";
	id = json_text(doc, id_key);
	if (mac == NULL || id == NULL) {
		if (mac_key != NULL)
			why(info, "%s has no %s and %s strings", path, mac_key, id_key);
		else
			why(info, "%s has no %s string", path, id_key);
		cJSON_Delete(doc);
		return -1;
	}
	set_id(info, kind, mac, id);
	cJSON_Delete(doc);
	return 1;
}

static int lume_id(lm_vm_manager *vmm, const char *name, lm_vm_info *info)
{
	int cli = strcmp(info->manager, "lume-cli") == 0;
	char *const *dirs = NULL;
	char *path;
	size_t i;
	int rc;

	/* Lume's storage locations, from the backend that answers for the VM: the CLI's `lume config
	 * storage list`, the API's GET /lume/config/locations. */
	if ((rc = cli ? lm_vm_cli_storage(vmm, &dirs) : lm_vm_api_storage(vmm, &dirs)) < 0)
		return rc;
	for (i = 0; dirs != NULL && dirs[i] != NULL; i++) {
		if ((rc = lm_path_join(&path, dirs[i], name, "config.json", NULL)) < 0) {
			if (rc == LM_ENOMEM)
				return rc;
			why(info, "%s", lm_error_last()->message);
			lm_error_clear();
			return 0;
		}
		rc = from_json(info, "lume", path, "macAddress", "machineIdentifier");
		free(path);
		if (rc != 0)
			return rc == LM_ENOMEM ? rc : 0;
	}
	if (vmm->locations_why[0] != '\0')
		why(info, "no config.json for %s in ~/.lume, and Lume did not list its other storage locations: %s", name,
		    vmm->locations_why);
	else
		why(info, "no config.json for %s in Lume's storage locations (%s)", name,
		    cli ? "`lume config storage list`" : "GET /lume/config/locations");
	return 0;
}

static int utm_id(lm_vm_manager *vmm, const char *name, lm_vm_info *info)
{
	char *path = NULL, *uuid = NULL;
	void *root = NULL;
	plist_t inf, node;
	int rc;

	if ((rc = lm_vm_utm_config(vmm, name, &path, &root)) == LM_ENOMEM)
		return rc;
	if (rc < 0 || path == NULL) {
		why(info, "no config.plist for %s in UTM's Documents (%s)", name, vmm->utm_documents);
		lm_error_clear();
		return 0;
	}
	inf = plist_dict_get_item((plist_t)root, "Information");
	node = inf != NULL && plist_get_node_type(inf) == PLIST_DICT ? plist_dict_get_item(inf, "UUID") : NULL;
	if (node != NULL && plist_get_node_type(node) == PLIST_STRING)
		plist_get_string_val(node, &uuid);
	if (uuid != NULL && uuid[0] != '\0')
		set_id(info, "utm", uuid, "");
	else
		why(info, "%s has no Information.UUID", path);
	free(uuid);
	free(path);
	plist_free((plist_t)root);
	return 0;
}

int lm_vm_id_read(lm_vm_manager *vmm, const char *name, lm_vm_info *info)
{
	char *path;
	int rc;

	if (strcmp(info->manager, "lume-api") == 0 || strcmp(info->manager, "lume-cli") == 0)
		return lume_id(vmm, name, info);
	if (strcmp(info->manager, "tart") == 0) {
		if ((rc = lm_path_join(&path, vmm->tart_home, "vms", name, "config.json", NULL)) < 0) {
			if (rc == LM_ENOMEM)
				return rc;
			why(info, "%s", lm_error_last()->message);
			lm_error_clear();
			return 0;
		}
		if ((rc = from_json(info, "tart", path, NULL, "ecid")) == 0)
			why(info, "%s does not exist", path);
		free(path);
		return rc == LM_ENOMEM ? rc : 0;
	}
	if (strcmp(info->manager, "utm") == 0)
		return utm_id(vmm, name, info);
	why(info, "no VM manager runs this VM (%s): lume-metal knows only its address", info->manager);
	return 0;
}
