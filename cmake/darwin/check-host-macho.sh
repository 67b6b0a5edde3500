#!/usr/bin/env bash
# check-host-macho.sh LLVM_BIN MACOS_LIBC SDK_DIR OUT_DIR ARCH=PREFIX=STUB_DIR...
#
# The checks of the macOS cross-build of the host (cmake/LumeMetalHostMachO.cmake, the `macos`
# preset), on each architecture's installed tree PREFIX (lib/liblume-metal.1.dylib, bin/lume-metal,
# include/), then the universal files in OUT_DIR. No Mac runs them, so what can be known here is
# checked here:
#
# (a) Every symbol each image imports is exported by the library it is bound to (two-level
#     namespace: `llvm-nm -m` names the library of each undefined symbol, by the short name that
#     `llvm-otool -L` maps back to an install name): macOS 13's libSystem (Zig's
#     libSystem.13.tbd, with every library it re-exports, MACOS_LIBC/lib/libSystem.tbd), our
#     CoreFoundation (SDK_DIR/.../CoreFoundation.tbd), a dependency's stub (STUB_DIR, made from the
#     real library's exports by make-stub.sh) or, for the tool, the library just built. The images
#     are linked with -undefined dynamic_lookup (cmake/darwin/DarwinHost.cmake), so a symbol no
#     library had is not bound at all: it is unresolved too. Export lists are read by llvm-readtapi
#     (TAPI v5 is JSON) and jq, not by a parser of ours.
# (b) The library exports exactly the public API, as tests/embed/check_exports.sh defines it: the
#     functions declared by the installed headers (each preprocessed alone; every lm_* followed by
#     "(") against the library's export trie (what dyld sees).
# And, as check_exports.sh does for the Linux library: no test hook in the installed images, and
# libcurl not among the libraries they load (host/lib/vm/curl_lib.c opens it at first use).
set -euo pipefail
export LC_ALL=C # one collation for sort and comm
[ $# -ge 5 ] || { echo "usage: $0 LLVM_BIN MACOS_LIBC SDK_DIR OUT_DIR ARCH=PREFIX=STUB_DIR..." >&2; exit 2; }
mkdir -p "$4"
# Absolute paths: headers are included by their path from a scratch folder.
llvm=$(cd "$1" && pwd) libc=$(cd "$2" && pwd) sdk=$(cd "$3" && pwd) out=$(cd "$4" && pwd)
shift 4
for t in clang llvm-nm llvm-otool llvm-objdump llvm-readtapi llvm-lipo; do
  [ -x "$llvm/$t" ] || { echo "check-host-macho: $llvm/$t is missing (Debian/Ubuntu: sudo apt-get install clang-22 llvm-22)" >&2; exit 1; }
done
command -v jq >/dev/null || { echo "check-host-macho: jq is needed (Debian/Ubuntu: sudo apt-get install jq)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
fail() { echo "macos host: FAILED: $*" >&2; failed=1; }

# export_list TBD_OR_DYLIB ARCH OUT_FILE: prints the install name; OUT_FILE gets the exported
# symbols for ARCH (every document of the file: a library and those it re-exports).
export_list() {
  local json=$work/export.json
  case "$1" in
    *.tbd) "$llvm/llvm-readtapi" --filetype=tbd-v5 "$1" -o "$json" ;;
    *) "$llvm/llvm-readtapi" -stubify --filetype=tbd-v5 "$1" -o "$json" ;;
  esac
  jq -r --arg t "$2-macos" '[.main_library] + (.libraries // []) | .[]
    | ((.exported_symbols // []) + (.reexported_symbols // []))[]
    | select(.targets == null or (.targets | index($t)))
    | (.data // {}), (.text // {}) | .. | strings' "$json" | sort -u >"$3"
  jq -r '.main_library.install_names[0].name' "$json"
}

declare -A exports_of # install name -> file of its exported symbols (per architecture)

# check_imports ARCH IMAGE: (a) for one image; each unresolved symbol on stderr, and in
# $work/summary "N symbols from M libraries" and in $work/unresolved their count.
check_imports() {
  local arch=$1 image=$2 name short install n bad=0 libs=0
  name=$(basename "$image")
  # The libraries the image loads, in load-command order (a dylib's first line is its own id).
  "$llvm/llvm-otool" -L "$image" | tail -n +2 | sed -E 's/^[[:space:]]+//; s/ \(compatibility version.*$//' >"$work/loads"
  case "$image" in *.dylib) sed -i 1d "$work/loads" ;; esac
  # "<library short name> <symbol>"; "- <symbol>" for one bound to no library.
  "$llvm/llvm-nm" -m --undefined-only "$image" |
    sed -nE 's/^.*external ([^ ]+) \(from ([^)]+)\)$/\2 \1/p; s/^.*external ([^ ]+) \(dynamically looked up\)$/- \1/p' |
    sort -u >"$work/imports"
  n=$(wc -l <"$work/imports")
  [ "$n" -eq "$("$llvm/llvm-nm" -m --undefined-only "$image" | grep -c .)" ] || fail "$name [$arch]: cannot read every import of $image"
  cut -d' ' -f1 "$work/imports" | sort -u >"$work/shorts"
  while IFS= read -r short; do
    awk -v s="$short" '$1 == s { print $2 }' "$work/imports" >"$work/syms"
    if [ "$short" = - ]; then
      sed "s/^/macos host [$arch]: $name: unresolved /; s/\$/: exported by no library it links/" "$work/syms" >&2
      bad=$((bad + $(wc -l <"$work/syms")))
      continue
    fi
    # llvm-nm's short name (libSystem, CoreFoundation, libplist-2, ...) is the start of exactly one
    # loaded library's file name.
    install=$(awk -v s="$short" '{ f = $0; sub(/.*\//, "", f); if (f == s || index(f, s ".") == 1) print }' "$work/loads")
    libs=$((libs + 1))
    if [ "$(grep -c . <<<"$install")" -ne 1 ]; then
      fail "$name [$arch]: cannot tell which loaded library \"$short\" is: $(tr '\n' ' ' <"$work/loads")"
      bad=$((bad + $(wc -l <"$work/syms")))
    elif [ -z "${exports_of[$install]:-}" ]; then
      sed "s|^|macos host [$arch]: $name: unresolved |; s|\$|: bound to $install, whose exports are not known|" "$work/syms" >&2
      bad=$((bad + $(wc -l <"$work/syms")))
    else
      comm -23 "$work/syms" "${exports_of[$install]}" >"$work/missing"
      sed "s|^|macos host [$arch]: $name: unresolved |; s|\$|: not exported by $install|" "$work/missing" >&2
      bad=$((bad + $(wc -l <"$work/missing")))
    fi
  done <"$work/shorts"
  [ "$bad" -eq 0 ] || failed=1
  echo "$n symbols from $libs libraries" >"$work/summary"
  echo "$bad" >"$work/unresolved"
}

# declared_api PREFIX ARCH: the functions the installed headers declare (check_exports.sh's rule),
# preprocessed for macOS with macOS's headers.
declared_api() {
  local prefix=$1 arch=$2 zig_arch=x86_64 h
  [ "$arch" = arm64 ] && zig_arch=aarch64
  : >"$work/pre.c"
  find "$prefix/include" -name '*.h' | sort >"$work/headers"
  [ -s "$work/headers" ] || { fail "no headers in $prefix/include"; return 0; }
  while IFS= read -r h; do
    printf '#include "%s"\n' "$h" >"$work/one.c"
    "$llvm/clang" --target="$arch-apple-macos13" -nostdlibinc -isystem "$libc/include/$zig_arch-macos.13-none" \
      -isystem "$libc/include/any-macos.13-any" -isystem "$libc/include/any-macos-any" \
      -std=c11 -E -P -I"$prefix/include" "$work/one.c" >>"$work/pre.c" || fail "$h does not compile on its own for macOS"
  done <"$work/headers"
  grep -oE '\blm_[a-z0-9_]+[[:space:]]*\(' "$work/pre.c" | sed -E 's/[[:space:]]*\($//' | sort -u >"$work/declared"
}

slices=()
for spec in "$@"; do
  IFS='=' read -r arch prefix stubs <<<"$spec"
  prefix=$(cd "$prefix" && pwd) stubs=$(cd "$stubs" && pwd)
  lib=$prefix/lib/liblume-metal.1.dylib tool=$prefix/bin/lume-metal
  for f in "$lib" "$tool"; do [ -f "$f" ] || { echo "macos host [$arch]: $f is missing" >&2; exit 1; }; done
  for f in "$lib" "$tool"; do
    archs=$("$llvm/llvm-lipo" -archs "$f" | xargs)
    [ "$archs" = "$arch" ] || fail "[$arch]: $f is not a thin $arch image: $archs"
  done

  # (a)
  exports_of=()
  for tbd in "$libc/lib/libSystem.tbd" "$sdk/System/Library/Frameworks/CoreFoundation.framework/CoreFoundation.tbd" \
      "$stubs"/*.tbd "$lib"; do
    list=$work/exports.$arch.$(basename "$tbd")
    install=$(export_list "$tbd" "$arch" "$list")
    exports_of[$install]=$list
  done
  check_imports "$arch" "$lib"
  lib_summary=$(cat "$work/summary") unresolved=$(cat "$work/unresolved")
  check_imports "$arch" "$tool"
  tool_summary=$(cat "$work/summary") unresolved=$((unresolved + $(cat "$work/unresolved")))
  echo "macos host [$arch]: imports: liblume-metal.1.dylib $lib_summary, lume-metal $tool_summary: $unresolved unresolved"

  # (b)
  declared_api "$prefix" "$arch"
  "$llvm/llvm-objdump" --macho --exports-trie "$lib" | awk '/^0x/ { print $2 }' | sed 's/^_//' | sort -u >"$work/exported"
  missing=$(comm -23 "$work/declared" "$work/exported")
  extra=$(comm -13 "$work/declared" "$work/exported")
  [ -z "$missing" ] || fail "[$arch]: declared in the installed headers but not exported: $(tr '\n' ' ' <<<"$missing")"
  [ -z "$extra" ] || fail "[$arch]: exported but declared in no installed header: $(tr '\n' ' ' <<<"$extra")"
  echo "macos host [$arch]: exports: $(wc -l <"$work/declared") functions declared in $(wc -l <"$work/headers") installed headers," \
    "$(wc -l <"$work/exported") exported by liblume-metal.1.dylib$([ -z "$missing$extra" ] && echo ": exactly the public API")"

  for f in "$lib" "$tool"; do
    for hook in LUME_METAL_TEST_ LUME_METAL_DHCPD_LEASES; do
      if grep -q "$hook" "$f"; then fail "[$arch]: $f carries a test hook ($hook)"; fi
    done
    if "$llvm/llvm-otool" -L "$f" | grep -q libcurl; then fail "[$arch]: $f links libcurl (it is opened at first use)"; fi
  done
  slices+=("$arch=$prefix")
done

# One universal file each, as Homebrew's bottles are not (one per architecture) but a .pkg or a
# copy between Macs may be.
mkdir -p "$out/lib" "$out/bin"
for rel in lib/liblume-metal.1.dylib bin/lume-metal; do
  inputs=()
  for s in "${slices[@]}"; do inputs+=("${s#*=}/$rel"); done
  "$llvm/llvm-lipo" -create "${inputs[@]}" -output "$out/$rel"
  echo "macos host: $rel: universal ($("$llvm/llvm-lipo" -archs "$out/$rel" | xargs)): $out/$rel"
done
if [ "$failed" -ne 0 ]; then
  echo "macos host: FAILED (see above)" >&2
  exit 1
fi
