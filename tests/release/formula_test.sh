#!/usr/bin/env bash
# formula_test.sh RUBY FORMULA PREFIX LIPO CLANG: the formula's `test do` block (formula_test.rb)
# against this build installed into PREFIX, `lipo` being this machine's llvm-lipo.
#  1. As installed: every assertion passes up to the shim's slices, and the slice assertion fails
#     naming what is missing: the Linux cross-build links arm64 and x86_64 only (ld64.lld cannot
#     link arm64e; docs/guest.md, "Builds"), which is what the assertion is there to catch in a
#     Homebrew build whose shims dropped -arch.
#  2. The same prefix with its shim given an arm64e slice (an arm64e object clang compiled, put
#     beside the two slices with llvm-lipo; the manifest's hash updated): the whole block passes.
. "$(dirname "$0")/../support/lm_test.sh"
ruby=$1 formula=$2 prefix=$3 lipo=$4 clang=$5
lm_test_scratch formula
here=$(cd "$(dirname "$0")" && pwd)
bundle=share/lume-metal/bundles/darwin-universal
export LM_LIPO=$lipo

note "as installed: the slice assertion catches the missing arm64e slice"
set +e; "$ruby" "$here/formula_test.rb" "$formula" "$prefix" >"$T/as-built.out" 2>&1; rc=$?; set -e
[ "$rc" -ne 0 ] || fail "the block passed with a shim of slices $("$lipo" -archs "$prefix/$bundle/LumeMetalShim.dylib")"
grep -qF 'expected ["arm64", "arm64e", "x86_64"], got ["arm64", "x86_64"]' "$T/as-built.out" ||
  fail "the block did not fail at the slices: $(cat "$T/as-built.out")"
grep -qF "==> lipo -archs $(cd "$prefix" && pwd -P)/$bundle/LumeMetalShim.dylib" "$T/as-built.out" &&
  grep -qF '==> ' "$T/as-built.out" || fail "the slice assertion did not run lipo: $(cat "$T/as-built.out")"

note "with an arm64e slice: the whole block passes"
cp -a "$prefix" "$T/prefix"
shim=$T/prefix/$bundle/LumeMetalShim.dylib
echo 'int lm_formula_test_arm64e_slice;' >"$T/e.c"
"$clang" -target arm64e-apple-macos11 -c "$T/e.c" -o "$T/e.o"
"$lipo" -thin arm64 "$shim" -output "$T/arm64"
"$lipo" -thin x86_64 "$shim" -output "$T/x86_64"
"$lipo" -create "$T/arm64" "$T/x86_64" "$T/e.o" -output "$shim"
sum=$(sha256sum "$shim" | cut -d' ' -f1)
jq --arg s "$sum" '(.files[] | select(.name == "LumeMetalShim.dylib") | .sha256) = $s' \
  "$T/prefix/$bundle/manifest.json" >"$T/manifest.json"
cp "$T/manifest.json" "$T/prefix/$bundle/manifest.json"
"$ruby" "$here/formula_test.rb" "$formula" "$T/prefix" >"$T/fat.out" 2>&1 || fail "the block: $(cat "$T/fat.out")"
grep -q "test block passed" "$T/fat.out" || fail "$(cat "$T/fat.out")"
echo "formula test: the slices asserted (arm64e missing from the cross-build caught; all three pass)"
