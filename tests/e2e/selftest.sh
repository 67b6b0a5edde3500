#!/usr/bin/env bash
# End-to-end scenarios of `lume-metal selftest` (issue 35 item 8): the facts the simulator assumes,
# measured in a guest. On the simulator every check agrees or says why it was not measured, and
# says that it ran on the simulator; a stand-in changed makes its check disagree. selftest.sh NAME.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

CHECKS="stock_kernels exec_in_place spawned_child probe_exec_in_place probe_spawned_child python_exec_in_place
hardened_library_validation hardened_runtime launchctl_unknown launchctl_bootout codesign_display csrutil_status
manager_while_booting"
# The children checks measured from launchers that can carry the shim (issue 48 item 4).
SELF_CHECKS="probe_exec_in_place probe_spawned_child python_exec_in_place"
: "${LM_SPAWN_FIXTURES:?LM_SPAWN_FIXTURES: the directory of framework-stub}"

verdict_of() { jq -r --arg n "$2" '.checks[] | select(.name == $n) | .verdict' "$1"; }
seen_of() { jq -r --arg n "$2" '.checks[] | select(.name == $n) | .seen' "$1"; }

# A python3 where Homebrew's would be: the simulated guests have none, so CPython's framework launcher
# (tests/guest/drivers/exec_stub.c: executes Resources/Python.app/Contents/MacOS/Python in place)
# with a program that loads the shim as the Python it becomes.
install_python() {
  local d fw=/opt/homebrew/Frameworks/Python.framework/Versions/3.13
  d=$(vm_dir vm1)
  install -D -m 755 "$LM_SPAWN_FIXTURES/framework-stub" "$d$fw/bin/python3.13"
  install -D -m 755 "$(type -P true)" "$d$fw/Resources/Python.app/Contents/MacOS/Python"
  ln -sfn "$fw/bin/python3.13" "$d/opt/homebrew/bin/python3"
}

# The children checks from launchers that can carry the shim: measured, and agreeing.
self_checks_agree() { # selftest.json
  local c
  for c in $SELF_CHECKS; do
    [ "$(verdict_of "$1" "$c")" = agrees ] || fail "$c: $(verdict_of "$1" "$c"): $(seen_of "$1" "$c")"
  done
  seen_of "$1" probe_exec_in_place | grep -q '^the second probe ran with the shim; the records say it should keep it' ||
    fail "probe_exec_in_place: $(seen_of "$1" probe_exec_in_place)"
  seen_of "$1" python_exec_in_place | grep -q '^/opt/homebrew/bin/python3 became another image, which loaded the shim' ||
    fail "python_exec_in_place: $(seen_of "$1" python_exec_in_place)"
  # codesign here cannot sign --options runtime without the dyld entitlement (the stand-in says so)
  seen_of "$1" hardened_runtime | grep -q '^not measured: needs codesign' ||
    fail "hardened_runtime: $(seen_of "$1" hardened_runtime)"
}

scenario_selftest_simulator() {
  sim_start --vm vm1
  vm_run vm1
  install_python
  lm_json "$E2E_DIR/e.json" enable vm1
  expect_rc 0 "$E2E_DIR/e.json"
  lm selftest vm1 --out "$E2E_DIR/st" >"$E2E_DIR/st.txt" 2>"$E2E_DIR/st.err" || fail "selftest: $(cat "$E2E_DIR/st.txt" "$E2E_DIR/st.err")"
  grep -qx "ran on lume-metal's simulator (its guest says so), not on a Mac" "$E2E_DIR/st.txt" ||
    fail "no simulator line: $(cat "$E2E_DIR/st.txt")"
  local c
  for c in $CHECKS; do
    grep -Eq "^(agrees|not-measured) +$c$" "$E2E_DIR/st.txt" || fail "check $c: $(cat "$E2E_DIR/st.txt")"
    [ -s "$E2E_DIR/st/$c.txt" ] || fail "no raw file for $c"
  done
  grep -c '^      assumed: ' "$E2E_DIR/st.txt" | grep -qx 13 || fail "assumptions: $(cat "$E2E_DIR/st.txt")"
  grep -c '^      seen:    ' "$E2E_DIR/st.txt" | grep -qx 13 || fail "seen: $(cat "$E2E_DIR/st.txt")"
  # The folder: selftest.json against its schema, the README's table, SHA256SUMS
  "$here/../support/json-validate" "$here/../../docs/selftest.schema.json" "$E2E_DIR/st/selftest.json" ||
    fail "selftest.json does not validate"
  jq_is "$E2E_DIR/st/selftest.json" .simulator true
  jq_is "$E2E_DIR/st/selftest.json" .summary.disagree 0
  jq_is "$E2E_DIR/st/selftest.json" '.checks | length' 13
  self_checks_agree "$E2E_DIR/st/selftest.json"
  # the VM runs with the preference in effect: the stock level is not measured, and says how
  jq -r '.checks[] | select(.name == "stock_kernels") | .seen' "$E2E_DIR/st/selftest.json" |
    grep -q "^not measured: the VM runs with the host preference in effect" || fail "stock_kernels: $(cat "$E2E_DIR/st/stock_kernels.txt")"
  [ "$(verdict_of "$E2E_DIR/st/selftest.json" launchctl_unknown)" = agrees ] || fail "launchctl_unknown"
  [ "$(verdict_of "$E2E_DIR/st/selftest.json" csrutil_status)" = agrees ] || fail "csrutil_status"
  [ "$(verdict_of "$E2E_DIR/st/selftest.json" launchctl_bootout)" = agrees ] ||
    fail "launchctl_bootout: $(cat "$E2E_DIR/st/launchctl_bootout.txt")"
  [ "$(verdict_of "$E2E_DIR/st/selftest.json" codesign_display)" = agrees ] || fail "codesign_display"
  [ "$(verdict_of "$E2E_DIR/st/selftest.json" exec_in_place)" = agrees ] || fail "exec_in_place: $(cat "$E2E_DIR/st/exec_in_place.txt")"
  [ "$(verdict_of "$E2E_DIR/st/selftest.json" spawned_child)" = agrees ] || fail "spawned_child: $(cat "$E2E_DIR/st/spawned_child.txt")"
  jq -r '.checks[] | select(.name == "hardened_library_validation") | .seen' "$E2E_DIR/st/selftest.json" |
    grep -q "^not measured: needs codesign" || fail "hardened: $(cat "$E2E_DIR/st/hardened_library_validation.txt")"
  grep -q '^\*\*Ran on lume-metal.s simulator\*\*, not on a Mac' "$E2E_DIR/st/README.md" || fail "README: $(cat "$E2E_DIR/st/README.md")"
  grep -q '^| `launchctl_unknown` | exit 113' "$E2E_DIR/st/README.md" || fail "README table: $(cat "$E2E_DIR/st/README.md")"
  (cd "$E2E_DIR/st" && sha256sum -c --quiet SHA256SUMS) || fail "SHA256SUMS"
  # JSON
  lm_json "$E2E_DIR/stj.json" selftest vm1 --out "$E2E_DIR/st2"
  expect_rc 0 "$E2E_DIR/stj.json"
  "$here/../support/json-validate" "$here/../../docs/json-output.schema.json" "$E2E_DIR/stj.json" ||
    fail "the selftest document does not validate"
  jq_is "$E2E_DIR/stj.json" .simulator true
  # nothing left in the guest but the bundle, the host as it was
  [ -z "$(ls -A "$(guest_home vm1)/.local/share/lume-metal/activation" 2>/dev/null)" ] ||
    fail "scratch left: $(ls -A "$(guest_home vm1)/.local/share/lume-metal/activation")"
  [ -z "$(ls "$(guest_home vm1)/Library/LaunchAgents" 2>/dev/null)" ] || fail "agent plist left"
  # usage: one VM
  lm selftest >/dev/null 2>"$E2E_DIR/u.err" && fail "selftest without a VM ran"
  grep -q "selftest: name one enabled, running VM" "$E2E_DIR/u.err" || fail "usage: $(cat "$E2E_DIR/u.err")"
}

# SIP off (disabled): /usr/bin/env and /bin/sh are the arm64e programs dyld would stop; the probe and
# the python3 launcher still carry the shim, and their checks are measured there too. SIP on
# (enabled): macOS purges DYLD_* from those two; the others are measured the same.
scenario_selftest_sip_off() { selftest_sip disabled; }
scenario_selftest_sip_on() { selftest_sip enabled; }
selftest_sip() {
  export GUEST_SSHD_SIP=$1
  sim_start --vm vm1
  vm_run vm1
  install_python
  lm_json "$E2E_DIR/e.json" enable vm1
  expect_rc 0 "$E2E_DIR/e.json"
  jq_is "$E2E_DIR/e.json" '.vms[0].guest.sip' "$1"
  lm selftest vm1 --out "$E2E_DIR/st" >"$E2E_DIR/st.txt" 2>"$E2E_DIR/st.err" || fail "selftest: $(cat "$E2E_DIR/st.txt" "$E2E_DIR/st.err")"
  jq_is "$E2E_DIR/st/selftest.json" .summary.disagree 0
  jq_is "$E2E_DIR/st/selftest.json" .guest.sip "$1"
  self_checks_agree "$E2E_DIR/st/selftest.json"
  seen_of "$E2E_DIR/st/selftest.json" probe_exec_in_place | grep -q "(.*guest SIP $1" ||
    fail "the shim was not told the guest's SIP state: $(seen_of "$E2E_DIR/st/selftest.json" probe_exec_in_place)"
  cat "$E2E_DIR/st.txt"
}

# One stand-in changed: the launchctl stand-in answers another exit code for an unknown label.
scenario_selftest_disagrees() {
  sim_start --vm vm1 --stock-kernels vm1=run
  vm_run vm1
  lm_json "$E2E_DIR/e.json" enable vm1 --host-preference auto
  expect_rc 0 "$E2E_DIR/e.json"
  jq_is "$E2E_DIR/e.json" '.vms[0].host_preference_needed' false
  sed -i 's/exit 113; }$/exit 3; }/' "$(vm_dir vm1)/standins/launchctl"
  grep -q 'exit 3; }$' "$(vm_dir vm1)/standins/launchctl" || fail "the stand-in was not changed"
  local rc=0
  lm selftest vm1 --out "$E2E_DIR/st" >"$E2E_DIR/st.txt" 2>"$E2E_DIR/st.err" || rc=$?
  [ "$rc" -eq 1 ] || fail "selftest did not exit 1: $(cat "$E2E_DIR/st.txt" "$E2E_DIR/st.err")"
  grep -Eq '^disagrees +launchctl_unknown$' "$E2E_DIR/st.txt" || fail "no disagreement: $(cat "$E2E_DIR/st.txt")"
  grep -Eq '^disagrees +launchctl_bootout$' "$E2E_DIR/st.txt" || fail "no disagreement: $(cat "$E2E_DIR/st.txt")"
  grep -q '^      seen:    exit 3: Could not find service' "$E2E_DIR/st.txt" || fail "seen: $(cat "$E2E_DIR/st.txt")"
  grep -q "^hint: .*post the folder" "$E2E_DIR/st.err" || fail "no hint: $(cat "$E2E_DIR/st.err")"
  jq_is "$E2E_DIR/st/selftest.json" .summary.disagree 3
  # the stock level runs the kernels here (the VM was enabled without the preference): measured,
  # and the simulator's default assumption (they fail) disagrees
  [ "$(verdict_of "$E2E_DIR/st/selftest.json" stock_kernels)" = disagrees ] ||
    fail "stock_kernels: $(cat "$E2E_DIR/st/stock_kernels.txt")"
  jq -r '.checks[] | select(.name == "stock_kernels") | .seen' "$E2E_DIR/st/selftest.json" |
    grep -q "^yes, they run and compute correctly" || fail "stock_kernels seen: $(cat "$E2E_DIR/st/stock_kernels.txt")"
  grep -q '| \*\*disagrees\*\* |$' "$E2E_DIR/st/README.md" || fail "README: $(cat "$E2E_DIR/st/README.md")"
  [ ! -e "$PLIST" ] || fail "selftest touched the host"
}

name=${1:?usage: selftest.sh NAME}
"scenario_$name"
check_guest_shells
echo "e2e $name: passed"
