#!/usr/bin/env bash
# examples/embed built against the installed prefix — through pkg-config, with exactly the commands
# docs/embedding.md gives (its rpath, or LD_LIBRARY_PATH), or through find_package(lume-metal) —
# and run against the Lume simulator: enable, status and rollback of one VM, its output checked,
# then the host and the guest checked to be as they were.
# embed.sh pkgconfig|pkgconfig_env|cmake   (environment: see tests/embed/CMakeLists.txt)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
: "${LM_PREFIX:?}" "${LM_EXAMPLE:?}" "${LM_CC:?}" "${LM_CMAKE:?}" "${LM_PKG_CONFIG:?}"
how=$1
read -r -a extra <<<"${LM_EXTRA_CFLAGS:-}"

# docs_block N: the Nth ```sh block of docs/embedding.md's "Getting it", as the reader copies it.
docs_block() {
  awk -v want="$1" '/^## Getting it/ { on = 1 } /^## The API/ { on = 0 }
    on && /^```sh$/ { n++; inside = (n == want); next } inside && /^```$/ { inside = 0 } inside' \
    "$here/../../docs/embedding.md"
}
# run_documented N PREFIX: that block with this test's prefix, example, VM and compiler flags put for
# the reader's (/opt/lume-metal, app.c, my-vm; LM_EXTRA_CFLAGS: a sanitized library's), in E2E_DIR.
run_documented() {
  local script
  script=$(docs_block "$1" | sed -e "s|/opt/lume-metal|$2|g" -e "s|cmake --install build |cmake --install \"$LM_BUILD_DIR\" |" \
    -e "s|^cc app\.c |cc ${LM_EXTRA_CFLAGS:-} \"$LM_EXAMPLE/embed.c\" |" -e 's|my-vm|vm1|g')
  [ -n "$script" ] || fail "docs/embedding.md has no block $1 under 'Getting it'"
  echo "$script" >"$E2E_DIR/documented-$1.sh"
  (cd "$E2E_DIR" && PATH="$(dirname "$LM_PKG_CONFIG"):$PATH" bash -e "$E2E_DIR/documented-$1.sh") \
    >"$E2E_DIR/out" 2>"$E2E_DIR/err"
}

case $how in
pkgconfig|pkgconfig_env) ;;
cmake)
  "$LM_CMAKE" -S "$LM_EXAMPLE" -B "$E2E_DIR/build" -DCMAKE_PREFIX_PATH="$LM_PREFIX" \
    -DCMAKE_C_FLAGS="-Wall -Wextra -Werror ${LM_EXTRA_CFLAGS:-}" >"$E2E_DIR/configure.log" 2>&1 ||
    fail "find_package(lume-metal) failed: $(cat "$E2E_DIR/configure.log")"
  "$LM_CMAKE" --build "$E2E_DIR/build" >"$E2E_DIR/build.log" 2>&1 || fail "examples/embed did not build: $(cat "$E2E_DIR/build.log")"
  cp "$E2E_DIR/build/embed" "$E2E_DIR/embed"
  ;;
*) fail "usage: embed.sh pkgconfig|pkgconfig_env|cmake" ;;
esac
note "examples/embed built through $how"

# A boot that takes a while: the enable waits for the VM, and the example says it waits (issue 50:
# it printed every wait as "failed").
sim_start --vm vm1 --boot-delay 2
set +e
case $how in
pkgconfig)
  # The first block as written: install into a prefix of its own, build with the rpath, run.
  run_documented 1 "$E2E_DIR/opt/lume-metal"; rc=$?
  ;;
pkgconfig_env)
  # Without the rpath the program does not start, saying so; the second block (LD_LIBRARY_PATH) runs it.
  PKG_CONFIG_PATH=$LM_PREFIX/lib/pkgconfig
  [ -d "$PKG_CONFIG_PATH" ] || PKG_CONFIG_PATH=$(dirname "$(find "$LM_PREFIX" -name lume-metal.pc | head -n 1)")
  export PKG_CONFIG_PATH
  run_documented 2 "$LM_PREFIX"; rc=$?
  (cd "$E2E_DIR" && ./app vm1) >/dev/null 2>"$E2E_DIR/norpath.err"
  [ $? -eq 127 ] && grep -q 'liblume-metal\.so\.1: cannot open shared object file' "$E2E_DIR/norpath.err" ||
    fail "without rpath or LD_LIBRARY_PATH: $(cat "$E2E_DIR/norpath.err")"
  ;;
cmake)
  "$E2E_DIR/embed" vm1 >"$E2E_DIR/out" 2>"$E2E_DIR/err"; rc=$?
  ;;
esac
set -e
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
expect_line '^progress: \[vm1\] wait-ready waiting [0-9]+ s: '
! grep -q ' failed in ' "$E2E_DIR/out" || fail "a step said failed: $(grep ' failed in ' "$E2E_DIR/out")"
expect_line '^status: vm1: enabled$'
expect_line '^status: bundle verified$'
expect_line '^rollback: vm1: rolled back$'
expect_line '^rollback: host preference restored$'
[ ! -e "$PLIST" ] || fail "the host preference file is left (it was absent before)"
[ ! -e "$(guest_home vm1)/.local/share/lume-metal" ] || fail "guest files left after rollback"
echo "ok: examples/embed ($how) enabled, checked and rolled back vm1"
