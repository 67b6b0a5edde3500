/* The host's DHCP leases: macOS's bootpd serves the NAT network of Virtualization.framework VMs
 * and records every lease in /var/db/dhcpd_leases (bootpd(8)). Lume
 * (libs/lume/src/Virtualization/DHCPLeaseParser.swift) and Tart (`tart ip`'s default resolver)
 * find a NAT guest's address there by its MAC, since NAT traffic does not reach the host's ARP
 * cache. The format, one block per lease, the newest first:
 *   {
 *           name=vm1
 *           ip_address=192.168.64.3
 *           hw_address=1,7a:6d:5f:0:0:1      hardware type 1 (Ethernet), octets without leading zeros
 *           identifier=1,7a:6d:5f:0:0:1
 *           lease=0x6a0c1f2e                  when the lease ends, seconds since 1970, in hex
 *   }
 * The file is the system's, written by another program: read with a size limit, every line
 * checked, anything unexpected skipped rather than trusted. */
#include "vm_internal.h"
#include "file.h"
#include "text.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LM_LEASES_MAX (4u << 20) /* ~250 leases a day at 200 bytes each: far below */

/* "7a:6d:5f:0:0:1" or "7A:6D:5F:00:00:01" -> "7a:6d:5f:00:00:01"; -1 when it is not a MAC. */
static int mac_normalize(const char *in, size_t len, char out[18])
{
	size_t i = 0, o = 0, digits;
	int octets = 0;

	while (octets < 6) {
		for (digits = 0; i + digits < len && isxdigit((unsigned char)in[i + digits]); digits++)
			;
		if (digits == 0 || digits > 2)
			return -1;
		if (digits == 1)
			out[o++] = '0';
		out[o++] = (char)tolower((unsigned char)in[i]);
		if (digits == 2)
			out[o++] = (char)tolower((unsigned char)in[i + 1]);
		i += digits;
		if (++octets < 6) {
			if (i >= len || in[i] != ':')
				return -1;
			out[o++] = ':';
			i++;
		}
	}
	out[o] = '\0';
	return i == len ? 0 : -1;
}

typedef struct {
	char ip[64];
	char mac[18];
	double ends;
	int has_ip, has_mac, has_lease;
} lease;

/* One "key=value" line of a block into l; other keys are ignored. */
static void lease_line(lease *l, const char *key, size_t klen, const char *value, size_t vlen)
{
	const char *comma;
	char *end, num[24];

	if (klen == 10 && memcmp(key, "ip_address", 10) == 0 && vlen < sizeof(l->ip)) {
		memcpy(l->ip, value, vlen);
		l->ip[vlen] = '\0';
		l->has_ip = 1; /* checked when it is the one (lm_vm_address_answer) */
	} else if (klen == 10 && memcmp(key, "hw_address", 10) == 0 &&
	    (comma = memchr(value, ',', vlen)) != NULL && comma - value == 1 && value[0] == '1') {
		/* hardware type 1 only: Ethernet, what a VM's NIC is */
		l->has_mac = mac_normalize(comma + 1, vlen - 2, l->mac) == 0;
	} else if (klen == 5 && memcmp(key, "lease", 5) == 0 && vlen > 2 && vlen < sizeof(num) &&
	    value[0] == '0' && (value[1] == 'x' || value[1] == 'X')) {
		memcpy(num, value + 2, vlen - 2);
		num[vlen - 2] = '\0';
		l->ends = (double)strtoull(num, &end, 16);
		l->has_lease = *end == '\0' && end != num;
	}
}

int lm_vm_dhcp_lease_find(const char *text, const char *mac, double now, char *ip, size_t cap)
{
	char want[18];
	const char *line, *eol, *s, *e, *eq;
	size_t n;
	lm_scan lines;
	lease l;
	int in_block = 0;

	ip[0] = '\0';
	if (mac_normalize(mac, strlen(mac), want) < 0)
		return lm_error_set(LM_EINVALID, "'%s' is not a MAC address", mac);
	memset(&l, 0, sizeof(l));
	lm_scan_init(&lines, text, strlen(text));
	while (lm_scan_line(&lines, &line, &n) != 0) {
		eol = line + n;
		for (s = line; s < eol && (*s == ' ' || *s == '\t' || *s == '\r'); s++)
			;
		for (e = eol; e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'); e--)
			;
		if (e - s == 1 && *s == '{') {
			in_block = 1;
			memset(&l, 0, sizeof(l));
		} else if (e - s == 1 && *s == '}') {
			/* The newest lease comes first: the first live one for this MAC is the address. */
			if (in_block && l.has_ip && l.has_mac && l.has_lease && strcmp(l.mac, want) == 0 && l.ends > now) {
				char who[48];
				snprintf(who, sizeof(who), "the DHCP lease of %s", want);
				return lm_vm_address_answer(who, NULL, l.ip, ip, cap);
			}
			in_block = 0;
		} else if (in_block && (eq = memchr(s, '=', (size_t)(e - s))) != NULL) {
			lease_line(&l, s, (size_t)(eq - s), eq + 1, (size_t)(e - eq - 1));
		}
	}
	return 0;
}

int lm_vm_dhcp_lease_lookup(const char *path, const char *mac, char *ip, size_t cap)
{
	char *text = NULL;
	size_t len;
	int rc;

	ip[0] = '\0';
	if ((rc = lm_fs_read_file(path, LM_LEASES_MAX, &text, &len)) < 0) {
		if (rc == LM_ENOMEM)
			return rc;
		lm_error_clear(); /* no lease file (no NAT VM has run yet), or not one to trust: no address */
		return 0;
	}
	if (memchr(text, '\0', len) != NULL) {
		free(text);
		return 0; /* not the text file bootpd writes */
	}
	rc = lm_vm_dhcp_lease_find(text, mac, lm_clock_epoch(), ip, cap);
	free(text);
	return rc;
}
