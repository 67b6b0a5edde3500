#!/usr/bin/env bash
# `lume-metal local` (issue 27) on this machine's own bundle, no simulator: the machine is made a
# guest the way the simulator makes one (guest-sshd machine: the macOS stand-ins first on PATH,
# the fake Metal and its level), and lume-metal runs on it directly. local.sh SCENARIO.
#   local_unlocked   probe --exercise at the unlocked level: the kernels run; --require-exercise passes
#   local_stock      the stock level: the answers hold, the kernels do not run; --require-exercise exits 4
#   local_refusing   a runner image whose device refuses every kernel (no compute path): exit 4
#   local_bare_metal a machine that is not a VM: kern.hv_vmm_present 0, another device name
#   local_no_device  a runner with no Metal device (Intel images, sometimes): the probe's own words
#   local_clean_env  the shim's variables exported by an earlier step do not make "stock" shimmed
#   local_run        run with activation records, its exit status, nothing left of it
#   local_signals    SIGTERM to lume-metal reaches the workload's group; nothing is left running
#   local_setsid     ... and a child of it that left the group (setsid)
#   local_agent      agent install, list, remove (and remove again), status
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
: "${LM_METAL_SERVER:?LM_METAL_SERVER: the metal-server fixture}"
: "${LM_SCHEMA:?LM_SCHEMA: docs/json-output.schema.json}" "${LM_PYTHON:?LM_PYTHON: a python3 with jsonschema}"

MACHINE=$E2E_DIR/machine
BIN=$E2E_DIR/bin  # the job's own programs, on its PATH
mkdir -p "$BIN"
install -m 755 "$LM_METAL_SERVER" "$BIN/metal-server"
export PATH="$BIN:$PATH"

# The agents the machine's launchd stand-in started are this machine's processes (no guest to
# power off): each is stopped by its PID when the scenario ends, whatever happened.
lm_test_before_exit() {
  local f pid
  [ -z "${SETSID_CHILD:-}" ] || kill -KILL "$SETSID_CHILD" 2>/dev/null || true
  for f in "$MACHINE"/launchd/*; do
    [ -f "$f" ] || continue
    pid=$(sed -n 's/^pid //p' "$f")
    [ -z "$pid" ] || [ "$pid" = 0 ] || kill -TERM "$pid" 2>/dev/null || true
  done
  e2e_before_exit "$@"
}

# machine OPTIONS...: this machine as a guest (guest-sshd machine), in this shell's environment.
machine() {
  local env
  env=$("$GUEST_SSHD" machine --dir "$MACHINE" --metal-dir "${METAL:-$LM_FAKE_METAL}" "$@")
  eval "$env"
}

# The document is this machine's: its bundle (the build's, in place), never the host preference.
common_checks() {
  jq_is "$1" '.host_preference' null
  jq_is "$1" '.host_preference_changed' false
  jq -e 'has("vms") | not' "$1" >/dev/null || fail "a local document with vms: $(cat "$1")"
  jq_is "$1" '.machine.bundle_dir | split("/") | last' "$(basename "$LM_BUNDLE_DIR")"
  [ "$(cd "$(jq -r .machine.bundle_dir "$1")" && pwd -P)" = "$(cd "$LM_BUNDLE_DIR" && pwd -P)" ] ||
    fail "not the installed bundle: $(jq -r .machine.bundle_dir "$1")"
  jq_is "$1" '.machine.bundle_verified' true
  [ ! -e "$PLIST" ] || fail "local wrote the host preference: $(plist_xml)"
  [ ! -e "$HOME/.local/share/lume-metal/current" ] || fail "local installed a bundle copy"
}

scenario_local_unlocked() {
  machine --feature-level unlocked
  lm_json "$E2E_DIR/p.json" local probe --exercise
  expect_rc 0 "$E2E_DIR/p.json"
  common_checks "$E2E_DIR/p.json"
  jq_is "$E2E_DIR/p.json" '.command' "local probe"
  jq_is "$E2E_DIR/p.json" '.machine.looks_like_vm' true
  jq_is "$E2E_DIR/p.json" '.machine.hv_vmm_present' true
  jq_is "$E2E_DIR/p.json" '.machine.device' "Apple Paravirtual device"
  jq_is "$E2E_DIR/p.json" '.machine.answers_hold' true
  jq_is "$E2E_DIR/p.json" '.machine.kernels_ran' true
  jq_is "$E2E_DIR/p.json" '.machine.stock.shim_active' false
  jq_is "$E2E_DIR/p.json" '.machine.shimmed.shim_active' true
  jq_is "$E2E_DIR/p.json" '.machine.exercise.simdgroup_matrix.result' pass
  lm_json "$E2E_DIR/r.json" local probe --require-exercise
  expect_rc 0 "$E2E_DIR/r.json"
  jq_is "$E2E_DIR/r.json" '.machine.kernels_ran' true
  lm local probe --exercise >"$E2E_DIR/p.txt"
  grep -Eq '^  looks like a VM +yes \(kern.hv_vmm_present: 1; stock device: Apple Paravirtual device\)$' "$E2E_DIR/p.txt" ||
    fail "text: $(cat "$E2E_DIR/p.txt")"
  grep -Eq '^  kernels the profile needs +ran' "$E2E_DIR/p.txt" || fail "text: $(cat "$E2E_DIR/p.txt")"
  grep -Eq '^  host preference +not touched' "$E2E_DIR/p.txt" || fail "text: $(cat "$E2E_DIR/p.txt")"
}

scenario_local_stock() {
  machine --feature-level restricted
  lm_json "$E2E_DIR/p.json" local probe --exercise
  expect_rc 0 "$E2E_DIR/p.json"
  common_checks "$E2E_DIR/p.json"
  jq_is "$E2E_DIR/p.json" '.machine.answers_hold' true
  jq_is "$E2E_DIR/p.json" '.machine.kernels_ran' false
  jq -e '.machine.kernels_note | contains("simdgroup_reduction")' "$E2E_DIR/p.json" >/dev/null ||
    fail "kernels_note: $(jq -c .machine.kernels_note "$E2E_DIR/p.json")"
  jq_is "$E2E_DIR/p.json" '.machine.exercise.simdgroup_reduction.result' error
  # The fast path refused: its own exit code and error, the kernels' results kept.
  lm_json "$E2E_DIR/r.json" local probe --require-exercise
  expect_rc 4 "$E2E_DIR/r.json"
  jq_is "$E2E_DIR/r.json" '.error.code' not-proven
  jq_is "$E2E_DIR/r.json" '.machine.kernels_ran' false
  jq_is "$E2E_DIR/r.json" '.machine.exercise.simdgroup_matrix.result' error
  jq -e '.error.hint | contains("exit code 4")' "$E2E_DIR/r.json" >/dev/null || fail "hint: $(jq -c .error "$E2E_DIR/r.json")"
  set +e; lm local probe --require-exercise >"$E2E_DIR/r.txt" 2>&1; rc=$?; set -e
  [ "$rc" -eq 4 ] || fail "text --require-exercise: exit $rc: $(cat "$E2E_DIR/r.txt")"
}

scenario_local_refusing() {
  METAL=$LM_FAKE_METAL_NOCOMPUTE machine --feature-level unlocked
  lm_json "$E2E_DIR/p.json" local probe --exercise
  expect_rc 0 "$E2E_DIR/p.json"
  jq_is "$E2E_DIR/p.json" '.machine.kernels_ran' false
  lm_json "$E2E_DIR/r.json" local probe --require-exercise
  expect_rc 4 "$E2E_DIR/r.json"
  jq -e '.error.message | contains("no compute path")' "$E2E_DIR/r.json" >/dev/null || fail "message: $(jq -c .error "$E2E_DIR/r.json")"
}

# GitHub's Intel images sometimes have no Metal device at all (reference/metal.md: actions/runner-images
# #1779, llama.cpp PR #6628): MTLCreateSystemDefaultDevice returns nil and the probe exits 1 with
# "Metal device unavailable" (docs/guest.md). local probe says that, in the probe's own words, and
# what to do (docs/hosted-runners.md's reading table), in text and JSON.
scenario_local_no_device() {
  machine --feature-level unlocked
  LM_FAKE_METAL_NO_DEVICE=1 lm_json "$E2E_DIR/p.json" local probe --exercise
  expect_rc 1 "$E2E_DIR/p.json"
  jq_is "$E2E_DIR/p.json" '.error.code' remote
  jq_is "$E2E_DIR/p.json" '.error.message' "local: the probe failed stock (exit 1): Metal device unavailable"
  jq -e '.error.hint | contains("no Metal device at all")' "$E2E_DIR/p.json" >/dev/null || fail "hint: $(jq -c .error "$E2E_DIR/p.json")"
  jq_is "$E2E_DIR/p.json" '.machine.result' failed
  jq_is "$E2E_DIR/p.json" '.machine.stock' null
  local rc=0
  LM_FAKE_METAL_NO_DEVICE=1 lm local probe >"$E2E_DIR/p.txt" 2>&1 || rc=$?
  [ "$rc" -eq 1 ] || fail "text: exit $rc: $(cat "$E2E_DIR/p.txt")"
  [ "$(cat "$E2E_DIR/p.txt")" = "lume-metal: local: the probe failed stock (exit 1): Metal device unavailable
hint: this machine has no Metal device at all (some Intel runner images have none): there is nothing to unlock here; run the workload on the CPU, or on an Apple silicon image" ] ||
    fail "text: $(cat "$E2E_DIR/p.txt")"
}

scenario_local_bare_metal() {
  machine --feature-level unlocked --hv-vmm-present 0
  LM_FAKE_METAL_NAME="Apple M4 Max" lm_json "$E2E_DIR/p.json" local probe
  expect_rc 0 "$E2E_DIR/p.json"
  jq_is "$E2E_DIR/p.json" '.machine.hv_vmm_present' false
  jq_is "$E2E_DIR/p.json" '.machine.paravirtual_device' false
  jq_is "$E2E_DIR/p.json" '.machine.looks_like_vm' false
  jq_is "$E2E_DIR/p.json" '.machine.device' "Apple M4 Max"
  jq_is "$E2E_DIR/p.json" '.machine.kernels_ran' null
  # An older macOS has no kern.hv_vmm_present: unknown, and the device name decides.
  machine --feature-level unlocked --hv-vmm-present none
  lm_json "$E2E_DIR/n.json" local status
  expect_rc 0 "$E2E_DIR/n.json"
  jq_is "$E2E_DIR/n.json" '.machine.hv_vmm_present' null
  jq_is "$E2E_DIR/n.json" '.machine.looks_like_vm' true
}

scenario_local_clean_env() {
  machine --feature-level unlocked
  # What `local env` exports for a later step, and a stray preload: the stock probe stays stock.
  # (The preload lands in lume-metal too: an ASan build of it would refuse one ahead of its
  # runtime, and LeakSanitizer would report the GNU Objective-C runtime the shim brings in, so both
  # checks are off here; nothing checked depends on lume-metal's own process.)
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0" LD_PRELOAD="$LM_BUNDLE_DIR/$(jq -r .shim "$LM_BUNDLE_DIR/manifest.json")" LUME_METAL_APPLE_FAMILY_MAX=1009 \
    lm_json "$E2E_DIR/p.json" local probe
  expect_rc 0 "$E2E_DIR/p.json"
  jq_is "$E2E_DIR/p.json" '.machine.stock.shim_active' false
  jq_is "$E2E_DIR/p.json" '.machine.shimmed.shim_active' true
}

scenario_local_run() {
  machine --feature-level unlocked
  set +e
  lm local run -- metal-server --runner >"$E2E_DIR/run.out" 2>"$E2E_DIR/run.err"
  rc=$?
  set -e
  [ "$rc" -eq 0 ] || fail "local run: exit $rc: $(cat "$E2E_DIR/run.out" "$E2E_DIR/run.err")"
  grep -qx 'runner: apple7=1 apple9=1' "$E2E_DIR/run.out" || fail "output: $(cat "$E2E_DIR/run.out")"
  grep -Eq "^shim: pid [0-9]+ $BIN/metal-server: asked Apple7→yes \(stock no\), Apple9→yes \(stock no\)" \
    "$E2E_DIR/run.err" || fail "no process line: $(cat "$E2E_DIR/run.err")"
  # JSON: the records, and stdout holds the document alone (the workload's own output goes to stderr).
  lm_json_first "$E2E_DIR/run.json" local run --require-shim -- metal-server --runner
  expect_rc 0 "$E2E_DIR/run.json"
  jq_is "$E2E_DIR/run.json" '.command' "local run"
  jq -e --arg exe "$BIN/metal-server" '.activation.records | length == 1 and .[0].record.exe == $exe
    and .[0].record.profile.active' "$E2E_DIR/run.json" >/dev/null || fail "records: $(jq -c .activation "$E2E_DIR/run.json")"
  grep -qx 'runner: apple7=1 apple9=1' "$E2E_DIR/run.json.err" || fail "the workload's output: $(cat "$E2E_DIR/run.json.err")"
  [ -z "$(ls -A "$HOME/.local/share/lume-metal/activation")" ] || fail "a run's record directory was left"
  # Its exit status is lume-metal's; a program that never loads the shim fails --require-shim.
  set +e; lm local run -- sh -c 'exit 7' >/dev/null 2>&1; rc=$?; set -e
  [ "$rc" -eq 7 ] || fail "exit status: $rc"
  lm_json_first "$E2E_DIR/ns.json" local run --require-shim -- true
  expect_rc 1 "$E2E_DIR/ns.json"
  jq_is "$E2E_DIR/ns.json" '.error.code' no-shim
}

# No forged proof (issue 36, item 3): under umask 000 every folder lume-metal makes for the records
# is 0700; an existing one that others can write is refused, nothing run; one owned by another
# user likewise (when this test may chown).
scenario_local_private() {
  machine --feature-level unlocked
  rm -rf "$HOME/.local"
  set +e
  (umask 000; "$LM_BIN" local run --require-shim -- metal-server --runner) >"$E2E_DIR/u.out" 2>"$E2E_DIR/u.err"
  rc=$?
  set -e
  [ "$rc" -eq 0 ] || fail "local run under umask 000: exit $rc: $(cat "$E2E_DIR/u.out" "$E2E_DIR/u.err")"
  local d
  for d in .local .local/share .local/share/lume-metal .local/share/lume-metal/activation; do
    [ "$(stat -c %a "$HOME/$d")" = 700 ] || fail "~/$d was made $(stat -c %a "$HOME/$d") under umask 000, not 700"
  done
  chmod 777 "$HOME/.local/share/lume-metal/activation"
  mkdir -m 777 "$HOME/.local/share/lume-metal/activation/planted"
  set +e
  "$LM_BIN" local run --require-shim -- sh -c 'echo ran >"$0"' "$E2E_DIR/ran" >"$E2E_DIR/w.out" 2>"$E2E_DIR/w.err"
  rc=$?
  set -e
  [ "$rc" -eq 1 ] || fail "a world-writable record folder: exit $rc: $(cat "$E2E_DIR/w.out" "$E2E_DIR/w.err")"
  grep -q "~/.local/share/lume-metal/activation is not a private directory of this user's" "$E2E_DIR/w.err" ||
    fail "a world-writable record folder: $(cat "$E2E_DIR/w.err")"
  [ ! -e "$E2E_DIR/ran" ] || fail "the workload ran with a record folder others can write"
  [ "$(stat -c %a "$HOME/.local/share/lume-metal/activation")" = 777 ] || fail "the refused folder was changed"
  chmod 700 "$HOME/.local/share/lume-metal/activation"
  if [ "$(id -u)" -eq 0 ]; then
    chown 65534 "$HOME/.local/share/lume-metal/activation"
    set +e
    "$LM_BIN" local run -- true >"$E2E_DIR/o.out" 2>"$E2E_DIR/o.err"
    rc=$?
    set -e
    [ "$rc" -eq 1 ] && grep -q "is not a private directory of this user's" "$E2E_DIR/o.err" ||
      fail "a record folder of another user: exit $rc: $(cat "$E2E_DIR/o.err")"
  fi
}

scenario_local_signals() {
  machine --feature-level unlocked
  # A workload that leaves a child behind; lume-metal gets SIGTERM, as from a CI runner's cancel.
  "$LM_BIN" local run -- sh -c 'trap "echo got-term >>\"$0.log\"; exit 143" TERM; sleep 300 & echo $! >"$0"; wait' \
    "$E2E_DIR/child.pid" >"$E2E_DIR/s.out" 2>"$E2E_DIR/s.err" &
  local lm_pid=$!
  wait_for 30 "the workload to start" test -s "$E2E_DIR/child.pid"
  local child; child=$(cat "$E2E_DIR/child.pid")
  kill -TERM "$lm_pid"
  set +e; wait "$lm_pid"; rc=$?; set -e
  [ "$rc" -eq 143 ] || fail "lume-metal's exit: $rc: $(cat "$E2E_DIR/s.out" "$E2E_DIR/s.err")"
  grep -qx got-term "$E2E_DIR/child.pid.log" || fail "the workload did not get SIGTERM"
  wait_for 10 "the workload's child to be ended" exited "$child"
}

# A child that left the workload's group (setsid: a session of its own, a sleep loop in it) is
# found by its ancestry when lume-metal gets SIGTERM, and ended with the group (issue 36, item 6).
scenario_local_setsid() {
  machine --feature-level unlocked
  # shellcheck disable=SC2016 # the workload's shell expands it
  "$LM_BIN" local run -- sh -c 'setsid sh -c '\''echo $$ >"$0.tmp"; mv "$0.tmp" "$0"; while :; do sleep 1; done'\'' "$0" & wait' \
    "$E2E_DIR/setsid.pid" >"$E2E_DIR/s.out" 2>"$E2E_DIR/s.err" &
  local lm_pid=$! child rc
  wait_for 30 "the workload's setsid child to start: $(cat "$E2E_DIR/s.err")" test -s "$E2E_DIR/setsid.pid"
  child=$(cat "$E2E_DIR/setsid.pid")
  SETSID_CHILD=$child # not left running should the test fail
  [ "$(awk '{print $6}' "/proc/$child/stat")" = "$child" ] || fail "the child has no session of its own: $(cat "/proc/$child/stat")"
  kill -TERM "$lm_pid"
  set +e; wait "$lm_pid"; rc=$?; set -e
  [ "$rc" -eq 143 ] || fail "lume-metal's exit: $rc: $(cat "$E2E_DIR/s.out" "$E2E_DIR/s.err")"
  # SIGKILL's end is the kernel's to finish: waited for, as a condition.
  wait_for 10 "the workload's setsid child $child to be ended (it outlived local run)" exited "$child"
}

scenario_local_agent() {
  machine --feature-level unlocked
  local l=com.example.local-server home=$HOME
  lm_json_first "$E2E_DIR/i.json" local agent install --label $l -- metal-server --runner --stay
  expect_rc 0 "$E2E_DIR/i.json"
  jq_is "$E2E_DIR/i.json" '.command' "local agent install"
  jq_is "$E2E_DIR/i.json" '.machine.agents[0].state' running
  [ -f "$home/Library/LaunchAgents/$l.plist" ] || fail "no plist"
  plistutil -i "$home/Library/LaunchAgents/$l.plist" -o - -f xml | grep -q "<string>$BIN/metal-server</string>" ||
    fail "plist: $(cat "$home/Library/LaunchAgents/$l.plist")"
  wait_for 15 "the agent to run with the shim" grep -q 'runner: apple7=1 apple9=1' "$home/Library/Logs/lume-metal/$l.out.log"
  lm_json "$E2E_DIR/l.json" local agent list
  expect_rc 0 "$E2E_DIR/l.json"
  jq_is "$E2E_DIR/l.json" '.machine.agents | length' 1
  jq_is "$E2E_DIR/l.json" '.machine.agents[0].label' $l
  jq_is "$E2E_DIR/l.json" '.machine.agents[0].program' "$BIN/metal-server"
  jq_is "$E2E_DIR/l.json" '.machine.agents[0].shim_loaded' true
  lm local status >"$E2E_DIR/s.txt"
  grep -q "^    $l " "$E2E_DIR/s.txt" || fail "status: $(cat "$E2E_DIR/s.txt")"
  lm local agent remove --label $l >"$E2E_DIR/r.txt"
  grep -qx "this machine: agent $l removed" "$E2E_DIR/r.txt" || fail "remove: $(cat "$E2E_DIR/r.txt")"
  [ ! -e "$home/Library/LaunchAgents/$l.plist" ] || fail "plist left"
  [ -f "$home/Library/Logs/lume-metal/$l.out.log" ] || fail "the logs were not kept"
  grep -q "^launchctl bootout gui/$(id -u)/$l$" "$MACHINE/calls.log" || fail "not booted out: $(cat "$MACHINE/calls.log")"
  lm_json "$E2E_DIR/l2.json" local agent list
  jq_is "$E2E_DIR/l2.json" '.machine.agents | length' 0
  lm local agent remove $l >"$E2E_DIR/r2.txt"
  grep -qx "this machine: no agent $l installed by lume-metal; nothing to remove" "$E2E_DIR/r2.txt" ||
    fail "second remove: $(cat "$E2E_DIR/r2.txt")"
}

[ $# -eq 1 ] && declare -F "scenario_$1" >/dev/null || { echo "usage: $0 SCENARIO" >&2; exit 2; }
"scenario_$1"
# Every document this scenario made follows docs/json-output.schema.json, failures included.
docs=("$E2E_DIR"/*.json)
[ ! -e "${docs[0]}" ] || "$LM_PYTHON" "$here/../support/json-validate" "$LM_SCHEMA" "${docs[@]}" ||
  fail "documents that do not follow $LM_SCHEMA (above)"
