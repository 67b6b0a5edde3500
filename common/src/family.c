/* The GPU family table, generated from the one list the guest probe also uses. */
#include "family_internal.h"

#include <stdio.h>
#include <string.h>

#include "error_internal.h"
#include "text.h"

#define LM_FAMILY_ENTRY(name, value) {#name, value},
static const lm_family family_table[] = {LM_FAMILY_LIST(LM_FAMILY_ENTRY)};
#undef LM_FAMILY_ENTRY

const lm_family *lm_family_table(size_t *count)
{
	if (count != NULL)
		*count = LM_FAMILY_COUNT;
	return family_table;
}

int lm_family_index(int value)
{
	int i;

	for (i = 0; i < LM_FAMILY_COUNT; i++)
		if (family_table[i].value == value)
			return i;
	return -1;
}

int lm_family_index_by_name(const char *name, size_t len)
{
	int i;

	for (i = 0; i < LM_FAMILY_COUNT; i++)
		if (strlen(family_table[i].name) == len && memcmp(family_table[i].name, name, len) == 0)
			return i;
	return -1;
}

const char *lm_family_name(int value)
{
	int i = lm_family_index(value);

	return i < 0 ? NULL : family_table[i].name;
}

int lm_family_value(const char *name, int *value)
{
	char known[256];
	size_t o = 0;
	const char *hint;
	int i;

	if (name != NULL && (i = lm_family_index_by_name(name, strlen(name))) >= 0) {
		if (value != NULL)
			*value = family_table[i].value;
		return 0;
	}
	known[0] = '\0';
	for (i = 0; i < LM_FAMILY_COUNT && o + 16 < sizeof(known); i++)
		o += (size_t)snprintf(known + o, sizeof(known) - o, "%s%s", i ? ", " : "", family_table[i].name);
	hint = name == NULL ? NULL : lm_family_suggest(name);
	return lm_error_set(LM_ENOTFOUND, "unknown GPU family '%s'%s%s%s (known: %s)", name == NULL ? "" : name,
	    hint ? "; did you mean '" : "", hint ? hint : "", hint ? "'?" : "", known);
}

const char *lm_family_suggest(const char *name)
{
	const char *best = NULL;
	size_t d, best_d = 3;
	int i;

	for (i = 0; i < LM_FAMILY_COUNT; i++) {
		d = lm_text_distance(name, family_table[i].name, 2);
		if (d < best_d) {
			best_d = d;
			best = family_table[i].name;
		}
	}
	return best;
}

const char *lm_family_label(int value, char *buf, size_t size)
{
	const char *name = lm_family_name(value);

	if (name != NULL)
		snprintf(buf, size, "%s (%d)", name, value);
	else
		snprintf(buf, size, "Apple%d (%d)", value - 1000, value);
	return buf;
}
