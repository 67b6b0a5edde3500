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
 * and it does not spread the machine identifier into lume-metal's files. Each backend reads its
 * own (its table's `identity`: lume_common.c for both of Lume's, vm_tart.c, vm_utm.c); these are
 * the parts they share. */
#include "vm_internal.h"
#include "file.h"
#include "json.h"
#include "sha256.h"
#include "text.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LM_VM_CONFIG_MAX (1u << 20)

void lm_vm_id_set(lm_vm_info *info, const char *kind, const char *a, const char *b)
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

void lm_vm_id_why(lm_vm_info *info, const char *fmt, ...)
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

int lm_vm_id_from_json(lm_vm_info *info, const char *kind, const char *path, const char *mac_key, const char *id_key)
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
		lm_vm_id_why(info, "%s cannot be read: %s", path, lm_error_last()->message);
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
			lm_vm_id_why(info, "%s has no %s and %s strings", path, mac_key, id_key);
		else
			lm_vm_id_why(info, "%s has no %s string", path, id_key);
		cJSON_Delete(doc);
		return -1;
	}
	lm_vm_id_set(info, kind, mac, id);
	cJSON_Delete(doc);
	return 1;
}
