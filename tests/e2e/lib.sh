# Shared by the end-to-end scenarios: a Lume simulator with real sshd guests, and lume-metal
# pointed at it with its own state, preferences and home. Everything lives under one temporary
# directory and every process started here is stopped by PID on exit, even when a check fails.
. "$(dirname "${BASH_SOURCE[0]}")/../support/lm_test.sh"

# lume-metal itself; the simulator's own tests (tests/sim/standins.sh) set LM_SIM_ONLY and run none.
[ -n "${LM_SIM_ONLY:-}" ] || : "${LM_BIN:?LM_BIN: the lume-metal binary}"
: "${LM_SIM:?LM_SIM: the lume-sim binary}"
: "${LM_FAKE_METAL:?LM_FAKE_METAL: the fake Metal directory}"
# The guests' /24, from the address plan: checked before anything starts.
GUEST_ADDRESS_BASE=$(lm_test_address 2)

lm_test_scratch e2e
E2E_DIR=$T
chmod 755 "$E2E_DIR"   # the guests' account reaches its stand-ins below it
SIM_PID=        # sim_start's simulator
E2E_MORE_SIMS=() # the PIDs of any other a scenario starts; all are stopped on exit
export HOME="$E2E_DIR/home"
export LUME_METAL_STATE_DIR="$E2E_DIR/state"
export LUME_METAL_PREFS_DIR="$E2E_DIR/prefs"
export NO_COLOR=1
unset SSH_AUTH_SOCK LUME_METAL_SSH_PASSWORD LUME_METAL_BUNDLE || true
mkdir -p "$HOME" "$LUME_METAL_PREFS_DIR"
PLIST="$LUME_METAL_PREFS_DIR/com.apple.gpusw.ParavirtualizedGraphics.plist"

# Before the scratch directory goes (lm_test.sh): the simulators stopped, and what one printed when
# the test failed. A script with more to undo defines lm_test_before_exit itself and calls this.
e2e_before_exit() {
  local rc=$1 pid
  for pid in "${E2E_MORE_SIMS[@]}" $SIM_PID; do
    kill -0 "$pid" 2>/dev/null || continue
    # Until it has stopped every guest it started: killing it earlier would leave them running.
    # (A simulator that never ends is the test's timeout's business.)
    kill -TERM "$pid" 2>/dev/null || true
    # a busy machine can take a while to stop the guests: wait for that rather than orphan them
    for _ in $(seq 1 600); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [ "$rc" -ne 0 ] && [ -f "$E2E_DIR/sim.out" ]; then
    echo "--- simulator output:" >&2; tail -n 30 "$E2E_DIR/sim.out" >&2 || true
  fi
}
lm_test_before_exit() { e2e_before_exit "$@"; }

# sim_start [lume-sim options...]: start the simulator on a free port, wait for its info file.
sim_start() {
  "$LM_SIM" --port 0 --dir "$E2E_DIR/sim" --info "$E2E_DIR/sim.json" --boot-delay 0.2 --stop-delay 0.1 \
    --metal-dir "$LM_FAKE_METAL" --address-base "$GUEST_ADDRESS_BASE" --exit-with-parent "$@" >"$E2E_DIR/sim.out" 2>&1 &
  SIM_PID=$!
  for _ in $(seq 1 200); do
    [ -s "$E2E_DIR/sim.json" ] && break
    kill -0 "$SIM_PID" 2>/dev/null || fail "the simulator exited: $(cat "$E2E_DIR/sim.out")"
    sleep 0.05
  done
  [ -s "$E2E_DIR/sim.json" ] || fail "the simulator did not start"
  export LUME_METAL_LUME_URL; LUME_METAL_LUME_URL=$(jq -r .url "$E2E_DIR/sim.json")
  SIM_LOG=$(jq -r .log "$E2E_DIR/sim.json")
}

vm_dir() { jq -r --arg n "$1" '.vms[] | select(.name == $n) | .dir' "$E2E_DIR/sim.json"; }

# vm_run NAME: start a VM through the API (as a user would) and wait until SSH answers.
# vm_run NAME: Lume's POST run, then until the guest is ready: the simulator's boot (or resume)
# event for this start in its log (the guest's sshd answers), then Lume says sshAvailable. Lume is
# not asked while the guest is silent: each such question costs its 2-s check of port 22 a second
# or two (reference/lume.md, tests/sim/sim_vm.c lume_ssh_check), which lume-metal's readiness
# avoids too (it tries the port first).
vm_run() {
  local starts; starts=$(vm_starts "$1")
  curl -fsS -X POST -d '{"noDisplay":true}' "$LUME_METAL_LUME_URL/lume/vms/$1/run" >/dev/null
  wait_for 60 "$1 did not boot" vm_started_since "$1" "$starts"
  vm_ready "$1" || fail "$1 booted, but Lume does not say sshAvailable: $(curl -fsS "$LUME_METAL_LUME_URL/lume/vms/$1")"
}
# vm_starts NAME: how many boot and resume events of NAME the simulator logged.
vm_starts() {
  jq -c --arg v "$1" 'select(.source == "sim" and (.event == "boot" or .event == "resume") and .vm == $v)' "$SIM_LOG" | wc -l
}
vm_started_since() { [ "$(vm_starts "$1")" -gt "$2" ]; }

vm_status() { curl -fsS "$LUME_METAL_LUME_URL/lume/vms/$1" | jq -r .status; }
vm_ready() { curl -fsS "$LUME_METAL_LUME_URL/lume/vms/$1" | jq -e '.sshAvailable == true' >/dev/null; }
# vm_field NAME FIELD: a VM's entry in the simulator's info file (address, dir, config...).
vm_field() { jq -r --arg n "$1" --arg f "$2" '.vms[] | select(.name == $n) | .[$f]' "$E2E_DIR/sim.json"; }
# The simulator's `lume` stand-in.
lume_cli() { "$(jq -r .lume "$E2E_DIR/sim.json")" "$@"; }

# The simulator's events of one kind for one VM (run, boot, stopped, signal...).
sim_events() {
  jq -c --arg e "$1" --arg v "$2" 'select(.source == "sim" and .event == $e and .vm == $v)' "$SIM_LOG" | wc -l
}
# log_has FILTER: some line of the request log is selected by the jq FILTER.
log_has() { [ "$(jq -c "select($1)" "$SIM_LOG" | wc -l)" -gt 0 ]; }
# lines_at_least FILE PATTERN N: at least N lines of FILE match PATTERN (grep -E; none while FILE
# is missing). For wait_for, which runs its command afresh each time: a $(grep -c ...) among
# wait_for's arguments is counted once, before the wait begins, and never changes.
lines_at_least() {
  local n
  n=$(grep -cE -- "$2" "$1" 2>/dev/null) || true
  [ "${n:-0}" -ge "$3" ]
}
port22_open() { (exec 3<>"/dev/tcp/$1/22") 2>/dev/null; }
# The process is gone, or a zombie nobody reaps (some containers' init never does).
exited() { [ ! -e "/proc/$1" ] || grep -q '^[0-9]* (.*) [ZX] ' "/proc/$1/stat" 2>/dev/null; }
holds() { # PID FILE: the process has FILE open
  local fd
  for fd in /proc/"$1"/fd/*; do [ "$(readlink "$fd")" = "$2" ] && return 0; done
  return 1
}
# wait_for SECONDS WHAT COMMAND...: until COMMAND succeeds (a condition, never a fixed sleep; the
# seconds are a hang guard, never less than LM_HANG_GUARD_FLOOR: on a loaded 2-CPU machine a start
# that takes a second idle took twenty, issue 49).
LM_HANG_GUARD_FLOOR=${LM_HANG_GUARD_FLOOR:-300}
wait_for() {
  local limit=$1 what=$2 i
  shift 2
  [ "$limit" -ge "$LM_HANG_GUARD_FLOOR" ] || limit=$LM_HANG_GUARD_FLOOR
  for i in $(seq 1 $((limit * 20))); do
    "$@" && return 0
    sleep 0.05
  done
  fail "$what"
}

# Count of requests in the simulator's log matching METHOD and a path suffix, since line N.
log_lines() { wc -l <"$SIM_LOG"; }
count_requests() { # METHOD SUFFIX [FROM_LINE]
  tail -n +"$(( ${3:-0} + 1 ))" "$SIM_LOG" | jq -c --arg m "$1" --arg s "$2" \
    'select(.method == $m and (.path | endswith($s)))' | wc -l
}

lm() { "$LM_BIN" "$@"; }

# The guest fixture, for its test hooks (guest-sshd boot-time).
GUEST_SSHD=$(cd "$(dirname "${BASH_SOURCE[0]}")/../support" && pwd)/guest-sshd

# Every guest that was started had the login shell this run asked for (GUEST_SSHD_SHELL, else
# zsh as on Cua's images): a scenario passes only for the shell it claims to have run under.
check_guest_shells() {
  local want=/bin/${GUEST_SSHD_SHELL:-zsh} d
  for d in $(jq -r '.vms[].dir' "$E2E_DIR/sim.json"); do
    [ ! -f "$d/shell" ] || [ "$(cat "$d/shell")" = "$want" ] || fail "guest $d ran $(cat "$d/shell"), not $want"
  done
}

# lm_json OUTFILE ARGS...: run lume-metal with --format json, keep its exit code in LM_RC.
lm_json() {
  local out=$1; shift
  set +e
  "$LM_BIN" "$@" --format json >"$out" 2>"$out.err"
  LM_RC=$?
  set -e
  jq -e . "$out" >/dev/null || fail "lume-metal $* printed no JSON document: $(cat "$out" "$out.err")"
}

# lm_json_first OUTFILE ARGS...: the same with --format json before the command, for commands
# that take a guest command after "--" (run's, bench's, agent install's), where it would be the
# guest's.
lm_json_first() {
  local out=$1; shift
  set +e
  "$LM_BIN" --format json "$@" >"$out" 2>"$out.err"
  LM_RC=$?
  set -e
  [ -s "$out" ] && jq -e . "$out" >/dev/null || fail "lume-metal $* printed no JSON document: $(cat "$out" "$out.err")"
}

expect_rc() { [ "$LM_RC" -eq "$1" ] || fail "expected exit $1, got $LM_RC: $(cat "$2" "$2.err")"; }
jq_is() { # FILE FILTER EXPECTED
  local got; got=$(jq -r "$2" "$1")
  [ "$got" = "$3" ] || fail "$2: expected '$3', found '$got' in $(cat "$1")"
}

# plist_xml: the preference file as an independent reader (plistutil) sees it; "absent" if none.
plist_xml() { if [ -f "$PLIST" ]; then plistutil -i "$PLIST" -o - -f xml 2>/dev/null || plistutil -i "$PLIST" -o -; else echo absent; fi; }

guest_home() { echo "$(vm_dir "$1")/home"; }

# run_capture NAME ARGS...: lume-metal run; stdout, stderr and the exit code (RUN_RC) kept.
run_capture() {
  local name=$1; shift
  set +e
  lm run "$@" >"$E2E_DIR/$name.out" 2>"$E2E_DIR/$name.err"
  RUN_RC=$?
  set -e
}

# plain_ssh VM COMMAND: the command in a plain session of the guest account, as any SSH client
# gets it (OpenSSH's ssh with a key of its own; lume-metal is not involved).
plain_ssh() {
  local home; home=$(guest_home "$1")
  if [ ! -f "$E2E_DIR/plain_key" ]; then
    ssh-keygen -q -t ed25519 -N '' -C e2e -f "$E2E_DIR/plain_key" </dev/null
  fi
  mkdir -p "$home/.ssh"
  cp "$E2E_DIR/plain_key.pub" "$home/.ssh/authorized_keys"
  ssh -i "$E2E_DIR/plain_key" -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
    -o LogLevel=ERROR -o ConnectTimeout=10 "lume@$(jq -r --arg n "$1" '.vms[] | select(.name == $n) | .address' "$E2E_DIR/sim.json")" "$2"
}
