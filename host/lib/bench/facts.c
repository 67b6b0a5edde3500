/* The host's side of the record: which Mac (model identifier, chip), which macOS (version and
 * build), which user. On macOS from sysctl (hw.model, machdep.cpu.brand_string,
 * kern.osproductversion, kern.osversion); elsewhere (the tests' Linux hosts) from what that system
 * says: DMI's product name, /proc/cpuinfo's model name, os-release and the kernel's release. */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#if defined(__APPLE__)
#include <sys/sysctl.h>
#endif

#include "bench_internal.h"
#include "error_internal.h"
#include "file.h"
#include "text.h"

static void add_or_null(cJSON *obj, const char *key, const char *value)
{
	if (value != NULL && value[0] != '\0')
		cJSON_AddStringToObject(obj, key, value);
	else
		cJSON_AddNullToObject(obj, key);
}

#if defined(__APPLE__)
static void sysctl_string(const char *name, char *buf, size_t len)
{
	size_t n = len;

	if (sysctlbyname(name, buf, &n, NULL, 0) != 0 || n == 0 || n > len)
		buf[0] = '\0';
	else
		buf[n - 1] = '\0';
}
#else
/* The value after `key` (up to the line's end, quotes and "key: " / "key=" stripped) in a small
 * system file; "" when absent. */
static void file_value(const char *path, const char *key, char *buf, size_t len)
{
	char *data = NULL;
	const char *v;
	size_t n, vn;
	lm_scan lines, l;

	buf[0] = '\0';
	if (lm_fs_read_file(path, 1 << 20, &data, &n) < 0) {
		lm_error_clear();
		return;
	}
	/* the text before a NUL byte, if any: a value is a string */
	lm_scan_init(&lines, data, strlen(data));
	while (lm_scan_line(&lines, &v, &vn) != 0) {
		if (vn == 0)
			continue; /* the first line that says something */
		lm_scan_init(&l, v, vn);
		if (key != NULL) {
			if (!lm_scan_skip(&l, key))
				continue;
			lm_scan_span(&l, " \t:=");
		}
		lm_scan_rest(&l, &v, &vn);
		if (vn >= 2 && v[0] == '"' && v[vn - 1] == '"') {
			v++;
			vn -= 2;
		}
		lm_text_format_cut(buf, len, "%.*s", (int)vn, v);
		break;
	}
	free(data);
}
#endif

cJSON *lm_bench_host_facts(void)
{
	cJSON *h = cJSON_CreateObject();
	struct utsname u;
	struct passwd *pw = getpwuid(geteuid());
	char model[256] = "", chip[256] = "", version[128] = "", build[128] = "";

	if (h == NULL)
		return NULL;
	if (uname(&u) != 0)
		memset(&u, 0, sizeof(u));
#if defined(__APPLE__)
	sysctl_string("hw.model", model, sizeof(model));
	sysctl_string("machdep.cpu.brand_string", chip, sizeof(chip));
	sysctl_string("kern.osproductversion", version, sizeof(version));
	sysctl_string("kern.osversion", build, sizeof(build));
	cJSON_AddStringToObject(h, "os", "macOS");
#else
	file_value("/sys/devices/virtual/dmi/id/product_name", NULL, model, sizeof(model));
	file_value("/proc/cpuinfo", "model name", chip, sizeof(chip));
	file_value("/etc/os-release", "PRETTY_NAME", version, sizeof(version));
	snprintf(build, sizeof(build), "%s", u.release);
	add_or_null(h, "os", u.sysname);
#endif
	add_or_null(h, "model", model);
	add_or_null(h, "chip", chip);
	add_or_null(h, "os_version", version);
	add_or_null(h, "os_build", build);
	add_or_null(h, "arch", u.machine);
	add_or_null(h, "user", pw != NULL ? pw->pw_name : NULL);
	return h;
}
