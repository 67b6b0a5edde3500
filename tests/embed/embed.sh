#!/usr/bin/env bash
# examples/embed built against the installed (and moved) prefix — through pkg-config or through
# find_package(lume-metal) — and run against the Lume simulator: enable, status and rollback of
# one VM, its output checked, then the host and the guest checked to be as they were.
# embed.sh pkgconfig|cmake   (environment: see tests/embed/CMakeLists.txt)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
: "${LM_PREFIX:?}" "${LM_EXAMPLE:?}" "${LM_CC:?}" "${LM_CMAKE:?}" "${LM_PKG_CONFIG:?}"
how=$1
read -r -a extra <<<"${LM_EXTRA_CFLAGS:-}"

case $how in
pkgconfig)
  pc=$(find "$LM_PREFIX" -name lume-metal.pc | head -n 1)
  [ -n "$pc" ] || fail "no lume-metal.pc in $LM_PREFIX"
  export PKG_CONFIG_PATH; PKG_CONFIG_PATH=$(dirname "$pc")
  read -r -a pcflags <<<"$("$LM_PKG_CONFIG" --cflags --libs lume-metal)"
  libdir=$("$LM_PKG_CONFIG" --variable=libdir lume-metal)
  [ "$(cd "$libdir" && pwd -P)" = "$(cd "$(dirname "$pc")/.." && pwd -P)" ] || fail "pkg-config libdir $libdir is not the prefix's"
  "$LM_CC" -std=c11 -Wall -Wextra -Werror "${extra[@]}" "$LM_EXAMPLE/embed.c" "${pcflags[@]}" \
    -Wl,-rpath,"$libdir" -o "$E2E_DIR/embed" || fail "examples/embed did not build with pkg-config"
  ;;
cmake)
  "$LM_CMAKE" -S "$LM_EXAMPLE" -B "$E2E_DIR/build" -DCMAKE_PREFIX_PATH="$LM_PREFIX" \
    -DCMAKE_C_FLAGS="-Wall -Wextra -Werror ${LM_EXTRA_CFLAGS:-}" >"$E2E_DIR/configure.log" 2>&1 ||
    fail "find_package(lume-metal) failed: $(cat "$E2E_DIR/configure.log")"
  "$LM_CMAKE" --build "$E2E_DIR/build" >"$E2E_DIR/build.log" 2>&1 || fail "examples/embed did not build: $(cat "$E2E_DIR/build.log")"
  cp "$E2E_DIR/build/embed" "$E2E_DIR/embed"
  ;;
*) fail "usage: embed.sh pkgconfig|cmake" ;;
esac
note "examples/embed built through $how"

sim_start --vm vm1
set +e; "$E2E_DIR/embed" vm1 >"$E2E_DIR/out" 2>"$E2E_DIR/err"; rc=$?; set -e
cat "$E2E_DIR/out"
[ $rc -eq 0 ] || fail "embed exited $rc: $(cat "$E2E_DIR/err")"
expect_line() { grep -Eq "$1" "$E2E_DIR/out" || fail "no line matching '$1' in the output"; }
expect_line '^lume-metal [0-9]+\.[0-9]+\.[0-9]+ \(headers [0-9]+\.[0-9]+\.[0-9]+\)$'
expect_line '^enable: vm1: enabled$'
# Progress came through on_step while enable ran: each step started, then done with its time.
for step in host-preference start ready guest bundle install probe record; do
  expect_line "^progress: \[vm1\] $step \.\.\.$"
  expect_line "^progress: \[vm1\] $step done in [0-9]+\.[0-9]{2} s: "
done
expect_line '^progress: \[vm1\] guest-files done in [0-9]+\.[0-9]{2} s: removed '
expect_line '^status: vm1: enabled$'
expect_line '^status: bundle verified$'
expect_line '^rollback: vm1: rolled back$'
expect_line '^rollback: host preference restored$'
[ ! -e "$PLIST" ] || fail "the host preference file is left (it was absent before)"
[ ! -e "$(guest_home vm1)/.local/share/lume-metal" ] || fail "guest files left after rollback"
echo "ok: examples/embed ($how) enabled, checked and rolled back vm1"
