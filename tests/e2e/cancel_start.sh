#!/usr/bin/env bash
# Cancel undoes every start, on every manager (issue 48, item 6): ^C -- SIGINT to lume-metal's
# process group, as a terminal sends it -- while `enable` of a stopped VM is in its start step,
# after the start was launched. cancel_start.sh MANAGER, one of:
#   lume_api  POST .../run sent, Lume's 202 held back (--run-answer-delay): the VM runs
#   lume_cli  `lume run --detach` relaunched its `lume run`, the call not answered yet
#   tart      `tart run` spawned (in a session of its own: the ^C never reaches it) and the guest
#             not booted yet (--boot-delay): enable waits on `tart ip`
#   utm       `utmctl start` sent, its reply not back yet
# Each time: ended by SIGINT, the error "canceled", the start step FAILED, the VM stopped again and
# the message saying so, and no manager process of that start left.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

manager=${1:?usage: cancel_start.sh MANAGER}
export TART_HOME="$E2E_DIR/tart-home"
UTM_DOCS="$HOME/Library/Containers/com.utmapp.UTM/Data/Documents"
LM_PID=

# A stand-in of PROGRAM that records each call and, for the arguments given, runs the real one,
# says so in $E2E_DIR/blocked and blocks until it is killed (on a FIFO nobody writes): a start
# that has launched the VM and has not answered yet.
blocking() { # PROGRAM ARGS-PREFIX
  mkfifo "$E2E_DIR/never"
  printf '#!/bin/sh\necho "$*" >>"%s/%s-calls"\ncase "$*" in "%s"*) "%s" "$@"; echo "$*" >"%s/blocked"; read x <"%s/never";; esac\nexec "%s" "$@"\n' \
    "$E2E_DIR" "$1" "$2" "$BIN/$1" "$E2E_DIR" "$E2E_DIR" "$BIN/$1" >"$E2E_DIR/$1"
  chmod 755 "$E2E_DIR/$1"
}

# enable vm1 in a process group of its own (setsid: lume-metal leads it), as a shell's job is.
enable_bg() { # lume-metal options...
  setsid "$LM_BIN" --timeout 120 "$@" enable vm1 --verbose --format json >"$E2E_DIR/e.json" 2>"$E2E_DIR/e.err" &
  LM_PID=$!
}
in_start() { # CONDITION...: lume-metal is in its start step and CONDITION holds
  grep -q '^vm1: start \.\.\.$' "$E2E_DIR/e.err" && "$@"
}
running() { ! exited "$LM_PID"; }
wait_in_start() { # CONDITION...
  wait_for 120 "lume-metal never reached its start step: $(cat "$E2E_DIR"/e.*)" eval 'in_start '"$*"' || ! running'
  running || fail "lume-metal ended before its start step was canceled: $(cat "$E2E_DIR"/e.*)"
}

# ^C to the group, then the end: 130, canceled, the start step failed, the VM stopped again.
interrupt() {
  kill -INT -- "-$LM_PID"
  set +e; wait "$LM_PID"; RC=$?; set -e
  [ "$RC" -eq 130 ] || fail "exited $RC, expected 130 (ended by SIGINT): $(cat "$E2E_DIR"/e.*)"
  jq_is "$E2E_DIR/e.json" .error.code canceled
  jq_is "$E2E_DIR/e.json" '.vms[0].result' failed
  jq_is "$E2E_DIR/e.json" '[.vms[0].steps[] | select(.state == "failed") | .name] | join(",")' start
  says "VM stopped again (it was stopped; its start was under way when the command ended"
  says "host preference restored"
  [ ! -e "$PLIST" ] || fail "the host preference is left"
}
message() { jq -r '.vms[0].message' "$E2E_DIR/e.json"; }
says() { message | grep -qF -- "$1" || fail "the message does not say '$1': $(message)"; }
no_process() { # PATTERN WHAT
  ! pgrep -f "$1" >/dev/null || fail "$2 is left running: $(pgrep -af "$1")"
}

case "$manager" in
lume_api)
  sim_start --vm vm1 --run-answer-delay 20 --stop-delay 0
  BIN=$(jq -r .bin_dir "$E2E_DIR/sim.json")
  enable_bg --vm-manager lume-api
  wait_in_start '[ "$(sim_events run-answer-held vm1)" -ge 1 ]'
  interrupt
  [ "$(vm_status vm1)" = stopped ] || fail "vm1 is $(vm_status vm1), not stopped again"
  [ "$(count_requests POST /vm1/stop)" -ge 1 ] || fail "no stop was asked of Lume"
  ;;
lume_cli)
  sim_start --vm vm1 --stop-delay 0
  BIN=$(dirname "$(jq -r .lume "$E2E_DIR/sim.json")")
  blocking lume "run vm1 --detach"
  enable_bg --vm-manager lume-cli --lume "$E2E_DIR/lume"
  wait_in_start test -s "$E2E_DIR/blocked"
  interrupt
  [ "$(vm_status vm1)" = stopped ] || fail "vm1 is $(vm_status vm1), not stopped again"
  # the `lume run` that `run --detach` relaunched (reference/lume.md: `lume run NAME --display none`),
  # this test's own (its simulator's lume): other tests run their own vm1 at the same time
  no_process "$BIN/lume run vm1 --display none" "a \`lume run\` of vm1"
  no_process "^/bin/sh $E2E_DIR/lume" "the blocked lume"
  ;;
tart)
  sim_start --tart-vm vm1 --tart-home "$TART_HOME" --boot-delay 60
  BIN=$(jq -r .bin_dir "$E2E_DIR/sim.json")
  export PATH="$BIN:$PATH"
  enable_bg --vm-manager tart
  wait_in_start '[ "$(sim_events run vm1)" -ge 1 ]'
  interrupt
  says "its \`tart run\` process (PID"
  says ") ended"
  [ "$("$BIN/tart" get vm1 --format json | jq -r .State)" = stopped ] || fail "vm1 is not stopped again"
  no_process "$BIN/tart run" "\`tart run\`"
  ;;
utm)
  sim_start --utm-vm vm1 --utm-documents "$UTM_DOCS" --utm-request-delay 0.2
  BIN=$(jq -r .bin_dir "$E2E_DIR/sim.json")
  export PATH="$BIN:$PATH"
  blocking utmctl "start vm1"
  enable_bg --vm-manager utm --utmctl "$E2E_DIR/utmctl"
  wait_in_start test -s "$E2E_DIR/blocked"
  interrupt
  [ "$("$BIN/utmctl" status vm1)" = stopped ] || fail "vm1 is $("$BIN/utmctl" status vm1), not stopped again"
  no_process "^/bin/sh $E2E_DIR/utmctl" "the blocked utmctl"
  ;;
*) fail "unknown manager $manager" ;;
esac
echo "ok: ^C in the start step on $manager: the VM stopped again"
