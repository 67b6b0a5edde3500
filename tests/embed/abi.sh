#!/usr/bin/env bash
# The results' ABI rule, as an embedder built against older and newer headers sees it:
# tests/embed/abi_outcome.c built through pkg-config against the installed (and moved) prefix,
# then run against the installed library. abi.sh PREFIX CC PKG_CONFIG SOURCE WORKDIR
# (LM_EXTRA_CFLAGS: the sanitizer flags of a sanitizer build)
set -euo pipefail
prefix=$1 cc=$2 pkg_config=$3 src=$4 work=$5
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work"; mkdir -p "$work"

pc=$(find "$prefix" -name lume-metal.pc | head -n 1)
[ -n "$pc" ] || fail "no lume-metal.pc in $prefix"
export PKG_CONFIG_PATH; PKG_CONFIG_PATH=$(dirname "$pc")
read -r -a extra <<<"${LM_EXTRA_CFLAGS:-}"
read -r -a pcflags <<<"$("$pkg_config" --cflags --libs lume-metal)"
libdir=$("$pkg_config" --variable=libdir lume-metal)
"$cc" -std=c11 -Wall -Wextra -Werror "${extra[@]}" "$src" "${pcflags[@]}" -Wl,-rpath,"$libdir" \
  -o "$work/abi_outcome" || fail "$src did not build against the installed headers"
"$work/abi_outcome" "$work" || fail "the result ABI checks failed (above)"
