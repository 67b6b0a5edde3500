/* A program built against version 1 of the options (the frozen lume-metal-v1.h, no current header)
 * and run against the library as built now. Its struct is allocated at exactly the version-1 size,
 * so that ASan (preset asan) catches the library reading or writing past it; lm_options_init(o, 1)
 * fills it, lm_context_new reads it, and every field the program set is the one the library uses:
 * the state directory (a known_hosts pin forgotten there), the VM manager and its address (read
 * from the end of the struct), timeouts and flags. The layout of the version-1 fields in the
 * current header is checked against the frozen one, field by field. */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "lume-metal-v1.h"
#include "v1_fields.h"

/* layout_current.c */
extern const size_t lm_abi_current_layout[];
extern const size_t lm_abi_current_size;

#define V1_END (offsetof(lm_options, restore_host) + sizeof(((lm_options *)0)->restore_host))

static char tmp[] = "/tmp/lm-abi-v1.XXXXXX", state_dir[64], prefs_dir[64];

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int setup(void **state)
{
	(void)state;
	if (mkdtemp(tmp) == NULL)
		return -1;
	snprintf(state_dir, sizeof(state_dir), "%s/state", tmp);
	snprintf(prefs_dir, sizeof(prefs_dir), "%s/prefs", tmp);
	return mkdir(state_dir, 0700) == 0 && mkdir(prefs_dir, 0700) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return nftw(tmp, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void assert_message_has(const char *needle)
{
	if (strstr(lm_error_last()->message, needle) == NULL)
		fail_msg("expected \"%s\" in: %s", needle, lm_error_last()->message);
}

/* The version-1 struct on the heap at its exact size, garbage first, then lm_options_init(o, 1). */
static lm_options *v1_options(void)
{
	lm_options *o = malloc(sizeof(*o));

	assert_non_null(o);
	memset(o, 0xa5, sizeof(*o));
	assert_int_equal(lm_options_init(o, 1), 0);
	return o;
}

static void test_layout_unchanged(void **state)
{
#define LM_V1_NAMES(field) #field " offset", #field " size",
	static const char *const names[] = {LM_V1_FIELDS(LM_V1_NAMES)};
	static const size_t frozen[] = {LM_V1_FIELDS(LM_V1_LAYOUT)};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(frozen) / sizeof(frozen[0]); i++)
		if (frozen[i] != lm_abi_current_layout[i])
			fail_msg("lm_options.%s: %zu in version 1, %zu in the current header", names[i], frozen[i],
			    lm_abi_current_layout[i]);
	assert_true(lm_abi_current_size >= V1_END);
}

static void test_init_fills_version_1(void **state)
{
	lm_options *o = v1_options(), zero;

	(void)state;
	memset(&zero, 0, sizeof(zero));
	zero.version = 1;
	assert_int_equal(o->version, 1);
	assert_memory_equal(o, &zero, V1_END);
	assert_int_equal(lm_options_init(o, 0), LM_EINVALID);
	assert_message_has("version 0");
	free(o);
}

static void write_known_hosts(void)
{
	static const char key[] = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl";
	char path[96];
	FILE *f;

	snprintf(path, sizeof(path), "%s/known_hosts", state_dir);
	assert_non_null(f = fopen(path, "w"));
	fprintf(f, "vm1 %s\nvm2 %s kept\n", key, key);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, 0600), 0);
}

static void test_context_reads_version_1(void **state)
{
	lm_options *o = v1_options();
	const lm_options *in;
	lm_context *ctx = NULL;
	lm_vm_manager *vmm = NULL;
	char path[96], text[1024];
	size_t n;
	FILE *f;

	(void)state;
	o->state_dir = state_dir;
	o->prefs_dir = prefs_dir;
	o->vm_manager = LM_VM_MANAGER_NONE;
	o->ssh_user = "tester";
	o->connect_timeout = 7;
	o->dry_run = 1;
	o->vm_address = "192.0.2.7";
	o->keep_host = 1;
	o->restore_host = 1;
	assert_int_equal(lm_context_new(&ctx, o), 0);
	/* The context holds copies: the program's struct and strings may go. */
	memset(o, 0x5a, sizeof(*o));
	free(o);

	in = lm_context_options(ctx);
	assert_true(in->version >= 1);
	assert_string_equal(lm_context_state_dir(ctx), state_dir);
	assert_string_equal(in->state_dir, state_dir);
	assert_string_equal(in->prefs_dir, prefs_dir);
	assert_int_equal(in->vm_manager, LM_VM_MANAGER_NONE);
	assert_string_equal(in->ssh_user, "tester");
	assert_true(in->connect_timeout == 7 && in->ready_timeout == 300 && in->command_timeout == 120);
	assert_true(in->dry_run == 1 && in->force == 0 && in->keep_host == 1 && in->restore_host == 1);
	assert_string_equal(in->vm_address, "192.0.2.7");

	/* The manager-less mode at the address from the end of the struct. */
	assert_int_equal(lm_vm_manager_open(&vmm, ctx), 0);
	assert_string_equal(lm_vm_manager_name(vmm), "none");
	lm_vm_manager_free(vmm);

	/* A pin forgotten in the state directory the program named; the other VM's kept. */
	write_known_hosts();
	assert_int_equal(lm_ssh_forget_host(ctx, "vm1"), 1);
	snprintf(path, sizeof(path), "%s/known_hosts", state_dir);
	assert_non_null(f = fopen(path, "r"));
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	assert_null(strstr(text, "vm1 "));
	assert_non_null(strstr(text, "vm2 ssh-ed25519 "));
	lm_context_free(ctx);

	/* A bad value in a version-1 field is found: the library read that field. */
	o = v1_options();
	o->state_dir = state_dir;
	o->vm_manager = LM_VM_MANAGER_NONE;
	o->vm_address = "my-vm.local";
	assert_int_equal(lm_context_new(&ctx, o), 0);
	free(o);
	assert_int_equal(lm_vm_manager_open(&vmm, ctx), LM_EINVALID);
	assert_message_has("not an IPv4 address");
	lm_context_free(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_unchanged),
		cmocka_unit_test(test_init_fills_version_1),
		cmocka_unit_test(test_context_reads_version_1),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
