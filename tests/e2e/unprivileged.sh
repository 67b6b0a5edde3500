#!/usr/bin/env bash
# What a user without root sees: unprivileged.sh sim|demo. Run as an unprivileged user (nobody)
# when the tests run as root. Each must refuse at once, in one line that says why.
. "$(dirname "$0")/../support/lm_test.sh"
: "${LM_SIM:?}" "${LM_BUILD_DIR:?}" "${LM_SOURCE_DIR:?}"
as_user() {
  if [ "$(id -u)" -eq 0 ]; then setpriv --reuid 65534 --regid 65534 --clear-groups "$@"; else "$@"; fi
}
lm_test_scratch unprivileged
chmod 777 "$T"
export TMPDIR=$T

# one_line_refusal RC OUT ERR REGEX
one_line_refusal() {
  [ "$1" -ne 0 ] || fail "it ran: $(cat "$2" "$3")"
  [ ! -s "$2" ] || fail "it printed on stdout: $(cat "$2")"
  [ "$(wc -l <"$3")" -eq 1 ] || fail "expected one line on stderr: $(cat "$3")"
  grep -Eq "$4" "$3" || fail "the line does not say why: $(cat "$3")"
}

case ${1:?usage: unprivileged.sh sim|demo} in
sim)
  # A permission error for the first address, not a walk over the whole of 127/8.
  set +e; as_user "$LM_SIM" --port 0 --vm vm1 >"$T/out" 2>"$T/err"; rc=$?; set -e
  one_line_refusal $rc "$T/out" "$T/err" "^lume-sim: cannot listen on 127\.0\.0\.2:22 for the guests: Permission denied \(port 22 needs root"
  ;;
demo)
  set +e; LUME_METAL_BUILD_DIR=$LM_BUILD_DIR as_user "$LM_SOURCE_DIR/examples/demo.sh" >"$T/out" 2>"$T/err"; rc=$?; set -e
  one_line_refusal $rc "$T/out" "$T/err" "^demo: .*needs root"
  ;;
esac
echo "unprivileged $1: refused as it should"
