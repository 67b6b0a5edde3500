#!/usr/bin/env bash
# The Ansible role (examples/ansible) with Debian's ansible-core against two simulated Mac hosts on
# this machine: two inventory hosts (local connection), each with its own Lume simulator, VMs,
# state and preference directories. The example playbook itself runs, with a test inventory:
# check mode changes nothing, the first run is changed, the second changed=0, rollback restores
# both hosts, a failure is reported in lume-metal's own words and is changed when the host or a VM
# changed; --diff shows the preference and each VM's guest files before and after (under --check,
# the plan); rolled_back on a host whose other VM
# still needs the preference keeps it and is ok.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
examples=$(cd "$here/../../examples/ansible" && pwd)
# Host a: lib.sh's simulator. Host b: a second one on the test's second net, stopped by PID on
# exit like the first.
address_base_b=$(lm_test_address 2 "${LM_ADDRESS_BASE_B:-}")

# Each host's simulator reads its own host's preferences (the Lume server user's domain).
mkdir -p "$E2E_DIR/mac-a/prefs" "$E2E_DIR/mac-b/prefs"
sim_start --vm vm1 --vm vm2 --boot-delay 0 --stop-delay 0 --prefs-dir "$E2E_DIR/mac-a/prefs"
url_a=$LUME_METAL_LUME_URL
"$LM_SIM" --port 0 --prefs-dir "$E2E_DIR/mac-b/prefs" --dir "$E2E_DIR/sim-b" --info "$E2E_DIR/sim-b.json" --boot-delay 0 --stop-delay 0 \
  --metal-dir "$LM_FAKE_METAL" --address-base "$address_base_b" --exit-with-parent \
  --vm vm1 --vm vm2 >"$E2E_DIR/sim-b.out" 2>&1 &
SIM_B_PID=$!
E2E_MORE_SIMS+=("$SIM_B_PID")
for _ in $(seq 1 200); do
  [ -s "$E2E_DIR/sim-b.json" ] && break
  kill -0 "$SIM_B_PID" 2>/dev/null || fail "the second simulator exited: $(cat "$E2E_DIR/sim-b.out")"
  sleep 0.05
done
url_b=$(jq -r .url "$E2E_DIR/sim-b.json")
# Every VM runs from before the preference changes: the first enable restarts each.
for vm in vm1 vm2; do
  vm_run "$vm"
  LUME_METAL_LUME_URL=$url_b SIM_LOG=$(jq -r .log "$E2E_DIR/sim-b.json") vm_run "$vm"
done
unset LUME_METAL_LUME_URL LUME_METAL_STATE_DIR LUME_METAL_PREFS_DIR   # each host has its own below

host_env() { # HOST URL: the role's lume_metal_environment for that host, as YAML flow mapping
  printf '{LUME_METAL_LUME_URL: "%s", LUME_METAL_STATE_DIR: "%s", LUME_METAL_PREFS_DIR: "%s"}' \
    "$2" "$E2E_DIR/$1/state" "$E2E_DIR/$1/prefs"
}
# lume-metal, each command line it is given logged beside the host's state directory.
cat >"$E2E_DIR/lume-metal-logged" <<SH
#!/bin/sh
echo "\$*" >>"\$LUME_METAL_STATE_DIR.calls"
exec "$LM_BIN" "\$@"
SH
chmod +x "$E2E_DIR/lume-metal-logged"
cat >"$E2E_DIR/inventory.yml" <<YAML
mac_ci:
  vars:
    ansible_connection: local
    ansible_python_interpreter: $(command -v python3)
    lume_metal_binary: "$E2E_DIR/lume-metal-logged"
    lume_metal_vms: [vm1, vm2]
  hosts:
    mac-a:
      lume_metal_environment: $(host_env mac-a "$url_a")
    mac-b:
      lume_metal_environment: $(host_env mac-b "$url_b")
YAML
export ANSIBLE_LOCAL_TEMP="$E2E_DIR/ansible-tmp" ANSIBLE_REMOTE_TEMP="$E2E_DIR/ansible-tmp"
export ANSIBLE_NOCOLOR=1 ANSIBLE_FORCE_COLOR=0 ANSIBLE_RETRY_FILES_ENABLED=0 ANSIBLE_STDOUT_CALLBACK=default
: >"$E2E_DIR/ansible.cfg"
export ANSIBLE_CONFIG="$E2E_DIR/ansible.cfg"   # not one from the working directory or home

# play OUT ARGS...: the example playbook; its exit code in PLAY_RC.
play() {
  local out=$1; shift
  set +e
  ansible-playbook -i "$E2E_DIR/inventory.yml" "$examples/playbook.yml" "$@" >"$out" 2>&1
  PLAY_RC=$?
  set -e
}
# recap OUT HOST FIELD: a number from the PLAY RECAP line of HOST ("changed", "ok", "failed").
recap() { sed -n "s/^$2 *: .*[^a-z]$3=\([0-9]*\).*/\1/p" "$1"; }
expect_recap() { # OUT FIELD VALUE
  local h got
  for h in mac-a mac-b; do
    got=$(recap "$1" "$h" "$2")
    [ "$got" = "$3" ] || fail "$h: $2=$got, expected $3: $(cat "$1")"
  done
}
plist() { echo "$E2E_DIR/$1/prefs/com.apple.gpusw.ParavirtualizedGraphics.plist"; }
guest_files() { # HOST-SIM-INFO VM: the VM's lume-metal directory in its guest home
  echo "$(jq -r --arg n "$2" '.vms[] | select(.name == $n) | .dir' "$1")/home/.local/share/lume-metal"
}
for_each_guest() { # CHECK: run CHECK with each guest's lume-metal directory
  local info vm
  for info in "$E2E_DIR/sim.json" "$E2E_DIR/sim-b.json"; do
    for vm in vm1 vm2; do "$1" "$(guest_files "$info" "$vm")"; done
  done
}
installed() { [ -L "$1/current" ] || fail "no bundle installed at $1"; }
removed() { [ ! -e "$1" ] || fail "guest files left at $1"; }

note "check mode: lume-metal --dry-run, reported as changed, nothing changed"
play "$E2E_DIR/check.out" --check
[ "$PLAY_RC" -eq 0 ] || fail "check mode: $(cat "$E2E_DIR/check.out")"
expect_recap "$E2E_DIR/check.out" changed 1
expect_recap "$E2E_DIR/check.out" failed 0
for h in mac-a mac-b; do [ ! -e "$(plist $h)" ] || fail "$h: check mode wrote the preference"; done
for_each_guest removed

note "check mode with --diff: the plan as the diff (issue 50), nothing changed"
play "$E2E_DIR/checkdiff.out" --check --diff
[ "$PLAY_RC" -eq 0 ] || fail "check mode --diff: $(cat "$E2E_DIR/checkdiff.out")"
expect_recap "$E2E_DIR/checkdiff.out" changed 1
grep -q '^+vm1: bundle: would install ' "$E2E_DIR/checkdiff.out" &&
  grep -q '^+vm2: host-preference: .* would be set to ' "$E2E_DIR/checkdiff.out" ||
  fail "check mode --diff shows no plan: $(cat "$E2E_DIR/checkdiff.out")"
for h in mac-a mac-b; do [ ! -e "$(plist $h)" ] || fail "$h: check mode --diff wrote the preference"; done
for_each_guest removed

note "first run: changed on both hosts, one lume-metal run per host for both VMs"
play "$E2E_DIR/run1.out"
[ "$PLAY_RC" -eq 0 ] || fail "first run: $(cat "$E2E_DIR/run1.out")"
expect_recap "$E2E_DIR/run1.out" changed 1
for h in mac-a mac-b; do
  plistutil -i "$(plist $h)" -o - | grep -q '<true/>' || fail "$h: preference not set"
done
for_each_guest installed
# One enable command line per host naming both VMs, with --jobs 2 and fleet mode (the two check runs before it).
for h in mac-a mac-b; do
  calls=$(tail -n 1 "$E2E_DIR/$h/state.calls")
  [ "$calls" = "enable --format json --keep-host --jobs 2 --profile published vm1 vm2" ] &&
    [ "$(grep -c "^enable " "$E2E_DIR/$h/state.calls")" = 3 ] || fail "$h: lume-metal ran as: $(cat "$E2E_DIR/$h/state.calls")"
done

note "second run: changed=0"
play "$E2E_DIR/run2.out"
[ "$PLAY_RC" -eq 0 ] || fail "second run: $(cat "$E2E_DIR/run2.out")"
expect_recap "$E2E_DIR/run2.out" changed 0

note "a failure is reported in lume-metal's own words"
play "$E2E_DIR/bad.out" -e '{"lume_metal_vms": ["vm1", "no-such-vm"]}'
[ "$PLAY_RC" -ne 0 ] || fail "an unknown VM did not fail the play: $(cat "$E2E_DIR/bad.out")"
LUME_METAL_LUME_URL=$url_a LUME_METAL_STATE_DIR="$E2E_DIR/mac-a/state" LUME_METAL_PREFS_DIR="$E2E_DIR/mac-a/prefs" \
  lm_json "$E2E_DIR/bad.json" enable vm1 no-such-vm
message=$(jq -r '.vms[] | select(.result != "ok") | .message' "$E2E_DIR/bad.json")
[ -n "$message" ] && grep -qF "$message" "$E2E_DIR/bad.out" || fail "lume-metal's message '$message' not shown: $(cat "$E2E_DIR/bad.out")"

note "rollback: both hosts restored (guest files removed, preference as before)"
play "$E2E_DIR/rollback.out" -e lume_metal_state=rolled_back
[ "$PLAY_RC" -eq 0 ] || fail "rollback: $(cat "$E2E_DIR/rollback.out")"
for h in mac-a mac-b; do [ "$(recap "$E2E_DIR/rollback.out" $h changed)" -ge 1 ] || fail "$h: rollback not changed"; done
for_each_guest removed
for h in mac-a mac-b; do [ ! -e "$(plist $h)" ] || fail "$h: preference file left (it was absent)"; done

note "a partial failure is changed: the preference was set and vm1 enabled (issue 50)"
play "$E2E_DIR/failed.out" -e '{"lume_metal_vms": ["vm1", "no-such-vm"]}'
[ "$PLAY_RC" -ne 0 ] || fail "an unknown VM did not fail the play: $(cat "$E2E_DIR/failed.out")"
expect_recap "$E2E_DIR/failed.out" changed 1
expect_recap "$E2E_DIR/failed.out" failed 1
for info in "$E2E_DIR/sim.json" "$E2E_DIR/sim-b.json"; do installed "$(guest_files "$info" vm1)"; done

note "--diff: the preference and each VM's guest files before and after, what the run added"
play "$E2E_DIR/diff.out" --diff -e '{"lume_metal_vms": ["vm1", "vm2"]}'
[ "$PLAY_RC" -eq 0 ] || fail "enable --diff: $(cat "$E2E_DIR/diff.out")"
expect_recap "$E2E_DIR/diff.out" changed 1
for h in mac-a mac-b; do
  grep -q "^--- before: lume-metal enable on $h (before)" "$E2E_DIR/diff.out" &&
    grep -q "^+++ after: lume-metal enable on $h (after)" "$E2E_DIR/diff.out" ||
    fail "$h: no diff headers: $(cat "$E2E_DIR/diff.out")"
done
grep -q '^-vm2: guest files none$' "$E2E_DIR/diff.out" && grep -q '^+vm2: guest files ~/.local/share/lume-metal, bundle ' "$E2E_DIR/diff.out" &&
  grep -q '^+vm2: added .* files uploaded and verified by SHA-256' "$E2E_DIR/diff.out" ||
  fail "diff: vm2's guest files: $(cat "$E2E_DIR/diff.out")"
! grep -q '^[-+]vm1: guest files' "$E2E_DIR/diff.out" || fail "diff: vm1 did not change: $(cat "$E2E_DIR/diff.out")"

note "lume_metal_host_preference: passed to enable only when set (a lume-metal that records its argv)"
! grep -q -- '--host-preference' "$E2E_DIR/mac-a/state.calls" || fail "passed unset: $(cat "$E2E_DIR/mac-a/state.calls")"
cat >"$E2E_DIR/lume-metal-argv" <<SH
#!/bin/sh
echo "\$*" >>"\$LUME_METAL_STATE_DIR.argv"
echo '{"schema": 2, "command": "enable", "ok": true, "exit_code": 0, "dry_run": false, "error": null, "vms": []}'
SH
chmod +x "$E2E_DIR/lume-metal-argv"
play "$E2E_DIR/hp.out" -e "lume_metal_binary=$E2E_DIR/lume-metal-argv" -e lume_metal_host_preference=auto
[ "$PLAY_RC" -eq 0 ] || fail "host preference auto: $(cat "$E2E_DIR/hp.out")"
for h in mac-a mac-b; do
  [ "$(cat "$E2E_DIR/$h/state.argv")" = "enable --format json --keep-host --jobs 2 --profile published --host-preference auto vm1 vm2" ] ||
    fail "$h: lume-metal ran as: $(cat "$E2E_DIR/$h/state.argv")"
done

note "rolled_back on a shared host: this VM's part removed, the preference kept for vm2, ok"
play "$E2E_DIR/shared.out" -e '{"lume_metal_vms": ["vm1"], "lume_metal_state": "rolled_back"}'
[ "$PLAY_RC" -eq 0 ] || fail "rolled_back on a shared host failed: $(cat "$E2E_DIR/shared.out")"
expect_recap "$E2E_DIR/shared.out" failed 0
grep -q 'still enabled .*: kept (this host.s other VMs use it' "$E2E_DIR/shared.out" || fail "not said kept: $(cat "$E2E_DIR/shared.out")"
for h in mac-a mac-b; do
  plistutil -i "$(plist $h)" -o - | grep -q '<true/>' || fail "$h: the preference was taken from vm2"
done
for info in "$E2E_DIR/sim.json" "$E2E_DIR/sim-b.json"; do
  removed "$(guest_files "$info" vm1)"; installed "$(guest_files "$info" vm2)"
done

note "--diff of the last VM's rollback: the preference given back, vm2's files removed"
play "$E2E_DIR/diff2.out" --diff -e '{"lume_metal_vms": ["vm2"], "lume_metal_state": "rolled_back"}'
[ "$PLAY_RC" -eq 0 ] || fail "rollback --diff: $(cat "$E2E_DIR/diff2.out")"
grep -qx -- '-host preference com.apple.gpusw.ParavirtualizedGraphics ForceUnrestrictedDeviceFeatureLevel: true (bool)' "$E2E_DIR/diff2.out" &&
  grep -qx -- '+host preference com.apple.gpusw.ParavirtualizedGraphics ForceUnrestrictedDeviceFeatureLevel: absent' "$E2E_DIR/diff2.out" &&
  grep -qx -- '-vm2: guest files ~/.local/share/lume-metal, bundle [^ ]*' "$E2E_DIR/diff2.out" &&
  grep -q '^+vm2: removed [0-9]* files' "$E2E_DIR/diff2.out" || fail "diff of the rollback: $(cat "$E2E_DIR/diff2.out")"
for h in mac-a mac-b; do [ ! -e "$(plist $h)" ] || fail "$h: preference file left (it was absent)"; done

note "rollback at the end of the play: the handler"
play "$E2E_DIR/handler.out" -e lume_metal_rollback_at_end=true
[ "$PLAY_RC" -eq 0 ] || fail "handler run: $(cat "$E2E_DIR/handler.out")"
grep -q 'RUNNING HANDLER \[lume_metal : Roll back lume-metal\]' "$E2E_DIR/handler.out" || fail "no handler: $(cat "$E2E_DIR/handler.out")"
for_each_guest removed
echo "ansible role: 2 hosts, check/check --diff/changed/changed=0/partial failure (changed=1 failed=1)/rollback/--diff/shared rollback/handler as expected"
