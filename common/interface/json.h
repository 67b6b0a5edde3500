/* Internal: strict JSON documents on top of cJSON (profiles, JSON reports).
 *
 * cJSON parses; these helpers add what a strict format needs around it: size, NUL, UTF-8 and
 * trailing-data checks before and after the parse, duplicate keys (cJSON keeps both), JSON
 * paths in messages ("$.capabilities.apple_family_max") and a canonical printer. */
#ifndef LM_JSON_H
#define LM_JSON_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

/* A JSON path as a chain of frames on the caller's stack: key != NULL for an object member,
 * otherwise index for an array element. The root is a NULL parent. */
typedef struct lm_json_path {
	const struct lm_json_path *parent;
	const char *key;
	int index;
} lm_json_path;

#define LM_JSON_PATH_KEY(parent_, key_) {(parent_), (key_), 0}
#define LM_JSON_PATH_INDEX(parent_, index_) {(parent_), NULL, (index_)}

/* "$", "$.a.b", "$.a[2]", "$[\"odd key\"]" into buf. */
void lm_json_path_format(const lm_json_path *path, char *buf, size_t size);

/* What a value is, for "found ..." in messages: 2001, 1009.5, "text", true, null, an array. */
const char *lm_json_describe(const cJSON *item, char *buf, size_t size);

/* Set LM_EINVALID with "<source>: <path>: <message>". Returns LM_EINVALID. */
int lm_json_fail(const char *source, const lm_json_path *path, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* cJSON_ParseWithLengthOpts(text, len, end, whole), telling what cJSON cannot: 0 and *out; or,
 * when it fails, LM_ENOMEM ("out of memory") if the text is valid JSON (cJSON ran out of memory;
 * checked without allocating), else LM_EINVALID ("invalid JSON near byte N", *end where the
 * parse stopped: callers say whose text it was). */
int lm_json_parse(cJSON **out, const char *text, size_t len, const char **end, int whole);

/* Parse one JSON object from text[0..len) with every check (size <= max_len, not empty, no NUL,
 * valid UTF-8, valid JSON, nothing after it, no duplicate keys, an object at the root). */
int lm_json_parse_object(cJSON **out, const char *text, size_t len, const char *source, size_t max_len);

/* Canonical text: members in the tree's order, 2-space indent, one member per line, "{}"/"[]"
 * when empty, trailing newline. NULL on allocation failure. */
char *lm_json_print_canonical(const cJSON *item);

/* The one range check before a JSON number becomes an integer (converting a double that is out
 * of range is undefined behaviour in C): 0 and *out when d has no fraction and lies in
 * [min, max] (bounds clamped to +-(2^53 - 1), where every integer is exact); -1 otherwise (NaN,
 * infinities, 1e300, 1.5). lm_json_int does the same for a cJSON item (-1 when not a number). */
int lm_json_to_int(double d, int64_t min, int64_t max, int64_t *out);
int lm_json_int(const cJSON *item, int64_t min, int64_t max, int64_t *out);

/* Typed member access. Each returns 0, or LM_EINVALID with "<source>: <path>: expected ..., found ...". */
int lm_json_get_uint(const cJSON *item, const char *source, const lm_json_path *path,
    uint64_t min, uint64_t max, uint64_t *out);
int lm_json_get_bool(const cJSON *item, const char *source, const lm_json_path *path, int *out);

/* Reject members of obj whose key is not in known[] (NULL-terminated), naming the first one in
 * document order and suggesting the closest known key. */
int lm_json_check_members(const cJSON *obj, const char *source, const lm_json_path *path,
    const char *const known[]);

#endif
