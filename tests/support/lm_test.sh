# lm_test.sh: what the test scripts share, written once (the shell side of lm_test.h).
#   . "$(dirname "$0")/../support/lm_test.sh"
# Strict mode; fail and note; a private scratch directory removed on exit; the loopback addresses
# the test was given by the address plan (cmake/LumeMetalTesting.cmake).
set -euo pipefail

fail() { echo "FAIL: $*" >&2; exit 1; }
note() { echo "--- $*"; }

# lm_test_scratch TAG: T, a new private directory lm-TAG.XXXXXX under $TMPDIR (else /tmp), removed
# when the script exits whatever happens, its exit status kept. A script that has more to undo
# first (processes to stop) defines lm_test_before_exit, which is called before the removal.
lm_test_scratch() {
  T=$(mktemp -d "${TMPDIR:-/tmp}/lm-$1.XXXXXX")
  trap lm_test_exit EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
}
lm_test_exit() { # [STATUS]: the script's (default: the status the exit trap was entered with)
  local rc=${1:-$?}
  if declare -F lm_test_before_exit >/dev/null; then lm_test_before_exit "$rc" || true; fi
  chmod -R u+rwX "$T" 2>/dev/null || true # a test that took a permission away to provoke a failure
  rm -rf "$T"
  exit "$rc"
}

# run_checked NAME WANT_EXIT PROGRAM ARGS...: PROGRAM run with an empty stdin, its stdout in
# $T/NAME.out and its stderr in $T/NAME.err, its exit status checked. Then out_is/err_is NAME TEXT
# (all of it) and out_has/err_has NAME TEXT (a fixed string in it).
run_checked() {
  local name=$1 want=$2 rc=0
  shift 2
  "$@" >"$T/$name.out" 2>"$T/$name.err" </dev/null || rc=$?
  [ "$rc" = "$want" ] || fail "$name: $* exited $rc, expected $want: $(cat "$T/$name.out" "$T/$name.err")"
}
out_is() { [ "$(cat "$T/$1.out")" = "$2" ] || fail "$1: stdout '$(cat "$T/$1.out")', expected '$2'"; }
err_is() { [ "$(cat "$T/$1.err")" = "$2" ] || fail "$1: stderr '$(cat "$T/$1.err")', expected '$2'"; }
out_has() { grep -qF -- "$2" "$T/$1.out" || fail "$1: stdout lacks '$2': $(cat "$T/$1.out")"; }
err_has() { grep -qF -- "$2" "$T/$1.err" || fail "$1: stderr lacks '$2': $(cat "$T/$1.err")"; }

# lm_test_address HOST [BASE]: host HOST (1..254) of the test's loopback /24 (127.B.N.0/24), the one of
# LM_ADDRESS_BASE (or BASE, such as "$LM_ADDRESS_BASE_B"). A test that binds addresses never picks
# its own: without one from the plan it stops here, saying so.
lm_test_address() {
  local base=${2-${LM_ADDRESS_BASE:-}} block="" net=""
  [[ $base =~ ^127\.([0-9]+)\.([0-9]+)\.2$ ]] && block=${BASH_REMATCH[1]} net=${BASH_REMATCH[2]}
  [ -n "$net" ] && [ "$block" -le 254 ] && [ "$net" -ge 1 ] && [ "$net" -le 254 ] ||
    fail "LM_ADDRESS_BASE is '$base', not 127.B.N.2: this test binds loopback addresses and gets them from the address plan (lm_test_loopback in cmake/LumeMetalTesting.cmake); run it through ctest"
  [[ $1 =~ ^[0-9]+$ ]] && [ "$1" -ge 1 ] && [ "$1" -le 254 ] || fail "lm_test_address: host '$1' is outside 1..254"
  echo "127.$block.$net.$1"
}
