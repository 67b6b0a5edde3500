#!/usr/bin/env bash
# Cancel means within a second, everywhere (issue 25, item 4): cancel_waits.sh SCENARIO sends
# SIGINT to lume-metal while it is in one kind of wait -- found by the condition that shows it is
# there, never by a delay -- and checks that it ended by that signal, that the command's undo ran
# and that the message says what it did. Each scenario prints "latency SCENARIO SECONDS" (from the
# signal to the process's end): figures for tests/bench/bench_cancel.sh, never asserted here.
#   http_stop    inside a Lume API call: a POST .../stop that Lume holds (the VM is down, then
#                its fixed sleep, 20 s here: the simulator ends only once it has answered) during
#                enable's restart
#   rollback_restart  rollback's restart of an unlocked VM, canceled inside its stop
#   stop_wait    the wait for a VM to report stopped: UTM's guest ignores the shutdown request
#   child_wait   a child process: `lume get` (the CLI backend) that does not answer
#   gone_loop    the loop over gone VMs, forgetting them one by one before an enable
#   lock_wait    the VM's lock, held by another enable
# (The readiness poll has its own test: cancel.sh.)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

scenario=${1:?usage: cancel_waits.sh SCENARIO}
LM_PID=

# until COMMAND... succeeds while lume-metal runs (the hang guard is the test's timeout)
until_in_wait() {
  for _ in $(seq 1 2400); do
    "$@" && return 0
    kill -0 "$LM_PID" 2>/dev/null || fail "lume-metal ended before it was in the wait: $(cat "$E2E_DIR"/e.*)"
    sleep 0.05
  done
  fail "lume-metal never reached the wait: $(cat "$E2E_DIR"/e.*)"
}

# SIGINT, then its end: exit 130 (ended by SIGINT), the result in e.json, the latency printed.
interrupt() {
  local t0 t1
  t0=$(date +%s.%N)
  kill -INT "$LM_PID"
  set +e; wait "$LM_PID"; RC=$?; set -e
  t1=$(date +%s.%N)
  echo "latency $scenario $(echo "$t1 - $t0" | bc -l)"
  [ "$RC" -eq 130 ] || fail "exited $RC, expected 130 (ended by SIGINT): $(cat "$E2E_DIR"/e.*)"
  jq_is "$E2E_DIR/e.json" .error.code canceled
  jq_is "$E2E_DIR/e.json" '.vms[0].result' failed
}
message() { jq -r '.vms[0].message' "$E2E_DIR/e.json"; }
says() { message | grep -qF -- "$1" || fail "the message does not say '$1': $(message)"; }
interrupted_line() { grep -qF "lume-metal: interrupted by SIGINT: $1" "$E2E_DIR/e.err" || fail "no interrupted line: $(cat "$E2E_DIR/e.err")"; }

# A `lume` that records each call and, for the arguments given, says so in $E2E_DIR/blocked and
# then blocks until it is killed (on a FIFO nobody writes).
blocking_lume() { # ARGS-PREFIX
  mkfifo "$E2E_DIR/never"
  printf '#!/bin/sh\necho "$*" >>"%s/lume-calls"\ncase "$*" in "%s"*) echo "$*" >"%s/blocked"; read x <"%s/never";; esac\nexec "%s" "$@"\n' \
    "$E2E_DIR" "$1" "$E2E_DIR" "$E2E_DIR" "$(jq -r .lume "$E2E_DIR/sim.json")" >"$E2E_DIR/lume"
  chmod 755 "$E2E_DIR/lume"
}
# enable vm1 with that `lume` (the CLI backend), interrupted once the blocked call was made.
enable_interrupted_in_lume() { # ARGS-PREFIX
  blocking_lume "$1"
  "$LM_BIN" enable vm1 --vm-manager lume-cli --lume "$E2E_DIR/lume" --verbose --format json >"$E2E_DIR/e.json" \
    2>"$E2E_DIR/e.err" &
  LM_PID=$!
  until_in_wait test -s "$E2E_DIR/blocked"
  interrupt
}
no_lume_left() { ! pgrep -f "^/bin/sh $E2E_DIR/lume" >/dev/null || fail "a blocked lume child was left running"; }

scenario_http_stop() {
  sim_start --vm vm1 --stop-delay 20
  vm_run vm1
  "$LM_BIN" enable vm1 --verbose --format json >"$E2E_DIR/e.json" 2>"$E2E_DIR/e.err" &
  LM_PID=$!
  # The VM is down and Lume sleeps before it answers: lume-metal is inside POST .../stop.
  until_in_wait eval '[ "$(sim_events stopped vm1)" -ge 1 ]'
  interrupt
  says "canceled while waiting for Lume's answer"
  says "host preference restored"
  says "VM running again (it was running)"
  interrupted_line "vm1: lume: POST"
  [ ! -e "$PLIST" ] || fail "the host preference is left"
  wait_for 60 "vm1 was not started again: $(vm_status vm1)" vm_ready vm1
  lm_json "$E2E_DIR/s.json" status
  jq_is "$E2E_DIR/s.json" '.vms | length' 0
}

# rollback restarts a VM that booted with the unlocked level: a SIGINT inside its stop (Lume holds
# POST .../stop) still leaves the VM running, off the unlocked level.
scenario_rollback_restart() {
  sim_start --vm vm1 --stop-delay 20
  "$LM_BIN" host enable >"$E2E_DIR/h.out" 2>&1 || fail "host enable: $(cat "$E2E_DIR/h.out")"
  vm_run vm1 # booted after the preference: the unlocked level, no restart at enable
  lm_json "$E2E_DIR/e0.json" enable vm1
  local stops
  stops=$(sim_events stopped vm1) # enable may have restarted it (a boot close to the change)
  "$LM_BIN" rollback vm1 --verbose --format json >"$E2E_DIR/e.json" 2>"$E2E_DIR/e.err" &
  LM_PID=$!
  until_in_wait eval '[ "$(sim_events stopped vm1)" -gt "$stops" ]'
  kill -INT "$LM_PID"
  set +e; wait "$LM_PID"; RC=$?; set -e
  echo "rollback exited $RC: $(cat "$E2E_DIR/e.err")"
  [ ! -e "$PLIST" ] || fail "the host preference is left"
  wait_for 60 "vm1 was left stopped: $(vm_status vm1)" vm_ready vm1
  [ "$(sim_events boot vm1)" -ge $((stops + 2)) ] || fail "vm1 was not started again after the canceled stop"
}

scenario_stop_wait() {
  export TART_HOME="$E2E_DIR/tart-home"
  local docs="$HOME/Library/Containers/com.utmapp.UTM/Data/Documents" bin
  sim_start --utm-vm vm1 --utm-documents "$docs" --utm-ignore-request
  bin=$(jq -r .bin_dir "$E2E_DIR/sim.json")
  "$bin/utmctl" start vm1
  wait_for 60 "vm1 did not boot" port22_open "$(vm_field vm1 address)"
  "$LM_BIN" enable vm1 --vm-manager utm --utmctl "$bin/utmctl" --verbose --format json >"$E2E_DIR/e.json" \
    2>"$E2E_DIR/e.err" &
  LM_PID=$!
  # The guest was asked to shut down and ignores it: lume-metal polls for "stopped".
  until_in_wait eval '[ "$(sim_events request-ignored vm1)" -ge 1 ]'
  interrupt
  says "canceled while waiting" # in the poll's pause, or in its `utmctl status`
  says "host preference restored"
  says "VM running again (it was running)"
  [ ! -e "$PLIST" ] || fail "the host preference is left"
  # Canceled before the power-off that would have followed the ignored request.
  [ "$(sim_events stopped vm1)" -eq 0 ] || fail "vm1 was powered off after the cancel"
  port22_open "$(vm_field vm1 address)" || fail "vm1 does not run any more"
}

scenario_child_wait() {
  sim_start --vm vm1
  enable_interrupted_in_lume "get vm1 "
  says "canceled while waiting for it"
  interrupted_line "vm1: lume: $E2E_DIR/lume: canceled"
  no_lume_left
  [ ! -e "$PLIST" ] || fail "the host preference was written"
  [ "$(sim_events run vm1)" -eq 0 ] || fail "vm1 was started"
}

scenario_gone_loop() {
  sim_start --vm vm1
  # 40 VMs lume-metal pinned once and that no longer exist (g01..g40), in the known_hosts file.
  ssh-keygen -q -t ed25519 -N '' -f "$E2E_DIR/key" >/dev/null
  mkdir -p "$LUME_METAL_STATE_DIR" && chmod 700 "$LUME_METAL_STATE_DIR"
  for i in $(seq -w 1 40); do
    echo "g$i $(cut -d' ' -f1-2 "$E2E_DIR/key.pub") first seen at 192.168.64.$((10#$i + 2)) port 22"
  done >"$LUME_METAL_STATE_DIR/known_hosts"
  chmod 600 "$LUME_METAL_STATE_DIR/known_hosts"
  # The second one's question does not come back: lume-metal is in the loop when it is asked.
  enable_interrupted_in_lume "get g02 "
  says "canceled before anything was changed"
  no_lume_left
  grep -q '^g01 ' "$LUME_METAL_STATE_DIR/known_hosts" && fail "g01, asked before the signal, was not forgotten"
  # The loop stopped: no VM after the canceled question was asked about, every pin after it kept.
  ! grep -q '^get g0[3-9]\|^get g[1-4]' "$E2E_DIR/lume-calls" || fail "asked on after the cancel: $(cat "$E2E_DIR/lume-calls")"
  [ "$(grep -c '^g' "$LUME_METAL_STATE_DIR/known_hosts")" -eq 39 ] ||
    fail "the sweep went on after the cancel: $(cat "$LUME_METAL_STATE_DIR/known_hosts")"
  [ ! -e "$PLIST" ] || fail "the host preference was written"
}

scenario_lock_wait() {
  sim_start --vm vm1
  LUME_METAL_TEST_STOP_AT=after-preference "$LM_BIN_HOOKS" enable vm1 >"$E2E_DIR/holder.out" 2>&1 &
  local holder=$!
  E2E_MORE_SIMS+=("$holder") # stopped at exit whatever happens
  for _ in $(seq 1 1200); do [ "$(awk '{print $3}' "/proc/$holder/stat" 2>/dev/null)" = T ] && break; sleep 0.05; done
  "$LM_BIN" enable vm1 --verbose --format json >"$E2E_DIR/e.json" 2>"$E2E_DIR/e.err" &
  LM_PID=$!
  # The waiter has the VM's lock file open (lm_vm_lock_take), which the holder keeps locked.
  until_in_wait holds "$LM_PID" "$LUME_METAL_STATE_DIR/vm-$(printf vm1 | sha256sum | cut -c1-32).lock"
  interrupt
  says "canceled while waiting for this VM's lock; nothing was changed"
  kill -CONT "$holder"
  set +e; wait "$holder"; local rc=$?; set -e
  [ "$rc" -eq 0 ] || fail "the holder failed ($rc): $(cat "$E2E_DIR/holder.out")"
  jq_is "$LUME_METAL_STATE_DIR/state.json" .vms.vm1.status enabled
}

"scenario_$scenario"
echo "ok: $scenario canceled in its wait, undone, and said so"
