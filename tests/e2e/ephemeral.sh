#!/usr/bin/env bash
# Ephemeral CI fleets (issue 17): ephemeral.sh NAME. A host kept unlocked by the fleet, VMs that are
# cloned, used and deleted, names reused by new VMs. Each scenario starts its own simulator and
# state; see docs/testing.md.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

# host enable --keep / enable --keep-host: rolling back the last VM leaves the preference on, so
# the next VM started needs no restart; host disable and rollback --all --host restore it exactly.
scenario_keep_host() {
  sim_start --vm vm1 --vm vm2
  lm_json "$E2E_DIR/h.json" host enable --keep
  expect_rc 0 "$E2E_DIR/h.json"
  jq_is "$E2E_DIR/h.json" '.host_preference.mode' kept
  jq_is "$E2E_DIR/h.json" '.host_preference.original' "absent file"
  lm host status | grep -q '^  mode:     kept' || fail "host status does not say the mode: $(lm host status)"

  lm_json "$E2E_DIR/e1.json" enable vm1
  expect_rc 0 "$E2E_DIR/e1.json"
  jq_is "$E2E_DIR/e1.json" '.vms[0].restarted' false     # started after the change: no restart
  jq_is "$E2E_DIR/e1.json" '.host_preference.mode' kept   # an enable without the option keeps the mark
  lm_json "$E2E_DIR/r1.json" rollback vm1
  expect_rc 0 "$E2E_DIR/r1.json"
  jq_is "$E2E_DIR/r1.json" '.host_preference_restored' false
  jq_is "$E2E_DIR/r1.json" '.host_preference.value' "true (bool)"
  jq_is "$E2E_DIR/r1.json" '.vms[0].restarted' false
  jq -r '.vms[0].steps[] | select(.name == "host-preference") | .detail' "$E2E_DIR/r1.json" |
    grep -q '^kept: the fleet keeps the host unlocked' || fail "rollback step: $(cat "$E2E_DIR/r1.json")"
  lm status >"$E2E_DIR/st.txt" || fail "status: $(cat "$E2E_DIR/st.txt")"
  grep -q '^  mode: kept' "$E2E_DIR/st.txt" || fail "status does not say the mode: $(cat "$E2E_DIR/st.txt")"

  # The next job's VM starts while the preference is on: enabled without a restart.
  vm_run vm2
  lm_json "$E2E_DIR/e2.json" enable vm2 --boot-margin 0.001
  expect_rc 0 "$E2E_DIR/e2.json"
  jq_is "$E2E_DIR/e2.json" '.vms[0].restarted' false
  lm_json "$E2E_DIR/r2.json" rollback vm2
  jq_is "$E2E_DIR/r2.json" '.host_preference_restored' false

  # Only host disable gives it back, exactly (absent file).
  lm_json "$E2E_DIR/hd.json" host disable
  expect_rc 0 "$E2E_DIR/hd.json"
  jq_is "$E2E_DIR/hd.json" '.host_preference.mode' null
  [ ! -e "$PLIST" ] || fail "preference file left after host disable (it was absent)"

  # enable --keep-host does the same in one command; rollback --all --host restores it.
  lm_json "$E2E_DIR/e3.json" enable vm1 --keep-host
  expect_rc 0 "$E2E_DIR/e3.json"
  jq_is "$E2E_DIR/e3.json" '.host_preference.mode' kept
  lm_json "$E2E_DIR/r3.json" rollback --all
  jq_is "$E2E_DIR/r3.json" '.host_preference_restored' false
  lm_json "$E2E_DIR/r4.json" rollback --all --host
  expect_rc 0 "$E2E_DIR/r4.json"
  jq_is "$E2E_DIR/r4.json" '.host_preference_restored' true
  [ ! -e "$PLIST" ] || fail "preference file left after rollback --all --host"

  # Per VM, as before: the last rollback restores it; the mode says so.
  lm_json "$E2E_DIR/e5.json" enable vm1
  jq_is "$E2E_DIR/e5.json" '.host_preference.mode' per-vm
  lm_json "$E2E_DIR/r5.json" rollback vm1
  jq_is "$E2E_DIR/r5.json" '.host_preference_restored' true

  # The options belong to their commands.
  set +e; lm status --keep >/dev/null 2>&1; rc=$?; set -e
  [ $rc -eq 2 ] || fail "status --keep: exit $rc, expected 2"
  set +e; lm enable vm1 --host >/dev/null 2>&1; rc=$?; set -e
  [ $rc -eq 2 ] || fail "enable --host (no address): exit $rc, expected 2"
}

name=${1:?usage: ephemeral.sh NAME}
"scenario_$name"
check_guest_shells
echo "e2e $name: passed"
