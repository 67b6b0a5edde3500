#!/usr/bin/env bash
# End-to-end scenarios about concurrency, failures and interruptions: flow_scenarios.sh NAME.
# Like scenarios.sh, each starts its own simulator and state (docs/testing.md). Nothing here is
# ordered by sleeping: a test waits for the condition it needs (a process stopped at a step, a
# line in a log, a process gone).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

STATE_FILE="$LUME_METAL_STATE_DIR/state.json"

# wait_stopped PID: the process has stopped itself (LUME_METAL_TEST_STOP_AT) and holds what it
# holds at that step.
wait_stopped() {
  local state
  for _ in $(seq 1 1200); do
    state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null || echo gone)
    [ "$state" = T ] && return 0
    [ "$state" = gone ] && fail "process $1 ended before reaching its stop point"
    sleep 0.05
  done
  fail "process $1 never reached its stop point"
}

# wait_line FILE REGEX: a line matching REGEX appears in FILE.
wait_line() {
  for _ in $(seq 1 1200); do
    grep -Eq "$2" "$1" 2>/dev/null && return 0
    sleep 0.05
  done
  fail "no line matching '$2' in $1: $(cat "$1")"
}

# wait_rc PID: wait for a background lume-metal; its exit status in RC.
wait_rc() { set +e; wait "$1"; RC=$?; set -e; }

journal_vms() { if [ -f "$STATE_FILE" ]; then jq -r '.vms | keys[]' "$STATE_FILE"; fi; }
journal_status() { if [ -f "$STATE_FILE" ]; then jq -r --arg n "$1" '.vms[$n].status // "absent"' "$STATE_FILE"; else echo absent; fi; }

# The guest's installed bundle matches the host's manifest, file by file (read on the guest's
# disk, independently of lume-metal).
bundle_verified() {
  local base; base="$(guest_home "$1")/.local/share/lume-metal"
  local id; id=$(jq -r .bundle_id "$LM_BUNDLE_DIR/manifest.json")
  [ "$(readlink "$base/current" 2>/dev/null)" = "$id" ] || return 1
  cmp -s "$LM_BUNDLE_DIR/manifest.json" "$base/$id/manifest.json" || return 1
  jq -r '.files[] | "\(.sha256)  \(.name)"' "$LM_BUNDLE_DIR/manifest.json" | (cd "$base/$id" && sha256sum -c --quiet - >/dev/null 2>&1)
}

# A preference with a value of its own before lume-metal, so that "restored" is a real check.
set_prior_preference() {
  cat >"$E2E_DIR/prior.xml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0"><dict>
<key>ForceUnrestrictedDeviceFeatureLevel</key><false/>
<key>Other</key><integer>7</integer>
</dict></plist>
XML
  plistutil -i "$E2E_DIR/prior.xml" -o "$PLIST" -f bin
  ORIGINAL=$(plist_xml)
}

# The invariant of the journal, the preference and the guests, after everything has finished:
# the preference is at its original value exactly when no VM is enabled, every VM the journal
# calls enabled has its bundle installed and verified, and nothing is left half-way.
check_invariant() { # WHEN
  local enabled=0 vm status
  for vm in $(journal_vms); do
    status=$(journal_status "$vm")
    [ "$status" = enabled ] || fail "$1: $vm is '$status' in the journal after every process finished: $(cat "$STATE_FILE")"
    enabled=$((enabled + 1))
    bundle_verified "$vm" || fail "$1: the journal says $vm is enabled, but its bundle is not installed and verified"
    [ -z "$(find "$(guest_home "$vm")/.local/share/lume-metal" -maxdepth 1 -name '.staging-*')" ] ||
      fail "$1: staging directories left in $vm"
  done
  if [ $enabled -eq 0 ]; then
    [ "$(plist_xml)" = "$ORIGINAL" ] || fail "$1: no VM is enabled, but the preference is not at its original value: $(plist_xml)"
    [ "$(jq -r 'has("preference")' "$STATE_FILE")" = false ] || fail "$1: no VM is enabled, but a change is recorded"
  else
    [ "$(plist_xml)" != "$ORIGINAL" ] || fail "$1: $enabled VMs are enabled, but the preference is at its original value"
    plist_xml | tr -d ' \t\n' | grep -q '<key>ForceUnrestrictedDeviceFeatureLevel</key><true/>' ||
      fail "$1: $enabled VMs are enabled, but the preference is not set: $(plist_xml)"
  fi
}

# 8 processes, each an enable or a rollback of one of 4 VMs, all at once; 20 rounds. Every
# operation succeeds (a second one on the same VM waits for the first), and after each round
# the invariant holds. The operations come from a fixed seed, so every run does the same set;
# only the interleaving varies. Rounds 1, 6, 11, 16 are two enables of every VM at once, rounds
# 5, 10, 15, 20 two rollbacks of every VM (so that "none enabled" is checked too).
scenario_concurrent() {
  sim_start --vm vm1 --vm vm2 --vm vm3 --vm vm4 --max-running 4
  set_prior_preference
  local round p vm action pids ops extra rounds=${LM_STRESS_ROUNDS:-20}
  RANDOM=20261130
  for ((round = 1; round <= rounds; round++)); do
    pids=() ops=()
    for ((p = 0; p < 8; p++)); do
      if ((round % 5 == 1)); then
        vm=vm$((p % 4 + 1)) action=enable      # two enables of every VM at once
      elif ((round % 5 == 0)); then
        vm=vm$((p % 4 + 1)) action=rollback    # two rollbacks of every VM at once: none left
      else
        vm=vm$((RANDOM % 4 + 1))
        if ((RANDOM % 2)); then action=enable; else action=rollback; fi
      fi
      # --no-restart: running VMs stay running, so that the rounds spend their time on the
      # operations under test rather than on restarting guests.
      extra=()
      [ $action = enable ] || extra=(--no-restart)
      "$LM_BIN" "$action" "$vm" --timeout 120 "${extra[@]}" >"$E2E_DIR/op$p.out" 2>&1 &
      pids+=($!) ops+=("$action $vm")
    done
    for ((p = 0; p < 8; p++)); do
      wait_rc "${pids[$p]}"
      [ "$RC" -eq 0 ] || fail "round $round: '${ops[$p]}' exited $RC: $(cat "$E2E_DIR/op$p.out")"
    done
    check_invariant "round $round (${ops[*]})"
    note "round $round: ${ops[*]}; enabled: $(journal_vms | tr '\n' ' ')"
  done
  lm_json "$E2E_DIR/r.json" rollback --all
  expect_rc 0 "$E2E_DIR/r.json"
  check_invariant "after rollback --all"
}

# One operation at a time per VM: while an enable holds vm1 (stopped at a step), a second one
# with --no-wait fails at once naming the holder; a rollback without it says it waits, then runs
# once the enable is done. Another VM is not held up.
scenario_vm_lock() {
  sim_start --vm vm1 --vm vm2
  LUME_METAL_TEST_STOP_AT=after-preference "$LM_BIN_HOOKS" enable vm1 >"$E2E_DIR/e1.out" 2>&1 &
  local holder=$!
  wait_stopped $holder
  lm_json "$E2E_DIR/busy.json" enable vm1 --no-wait
  expect_rc 1 "$E2E_DIR/busy.json"
  jq -r '.vms[0].message' "$E2E_DIR/busy.json" | grep -q "VM 'vm1' is busy: another lume-metal process (pid $holder, enable)" ||
    fail "no-wait: $(cat "$E2E_DIR/busy.json")"
  [ "$(journal_status vm1)" = enabling ] || fail "the busy enable changed the journal"
  lm_json "$E2E_DIR/other.json" enable vm2 --no-wait
  expect_rc 0 "$E2E_DIR/other.json"
  "$LM_BIN" rollback vm1 >"$E2E_DIR/r1.out" 2>"$E2E_DIR/r1.err" &
  local waiter=$!
  wait_line "$E2E_DIR/r1.err" "^vm1: another lume-metal process \(pid $holder, enable\) is working on this VM; waiting for it to finish$"
  kill -0 $waiter 2>/dev/null || fail "the rollback did not wait: $(cat "$E2E_DIR/r1.out" "$E2E_DIR/r1.err")"
  kill -CONT $holder
  wait_rc $holder
  [ "$RC" -eq 0 ] || fail "the held enable failed ($RC): $(cat "$E2E_DIR/e1.out")"
  wait_rc $waiter
  [ "$RC" -eq 0 ] || fail "the waiting rollback failed ($RC): $(cat "$E2E_DIR/r1.out" "$E2E_DIR/r1.err")"
  grep -qx "vm1: rolled back.*" "$E2E_DIR/r1.out" || fail "rollback: $(cat "$E2E_DIR/r1.out")"
  [ "$(journal_status vm1)" = absent ] || fail "vm1 still in the journal"
  [ ! -e "$(guest_home vm1)/.local/share/lume-metal" ] || fail "vm1's guest files left"
  [ "$(journal_status vm2)" = enabled ] || fail "vm2 lost its entry"
}

# A bad --bundle is refused before any VM is touched: no start, no preference change.
scenario_bad_bundle_first() {
  sim_start --vm vm1
  cp -r "$LM_BUNDLE_DIR" "$E2E_DIR/bundle"
  printf 'tampered' >>"$E2E_DIR/bundle/$(jq -r .shim "$E2E_DIR/bundle/manifest.json")"
  lm_json "$E2E_DIR/e.json" enable vm1 --bundle "$E2E_DIR/bundle"
  expect_rc 1 "$E2E_DIR/e.json"
  jq -r '.vms[0].message' "$E2E_DIR/e.json" | grep -q "does not match its manifest" || fail "$(cat "$E2E_DIR/e.json")"
  [ "$(count_requests POST /run)" -eq 0 ] || fail "the VM was started for a bad bundle"
  [ "$(vm_status vm1)" = stopped ] || fail "vm1 is $(vm_status vm1)"
  [ ! -e "$PLIST" ] || fail "the preference was written"
  [ "$(journal_vms | wc -l)" -eq 0 ] || fail "journal: $(cat "$STATE_FILE")"
  lm_json "$E2E_DIR/e2.json" enable vm1 --bundle "$E2E_DIR/no-such-bundle"
  expect_rc 1 "$E2E_DIR/e2.json"
  [ "$(count_requests POST /run)" -eq 0 ] || fail "the VM was started for a missing bundle"
}

# A stopped VM that enable started is stopped again when the run fails (here: never ready).
scenario_timeout_stops_again() {
  sim_start --vm vm1 --never-ready vm1
  lm_json "$E2E_DIR/e.json" enable vm1 --timeout 1
  expect_rc 1 "$E2E_DIR/e.json"
  jq -r '.vms[0].message' "$E2E_DIR/e.json" | grep -q "VM stopped again (it was stopped)" || fail "$(cat "$E2E_DIR/e.json")"
  [ "$(vm_status vm1)" = stopped ] || fail "vm1 left $(vm_status vm1)"
  [ ! -e "$PLIST" ] || fail "preference left"
}

# Apple's limit of two running macOS VMs (reference/lume.md): Lume answers the third start 202
# (`lume run --detach` exits 0), fails it in the background, and the VM stays stopped; GET
# /lume/host/status says available_slots 0. The enable ends at the answers that show it, naming
# that cause (not at its --timeout, blaming the boot), and leaves everything as it was: the
# preference at its value from before, no guest files, nothing recorded, the two other VMs running.
limit_setup() {
  sim_start --vm vm1 --vm vm2 --vm vm3
  set_prior_preference
  vm_run vm2
  vm_run vm3
  curl -fsS "$LUME_METAL_LUME_URL/lume/host/status" | jq -e '.available_slots == 0' >/dev/null ||
    fail "the simulator does not say the host is full: $(curl -fsS "$LUME_METAL_LUME_URL/lume/host/status")"
}
limit_nothing_changed() {
  [ "$(sim_events start-failed vm1)" -ge 1 ] || fail "the simulator did not fail vm1's start at the limit: $(cat "$SIM_LOG")"
  [ "$(vm_status vm1)" = stopped ] || fail "vm1 is $(vm_status vm1)"
  [ "$(vm_status vm2)" = running ] && [ "$(vm_status vm3)" = running ] || fail "the other VMs did not stay running"
  [ "$(plist_xml)" = "$ORIGINAL" ] || fail "the preference was not restored: $(plist_xml)"
  [ ! -e "$(guest_home vm1)/.local/share/lume-metal" ] || fail "guest files left in vm1"
  [ "$(journal_status vm1)" = absent ] || fail "vm1 is '$(journal_status vm1)' in the journal: $(cat "$STATE_FILE")"
}

scenario_vm_limit() {
  limit_setup
  set +e; "$LM_BIN" enable vm1 --timeout 120 >"$E2E_DIR/e.out" 2>&1; LM_RC=$?; set -e
  [ "$LM_RC" -eq 1 ] || fail "exit $LM_RC: $(cat "$E2E_DIR/e.out")"
  grep -q "vm1: still stopped after lume-api accepted its start: Lume runs its maximum of 2 VMs (GET /lume/host/status: vm_count 2, max_vms 2, available_slots 0; .*); stop another VM, then start this one again; host preference restored" \
    "$E2E_DIR/e.out" || fail "the message does not name the host's limit: $(cat "$E2E_DIR/e.out")"
  grep -q "^hint: .*stop one you do not need" "$E2E_DIR/e.out" || fail "hint: $(cat "$E2E_DIR/e.out")"
  [ "$(count_requests POST /lume/vms/vm1/run)" -eq 1 ] || fail "vm1 was started $(count_requests POST /lume/vms/vm1/run) times"
  limit_nothing_changed
  lm_json "$E2E_DIR/e.json" enable vm1 --timeout 120
  expect_rc 1 "$E2E_DIR/e.json"
  jq_is "$E2E_DIR/e.json" '.vms[0].error.code' error
  limit_nothing_changed
}

# The same through Lume's CLI, which has no host status: `lume ls` shows the two running VMs.
scenario_vm_limit_cli() {
  limit_setup
  lm_json "$E2E_DIR/e.json" enable vm1 --timeout 120 --vm-manager lume-cli --lume "$(jq -r .lume "$E2E_DIR/sim.json")"
  expect_rc 1 "$E2E_DIR/e.json"
  jq -r '.vms[0].message' "$E2E_DIR/e.json" |
    grep -q "^vm1: still stopped after lume-cli accepted its start: .lume ls. shows 2 VMs running (vm2, vm3): Apple's limit of 2 macOS VMs per host, no slot available; stop another VM" ||
    fail "the message does not name the host's limit: $(cat "$E2E_DIR/e.json")"
  limit_nothing_changed
}

# asked_after_run VM: the request log has a GET of VM answered after Lume accepted its start (the
# simulator's VM runs from its start on, so that answer said "running").
asked_after_run() {
  jq -s --arg vm "$1" '(map(.method == "POST" and .path == "/lume/vms/\($vm)/run") | index(true)) as $i |
    $i != null and (.[$i + 1:] | any(.method == "GET" and .path == "/lume/vms/\($vm)" and .status == 200))' \
    "$SIM_LOG" | grep -qx true
}

# Someone stops the VM while enable waits for it to be ready (its guest never gets an address, so
# the wait is still going when the stop comes; in the field, a person, another program or the late
# stop of a killed lume-metal): the wait ends at the first "stopped" after Lume had said "running",
# saying so, and the enable is undone.
scenario_stopped_during_wait() {
  sim_start --vm vm1 --never-ready vm1
  set_prior_preference
  "$LM_BIN" enable vm1 --timeout 120 --format json >"$E2E_DIR/e.json" 2>"$E2E_DIR/e.err" &
  local pid=$!
  wait_for 120 "the enable did not ask for vm1 after starting it: $(cat "$E2E_DIR/e.err")" asked_after_run vm1
  curl -fsS -X POST "$LUME_METAL_LUME_URL/lume/vms/vm1/stop" >/dev/null
  wait_rc $pid
  [ "$RC" -eq 1 ] || fail "exit $RC: $(cat "$E2E_DIR/e.json" "$E2E_DIR/e.err")"
  jq_is "$E2E_DIR/e.json" '.vms[0].error.code' not-running
  jq -r '.vms[0].message' "$E2E_DIR/e.json" |
    grep -q "^vm1: stopped while waiting for it to be ready: lume-api said running, then stopped (something stopped the VM, or its process ended); nothing starts it again by itself; host preference restored" ||
    fail "the message does not say the VM was stopped: $(cat "$E2E_DIR/e.json")"
  [ "$(vm_status vm1)" = stopped ] || fail "vm1 is $(vm_status vm1)"
  [ "$(plist_xml)" = "$ORIGINAL" ] || fail "the preference was not restored: $(plist_xml)"
  [ ! -e "$(guest_home vm1)/.local/share/lume-metal" ] || fail "guest files left in vm1"
  [ "$(journal_status vm1)" = absent ] || fail "vm1 is '$(journal_status vm1)' in the journal: $(cat "$STATE_FILE")"
}

# SIGINT and SIGTERM are handled like a failure: undo, then one line saying what was left, then
# the process ends by that signal. Each is sent while the process is stopped at a known step.
scenario_interrupt() {
  sim_start --vm vm1
  local pid lines
  # After the VM was started: it is stopped again, the preference restored, nothing recorded.
  LUME_METAL_TEST_STOP_AT=after-start "$LM_BIN_HOOKS" enable vm1 >"$E2E_DIR/i1.out" 2>"$E2E_DIR/i1.err" &
  pid=$!
  wait_stopped $pid
  [ "$(vm_status vm1)" = running ] || fail "the VM was not started at that step"
  kill -INT $pid
  kill -CONT $pid
  wait_rc $pid
  [ "$RC" -eq 130 ] || fail "SIGINT: exit $RC, expected 130 (ended by SIGINT): $(cat "$E2E_DIR/i1.out" "$E2E_DIR/i1.err")"
  lines=$(grep -c '^lume-metal: interrupted' "$E2E_DIR/i1.err" || true)
  [ "$lines" -eq 1 ] || fail "SIGINT: expected one line on what was left: $(cat "$E2E_DIR/i1.err")"
  grep -q '^lume-metal: interrupted by SIGINT: vm1: [a-z-]*: canceled before the next step; host preference restored (absent file); VM stopped again (it was stopped)$' \
    "$E2E_DIR/i1.err" || fail "SIGINT: $(cat "$E2E_DIR/i1.err")"
  [ "$(vm_status vm1)" = stopped ] || fail "SIGINT: vm1 left $(vm_status vm1)"
  [ ! -e "$PLIST" ] || fail "SIGINT: preference left"
  [ "$(journal_vms | wc -l)" -eq 0 ] || fail "SIGINT: journal: $(cat "$STATE_FILE")"

  # During the upload: the guest files go too.
  LUME_METAL_TEST_STOP_AT=install-upload "$LM_BIN_HOOKS" enable vm1 --format json >"$E2E_DIR/i2.json" 2>"$E2E_DIR/i2.err" &
  pid=$!
  wait_stopped $pid
  [ -n "$(find "$(guest_home vm1)/.local/share/lume-metal" -name '.staging-*')" ] || fail "no upload under way at that step"
  kill -TERM $pid
  kill -CONT $pid
  wait_rc $pid
  [ "$RC" -eq 143 ] || fail "SIGTERM: exit $RC, expected 143: $(cat "$E2E_DIR/i2.err")"
  jq -e . "$E2E_DIR/i2.json" >/dev/null || fail "SIGTERM: no JSON document: $(cat "$E2E_DIR/i2.json")"
  jq_is "$E2E_DIR/i2.json" '.vms[0].error.code' canceled
  grep -q '^lume-metal: interrupted by SIGTERM: vm1: .*canceled[^;]*; guest files removed; host preference restored (absent file); VM stopped again (it was stopped)$' \
    "$E2E_DIR/i2.err" || fail "SIGTERM: $(cat "$E2E_DIR/i2.err")"
  [ ! -e "$(guest_home vm1)/.local/share/lume-metal" ] || fail "SIGTERM: guest files left"
  [ "$(vm_status vm1)" = stopped ] || fail "SIGTERM: vm1 left $(vm_status vm1)"
  [ ! -e "$PLIST" ] || fail "SIGTERM: preference left"

  # Still converges: enable then works.
  lm_json "$E2E_DIR/e.json" enable vm1
  expect_rc 0 "$E2E_DIR/e.json"
}

# probe on a stopped VM: a failure (exit 1) that says what to do, not "guest unsupported" (4).
scenario_probe_stopped() {
  sim_start --vm vm1
  lm_json "$E2E_DIR/e.json" enable vm1
  expect_rc 0 "$E2E_DIR/e.json"
  curl -fsS -X POST "$LUME_METAL_LUME_URL/lume/vms/vm1/stop" >/dev/null
  set +e; "$LM_BIN" probe vm1 >"$E2E_DIR/p.out" 2>&1; LM_RC=$?; set -e
  [ "$LM_RC" -eq 1 ] || fail "probe of a stopped VM: exit $LM_RC: $(cat "$E2E_DIR/p.out")"
  grep -q "vm1 is stopped, not running" "$E2E_DIR/p.out" || fail "probe: $(cat "$E2E_DIR/p.out")"
  grep -q "^hint: start the VM, or run .lume-metal enable vm1., which starts it$" "$E2E_DIR/p.out" || fail "probe hint: $(cat "$E2E_DIR/p.out")"
  lm_json "$E2E_DIR/p.json" probe vm1
  expect_rc 1 "$E2E_DIR/p.json"
}

# journal_edit FILTER: another process's change to the journal, made as lume-metal makes its own
# (under the journal's lock, replaced by a rename).
journal_edit() {
  flock "$LUME_METAL_STATE_DIR/state.lock" sh -c 'jq "$1" "$2" >"$2.edit" && chmod 600 "$2.edit" && mv "$2.edit" "$2"' \
    journal_edit "$1" "$STATE_FILE"
}

# enable_over_edit STEP OUT FILTER [CHECK]: enable vm1, stopped at STEP (where CHECK, a jq test of
# the journal, holds), meets FILTER's change of the journal, and refuses to record over it.
enable_over_edit() {
  LUME_METAL_TEST_STOP_AT=$1 "$LM_BIN_HOOKS" enable vm1 --format json >"$E2E_DIR/$2.json" 2>"$E2E_DIR/$2.err" &
  local holder=$!
  wait_stopped $holder
  [ -z "${4:-}" ] || jq -e "$4" "$STATE_FILE" >/dev/null || fail "at $1, not $4: $(cat "$STATE_FILE")"
  journal_edit "$3"
  kill -CONT $holder
  wait_rc $holder
  [ "$RC" -eq 1 ] || fail "the enable recorded over the journal's change $3 ($RC): $(cat "$E2E_DIR/$2.json" "$E2E_DIR/$2.err")"
  jq -r '.vms[0].message' "$E2E_DIR/$2.json" | grep -q "the state journal's entry for vm1 changed while this enable ran" ||
    fail "$(cat "$E2E_DIR/$2.json")"
}

# An enable records nothing over an entry that something else changed while it ran
# (docs/state-format.md, "Locks"): for a VM being enabled, the entry no longer carries this run's
# mark; for an enabled VM, which a re-enable leaves unmarked, the entry is no longer the one step 1
# read. A re-enable that changes nothing there does not write the journal then (no save, no fsync).
scenario_entry_changed() {
  sim_start --vm vm1
  lm_json "$E2E_DIR/e.json" enable vm1
  expect_rc 0 "$E2E_DIR/e.json"
  note "a re-enable that changes nothing writes the journal once, at its record"
  LUME_METAL_TRACE="$E2E_DIR/a.trace" lm_json "$E2E_DIR/a.json" enable vm1
  expect_rc 0 "$E2E_DIR/a.json"
  jq_is "$E2E_DIR/a.json" '.vms[0].message' "vm1: already enabled, verified"
  [ "$(awk '$5 == "journal-unchanged"' "$E2E_DIR/a.trace" | wc -l)" -eq 1 ] &&
    [ "$(awk '$5 == "journal-save"' "$E2E_DIR/a.trace" | wc -l)" -eq 1 ] ||
    fail "expected one unchanged journal (step 1) and one save (the record): $(cat "$E2E_DIR/a.trace")"
  jq -e '.vms.vm1 | has("enable_run") | not' "$STATE_FILE" >/dev/null || fail "an enabled VM was marked: $(cat "$STATE_FILE")"

  note "an enabled VM's entry changed while a re-enable ran: nothing is recorded over it"
  enable_over_edit after-preference h '.vms.vm1.address = "192.0.2.7"'
  jq -r '.vms[0].message' "$E2E_DIR/h.json" | grep -q "the previous installation is kept" || fail "$(cat "$E2E_DIR/h.json")"
  jq_is "$STATE_FILE" '.vms.vm1.address' "192.0.2.7"
  [ "$(journal_status vm1)" = enabled ] || fail "vm1 is $(journal_status vm1)"
  bundle_verified vm1 || fail "vm1's installed bundle is not the manifest's"

  note "a VM being enabled whose entry went meanwhile: nothing is recorded, its guest files go"
  lm_json "$E2E_DIR/r.json" rollback vm1
  expect_rc 0 "$E2E_DIR/r.json"
  enable_over_edit after-install n 'del(.vms.vm1)' '.vms.vm1.enable_run | length == 32'
  [ "$(journal_status vm1)" = absent ] || fail "vm1 is $(journal_status vm1)"
  [ ! -e "$(guest_home vm1)/.local/share/lume-metal" ] || fail "vm1's guest files left"
}

# rollback --all --dry-run shows the plan the real run then carries out, step by step.
scenario_rollback_all_dry_run() {
  sim_start --vm vm1 --vm vm2
  lm_json "$E2E_DIR/e.json" enable vm1 vm2
  expect_rc 0 "$E2E_DIR/e.json"
  local plan='[.vms[] | {vm: .name, steps: [.steps[] | {name, detail: (.detail | sub("^would restore"; "restored") |
    sub("^would restart"; "restarted") | sub("^would remove"; "removed") |
    sub("^removed [^~]* of ~/"; "removed ~/"))}]}]'  # the run counts what it removed; the plan cannot
  lm_json "$E2E_DIR/dry.json" rollback --all --dry-run
  expect_rc 0 "$E2E_DIR/dry.json"
  jq_is "$E2E_DIR/dry.json" '[.vms[].steps[] | select(.name == "host-preference") | .detail] | join(" / ")' \
    "kept: other VMs are still enabled / would restore to absent file"
  [ -e "$PLIST" ] && [ "$(journal_vms | wc -l)" -eq 2 ] || fail "the dry run changed something"
  lm_json "$E2E_DIR/real.json" rollback --all
  expect_rc 0 "$E2E_DIR/real.json"
  [ "$(jq -c "$plan" "$E2E_DIR/dry.json")" = "$(jq -c "$plan" "$E2E_DIR/real.json")" ] ||
    fail "the dry run's plan differs from what the run did:
plan: $(jq -c "$plan" "$E2E_DIR/dry.json")
done: $(jq -c "$plan" "$E2E_DIR/real.json")"
}

# A fleet's first round meets before the preference step (issue 28): one journal transaction
# for every VM's preference step instead of one each, and each VM seen running before the
# preference changed, so that none is asked its boot time on a connection of its own before its
# restart (its trace: one SSH connection per VM). A VM another process holds does not hold up the
# others: they are enabled while it waits.
scenario_fleet_gate() {
  sim_start --vm vm1 --vm vm2 --vm vm3 --max-running 3
  vm_run vm1; vm_run vm2; vm_run vm3
  set +e
  LUME_METAL_TRACE="$E2E_DIR/fleet.trace" "$LM_BIN" enable vm1 vm2 vm3 --jobs 3 --format json >"$E2E_DIR/f.json" 2>"$E2E_DIR/f.err"
  LM_RC=$?
  set -e
  expect_rc 0 "$E2E_DIR/f.json"
  jq_is "$E2E_DIR/f.json" '[.vms[].restarted] | all' true
  jq_is "$E2E_DIR/f.json" '[.vms[].steps[] | select(.name == "host-preference") | .detail | test(" set to ")] | sort | map(tostring) | join(",")' \
    'false,false,true'
  local n
  n=$(awk '$5 == "journal-held"' "$E2E_DIR/fleet.trace" | wc -l)
  [ "$n" -eq 4 ] || fail "expected 4 journal transactions (the first round's one, then each VM's record), saw $n:
$(cat "$E2E_DIR/fleet.trace")"
  for vm in vm1 vm2 vm3; do
    n=$(awk -v vm=$vm '$4 == vm && $5 == "ssh-connect"' "$E2E_DIR/fleet.trace" | wc -l)
    [ "$n" -eq 1 ] || fail "$vm: $n SSH connections, expected 1 (after its restart only)"
  done
  lm_json "$E2E_DIR/r.json" rollback --all --no-restart
  expect_rc 0 "$E2E_DIR/r.json"

  note "a VM that fails before the gate (no such VM) leaves it: the others go on"
  lm_json "$E2E_DIR/n.json" enable vm1 nosuch --jobs 2
  expect_rc 3 "$E2E_DIR/n.json"
  jq_is "$E2E_DIR/n.json" '.vms[] | select(.vm == "vm1") | .error' null
  jq_is "$E2E_DIR/n.json" '.vms[] | select(.vm == "nosuch") | .error.code' not-found
  # Its own message, also when its worker is the last at the gate and makes the transaction.
  jq -r '.vms[] | select(.vm == "nosuch") | .message' "$E2E_DIR/n.json" | grep -q "Virtual machine not found: nosuch" ||
    fail "nosuch's message: $(cat "$E2E_DIR/n.json")"
  lm_json "$E2E_DIR/r.json" rollback --all --no-restart
  expect_rc 0 "$E2E_DIR/r.json"

  note "a VM held by another process: the rest of the first round goes on without it"
  LUME_METAL_TEST_STOP_AT=after-preference "$LM_BIN_HOOKS" enable vm3 >"$E2E_DIR/h.out" 2>&1 &
  local holder=$!
  wait_stopped $holder
  "$LM_BIN" enable vm1 vm2 vm3 --jobs 3 >"$E2E_DIR/g.out" 2>"$E2E_DIR/g.err" &
  local fleet=$!
  # A fleet says a lock's wait at once, as its wait line (its informational lines are --verbose's,
  # issue 50).
  wait_line "$E2E_DIR/g.err" "^vm3: wait-lock: waiting \([0-9]+ s so far\): another lume-metal process \(pid $holder, enable\) is working on this VM$"
  both_enabled() { [ "$(journal_status vm1)" = enabled ] && [ "$(journal_status vm2)" = enabled ]; }
  wait_for 120 "vm1 and vm2 were not enabled while vm3 was held: $(cat "$E2E_DIR/g.err")" both_enabled
  kill -0 $holder 2>/dev/null && [ "$(awk '{print $3}' "/proc/$holder/stat")" = T ] ||
    fail "the holder was not stopped while vm1 and vm2 were enabled"
  kill -CONT $holder
  wait_rc $holder
  [ "$RC" -eq 0 ] || fail "the held enable failed ($RC): $(cat "$E2E_DIR/h.out")"
  wait_rc $fleet
  [ "$RC" -eq 0 ] || fail "the fleet failed ($RC): $(cat "$E2E_DIR/g.out" "$E2E_DIR/g.err")"
  for vm in vm1 vm2 vm3; do [ "$(journal_status $vm)" = enabled ] || fail "$vm is $(journal_status $vm)"; done
}

# The guest's lume-metal folder, file by file (type, mode, size, content).
guest_files() {
  local d; d="$(guest_home "$1")/.local/share/lume-metal"
  if [ -e "$d" ]; then (cd "$d" && find . -printf '%y %m %s %P %l\n' -type f -exec sha256sum {} + | sort); else echo absent; fi
}

# A journal that cannot be written (the state directory's disk full, issue 49; the hook fails the
# run's Nth journal write and every later one with ENOSPC): rollback records its intent in the
# journal before it touches the guest or the preference. When that write fails, nothing changed:
# the journal, the guest's files and the preference are exactly as they were. When the intent was
# written but the journal's last write fails (the guest's files removed, the preference restored),
# the journal says the rollback is under way -- status says so, never "enabled" -- and the next
# rollback, the disk fine again, finishes it: journal, guest and preference all as before enable.
scenario_rollback_journal_full() {
  : "${LM_BIN_HOOKS:?LM_BIN_HOOKS: lume-metal built with the test hooks}"
  sim_start --vm vm1
  set_prior_preference
  vm_run vm1
  lm_json "$E2E_DIR/e.json" enable vm1
  expect_rc 0 "$E2E_DIR/e.json"
  local journal guest enabled_pref
  journal=$(cat "$STATE_FILE")
  guest=$(guest_files vm1)
  enabled_pref=$(plist_xml)

  note "the intent cannot be written: nothing changes"
  set +e
  LUME_METAL_TEST_JOURNAL_FULL_AT=1 "$LM_BIN_HOOKS" rollback vm1 --format json >"$E2E_DIR/r1.json" 2>"$E2E_DIR/r1.json.err"
  LM_RC=$?
  set -e
  expect_rc 1 "$E2E_DIR/r1.json"
  jq -r '.vms[0].message' "$E2E_DIR/r1.json" |
    grep -q "^vm1: nothing was rolled back: .*/state.json: cannot write: No space left on device (the file is unchanged)$" ||
    fail "the intent's failure: $(cat "$E2E_DIR/r1.json")"
  jq -r '.error.hint' "$E2E_DIR/r1.json" | grep -q "make room on the state directory's disk" || fail "hint: $(cat "$E2E_DIR/r1.json")"
  [ "$(cat "$STATE_FILE")" = "$journal" ] || fail "the journal changed: $(cat "$STATE_FILE")"
  [ "$(guest_files vm1)" = "$guest" ] || fail "the guest's files changed: $(diff <(echo "$guest") <(guest_files vm1))"
  [ "$(plist_xml)" = "$enabled_pref" ] || fail "the preference changed: $(plist_xml)"
  [ "$(vm_status vm1)" = running ] || fail "vm1 is $(vm_status vm1)"

  note "the intent written, the journal's last write fails"
  set +e
  LUME_METAL_TEST_JOURNAL_FULL_AT=2 "$LM_BIN_HOOKS" rollback vm1 >"$E2E_DIR/r2.out" 2>"$E2E_DIR/r2.err"
  LM_RC=$?
  set -e
  expect_rc 1 "$E2E_DIR/r2.out"
  grep -q "^lume-metal: vm1: .*/state.json: cannot write: No space left on device (the file is unchanged); the guest's files are removed and the host preference restored, but the rollback did not finish: the journal says it is under way, and the next rollback finishes it$" \
    "$E2E_DIR/r2.err" || fail "the last write's failure: $(cat "$E2E_DIR/r2.out" "$E2E_DIR/r2.err")"
  grep -q "^hint: .*run .lume-metal rollback vm1. again: it finishes what was begun$" "$E2E_DIR/r2.err" ||
    fail "hint: $(cat "$E2E_DIR/r2.err")"
  [ "$(journal_status vm1)" = rolling-back ] || fail "vm1 is '$(journal_status vm1)' in the journal: $(cat "$STATE_FILE")"
  [ "$(guest_files vm1)" = absent ] || fail "the guest's files are left: $(guest_files vm1)"
  [ "$(plist_xml)" = "$ORIGINAL" ] || fail "the preference is not restored: $(plist_xml)"
  lm_json "$E2E_DIR/s.json" status vm1
  expect_rc 0 "$E2E_DIR/s.json"
  jq_is "$E2E_DIR/s.json" '.vms[0] | "\(.enabled) \(.rolling_back)"' "false true"
  jq -r '.vms[0].message' "$E2E_DIR/s.json" | grep -q "^vm1: rolling back: a rollback began and did not finish" ||
    fail "status: $(cat "$E2E_DIR/s.json")"
  lm status vm1 >"$E2E_DIR/s.txt" 2>&1 || fail "status: $(cat "$E2E_DIR/s.txt")"
  grep -q "^vm1: rolling back, unfinished (.*\`lume-metal rollback vm1\` finishes it)$" "$E2E_DIR/s.txt" ||
    fail "status: $(cat "$E2E_DIR/s.txt")"

  lm_json "$E2E_DIR/d.json" doctor vm1
  jq -r '.checks[] | select(.vm == "vm1" and .check == "bundle") | "\(.level) \(.message)"' "$E2E_DIR/d.json" |
    grep -q "^warn not enabled: a rollback began and did not finish" || fail "doctor: $(cat "$E2E_DIR/d.json")"

  note "an enable of a VM whose rollback did not finish enables it afresh"
  lm_json "$E2E_DIR/e2.json" enable vm1
  expect_rc 0 "$E2E_DIR/e2.json"
  [ "$(journal_status vm1)" = enabled ] || fail "vm1 is '$(journal_status vm1)' in the journal"
  bundle_verified vm1 || fail "vm1's bundle is not installed and verified"
  [ "$(plist_xml)" = "$enabled_pref" ] || fail "the preference is not set: $(plist_xml)"
  set +e
  LUME_METAL_TEST_JOURNAL_FULL_AT=2 "$LM_BIN_HOOKS" rollback vm1 >"$E2E_DIR/r4.out" 2>"$E2E_DIR/r4.err"
  LM_RC=$?
  set -e
  expect_rc 1 "$E2E_DIR/r4.out"
  [ "$(journal_status vm1)" = rolling-back ] || fail "vm1 is '$(journal_status vm1)' in the journal: $(cat "$STATE_FILE")"

  note "the next rollback finishes it"
  lm_json "$E2E_DIR/r3.json" rollback vm1
  expect_rc 0 "$E2E_DIR/r3.json"
  jq_is "$E2E_DIR/r3.json" '.vms[0].message' "vm1: rolled back"
  jq_is "$STATE_FILE" '"\(.vms | length) \(has("preference"))"' "0 false"
  [ "$(guest_files vm1)" = absent ] || fail "the guest's files are left: $(guest_files vm1)"
  [ "$(plist_xml)" = "$ORIGINAL" ] || fail "the preference is not the original: $(plist_xml)"
}

name=${1:?usage: flow_scenarios.sh NAME}
"scenario_$name"
echo "e2e $name: passed"
