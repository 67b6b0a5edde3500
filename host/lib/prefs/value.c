/* Preference values as libplist nodes: conversion, description, comparison, journal encoding. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "b64.h"
#include "error_internal.h"
#include "prefs_store.h"
#include "text.h"

plist_t lm_pref_value_to_plist(const lm_pref_value *v)
{
	switch (v->type) {
	case LM_PREF_BOOL: return plist_new_bool(v->boolean ? 1 : 0);
	/* Binary plists store 8-byte integers as signed: the bit pattern is the value. */
	case LM_PREF_INTEGER: return plist_new_uint((uint64_t)v->integer);
	case LM_PREF_STRING: return v->string != NULL ? plist_new_string(v->string) : NULL;
	}
	return NULL;
}

const char *lm_pref_plist_type(plist_t v)
{
	switch (plist_get_node_type(v)) {
	case PLIST_BOOLEAN: return "bool";
	case PLIST_UINT: return "integer";
	case PLIST_REAL: return "real";
	case PLIST_STRING: return "string";
	case PLIST_DATE: return "date";
	case PLIST_DATA: return "data";
	case PLIST_ARRAY: return "array";
	case PLIST_DICT: return "dict";
	case PLIST_UID: return "uid";
	default: return "unknown";
	}
}

int lm_pref_plist_is_flag_type(plist_t v)
{
	plist_type t = plist_get_node_type(v);

	return t == PLIST_BOOLEAN || t == PLIST_UINT || t == PLIST_STRING;
}

void lm_pref_plist_describe(plist_t v, char *buf, size_t size)
{
	const char *type = lm_pref_plist_type(v);
	char text[256], *s = NULL;
	uint8_t b = 0;
	uint64_t u = 0;
	double d = 0;
	uint64_t len = 0;
	time_t t;
	struct tm tm;
	size_t i;

	if (v == NULL) {
		if (size > 0)
			buf[0] = '\0';
		return;
	}
	switch (plist_get_node_type(v)) {
	case PLIST_BOOLEAN:
		plist_get_bool_val(v, &b);
		snprintf(text, sizeof(text), "%s", b ? "true" : "false");
		break;
	case PLIST_UINT:
		plist_get_uint_val(v, &u);
		snprintf(text, sizeof(text), "%" PRId64, (int64_t)u);
		break;
	case PLIST_UID:
		plist_get_uid_val(v, &u);
		snprintf(text, sizeof(text), "%" PRIu64, u);
		break;
	case PLIST_REAL:
		plist_get_real_val(v, &d);
		snprintf(text, sizeof(text), "%.17g", d);
		break;
	case PLIST_STRING:
		plist_get_string_val(v, &s);
		if (s == NULL) {
			text[0] = '\0';
			break;
		}
		/* Shown on one line, cut to fit; control characters would break the output. */
		snprintf(text, sizeof(text), "%s%s", s, strlen(s) > 200 ? "..." : "");
		if (strlen(s) > 200)
			memcpy(text + 200, "...", 4);
		for (i = 0; text[i] != '\0'; i++)
			if ((unsigned char)text[i] < 0x20 || text[i] == 0x7f)
				text[i] = '?';
		free(s);
		break;
	case PLIST_DATE:
		t = (time_t)lm_plist_date_unix(v);
		gmtime_r(&t, &tm);
		strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
		break;
	case PLIST_DATA:
		plist_get_data_val(v, &s, &len);
		free(s);
		snprintf(text, sizeof(text), "<%" PRIu64 " bytes>", len);
		break;
	case PLIST_ARRAY:
		snprintf(text, sizeof(text), "[%u items]", plist_array_get_size(v));
		break;
	case PLIST_DICT:
		snprintf(text, sizeof(text), "{%u keys}", plist_dict_get_size(v));
		break;
	default:
		snprintf(text, sizeof(text), "?");
		break;
	}
	snprintf(buf, size, "%s (%s)", text, type);
}

static int dict_equal(plist_t a, plist_t b)
{
	plist_dict_iter it = NULL;
	plist_t va = NULL;
	char *key = NULL;
	int eq = 1;

	if (plist_dict_get_size(a) != plist_dict_get_size(b))
		return 0;
	plist_dict_new_iter(a, &it);
	for (;;) {
		key = NULL;
		va = NULL;
		plist_dict_next_item(a, it, &key, &va);
		if (va == NULL) {
			free(key);
			break;
		}
		if (key == NULL || !lm_pref_plist_equal(va, plist_dict_get_item(b, key)))
			eq = 0;
		free(key);
		if (!eq)
			break;
	}
	free(it);
	return eq;
}

int lm_pref_plist_equal(plist_t a, plist_t b)
{
	uint32_t i, n;
	char *sa = NULL, *sb = NULL;
	uint64_t la = 0, lb = 0;
	int eq;

	if (a == NULL || b == NULL)
		return a == b;
	if (plist_get_node_type(a) != plist_get_node_type(b))
		return 0;
	switch (plist_get_node_type(a)) {
	case PLIST_ARRAY:
		n = plist_array_get_size(a);
		if (n != plist_array_get_size(b))
			return 0;
		for (i = 0; i < n; i++)
			if (!lm_pref_plist_equal(plist_array_get_item(a, i), plist_array_get_item(b, i)))
				return 0;
		return 1;
	case PLIST_DICT:
		return dict_equal(a, b);
	case PLIST_DATA:
		plist_get_data_val(a, &sa, &la);
		plist_get_data_val(b, &sb, &lb);
		eq = la == lb && (la == 0 || (sa != NULL && sb != NULL && memcmp(sa, sb, (size_t)la) == 0));
		free(sa);
		free(sb);
		return eq;
	case PLIST_STRING:
		plist_get_string_val(a, &sa);
		plist_get_string_val(b, &sb);
		eq = sa != NULL && sb != NULL && strcmp(sa, sb) == 0;
		free(sa);
		free(sb);
		return eq;
	default:
		return plist_compare_node_value(a, b) ? 1 : 0;
	}
}

int lm_pref_plist_encode(plist_t v, char **out)
{
	plist_t arr;
	char *bin = NULL;
	uint32_t len = 0;

	*out = NULL;
	if (v == NULL || (arr = plist_new_array()) == NULL)
		return lm_error_nomem();
	plist_array_append_item(arr, plist_copy(v));
	plist_to_bin(arr, &bin, &len);
	plist_free(arr);
	if (bin == NULL)
		return lm_error_set(LM_EINVALID, "cannot serialise a %s value", lm_pref_plist_type(v));
	if ((*out = malloc(lm_b64_encoded_len(len, 1) + 1)) != NULL)
		lm_b64_encode((const uint8_t *)bin, len, *out, 1);
	lm_plist_mem_free(bin);
	return *out != NULL ? 0 : lm_error_nomem();
}

int lm_pref_plist_decode(const char *text, plist_t *out)
{
	size_t n = text != NULL ? strlen(text) : 0;
	unsigned char *bin;
	plist_t arr = NULL;
	long len;
	int rc;

	*out = NULL;
	if ((bin = malloc(n / 4 * 3 + 1)) == NULL)
		return lm_error_nomem();
	/* Strict: only what lm_pref_plist_encode writes. */
	if ((len = lm_b64_decode(text != NULL ? text : "", n, bin, n / 4 * 3, LM_B64_STRICT)) < 0) {
		free(bin);
		return lm_error_set(LM_EINVALID, "not base64");
	}
	if (len < 8 || memcmp(bin, "bplist00", 8) != 0) {
		free(bin);
		return lm_error_set(LM_EINVALID, "not a one-value binary property list");
	}
	rc = lm_plist_read((const char *)bin, (size_t)len, "the recorded value", &arr, NULL);
	free(bin);
	if (rc < 0)
		return rc;
	if (plist_get_node_type(arr) != PLIST_ARRAY || plist_array_get_size(arr) != 1) {
		plist_free(arr);
		return lm_error_set(LM_EINVALID, "not a one-value binary property list");
	}
	if ((rc = lm_pref_plist_keepable(arr)) <= 0) {
		plist_free(arr);
		return rc < 0 ? rc : lm_error_set(LM_EINVALID, "holds a string with a NUL character or invalid UTF-8");
	}
	*out = plist_copy(plist_array_get_item(arr, 0));
	plist_free(arr);
	return *out != NULL ? 0 : lm_error_nomem();
}

/* A value is kept by its binary plist form (journal) and written back in it (plist store), so
 * every string must survive that form exactly. Two kinds do not:
 *  - a string or key whose bytes hold a NUL: libplist 2.2 keeps the length apart from the bytes
 *    and aborts the process (an assert) when such a string is read back;
 *  - a string that is not valid UTF-8: the binary form stores non-ASCII text as UTF-16, and the
 *    conversion changes it (macOS does not accept such a plist either).
 * libplist's XML writer copies strings and keys byte for byte, and the rest of the XML text is
 * ASCII (data is base64), so checking the XML form checks every string and key. */
int lm_pref_plist_keepable(plist_t v)
{
	char *xml = NULL;
	uint32_t len = 0;
	size_t bad = 0;
	int ok;

	if (v == NULL)
		return 1;
	plist_to_xml(v, &xml, &len);
	if (xml == NULL)
		return lm_error_nomem();
	ok = memchr(xml, '\0', len) == NULL && lm_utf8_check(xml, len, &bad) == 0;
	lm_plist_mem_free(xml);
	return ok;
}
