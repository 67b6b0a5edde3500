#!/usr/bin/env bash
# Issue 24, items 3, 4 and 6 (docs/vm-managers.md): paused and suspended VMs count as running since
# before the preference changed; UTM guests on NAT get their address from the host's DHCP leases;
# UTM is asked last, never launched for another manager's VM, and an SSH session is told apart
# from an unknown VM. resume_utm.sh SCENARIO; every guest logs in with zsh.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

scenario=$1
export TART_HOME="$E2E_DIR/tart-home"
UTM_DOCS="$HOME/Library/Containers/com.utmapp.UTM/Data/Documents"

start_sim() { # lume-sim options...; bin/ (lume, tart, utmctl) on PATH
  sim_start --utm-documents "$UTM_DOCS" --tart-home "$TART_HOME" --utm-request-delay 0.2 "$@"
  BIN=$(jq -r .bin_dir "$E2E_DIR/sim.json")
  export PATH="$BIN:$PATH"
}
addr_of() { vm_field "$1" address; }
ssh_up() { (exec 3<>"/dev/tcp/$(addr_of "$1")/22") 2>/dev/null; }
utm_status_is() { [ "$("$BIN/utmctl" status "$1")" = "$2" ]; }
tart_state_is() { [ "$("$BIN/tart" get "$1" --format json | jq -r .State)" = "$2" ]; }
utm_app_running() { [ "$(jq -r 'select(.source == "sim" and .event == "utm-app") | .detail' "$SIM_LOG" | tail -n 1)" = running ]; }

# enable of a VM that is held (paused or with a saved state): stopped for real and cold-started,
# the dry run saying so first; the unlocked kernels then run (enable proves them: a resumed guest
# would keep the stock level and fail the exercise).
check_held_enable() { # VM MANAGER WORD
  local vm=$1 mgr=$2 word=$3
  lm_json "$E2E_DIR/d.json" --vm-manager "$mgr" --timeout 120 enable "$vm" --dry-run
  expect_rc 0 "$E2E_DIR/d.json"
  jq -r '.vms[0].steps[] | select(.name == "restart") | .detail' "$E2E_DIR/d.json" |
    grep -q "would restart the $word VM: .*its saved state discarded" || fail "dry run: $(cat "$E2E_DIR/d.json")"
  [ ! -e "$PLIST" ] || fail "the dry run wrote the preference"
  lm_json "$E2E_DIR/e.json" --vm-manager "$mgr" --timeout 120 enable "$vm"
  expect_rc 0 "$E2E_DIR/e.json"
  jq_is "$E2E_DIR/e.json" '.vms[0].restarted' true
  jq_is "$E2E_DIR/e.json" '.vms[0].started' false
  jq -r '.vms[0].steps[] | select(.name == "restart") | .detail' "$E2E_DIR/e.json" |
    grep -q "restarted the $word VM: .*saved state discarded, and booted afresh" || fail "restart: $(cat "$E2E_DIR/e.json")"
  jq_is "$E2E_DIR/e.json" '.vms[0].shimmed.families.Apple9' true
  [ "$(sim_events boot "$vm")" -eq 2 ] || fail "$vm was not booted afresh: $(sim_events boot "$vm") boots"
}

# UTM: `utmctl suspend` pauses the VM; starting it again would resume the same guest.
scenario_utm_paused() {
  start_sim --utm-vm vm1
  "$BIN/utmctl" start vm1
  wait_for 60 "vm1 did not come up" ssh_up vm1
  "$BIN/utmctl" suspend vm1
  utm_status_is vm1 paused || fail "not paused: $("$BIN/utmctl" status vm1)"
  ! ssh_up vm1 || fail "a paused guest answers"
  check_held_enable vm1 utm paused
  utm_status_is vm1 started || fail "vm1 not running: $("$BIN/utmctl" status vm1)"
  # UTM refuses --force for a paused VM (issue 36, item 8): it was stopped with --kill, and no
  # stop UTM refused was taken for done (enable then waited 120 s for a stop that never came).
  [ "$(jq -c 'select(.source == "utmctl" and .argv[0] == "stop" and .argv[2] == "--kill")' "$SIM_LOG" | wc -l)" -eq 1 ] ||
    fail "the paused VM was not stopped with --kill: $(jq -c 'select(.argv != null) | [.source, .argv]' "$SIM_LOG")"
  [ "$(jq -c 'select(.source == "utmctl" and .argv[0] == "stop" and .argv[2] != "--kill")' "$SIM_LOG" | wc -l)" -eq 0 ] ||
    fail "a stop UTM refuses was sent: $(jq -c 'select(.source == "utmctl") | .argv' "$SIM_LOG")"
}


# UTM: a VM suspended with its state saved and then stopped is "stopped" to utmctl, and its next
# start restores the saved guest: lume-metal restores and powers it off, then boots it.
scenario_utm_saved() {
  start_sim --utm-vm vm1
  "$BIN/utmctl" start vm1
  wait_for 60 "vm1 did not come up" ssh_up vm1
  "$BIN/utmctl" suspend --save-state vm1
  "$BIN/utmctl" stop vm1 --kill # paused: UTM refuses --force (vm.state == .started || .kill)
  utm_status_is vm1 stopped || fail "not stopped: $("$BIN/utmctl" status vm1)"
  [ -e "$UTM_DOCS/vm1.utm/Data/vmstate" ] || fail "no saved state"
  lm_json "$E2E_DIR/s.json" --vm-manager utm status vm1
  jq_is "$E2E_DIR/s.json" '.vms[0].state' suspended
  check_held_enable vm1 utm suspended
  [ ! -e "$UTM_DOCS/vm1.utm/Data/vmstate" ] || fail "the saved state is still there"
  [ "$(jq -c 'select(.source == "sim" and .event == "run" and .vm == "vm1" and (.detail | contains("restored from its saved state")))' "$SIM_LOG" | wc -l)" -eq 1 ] ||
    fail "the saved state was not restored once to discard it"
  # utmctl's own rules: two stop flags exit 1 (not 64); an error inside UTM.app exits 0.
  set +e; "$BIN/utmctl" stop vm1 --force --kill 2>"$E2E_DIR/two.err"; rc=$?; set -e
  [ "$rc" -eq 1 ] && grep -q "You can only specify one of" "$E2E_DIR/two.err" || fail "two stop flags: exit $rc"
  "$BIN/utmctl" start vm1 --disposable 2>"$E2E_DIR/disp.err" || fail "an event's error exited non-zero"
  grep -q "Error from event: Operation not supported" "$E2E_DIR/disp.err" || fail "$(cat "$E2E_DIR/disp.err")"
}

# Tart: `tart suspend` saves the state (state.vzvmsave) and `tart run` would restore it.
scenario_tart_suspended() {
  start_sim --tart-vm vm1
  setsid "$BIN/tart" run --no-graphics vm1 >>"$E2E_DIR/tart-run.log" 2>&1 </dev/null &
  "$BIN/tart" ip vm1 --wait 60 >/dev/null || fail "tart ip: $(cat "$E2E_DIR/tart-run.log")"
  wait_for 60 "vm1 did not come up" ssh_up vm1
  "$BIN/tart" suspend vm1
  wait_for 60 "vm1 was not suspended" tart_state_is vm1 suspended
  check_held_enable vm1 tart suspended
  [ ! -e "$TART_HOME/vms/vm1/state.vzvmsave" ] || fail "the snapshot is still there"
  tart_state_is vm1 running || fail "vm1 not running"
}

# UTM on its shared (NAT) network: utmctl's ARP lookup finds nothing; the host's DHCP lease of the
# VM's MAC (config.plist Network[0].MacAddress) gives the address.
scenario_utm_nat() {
  start_sim --utm-vm vm1 --utm-no-arp
  export LUME_METAL_DHCPD_LEASES; LUME_METAL_DHCPD_LEASES=$(jq -r .dhcpd_leases "$E2E_DIR/sim.json")
  # The simulated host's lease file is a test hook: only the tests' build of the tool reads it.
  : "${LM_BIN_HOOKS:?LM_BIN_HOOKS: lume-metal built with the test hooks}"
  local LM_BIN=$LM_BIN_HOOKS
  lm_json "$E2E_DIR/e.json" --vm-manager utm --timeout 120 enable vm1
  expect_rc 0 "$E2E_DIR/e.json"
  [ -z "$("$BIN/utmctl" ip-address vm1)" ] || fail "utmctl found an address"
  jq_is "$E2E_DIR/e.json" '.vms[0].ip' "$(addr_of vm1)"
  jq_is "$E2E_DIR/e.json" '.vms[0].shimmed.families.Apple9' true
  grep -q "hw_address=1,7a:6d:5f:0:0:0" "$LUME_METAL_DHCPD_LEASES" || fail "lease: $(cat "$LUME_METAL_DHCPD_LEASES")"
}

# Automatic choice: Lume's and Tart's VMs never make utmctl launch UTM.app; a name neither knows
# asks UTM only while UTM.app runs, and says so when it does not.
scenario_utm_asked_last() {
  start_sim --vm vm1 --tart-vm vm2 --utm-vm vm3 --utm-app-not-running
  lm_json "$E2E_DIR/e.json" --timeout 120 enable vm1 vm2
  expect_rc 0 "$E2E_DIR/e.json"
  jq_is "$E2E_DIR/e.json" '.vms[0].manager' lume-api
  jq_is "$E2E_DIR/e.json" '.vms[1].manager' tart
  lm_json "$E2E_DIR/s.json" status
  lm doctor >"$E2E_DIR/doctor.txt" 2>&1 || true
  ! log_has '.source == "utmctl"' || fail "utmctl was run: $(jq -c 'select(.source == "utmctl")' "$SIM_LOG" | head -n 3)"
  ! utm_app_running || fail "UTM.app was launched"
  lm_json "$E2E_DIR/u.json" status vm3
  expect_rc 1 "$E2E_DIR/u.json"
  jq -r '.vms[0].message' "$E2E_DIR/u.json" | grep -q "utm: not asked, UTM.app is not running" ||
    fail "not said: $(cat "$E2E_DIR/u.json")"
  # UTM.app running: the name neither Lume nor Tart knows is UTM's.
  curl -fsS -X POST -d '{}' "$LUME_METAL_LUME_URL/_sim/utm/launch" >/dev/null
  lm_json "$E2E_DIR/u2.json" status vm3
  expect_rc 0 "$E2E_DIR/u2.json"
  jq_is "$E2E_DIR/u2.json" '.vms[0].manager' utm
  # ... and still never for Lume's VM.
  n=$(jq -c 'select(.source == "utmctl")' "$SIM_LOG" | wc -l)
  lm_json "$E2E_DIR/s2.json" status vm1
  [ "$(jq -c 'select(.source == "utmctl")' "$SIM_LOG" | wc -l)" -eq "$n" ] || fail "UTM asked about Lume's VM"
}

# From an SSH session every Apple Event fails, but `utmctl status` only says "not found": the
# message says what is wrong and what to do.
scenario_utm_ssh_session() {
  start_sim --utm-vm vm1 --utm-no-gui
  lm_json "$E2E_DIR/s.json" --vm-manager utm status vm1
  expect_rc 1 "$E2E_DIR/s.json"
  jq -r '.vms[0].message' "$E2E_DIR/s.json" | grep -q "not UTM's answer: UTM.app cannot be driven from this session" ||
    fail "$(cat "$E2E_DIR/s.json")"
  jq -r '.vms[0].message' "$E2E_DIR/s.json" | grep -q "logged-in GUI session of this user: run lume-metal in it (a LaunchAgent" || fail "$(cat "$E2E_DIR/s.json")"
  jq -r '.error.hint' "$E2E_DIR/s.json" | grep -q -- "--vm-manager none" || fail "no hint: $(cat "$E2E_DIR/s.json")"
}

"scenario_$scenario"
check_guest_shells
echo "ok: resume_utm $scenario"
