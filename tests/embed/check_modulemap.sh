#!/usr/bin/env bash
# The installed module map (include/lume-metal-swift/module.modulemap) builds as a Clang module
# from nothing but that folder on the include path, and the object that imports it refers to the
# library's functions. check_modulemap.sh PREFIX CLANG SOURCE.m WORKDIR NM
. "$(dirname "$0")/../support/lm_test.sh"
prefix=$1 clang=$2 src=$3 work=$4 nm=$5
rm -rf "$work"; mkdir -p "$work"
"$clang" -x objective-c -fmodules -fmodules-cache-path="$work/cache" -Werror -Wall -Wextra \
  -I "$prefix/include/lume-metal-swift" -c "$src" -o "$work/import.o" ||
  fail "@import LumeMetal did not build with $clang"
for sym in lm_context_new lm_context_free lm_error_last lm_version; do
  "$nm" -u "$work/import.o" | grep -qw "$sym" || fail "the object does not call $sym"
done
echo "ok: @import LumeMetal builds with $("$clang" --version | head -n 1)"
