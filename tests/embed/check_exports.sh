#!/usr/bin/env bash
# The installed library exports exactly the functions declared in the installed headers (no
# missing symbol, no extra one), and the installed library and tool carry no test hook.
# check_exports.sh PREFIX CC NM
. "$(dirname "$0")/../support/lm_test.sh"
prefix=$1 cc=$2 nm=$3

lib=$(find "$prefix" -name 'liblume-metal.so' -o -name 'liblume-metal.dylib' | head -n 1)
[ -n "$lib" ] || fail "no liblume-metal in $prefix"
lm_test_scratch exports
work=$T

# Declared: every installed header on its own (each must compile alone), preprocessed, every
# identifier lm_* followed by "(" (function pointer typedefs end in ")(" and do not match).
headers=$(find "$prefix/include" -name '*.h' | sort)
[ -n "$headers" ] || fail "no headers in $prefix/include"
for h in $headers; do
  printf '#include "%s"\n' "$h" >"$work/one.c"
  "$cc" -std=c11 -E -P -I"$prefix/include" "$work/one.c" >>"$work/pre.c" || fail "$h does not compile on its own"
done
grep -oE '\blm_[a-z0-9_]+[[:space:]]*\(' "$work/pre.c" | sed -E 's/[[:space:]]*\($//' | sort -u >"$work/declared"

# Exported: defined dynamic symbols, whatever their kind (less what a sanitizer build adds to
# every instrumented library: __asan_*, __odr_asan*, __ubsan_*, __sancov_*).
"$nm" -D --defined-only "$lib" | awk 'NF >= 3 { print $3 }' | sed 's/@.*//' |
  grep -Ev '^(__asan_|__odr_asan|__ubsan_|__sancov_)' | sort -u >"$work/exported"

# The lower-level calls (lume-metal/sys/) are declared only where a program includes them: the
# umbrella header lume-metal.h declares none of them (docs/embedding.md, "Lower-level calls").
sys_headers=$(find "$prefix/include/lume-metal/sys" -name '*.h' | sort)
[ -n "$sys_headers" ] || fail "no lower-level headers in $prefix/include/lume-metal/sys"
# shellcheck disable=SC2086
grep -ohE 'LM_EXTERN\([^)]*\)[[:space:]]*lm_[a-z0-9_]+' $sys_headers | sed -E 's/.*(lm_[a-z0-9_]+)$/\1/' |
  sort -u >"$work/sys.declared"
printf '#include <lume-metal.h>\n' >"$work/umbrella.c"
"$cc" -std=c11 -E -P -I"$prefix/include" "$work/umbrella.c" >"$work/umbrella_pre.c" || fail "lume-metal.h does not compile"
grep -oE '\blm_[a-z0-9_]+[[:space:]]*\(' "$work/umbrella_pre.c" | sed -E 's/[[:space:]]*\($//' | sort -u \
  >"$work/umbrella.declared"
both=$(comm -12 "$work/umbrella.declared" "$work/sys.declared")
[ -s "$work/sys.declared" ] || fail "no function declared in $(echo $sys_headers)"
[ -z "$both" ] || fail "lume-metal.h declares lower-level calls of lume-metal/sys/: $(echo $both)"
echo "$(wc -l <"$work/sys.declared") lower-level functions in $(echo "$sys_headers" | wc -l) headers of" \
  "lume-metal/sys/, none declared by lume-metal.h"

missing=$(comm -23 "$work/declared" "$work/exported")
extra=$(comm -13 "$work/declared" "$work/exported")
echo "$(wc -l <"$work/declared") functions declared in $(echo "$headers" | wc -l) installed headers;" \
  "$(wc -l <"$work/exported") symbols exported by $lib"
[ -z "$missing" ] || fail "declared in the installed headers but not exported: $(echo $missing)"
[ -z "$extra" ] || fail "exported but declared in no installed header: $(echo $extra)"

# Test hooks exist only in test builds: the LUME_METAL_TEST_* switches, and the simulated host's
# files that only tests point at (LUME_METAL_DHCPD_LEASES: vm_utm.c reads it under LM_TEST_HOOKS).
for f in "$lib" "$prefix"/bin/lume-metal; do
  for hook in LUME_METAL_TEST_ LUME_METAL_DHCPD_LEASES; do
    if grep -q "$hook" "$f"; then fail "$f carries a test hook ($hook)"; fi
  done
done
# libcurl is opened at the first use of Lume's API (host/lib/vm/curl_lib.c), not linked: the
# library and the tool do not name it among what they need loaded before main.
case "$(uname -s)" in
  Darwin) deps() { otool -L "$1"; } ;;
  *) command -v readelf >/dev/null || fail "readelf (binutils) is needed to read what $lib links"
     deps() { readelf -d "$1" | grep NEEDED; } ;;
esac
for f in "$lib" "$prefix"/bin/lume-metal; do
  deps "$f" >"$work/deps" || fail "cannot read what $f links"
  grep -q "libc\b\|libc\.\|libSystem" "$work/deps" || fail "no C library among what $f links: $(cat "$work/deps")"
  if grep -q "libcurl" "$work/deps"; then fail "$f links libcurl (it is loaded at first use): $(cat "$work/deps")"; fi
done
echo "ok: exactly the public API is exported; no test hook installed; libcurl not linked"
