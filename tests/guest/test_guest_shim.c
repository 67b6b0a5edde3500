/* Guest tests: the real shim preloaded (LD_PRELOAD) into the real probe and test clients, on the
 * fake Metal (GNU Objective-C runtime). Every child gets a clean environment built here, so the
 * results do not depend on the caller's environment or current directory.
 */
#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "lume-metal/family_list.h"
#include "lm_test.h"

#define STOCK_WSS "11453251584"

static const char *metal_dir(const char *variant)
{
	static char buf[4][1024];
	static int next;
	char *b = buf[next++ % 4];

	snprintf(b, sizeof(buf[0]), "%s/%s", LM_METAL_ROOT, variant);
	return b;
}

/* Environment: LD_LIBRARY_PATH=<variant dir>, LD_PRELOAD=<shim> when preload, then extra
 * "NAME=value" strings (NULL-terminated). */
static const char *preload_shim = LM_SHIM; /* the Tart image's build in test_tart_names_image_shim */

static void run_env(lm_test_result *r, const char *variant, int preload, char *const argv[], ...)
{
	static char lib[1100], pre[1100];
	char *envp[32];
	size_t n = 0;
	va_list ap;
	char *s;

	snprintf(lib, sizeof(lib), "LD_LIBRARY_PATH=%s", metal_dir(variant));
	envp[n++] = lib;
	if (preload) {
		snprintf(pre, sizeof(pre), "LD_PRELOAD=%s", preload_shim);
		envp[n++] = pre;
	}
	va_start(ap, argv);
	while ((s = va_arg(ap, char *)) != NULL && n < 31)
		envp[n++] = s;
	va_end(ap);
	envp[n] = NULL;
	lm_test_run(r, argv, envp, NULL);
}

/* The report the probe must print for the fake paravirtual device. ceiling 0: stock families. */
static void expected_report(char *buf, size_t cap, long ceiling, const char *tg, const char *wss, int active)
{
	size_t n = 0;

	n += (size_t)snprintf(buf + n, cap - n, "format=lume-metal-report/1\ndevice=Apple Paravirtual device\n");
#define FAMILY_LINE(name, value)                                                                   \
	{                                                                                          \
		int stock = (value >= 1001 && value <= 1005) || value == 2002 ||                   \
		    (value >= 3001 && value <= 3003);                                              \
		int on = stock || (value >= 1001 && value <= ceiling);                             \
		n += (size_t)snprintf(buf + n, cap - n, "family." #name "=%d\n", on);              \
	}
	LM_FAMILY_LIST(FAMILY_LINE)
#undef FAMILY_LINE
	snprintf(buf + n, cap - n,
	    "max_threadgroup_memory=%s\nrecommended_max_working_set_size=%s\nhas_unified_memory=1\n"
	    "shim_active=%d\nprobe_version=%s\nend=1\n", tg, wss, active, LM_VERSION);
}

/* ---- the environment table ----------------------------------------------------------- */

struct env_case {
	const char *family;   /* LUME_METAL_APPLE_FAMILY_MAX, NULL = absent */
	const char *tg;       /* LUME_METAL_MAX_THREADGROUP_MEMORY, NULL = absent */
	const char *wss;      /* LUME_METAL_RECOMMENDED_WORKING_SET_SIZE, NULL = absent */
	long ceiling;         /* expected: 0 = the process stays stock */
	const char *want_tg;
	const char *want_wss;
	const char *why;      /* stock: what the LUME_METAL_LOG=1 line says after "stock: " */
};

#define FAM "LUME_METAL_APPLE_FAMILY_MAX"
#define TG "LUME_METAL_MAX_THREADGROUP_MEMORY"
#define WSS "LUME_METAL_RECOMMENDED_WORKING_SET_SIZE"
#define ACTIVE(f, t, w, ceiling, want_tg, want_wss) { f, t, w, ceiling, want_tg, want_wss, NULL }
#define STOCK(f, t, w, why) { f, t, w, 0, "32768", STOCK_WSS, why }
#define LEADING_ZERO " has a leading zero (octal to other parsers: 010 is 8): write it without"
#define SIGN " has a sign: write a plain number"
#define SPACE " contains white space: write the number alone"

/* The rows of the compatibility table in docs/guest.md come first, in its order. */
static const struct env_case env_cases[] = {
	/* MAX_THREADGROUP_MEMORY empty: the default 65536, as Cua's shim. */
	ACTIVE("1009", "", NULL, 1009, "65536", STOCK_WSS),
	/* MAX_THREADGROUP_MEMORY=0: no raise, as Cua's shim; the families are still widened. */
	ACTIVE("1009", "0", NULL, 1009, "32768", STOCK_WSS),
	ACTIVE("1009", "0x0", NULL, 1009, "32768", STOCK_WSS),
	/* Hexadecimal in any variable: accepted, as Cua's shim. */
	ACTIVE("0x3F1", NULL, NULL, 1009, "65536", STOCK_WSS),
	ACTIVE("0x3f1", NULL, NULL, 1009, "65536", STOCK_WSS),
	ACTIVE("0X3F1", NULL, NULL, 1009, "65536", STOCK_WSS),
	ACTIVE("0x3E9", NULL, NULL, 1001, "65536", STOCK_WSS),
	ACTIVE("0x7CF", NULL, NULL, 1999, "65536", STOCK_WSS),
	ACTIVE("1009", "0x10000", NULL, 1009, "65536", STOCK_WSS),
	ACTIVE("1009", "0x20000", NULL, 1009, "131072", STOCK_WSS),
	ACTIVE("1009", "0X00020000", NULL, 1009, "131072", STOCK_WSS),
	ACTIVE("1009", "0xFFFFFFFFFFFFFFFF", NULL, 1009, "18446744073709551615", STOCK_WSS),
	ACTIVE("1009", NULL, "0x4A817C800", 1009, "65536", "20000000000"),
	ACTIVE("0x3f1", "0x20000", "0x4a817c800", 1009, "131072", "20000000000"),
	/* A leading zero, a sign or white space: Cua's shim takes them (010 as octal 8, -1 as
	 * 2^64-1, leading blanks skipped); ours stays stock and says why. In every variable. */
	STOCK("01009", NULL, NULL, FAM LEADING_ZERO),
	STOCK("1009", "010", NULL, TG LEADING_ZERO),
	STOCK("1009", "00", NULL, TG LEADING_ZERO),
	STOCK("1009", NULL, "020000000000", WSS LEADING_ZERO),
	STOCK("+1009", NULL, NULL, FAM SIGN),
	STOCK("-1009", NULL, NULL, FAM SIGN),
	STOCK("1009", "-1", NULL, TG SIGN),
	STOCK("1009", "+65536", NULL, TG SIGN),
	STOCK("1009", NULL, "+1", WSS SIGN),
	STOCK(" 1009", NULL, NULL, FAM SPACE),
	STOCK("1009 ", NULL, NULL, FAM SPACE),
	STOCK("\t1009", NULL, NULL, FAM SPACE),
	STOCK("1009\n", NULL, NULL, FAM SPACE),
	STOCK("1009", " 65536", NULL, TG SPACE),
	STOCK("1009", NULL, "20000000000 ", WSS SPACE),
	/* RECOMMENDED_WORKING_SET_SIZE empty: not set, as Cua's shim. */
	ACTIVE("1009", NULL, "", 1009, "65536", STOCK_WSS),
	/* APPLE_FAMILY_MAX absent, empty or outside 1001..1999: stock, as Cua's shim. */
	STOCK(NULL, NULL, NULL, FAM " is not set, or empty"),
	STOCK("", NULL, NULL, FAM " is not set, or empty"),
	STOCK("", "65536", "20000000000", FAM " is not set, or empty"),
	STOCK("0", NULL, NULL, FAM " must be in 1001..1999 (Apple families)"),
	STOCK("1000", NULL, NULL, FAM " must be in 1001..1999 (Apple families)"),
	STOCK("2000", NULL, NULL, FAM " must be in 1001..1999 (Apple families)"),
	STOCK("0x3E8", NULL, NULL, FAM " must be in 1001..1999 (Apple families)"),
	STOCK("0x7D0", NULL, NULL, FAM " must be in 1001..1999 (Apple families)"),

	/* The rest: plain values, and what neither shim accepts. */
	ACTIVE("1009", NULL, NULL, 1009, "65536", STOCK_WSS),
	ACTIVE("1007", NULL, NULL, 1007, "65536", STOCK_WSS),
	ACTIVE("1001", NULL, NULL, 1001, "65536", STOCK_WSS),
	ACTIVE("1010", NULL, NULL, 1010, "65536", STOCK_WSS),
	ACTIVE("1999", NULL, NULL, 1999, "65536", STOCK_WSS),
	ACTIVE("1009", "32768", NULL, 1009, "32768", STOCK_WSS),
	ACTIVE("1009", "16384", NULL, 1009, "32768", STOCK_WSS), /* only ever raised */
	ACTIVE("1009", "131072", NULL, 1009, "131072", STOCK_WSS),
	ACTIVE("1009", "18446744073709551615", NULL, 1009, "18446744073709551615", STOCK_WSS),
	ACTIVE("1009", NULL, "20000000000", 1009, "65536", "20000000000"),
	ACTIVE("1009", NULL, "1000", 1009, "65536", STOCK_WSS),
	ACTIVE("1009", NULL, "0", 1009, "65536", STOCK_WSS),
	ACTIVE("1009", "131072", "20000000000", 1009, "131072", "20000000000"),
	STOCK("1009abc", NULL, NULL, FAM " is not a decimal number"),
	STOCK("1009.0", NULL, NULL, FAM " is not a decimal number"),
	STOCK("0x3G1", NULL, NULL, FAM " is not a hexadecimal number"),
	STOCK("0x", NULL, NULL, FAM " is not a number"),
	STOCK("99999999999999999999999999", NULL, NULL, FAM " is too large"),
	STOCK("18446744073709552625", NULL, NULL, FAM " is too large"), /* 2^64 + 1009: wraps to 1009 if unchecked */
	STOCK("0x100000000000003F1", NULL, NULL, FAM " is too large"),
	STOCK(NULL, "65536", NULL, FAM " is not set, or empty"),        /* a floor alone does nothing */
	STOCK("1009", "abc", NULL, TG " is not a decimal number"),
	STOCK("1009", "64k", NULL, TG " is not a decimal number"),
	STOCK("1009", "18446744073709551616", NULL, TG " is too large"),
	STOCK("1009", "0x10000000000000000", NULL, TG " is too large"),
	STOCK("1009", NULL, "12GB", WSS " is not a decimal number"),
	STOCK("1009", NULL, "99999999999999999999", WSS " is too large"),
};

static void test_env_table(void **state)
{
	static char *argv[] = { LM_PROBE, "--report", NULL };
	size_t count = sizeof(env_cases) / sizeof(env_cases[0]);

	assert_true(count >= 65);
	for (size_t i = 0; i < count; i++) {
		const struct env_case *c = &env_cases[i];
		char f[128], t[128], w[128], line[256];
		char *extra[4] = { NULL, NULL, NULL, NULL };
		size_t e = 0;
		char want[4096];
		lm_test_result r;

		if (c->family)
			snprintf(f, sizeof(f), FAM "=%s", c->family), extra[e++] = f;
		if (c->tg)
			snprintf(t, sizeof(t), TG "=%s", c->tg), extra[e++] = t;
		if (c->wss)
			snprintf(w, sizeof(w), WSS "=%s", c->wss), extra[e++] = w;
		expected_report(want, sizeof(want), c->ceiling, c->want_tg, c->want_wss, c->ceiling != 0);

		/* Silent without LUME_METAL_LOG. */
		run_env(&r, "stock", 1, argv, extra[0], extra[1], extra[2], NULL);
		if (strcmp(r.out, want) != 0 || r.status != 0 || r.err_len != 0)
			fail_msg("case %zu (family=%s tg=%s wss=%s): status %d\n--- got\n%s--- want\n%s--- stderr\n%s",
			    i, c->family ? c->family : "(absent)", c->tg ? c->tg : "(absent)",
			    c->wss ? c->wss : "(absent)", r.status, r.out, want, r.err);

		/* With LUME_METAL_LOG=1: same answers, and exactly one line saying why when stock. */
		run_env(&r, "stock", 1, argv, "LUME_METAL_LOG=1", extra[0], extra[1], extra[2], NULL);
		assert_string_equal(r.out, want);
		if (c->ceiling == 0) {
			snprintf(line, sizeof(line), "lume-metal-shim: stock: %s\n", c->why);
			if (strcmp(r.err, line) != 0)
				fail_msg("case %zu: log line\n--- got\n%s--- want\n%s", i, r.err, line);
		} else {
			assert_int_equal(r.err_len, 0);
		}
	}
}

/* ---- the Tart images' names ------------------------------------------------------------ */

/* One case: the environment, and the answers it must give (ceiling 0: stock, with why). */
struct tart_case {
	const char *env[6];
	long ceiling;
	const char *want_tg;
	const char *want_wss;
	const char *why;
};

static void check_tart_case(size_t i, const struct tart_case *c)
{
	static char *argv[] = { LM_PROBE, "--report", NULL };
	char want[4096], line[256];
	lm_test_result r;

	expected_report(want, sizeof(want), c->ceiling, c->want_tg, c->want_wss, c->ceiling != 0);
	run_env(&r, "stock", 1, argv, "LUME_METAL_LOG=1", c->env[0], c->env[1], c->env[2], c->env[3], c->env[4], c->env[5],
	    NULL);
	if (strcmp(r.out, want) != 0 || r.status != 0)
		fail_msg("tart case %zu: status %d\n--- got\n%s--- want\n%s--- stderr\n%s", i, r.status, r.out, want, r.err);
	if (c->ceiling == 0) {
		snprintf(line, sizeof(line), "lume-metal-shim: stock: %s\n", c->why);
		if (strcmp(r.err, line) != 0)
			fail_msg("tart case %zu: log line\n--- got\n%s--- want\n%s", i, r.err, line);
	} else {
		assert_int_equal(r.err_len, 0);
	}
}

/* TART_METAL_* configure this shim as they configure the Tart images' TartMetalCapabilities.dylib;
 * each LUME_METAL_* variable, when set and not empty, wins over its TART_METAL_* twin. */
static void test_tart_names(void **state)
{
	static const struct tart_case cases[] = {
		{{"TART_METAL_APPLE_FAMILY_MAX=1009"}, 1009, "65536", STOCK_WSS, NULL},
		{{"TART_METAL_APPLE_FAMILY_MAX=1007", "TART_METAL_MAX_THREADGROUP_MEMORY=131072",
		  "TART_METAL_RECOMMENDED_WORKING_SET_SIZE=20000000000"}, 1007, "131072", "20000000000", NULL},
		/* both set: LUME_METAL_* wins, variable by variable */
		{{"LUME_METAL_APPLE_FAMILY_MAX=1009", "TART_METAL_APPLE_FAMILY_MAX=1006"}, 1009, "65536", STOCK_WSS, NULL},
		{{"LUME_METAL_APPLE_FAMILY_MAX=1006", "TART_METAL_APPLE_FAMILY_MAX=1009"}, 1006, "65536", STOCK_WSS, NULL},
		{{"LUME_METAL_APPLE_FAMILY_MAX=1009", "TART_METAL_MAX_THREADGROUP_MEMORY=131072"}, 1009, "131072", STOCK_WSS, NULL},
		{{"LUME_METAL_APPLE_FAMILY_MAX=1009", "LUME_METAL_MAX_THREADGROUP_MEMORY=65536",
		  "TART_METAL_MAX_THREADGROUP_MEMORY=131072"}, 1009, "65536", STOCK_WSS, NULL},
		{{"TART_METAL_APPLE_FAMILY_MAX=1009", "LUME_METAL_RECOMMENDED_WORKING_SET_SIZE=20000000000",
		  "TART_METAL_RECOMMENDED_WORKING_SET_SIZE=30000000000"}, 1009, "65536", "20000000000", NULL},
		/* an empty LUME_METAL_* one is not set: its twin is read */
		{{"LUME_METAL_APPLE_FAMILY_MAX=", "TART_METAL_APPLE_FAMILY_MAX=1008"}, 1008, "65536", STOCK_WSS, NULL},
		/* TART_METAL_APPLE_FAMILY_MAX=0 gives stock answers, as in the Tart images */
		{{"TART_METAL_APPLE_FAMILY_MAX=0"}, 0, "32768", STOCK_WSS,
		 "TART_METAL_APPLE_FAMILY_MAX must be in 1001..1999 (Apple families)"},
		{{"TART_METAL_APPLE_FAMILY_MAX=1009", "TART_METAL_MAX_THREADGROUP_MEMORY=64k"}, 0, "32768", STOCK_WSS,
		 "TART_METAL_MAX_THREADGROUP_MEMORY is not a decimal number"},
		/* a malformed LUME_METAL_* value is refused, not passed over for its twin */
		{{"LUME_METAL_APPLE_FAMILY_MAX=abc", "TART_METAL_APPLE_FAMILY_MAX=1009"}, 0, "32768", STOCK_WSS,
		 "LUME_METAL_APPLE_FAMILY_MAX is not a decimal number"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_tart_case(i, &cases[i]);
}

/* The simulated Tart image's shim (this shim built with LM_SHIM_TART_ONLY) reads TART_METAL_*
 * only, as the images' own TartMetalCapabilities.dylib does. */
static void test_tart_names_image_shim(void **state)
{
	static const struct tart_case cases[] = {
		{{"TART_METAL_APPLE_FAMILY_MAX=1009"}, 1009, "65536", STOCK_WSS, NULL},
		{{"LUME_METAL_APPLE_FAMILY_MAX=1009"}, 0, "32768", STOCK_WSS, "TART_METAL_APPLE_FAMILY_MAX is not set, or empty"},
		{{"LUME_METAL_APPLE_FAMILY_MAX=1009", "TART_METAL_APPLE_FAMILY_MAX=1006"}, 1006, "65536", STOCK_WSS, NULL},
	};

	(void)state;
	preload_shim = LM_TART_SHIM;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_tart_case(i, &cases[i]);
	preload_shim = LM_SHIM;
}

/* ---- children: decided at each spawn ------------------------------------------------------------- */

/* sh (shimmed through LD_PRELOAD=preload) runs a child that prints its LD_PRELOAD, then the probe
 * as another child. family: LUME_METAL_APPLE_FAMILY_MAX or NULL; extra: more "NAME=value" strings
 * (NULL-terminated; NULL: none). */
static void run_shimmed_shell_env(lm_test_result *r, const char *preload, const char *family, char *const extra[])
{
	static char script[] = "/usr/bin/env | grep '^LD_PRELOAD=' || echo 'LD_PRELOAD unset'; "
	                       "\"$0\" --report | grep -e '^shim_active=' -e '^family.Apple9='";
	char *argv[] = { "/bin/sh", "-c", script, LM_PROBE, NULL };
	char lib[1100], pre[4200], fam[128];
	char *envp[12];
	size_t n = 0;

	snprintf(lib, sizeof(lib), "LD_LIBRARY_PATH=%s", metal_dir("stock"));
	snprintf(pre, sizeof(pre), "LD_PRELOAD=%s", preload);
	envp[n++] = lib;
	envp[n++] = pre;
	if (family != NULL) {
		snprintf(fam, sizeof(fam), "LUME_METAL_APPLE_FAMILY_MAX=%s", family);
		envp[n++] = fam;
	}
	for (size_t i = 0; extra != NULL && extra[i] != NULL && n < 11; i++)
		envp[n++] = extra[i];
	envp[n] = NULL;
	lm_test_run(r, argv, envp, NULL);
	assert_int_equal(r->status, 0);
	assert_int_equal(r->err_len, 0);
}

/* The spawn rule (docs/guest.md, "Children: decided at each spawn"): a shimmed sh starts
 * /usr/bin/env (protected) and the probe (not); each row is the extra environment and what each
 * child got. */
static void test_children_spawn_rule(void **state)
{
	static const struct {
		const char *extra[3];
		int env_keeps, probe_keeps;
	} cases[] = {
		{ { "LUME_METAL_GUEST_SIP=disabled" }, 0, 1 },
		{ { "LUME_METAL_GUEST_SIP=custom" }, 0, 1 },
		{ { NULL }, 0, 1 }, /* SIP not reported: as not enabled */
		{ { "LUME_METAL_GUEST_SIP=enabled" }, 1, 1 },
		{ { "LUME_METAL_GUEST_SIP=disabled", "LUME_METAL_SHIM_ARM64E=1" }, 1, 1 },
		{ { "LUME_METAL_GUEST_SIP=disabled", "LUME_METAL_SHIM_ARM64E=yes" }, 0, 1 },
		{ { "LUME_METAL_GUEST_SIP=disabled", "LUME_METAL_INHERIT=1" }, 1, 1 },
		{ { "LUME_METAL_GUEST_SIP=enabled", "LUME_METAL_INHERIT=0" }, 0, 0 },
		{ { "LUME_METAL_GUEST_SIP=disabled", "LUME_METAL_INHERIT=yes" }, 0, 1 },
	};
	char metal[1100], preload[4200], want[8400];
	char *sip_off[] = { "LUME_METAL_GUEST_SIP=disabled", NULL };
	lm_test_result r;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *extra[] = { (char *)cases[i].extra[0], (char *)cases[i].extra[1], NULL };

		run_shimmed_shell_env(&r, LM_SHIM, "1009", extra);
		snprintf(want, sizeof(want), "%s%s%s\nfamily.Apple9=%d\nshim_active=%d\n",
		    cases[i].env_keeps ? "LD_PRELOAD=" : "LD_PRELOAD unset", cases[i].env_keeps ? LM_SHIM : "", "",
		    cases[i].probe_keeps, cases[i].probe_keeps);
		if (strcmp(r.out, want) != 0)
			fail_msg("case %zu (%s %s): got\n%s\nwant\n%s", i, cases[i].extra[0] ? cases[i].extra[0] : "",
			    cases[i].extra[1] ? cases[i].extra[1] : "", r.out, want);
	}

	/* Removed: only the shim's entries go, the others are kept in order, whatever separated
	 * them; a child that may keep it gets the variable exactly as it was. */
	snprintf(metal, sizeof(metal), "%s/libMetal.so", metal_dir("stock"));
	snprintf(preload, sizeof(preload), "%s:%s %s", metal, LM_SHIM, metal);
	snprintf(want, sizeof(want), "LD_PRELOAD=%s:%s\nfamily.Apple9=1\nshim_active=1\n", metal, metal);
	run_shimmed_shell_env(&r, preload, "1009", sip_off);
	assert_string_equal(r.out, want);
	snprintf(preload, sizeof(preload), "%s::%s", LM_SHIM, metal);
	snprintf(want, sizeof(want), "LD_PRELOAD=%s\nfamily.Apple9=1\nshim_active=1\n", metal);
	run_shimmed_shell_env(&r, preload, "1009", sip_off);
	assert_string_equal(r.out, want);
	/* Not configured: the rule is the same (the protected child starts without it). */
	run_shimmed_shell_env(&r, LM_SHIM, NULL, sip_off);
	assert_string_equal(r.out, "LD_PRELOAD unset\nfamily.Apple9=0\nshim_active=0\n");
}

/* ---- the published probe interface ---------------------------------------------------- */

static void test_published_lines(void **state)
{
	static char *plain[] = { LM_PROBE, NULL };
	static char *fam1007[] = { LM_PROBE, "1007", NULL };
	static char *metal3[] = { LM_PROBE, "5001", NULL };
	lm_test_result r;

	run_env(&r, "stock", 0, plain, NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "device=Apple Paravirtual device\nfamily=1009\nsupports_family=false\n"
	    "max_threadgroup_memory=32768\n");
	assert_int_equal(r.err_len, 0);

	run_env(&r, "stock", 1, plain, "LUME_METAL_APPLE_FAMILY_MAX=1009", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "device=Apple Paravirtual device\nfamily=1009\nsupports_family=true\n"
	    "max_threadgroup_memory=65536\n");

	run_env(&r, "stock", 1, fam1007, "LUME_METAL_APPLE_FAMILY_MAX=1007", NULL);
	assert_string_equal(r.out, "device=Apple Paravirtual device\nfamily=1007\nsupports_family=true\n"
	    "max_threadgroup_memory=65536\n");

	run_env(&r, "stock", 1, metal3, "LUME_METAL_APPLE_FAMILY_MAX=1999", NULL);
	assert_string_equal(r.out, "device=Apple Paravirtual device\nfamily=5001\nsupports_family=false\n"
	    "max_threadgroup_memory=65536\n");
}

static void test_probe_bad_arguments(void **state)
{
	static const char *bad[] = { "abc", "-1", "+1009", "1009x", "", "0", "0x3F1", "123456", " 1009" };
	lm_test_result r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *argv[] = { LM_PROBE, (char *)bad[i], NULL };
		char want[128];

		run_env(&r, "stock", 1, argv, "LUME_METAL_APPLE_FAMILY_MAX=1009", NULL);
		snprintf(want, sizeof(want), "invalid family: %s\n", bad[i]);
		assert_int_equal(r.status, 2);
		assert_string_equal(r.err, want);
		assert_int_equal(r.out_len, 0);
	}
	{
		char *argv[] = { LM_PROBE, "1009", "1007", NULL };
		run_env(&r, "stock", 0, argv, NULL);
		assert_int_equal(r.status, 2);
		assert_string_equal(r.err, "invalid family: 1007\n");
	}
}

/* --exec-self and --spawn-self (selftest's launchers): the probe again with --report, in place
 * (execve here: glibc has no POSIX_SPAWN_SETEXEC) or as a child whose status it passes on; the
 * shim, preloaded, reaches the second probe (shim_active=1); stock, it does not. Started by a
 * relative path it refuses (127): it never searches for itself. */
static void test_probe_self(void **state)
{
	static char *modes[] = { "--exec-self", "--spawn-self" };
	char *relative[] = { "/bin/sh", "-c", "cd \"$(dirname \"$0\")\" && exec ./metal-capabilities --spawn-self",
		LM_PROBE, NULL };
	lm_test_result r;
	size_t i;

	(void)state;
	for (i = 0; i < 2; i++) {
		char *argv[] = { LM_PROBE, modes[i], NULL };
		run_env(&r, "stock", 1, argv, FAM "=1009", NULL);
		if (r.status != 0 || strstr(r.out, "\nshim_active=1\n") == NULL || strstr(r.out, "\nfamily.Apple9=1\n") == NULL)
			fail_msg("%s with the shim: status %d\n%s%s", modes[i], r.status, r.out, r.err);
		run_env(&r, "stock", 0, argv, NULL);
		if (r.status != 0 || strstr(r.out, "\nshim_active=0\n") == NULL)
			fail_msg("%s stock: status %d\n%s%s", modes[i], r.status, r.out, r.err);
	}
	run_env(&r, "stock", 0, relative, NULL);
	assert_int_equal(r.status, 127);
	assert_int_equal(r.out_len, 0);
	assert_non_null(strstr(r.err, "need the probe started by its absolute path"));
}

static void test_probe_no_device(void **state)
{
	static char *plain[] = { LM_PROBE, NULL };
	static char *report[] = { LM_PROBE, "--report", NULL };
	lm_test_result r;

	run_env(&r, "stock", 1, plain, "LM_FAKE_METAL_NO_DEVICE=1", "LUME_METAL_APPLE_FAMILY_MAX=1009", NULL);
	assert_int_equal(r.status, 1);
	assert_string_equal(r.err, "Metal device unavailable\n");
	assert_int_equal(r.out_len, 0);
	run_env(&r, "stock", 0, report, "LM_FAKE_METAL_NO_DEVICE=1", NULL);
	assert_int_equal(r.status, 1);
	assert_string_equal(r.err, "Metal device unavailable\n");
}

/* ---- finding the device ---------------------------------------------------------------- */

#define WIDE_1009 "class=AppleParavirtDevice name=Apple Paravirtual device Apple5=1 Apple6=1 Apple7=1 " \
	"Apple9=1 Apple10=0 Mac1=0 Mac2=1 Common1=1 Common3=1 Metal3=0 Metal4=0 Unknown9999=0 "
#define STOCK_LINE "class=AppleParavirtDevice name=Apple Paravirtual device Apple5=1 Apple6=0 Apple7=0 " \
	"Apple9=0 Apple10=0 Mac1=0 Mac2=1 Common1=1 Common3=1 Metal3=0 Metal4=0 Unknown9999=0 "

static void test_default_device_and_super(void **state)
{
	static char *argv[] = { LM_DEVICES, "default", NULL };
	lm_test_result r;

	/* The concrete class overrides supportsFamily: and calls super; the base keeps its stock answer. */
	run_env(&r, "stock", 1, argv, "LUME_METAL_APPLE_FAMILY_MAX=1009", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, WIDE_1009 "tg=65536 wss=" STOCK_WSS " base.Apple9=0\n");

	run_env(&r, "stock", 0, argv, NULL);
	assert_string_equal(r.out, STOCK_LINE "tg=32768 wss=" STOCK_WSS " base.Apple9=0\n");
}

static void test_copy_all_devices(void **state)
{
	static char *argv[] = { LM_DEVICES, "all", NULL };
	lm_test_result r;

	run_env(&r, "stock", 1, argv, "LUME_METAL_APPLE_FAMILY_MAX=1009",
	    "LUME_METAL_RECOMMENDED_WORKING_SET_SIZE=20000000000", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "count=1\n" WIDE_1009 "tg=65536 wss=20000000000 base.Apple9=0\n");

	/* Private class missing: the interposed MTLCopyAllDevices finds the device. */
	run_env(&r, "noprivate", 1, argv, "LUME_METAL_APPLE_FAMILY_MAX=1009", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "count=1\n" WIDE_1009 "tg=65536 wss=" STOCK_WSS " base.Apple9=-\n");
}

static void test_dlopen_after_start(void **state)
{
	char path[1200];
	char *argv[] = { LM_DEVICES_DLOPEN, path, "default", NULL };
	lm_test_result r;

	/* Metal loaded with dlopen(RTLD_LOCAL) after start and called through its own handle: only the
	 * runtime's class-load callback can see it; -[_MTLDevice initGPUFamilySupport] does the rest. */
	snprintf(path, sizeof(path), "%s/libMetal.so", metal_dir("stock"));
	run_env(&r, "stock", 1, argv, "LUME_METAL_APPLE_FAMILY_MAX=1009", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, WIDE_1009 "tg=65536 wss=" STOCK_WSS " base.Apple9=0\n");

	/* Without the private class nothing can reach such a device: it stays stock, no crash. */
	snprintf(path, sizeof(path), "%s/libMetal.so", metal_dir("noprivate"));
	run_env(&r, "stock", 1, argv, "LUME_METAL_APPLE_FAMILY_MAX=1009", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, STOCK_LINE "tg=32768 wss=" STOCK_WSS " base.Apple9=-\n");
}

static void test_private_class_missing(void **state)
{
	static char *argv[] = { LM_PROBE, "--report", NULL };
	char want[4096];
	lm_test_result r;

	expected_report(want, sizeof(want), 1009, "65536", STOCK_WSS, 1);
	run_env(&r, "noprivate", 1, argv, "LUME_METAL_APPLE_FAMILY_MAX=1009", "LUME_METAL_LOG=1", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, want);
	assert_int_equal(r.err_len, 0);
}

static void test_init_method_missing(void **state)
{
	static char *report[] = { LM_PROBE, "--report", NULL };
	static char *devices[] = { LM_DEVICES, "default", NULL };
	char want[4096];
	lm_test_result r;

	expected_report(want, sizeof(want), 1008, "65536", STOCK_WSS, 1);
	run_env(&r, "noinit", 1, report, "LUME_METAL_APPLE_FAMILY_MAX=1008", "LUME_METAL_LOG=1", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, want);
	assert_int_equal(r.err_len, 0);

	run_env(&r, "noinit", 1, devices, "LUME_METAL_APPLE_FAMILY_MAX=1009", NULL);
	assert_string_equal(r.out, WIDE_1009 "tg=65536 wss=" STOCK_WSS " base.Apple9=0\n");
}

static void test_unsupported_metal_stays_stock(void **state)
{
	static char *report[] = { LM_PROBE, "--report", NULL };
	static char *plain[] = { LM_PROBE, NULL };
	char want[4096];
	lm_test_result r;

	expected_report(want, sizeof(want), 0, "32768", STOCK_WSS, 0);
	run_env(&r, "unsupported", 1, report, "LUME_METAL_APPLE_FAMILY_MAX=1009", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, want);
	assert_int_equal(r.err_len, 0);

	run_env(&r, "unsupported", 1, plain, "LUME_METAL_APPLE_FAMILY_MAX=1009", "LUME_METAL_LOG=1", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "device=Apple Paravirtual device\nfamily=1009\nsupports_family=false\n"
	    "max_threadgroup_memory=32768\n");
	assert_int_equal(lm_test_count(r.err, "\n"), 1);
	lm_assert_contains(r.err, "lume-metal-shim: stock: AppleParavirtDevice has an unexpected signature for supportsFamily:");
}

static void test_other_answers_unchanged(void **state)
{
	static char *argv[] = { LM_DEVICES, "default", NULL };
	lm_test_result r;

	/* The highest ceiling: Apple families all true; Mac, Common, Metal3, Metal4, unknown and the
	 * name stay the device's own. */
	run_env(&r, "stock", 1, argv, "LUME_METAL_APPLE_FAMILY_MAX=1999", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "class=AppleParavirtDevice name=Apple Paravirtual device Apple5=1 Apple6=1 "
	    "Apple7=1 Apple9=1 Apple10=1 Mac1=0 Mac2=1 Common1=1 Common3=1 Metal3=0 Metal4=0 Unknown9999=0 "
	    "tg=65536 wss=" STOCK_WSS " base.Apple9=0\n");
}

static void test_threads_preloaded(void **state)
{
	static char *wide[] = { LM_DEVICES, "threads", "1", NULL };
	static char *stock[] = { LM_DEVICES, "threads", "0", NULL };
	lm_test_result r;

	run_env(&r, "stock", 1, wide, "LUME_METAL_APPLE_FAMILY_MAX=1009", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "threads=16 devices=1024 mismatches=0\n");

	run_env(&r, "noprivate", 1, wide, "LUME_METAL_APPLE_FAMILY_MAX=1009", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "threads=16 devices=1024 mismatches=0\n");

	run_env(&r, "stock", 1, stock, "LUME_METAL_APPLE_FAMILY_MAX=1009x", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "threads=16 devices=1024 mismatches=0\n");
}

static void test_report_escaping(void **state)
{
	static char *argv[] = { LM_PROBE, "--report", NULL };
	lm_test_result r;

	/* One line per key whatever the device name holds: \ \n \r \t spelled out, other control
	 * bytes as \xHH, everything else (UTF-8 included) verbatim. */
	static const char want[] = "format=lume-metal-report/1\ndevice=a\\\\b\\tc\\nd\\re\\x01f\\x7fg\xc3\xa9=h\n"
	    "family.Apple1=1\n";

	run_env(&r, "stock", 1, argv, "LM_FAKE_METAL_NAME=a\\b\tc\nd\re\x01" "f\x7f" "g\xc3\xa9=h",
	    "LUME_METAL_APPLE_FAMILY_MAX=1009", NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(lm_test_count(r.out, "\n"), 2 + 17 + 6);
	assert_memory_equal(r.out, want, sizeof(want) - 1);
	lm_assert_contains(r.out, "\nshim_active=1\nprobe_version=" LM_VERSION "\nend=1\n");
}

/* ---- the exercise (probe --exercise, the fake Metal's compute path) ----------------------- */

#define TG64_ERROR "error: Threadgroup memory size (65536) exceeds the maximum threadgroup memory allowed (32768)\n"

/* The probe's output from its exercise lines on (they follow probe_version). */
/* The exercise's lines, without its own time (exercise_us=N, whose value is the clock's): that
 * line is checked for its form and taken out, so that the lines compare whole. */
static const char *exercise_part(lm_test_result *r)
{
	char *at = strstr(r->out, "\nexercise."), *us;
	size_t digits;

	assert_non_null(at);
	if ((us = strstr(at, "\nexercise_us=")) != NULL) {
		digits = strspn(us + 13, "0123456789");
		assert_true(digits > 0);
		assert_int_equal(us[13 + digits], '\n');
		memmove(us + 1, us + 14 + digits, strlen(us + 14 + digits) + 1);
	}
	return at + 1;
}

/* The exercise lines at the unlocked level, and at the restricted one (docs/guest.md). */
static const char exercise_unlocked[] =
    "exercise.simdgroup_reduction=pass\n"
    "exercise.simdgroup_matrix=pass\n"
    "exercise.bfloat16=pass\n"
    "exercise.threadgroup_memory.16384=pass\n"
    "exercise.threadgroup_memory.32768=pass\n"
    "exercise.threadgroup_memory.65536=" TG64_ERROR
    "exercise.nocopy_buffer=pass\n"
    "exercise.indirect_command_buffer=pass\n"
    "end=1\n";
static const char exercise_restricted[] =
    "exercise.simdgroup_reduction=error: Encountered unlowered function call to air.simd_sum.f32\n"
    "exercise.simdgroup_matrix=error: Encountered unlowered function call to "
    "air.simdgroup_matrix_8x8_multiply_accumulate.v64f32.v64f32.v64f32.v64f32\n"
    "exercise.bfloat16=error: Encountered unlowered function call to air.convert.bf16.f32\n"
    "exercise.threadgroup_memory.16384=pass\n"
    "exercise.threadgroup_memory.32768=pass\n"
    "exercise.threadgroup_memory.65536=" TG64_ERROR
    "exercise.nocopy_buffer=pass\n"
    "exercise.indirect_command_buffer=pass\n"
    "end=1\n";

static void test_exercise_unlocked(void **state)
{
	static char *argv[] = { LM_PROBE, "--exercise", NULL };
	lm_test_result r;

	/* With the shim, at the unlocked level: the answers and the work agree. */
	run_env(&r, "stock", 1, argv, "LUME_METAL_APPLE_FAMILY_MAX=1009", "LM_FAKE_METAL_FEATURE_LEVEL=unlocked", NULL);
	assert_int_equal(r.status, 0);
	assert_memory_equal(r.out, "format=lume-metal-report/1.2\n", 29);
	lm_assert_contains(r.out, "\nfamily.Apple9=1\n");
	lm_assert_contains(r.out, "\nshim_active=1\n");
	assert_string_equal(exercise_part(&r), exercise_unlocked);
	/* --report --exercise is the same; without the shim too (the work does not depend on it). */
	{
		char *both[] = { LM_PROBE, "--report", "--exercise", NULL };
		lm_test_result r2;
		run_env(&r2, "stock", 0, both, "LM_FAKE_METAL_FEATURE_LEVEL=unlocked", NULL);
		assert_int_equal(r2.status, 0);
		assert_string_equal(exercise_part(&r2), exercise_part(&r));
		lm_assert_contains(r2.out, "\nshim_active=0\n");
	}
}

static void test_exercise_restricted(void **state)
{
	static char *argv[] = { LM_PROBE, "--exercise", NULL };
	lm_test_result r;

	/* The shim claims Apple9; a VM that started at the restricted level cannot build the kernels. */
	run_env(&r, "stock", 1, argv, "LUME_METAL_APPLE_FAMILY_MAX=1009", "LM_FAKE_METAL_FEATURE_LEVEL=restricted", NULL);
	assert_int_equal(r.status, 0);
	lm_assert_contains(r.out, "\nfamily.Apple9=1\n");
	assert_string_equal(exercise_part(&r), exercise_restricted);
	/* No level given: restricted, as a stock host. */
	run_env(&r, "stock", 1, argv, "LUME_METAL_APPLE_FAMILY_MAX=1009", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(exercise_part(&r), exercise_restricted);
}

static void test_exercise_no_compute_path(void **state)
{
	static char *argv[] = { LM_PROBE, "--exercise", NULL };
#define NO_COMPUTE "error: Metal's AppleParavirtDevice does not implement -newLibraryWithSource:options:error: (no compute path)\n"
	lm_test_result r;

	run_env(&r, "nocompute", 1, argv, "LUME_METAL_APPLE_FAMILY_MAX=1009", "LM_FAKE_METAL_FEATURE_LEVEL=unlocked", NULL);
	assert_int_equal(r.status, 0);
	lm_assert_contains(r.out, "\nshim_active=1\n");
	assert_string_equal(exercise_part(&r),
	    "exercise.simdgroup_reduction=" NO_COMPUTE "exercise.simdgroup_matrix=" NO_COMPUTE
	    "exercise.bfloat16=" NO_COMPUTE "exercise.threadgroup_memory.16384=" NO_COMPUTE
	    "exercise.threadgroup_memory.32768=" NO_COMPUTE "exercise.threadgroup_memory.65536=" NO_COMPUTE
	    "exercise.nocopy_buffer=" NO_COMPUTE "exercise.indirect_command_buffer=" NO_COMPUTE "end=1\n");
#undef NO_COMPUTE
}

static void test_exercise_hang_and_wrong_numbers(void **state)
{
	static char *argv[] = { LM_PROBE, "--exercise", "--timeout-ms=50", NULL };
	lm_test_result r;

	/* A kernel whose command buffer never completes is abandoned and reported; the others still
	 * run. A kernel that computes something else is a fail, with what differed. */
	run_env(&r, "stock", 1, argv, "LUME_METAL_APPLE_FAMILY_MAX=1009", "LM_FAKE_METAL_FEATURE_LEVEL=unlocked",
	    "LM_FAKE_METAL_HANG=lm_simdgroup_mma", "LM_FAKE_METAL_WRONG=lm_bfloat_fma", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(exercise_part(&r),
	    "exercise.simdgroup_reduction=pass\n"
	    "exercise.simdgroup_matrix=error: the kernel did not complete within 50 ms; abandoned\n"
	    "exercise.bfloat16=fail: element 0 is 1.007812, expected 0.007812\n"
	    "exercise.threadgroup_memory.16384=pass\n"
	    "exercise.threadgroup_memory.32768=pass\n"
	    "exercise.threadgroup_memory.65536=" TG64_ERROR
	    "exercise.nocopy_buffer=pass\n"
	    "exercise.indirect_command_buffer=pass\n"
	    "end=1\n");
	run_env(&r, "stock", 1, argv, "LUME_METAL_APPLE_FAMILY_MAX=1009", "LM_FAKE_METAL_FEATURE_LEVEL=unlocked",
	    "LM_FAKE_METAL_WRONG=lm_threadgroup_memory", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "\nexercise.threadgroup_memory.16384=fail: thread 0 read back 33095681, "
	    "expected 33095680\n"));
}

/* The exercise's value for `name` in the probe's output: what follows "exercise.NAME=" up to the
 * end of the line, copied to buf. */
static const char *exercise_value(const lm_test_result *r, const char *name, char *buf, size_t cap)
{
	char key[96];
	const char *at, *end;

	snprintf(key, sizeof(key), "\nexercise.%s=", name);
	at = strstr(r->out, key);
	assert_non_null(at);
	at += strlen(key);
	end = strchr(at, '\n');
	assert_non_null(end);
	snprintf(buf, cap, "%.*s", (int)(end - at), at);
	return buf;
}

/* Each exercise fails on a fake GPU that makes the mistake it is for (LM_FAKE_METAL_WRONG=
 * <kernel>:<mistake>, LM_FAKE_METAL_DEFECTS), one wrong fake at a time, with what differed; every
 * other exercise still passes. The right fake passes them all (test_exercise_unlocked). */
static void test_exercise_each_mistake(void **state)
{
	static char *argv[] = { LM_PROBE, "--exercise", NULL };
	static const struct {
		const char *env, *exercise, *want;
	} cases[] = {
		{"LM_FAKE_METAL_WRONG=lm_simd_sum:lanes", "simdgroup_reduction", "fail: prefix of thread 1 is 32, expected 1"},
		{"LM_FAKE_METAL_WRONG=lm_simd_sum:half_simd", "simdgroup_reduction", "fail: total 0 is 784, expected 2080"},
		{"LM_FAKE_METAL_WRONG=lm_simdgroup_mma:transpose_a", "simdgroup_matrix", "fail: element 0 is "},
		{"LM_FAKE_METAL_WRONG=lm_simdgroup_mma:transpose_b", "simdgroup_matrix", "fail: element 0 is "},
		{"LM_FAKE_METAL_WRONG=lm_simdgroup_mma:swap", "simdgroup_matrix", "fail: element 0 is "},
		{"LM_FAKE_METAL_WRONG=lm_simdgroup_mma:lanes", "simdgroup_matrix", "fail: element 0 is "},
		{"LM_FAKE_METAL_WRONG=lm_bfloat_fma:float", "bfloat16", "fail: element 0 is 0.005859, expected 0.007812"},
		{"LM_FAKE_METAL_WRONG=lm_bfloat_fma:truncate", "bfloat16", "fail: element 0 is 0, expected 0.007812"},
		{"LM_FAKE_METAL_WRONG=lm_threadgroup_memory:alias", "threadgroup_memory.16384", "fail: thread 0 read back "},
		{"LM_FAKE_METAL_DEFECTS=nocopy_buffer", "nocopy_buffer", "fail: after the CPU wrote the mapped file's "
		    "memory again, word 0 reached the GPU as 1, expected 10001 (the value before the write: the GPU read "
		    "a stale copy)"},
		{"LM_FAKE_METAL_DEFECTS=indirect_command_buffer", "indirect_command_buffer", "fail: the dispatch in the "
		    "indirect command buffer did not run (its output is untouched)"},
	};
	static const char *const all[] = {"simdgroup_reduction", "simdgroup_matrix", "bfloat16",
		"threadgroup_memory.16384", "threadgroup_memory.32768", "nocopy_buffer", "indirect_command_buffer"};
	char got[1100];
	size_t i, k;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		lm_test_result r;
		run_env(&r, "stock", 1, argv, "LUME_METAL_APPLE_FAMILY_MAX=1009", "LM_FAKE_METAL_FEATURE_LEVEL=unlocked",
		    cases[i].env, NULL);
		assert_int_equal(r.status, 0);
		exercise_value(&r, cases[i].exercise, got, sizeof(got));
		if (strncmp(got, cases[i].want, strlen(cases[i].want)) != 0)
			fail_msg("%s: exercise.%s=%s, expected %s...", cases[i].env, cases[i].exercise, got, cases[i].want);
		for (k = 0; k < sizeof(all) / sizeof(all[0]); k++)
			if (strcmp(all[k], cases[i].exercise) != 0 &&
			    !(strcmp(cases[i].exercise, "threadgroup_memory.16384") == 0 &&
			        strcmp(all[k], "threadgroup_memory.32768") == 0) &&
			    strcmp(exercise_value(&r, all[k], got, sizeof(got)), "pass") != 0)
				fail_msg("%s: exercise.%s=%s, expected pass", cases[i].env, all[k], got);
	}
	/* A mistake the fake does not know is an error, never a pass. */
	{
		lm_test_result r;
		run_env(&r, "stock", 1, argv, "LM_FAKE_METAL_FEATURE_LEVEL=unlocked", "LM_FAKE_METAL_WRONG=lm_bfloat_fma:typo",
		    NULL);
		lm_assert_contains(exercise_value(&r, "bfloat16", got, sizeof(got)), "error: Execution of the command buffer "
		    "was aborted due to an error during execution. LM_FAKE_METAL_WRONG names a mistake");
	}
}

static void test_exercise_bad_options(void **state)
{
	static const char *bad[] = { "--timeout-ms=0", "--timeout-ms=", "--timeout-ms=3600001", "--timeout-ms=01",
		"--timeout-ms=5s", "1009", "--exercises" };
	lm_test_result r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *argv[] = { LM_PROBE, "--exercise", (char *)bad[i], NULL };
		char want[128];

		run_env(&r, "stock", 0, argv, NULL);
		snprintf(want, sizeof(want), "invalid option: %s\n", bad[i]);
		assert_int_equal(r.status, 2);
		assert_string_equal(r.err, want);
		assert_int_equal(r.out_len, 0);
	}
}

/* ---- the fake Metal itself, with no shim in the process ------------------------------------- */

/* What the paravirtual device answers stock (docs/guest.md, "The fake Metal"): the same device
 * from MTLCreateSystemDefaultDevice and MTLCopyAllDevices, the concrete class over a private base
 * class (none in the noprivate variant), no device at all with LM_FAKE_METAL_NO_DEVICE, another
 * name with LM_FAKE_METAL_NAME. */
static void test_fake_metal_stock_device(void **state)
{
	static char *dflt[] = { LM_DEVICES, "default", NULL };
	static char *all[] = { LM_DEVICES, "all", NULL };
	lm_test_result r;

	run_env(&r, "stock", 0, dflt, NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, STOCK_LINE "tg=32768 wss=" STOCK_WSS " base.Apple9=0\n");
	run_env(&r, "stock", 0, all, NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "count=1\n" STOCK_LINE "tg=32768 wss=" STOCK_WSS " base.Apple9=0\n");
	run_env(&r, "noprivate", 0, dflt, NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, STOCK_LINE "tg=32768 wss=" STOCK_WSS " base.Apple9=-\n");
	run_env(&r, "stock", 0, dflt, "LM_FAKE_METAL_NO_DEVICE=1", NULL);
	assert_int_equal(r.status, 1);
	assert_int_equal(r.out_len, 0);
	run_env(&r, "stock", 0, all, "LM_FAKE_METAL_NO_DEVICE=1", NULL);
	assert_int_equal(r.status, 1);
	assert_string_equal(r.out, "count=0\n");
	run_env(&r, "stock", 0, dflt, "LM_FAKE_METAL_NAME=Some GPU", NULL);
	assert_int_equal(r.status, 0);
	lm_assert_contains(r.out, "class=AppleParavirtDevice name=Some GPU Apple5=1 Apple6=0 ");
}

/* The compute path with no shim: the unlocked kernels run at the unlocked level the VM started
 * with (LM_FAKE_METAL_FEATURE_LEVEL; absent is restricted), and at the restricted level fail,
 * write zeros or run by LM_FAKE_METAL_STOCK_KERNELS's mode, more than 32 KB of
 * threadgroup memory fails at both, the nocompute variant has no compute path, and the test
 * hooks hang a kernel or make it compute wrong numbers. */
static void test_fake_metal_compute_levels(void **state)
{
	static char *argv[] = { LM_PROBE, "--exercise", "--timeout-ms=50", NULL };
	lm_test_result r;

	run_env(&r, "stock", 0, argv, "LM_FAKE_METAL_FEATURE_LEVEL=unlocked", NULL);
	assert_int_equal(r.status, 0);
	lm_assert_contains(r.out, "\nshim_active=0\n");
	assert_string_equal(exercise_part(&r), exercise_unlocked);
	run_env(&r, "stock", 0, argv, "LM_FAKE_METAL_FEATURE_LEVEL=restricted", NULL);
	assert_string_equal(exercise_part(&r), exercise_restricted);
	run_env(&r, "stock", 0, argv, "LM_FAKE_METAL_FEATURE_LEVEL=Unlocked", NULL); /* anything else */
	assert_string_equal(exercise_part(&r), exercise_restricted);
	run_env(&r, "stock", 0, argv, NULL);
	assert_string_equal(exercise_part(&r), exercise_restricted);
	/* The stock level's modes (reference/metal.md, 2026-12-02): fail is the default ... */
	run_env(&r, "stock", 0, argv, "LM_FAKE_METAL_STOCK_KERNELS=fail", NULL);
	assert_string_equal(exercise_part(&r), exercise_restricted);
	/* ... run: the kernels run correctly at the restricted level, as at the unlocked one ... */
	run_env(&r, "stock", 0, argv, "LM_FAKE_METAL_FEATURE_LEVEL=restricted", "LM_FAKE_METAL_STOCK_KERNELS=run", NULL);
	assert_string_equal(exercise_part(&r), exercise_unlocked);
	/* ... zeros: they compile and write zeros, which the CPU comparison calls a wrong result
	 * (fail, not error); threadgroup memory and the defects' kernels are not affected. */
	run_env(&r, "stock", 0, argv, "LM_FAKE_METAL_STOCK_KERNELS=zeros", NULL);
	lm_assert_contains(exercise_part(&r), "exercise.simdgroup_reduction=fail: ");
	lm_assert_contains(exercise_part(&r), "exercise.simdgroup_matrix=fail: ");
	lm_assert_contains(exercise_part(&r), "exercise.bfloat16=fail: ");
	lm_assert_contains(exercise_part(&r), " is 0, expected ");
	lm_assert_contains(exercise_part(&r), "exercise.threadgroup_memory.32768=pass\n");
	lm_assert_not_contains(exercise_part(&r), "unlowered");
	/* the unlocked level is the same in every mode */
	run_env(&r, "stock", 0, argv, "LM_FAKE_METAL_FEATURE_LEVEL=unlocked", "LM_FAKE_METAL_STOCK_KERNELS=zeros", NULL);
	assert_string_equal(exercise_part(&r), exercise_unlocked);
	/* a mode the fake does not know fails those pipelines, saying so */
	run_env(&r, "stock", 0, argv, "LM_FAKE_METAL_STOCK_KERNELS=zero", NULL);
	lm_assert_contains(exercise_part(&r), "exercise.simdgroup_reduction=error: LM_FAKE_METAL_STOCK_KERNELS must be "
	    "fail, zeros or run (fake Metal)\n");
	run_env(&r, "nocompute", 0, argv, "LM_FAKE_METAL_FEATURE_LEVEL=unlocked", NULL);
	lm_assert_contains(exercise_part(&r), "exercise.simdgroup_reduction=error: Metal's AppleParavirtDevice does not "
	    "implement -newLibraryWithSource:options:error: (no compute path)\n");
	run_env(&r, "stock", 0, argv, "LM_FAKE_METAL_FEATURE_LEVEL=unlocked", "LM_FAKE_METAL_HANG=lm_simd_sum",
	    "LM_FAKE_METAL_WRONG=lm_simdgroup_mma", NULL);
	lm_assert_contains(exercise_part(&r), "exercise.simdgroup_reduction=error: the kernel did not complete within "
	    "50 ms; abandoned\nexercise.simdgroup_matrix=fail: ");
}

/* ---- activation records (docs/activation-format.md) ------------------------------------ */

/* A fresh, empty directory LM_RECORDS_ROOT/NAME: its records stay for guest_activation_schema. */
static const char *records_dir(const char *name)
{
	static char dir[4][1024];
	static int next;
	char *d = dir[next++ % 4];

	snprintf(d, sizeof(dir[0]), "%s/%s", LM_RECORDS_ROOT, name);
	if (lm_test_rmtree(d) != 0 || lm_test_mkdir_p(d, 0755) != 0)
		fail_msg("cannot make %s", d);
	return d;
}

/* The names in DIR ("." and ".." left out), sorted, joined with ' ' into OUT. Returns how many. */
static int dir_names(const char *dir, char *out, size_t cap)
{
	struct dirent **list;
	int n = scandir(dir, &list, NULL, alphasort), count = 0;
	size_t len = 0;

	out[0] = '\0';
	if (n < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		if (strcmp(list[i]->d_name, ".") != 0 && strcmp(list[i]->d_name, "..") != 0) {
			len += (size_t)snprintf(out + len, len < cap ? cap - len : 0, "%s%s", count ? " " : "", list[i]->d_name);
			count++;
		}
		free(list[i]);
	}
	free(list);
	return count;
}

static cJSON *record_load(const char *dir, const char *name)
{
	char path[1400];
	char *text;
	cJSON *doc;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	text = lm_test_slurp(path, NULL);
	if (text == NULL)
		fail_msg("cannot read %s", path);
	doc = cJSON_Parse(text);
	if (doc == NULL)
		fail_msg("%s is not JSON:\n%s", path, text);
	free(text);
	return doc;
}

/* The only record in DIR, checked to be named after its pid. */
static cJSON *record_only(const char *dir)
{
	char names[4096], want[64];
	cJSON *doc;

	if (dir_names(dir, names, sizeof(names)) != 1)
		fail_msg("%s: want one record, found: %s", dir, names);
	doc = record_load(dir, names);
	snprintf(want, sizeof(want), "%.0f.json", cJSON_GetObjectItem(doc, "pid")->valuedouble);
	assert_string_equal(names, want);
	return doc;
}

static const cJSON *at(const cJSON *doc, const char *path)
{
	char key[64];
	const cJSON *node = doc;

	while (*path != '\0' && node != NULL) {
		size_t n = strcspn(path, ".");

		snprintf(key, sizeof(key), "%.*s", (int)n, path);
		node = key[0] >= '0' && key[0] <= '9' ? cJSON_GetArrayItem(node, atoi(key)) : cJSON_GetObjectItem(node, key);
		path += n + (path[n] == '.');
	}
	if (node == NULL)
		fail_msg("no %s in the record", path);
	return node;
}

static void assert_str_at(const cJSON *doc, const char *path, const char *want)
{
	const cJSON *n = at(doc, path);

	if (want == NULL) {
		if (!cJSON_IsNull(n))
			fail_msg("%s: want null, got %s", path, cJSON_PrintUnformatted(n));
		return;
	}
	if (!cJSON_IsString(n) || strcmp(n->valuestring, want) != 0)
		fail_msg("%s: want \"%s\", got %s", path, want, cJSON_PrintUnformatted(n));
}

static void assert_num_at(const cJSON *doc, const char *path, double want)
{
	const cJSON *n = at(doc, path);

	if (!cJSON_IsNumber(n) || n->valuedouble != want)
		fail_msg("%s: want %.0f, got %s", path, want, cJSON_PrintUnformatted(n));
}

static void assert_bool_at(const cJSON *doc, const char *path, int want)
{
	const cJSON *n = at(doc, path);

	if (!cJSON_IsBool(n) || cJSON_IsTrue(n) != want)
		fail_msg("%s: want %s, got %s", path, want ? "true" : "false", cJSON_PrintUnformatted(n));
}

#define ENV_RECORD_MAX 1200

/* Without LUME_METAL_RECORD_DIR, or with an empty or relative one, nothing is written anywhere,
 * and the process is exactly as it would be. */
static void test_record_off(void **state)
{
	static char *argv[] = { LM_PROBE, "--report", NULL };
	char want[4096], names[4096], cwd[PATH_MAX];
	const char *dir = records_dir("off");
	lm_test_result r;

	expected_report(want, sizeof(want), 1009, "65536", STOCK_WSS, 1);
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(dir), 0);
	assert_int_equal(mkdir("rel", 0755), 0);
	run_env(&r, "stock", 1, argv, FAM "=1009", NULL);
	assert_string_equal(r.out, want);
	run_env(&r, "stock", 1, argv, FAM "=1009", "LUME_METAL_RECORD_DIR=", "LUME_METAL_LOG=1", NULL);
	assert_string_equal(r.out, want);
	assert_int_equal(r.err_len, 0);
	run_env(&r, "stock", 1, argv, FAM "=1009", "LUME_METAL_RECORD_DIR=rel", "LUME_METAL_LOG=1", NULL);
	assert_string_equal(r.out, want);
	assert_int_equal(r.err_len, 0);
	assert_int_equal(chdir(cwd), 0);
	assert_int_equal(dir_names(dir, names, sizeof(names)), 1);
	assert_string_equal(names, "rel");
	snprintf(names, sizeof(names), "%s/rel", dir);
	assert_int_equal(dir_names(names, want, sizeof(want)), 0);
}

/* A directory that is missing, a file, not writable or too long: no file, no message, no failure. */
static void test_record_unwritable(void **state)
{
	static char *argv[] = { LM_PROBE, "--report", NULL };
	const char *dir = records_dir("unwritable");
	char want[4096], names[4096], file[1100], ro[1100], env[4][ENV_RECORD_MAX + 32];
	char longdir[ENV_RECORD_MAX];
	lm_test_result r;
	size_t k = 0;

	snprintf(file, sizeof(file), "%s/a-file", dir);
	lm_test_write_text(file, "x");
	snprintf(ro, sizeof(ro), "%s/read-only", dir);
	assert_int_equal(mkdir(ro, 0555), 0);
	/* 1024 bytes: one more than a record directory may have. */
	k = (size_t)snprintf(longdir, sizeof(longdir), "%s/", dir);
	while (k < 1024)
		longdir[k++] = 'd';
	longdir[k] = '\0';
	snprintf(env[0], sizeof(env[0]), "LUME_METAL_RECORD_DIR=%s/missing", dir);
	snprintf(env[1], sizeof(env[1]), "LUME_METAL_RECORD_DIR=%s", file);
	/* /proc takes no new files, whoever asks (root included); read-only only stops other users. */
	snprintf(env[2], sizeof(env[2]), "LUME_METAL_RECORD_DIR=%s", geteuid() == 0 ? "/proc" : ro);
	snprintf(env[3], sizeof(env[3]), "LUME_METAL_RECORD_DIR=%s", longdir);
	expected_report(want, sizeof(want), 1009, "65536", STOCK_WSS, 1);
	for (size_t i = 0; i < 4; i++) {
		run_env(&r, "stock", 1, argv, FAM "=1009", env[i], "LUME_METAL_LOG=1", NULL);
		if (r.status != 0 || strcmp(r.out, want) != 0 || r.err_len != 0)
			fail_msg("%s: status %d\n%s\n--- stderr\n%s", env[i], r.status, r.out, r.err);
	}
	assert_int_equal(dir_names(dir, names, sizeof(names)), 2);
	assert_string_equal(names, "a-file read-only");
	assert_int_equal(dir_names(ro, names, sizeof(names)), 0);
	assert_int_equal(chmod(ro, 0755), 0);
}

/* The probe's record (ceiling 1009) on a variant of the fake Metal, in records-root/contents-VARIANT. */
static cJSON *variant_record(const char *variant)
{
	static char *argv[] = { LM_PROBE, "--report", NULL };
	char name[64], env[1100];
	const char *dir;
	lm_test_result r;

	snprintf(name, sizeof(name), "contents-%s", variant);
	dir = records_dir(name);
	snprintf(env, sizeof(env), "LUME_METAL_RECORD_DIR=%s", dir);
	run_env(&r, variant, 1, argv, FAM "=1009", env, NULL);
	assert_int_equal(r.status, 0);
	return record_only(dir);
}

/* What the probe asked, with the stock and the given answers, and everything else the record says. */
static void test_record_contents(void **state)
{
	static char *argv[] = { LM_PROBE, "--report", NULL };
	const char *dir = records_dir("contents");
	char env[1100], exe[PATH_MAX];
	const cJSON *questions;
	lm_test_result r;
	cJSON *doc;
	int count = 0;

	snprintf(env, sizeof(env), "LUME_METAL_RECORD_DIR=%s", dir);
	run_env(&r, "stock", 1, argv, FAM "=1009", WSS "=20000000000", env, NULL);
	assert_int_equal(r.status, 0);
	doc = record_only(dir);
	assert_str_at(doc, "format", "lume-metal-activation/1.1");
	assert_num_at(doc, "ppid", (double)getpid());
	assert_non_null(realpath(LM_PROBE, exe));
	assert_str_at(doc, "exe", exe);
#if defined(__x86_64__)
	assert_str_at(doc, "arch", "x86_64");
#else
	assert_str_at(doc, "arch", "arm64");
#endif
	assert_str_at(doc, "shim_version", LM_VERSION);
	assert_str_at(doc, "written", "exit");
	assert_bool_at(doc, "incomplete", 0);
	assert_bool_at(doc, "profile.active", 1);
	assert_str_at(doc, "profile.why_stock", NULL);
	assert_num_at(doc, "profile.apple_family_max", 1009);
	assert_num_at(doc, "profile.max_threadgroup_memory", 65536);
	assert_num_at(doc, "profile.recommended_working_set_size", 20000000000.0);
	assert_bool_at(doc, "hooks.init_gpu_family_support.installed", 1);
	assert_str_at(doc, "hooks.init_gpu_family_support.why_not", NULL);
	assert_int_equal(cJSON_GetArraySize(at(doc, "hooks.device_classes")), 1);
	assert_str_at(doc, "hooks.device_classes.0.class", "AppleParavirtDevice");
	assert_bool_at(doc, "hooks.device_classes.0.installed", 1);
	assert_str_at(doc, "hooks.device_classes.0.device", "Apple Paravirtual device");
	/* Every family once, in the order asked (the report's), stock and given as the fake answers. */
	questions = at(doc, "questions");
#define FAMILY_QUESTION(name, value)                                                               \
	{                                                                                          \
		const cJSON *q = cJSON_GetArrayItem(questions, count++);                           \
		int stock = (value >= 1001 && value <= 1005) || value == 2002 ||                   \
		    (value >= 3001 && value <= 3003);                                              \
		assert_non_null(q);                                                                \
		assert_num_at(q, "device_class", 0);                                               \
		assert_num_at(q, "family", value);                                                 \
		assert_bool_at(q, "stock", stock);                                                 \
		assert_bool_at(q, "given", stock || (value >= 1001 && value <= 1009));             \
	}
	LM_FAMILY_LIST(FAMILY_QUESTION)
#undef FAMILY_QUESTION
	assert_int_equal(cJSON_GetArraySize(questions), count);
	assert_int_equal(cJSON_GetArraySize(at(doc, "threadgroup_memory_reads")), 1);
	assert_num_at(doc, "threadgroup_memory_reads.0.stock", 32768);
	assert_num_at(doc, "threadgroup_memory_reads.0.given", 65536);
	assert_bool_at(doc, "children.inherit", 1);
	assert_str_at(doc, "children.variable", "LD_PRELOAD");
	assert_str_at(doc, "children.setting", NULL);
	assert_str_at(doc, "children.why", "decided at each spawn: protected and arm64e programs start without the shim (guest SIP "
	    "not reported, no arm64e slice); every other child keeps it");
	assert_str_at(doc, "children.host_reason", NULL);
	assert_bool_at(doc, "forked", 0);
	assert_int_equal(cJSON_GetArraySize(at(doc, "spawns")), 0);
	assert_num_at(doc, "spawns_dropped", 0);
	cJSON_Delete(doc);

	/* A configuration the shim refuses: loaded, stock, and why. */
	dir = records_dir("contents-stock");
	snprintf(env, sizeof(env), "LUME_METAL_RECORD_DIR=%s", dir);
	run_env(&r, "stock", 1, argv, FAM "=01009", env, NULL);
	assert_int_equal(r.status, 0);
	doc = record_only(dir);
	assert_bool_at(doc, "profile.active", 0);
	assert_str_at(doc, "profile.why_stock", FAM LEADING_ZERO);
	assert_str_at(doc, "profile.apple_family_max", NULL);
	assert_str_at(doc, "hooks.init_gpu_family_support.why_not", "profile not active");
	assert_int_equal(cJSON_GetArraySize(at(doc, "hooks.device_classes")), 0);
	assert_int_equal(cJSON_GetArraySize(at(doc, "questions")), 0);
	assert_str_at(doc, "written", "exit");
	cJSON_Delete(doc);

	/* A device class the shim refuses, and a Metal without the private class or its method. */
	doc = variant_record("unsupported");
	assert_bool_at(doc, "profile.active", 1);
	assert_bool_at(doc, "hooks.device_classes.0.installed", 0);
	assert_str_at(doc, "hooks.device_classes.0.why_not",
	    "AppleParavirtDevice has an unexpected signature for supportsFamily:");
	assert_int_equal(cJSON_GetArraySize(at(doc, "questions")), 0);
	cJSON_Delete(doc);
	doc = variant_record("noprivate");
	assert_str_at(doc, "hooks.init_gpu_family_support.why_not", "class _MTLDevice not found");
	assert_bool_at(doc, "hooks.device_classes.0.installed", 1);
	cJSON_Delete(doc);
	doc = variant_record("noinit");
	assert_str_at(doc, "hooks.init_gpu_family_support.why_not", "_MTLDevice has no method initGPUFamilySupport");
	cJSON_Delete(doc);

	/* The Tart images' shim writes none. */
	dir = records_dir("contents-tart");
	snprintf(env, sizeof(env), "LUME_METAL_RECORD_DIR=%s", dir);
	preload_shim = LM_TART_SHIM;
	run_env(&r, "stock", 1, argv, "TART_METAL_APPLE_FAMILY_MAX=1009", env, NULL);
	preload_shim = LM_SHIM;
	assert_int_equal(r.status, 0);
	assert_int_equal(dir_names(dir, env, sizeof(env)), 0);
}

/* Families that share an entry of the shim's seen table (family & 255: 1001, 1257, -23 and 233),
 * and -1 (whose key is the empty entry's): each recorded once, in the order asked, nothing lost. */
static void test_record_colliding_families(void **state)
{
	static char *argv[] = { LM_DEVICES, "ask", "1001", "1257", "-23", "233", "-1", "1001", "1257", "-1", "-23",
		"233", "1009", NULL };
	static const long want[] = { 1001, 1257, -23, 233, -1, 1009 };
	const char *dir = records_dir("colliding");
	char env[1100];
	const cJSON *q;
	lm_test_result r;
	cJSON *doc;

	snprintf(env, sizeof(env), "LUME_METAL_RECORD_DIR=%s", dir);
	run_env(&r, "stock", 1, argv, FAM "=1009", env, NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "1001=1 1257=0 -23=0 233=0 -1=0 1001=1 1257=0 -1=0 -23=0 233=0 1009=1\n");
	doc = record_only(dir);
	assert_bool_at(doc, "incomplete", 0);
	q = at(doc, "questions");
	assert_int_equal(cJSON_GetArraySize(q), 6);
	for (int i = 0; i < 6; i++) {
		assert_num_at(cJSON_GetArrayItem(q, i), "family", (double)want[i]);
		assert_bool_at(cJSON_GetArrayItem(q, i), "given", want[i] == 1001 || want[i] == 1009);
	}
	cJSON_Delete(doc);
}

/* The record whose EXE's base name is BASE; NULL when none. */
static cJSON *record_of(const char *dir, const char *names, const char *base)
{
	char copy[4096];

	snprintf(copy, sizeof(copy), "%s", names);
	for (char *name = strtok(copy, " "); name != NULL; name = strtok(NULL, " ")) {
		cJSON *doc = record_load(dir, name);
		const cJSON *exe = cJSON_GetObjectItem(doc, "exe");
		const char *slash = cJSON_IsString(exe) ? strrchr(exe->valuestring, '/') : NULL;

		if (slash != NULL && strcmp(slash + 1, base) == 0)
			return doc;
		cJSON_Delete(doc);
	}
	return NULL;
}

/* One record per process that loaded the shim: the shell's, each program it started that took the
 * shim, and for each that did not, the record its forked child wrote before the exec (what that
 * program was given). What children got, and why. */
static void test_record_children(void **state)
{
	static const struct {
		const char *inherit; /* LUME_METAL_INHERIT, NULL: absent */
		const char *setting, *why;
		int probe_keeps, others_keep;
		const char *probe_why;
	} cases[] = {
		{ "1", "1", "LUME_METAL_INHERIT=1: every child keeps the shim", 1, 1, NULL },
		{ "0", "0", "LUME_METAL_INHERIT=0: every child starts without the shim", 0, 0, "LUME_METAL_INHERIT=0" },
		{ NULL, NULL, "decided at each spawn: protected and arm64e programs start without the shim (guest SIP disabled, no "
		    "arm64e slice); every other child keeps it", 1, 0, NULL },
		{ "yes", "invalid", "LUME_METAL_INHERIT is neither 0 nor 1, so ignored: decided at each spawn: protected "
		    "and arm64e programs start without the shim (guest SIP disabled, no arm64e slice); every other child keeps it", 1, 0,
		    NULL },
	};
	char probe[PATH_MAX];

	(void)state;
	assert_non_null(realpath(LM_PROBE, probe));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char env[1100], inherit[64], names[4096], sub[32];
		const char *dir;
		char *extra[] = { env, "LUME_METAL_INHERIT_REASON=guest SIP disabled\t(test)", "LUME_METAL_GUEST_SIP=disabled",
			NULL, NULL };
		cJSON *shell = NULL, *child = NULL;
		lm_test_result r;
		int n, forked = 0;

		snprintf(sub, sizeof(sub), "children-%zu", i);
		dir = records_dir(sub);
		snprintf(env, sizeof(env), "LUME_METAL_RECORD_DIR=%s", dir);
		if (cases[i].inherit != NULL) {
			snprintf(inherit, sizeof(inherit), "LUME_METAL_INHERIT=%s", cases[i].inherit);
			extra[3] = inherit;
		}
		run_shimmed_shell_env(&r, LM_SHIM, "1009", extra);
		/* sh, and one per child: env, grep, the probe, grep. */
		n = dir_names(dir, names, sizeof(names));
		assert_int_equal(n, 5);
		for (char *name = strtok(names, " "); name != NULL; name = strtok(NULL, " ")) {
			cJSON *doc = record_load(dir, name);

			assert_str_at(doc, "children.why", cases[i].why);
			assert_str_at(doc, "children.setting", cases[i].setting);
			assert_bool_at(doc, "children.inherit", cases[i].setting == NULL || strcmp(cases[i].setting, "0") != 0);
			/* control characters replaced */
			assert_str_at(doc, "children.host_reason", "guest SIP disabled?(test)");
			if (at(doc, "ppid")->valuedouble == (double)getpid()) {
				shell = doc;
				continue;
			}
			if (cJSON_IsTrue(at(doc, "forked"))) {
				/* The shell's fork, before its exec: the program, and what it was given. */
				const char *path = at(doc, "spawns.0.path")->valuestring;
				int is_probe = strcmp(path, probe) == 0;

				forked++;
				assert_str_at(doc, "exe", "/usr/bin/dash");
				assert_int_equal(cJSON_GetArraySize(at(doc, "questions")), 0);
				assert_str_at(doc, "spawns.0.call", "execve");
				assert_str_at(doc, "spawns.0.shim", "removed");
				if (is_probe)
					assert_str_at(doc, "spawns.0.why", cases[i].probe_why);
				assert_false(is_probe && cases[i].probe_keeps);
			}
			cJSON_Delete(doc);
		}
		assert_non_null(shell);
		assert_int_equal(cJSON_GetArraySize(at(shell, "questions")), 0);
		/* Its children were forked: they are in their own records, not in the shell's. */
		assert_int_equal(cJSON_GetArraySize(at(shell, "spawns")), 0);
		assert_int_equal(forked, 4 - cases[i].probe_keeps - 3 * cases[i].others_keep);
		if (cases[i].probe_keeps) {
			/* The probe's own record shows the unlock. */
			dir_names(dir, names, sizeof(names));
			child = record_of(dir, names, strrchr(probe, '/') + 1);
			assert_non_null(child);
			assert_num_at(child, "ppid", at(shell, "pid")->valuedouble);
			assert_bool_at(child, "forked", 0);
			assert_num_at(child, "questions.8.family", 1009);
			assert_bool_at(child, "questions.8.stock", 0);
			assert_bool_at(child, "questions.8.given", 1);
		}
		cJSON_Delete(child);
		cJSON_Delete(shell);
	}
}

/* spawn-calls CALL TARGET ARGS... shimmed, on a SIP-off guest, with records in dir. */
static void run_spawn_call(lm_test_result *r, const char *dir, const char *call, const char *target, const char *arg)
{
	char *argv[] = { LM_SPAWN_CALLS, (char *)call, (char *)target, (char *)arg, NULL };
	char env[1100];

	snprintf(env, sizeof(env), "LUME_METAL_RECORD_DIR=%s", dir);
	run_env(r, "stock", 1, argv, FAM "=1009", env, "LUME_METAL_GUEST_SIP=disabled", "PATH=/usr/bin:/bin", NULL);
}

/* Every exec and spawn call a program can make reaches the rule: a protected program (env, by
 * path or found through PATH) starts without the shim, the probe with it; the caller's record
 * says what each was given. */
static void test_children_every_call(void **state)
{
	static const struct {
		const char *call, *recorded;
		int search, spawn;
	} calls[] = {
		{ "execve", "execve", 0, 0 }, { "execv", "execve", 0, 0 }, { "execvp", "execve", 1, 0 },
		{ "execvpe", "execve", 1, 0 }, { "execl", "execve", 0, 0 }, { "execlp", "execve", 1, 0 },
		{ "execle", "execve", 0, 0 }, { "posix_spawn", "posix_spawn", 0, 1 },
		{ "posix_spawnp", "posix_spawnp", 1, 1 },
	};
	char probe[PATH_MAX];

	(void)state;
	assert_non_null(realpath(LM_PROBE, probe));
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		char sub[64], names[4096];
		const char *dir;
		lm_test_result r;
		cJSON *doc;

		snprintf(sub, sizeof(sub), "every-call-%s", calls[i].call);
		dir = records_dir(sub);
		run_spawn_call(&r, dir, calls[i].call, calls[i].search ? "env" : "/usr/bin/env", NULL);
		assert_int_equal(r.status, 0);
		if (strstr(r.out, "LD_PRELOAD=") != NULL || strstr(r.out, "LUME_METAL_APPLE_FAMILY_MAX=1009") == NULL)
			fail_msg("%s env: the protected child got\n%s", calls[i].call, r.out);
		/* The caller's record (an exec's image is env now, which loads nothing). */
		doc = record_only(dir);
		assert_int_equal(cJSON_GetArraySize(at(doc, "spawns")), 1);
		assert_str_at(doc, "spawns.0.call", calls[i].recorded);
		assert_str_at(doc, "spawns.0.path", calls[i].search ? "env" : "/usr/bin/env");
		assert_bool_at(doc, "spawns.0.protected", 1);
		assert_str_at(doc, "spawns.0.shim", "removed");
		assert_str_at(doc, "spawns.0.why", "protected program on a SIP-off guest and the shim has no arm64e slice");
		assert_str_at(doc, "spawns.0.interpreter", NULL);
		assert_str_at(doc, "spawns.0.error", NULL);
		assert_num_at(doc, "spawns_dropped", 0);
		if (calls[i].spawn)
			assert_true(cJSON_IsNumber(at(doc, "spawns.0.pid")));
		else
			assert_str_at(doc, "spawns.0.pid", NULL);
		cJSON_Delete(doc);

		dir = records_dir(sub);
		run_spawn_call(&r, dir, calls[i].call, probe, "1009");
		assert_int_equal(r.status, 0);
		lm_assert_contains(r.out, "supports_family=true\n");
		/* An exec in place: one pid, whose record is the probe's own (the last image's). */
		assert_int_equal(dir_names(dir, names, sizeof(names)), calls[i].spawn ? 2 : 1);
		if (!calls[i].spawn) {
			doc = record_only(dir);
			assert_str_at(doc, "exe", probe);
			assert_bool_at(doc, "forked", 0);
			assert_str_at(doc, "format", "lume-metal-activation/1.1");
			assert_num_at(doc, "questions.0.family", 1009);
			assert_bool_at(doc, "questions.0.stock", 0);
			assert_bool_at(doc, "questions.0.given", 1);
			cJSON_Delete(doc);
		}
	}
}

/* A guest file in the test's scratch directory: TEXT with MODE. */
static void scratch_file(const char *dir, const char *name, const char *text, mode_t mode, char *path, size_t cap)
{
	FILE *f;

	snprintf(path, cap, "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, mode), 0);
}

/* What the rule looks at: a script's #! interpreter, a file that is neither a script nor a binary
 * (the shell runs it), a link to a protected program, a path through "..", a relative path. */
static void test_children_targets(void **state)
{
	char scratch[1100], path[1400], link[1400], shcopy[1400], env_rel[1400], script[1500];
	const char *dir = records_dir("targets");
	static const struct {
		const char *call;
		int protected;
		const char *interp; /* NULL: none */
	} want[] = {
		{ "sh-script", 1, "/bin/sh" },
		{ "env-script", 1, "/usr/bin/env" },
		{ "plain-text", 1, "/bin/sh" },
		{ "link", 1, NULL },
		{ "dotdot", 1, NULL },
		{ "copy-script", 0, NULL },
	};
	lm_test_result r;
	char rsh[PATH_MAX];

	(void)state;
	snprintf(scratch, sizeof(scratch), "%s/scratch", LM_RECORDS_ROOT);
	assert_int_equal(lm_test_rmtree(scratch), 0);
	assert_int_equal(lm_test_mkdir_p(scratch, 0755), 0);
	assert_non_null(realpath("/bin/sh", rsh));
	scratch_file(scratch, "sh-script", "#!/bin/sh\n:\n", 0755, path, sizeof(path));
	scratch_file(scratch, "env-script", "#!  /usr/bin/env sh\n:\n", 0755, path, sizeof(path));
	scratch_file(scratch, "plain-text", ":\n", 0755, path, sizeof(path));
	snprintf(link, sizeof(link), "%s/link", scratch);
	assert_int_equal(symlink("/usr/bin/env", link), 0);
	snprintf(shcopy, sizeof(shcopy), "%s/sh", scratch);
	{
		char *cp[] = { "/bin/cp", rsh, shcopy, NULL };
		lm_test_run(&r, cp, (char *[]){ NULL }, NULL);
		assert_int_equal(r.status, 0);
	}
	snprintf(script, sizeof(script), "#!%s\n:\n", shcopy);
	scratch_file(scratch, "copy-script", script, 0755, path, sizeof(path));
	snprintf(env_rel, sizeof(env_rel), "%s/../../../../../../../../../../../usr/bin/env", scratch);

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		char sub[64], target[1500], names[4096];
		cJSON *doc;

		snprintf(sub, sizeof(sub), "targets-%s", want[i].call);
		dir = records_dir(sub);
		if (strcmp(want[i].call, "dotdot") == 0)
			snprintf(target, sizeof(target), "%s", env_rel);
		else
			snprintf(target, sizeof(target), "%s/%s", scratch, want[i].call);
		/* posix_spawnp: a file that is neither script nor binary is run by /bin/sh */
		run_spawn_call(&r, dir, "posix_spawnp", target, NULL);
		/* spawn-calls's (the copied shell, which keeps the shim, writes its own too) */
		dir_names(dir, names, sizeof(names));
		doc = record_of(dir, names, "spawn-calls");
		assert_non_null(doc);
		assert_bool_at(doc, "spawns.0.protected", want[i].protected);
		assert_str_at(doc, "spawns.0.shim", want[i].protected ? "removed" : "kept");
		if (want[i].interp != NULL) {
			/* The interpreter's links followed (Debian's /bin/sh is a link to dash). */
			const cJSON *got = at(doc, "spawns.0.interpreter");
			char ri[PATH_MAX];

			assert_non_null(realpath(want[i].interp, ri));
			assert_true(cJSON_IsString(got));
			assert_string_equal(strrchr(got->valuestring, '/'), strrchr(ri, '/'));
			assert_true(strncmp(got->valuestring, "/bin/", 5) == 0 || strncmp(got->valuestring, "/usr/bin/", 9) == 0);
		} else if (strcmp(want[i].call, "copy-script") == 0) {
			assert_str_at(doc, "spawns.0.interpreter", shcopy);
		} else {
			assert_str_at(doc, "spawns.0.interpreter", NULL);
		}
		if (strcmp(want[i].call, "link") == 0 || strcmp(want[i].call, "dotdot") == 0)
			assert_str_at(doc, "spawns.0.resolved", "/usr/bin/env");
		cJSON_Delete(doc);
	}
}

/* A file whose first bytes are head (n of them), mode 0755, in the scratch directory. */
static void scratch_bytes(const char *dir, const char *name, const unsigned char *head, size_t n, char *path,
    size_t cap)
{
	FILE *f;

	snprintf(path, cap, "%s/%s", dir, name);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(head, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, 0755), 0);
}

/* arm64e from the Mach-O header, outside the system folders: crafted headers, thin and universal,
 * arm64 and arm64e (CPU_TYPE_ARM64 0x0100000c; CPU_SUBTYPE_ARM64E 2 under CPU_SUBTYPE_MASK
 * 0xff000000, the pointer-authentication ABI bits), started with execve (this machine cannot run
 * Mach-O: the call fails, after the rule has decided and the record says so). A script whose
 * interpreter is arm64e counts too. SIP enabled, or a shim with an arm64e slice: kept. */
static void test_children_arm64e_header(void **state)
{
	static const unsigned char thin_e[] = { 0xcf, 0xfa, 0xed, 0xfe, 0x0c, 0, 0, 1, 2, 0, 0, 0x80, 2, 0, 0, 0 };
	static const unsigned char thin[] = { 0xcf, 0xfa, 0xed, 0xfe, 0x0c, 0, 0, 1, 0, 0, 0, 0, 2, 0, 0, 0 };
	static const unsigned char fat_x86_e[] = { 0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 2,
		1, 0, 0, 0x07, 0, 0, 0, 3, 0, 0, 0x40, 0, 0, 0, 0x10, 0, 0, 0, 0, 14,
		1, 0, 0, 0x0c, 0x80, 0, 0, 2, 0, 0, 0x80, 0, 0, 0, 0x10, 0, 0, 0, 0, 14 };
	static const unsigned char fat_both[] = { 0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 2,
		1, 0, 0, 0x0c, 0x80, 0, 0, 2, 0, 0, 0x40, 0, 0, 0, 0x10, 0, 0, 0, 0, 14,
		1, 0, 0, 0x0c, 0, 0, 0, 0, 0, 0, 0x80, 0, 0, 0, 0x10, 0, 0, 0, 0, 14 };
	static const char *const off_e = "arm64e program (its Mach-O header) on a SIP-off guest and the shim has no arm64e slice";
	static const struct {
		const char *file, *sip, *arm64e, *shim, *why;
	} want[] = {
		{ "thin-e", "disabled", NULL, "removed", NULL },
		{ "fat-x86-e", "disabled", NULL, "removed", NULL },
		{ "fat-x86-e", "custom", NULL, "removed", NULL },
		{ "e-script", "disabled", NULL, "removed", NULL },
		{ "fat-both", "disabled", NULL, "kept", "not a protected program" },
		{ "thin", "disabled", NULL, "kept", "not a protected program" },
		{ "thin-e", "enabled", NULL, "kept", "arm64e program on a SIP-on guest" },
		{ "thin-e", "disabled", "1", "kept", "arm64e program, and the shim has an arm64e slice" },
		{ "thin-e", "", NULL, "removed",
		    "arm64e program (its Mach-O header), the guest's SIP not reported, and the shim has no arm64e slice" },
	};
	char scratch[1100], path[1400], script[1500];

	(void)state;
	snprintf(scratch, sizeof(scratch), "%s/scratch-arm64e", LM_RECORDS_ROOT);
	assert_int_equal(lm_test_rmtree(scratch), 0);
	assert_int_equal(lm_test_mkdir_p(scratch, 0755), 0);
	scratch_bytes(scratch, "thin-e", thin_e, sizeof(thin_e), path, sizeof(path));
	scratch_bytes(scratch, "thin", thin, sizeof(thin), path, sizeof(path));
	scratch_bytes(scratch, "fat-x86-e", fat_x86_e, sizeof(fat_x86_e), path, sizeof(path));
	scratch_bytes(scratch, "fat-both", fat_both, sizeof(fat_both), path, sizeof(path));
	snprintf(script, sizeof(script), "#!%s/thin-e\n:\n", scratch);
	scratch_file(scratch, "e-script", script, 0755, path, sizeof(path));

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		char sub[64], target[1400], env[1100], sip[64], arm64e[64];
		char *argv[] = { LM_SPAWN_CALLS, "execve", target, NULL };
		const char *dir;
		lm_test_result r;
		cJSON *doc;

		snprintf(sub, sizeof(sub), "arm64e-%zu", i);
		dir = records_dir(sub);
		snprintf(target, sizeof(target), "%s/%s", scratch, want[i].file);
		snprintf(env, sizeof(env), "LUME_METAL_RECORD_DIR=%s", dir);
		snprintf(sip, sizeof(sip), "LUME_METAL_GUEST_SIP=%s", want[i].sip);
		snprintf(arm64e, sizeof(arm64e), "LUME_METAL_SHIM_ARM64E=%s", want[i].arm64e ? want[i].arm64e : "0");
		run_env(&r, "stock", 1, argv, FAM "=1009", env, sip, arm64e, "PATH=/usr/bin:/bin", NULL);
		doc = record_only(dir);
		assert_int_equal(cJSON_GetArraySize(at(doc, "spawns")), 1);
		assert_str_at(doc, "spawns.0.path", target);
		assert_bool_at(doc, "spawns.0.protected", 0);
		assert_str_at(doc, "spawns.0.shim", want[i].shim);
		assert_str_at(doc, "spawns.0.why", want[i].why != NULL ? want[i].why : off_e);
		cJSON_Delete(doc);
	}
}

/* Watching the directory while 16 threads ask: every file seen is a whole record, newer than the
 * last one seen; nothing is left behind, and each question is recorded once. */
struct watch {
	const char *dir;
	int done;
	int reads, bad;
	double last_sequence;
	char why[512];
};

static void *watcher(void *arg)
{
	struct watch *w = arg;

	for (;;) {
		int done = __atomic_load_n(&w->done, __ATOMIC_ACQUIRE);
		struct dirent **list;
		int n = scandir(w->dir, &list, NULL, alphasort);

		for (int i = 0; i < n; i++) {
			char path[1400];
			char *text;
			cJSON *doc;

			if (list[i]->d_name[0] >= '1' && list[i]->d_name[0] <= '9') {
				snprintf(path, sizeof(path), "%s/%s", w->dir, list[i]->d_name);
				if ((text = lm_test_slurp(path, NULL)) != NULL) {
					w->reads++;
					doc = cJSON_Parse(text);
					if (doc == NULL || !cJSON_IsNumber(cJSON_GetObjectItem(doc, "sequence")) ||
					    cJSON_GetObjectItem(doc, "sequence")->valuedouble < w->last_sequence) {
						w->bad++;
						snprintf(w->why, sizeof(w->why), "%.400s", text);
					} else {
						w->last_sequence = cJSON_GetObjectItem(doc, "sequence")->valuedouble;
					}
					cJSON_Delete(doc);
					free(text);
				}
			}
			free(list[i]);
		}
		if (n >= 0)
			free(list);
		if (done)
			return NULL;
	}
}

static void test_record_atomic(void **state)
{
	static char *argv[] = { LM_DEVICES, "threads", "1", NULL };
	struct watch w = { records_dir("atomic"), 0, 0, 0, 0, "" };
	char env[1100], names[4096];
	pthread_t t;
	lm_test_result r;
	cJSON *doc;

	snprintf(env, sizeof(env), "LUME_METAL_RECORD_DIR=%s", w.dir);
	assert_int_equal(pthread_create(&t, NULL, watcher, &w), 0);
	run_env(&r, "stock", 1, argv, FAM "=1009", env, NULL);
	__atomic_store_n(&w.done, 1, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(r.status, 0);
	if (w.bad != 0)
		fail_msg("%d of %d reads saw a partial or older record, e.g.:\n%s", w.bad, w.reads, w.why);
	assert_true(w.reads >= 1);
	print_message("figure: %d reads of the record while 16 threads asked, none partial\n", w.reads);
	assert_int_equal(dir_names(w.dir, names, sizeof(names)), 1); /* no temporary file left */
	doc = record_only(w.dir);
	assert_int_equal(cJSON_GetArraySize(at(doc, "hooks.device_classes")), 1);
	/* 1024 devices, 3 families each: 3 questions, in the order the first thread asked them. */
	assert_int_equal(cJSON_GetArraySize(at(doc, "questions")), 3);
	assert_num_at(doc, "questions.0.family", 1009);
	assert_num_at(doc, "questions.1.family", 1005);
	assert_num_at(doc, "questions.2.family", 5001);
	assert_int_equal(cJSON_GetArraySize(at(doc, "threadgroup_memory_reads")), 1);
	assert_str_at(doc, "written", "exit");
	cJSON_Delete(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_env_table),
		cmocka_unit_test(test_tart_names),
		cmocka_unit_test(test_tart_names_image_shim),
		cmocka_unit_test(test_children_spawn_rule),
		cmocka_unit_test(test_children_every_call),
		cmocka_unit_test(test_children_targets),
		cmocka_unit_test(test_children_arm64e_header),
		cmocka_unit_test(test_published_lines),
		cmocka_unit_test(test_probe_bad_arguments),
		cmocka_unit_test(test_probe_no_device),
		cmocka_unit_test(test_probe_self),
		cmocka_unit_test(test_default_device_and_super),
		cmocka_unit_test(test_copy_all_devices),
		cmocka_unit_test(test_dlopen_after_start),
		cmocka_unit_test(test_private_class_missing),
		cmocka_unit_test(test_init_method_missing),
		cmocka_unit_test(test_unsupported_metal_stays_stock),
		cmocka_unit_test(test_other_answers_unchanged),
		cmocka_unit_test(test_threads_preloaded),
		cmocka_unit_test(test_report_escaping),
		cmocka_unit_test(test_exercise_unlocked),
		cmocka_unit_test(test_exercise_restricted),
		cmocka_unit_test(test_exercise_no_compute_path),
		cmocka_unit_test(test_exercise_hang_and_wrong_numbers),
		cmocka_unit_test(test_exercise_each_mistake),
		cmocka_unit_test(test_exercise_bad_options),
		cmocka_unit_test(test_fake_metal_stock_device),
		cmocka_unit_test(test_fake_metal_compute_levels),
		cmocka_unit_test(test_record_off),
		cmocka_unit_test(test_record_unwritable),
		cmocka_unit_test(test_record_contents),
		cmocka_unit_test(test_record_children),
		cmocka_unit_test(test_record_atomic),
		cmocka_unit_test(test_record_colliding_families),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
