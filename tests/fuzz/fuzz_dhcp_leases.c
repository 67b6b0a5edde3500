/* The host's DHCP leases (/var/db/dhcpd_leases, bootpd's format; dhcp_leases.c), as the UTM backend
 * reads them for a guest on NAT: whatever the file holds, the answer is no address or one IPv4
 * literal (or the refusal of one that is not), for a MAC given with or without leading zeros and
 * in any case. The input's first line
 * is the MAC looked up (when it is one), the rest the file. */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_support.h"
#include "vm_internal.h"

/* An address, none, or a refusal with none: a MAC that is not one (LM_EINVALID), or the newest
 * live lease giving something that is not an IPv4 address (LM_ERROR: never trusted). */
static void check_answer(int rc, const char *ip)
{
	struct in_addr a;

	LM_FUZZ_CHECK(memchr(ip, '\0', 64) != NULL);
	if (rc == 0 && ip[0] != '\0')
		LM_FUZZ_CHECK(inet_pton(AF_INET, ip, &a) == 1);
	if (rc != 0)
		LM_FUZZ_CHECK((rc == LM_EINVALID || rc == LM_ERROR) && ip[0] == '\0');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = lm_fuzz_strdup(data, size), *nl, ip[64];
	const char *file = text;
	int rc;

	if ((nl = strchr(text, '\n')) != NULL) {
		*nl = '\0';
		file = nl + 1;
		rc = lm_vm_dhcp_lease_find(file, text, 0, ip, sizeof(ip));
		check_answer(rc, ip);
	}
	check_answer(lm_vm_dhcp_lease_find(file, "1a:2b:3c:4d:5e:6f", 0, ip, sizeof(ip)), ip);
	check_answer(lm_vm_dhcp_lease_find(file, "1A:2B:3C:4D:5E:6F", 1e12, ip, sizeof(ip)), ip);
	free(text);
	return 0;
}
