#!/usr/bin/env bash
# The ABI rule's generated check (cmake/LumeMetalAbi.cmake) holds the real headers and fails where
# it must: a copy of the headers with a sized struct that ends in padding, and one with a call
# that hands out an array of sized structs, each fail to compile, naming what is wrong.
# abi_rule.sh SOURCE_DIR BUILD_DIR CC CMAKE WORKDIR
. "$(dirname "$0")/../support/lm_test.sh"
src=$1 build=$2 cc=$3 cmake=$4 work=$5
rm -rf "$work"; mkdir -p "$work"
copy_headers() { mkdir -p "$work/$1" && cp -r "$src/include" "$work/$1/include"; } # a tree of its own
check() { # check TREE: generate the file for TREE's headers and compile it; its errors in $work/err
  "$cmake" -DLM_ABI_ROOT="$1" -DLM_ABI_OUT="$work/abi_rule.c" -P "$src/cmake/LumeMetalAbi.cmake" ||
    fail "the generator failed on $1"
  "$cc" -std=c11 -fsyntax-only -I "$1/include" -I "$build/include" "$work/abi_rule.c" 2>"$work/err"
}
check "$src" || fail "the real headers break the ABI rule: $(cat "$work/err")"
n=$(grep -c '^_Static_assert' "$work/abi_rule.c")
[ "$n" -ge 18 ] || fail "only $n sized structs found in the public headers (18 on 2026-12-07)"

# A sized struct whose three ints leave 4 bytes of trailing padding (as lm_host_pref_vm did).
copy_headers padded
cat >>"$work/padded/include/lume-metal/prefs.h" <<'H'
typedef struct {
	size_t size; /* sizeof(lm_test_padded) */
	char name[128];
	int a;
	int b;
	int last_one; /* ends at 148; sizeof 152 */
} lm_test_padded;
H
if check "$work/padded"; then fail "a struct ending in padding compiled"; fi
grep -q 'lm_test_padded (lume-metal/prefs.h) ends with padding after its last member, last_one' "$work/err" ||
  fail "the error does not name the padded struct and its last member: $(cat "$work/err")"

# A call that hands out an array of sized structs (as lm_host_pref_vms did).
copy_headers array
cat >>"$work/array/include/lume-metal/doctor.h" <<'H'
LM_EXTERN(int) lm_test_checks(lm_context *ctx, lm_doctor_check **out, size_t *count);
H
if check "$work/array"; then fail "a call handing out an array of sized structs compiled"; fi
grep -q 'lm_test_checks (lume-metal/doctor.h) hands out an array of lm_doctor_check' "$work/err" ||
  fail "the error does not name the call and the struct: $(cat "$work/err")"
echo "abi_rule: $n sized structs checked; a padded struct and an array of structs each refused"
