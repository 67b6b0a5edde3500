/* Internal: bounds-checked text helpers shared by the profile and report parsers.
 *
 * Every parse of untrusted bytes goes through these few functions (OpenSSH's sshbuf idea):
 * a cursor that never reads past its length, a strict UTF-8 check, and small string tools.
 * Text from outside -- a guest's or a VM manager's output, a file not ours -- is cut into lines
 * and words by lm_scan alone (no strtok, no sscanf: tests/hygiene/check.sh one_line_reader),
 * and its numbers read by the strict lm_text_parse_* below. */
#ifndef LM_TEXT_H
#define LM_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* Largest integer a JSON number holds exactly (2^53 - 1); report and profile integers stay below. */
#define LM_JSON_INT_MAX 9007199254740991ULL

/* A read-only cursor over len bytes. */
typedef struct {
	const char *data;
	size_t len;
	size_t off;
} lm_scan;

void lm_scan_init(lm_scan *s, const char *data, size_t len);
size_t lm_scan_left(const lm_scan *s);

/* The next line, without its "\n". Returns 1 and sets *line and *n when a complete line was read,
 * 2 when the remaining bytes have no newline (the incomplete tail is returned, cursor at end),
 * 0 at the end of the data. A "\r" before the "\n" and NUL bytes are the line's own: callers
 * that care say what they do with them. */
int lm_scan_line(lm_scan *s, const char **line, size_t *n);

/* Within a line (a cursor made over one line with lm_scan_init): the next word. Blanks (' ' and
 * '\t') are skipped, then *w and *n are set to the bytes up to the next blank or the cursor's end
 * and the cursor stops at that blank. Returns 1 for a word, 0 when only blanks were left (the
 * cursor is then at its end). Any other byte, "\r" and NUL included, belongs to a word. */
int lm_scan_word(lm_scan *s, const char **w, size_t *n);

/* C's white space (isspace in the C locale): what sscanf's %s ends a word at. For lm_scan_token. */
#define LM_SCAN_SPACE " \t\n\v\f\r"

/* lm_scan_word with separators of the caller's choice (seps: a string; a NUL byte of the data
 * never separates): separators skipped, then the bytes up to the next one. strtok's tokens, over
 * the cursor's bytes: never an empty token. Returns 1 or 0 as lm_scan_word. */
int lm_scan_token(lm_scan *s, const char *seps, const char **t, size_t *n);

/* Moves past the bytes in set that come next (strspn); returns how many. */
size_t lm_scan_span(lm_scan *s, const char *set);

/* When the cursor's next bytes are prefix: moves past them and returns 1; else 0, cursor unmoved. */
int lm_scan_skip(lm_scan *s, const char *prefix);

/* The decimal number at the cursor: its digits ([0-9]+, every one that comes next) parsed as
 * lm_text_parse_u64 does and the cursor moved past them; -1 when there is no digit there or the
 * number is above max (the cursor is then unmoved). What follows the digits is the caller's. */
int lm_scan_u64(lm_scan *s, uint64_t max, uint64_t *out);

/* What is left: *rest and *n the bytes from the cursor to the end; the cursor is then at the end. */
void lm_scan_rest(lm_scan *s, const char **rest, size_t *n);

/* 0 when buf[0..len) is well-formed UTF-8 (no overlong forms, no surrogates, <= U+10FFFF);
 * otherwise -1 with *bad set to the offset of the first byte of the bad sequence. */
int lm_utf8_check(const char *buf, size_t len, size_t *bad);

/* Levenshtein distance, capped: returns cap + 1 as soon as the distance exceeds cap. */
size_t lm_text_distance(const char *a, const char *b, size_t cap);

/* Write s into out (size bytes, always terminated) sanitised (lm_text_sanitize, LM_TEXT_QUOTED)
 * with at most max_chars input bytes shown ("..." appended when cut). For messages. */
void lm_text_quote(char *out, size_t size, const char *s, size_t len, size_t max_chars);

/* snprintf into a fixed buffer that never cuts silently: 0, or -1 when the result does not fit
 * (out is then ""; the caller reports an error naming the limit). For data: paths, names. */
int lm_text_format(char *out, size_t size, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* snprintf for human text (messages, details): a result that does not fit ends in "..." so that
 * the cut shows, and never inside a UTF-8 sequence. lm_text_mark_cut does the same for a buffer
 * that (v)snprintf just returned n for. */
void lm_text_format_cut(char *out, size_t size, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void lm_text_mark_cut(char *out, size_t size, int n);

/* Parse an unsigned decimal [0-9]+ of n bytes into *out; -1 on anything else or above max. */
int lm_text_parse_u64(const char *s, size_t n, uint64_t max, uint64_t *out);

/* Parse a signed decimal -?[0-9]+ of n bytes into *out; -1 on anything else (a '+', blanks) or
 * outside [min, max]. */
int lm_text_parse_i64(const char *s, size_t n, int64_t min, int64_t max, int64_t *out);

/* Parse an unsigned hexadecimal [0-9A-Fa-f]+ of n bytes (no "0x") into *out; -1 on anything else
 * or above max. */
int lm_text_parse_hex(const char *s, size_t n, uint64_t max, uint64_t *out);

/* The first what in s[0..n) (memmem), or NULL. */
const char *lm_text_find(const char *s, size_t n, const char *what);

/* 1 when s[0..n) is the string lit exactly, else 0. */
int lm_text_is(const char *s, size_t n, const char *lit);

/* s[0..n) into out (size bytes) as a string: 0, or -1 when it does not fit or holds a NUL byte
 * (out is then ""). Never a cut. */
int lm_text_copy(char *out, size_t size, const char *s, size_t n);

/* s[0..n) as a new string (caller frees); NULL only when out of memory. A NUL byte among the n
 * would end the string early: callers check for one first where that matters. */
char *lm_text_dupn(const char *s, size_t n);

/* strdup that returns NULL only on allocation failure. */
char *lm_text_dup(const char *s);

/* The one sanitiser for input echoed back (messages, terminal output, JSON strings). Every byte
 * that is not printable, well-formed UTF-8 -- C0 and C1 controls (ESC and U+009B start terminal
 * escape sequences), DEL, stray, truncated or overlong bytes -- is written as the text \xNN, so
 * what is printed can neither drive a terminal nor make a JSON document invalid UTF-8.
 * LM_TEXT_QUOTED: the text goes between quotes: '"' and '\\' are escaped, \n \t \r written so.
 * LM_TEXT_LINES: a whole message: \n and \t are kept as they are.
 * Without either, \n \t \r are written as escapes (one line). */
#define LM_TEXT_QUOTED 1u
#define LM_TEXT_LINES 2u
/* Returns 0 or b's error (lm_buf_add). */
int lm_text_sanitize(lm_buf *b, const char *s, size_t len, unsigned flags);
/* The same for s[0..len) (NUL bytes included) into a new string (caller frees); NULL only when
 * out of memory. */
char *lm_text_sanitized(const char *s, size_t len, unsigned flags);

#endif
