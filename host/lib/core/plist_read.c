/* The one reader of outside property lists (interface/plist_read.h): the raw bytes are checked for
 * nesting and NUL characters, by iteration alone, before libplist parses them.
 *
 * The check is conservative where it is not exact: it descends wherever libplist could (every
 * in-bounds reference, keys included, whatever libplist would later refuse), so libplist never
 * goes deeper than the check counted. Where libplist refuses the bytes before descending (a bad
 * trailer, a reference out of range), the check does not descend either. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error_internal.h"
#include "plist_read.h"

/* ---- binary: "bplist00", objects, an offset table, a 32-byte trailer ---- */

#define BPLIST_TRAILER 32
#define MARK_OPEN 0xffffu /* on the path being walked; other marks: 0 unseen, height + 1 */

typedef struct {
	const unsigned char *d;
	size_t end;     /* where the trailer starts: nothing of an object is read past it */
	size_t table;   /* the offset table */
	uint64_t nobj;
	size_t osize;   /* bytes of an offset */
	size_t rsize;   /* bytes of an object reference */
} bplist;

/* A container on the path: its references still to walk and the tallest child seen. */
typedef struct {
	uint64_t obj;
	size_t refs;    /* position of its first reference */
	uint64_t nrefs, next;
	unsigned tallest;
} frame;

/* A big-endian unsigned integer of n bytes; past 8, libplist reads the last 8 (UINT_TO_HOST). */
static uint64_t be_uint(const unsigned char *p, size_t n)
{
	uint64_t v = 0;
	size_t i;

	if (n > 8) {
		p += n - 8;
		n = 8;
	}
	for (i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

/* The trailer, checked as libplist checks it (plist_from_bin): anything it refuses is not a plist. */
static int bplist_open(bplist *b, const unsigned char *d, size_t len, uint64_t *root)
{
	const unsigned char *t;
	uint64_t table;

	if (len < 8 + BPLIST_TRAILER)
		return -1;
	t = d + len - BPLIST_TRAILER;
	b->d = d;
	b->end = len - BPLIST_TRAILER;
	b->osize = t[6];
	b->rsize = t[7];
	b->nobj = be_uint(t + 8, 8);
	*root = be_uint(t + 16, 8);
	table = be_uint(t + 24, 8);
	if (b->nobj == 0 || b->osize == 0 || b->rsize == 0 || *root >= b->nobj || table < 8 || table >= b->end)
		return -1;
	b->table = (size_t)table;
	if (b->nobj > (b->end - b->table) / b->osize) /* the table would run into the trailer */
		return -1;
	return 0;
}

/* Object i's marker position, or SIZE_MAX when its offset points past the objects (libplist
 * refuses it). */
static size_t object_at(const bplist *b, uint64_t i)
{
	uint64_t off = be_uint(b->d + b->table + (size_t)i * b->osize, b->osize);

	return off < b->end ? (size_t)off : SIZE_MAX;
}

enum { OBJ_LEAF, OBJ_CONTAINER, OBJ_NUL };

/* What object i is: a container (its references in *refs, *nrefs of them that lie in the data), a
 * string holding a NUL, or anything else (a leaf, or bytes libplist refuses before descending). */
static int object_kind(const bplist *b, uint64_t i, size_t *refs, uint64_t *nrefs)
{
	size_t pos = object_at(b, i), nb, k;
	unsigned type;
	uint64_t count, avail;

	if (pos == SIZE_MAX)
		return OBJ_LEAF;
	type = b->d[pos] >> 4;
	count = b->d[pos] & 0x0f;
	pos++;
	if (type != 0x4 && type != 0x5 && type != 0x6 && (type < 0xa || type > 0xd))
		return OBJ_LEAF; /* numbers, dates, booleans, UIDs: no count, no references */
	if (count == 0x0f) { /* the count follows as an integer object */
		if (pos >= b->end || b->d[pos] >> 4 != 0x1)
			return OBJ_LEAF;
		nb = (size_t)1 << (b->d[pos] & 0x0f);
		if (nb > b->end - pos - 1)
			return OBJ_LEAF;
		count = be_uint(b->d + pos + 1, nb);
		pos += 1 + nb;
	}
	avail = b->end - pos;
	switch (type) {
	case 0x5: /* ASCII: libplist cuts it at a NUL */
		return count <= avail && memchr(b->d + pos, 0, (size_t)count) != NULL ? OBJ_NUL : OBJ_LEAF;
	case 0x6: /* UTF-16 */
		if (count > avail / 2)
			return OBJ_LEAF;
		for (k = 0; k < (size_t)count; k++)
			if (b->d[pos + 2 * k] == 0 && b->d[pos + 2 * k + 1] == 0)
				return OBJ_NUL;
		return OBJ_LEAF;
	case 0x4: /* data */
		return OBJ_LEAF;
	default: /* 0xa array, 0xb and 0xc sets (as arrays), 0xd dictionary: keys, then values */
		avail /= b->rsize;
		if (type == 0xd)
			*nrefs = count > avail / 2 ? avail : 2 * count;
		else
			*nrefs = count > avail ? avail : count;
		*refs = pos;
		return OBJ_CONTAINER;
	}
}

static lm_plist_flaw bplist_check(const unsigned char *d, size_t len, int *nomem)
{
	bplist b;
	uint64_t root, ref;
	uint16_t *mark;
	frame *stack;
	size_t sp = 0, refs = 0;
	uint64_t nrefs = 0;
	unsigned h;
	lm_plist_flaw flaw = LM_PLIST_FINE;
	int kind;

	if (bplist_open(&b, d, len, &root) < 0)
		return LM_PLIST_NOT_PLIST;
	mark = calloc((size_t)b.nobj, sizeof(*mark));
	stack = malloc(LM_PLIST_MAX_DEPTH * sizeof(*stack));
	if (mark == NULL || stack == NULL) {
		free(mark);
		free(stack);
		*nomem = 1;
		return LM_PLIST_FINE;
	}
	ref = root;
	for (;;) {
		/* Enter object `ref`, a child of the frame on top (the root when the stack is empty). */
		h = 0;
		if (mark[ref] == MARK_OPEN) {
			flaw = LM_PLIST_NOT_PLIST; /* it contains itself: libplist refuses ("recursion detected") */
			break;
		} else if (mark[ref] != 0) {
			h = mark[ref] - 1u;
		} else if ((kind = object_kind(&b, ref, &refs, &nrefs)) == OBJ_NUL) {
			flaw = LM_PLIST_NUL;
			break;
		} else if (kind == OBJ_CONTAINER) {
			if (sp == LM_PLIST_MAX_DEPTH) {
				flaw = LM_PLIST_TOO_DEEP;
				break;
			}
			stack[sp] = (frame){ref, refs, nrefs, 0, 0};
			mark[ref] = MARK_OPEN;
			sp++;
		} else {
			mark[ref] = 1; /* a leaf: height 0 */
		}
		if (mark[ref] != MARK_OPEN) {
			/* A known height h below the sp containers of the path. */
			if (sp + h > LM_PLIST_MAX_DEPTH) {
				flaw = LM_PLIST_TOO_DEEP;
				break;
			}
			if (sp > 0 && h > stack[sp - 1].tallest)
				stack[sp - 1].tallest = h;
		}
		/* The next reference to follow: finished containers are left, their heights kept. */
		for (;;) {
			frame *top;

			if (sp == 0)
				goto done;
			top = &stack[sp - 1];
			if (top->next < top->nrefs) {
				ref = be_uint(b.d + top->refs + (size_t)top->next * b.rsize, b.rsize);
				top->next++;
				if (ref < b.nobj) /* else libplist refuses the reference without following it */
					break;
				continue;
			}
			h = top->tallest + 1;
			mark[top->obj] = (uint16_t)(h + 1);
			sp--;
			if (sp > 0 && h > stack[sp - 1].tallest)
				stack[sp - 1].tallest = h;
		}
	}
done:
	free(mark);
	free(stack);
	return flaw;
}

/* ---- XML: only <dict> and <array> nest (libplist's node_from_xml) ---- */

static const char *find_text(const char *from, const char *end, const char *s)
{
	size_t n = strlen(s);

	for (; (size_t)(end - from) >= n; from++) {
		from = memchr(from, s[0], (size_t)(end - from));
		if (from == NULL || (size_t)(end - from) < n)
			return NULL;
		if (memcmp(from, s, n) == 0)
			return from;
	}
	return NULL;
}

static int starts(const char *p, const char *end, const char *s)
{
	size_t n = strlen(s);

	return (size_t)(end - p) >= n && memcmp(p, s, n) == 0;
}

static int is_name(const char *p, size_t n, const char *s)
{
	return n == strlen(s) && memcmp(p, s, n) == 0;
}

/* Counts every <dict> and <array> that is not empty (<dict/>) against its </dict> or </array>.
 * Comments, CDATA, processing instructions and the DOCTYPE are skipped no further than libplist
 * skips them, and a tag ends where libplist ends it (quoted attribute values skipped): so the
 * count is never below the nesting libplist builds. */
static lm_plist_flaw xml_check(const char *d, size_t len)
{
	const char *p = d, *end = d + len, *name, *q;
	size_t n;
	unsigned depth = 0;
	int closing, container;

	if (memchr(d, 0, len) != NULL)
		return LM_PLIST_NUL; /* XML allows none, and libplist cuts a key at it */
	while (p < end && (p = memchr(p, '<', (size_t)(end - p))) != NULL) {
		if (starts(p, end, "<!--")) {
			q = find_text(p + 4, end, "-->");
			p = q != NULL ? q + 3 : end;
			continue;
		}
		if (starts(p, end, "<![CDATA[")) {
			q = find_text(p + 9, end, "]]>");
			p = q != NULL ? q + 3 : end;
			continue;
		}
		if (starts(p, end, "<?")) {
			q = find_text(p + 2, end, "?>");
			p = q != NULL ? q + 2 : end;
			continue;
		}
		if (starts(p, end, "<!")) {
			q = memchr(p, '>', (size_t)(end - p));
			p = q != NULL ? q + 1 : end;
			continue;
		}
		closing = p + 1 < end && p[1] == '/';
		name = p + 1 + closing;
		for (q = name; q < end && strchr(" \r\n\t<>", *q) == NULL; q++)
			;
		n = (size_t)(q - name);
		/* The tag's end: the first '>' or '<' outside a quoted value. */
		while (q < end && *q != '>' && *q != '<') {
			if (*q == '"' && (q = memchr(q + 1, '"', (size_t)(end - q - 1))) == NULL)
				return LM_PLIST_FINE; /* unmatched quote: libplist stops here too */
			q++;
		}
		if (q >= end)
			break;
		if (*q == '<') { /* no '>': libplist stops here; read on, to count no less than it */
			p = q;
			continue;
		}
		if (q[-1] == '/' && n > 0 && name[n - 1] == '/')
			n--; /* <dict/> */
		container = is_name(name, n, "dict") || is_name(name, n, "array");
		if (container && closing && depth > 0) {
			depth--;
		} else if (container && !closing && q[-1] != '/') {
			if (++depth > LM_PLIST_MAX_DEPTH)
				return LM_PLIST_TOO_DEEP;
		}
		p = q + 1;
	}
	return LM_PLIST_FINE;
}

int lm_plist_read(const char *data, size_t len, const char *what, plist_t *out, lm_plist_flaw *flaw)
{
	lm_plist_flaw f = LM_PLIST_NOT_PLIST;
	int binary, nomem = 0;

	*out = NULL;
	if (flaw != NULL)
		*flaw = LM_PLIST_FINE;
	binary = len >= 8 && memcmp(data, "bplist00", 8) == 0;
	if (data != NULL && len > 0 && len <= UINT32_MAX)
		f = binary ? bplist_check((const unsigned char *)data, len, &nomem) : xml_check(data, len);
	if (nomem)
		return lm_error_nomem();
	if (f == LM_PLIST_FINE) {
		if (binary)
			plist_from_bin(data, (uint32_t)len, out);
		else
			plist_from_xml(data, (uint32_t)len, out);
		if (*out == NULL)
			f = LM_PLIST_NOT_PLIST;
	}
	if (flaw != NULL)
		*flaw = f;
	switch (f) {
	case LM_PLIST_FINE:
		return 0;
	case LM_PLIST_TOO_DEEP:
		return lm_error_set(LM_EINVALID, "%s nests arrays and dictionaries more than %d deep, more than "
		    "lume-metal reads (macOS's own reader stops there too); it was not read", what, LM_PLIST_MAX_DEPTH);
	case LM_PLIST_NUL:
		return lm_error_set(LM_EINVALID, "%s holds %s, which lume-metal cannot keep exactly; it was not read",
		    what, binary ? "a string or key with a NUL character" : "a NUL character (XML allows none)");
	default:
		return lm_error_set(LM_EINVALID, "%s is not a property list (neither binary nor XML, or damaged or "
		    "truncated: %zu bytes)", what, len);
	}
}
