/* The fields of lm_options version 1, in order: test_abi_v1.c sets each one's offset and size in
 * the frozen struct beside the current header's (layout_current.c). */
#define LM_V1_FIELDS(X) \
	X(version) X(state_dir) X(prefs_dir) X(lume_url) X(vm_manager) X(lume_program) X(host_key_policy) \
	X(ssh_user) X(ssh_key) X(ssh_password_file) X(bundle_dir) X(connect_timeout) X(ready_timeout) \
	X(command_timeout) X(boot_margin) X(dry_run) X(force) X(force_user_mismatch) X(no_wait) X(log) \
	X(log_data) X(on_step) X(on_output) X(should_cancel) X(callback_data) X(vm_address) X(tart_program) \
	X(utmctl_program) X(keep_host) X(restore_host)

/* Offset and size of each field, in the order above. */
#define LM_V1_LAYOUT(field) offsetof(lm_options, field), sizeof(((lm_options *)0)->field),
