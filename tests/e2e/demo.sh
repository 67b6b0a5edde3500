#!/usr/bin/env bash
# examples/demo.sh as the README runs it (root, no Lume: the simulator with one stopped VM), its
# guest on this test's loopback net: it succeeds, its exercise tables say that 64 KB is the value
# the device reports and what the kernels run, the VM's identity line is the identity (no
# warning: nothing is wrong), and the VM ends as it was found (stopped, not enabled, the
# preference absent), said by lume-metal's own status.
. "$(dirname "$0")/../support/lm_test.sh"
: "${LM_BUILD_DIR:?LM_BUILD_DIR: the build tree}" "${LM_SOURCE_DIR:?LM_SOURCE_DIR: the source tree}"
lm_test_scratch demo
export TMPDIR=$T
address=$(lm_test_address 2)
set +e
LUME_METAL_BUILD_DIR=$LM_BUILD_DIR LUME_METAL_DEMO_ADDRESS_BASE=$address \
  "$LM_SOURCE_DIR/examples/demo.sh" >"$T/out" 2>"$T/err" </dev/null
rc=$?
set -e
all() { cat "$T/out" "$T/err"; }
[ "$rc" -eq 0 ] || fail "demo exited $rc: $(all)"

note "the exercise tables: 64 KB is the reported value, 32 KB is what runs, llama.cpp only asserts on it"
[ "$(grep -cx '    65536 bytes is the value the device reports (the profile.s); kernels run with up to 32768\.' "$T/out")" -eq 2 ] &&
  [ "$(grep -cx '    llama\.cpp uses the reported value only in assertions; its kernels fit the 32 KB Apple GPUs have\.' "$T/out")" -eq 2 ] ||
  fail "status and probe do not both explain the 64 KB: $(all)"

note "the identity line: the VM's identity, no warning"
grep -Eqx '  identity sha256:[0-9a-f]{64}' "$T/out" || fail "no identity: $(all)"
! grep -q 'identity unknown' "$T/out" || fail "identity warned about: $(all)"
! grep -qi 'warning' "$T/out" "$T/err" || fail "a warning where nothing is wrong: $(all)"

note "the VM is left as it was found"
grep -qx 'demo-vm is stopped\.' "$T/out" || fail "the state found is not said: $(all)"
# lume-metal's last status, after the rollback: the demo's own check aside.
last=$(awk '/^\$ lume-metal status demo-vm$/ { n = NR } { line[NR] = $0 } END { for (i = n; i <= NR; i++) print line[i] }' "$T/out")
grep -qx 'demo-vm: not enabled' <<<"$last" && grep -q '^  state stopped, ' <<<"$last" &&
  grep -q ': absent (plist:' <<<"$last" || fail "the last status is not the VM as found: $last"
tail -n 1 "$T/out" | grep -qx 'demo: done — demo-vm is stopped, as it was found, with its guest files removed and the host preference restored\.' ||
  fail "last line: $(tail -n 1 "$T/out")"
[ -z "$(find "$T" -maxdepth 1 -name 'lume-metal-demo.*')" ] || fail "the demo left its directory: $(ls "$T")"
echo "demo: truthful tables, identity, the VM as found"
