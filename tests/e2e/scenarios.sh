#!/usr/bin/env bash
# End-to-end scenarios on the Lume simulator with real sshd guests: scenarios.sh NAME.
# Each scenario starts its own simulator and state; see docs/testing.md.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

# enable -> the probe shows Apple9 and 64 KB with the shim, stock without; run; rollback.
scenario_enable_probe_run() {
  sim_start --vm vm1
  lm_json "$E2E_DIR/e1.json" enable vm1
  expect_rc 0 "$E2E_DIR/e1.json"
  jq_is "$E2E_DIR/e1.json" '.vms[0].started' true            # stopped VM: started, not restarted
  jq_is "$E2E_DIR/e1.json" '.vms[0].restarted' false
  jq_is "$E2E_DIR/e1.json" '.vms[0].files_uploaded > 0' true
  jq_is "$E2E_DIR/e1.json" '.host_preference.value' "true (bool)"
  jq_is "$E2E_DIR/e1.json" '.host_preference.original' "absent file"
  jq_is "$E2E_DIR/e1.json" '.vms[0].stock.families.Apple9' false
  jq_is "$E2E_DIR/e1.json" '.vms[0].stock.max_threadgroup_memory' 32768
  jq_is "$E2E_DIR/e1.json" '.vms[0].shimmed.families.Apple9' true
  jq_is "$E2E_DIR/e1.json" '.vms[0].shimmed.families.Metal3' false
  jq_is "$E2E_DIR/e1.json" '.vms[0].shimmed.max_threadgroup_memory' 65536
  jq_is "$E2E_DIR/e1.json" '.vms[0].shimmed.shim_active' true
  jq_is "$E2E_DIR/e1.json" '.vms[0].shimmed.workloads.llama_simdgroup_mm' true
  jq_is "$E2E_DIR/e1.json" '.vms[0].stock.workloads.llama_simdgroup_mm' false
  # Guest files: versioned directory, `current` link, owner-writable only.
  local home; home=$(guest_home vm1)
  [ -L "$home/.local/share/lume-metal/current" ] || fail "no current link in the guest"
  [ -z "$(find "$home/.local/share/lume-metal/" -type f -perm /022)" ] || fail "guest files writable by others"

  lm probe vm1 >"$E2E_DIR/probe.txt"
  grep -Eq '^  Apple9 +no +yes' "$E2E_DIR/probe.txt" || fail "probe table: $(cat "$E2E_DIR/probe.txt")"

  out=$(lm run vm1 -- metal-capabilities 1009)
  echo "$out" | grep -qx 'supports_family=true' || fail "run: $out"
  echo "$out" | grep -qx 'max_threadgroup_memory=65536' || fail "run: $out"
  set +e; lm run vm1 -- sh -c 'echo out; echo err >&2; exit 7' >"$E2E_DIR/run.out" 2>"$E2E_DIR/run.err"; rc=$?; set -e
  [ $rc -eq 7 ] || fail "run: exit code $rc, expected 7"
  grep -qx out "$E2E_DIR/run.out" && grep -qx err "$E2E_DIR/run.err" || fail "run: streams mixed up"

  lm_json "$E2E_DIR/s.json" status vm1
  expect_rc 0 "$E2E_DIR/s.json"
  jq_is "$E2E_DIR/s.json" '.vms[0].bundle_verified' true
  jq_is "$E2E_DIR/s.json" '.vms[0].restart_pending' false
  jq_is "$E2E_DIR/s.json" '.vms[0].shimmed.workloads.llama_simdgroup_reduction' true

  lm_json "$E2E_DIR/r.json" rollback vm1
  expect_rc 0 "$E2E_DIR/r.json"
  [ ! -e "$home/.local/share/lume-metal" ] || fail "guest files left after rollback"
  [ ! -e "$PLIST" ] || fail "preference file left after rollback (it was absent)"
  lm_json "$E2E_DIR/r2.json" rollback vm1
  expect_rc 0 "$E2E_DIR/r2.json"
  jq -r '.vms[0].message' "$E2E_DIR/r2.json" | grep -q "never enabled" || fail "second rollback: $(cat "$E2E_DIR/r2.json")"
}

# A second enable restarts nothing and uploads nothing (asserted on the simulator's request log).
scenario_idempotent() {
  sim_start --vm vm1
  lm_json "$E2E_DIR/e1.json" enable vm1
  expect_rc 0 "$E2E_DIR/e1.json"
  local from; from=$(log_lines)
  lm_json "$E2E_DIR/e2.json" enable vm1
  expect_rc 0 "$E2E_DIR/e2.json"
  jq_is "$E2E_DIR/e2.json" '.vms[0].files_uploaded' 0
  jq_is "$E2E_DIR/e2.json" '.vms[0].restarted' false
  jq_is "$E2E_DIR/e2.json" '.vms[0].started' false
  jq_is "$E2E_DIR/e2.json" '.host_preference_changed' false
  jq_is "$E2E_DIR/e2.json" '.vms[0].message' "vm1: already enabled, verified"
  [ "$(count_requests POST /run "$from")" -eq 0 ] || fail "re-enable started the VM"
  [ "$(count_requests POST /stop "$from")" -eq 0 ] || fail "re-enable stopped the VM"
  # It still proves what it claims: the probe ran stock and with the shim, and the exercise.
  jq_is "$E2E_DIR/e2.json" '.vms[0].stock.families.Apple9' false
  jq_is "$E2E_DIR/e2.json" '.vms[0].shimmed.families.Apple9' true
  jq_is "$E2E_DIR/e2.json" '.vms[0].exercise.simdgroup_matrix.result' pass
  jq_is "$E2E_DIR/e2.json" '[.vms[0].steps[].name] | join(",")' "host-preference,ready,guest,bundle,probe,exercise,record"
  # How long it takes is a figure of the enable benchmark (bench-enable), not a test.

  # A changed file in the guest is found by the one-command confirmation too: reinstalled.
  local dir; dir="$(guest_home vm1)/.local/share/lume-metal/$(jq -r '.vms[0].bundle' "$E2E_DIR/e2.json")"
  printf 'x' >>"$dir/$(jq -r .probe "$LM_BUNDLE_DIR/manifest.json")"
  lm_json "$E2E_DIR/e3.json" enable vm1
  expect_rc 0 "$E2E_DIR/e3.json"
  jq_is "$E2E_DIR/e3.json" '.vms[0].files_uploaded > 0' true
  jq_is "$E2E_DIR/e3.json" '.vms[0].message' "vm1: enabled"
  jq_is "$E2E_DIR/e3.json" '.vms[0].shimmed.families.Apple9' true
  # So is a manifest that no longer matches.
  printf ' ' >>"$dir/manifest.json"
  lm_json "$E2E_DIR/e4.json" enable vm1
  expect_rc 0 "$E2E_DIR/e4.json"
  jq_is "$E2E_DIR/e4.json" '.vms[0].files_uploaded > 0' true
}

# A running VM that booted before the preference changed is restarted; the preference had a
# prior value of another type, restored exactly with every other key.
scenario_restart_and_exact_restore() {
  sim_start --vm vm1
  cat >"$E2E_DIR/prior.xml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0"><dict>
<key>ForceUnrestrictedDeviceFeatureLevel</key><string>NO</string>
<key>Other</key><integer>42</integer>
<key>Nested</key><dict><key>a</key><array><real>1.5</real><data>AAEC</data><date>2026-01-02T03:04:05Z</date><true/></array></dict>
</dict></plist>
XML
  plistutil -i "$E2E_DIR/prior.xml" -o "$PLIST" -f bin
  local before; before=$(plist_xml)
  vm_run vm1  # booted before the change: restarted (docs/lume-metal.md, "When a VM is restarted")
  lm_json "$E2E_DIR/e.json" enable vm1
  expect_rc 0 "$E2E_DIR/e.json"
  jq_is "$E2E_DIR/e.json" '.vms[0].restarted' true
  jq_is "$E2E_DIR/e.json" '.host_preference.original' 'NO (string)'
  lm_json "$E2E_DIR/r.json" rollback vm1
  expect_rc 0 "$E2E_DIR/r.json"
  [ "$(plist_xml)" = "$before" ] || fail "preference not restored exactly: $(plist_xml)"
  jq_is "$E2E_DIR/r.json" '.vms[0].restarted' true   # it had booted with the unlocked level
}

# Two VMs enabled; rolling back one keeps the preference, the other restores it exactly.
scenario_two_vms() {
  sim_start --vm vm1 --vm vm2
  lm_json "$E2E_DIR/e.json" enable vm1 vm2 --jobs 2
  expect_rc 0 "$E2E_DIR/e.json"
  jq_is "$E2E_DIR/e.json" '[.vms[] | .result == "ok"] | all' true
  # The preference alone cannot be taken from under enabled VMs without --force.
  local before; before=$(plist_xml)
  lm_json "$E2E_DIR/hd.json" host disable
  expect_rc 1 "$E2E_DIR/hd.json"
  jq -r '.error.message' "$E2E_DIR/hd.json" | grep -q "2 VMs are still enabled (vm[12], vm[12])" || fail "$(cat "$E2E_DIR/hd.json")"
  [ "$(plist_xml)" = "$before" ] || fail "host disable changed the preference"
  lm_json "$E2E_DIR/r1.json" rollback vm1 --no-restart
  expect_rc 0 "$E2E_DIR/r1.json"
  jq_is "$E2E_DIR/r1.json" '.host_preference_restored' false
  jq_is "$E2E_DIR/r1.json" '.host_preference.value' "true (bool)"
  [ -e "$(guest_home vm2)/.local/share/lume-metal/current" ] || fail "vm2 lost its files"
  lm_json "$E2E_DIR/r2.json" rollback vm2 --no-restart
  expect_rc 0 "$E2E_DIR/r2.json"
  jq_is "$E2E_DIR/r2.json" '.host_preference_restored' true
  [ ! -e "$PLIST" ] || fail "preference file left (it was absent before)"
  lm_json "$E2E_DIR/st.json" status
  jq_is "$E2E_DIR/st.json" '.vms | length' 0
}

# A VM that never becomes ready: a clear error naming it, and the preference given back.
scenario_never_ready() {
  sim_start --vm vm1 --never-ready vm1
  lm_json "$E2E_DIR/e.json" enable vm1 --timeout 2
  expect_rc 1 "$E2E_DIR/e.json"
  jq -r '.vms[0].message' "$E2E_DIR/e.json" | grep -q "vm1" || fail "error does not name the VM"
  jq -r '.vms[0].message' "$E2E_DIR/e.json" | grep -qi "ready" || fail "error does not say what did not happen"
  jq -r '.vms[0].message' "$E2E_DIR/e.json" | grep -q "host preference restored" || fail "preference not restored: $(cat "$E2E_DIR/e.json")"
  [ ! -e "$PLIST" ] || fail "preference file left"
  # The step the timeout stopped reports the time it ran, as every step does (it said 0: never
  # measured). Whether it was measured is the check; how long it was is only printed.
  jq -e '[.vms[0].steps[] | select(.state == "failed")][0] | .seconds != 0' "$E2E_DIR/e.json" >/dev/null ||
    fail "the failed wait's duration was not measured: $(jq -c '.vms[0].steps' "$E2E_DIR/e.json")"
  set +e; lm enable vm1 --timeout 2 >"$E2E_DIR/t.out" 2>"$E2E_DIR/t.err"; set -e
  grep -q '^FAILED vm1 (' "$E2E_DIR/t.out" || fail "no FAILED line: $(cat "$E2E_DIR/t.out")"
  ! grep -q '^FAILED vm1 (0\.00 s)' "$E2E_DIR/t.out" || fail "the FAILED line's duration was not measured: $(cat "$E2E_DIR/t.out")"
  note "reported: $(grep '^FAILED' "$E2E_DIR/t.out")"
}

# The guest's host key changed: refused, both fingerprints shown, nothing installed.
scenario_host_key_changed() {
  sim_start --vm vm1
  lm_json "$E2E_DIR/e1.json" enable vm1
  expect_rc 0 "$E2E_DIR/e1.json"
  lm_json "$E2E_DIR/r.json" rollback vm1 --no-restart
  curl -fsS -X POST "$LUME_METAL_LUME_URL/lume/vms/vm1/stop" >/dev/null
  curl -fsS -X POST "$LUME_METAL_LUME_URL/_sim/vms/vm1/rekey" >/dev/null
  lm_json "$E2E_DIR/e2.json" enable vm1
  expect_rc 1 "$E2E_DIR/e2.json"
  # The library states what happened; the tool's hint offers the way out.
  jq -r '.error.hint' "$E2E_DIR/e2.json" | grep -q "lume-metal forget-host vm1" || fail "no way out offered: $(cat "$E2E_DIR/e2.json")"
  jq -r '.vms[0].message' "$E2E_DIR/e2.json" | grep -q "once the old key is forgotten" || fail "$(cat "$E2E_DIR/e2.json")"
  jq -r '.vms[0].message' "$E2E_DIR/e2.json" | grep -c "SHA256:" | grep -q . || fail "no fingerprints"
  [ ! -e "$(guest_home vm1)/.local/share/lume-metal" ] || fail "files installed despite the changed key"
  [ ! -e "$PLIST" ] || fail "preference left changed"
  lm forget-host vm1 >/dev/null
  lm_json "$E2E_DIR/e3.json" enable vm1
  expect_rc 0 "$E2E_DIR/e3.json"
}

# A bundle whose file does not match its manifest: refused before anything is uploaded.
scenario_bad_bundle() {
  sim_start --vm vm1
  cp -r "$LM_BUNDLE_DIR" "$E2E_DIR/bundle"
  printf 'tampered' >>"$E2E_DIR/bundle/$(jq -r .probe "$E2E_DIR/bundle/manifest.json")"
  lm_json "$E2E_DIR/e.json" enable vm1 --bundle "$E2E_DIR/bundle"
  expect_rc 1 "$E2E_DIR/e.json"
  jq -r '.vms[0].message' "$E2E_DIR/e.json" | grep -q "does not match its manifest" || fail "$(cat "$E2E_DIR/e.json")"
  [ ! -e "$(guest_home vm1)/.local/share/lume-metal/current" ] || fail "half-installed guest"
  [ -z "$(find "$(guest_home vm1)/.local/share/lume-metal" -mindepth 1 2>/dev/null)" ] || fail "files left in the guest"
  [ ! -e "$PLIST" ] || fail "preference left changed"
}

# The guest's disk fills up during the upload: error, no half-installed guest.
scenario_disk_full() {
  sim_start --vm vm1 --home-size 64k
  lm_json "$E2E_DIR/e.json" enable vm1
  expect_rc 1 "$E2E_DIR/e.json"
  jq -r '.vms[0].message' "$E2E_DIR/e.json" | grep -qi "space\|full\|quota\|upload" || fail "$(cat "$E2E_DIR/e.json")"
  jq -r '.vms[0].message' "$E2E_DIR/e.json" | grep -q "guest files removed" || fail "$(cat "$E2E_DIR/e.json")"
  [ ! -e "$PLIST" ] || fail "preference left changed"
}

# A guest where the shim cannot activate: exit 4, "guest unsupported — stock kept".
scenario_unsupported() {
  sim_start --vm vm1 --unsupported-vm vm1 --unsupported-metal-dir "$LM_FAKE_METAL_UNSUPPORTED"
  lm_json "$E2E_DIR/e.json" enable vm1
  expect_rc 4 "$E2E_DIR/e.json"
  jq_is "$E2E_DIR/e.json" '.vms[0].result' unsupported
  jq -r '.vms[0].message' "$E2E_DIR/e.json" | grep -q "stock kept" || fail "$(cat "$E2E_DIR/e.json")"
  [ ! -e "$(guest_home vm1)/.local/share/lume-metal/current" ] || fail "bundle left in an unsupported guest"
  [ ! -e "$PLIST" ] || fail "preference left changed"
}

# SIGKILL at each step of enable; enable again converges; rollback restores everything. The kills
# come from the test hook, which only the tests' build of the tool has ($LM_BIN_HOOKS).
scenario_kill_each_step() {
  : "${LM_BIN_HOOKS:?LM_BIN_HOOKS: lume-metal built with the test hooks}"
  sim_start --vm vm1
  local step
  for step in after-preference after-start install-staging install-upload after-install; do
    note "kill at $step"
    set +e; LUME_METAL_TEST_KILL_AT=$step "$LM_BIN_HOOKS" enable vm1 >/dev/null 2>&1; rc=$?; set -e
    [ $rc -eq 137 ] || fail "kill at $step: exit $rc, expected 137 (SIGKILL)"
    lm_json "$E2E_DIR/e.json" enable vm1
    expect_rc 0 "$E2E_DIR/e.json"
    jq_is "$E2E_DIR/e.json" '.vms[0].shimmed.families.Apple9' true
    lm_json "$E2E_DIR/r.json" rollback vm1 --no-restart
    expect_rc 0 "$E2E_DIR/r.json"
    [ ! -e "$PLIST" ] || fail "kill at $step: preference not restored"
    [ ! -e "$(guest_home vm1)/.local/share/lume-metal" ] || fail "kill at $step: guest files left"
    curl -fsS -X POST "$LUME_METAL_LUME_URL/lume/vms/vm1/stop" >/dev/null
  done
  # Killed, then rolled back directly (no second enable): still everything restored.
  set +e; LUME_METAL_TEST_KILL_AT=install-upload "$LM_BIN_HOOKS" enable vm1 >/dev/null 2>&1; set -e
  lm_json "$E2E_DIR/r.json" rollback vm1 --no-restart
  expect_rc 0 "$E2E_DIR/r.json"
  [ ! -e "$PLIST" ] || fail "rollback after a kill: preference not restored"
  [ ! -e "$(guest_home vm1)/.local/share/lume-metal" ] || fail "rollback after a kill: guest files left"
  # The tool users get has no such hook: the same variable changes nothing.
  LUME_METAL_TEST_KILL_AT=after-preference lm_json "$E2E_DIR/e.json" enable vm1
  expect_rc 0 "$E2E_DIR/e.json"
  lm_json "$E2E_DIR/r.json" rollback vm1 --no-restart
  expect_rc 0 "$E2E_DIR/r.json"
}

# --dry-run changes nothing.
scenario_dry_run() {
  sim_start --vm vm1
  vm_run vm1
  lm_json "$E2E_DIR/e.json" enable vm1 --dry-run
  expect_rc 0 "$E2E_DIR/e.json"
  [ ! -e "$PLIST" ] || fail "dry run wrote the preference"
  [ ! -e "$(guest_home vm1)/.local/share/lume-metal" ] || fail "dry run installed files"
  jq -r '.vms[0].steps[].detail' "$E2E_DIR/e.json" | grep -q "would install" || fail "no plan: $(cat "$E2E_DIR/e.json")"
}

# A different bundle version already installed is upgraded the same way: new directory, one
# switch of `current`, the old version gone.
scenario_upgrade() {
  sim_start --vm vm1
  lm_json "$E2E_DIR/e1.json" enable vm1
  expect_rc 0 "$E2E_DIR/e1.json"
  local old; old=$(jq -r '.vms[0].bundle' "$E2E_DIR/e1.json")
  cp -r "$LM_BUNDLE_DIR" "$E2E_DIR/bundle2"
  printf '\n' >>"$E2E_DIR/bundle2/profiles/conservative.json"
  local sum size; sum=$(sha256sum "$E2E_DIR/bundle2/profiles/conservative.json" | cut -d' ' -f1)
  size=$(stat -c %s "$E2E_DIR/bundle2/profiles/conservative.json")
  jq --arg s "$sum" --argjson z "$size" '.bundle_id = "0.1.0-upgrade00000" |
    (.files[] | select(.name == "profiles/conservative.json")) |= (.sha256 = $s | .size = $z)' \
    "$LM_BUNDLE_DIR/manifest.json" >"$E2E_DIR/bundle2/manifest.json"
  lm_json "$E2E_DIR/e2.json" enable vm1 --bundle "$E2E_DIR/bundle2"
  expect_rc 0 "$E2E_DIR/e2.json"
  jq_is "$E2E_DIR/e2.json" '.vms[0].bundle' "0.1.0-upgrade00000"
  jq_is "$E2E_DIR/e2.json" '.vms[0].files_uploaded > 0' true
  jq_is "$E2E_DIR/e2.json" '.vms[0].restarted' false
  local base; base="$(guest_home vm1)/.local/share/lume-metal"
  [ "$(readlink "$base/current")" = "0.1.0-upgrade00000" ] || fail "current not switched"
  [ ! -e "$base/$old" ] || fail "old version $old left behind"
  lm_json "$E2E_DIR/e3.json" enable vm1 --bundle "$E2E_DIR/bundle2"
  jq_is "$E2E_DIR/e3.json" '.vms[0].files_uploaded' 0
  lm_json "$E2E_DIR/r.json" rollback vm1
  expect_rc 0 "$E2E_DIR/r.json"
  [ ! -e "$base" ] || fail "guest files left"
}

name=${1:?usage: scenarios.sh NAME}
"scenario_$name"
check_guest_shells
echo "e2e $name: passed"
