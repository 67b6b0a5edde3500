/* The one reader of outside property lists (host/lib/core/interface/plist_read.h), XML or binary:
 * the depth and NUL check on the raw bytes, then libplist. Whatever it accepts, libplist parsed
 * (under ASan, whose stack overflow is a crash) and the tree is no deeper than LM_PLIST_MAX_DEPTH;
 * whatever it refuses is NULL with the flaw named; and what every caller then does to a tree
 * (copy, compare, write back as XML and binary, free: libplist's recursions) runs on it. */
#include <stdlib.h>

#include "fuzz_support.h"
#include "plist_read.h"

/* Bounded by the check: a deeper tree would overflow here first, and ASan would say so. */
static unsigned depth_of(plist_t node)
{
	plist_dict_iter it = NULL;
	plist_t item;
	char *key;
	unsigned best = 0, d;
	uint32_t i;

	switch (plist_get_node_type(node)) {
	case PLIST_ARRAY:
		for (i = 0; i < plist_array_get_size(node); i++)
			if ((d = depth_of(plist_array_get_item(node, i))) > best)
				best = d;
		return best + 1;
	case PLIST_DICT:
		plist_dict_new_iter(node, &it);
		for (;;) {
			key = NULL;
			item = NULL;
			plist_dict_next_item(node, it, &key, &item);
			free(key);
			if (item == NULL)
				break;
			if ((d = depth_of(item)) > best)
				best = d;
		}
		free(it);
		return best + 1;
	default:
		return 0;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	plist_t p = NULL, copy;
	lm_plist_flaw flaw = LM_PLIST_FINE;
	char *text = NULL;
	uint32_t len = 0;
	int rc = lm_plist_read((const char *)data, size, "fuzz input", &p, &flaw);

	if (rc != 0) {
		LM_FUZZ_CHECK(p == NULL);
		LM_FUZZ_CHECK(rc == LM_ENOMEM || (rc == LM_EINVALID && flaw != LM_PLIST_FINE));
		return 0;
	}
	LM_FUZZ_CHECK(p != NULL && flaw == LM_PLIST_FINE);
	LM_FUZZ_CHECK(depth_of(p) <= LM_PLIST_MAX_DEPTH);
	copy = plist_copy(p);
	LM_FUZZ_CHECK(copy != NULL);
	plist_to_xml(copy, &text, &len);
	lm_plist_mem_free(text);
	text = NULL;
	plist_to_bin(copy, &text, &len);
	lm_plist_mem_free(text);
	plist_free(copy);
	plist_free(p);
	return 0;
}
