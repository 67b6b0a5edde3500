#!/usr/bin/env bash
# Ephemeral CI fleets (issue 17): ephemeral.sh NAME. A host kept unlocked by the fleet, VMs that are
# cloned, used and deleted, names reused by new VMs. Each scenario starts its own simulator and
# state; see docs/testing.md.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

# host enable --keep / enable --keep-host: rolling back the last VM leaves the preference on, so
# the next VM started needs no restart; host disable and rollback --all --restore-host restore it exactly.
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

  # The next job's VM, cloned and started while the preference is on: enabled without a restart.
  # Lume's server shows no process of the VM's own, and its guest booting after the change may be
  # a guest reboot (issue 48, item 3); its directory, created after the change, says no process of
  # it can have started before (docs/lume-metal.md, "When a VM is restarted").
  lume_cli clone vm2 job2 >"$E2E_DIR/clone.out" 2>&1 || fail "lume clone: $(cat "$E2E_DIR/clone.out")"
  vm_run job2
  lm_json "$E2E_DIR/e2.json" enable job2 --boot-margin 0.001
  expect_rc 0 "$E2E_DIR/e2.json"
  jq_is "$E2E_DIR/e2.json" '.vms[0].restarted' false
  lm_json "$E2E_DIR/r2.json" rollback job2
  jq_is "$E2E_DIR/r2.json" '.host_preference_restored' false
  curl -fsS -X POST "$LUME_METAL_LUME_URL/lume/vms/job2/stop" >/dev/null
  # A VM that existed before the change, started through Lume's API after it: nothing tells its
  # start from a guest reboot, so the first enable restarts it once.
  vm_run vm2
  lm_json "$E2E_DIR/e2b.json" enable vm2 --boot-margin 0.001
  expect_rc 0 "$E2E_DIR/e2b.json"
  jq_is "$E2E_DIR/e2b.json" '.vms[0].restarted' true
  lm_json "$E2E_DIR/r2b.json" rollback vm2
  jq_is "$E2E_DIR/r2b.json" '.host_preference_restored' false

  # Only host disable gives it back, exactly (absent file).
  lm_json "$E2E_DIR/hd.json" host disable
  expect_rc 0 "$E2E_DIR/hd.json"
  jq_is "$E2E_DIR/hd.json" '.host_preference.mode' null
  [ ! -e "$PLIST" ] || fail "preference file left after host disable (it was absent)"

  # enable --keep-host does the same in one command; rollback --all --restore-host restores it.
  lm_json "$E2E_DIR/e3.json" enable vm1 --keep-host
  expect_rc 0 "$E2E_DIR/e3.json"
  jq_is "$E2E_DIR/e3.json" '.host_preference.mode' kept
  lm_json "$E2E_DIR/r3.json" rollback --all
  jq_is "$E2E_DIR/r3.json" '.host_preference_restored' false
  lm_json "$E2E_DIR/r4.json" rollback --all --restore-host
  expect_rc 0 "$E2E_DIR/r4.json"
  jq_is "$E2E_DIR/r4.json" '.host_preference_restored' true
  [ ! -e "$PLIST" ] || fail "preference file left after rollback --all --restore-host"

  # Per VM, as before: the last rollback restores it; the mode says so.
  lm_json "$E2E_DIR/e5.json" enable vm1
  jq_is "$E2E_DIR/e5.json" '.host_preference.mode' per-vm
  lm_json "$E2E_DIR/r5.json" rollback vm1
  jq_is "$E2E_DIR/r5.json" '.host_preference_restored' true

  # The options belong to their commands.
  set +e; lm status --keep >/dev/null 2>&1; rc=$?; set -e
  [ $rc -eq 2 ] || fail "status --keep: exit $rc, expected 2"
  set +e; lm enable vm1 --restore-host >/dev/null 2>&1; rc=$?; set -e
  [ $rc -eq 2 ] || fail "enable --restore-host: exit $rc, expected 2"
}

# The lume stand-in (lume-sim's CLI), for clone and delete as a CI job runs them.
state_size() { wc -c <"$LUME_METAL_STATE_DIR/state.json"; }
pins() { grep -c '^[A-Za-z0-9]' "$LUME_METAL_STATE_DIR/known_hosts" 2>/dev/null || true; }

# One CI job: clone SRC as NAME, start it, enable, a workload through run, rollback, delete.
# The simulator's guests boot 0.2 s after their start: a boot margin of 0.5 s plays the part of the
# 30 s a Mac's firmware needs (docs/lume-metal.md, "When a VM is restarted").
ci_job() { # N SRC NAME
  local n=$1 src=$2 name=$3
  lume_cli clone "$src" "$name" >"$E2E_DIR/clone$n.out" 2>&1 || fail "job $n: lume clone: $(cat "$E2E_DIR/clone$n.out")"
  vm_run "$name"
  lm_json "$E2E_DIR/job$n-enable.json" enable "$name" --boot-margin 0.5
  expect_rc 0 "$E2E_DIR/job$n-enable.json"
  [ "$n" -eq 1 ] || jq_is "$E2E_DIR/job$n-enable.json" '.vms[0].restarted' false
  jq_is "$E2E_DIR/job$n-enable.json" '.vms[0].vm_id | startswith("sha256:")' true
  lm run "$name" -- metal-capabilities 1009 >"$E2E_DIR/job$n-run.out" || fail "job $n: run"
  grep -qx 'supports_family=true' "$E2E_DIR/job$n-run.out" || fail "job $n: run: $(cat "$E2E_DIR/job$n-run.out")"
  lm_json "$E2E_DIR/job$n-rollback.json" rollback "$name"
  expect_rc 0 "$E2E_DIR/job$n-rollback.json"
  jq_is "$E2E_DIR/job$n-rollback.json" '.host_preference_restored' false
  curl -fsS -X POST "$LUME_METAL_LUME_URL/lume/vms/$name/stop" >/dev/null  # the server runs it: stop over HTTP
  lume_cli delete "$name" --force >"$E2E_DIR/delete$n.out" 2>&1 || fail "job $n: lume delete: $(cat "$E2E_DIR/delete$n.out")"
}

# The issue's lifecycle, five jobs: clone -> run -> enable -> run -> rollback -> delete, the host
# kept unlocked; ci-runner-1 comes back three times, once re-created from a newer base image (new
# host keys, new identity): its pin is replaced with a warning, never refused. No restart after
# the first job; the journal is as large after job 5 as after job 1; status keeps exiting 0.
scenario_lifecycle() {
  sim_start --vm base --vm base2 --lume-home "$HOME/.lume"
  curl -fsS -X POST "$LUME_METAL_LUME_URL/_sim/vms/base2/rekey" >/dev/null   # a newer image: other keys
  lm_json "$E2E_DIR/h.json" host enable --keep
  expect_rc 0 "$E2E_DIR/h.json"
  ci_job 1 base ci-runner-1
  local size1; size1=$(state_size)
  # Re-created at once from the newer image: the old pin is still there, and is replaced.
  ci_job 2 base2 ci-runner-1
  grep -q "ci-runner-1' is a new VM under a known name" "$E2E_DIR/job2-enable.json.err" ||
    fail "job 2: no notice that the pin was replaced: $(cat "$E2E_DIR/job2-enable.json.err")"
  ci_job 3 base ci-3
  # Job 3's enable forgot the deleted ci-runner-1 (and its pin): first contact again.
  ci_job 4 base ci-runner-1
  ! grep -q "new VM under a known name" "$E2E_DIR/job4-enable.json.err" || fail "job 4: the old pin was not forgotten"
  ci_job 5 base2 ci-runner-1
  grep -q "ci-runner-1' is a new VM under a known name" "$E2E_DIR/job5-enable.json.err" ||
    fail "job 5: no notice that the pin was replaced: $(cat "$E2E_DIR/job5-enable.json.err")"
  [ "$(state_size)" -eq "$size1" ] || fail "journal grew: $size1 bytes after job 1, $(state_size) after job 5"
  lm_json "$E2E_DIR/st.json" status
  expect_rc 0 "$E2E_DIR/st.json"
  jq_is "$E2E_DIR/st.json" '.host_preference.mode' kept
  # The last job's pin goes with the next sweep (gc here): nothing of a deleted VM is kept.
  lm_json "$E2E_DIR/gc.json" gc
  expect_rc 0 "$E2E_DIR/gc.json"
  [ "$(pins)" -eq 0 ] || fail "pins of deleted VMs left: $(cat "$LUME_METAL_STATE_DIR/known_hosts")"
}

# A job that ends without rollback: its VM deleted, status says gone (exit 0) and changes nothing
# (a read command; issue 50), as often as it is asked; gc forgets it, and then the preference
# bookkeeping no longer counts it (host disable needs no --force).
scenario_gone() {
  sim_start --vm base --lume-home "$HOME/.lume"
  lume_cli clone base ci-1 >/dev/null
  lm_json "$E2E_DIR/e.json" enable ci-1
  expect_rc 0 "$E2E_DIR/e.json"
  grep -q '^ci-1 ' "$LUME_METAL_STATE_DIR/known_hosts" || fail "no pin for ci-1"
  curl -fsS -X POST "$LUME_METAL_LUME_URL/lume/vms/ci-1/stop" >/dev/null   # the server runs it: stop it over HTTP
  lume_cli delete ci-1 --force >/dev/null
  local before; before=$(cat "$LUME_METAL_STATE_DIR/state.json" "$LUME_METAL_STATE_DIR/known_hosts")
  lm_json "$E2E_DIR/s1.json" status
  expect_rc 0 "$E2E_DIR/s1.json"
  jq_is "$E2E_DIR/s1.json" '.vms | length' 1
  jq_is "$E2E_DIR/s1.json" '.vms[0].gone' true
  jq_is "$E2E_DIR/s1.json" '.vms[0].result' ok
  jq_is "$E2E_DIR/s1.json" '.vms[0].message' 'ci-1: gone (its VM manager does not know it); what is remembered of it is kept until it is forgotten'
  [ "$(cat "$LUME_METAL_STATE_DIR/state.json" "$LUME_METAL_STATE_DIR/known_hosts")" = "$before" ] ||
    fail "status changed the journal or the pins"
  lm_json "$E2E_DIR/s2.json" status
  expect_rc 0 "$E2E_DIR/s2.json"
  jq_is "$E2E_DIR/s2.json" '.vms[0].gone' true
  # In the fleet table the gone row has every column, as the others (issue 50).
  lm status ci-1 base >"$E2E_DIR/t.txt" || fail "status table: $(cat "$E2E_DIR/t.txt")"
  [ "$(awk '$1 == "ci-1" { print NF }' "$E2E_DIR/t.txt")" = 8 ] &&
    [ "$(awk '$1 == "ci-1" { print length($0) }' "$E2E_DIR/t.txt")" = "$(awk '$1 == "base" { print length($0) }' "$E2E_DIR/t.txt")" ] ||
    fail "the gone row: $(cat "$E2E_DIR/t.txt")"
  lm_json "$E2E_DIR/gc.json" gc
  expect_rc 0 "$E2E_DIR/gc.json"
  ! grep -q '^ci-1 ' "$LUME_METAL_STATE_DIR/known_hosts" || fail "ci-1's pin kept by gc"
  lm_json "$E2E_DIR/s3.json" status
  expect_rc 0 "$E2E_DIR/s3.json"
  jq_is "$E2E_DIR/s3.json" '.vms | length' 0
  lm_json "$E2E_DIR/hd.json" host disable
  expect_rc 0 "$E2E_DIR/hd.json"
  [ ! -e "$PLIST" ] || fail "preference not restored"
}

# gc: --dry-run lists and changes nothing; gc forgets journal entries and pins of deleted VMs.
scenario_gc() {
  sim_start --vm base --lume-home "$HOME/.lume"
  lume_cli clone base ci-a >/dev/null
  lume_cli clone base ci-b >/dev/null
  lm_json "$E2E_DIR/e.json" enable ci-a ci-b --keep-host
  expect_rc 0 "$E2E_DIR/e.json"
  lm_json "$E2E_DIR/r.json" rollback ci-b        # ci-b: a pin only
  for v in ci-a ci-b; do curl -fsS -X POST "$LUME_METAL_LUME_URL/lume/vms/$v/stop" >/dev/null || true; done
  curl -fsS -X DELETE "$LUME_METAL_LUME_URL/lume/vms/ci-a" >/dev/null
  curl -fsS -X DELETE "$LUME_METAL_LUME_URL/lume/vms/ci-b" >/dev/null
  local before; before=$(cat "$LUME_METAL_STATE_DIR/state.json" "$LUME_METAL_STATE_DIR/known_hosts")
  lm_json "$E2E_DIR/d.json" gc --dry-run
  expect_rc 0 "$E2E_DIR/d.json"
  jq_is "$E2E_DIR/d.json" '[.vms[].vm] | sort | join(",")' "ci-a,ci-b"
  jq_is "$E2E_DIR/d.json" '[.vms[].gone] | all' true
  [ "$(cat "$LUME_METAL_STATE_DIR/state.json" "$LUME_METAL_STATE_DIR/known_hosts")" = "$before" ] || fail "gc --dry-run changed files"
  lm gc >"$E2E_DIR/gc.txt" || fail "gc: $(cat "$E2E_DIR/gc.txt")"
  grep -q '^ci-a: gone .*forgot its journal entry and host-key pin' "$E2E_DIR/gc.txt" || fail "gc: $(cat "$E2E_DIR/gc.txt")"
  grep -q '^ci-b: gone .*forgot its host-key pin' "$E2E_DIR/gc.txt" || fail "gc: $(cat "$E2E_DIR/gc.txt")"
  jq_is "$LUME_METAL_STATE_DIR/state.json" '.vms | length' 0
  lm gc | grep -q '^nothing to forget' || fail "second gc"
}

# gc when another lume-metal holds a lock past gc's wait (issue 49): the journal's lock -- gc says
# so at its first wait, in text (with the hint) and in JSON (error "locked"), with no warning
# before it, and forgets nothing; the known-hosts lock -- gc says that one.
scenario_gc_locked() {
  sim_start --vm base --lume-home "$HOME/.lume"
  lume_cli clone base ci-a >/dev/null
  lm_json "$E2E_DIR/e.json" enable ci-a --keep-host
  expect_rc 0 "$E2E_DIR/e.json"
  curl -fsS -X POST "$LUME_METAL_LUME_URL/lume/vms/ci-a/stop" >/dev/null || true
  curl -fsS -X DELETE "$LUME_METAL_LUME_URL/lume/vms/ci-a" >/dev/null
  local before rc; before=$(cat "$LUME_METAL_STATE_DIR/state.json" "$LUME_METAL_STATE_DIR/known_hosts")
  set +e
  flock "$LUME_METAL_STATE_DIR/state.lock" "$LM_BIN" gc >"$E2E_DIR/gc.out" 2>"$E2E_DIR/gc.err"
  rc=$?
  set -e
  [ "$rc" -eq 1 ] || fail "gc under the journal's lock: exit $rc: $(cat "$E2E_DIR/gc.out" "$E2E_DIR/gc.err")"
  [ "$(cat "$E2E_DIR/gc.err")" = "lume-metal: $LUME_METAL_STATE_DIR/state.lock: another lume-metal process has held the state lock for more than 60 s; wait for it to finish and try again
hint: wait for the other lume-metal named above and try again (without --no-wait, lume-metal waits by itself)" ] ||
    fail "gc under the journal's lock said: $(cat "$E2E_DIR/gc.out" "$E2E_DIR/gc.err")"
  set +e
  flock "$LUME_METAL_STATE_DIR/state.lock" "$LM_BIN" gc --format json >"$E2E_DIR/gc.json" 2>"$E2E_DIR/gc.json.err"
  LM_RC=$?
  set -e
  expect_rc 1 "$E2E_DIR/gc.json"
  jq_is "$E2E_DIR/gc.json" '"\(.ok) \(.error.code) \(.error.message | test("another lume-metal process has held the state lock"))"' "false locked true"
  ! grep -q warning "$E2E_DIR/gc.json.err" || fail "a warning before the error: $(cat "$E2E_DIR/gc.json.err")"
  [ "$(cat "$LUME_METAL_STATE_DIR/state.json" "$LUME_METAL_STATE_DIR/known_hosts")" = "$before" ] || fail "gc changed files"
  set +e
  flock "$LUME_METAL_STATE_DIR/known_hosts.lock" "$LM_BIN" gc >"$E2E_DIR/kh.out" 2>"$E2E_DIR/kh.err"
  rc=$?
  set -e
  [ "$rc" -eq 1 ] || fail "gc under the known-hosts lock: exit $rc: $(cat "$E2E_DIR/kh.out" "$E2E_DIR/kh.err")"
  grep -q "^lume-metal: .*known_hosts.lock: another lume-metal process has held the known-hosts lock for more than 10 s" \
    "$E2E_DIR/kh.err" || fail "gc under the known-hosts lock said: $(cat "$E2E_DIR/kh.out" "$E2E_DIR/kh.err")"
  lm gc >"$E2E_DIR/gc2.txt" || fail "gc: $(cat "$E2E_DIR/gc2.txt")"
  grep -q '^ci-a: gone .*forgot its host-key pin' "$E2E_DIR/gc2.txt" || fail "gc: $(cat "$E2E_DIR/gc2.txt")"
  jq_is "$LUME_METAL_STATE_DIR/state.json" '.vms | length' 0
}

# Pins follow identity: the same identity with new host keys is refused as always; the VM's
# identity is in status; a Tart clone has its own identity (Tart's config.json ecid).
scenario_identity() {
  sim_start --vm base --tart-vm tbase --lume-home "$HOME/.lume"
  lume_cli clone base ci-1 >/dev/null
  lm_json "$E2E_DIR/e.json" enable ci-1
  expect_rc 0 "$E2E_DIR/e.json"
  local id; id=$(jq -r '.vms[0].vm_id' "$E2E_DIR/e.json")
  grep -q "^ci-1 .* id=$id " "$LUME_METAL_STATE_DIR/known_hosts" || fail "pin without the identity"
  curl -fsS -X POST "$LUME_METAL_LUME_URL/lume/vms/ci-1/stop" >/dev/null
  curl -fsS -X POST "$LUME_METAL_LUME_URL/_sim/vms/ci-1/rekey" >/dev/null
  vm_run ci-1
  lm_json "$E2E_DIR/s.json" status ci-1
  jq_is "$E2E_DIR/s.json" '.vms[0].vm_id' "$id"
  lm_json "$E2E_DIR/e2.json" enable ci-1
  expect_rc 1 "$E2E_DIR/e2.json"
  jq_is "$E2E_DIR/e2.json" '.vms[0].error.code' host-key
  # Tart: `tart clone` keeps the ecid, so the clone has its source's identity (the MAC, which
  # Tart changes on any collision, is not part of it).
  local tart; tart=$(jq -r .bin_dir "$E2E_DIR/sim.json")/tart
  TART_HOME=$(jq -r .tart_home "$E2E_DIR/sim.json") "$tart" clone tbase tci-1 || fail "tart clone"
  export TART_HOME; TART_HOME=$(jq -r .tart_home "$E2E_DIR/sim.json")
  lm_json "$E2E_DIR/t1.json" status tbase --vm-manager tart --tart "$tart"
  expect_rc 0 "$E2E_DIR/t1.json"
  lm_json "$E2E_DIR/t2.json" status tci-1 --vm-manager tart --tart "$tart"
  expect_rc 0 "$E2E_DIR/t2.json"
  [ "$(jq -r '.vms[0].vm_id' "$E2E_DIR/t1.json")" = "$(jq -r '.vms[0].vm_id' "$E2E_DIR/t2.json")" ] ||
    fail "a Tart clone has an identity of its own: $(cat "$E2E_DIR/t1.json" "$E2E_DIR/t2.json")"
  jq_is "$E2E_DIR/t2.json" '.vms[0].vm_id | startswith("sha256:")' true
  lm_json "$E2E_DIR/n.json" status ci-1 --vm-manager none --address 127.0.0.1
  jq -r '.vms[0].vm_id_unreadable' "$E2E_DIR/n.json" | grep -q 'knows only its address' || fail "no reason: $(cat "$E2E_DIR/n.json")"
}

name=${1:?usage: ephemeral.sh NAME}
"scenario_$name"
check_guest_shells
echo "e2e $name: passed"
