/* lume-metal shim: the tables every part of the shim shares, and its diagnostics.
 *
 * The configuration (written by shim.c's constructor), the device-class slots (claimed and
 * installed by hooks.c, read by the record writer and the probe's question) and why the private
 * hook is not installed (hooks.c, for records.c), with the three text helpers every part uses.
 * They live in this, the lowest file, which calls none of the others: the hooks call the record
 * writer, which reads the slots, so neither can own them without a circle among the files
 * (tests/hygiene/architecture.sh, hygiene_no_file_circles). Their layout: shim_internal.h.
 */
#include "shim_internal.h"

struct lm_shim_config lm_shim_cfg;
struct slot lm_shim_slots[LM_SLOTS];
const char *lm_shim_init_why = "class _MTLDevice not found";

/* ---- diagnostics ---------------------------------------------------------------------- */

int lm_shim_str_eq(const char *a, const char *b)
{
	while (*a != '\0' && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

/* The parts joined into dst (cap bytes; NUL-terminated, cut at cap - 1), control characters but
 * the line feed replaced with '?'. Returns the length. */
lm_size lm_shim_join(char *dst, lm_size cap, const char *const parts[], lm_size count)
{
	lm_size n = 0;

	for (lm_size i = 0; i < count; i++) {
		for (const char *p = parts[i]; p != 0 && *p != '\0' && n < cap - 1; p++)
			dst[n++] = (*p >= 0x20 && *p != 0x7f) || *p == '\n' ? *p : '?';
	}
	dst[n] = '\0';
	return n;
}

/* Why the process (why = lm_shim_cfg.why) or a class (its slot's why) stays stock: kept for the
 * record when why is not NULL, and one line on stderr with LUME_METAL_LOG=1:
 * "lume-metal-shim: stock: A B C\n". */
void lm_shim_log_stock(char *why, const char *a, const char *b, const char *c)
{
	char line[256];
	const char *parts[] = { "lume-metal-shim: stock: ", a, b, c, "\n" };
	lm_size n;

	if (why != 0)
		(void)lm_shim_join(why, LM_WHY, parts + 1, 3);
	if (!lm_shim_cfg.log)
		return;
	n = lm_shim_join(line, sizeof(line), parts, sizeof(parts) / sizeof(parts[0]));
	line[n - 1] = '\n';
	(void)write(2, line, n);
}
