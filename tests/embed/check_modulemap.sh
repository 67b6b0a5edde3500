#!/usr/bin/env bash
# The installed module map (include/lume-metal-swift/module.modulemap) builds as a Clang module
# from nothing but that folder on the include path, and the object that imports it refers to the
# library's functions. check_modulemap.sh PREFIX CLANG SOURCE.m WORKDIR NM
. "$(dirname "$0")/../support/lm_test.sh"
prefix=$1 clang=$2 src=$3 work=$4 nm=$5
rm -rf "$work"; mkdir -p "$work"
build() {
  "$clang" -x objective-c -fmodules -fmodules-cache-path="$work/cache" -Werror -Wall -Wextra \
    -I "$prefix/include/lume-metal-swift" "$@"
}
build -c "$src" -o "$work/import.o" || fail "@import LumeMetal and LumeMetal.Sys did not build with $clang"
for sym in lm_context_new lm_context_free lm_error_last lm_version lm_vm_manager_open lm_vm_manager_free; do
  "$nm" -u "$work/import.o" | grep -qw "$sym" || fail "the object does not call $sym"
done
# The lower-level calls (include/lume-metal/sys/) are a submodule of their own, as in C they are
# headers lume-metal.h does not include: without `@import LumeMetal.Sys` they are not declared.
if build -DLM_WITHOUT_SYS -c "$src" -o "$work/without_sys.o" 2>"$work/without_sys.err"; then
  fail "@import LumeMetal alone declares the lower-level calls (lm_vm_manager_open)"
fi
grep -q "lm_vm_manager" "$work/without_sys.err" || fail "without LumeMetal.Sys: $(cat "$work/without_sys.err")"
echo "ok: @import LumeMetal and LumeMetal.Sys build with $("$clang" --version | head -n 1); LumeMetal alone lacks Sys"
