#!/usr/bin/env bash
# The smaller ways a real Mac differed from the simulated world (issue 24, item 7), one scenario
# each, on zsh guests, with the manager it is about: mismatches.sh NAME. docs/testing.md.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

export TART_HOME="$E2E_DIR/tart-home"
bin_dir() { jq -r .bin_dir "$E2E_DIR/sim.json"; }
# lume-metal on the Tart backend, the simulator's `tart` stand-in.
TART_OPTS=()
tart_sim_start() {
  sim_start --tart-home "$TART_HOME" "$@"
  TART_OPTS=(--timeout 120 --vm-manager tart --tart "$(bin_dir)/tart")
}
tart() { "$(bin_dir)/tart" "$@"; }

# Cirrus Labs' images install their shim without enabling it (their own image test fails a build
# whose guest-agent plists inject it): status and doctor say so, and neither claims that `tart
# exec` sessions get it.
scenario_tart_shim_not_enabled() {
  tart_sim_start --tart-vm vm1
  lm_json "$E2E_DIR/e.json" enable vm1 "${TART_OPTS[@]}"
  expect_rc 0 "$E2E_DIR/e.json"
  lm status vm1 "${TART_OPTS[@]}" >"$E2E_DIR/status.txt" || fail "status: $(cat "$E2E_DIR/status.txt")"
  grep -q "the Tart image's own shim is installed (/usr/local/lib/TartMetalCapabilities.dylib, TART_METAL_\*), not enabled" \
    "$E2E_DIR/status.txt" || fail "status does not say the image's shim is not enabled: $(cat "$E2E_DIR/status.txt")"
  lm_json "$E2E_DIR/doctor.json" doctor vm1 "${TART_OPTS[@]}"
  jq -r '.checks[] | select(.vm == "vm1" and .check == "tart-shim") | .message' "$E2E_DIR/doctor.json" |
    grep -q "installed but not enabled" || fail "doctor does not say the image's shim is not enabled: $(cat "$E2E_DIR/doctor.json")"
  ! grep -q "sessions get it" "$E2E_DIR/status.txt" "$E2E_DIR/doctor.json" ||
    fail "a session is still said to get the image's shim: $(cat "$E2E_DIR/status.txt" "$E2E_DIR/doctor.json")"
}

# `tart clone` keeps the ecid and changes the MAC only on a collision: a CI VM re-created by
# cloning the same source is the same VM (same identity, same host keys: no "new VM" warning),
# and when it then comes back with other host keys, the refusal says that its identity did not
# change and what to check before forgetting the old key.
scenario_tart_clone_identity() {
  tart_sim_start --tart-vm tbase
  tart clone tbase ci-1 || fail "tart clone"
  lm_json "$E2E_DIR/e1.json" enable ci-1 "${TART_OPTS[@]}"
  expect_rc 0 "$E2E_DIR/e1.json"
  local id; id=$(jq -r '.vms[0].vm_id' "$E2E_DIR/e1.json")
  [ "$(jq -r .ecid "$TART_HOME/vms/ci-1/config.json")" = "$(jq -r .ecid "$TART_HOME/vms/tbase/config.json")" ] ||
    fail "the clone has an ecid of its own"
  # The CI job ends: rolled back, stopped, deleted; the next job clones the same source again.
  lm_json "$E2E_DIR/r1.json" rollback ci-1 "${TART_OPTS[@]}"
  expect_rc 0 "$E2E_DIR/r1.json"
  tart stop ci-1 >/dev/null 2>&1 || true
  tart delete ci-1 || fail "tart delete"
  tart clone tbase ci-1 || fail "tart clone, again"
  lm_json "$E2E_DIR/e2.json" enable ci-1 "${TART_OPTS[@]}"
  expect_rc 0 "$E2E_DIR/e2.json"
  jq_is "$E2E_DIR/e2.json" '.vms[0].vm_id' "$id"
  ! grep -q "new VM under a known name" "$E2E_DIR/e2.json.err" || fail "the same VM taken for a new one: $(cat "$E2E_DIR/e2.json.err")"
  # Its guest makes new host keys: refused, and the message says the identity is unchanged.
  tart stop ci-1 >/dev/null || fail "tart stop"
  curl -fsS -X POST "$LUME_METAL_LUME_URL/_sim/vms/ci-1/rekey" >/dev/null
  lm_json "$E2E_DIR/e3.json" enable ci-1 "${TART_OPTS[@]}"
  expect_rc 1 "$E2E_DIR/e3.json"
  jq_is "$E2E_DIR/e3.json" '.vms[0].error.code' host-key
  jq -r '.vms[0].message' "$E2E_DIR/e3.json" | grep -q "the SSH host key has CHANGED while the VM's identity has not" ||
    fail "no word of the unchanged identity: $(cat "$E2E_DIR/e3.json")"
  jq -r '.vms[0].message' "$E2E_DIR/e3.json" | grep -q "identity: $id, the same as when the key was recorded" ||
    fail "the identity is not shown: $(cat "$E2E_DIR/e3.json")"
  jq -r '.error.hint' "$E2E_DIR/e3.json" | grep -q "lume-metal forget-host ci-1" || fail "no way out: $(cat "$E2E_DIR/e3.json")"
}

# Lume's API lists its storage locations (GET /lume/config/locations): the identity of a VM
# outside ~/.lume is known with the API backend, as with the CLI's `lume config storage list`.
scenario_lume_api_locations() {
  # The store in another location under the home: Lume's settings keep it as "~/...".
  sim_start --vm vm1 --lume-home "$HOME/vms-elsewhere"
  lm_json "$E2E_DIR/api.json" status vm1 --vm-manager lume-api
  expect_rc 0 "$E2E_DIR/api.json"
  jq_is "$E2E_DIR/api.json" '.vms[0].vm_id // "none" | startswith("sha256:")' true
  jq_is "$E2E_DIR/api.json" '.vms[0].vm_id_unreadable' null
  log_has '.source == "http" and .method == "GET" and .path == "/lume/config/locations" and .status == 200' ||
    fail "the locations were not asked for"
  lm_json "$E2E_DIR/cli.json" status vm1 --vm-manager lume-cli --lume "$(jq -r .lume "$E2E_DIR/sim.json")"
  jq_is "$E2E_DIR/cli.json" '.vms[0].vm_id' "$(jq -r '.vms[0].vm_id' "$E2E_DIR/api.json")"
}

# Every child `lume` runs with telemetry off (as with a quiet log level): the stand-in records,
# per call, whether it would have sent its telemetry event.
scenario_lume_telemetry_off() {
  sim_start --vm vm1
  local lume; lume=$(jq -r .lume "$E2E_DIR/sim.json")
  "$lume" ls --format json >/dev/null
  [ "$(jq -c 'select(.source == "lume-cli") | .telemetry' "$SIM_LOG")" = true ] ||
    fail "the stand-in does not record a plain call's telemetry: $(grep lume-cli "$SIM_LOG")"
  local from; from=$(log_lines)
  lm_json "$E2E_DIR/e.json" enable vm1 --vm-manager lume-cli --lume "$lume"
  expect_rc 0 "$E2E_DIR/e.json"
  # The API backend's `lume --version` (doctor asks it) is a child `lume` too.
  lm_json "$E2E_DIR/doctor.json" doctor vm1 --vm-manager lume-api --lume "$lume"
  local calls; calls=$(tail -n +"$(( from + 1 ))" "$SIM_LOG" | jq -c 'select(.source == "lume-cli")')
  [ "$(echo "$calls" | jq -s 'map(select(.argv[0] == "--version")) | length')" -ge 1 ] ||
    fail "doctor asked no lume --version: $calls"
  [ "$(echo "$calls" | jq -s 'map(select(.argv[0] == "run")) | length')" -ge 1 ] || fail "no lume run: $calls"
  [ "$(echo "$calls" | jq -s 'map(select(.telemetry != false)) | length')" -eq 0 ] ||
    fail "a lume call sent telemetry: $calls"
}

# bfloat16 needs the Metal Shading Language 3.1 (macOS 14), and llama.cpp turns it off below: a
# macOS 13 guest is enabled, the exercise says bfloat16 is not required of it and why, in text and
# JSON; on macOS 14 it is required as before.
scenario_bf16_macos13() {
  sim_start --vm vm1 --os-version 13.6.7
  lm_json "$E2E_DIR/e.json" enable vm1
  expect_rc 0 "$E2E_DIR/e.json"
  jq -r '.vms[0].exercise.bfloat16.result' "$E2E_DIR/e.json" | grep -qx error ||
    fail "the macOS 13 guest compiled a bfloat16 kernel: $(jq -c '.vms[0].exercise' "$E2E_DIR/e.json")"
  jq -r '.vms[0].steps[] | select(.name == "exercise") | .detail' "$E2E_DIR/e.json" |
    grep -q "bfloat16 not required of a macOS 13.6.7 guest: it needs the Metal Shading Language 3.1 (macOS 14)" ||
    fail "the exercise step does not say why: $(jq -c '.vms[0].steps' "$E2E_DIR/e.json")"
  lm probe vm1 --exercise >"$E2E_DIR/probe.txt" 2>&1 || fail "probe --exercise: $(cat "$E2E_DIR/probe.txt")"
  grep -q "bfloat16 not required of a macOS 13.6.7 guest" "$E2E_DIR/probe.txt" ||
    fail "probe does not say it: $(cat "$E2E_DIR/probe.txt")"
  lm_json "$E2E_DIR/doctor.json" doctor vm1
  jq_is "$E2E_DIR/doctor.json" '.checks[] | select(.vm == "vm1" and .check == "last-exercise") | .level' ok
  jq -r '.checks[] | select(.vm == "vm1" and .check == "last-exercise") | .message' "$E2E_DIR/doctor.json" |
    grep -q "bfloat16 not required of a macOS 13.6.7 guest" || fail "doctor: $(cat "$E2E_DIR/doctor.json")"
}

# A -currentHost (ByHost) value of the preference wins over the one lume-metal writes: host status
# and status read it and say so; the simulated VM process reads it first, as CFPreferences does.
scenario_byhost_pref() {
  sim_start --vm vm1
  lm_json "$E2E_DIR/h1.json" host status
  expect_rc 0 "$E2E_DIR/h1.json"
  jq_is "$E2E_DIR/h1.json" '.host_preference.byhost.present' false
  local byhost; byhost=$(jq -r '.host_preference.byhost.where' "$E2E_DIR/h1.json")
  case "$byhost" in "$LUME_METAL_PREFS_DIR"/ByHost/com.apple.gpusw.ParavirtualizedGraphics.*-*-*-*-*.plist) ;;
    *) fail "not the ByHost file macOS keeps: $byhost" ;; esac
  # `defaults -currentHost write com.apple.gpusw.ParavirtualizedGraphics ForceUnrestrictedDeviceFeatureLevel -bool false`
  mkdir -p "$(dirname "$byhost")"
  printf '<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0"><dict><key>ForceUnrestrictedDeviceFeatureLevel</key><false/></dict></plist>\n' |
    plistutil -i - -o "$byhost" -f bin 2>/dev/null || plistutil -i /dev/stdin -o "$byhost" -f bin
  lm_json "$E2E_DIR/h2.json" host status
  jq_is "$E2E_DIR/h2.json" '.host_preference.byhost.present' true
  jq_is "$E2E_DIR/h2.json" '.host_preference.byhost.value' "false (bool)"
  jq_is "$E2E_DIR/h2.json" '.host_preference.byhost.matches' false
  lm host status | grep -q "^  -currentHost: false (bool) in $byhost: it wins over the value above" ||
    fail "host status text: $(lm host status)"
  # lume-metal writes the any-host value; the VM process reads the -currentHost one: restricted.
  lm_json "$E2E_DIR/e.json" enable vm1
  expect_rc 1 "$E2E_DIR/e.json"
  jq_is "$E2E_DIR/e.json" '.vms[0].error.code' not-proven
  [ "$(cat "$(vm_dir vm1)/feature_level")" = restricted ] || fail "the VM started unlocked despite the ByHost value"
  lm_json "$E2E_DIR/s.json" status
  jq_is "$E2E_DIR/s.json" '.host_preference.byhost.value' "false (bool)"
  lm status | grep -q "^  -currentHost: false (bool) in $byhost: it wins" || fail "status text: $(lm status)"
}

# Every JSON document of the scenario against docs/json-output.schema.json (byhost among them).
validate_documents() {
  local docs=() f
  for f in "$E2E_DIR"/*.json; do [ "$f" = "$E2E_DIR/sim.json" ] || docs+=("$f"); done
  [ ${#docs[@]} -eq 0 ] || "$LM_PYTHON" "$here/../support/json-validate" "$LM_SCHEMA" "${docs[@]}" ||
    fail "a JSON document does not match the schema"
}

name=${1:?usage: mismatches.sh NAME}
"scenario_$name"
validate_documents
check_guest_shells
echo "e2e $name: passed"
