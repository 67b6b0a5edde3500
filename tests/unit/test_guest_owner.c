/* The owner record of the guest's lume-metal directory and the rule on it
 * (host/lib/guestops/owner.c, guest_owner.h; issue 49, defect 12). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest_bundle.h"
#include "guest_owner.h"
#include "lm_test.h"

#define ID_A "0123456789abcdef0123456789abcdef"
#define ID_B "fedcba9876543210fedcba9876543210"

static void owner(lm_guest_owner *o, const char *id, const char *dir, const char *host)
{
	memset(o, 0, sizeof(*o));
	snprintf(o->state_id, sizeof(o->state_id), "%s", id);
	snprintf(o->state_dir, sizeof(o->state_dir), "%s", dir);
	snprintf(o->host, sizeof(o->host), "%s", host);
}

static void seen_found(lm_guest_owner_seen *s, const char *id, const char *dir)
{
	memset(s, 0, sizeof(*s));
	s->state = LM_GUEST_OWNER_FOUND;
	owner(&s->owner, id, dir, "mac-1");
}

/* Rendered and read back the same; what it reads as written. */
static void test_round_trip(void **state)
{
	static const char later[] = "{\"format\":\"lume-metal-owner\",\"version\":2,\"state_id\":\"" ID_B
	    "\",\"state_dir\":\"/x\",\"new\":[1]}";
	lm_guest_owner o, back;
	char *text = NULL;
	size_t len = 0;

	(void)state;
	owner(&o, ID_A, "/Users/me/Library/Application Support/lume-metal", "mac-1.local");
	lm_assert_ok(lm_guest_owner_render(&o, &text, &len));
	assert_int_equal(len, strlen(text));
	assert_true(text[len - 1] == '\n');
	lm_assert_contains(text, "\"format\": \"lume-metal-owner\"");
	lm_assert_contains(text, "\"state_id\": \"" ID_A "\"");
	lm_assert_ok(lm_guest_owner_parse(text, len, &back));
	assert_string_equal(back.state_id, ID_A);
	assert_string_equal(back.state_dir, o.state_dir);
	assert_string_equal(back.host, "mac-1.local");
	free(text);
	/* No identity, no record. */
	owner(&o, "", "/s", "h");
	lm_assert_fails(lm_guest_owner_render(&o, &text, &len), LM_EINVALID);
	/* The host is for people: a record without one reads; a later version's members are ignored. */
	lm_assert_ok(lm_guest_owner_parse(later, strlen(later), &back));
	assert_string_equal(back.state_id, ID_B);
	assert_string_equal(back.host, "");
	/* This state directory as an owner: a bad identity is refused, none is "no identity yet". */
	lm_assert_fails(lm_guest_owner_make(&o, "xyz", "/s"), LM_EINVALID);
	lm_assert_ok(lm_guest_owner_make(&o, "", "/s"));
	assert_string_equal(o.state_id, "");
}

/* Records that are none: each refused naming the file and what is wrong, nothing kept. Each is
 * RECORD with one edit, or a short text of its own. */
#define RECORD "{\"format\":\"lume-metal-owner\",\"version\":1,\"state_id\":\"" ID_A "\",\"state_dir\":\"/x\"}"
static void test_refused(void **state)
{
	static const struct {
		lm_test_edit edit; /* of RECORD */
		const char *why;
	} bad[] = {
		{{.whole = ""}, "empty"},
		{{.whole = "[1]"}, "object"},
		{{.from = "lume-metal-owner", .to = "lume-metal-bundle"}, "$.format"},
		{{.from = "\"version\":1,", .to = ""}, "$.version"},
		{{.from = ID_A, .to = "0123"}, "$.state_id"},
		{{.from = ID_A, .to = ID_A "X"}, "$.state_id"},
		{{.from = ID_A, .to = "0123456789ABCDEF0123456789ABCDEF"}, "$.state_id"},
		{{.from = ",\"state_dir\":\"/x\"", .to = ""}, "$.state_dir"},
		{{.from = "\"/x\"", .to = "\"/x\\u001b[2J\""}, "control character"},
		{{.from = "\"/x\"", .to = "\"/x\",\"host\":7"}, "$.host"},
		{{.from = ",\"state_dir\"", .to = ",\"state_id\":\"" ID_B "\",\"state_dir\""}, "duplicate"},
	};
	lm_guest_owner o;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t len;
		char *text = lm_test_edited(RECORD, &bad[i].edit, &len);

		lm_assert_fails(lm_guest_owner_parse(text, len, &o), LM_EINVALID);
		free(text);
		lm_assert_error_has(LM_GUEST_OWNER_FILE);
		lm_assert_error_has(bad[i].why);
		assert_string_equal(o.state_id, "");
	}
}

/* The rule: this state directory's own files, none, an older lume-metal's, another's, unreadable. */
static void test_judge(void **state)
{
	lm_guest_owner self;
	lm_guest_owner_seen seen;
	lm_guest_owner_verdict v;

	(void)state;
	owner(&self, ID_A, "/state/a", "mac-1");
	/* Nothing installed and no record: a fresh guest. */
	memset(&seen, 0, sizeof(seen));
	lm_assert_ok(lm_guest_owner_judge(&seen, &self, 0, 0, "vm1", "Nothing was changed.", &v));
	assert_int_equal(v, LM_GUEST_OWNER_OURS);
	/* Installed without a record: an older lume-metal's, recorded as this one's. */
	lm_assert_ok(lm_guest_owner_judge(&seen, &self, 1, 0, "vm1", "Nothing was changed.", &v));
	assert_int_equal(v, LM_GUEST_OWNER_ADOPT);
	/* Its own record, installed or half-installed. */
	seen_found(&seen, ID_A, "/elsewhere/now");
	lm_assert_ok(lm_guest_owner_judge(&seen, &self, 1, 0, "vm1", "Nothing was changed.", &v));
	assert_int_equal(v, LM_GUEST_OWNER_OURS);
	lm_assert_ok(lm_guest_owner_judge(&seen, &self, 0, 0, "vm1", "Nothing was changed.", &v));
	assert_int_equal(v, LM_GUEST_OWNER_OURS);
	/* Another's, at any stage: refused naming both, unless taken over. */
	seen_found(&seen, ID_B, "/state/b");
	lm_assert_fails(lm_guest_owner_judge(&seen, &self, 0, 0, "vm1", "Nothing was changed.", &v), LM_EOTHERSTATE);
	lm_assert_error_has("vm1: its guest files were installed from another state directory, /state/b (identity "
	    ID_B ", host mac-1); this one is /state/a (identity " ID_A ", host mac-1). Nothing was changed.");
	assert_string_equal(lm_error_name(LM_EOTHERSTATE), "other-state");
	lm_assert_ok(lm_guest_owner_judge(&seen, &self, 1, 1, "vm1", "Nothing was changed.", &v));
	assert_int_equal(v, LM_GUEST_OWNER_TAKE);
	/* A state directory with no identity yet (a dry run's) owns nothing. */
	owner(&self, "", "/state/new", "");
	seen_found(&seen, ID_B, "/state/b");
	lm_assert_fails(lm_guest_owner_judge(&seen, &self, 1, 0, "vm1", "x", &v), LM_EOTHERSTATE);
	lm_assert_error_has("this one is /state/new (no identity yet)");
	/* Unreadable: unknown, so refused the same way. */
	memset(&seen, 0, sizeof(seen));
	seen.state = LM_GUEST_OWNER_UNREADABLE;
	snprintf(seen.why, sizeof(seen.why), "is a FIFO, not a file");
	owner(&self, ID_A, "/state/a", "");
	lm_assert_fails(lm_guest_owner_judge(&seen, &self, 1, 0, "vm1", "Nothing was removed.", &v), LM_EOTHERSTATE);
	lm_assert_error_has("owner.json is no owner record lume-metal can read (is a FIFO, not a file)");
	lm_assert_error_has("Nothing was removed.");
	lm_assert_ok(lm_guest_owner_judge(&seen, &self, 1, 1, "vm1", "x", &v));
	assert_int_equal(v, LM_GUEST_OWNER_TAKE);
}

/* The install directory's own entries: the record and its upload's temporary name are lume-metal's
 * when regular files, and nothing else at those names is. */
static void test_entry_class(void **state)
{
	(void)state;
	assert_int_equal(lm_guest_entry_class(LM_GUEST_OWNER_FILE, LM_SSH_KIND_FILE), 'o');
	assert_int_equal(lm_guest_entry_class(LM_GUEST_OWNER_FILE, LM_SSH_KIND_LINK), 0);
	assert_int_equal(lm_guest_entry_class(LM_GUEST_OWNER_FILE, LM_SSH_KIND_DIR), 0);
	assert_int_equal(lm_guest_entry_class(LM_GUEST_OWNER_FILE, LM_SSH_KIND_FIFO), 0);
	assert_int_equal(lm_guest_entry_class(".owner.json.lm-0123456789abcdef", LM_SSH_KIND_FILE), 't');
	assert_int_equal(lm_guest_entry_class(".owner.json.lm-0123456789abcdef", LM_SSH_KIND_LINK), 0);
	assert_int_equal(lm_guest_entry_class(".owner.json.lm-0123", LM_SSH_KIND_FILE), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_judge),
		cmocka_unit_test(test_entry_class),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
