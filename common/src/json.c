#include "json.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error_internal.h"
#include "text.h"

static int is_plain_key(const char *k)
{
	size_t i;

	if (!((k[0] >= 'A' && k[0] <= 'Z') || (k[0] >= 'a' && k[0] <= 'z') || k[0] == '_'))
		return 0;
	for (i = 1; k[i] != '\0'; i++)
		if (!((k[i] >= 'A' && k[i] <= 'Z') || (k[i] >= 'a' && k[i] <= 'z') ||
		    (k[i] >= '0' && k[i] <= '9') || k[i] == '_'))
			return 0;
	return i <= 64;
}

static size_t path_render(const lm_json_path *p, char *buf, size_t size, size_t depth)
{
	size_t o;
	char q[160];

	if (p == NULL || depth > 64)
		return (size_t)snprintf(buf, size, "$");
	o = path_render(p->parent, buf, size, depth + 1);
	if (o >= size)
		return o;
	if (p->key == NULL)
		return o + (size_t)snprintf(buf + o, size - o, "[%d]", p->index);
	if (is_plain_key(p->key))
		return o + (size_t)snprintf(buf + o, size - o, ".%s", p->key);
	lm_text_quote(q, sizeof(q), p->key, strlen(p->key), 40);
	return o + (size_t)snprintf(buf + o, size - o, "[\"%s\"]", q);
}

void lm_json_path_format(const lm_json_path *path, char *buf, size_t size)
{
	size_t n;

	if (size == 0)
		return;
	n = path_render(path, buf, size, 0);
	buf[size - 1] = '\0';
	if (n >= size)
		lm_text_mark_cut(buf, size, (int)size); /* a path too deep to show ends in "..." */
}

static void format_number(double d, char *buf, size_t size)
{
	double back = 0;

	if (isnan(d) || isinf(d)) {
		snprintf(buf, size, "%s", isnan(d) ? "NaN" : d > 0 ? "a number too large" : "a number too small");
		return;
	}
	snprintf(buf, size, "%1.15g", d);
	if (sscanf(buf, "%lg", &back) != 1 || back != d)
		snprintf(buf, size, "%1.17g", d);
}

const char *lm_json_describe(const cJSON *item, char *buf, size_t size)
{
	char q[160];

	if (item == NULL)
		snprintf(buf, size, "nothing");
	else if (cJSON_IsTrue(item))
		snprintf(buf, size, "true");
	else if (cJSON_IsFalse(item))
		snprintf(buf, size, "false");
	else if (cJSON_IsNull(item))
		snprintf(buf, size, "null");
	else if (cJSON_IsNumber(item))
		format_number(item->valuedouble, buf, size);
	else if (cJSON_IsString(item)) {
		lm_text_quote(q, sizeof(q), item->valuestring, strlen(item->valuestring), 60);
		lm_text_format_cut(buf, size, "\"%s\"", q);
	} else if (cJSON_IsArray(item)) {
		int n = cJSON_GetArraySize(item);
		if (n == 0)
			snprintf(buf, size, "an empty array");
		else
			snprintf(buf, size, "an array of %d element%s", n, n == 1 ? "" : "s");
	}
	else if (cJSON_IsObject(item))
		snprintf(buf, size, "an object");
	else
		snprintf(buf, size, "an unknown value");
	return buf;
}

int lm_json_fail(const char *source, const lm_json_path *path, const char *fmt, ...)
{
	char where[512], what[1024];
	va_list ap;

	int n;

	lm_json_path_format(path, where, sizeof(where));
	va_start(ap, fmt);
	n = vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	lm_text_mark_cut(what, sizeof(what), n);
	return lm_error_set(LM_EINVALID, "%s: %s: %s", source, where, what);
}

static void line_column(const char *text, size_t off, size_t *line, size_t *col)
{
	size_t i;

	*line = 1;
	*col = 1;
	for (i = 0; i < off; i++) {
		if (text[i] == '\n') {
			(*line)++;
			*col = 1;
		} else if (((unsigned char)text[i] & 0xc0) != 0x80) {
			(*col)++; /* columns count characters, not UTF-8 continuation bytes */
		}
	}
}

static int is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The JSON grammar (RFC 8259), never laxer than cJSON's parser: cJSON reads every text this
 * accepts, given the memory. It allocates nothing, so that it can tell, after a parse failed,
 * whether the text was at fault or the memory. JSON_BAD: not such a text. */
#define JSON_BAD ((size_t)-1)

static size_t json_ws(const char *s, size_t len, size_t i)
{
	while (i < len && is_ws(s[i]))
		i++;
	return i;
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
		return (c | 0x20) - 'a' + 10;
	return -1;
}

/* s[i] is the opening quote; the offset after the closing one. UTF-16 surrogates as cJSON wants
 * them: a high one followed at once by a low one, never a low one alone. */
static size_t json_string(const char *s, size_t len, size_t i)
{
	unsigned v;
	int high = 0, k, d;

	for (i++; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"')
			return high ? JSON_BAD : i + 1;
		if (c < 0x20 || (high && c != '\\'))
			return JSON_BAD;
		if (c != '\\')
			continue;
		if (++i >= len)
			return JSON_BAD;
		if (s[i] != 'u') {
			if (high || s[i] == '\0' || strchr("\"\\/bfnrt", s[i]) == NULL)
				return JSON_BAD;
			continue;
		}
		if (len - i < 5)
			return JSON_BAD;
		for (v = 0, k = 1; k <= 4; k++) {
			if ((d = hex_value(s[i + (size_t)k])) < 0)
				return JSON_BAD;
			v = v * 16 + (unsigned)d;
		}
		i += 4;
		if (high) {
			if (v < 0xDC00 || v > 0xDFFF)
				return JSON_BAD;
			high = 0;
		} else if (v >= 0xDC00 && v <= 0xDFFF) {
			return JSON_BAD;
		} else {
			high = v >= 0xD800 && v <= 0xDBFF;
		}
	}
	return JSON_BAD;
}

static size_t json_digits(const char *s, size_t len, size_t i)
{
	size_t start = i;

	while (i < len && s[i] >= '0' && s[i] <= '9')
		i++;
	return i > start ? i : JSON_BAD;
}

/* At most 63 characters: cJSON 1.7.15 reads a number through a 64-byte buffer. */
static size_t json_number(const char *s, size_t len, size_t i)
{
	size_t start = i;

	if (s[i] == '-')
		i++;
	if (i < len && s[i] == '0')
		i++;
	else if ((i = json_digits(s, len, i)) == JSON_BAD)
		return JSON_BAD;
	if (i < len && s[i] == '.' && (i = json_digits(s, len, i + 1)) == JSON_BAD)
		return JSON_BAD;
	if (i < len && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < len && (s[i] == '+' || s[i] == '-'))
			i++;
		if ((i = json_digits(s, len, i)) == JSON_BAD)
			return JSON_BAD;
	}
	return i - start <= 63 ? i : JSON_BAD;
}

static size_t json_scalar(const char *s, size_t len, size_t i)
{
	static const char *const words[] = {"true", "false", "null"};
	size_t k, n;

	if (s[i] == '"')
		return json_string(s, len, i);
	if (s[i] == '-' || (s[i] >= '0' && s[i] <= '9'))
		return json_number(s, len, i);
	for (k = 0; k < sizeof(words) / sizeof(words[0]); k++) {
		n = strlen(words[k]);
		if (len - i >= n && memcmp(s + i, words[k], n) == 0)
			return i + n;
	}
	return JSON_BAD;
}

/* One JSON value at the start of s[0..len) (after a UTF-8 byte order mark and whitespace, as
 * cJSON skips them), nested at most CJSON_NESTING_LIMIT deep; with `whole`, followed by nothing
 * but whitespace and a NUL inside len (cJSON's require_null_terminated). */
static int json_valid(const char *s, size_t len, int whole)
{
	char open[CJSON_NESTING_LIMIT]; /* '{' or '[' per level */
	size_t depth = 0, i = 0;
	int want_key = 0;

	if (s == NULL)
		return 0;
	if (len >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	for (;;) {
		/* A value (or, in an object, a key and its value). */
		i = json_ws(s, len, i);
		if (i >= len)
			return 0;
		if (want_key) {
			if (s[i] != '"' || (i = json_string(s, len, i)) == JSON_BAD)
				return 0;
			i = json_ws(s, len, i);
			if (i >= len || s[i] != ':')
				return 0;
			i = json_ws(s, len, i + 1);
			if (i >= len)
				return 0;
			want_key = 0;
		}
		if (s[i] == '{' || s[i] == '[') {
			if (depth >= sizeof(open))
				return 0;
			open[depth++] = s[i];
			i = json_ws(s, len, i + 1);
			if (i < len && s[i] == (open[depth - 1] == '{' ? '}' : ']')) {
				depth--;
				i++;
			} else {
				want_key = open[depth - 1] == '{';
				continue;
			}
		} else if ((i = json_scalar(s, len, i)) == JSON_BAD) {
			return 0;
		}
		/* After a value: a comma, the end of containers, or the end of the text. */
		for (;;) {
			i = json_ws(s, len, i);
			if (depth == 0)
				return !whole || (i < len && s[i] == '\0');
			if (i >= len)
				return 0;
			if (s[i] == ',') {
				i++;
				want_key = open[depth - 1] == '{';
				break;
			}
			if (s[i] != (open[depth - 1] == '{' ? '}' : ']'))
				return 0;
			depth--;
			i++;
		}
	}
}

int lm_json_parse(cJSON **out, const char *text, size_t len, const char **end, int whole)
{
	const char *stop = NULL;
	size_t off;

	*out = text != NULL && len > 0 ? cJSON_ParseWithLengthOpts(text, len, &stop, whole) : NULL;
	if (end != NULL)
		*end = stop;
	if (*out != NULL)
		return 0;
	if (json_valid(text, len, whole))
		return lm_error_nomem();
	off = stop != NULL && stop >= text && stop <= text + len ? (size_t)(stop - text) : 0;
	return lm_error_set(LM_EINVALID, "invalid JSON near byte %zu", off);
}

static int key_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The first key (in document order) that appears twice in obj, or NULL. */
static const char *duplicate_key(const cJSON *obj, int *oom)
{
	const cJSON *a, *b;
	const char **keys, *dup = NULL;
	size_t n = 0, i;

	for (a = obj->child; a != NULL; a = a->next)
		n++;
	if (n < 2)
		return NULL;
	if (n <= 64) {
		for (a = obj->child; a != NULL; a = a->next)
			for (b = a->next; b != NULL; b = b->next)
				if (strcmp(a->string, b->string) == 0)
					return a->string;
		return NULL;
	}
	/* Large objects (hostile input): sort a copy of the keys, O(n log n). */
	if ((keys = malloc(n * sizeof(*keys))) == NULL) {
		*oom = 1;
		return NULL;
	}
	for (i = 0, a = obj->child; a != NULL; a = a->next)
		keys[i++] = a->string;
	qsort(keys, n, sizeof(*keys), key_cmp);
	for (i = 1; i < n && dup == NULL; i++)
		if (strcmp(keys[i - 1], keys[i]) == 0)
			dup = keys[i];
	free(keys);
	if (dup == NULL)
		return NULL;
	/* Report it in document order: the first member carrying a duplicated key. */
	for (a = obj->child; a != NULL; a = a->next)
		for (b = a->next; b != NULL; b = b->next)
			if (strcmp(a->string, b->string) == 0)
				return a->string;
	return dup;
}

static int check_duplicates(const cJSON *item, const char *source, const lm_json_path *path)
{
	const cJSON *c;
	const char *dup;
	char q[160];
	int oom = 0, i = 0, rc;

	if (cJSON_IsObject(item)) {
		if ((dup = duplicate_key(item, &oom)) != NULL) {
			lm_text_quote(q, sizeof(q), dup, strlen(dup), 60);
			return lm_json_fail(source, path, "duplicate key \"%s\"; each key may appear once", q);
		}
		if (oom)
			return lm_error_nomem();
		for (c = item->child; c != NULL; c = c->next) {
			lm_json_path sub = LM_JSON_PATH_KEY(path, c->string);
			if ((rc = check_duplicates(c, source, &sub)) != 0)
				return rc;
		}
	} else if (cJSON_IsArray(item)) {
		for (c = item->child; c != NULL; c = c->next, i++) {
			lm_json_path sub = LM_JSON_PATH_INDEX(path, i);
			if ((rc = check_duplicates(c, source, &sub)) != 0)
				return rc;
		}
	}
	return 0;
}

int lm_json_parse_object(cJSON **out, const char *text, size_t len, const char *source, size_t max_len)
{
	const char *end = NULL, *nul;
	cJSON *root;
	size_t off, bad, line, col;
	char found[64];
	int rc;

	*out = NULL;
	if (text == NULL)
		len = 0;
	if (len > max_len)
		return lm_error_set(LM_EINVALID, "%s: the input is %zu bytes; at most %zu bytes are accepted",
		    source, len, max_len);
	off = 0;
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		off = 3; /* a UTF-8 byte order mark carries no meaning; skip it */
	while (off < len && is_ws(text[off]))
		off++;
	if (off == len)
		return lm_error_set(LM_EINVALID, "%s: the input is empty; expected a JSON object", source);
	if ((nul = memchr(text, '\0', len)) != NULL)
		return lm_error_set(LM_EINVALID, "%s: byte %zu: NUL byte; the input must be UTF-8 text",
		    source, (size_t)(nul - text));
	if (lm_utf8_check(text, len, &bad) != 0)
		return lm_error_set(LM_EINVALID, "%s: byte %zu: invalid UTF-8 (0x%02x); save the file as UTF-8",
		    source, bad, (unsigned)(unsigned char)text[bad]);
	if ((rc = lm_json_parse(&root, text + off, len - off, &end, 0)) == LM_ENOMEM)
		return rc;
	if (root == NULL) {
		off = (end != NULL && end >= text && end <= text + len) ? (size_t)(end - text) : off;
		line_column(text, off, &line, &col);
		return lm_error_set(LM_EINVALID, "%s: line %zu, column %zu (byte %zu): invalid JSON; check the "
		    "quotes, commas and brackets near there", source, line, col, off);
	}
	off = (size_t)(end - text);
	while (off < len && is_ws(text[off]))
		off++;
	if (off < len) {
		cJSON_Delete(root);
		line_column(text, off, &line, &col);
		return lm_error_set(LM_EINVALID, "%s: line %zu, column %zu (byte %zu): unexpected data after "
		    "the JSON value", source, line, col, off);
	}
	if (!cJSON_IsObject(root)) {
		rc = lm_json_fail(source, NULL, "expected an object, found %s",
		    lm_json_describe(root, found, sizeof(found)));
		cJSON_Delete(root);
		return rc;
	}
	if ((rc = check_duplicates(root, source, NULL)) != 0) {
		cJSON_Delete(root);
		return rc;
	}
	*out = root;
	return 0;
}

static int print_quoted(lm_buf *b, const char *s)
{
	cJSON *ref = cJSON_CreateStringReference(s);
	char *q = ref ? cJSON_PrintUnformatted(ref) : NULL;
	int rc = q != NULL ? lm_buf_adds(b, q) : lm_error_nomem();

	free(q);
	cJSON_Delete(ref);
	return rc;
}

static void indent(lm_buf *b, int depth)
{
	int i;

	for (i = 0; i < depth; i++)
		lm_buf_add(b, "  ", 2);
}

static int print_value(lm_buf *b, const cJSON *item, int depth)
{
	const cJSON *c;
	char *leaf;
	int is_obj = cJSON_IsObject(item), rc;

	if (is_obj || cJSON_IsArray(item)) {
		if (item->child == NULL)
			return lm_buf_adds(b, is_obj ? "{}" : "[]");
		lm_buf_adds(b, is_obj ? "{\n" : "[\n");
		for (c = item->child; c != NULL; c = c->next) {
			indent(b, depth + 1);
			if (is_obj && ((rc = print_quoted(b, c->string)) < 0 || (rc = lm_buf_adds(b, ": ")) < 0))
				return rc;
			if ((rc = print_value(b, c, depth + 1)) < 0)
				return rc;
			lm_buf_adds(b, c->next ? ",\n" : "\n");
		}
		indent(b, depth);
		return lm_buf_adds(b, is_obj ? "}" : "]");
	}
	if ((leaf = cJSON_PrintUnformatted(item)) == NULL)
		return lm_error_nomem();
	rc = lm_buf_adds(b, leaf);
	free(leaf);
	return rc;
}

char *lm_json_print_canonical(const cJSON *item)
{
	char *out = NULL;
	lm_buf b;

	lm_buf_init(&b, LM_BUF_TEXT_MAX);
	if (print_value(&b, item, 0) < 0 || lm_buf_adds(&b, "\n") < 0 || lm_buf_take(&b, &out, NULL) < 0) {
		lm_buf_dispose(&b);
		return NULL;
	}
	return out;
}

int lm_json_to_int(double d, int64_t min, int64_t max, int64_t *out)
{
	/* Within +-(2^53 - 1) every integer is exact as a double, so the bounds compare exactly and
	 * the conversion below is defined. The comparisons are false for NaN. */
	if (min < -(int64_t)LM_JSON_INT_MAX)
		min = -(int64_t)LM_JSON_INT_MAX;
	if (max > (int64_t)LM_JSON_INT_MAX)
		max = (int64_t)LM_JSON_INT_MAX;
	if (!(d >= (double)min && d <= (double)max) || d != floor(d))
		return -1;
	*out = (int64_t)d;
	return 0;
}

int lm_json_int(const cJSON *item, int64_t min, int64_t max, int64_t *out)
{
	if (!cJSON_IsNumber(item))
		return -1;
	return lm_json_to_int(item->valuedouble, min, max, out);
}

int lm_json_get_uint(const cJSON *item, const char *source, const lm_json_path *path,
    uint64_t min, uint64_t max, uint64_t *out)
{
	char found[96];
	int64_t v;

	if (max > LM_JSON_INT_MAX)
		max = LM_JSON_INT_MAX;
	if (min <= max && lm_json_int(item, (int64_t)min, (int64_t)max, &v) == 0) {
		*out = (uint64_t)v;
		return 0;
	}
	return lm_json_fail(source, path, "expected an integer in %llu..%llu, found %s",
	    (unsigned long long)min, (unsigned long long)max, lm_json_describe(item, found, sizeof(found)));
}

int lm_json_get_bool(const cJSON *item, const char *source, const lm_json_path *path, int *out)
{
	char found[96];

	if (!cJSON_IsBool(item))
		return lm_json_fail(source, path, "expected true or false, found %s",
		    lm_json_describe(item, found, sizeof(found)));
	*out = cJSON_IsTrue(item) ? 1 : 0;
	return 0;
}

int lm_json_check_members(const cJSON *obj, const char *source, const lm_json_path *path,
    const char *const known[])
{
	const cJSON *c;
	const char *best;
	char list[512];
	size_t i, d, best_d, o;

	for (c = obj->child; c != NULL; c = c->next) {
		for (i = 0; known[i] != NULL; i++)
			if (strcmp(c->string, known[i]) == 0)
				break;
		if (known[i] != NULL)
			continue;
		lm_json_path sub = LM_JSON_PATH_KEY(path, c->string);
		best = NULL;
		best_d = 3;
		for (i = 0; known[i] != NULL; i++) {
			d = lm_text_distance(c->string, known[i], 2);
			if (d < best_d && d <= (strlen(known[i]) >= 5 ? 2u : 1u)) {
				best_d = d;
				best = known[i];
			}
		}
		if (best != NULL)
			return lm_json_fail(source, &sub, "unknown field; did you mean \"%s\"?", best);
		o = 0;
		list[0] = '\0';
		for (i = 0; known[i] != NULL && o < sizeof(list); i++)
			o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s", i ? ", " : "", known[i]);
		return lm_json_fail(source, &sub, "unknown field (known fields: %s)", list);
	}
	return 0;
}
