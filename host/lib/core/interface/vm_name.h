/* Internal: the one VM-name rule, for every module that keys on a VM's name (the VM managers'
 * command lines and URLs, the journal, known_hosts, lock files, paths under a manager's storage).
 *
 * A VM's name, as lume-metal stores and passes it, is 1 to LM_VM_NAME_MAX - 1 (127) bytes of
 * [A-Za-z0-9._-]; it does not start with '-' (lume, tart and utmctl would read it as an option)
 * and is not "." or ".." (it names a directory in their storage: ~/.lume/NAME, ~/.tart/vms/NAME).
 * 127 bytes leave room for UTM's "NAME.utm" and for the suffixes of our own files within a file
 * name's 255. lm_vm_name_normalize (lume-metal/vm.h) applies this rule after turning Lume's
 * NAME:TAG into NAME_TAG; lm_vm_name_check applies it to a name that is already stored. */
#ifndef LM_VM_NAME_H
#define LM_VM_NAME_H

#include <stddef.h>

#include "lume-metal/vm.h" /* LM_VM_NAME_MAX */

/* 0, or LM_EINVALID with a message quoting the name (sanitised) and saying what is wrong. `name`
 * need not be NUL-terminated (a field of a file); a NUL among its len bytes is a bad character. */
int lm_vm_name_check(const char *name, size_t len);

#endif
