#!/usr/bin/env bash
# The GitHub Action (examples/github-action): its shell steps run as a runner runs them
# (tests/support/run-composite-action) against the Lume simulator: outputs from lume-metal's JSON,
# the recorded rollback at the end, failures in lume-metal's own words.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
action=$(cd "$here/../../examples/github-action" && pwd)
runner="$here/../support/run-composite-action"

sim_start --vm vm1 --vm vm2 --boot-delay 0 --stop-delay 0
vm_run vm1
vm_run vm2
# Until lume-metal is on the runner's PATH, the step is given the built program.
export GITHUB_ENV="$E2E_DIR/github_env" RUNNER_TEMP="$E2E_DIR/runner_temp"
mkdir -p "$RUNNER_TEMP"; : >"$GITHUB_ENV"

# step OUT INPUT...: the action's steps with those inputs; outputs in OUT, exit code in STEP_RC,
# what the step printed in OUT.log.
step() {
  local out=$1; shift
  local args=(--input "lume-metal=$LM_BIN") i
  for i in "$@"; do args+=(--input "$i"); done
  set +e
  "$runner" "$action" "${args[@]}" >"$out" 2>"$out.log"
  STEP_RC=$?
  set -e
}
output() { jq -r --arg n "$2" '.[$n]' "$1"; }
expect_output() { # OUT NAME VALUE
  local got; got=$(output "$1" "$2")
  [ "$got" = "$3" ] || fail "output $2: expected '$3', found '$got' ($(cat "$1" "$1.log"))"
}
home1=$(guest_home vm1); home2=$(guest_home vm2)

note "enable two VMs (both restarted), rollback at the end requested"
step "$E2E_DIR/e1" vms="vm1 vm2" rollback-at-end=true
[ "$STEP_RC" -eq 0 ] || fail "enable: $(cat "$E2E_DIR/e1" "$E2E_DIR/e1.log")"
expect_output "$E2E_DIR/e1" changed true
expect_output "$E2E_DIR/e1" restarted true
expect_output "$E2E_DIR/e1" exit-code 0
[ "$(output "$E2E_DIR/e1" results | jq -c .)" = '{"vm1":"ok","vm2":"ok"}' ] || fail "results: $(cat "$E2E_DIR/e1")"
json=$(output "$E2E_DIR/e1" json)
jq_is "$json" '.command' enable
jq_is "$json" '[.vms[].restarted] | all' true
grep -qx 'LUME_METAL_ACTION_ROLLBACK_VMS=vm1 vm2' "$GITHUB_ENV" || fail "rollback not recorded: $(cat "$GITHUB_ENV")"
[ -L "$home1/.local/share/lume-metal/current" ] && [ -L "$home2/.local/share/lume-metal/current" ] ||
  fail "bundle not installed"

note "the next job's enable: nothing changed, nothing restarted"
step "$E2E_DIR/e2" vms="vm1
vm2" jobs=1
[ "$STEP_RC" -eq 0 ] || fail "re-enable: $(cat "$E2E_DIR/e2" "$E2E_DIR/e2.log")"
expect_output "$E2E_DIR/e2" changed false
expect_output "$E2E_DIR/e2" restarted false
jq_is "$(output "$E2E_DIR/e2" json)" '[.vms[].enabled] | all' true

note "a VM that does not exist: the step fails with lume-metal's own message"
step "$E2E_DIR/bad" vms="vm1 no-such-vm"
[ "$STEP_RC" -eq 3 ] || fail "partial failure: exit $STEP_RC, expected 3: $(cat "$E2E_DIR/bad.log")"
expect_output "$E2E_DIR/bad" exit-code 3
[ "$(output "$E2E_DIR/bad" results | jq -r '."no-such-vm"')" = failed ] || fail "results: $(cat "$E2E_DIR/bad")"
message=$(jq -r '.vms[] | select(.vm == "no-such-vm") | .error.message' "$(output "$E2E_DIR/bad" json)")
grep -qF "::error title=lume-metal no-such-vm::$message" "$E2E_DIR/bad.log" || fail "no ::error with '$message': $(cat "$E2E_DIR/bad.log")"

note "bad inputs: refused before lume-metal runs"
step "$E2E_DIR/empty" vms=""
[ "$STEP_RC" -eq 1 ] && grep -q '::error title=lume-metal::the vms input is empty' "$E2E_DIR/empty.log" ||
  fail "empty vms: exit $STEP_RC: $(cat "$E2E_DIR/empty.log")"
step "$E2E_DIR/dash" vms="--all"
[ "$STEP_RC" -eq 1 ] && grep -q "VM name '--all' starts with '-'" "$E2E_DIR/dash.log" || fail "--all as a VM: $(cat "$E2E_DIR/dash.log")"
step "$E2E_DIR/mode" mode=disable vms=vm1
[ "$STEP_RC" -eq 1 ] && grep -q "mode 'disable' is neither enable nor rollback" "$E2E_DIR/mode.log" || fail "bad mode: $(cat "$E2E_DIR/mode.log")"

note "the job's last step: rollback of what the enable step recorded"
step "$E2E_DIR/r1" mode=rollback
[ "$STEP_RC" -eq 0 ] || fail "rollback: $(cat "$E2E_DIR/r1" "$E2E_DIR/r1.log")"
expect_output "$E2E_DIR/r1" changed true
[ "$(output "$E2E_DIR/r1" results | jq -c .)" = '{"vm1":"ok","vm2":"ok"}' ] || fail "results: $(cat "$E2E_DIR/r1")"
[ ! -e "$home1/.local/share/lume-metal" ] && [ ! -e "$home2/.local/share/lume-metal" ] || fail "guest files left"

note "a job whose enable step did not ask for it: the last step does nothing"
: >"$GITHUB_ENV"
step "$E2E_DIR/r2" mode=rollback
[ "$STEP_RC" -eq 0 ] || fail "rollback without a record: $(cat "$E2E_DIR/r2.log")"
expect_output "$E2E_DIR/r2" changed false
grep -q 'nothing to roll back' "$E2E_DIR/r2.log" || fail "$(cat "$E2E_DIR/r2.log")"
echo "github action: enable, re-enable, failures, rollback as expected"
