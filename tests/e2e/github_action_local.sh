#!/usr/bin/env bash
# The GitHub Action's local mode (examples/github-action, `mode: local`; issue 27 item 3): its main
# and post steps (the bundle, dist/) run as a runner runs a node24 action (tests/support/run-node-action) on this
# machine made a hosted runner's VM (guest-sshd machine: the fake Metal at a level, the macOS
# stand-ins), as e2e_github_action runs the fleet mode against the simulator: the probe table in
# the job summary, the environment exported through $GITHUB_ENV and taken by the next step's
# workload, the kernels that do not run failing the step or skipping it, refusals.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/action_lib.sh"
ACTION_INPUTS+=(--input mode=local)
MACHINE=$E2E_DIR/machine
export RUNNER_TEMP="$E2E_DIR/runner_temp" GITHUB_ENV="$E2E_DIR/github_env"
mkdir -p "$RUNNER_TEMP"; chmod 755 "$RUNNER_TEMP"

# machine LEVEL: this machine as a hosted runner's VM whose host started it at LEVEL.
machine() { eval "$("$GUEST_SSHD" machine --dir "$MACHINE" --metal-dir "$LM_FAKE_METAL" --feature-level "$1")"; }
# job NAME: a new job: its own state, summary and $GITHUB_ENV.
job() {
  export LM_ACTION_STATE_FILE="$E2E_DIR/$1.state" GITHUB_STEP_SUMMARY="$E2E_DIR/$1.summary"
  : >"$LM_ACTION_STATE_FILE"; : >"$GITHUB_STEP_SUMMARY"; : >"$GITHUB_ENV"; : >"$GITHUB_PATH"
}
# next_step CMD...: a later step of the job as the runner starts it: its shell with the job's
# $GITHUB_ENV variables (read as the runner reads them) and $GITHUB_PATH's directories in front of
# PATH (the latest first), the command in it.
next_step() {
  local vars=() added
  mapfile -d '' vars < <("$runner" --env "$GITHUB_ENV")
  added=$(tac "$GITHUB_PATH" | paste -sd:)
  env "${vars[@]}" PATH="${added:+$added:}$PATH" bash -c "$1"
}

note "a runner whose host started it unlocked: proven; the table in the summary; the next step's workload gets the shim"
machine unlocked
job j1
step "$E2E_DIR/m1" main
[ "$STEP_RC" -eq 0 ] || fail "main: exit $STEP_RC: $(cat "$E2E_DIR/m1" "$E2E_DIR/m1.log")"
expect_output "$E2E_DIR/m1" proven true
expect_output "$E2E_DIR/m1" looks-like-vm true
expect_output "$E2E_DIR/m1" exit-code 0
expect_output "$E2E_DIR/m1" changed true
json=$(output "$E2E_DIR/m1" json)
jq_is "$json" .command "local probe"
jq_is "$json" .machine.kernels_ran true
grep -qx '<h3>lume-metal local probe</h3>' "$GITHUB_STEP_SUMMARY" &&
  summary_row "$GITHUB_STEP_SUMMARY" "shim active" no yes &&
  summary_row "$GITHUB_STEP_SUMMARY" "exercise: simdgroup_matrix" " " pass &&
  grep -qF '<tr><td>highest Apple family</td><td>' "$GITHUB_STEP_SUMMARY" &&
  grep -q '^<p>looks like a VM: yes (kern.hv_vmm_present: yes; stock device: Apple Paravirtual device)' "$GITHUB_STEP_SUMMARY" &&
  grep -q 'later steps run their workload with <code>env &quot;$LUME_METAL_INJECT&quot; CMD</code>' "$GITHUB_STEP_SUMMARY" ||
  fail "summary: $(cat "$GITHUB_STEP_SUMMARY")"
prefix="$RUNNER_TEMP/lume-metal-image"
exported() { "$runner" --env "$GITHUB_ENV" | tr '\0' '\n'; }
exported | grep -qxF "LUME_METAL_INJECT=LD_PRELOAD=$prefix/lib/lume-metal/current/liblume-metal-shim.so" &&
  exported | grep -qx 'LUME_METAL_APPLE_FAMILY_MAX=1009' || fail "GITHUB_ENV: $(cat "$GITHUB_ENV")"
# PATH through $GITHUB_PATH (core.addPath), the bundle's tools first, never the whole PATH frozen in
# $GITHUB_ENV (issue 50).
! exported | grep -q '^PATH=' || fail "PATH exported whole: $(exported | grep '^PATH=')"
# The runner puts the latest line first: the bundle's tools, then Homebrew's.
[ "$(tac "$GITHUB_PATH" | paste -sd:)" = "$prefix/lib/lume-metal/current:/opt/homebrew/bin:/usr/local/bin" ] ||
  fail "GITHUB_PATH: $(cat "$GITHUB_PATH")"
next_step 'env "$LUME_METAL_INJECT" metal-capabilities --report --exercise' >"$E2E_DIR/next.report" ||
  fail "the next step: $(cat "$E2E_DIR/next.report")"
grep -qx 'shim_active=1' "$E2E_DIR/next.report" && grep -qx 'exercise.simdgroup_matrix=pass' "$E2E_DIR/next.report" ||
  fail "the next step's workload: $(cat "$E2E_DIR/next.report")"
next_step 'metal-capabilities --report' >"$E2E_DIR/plain.report"
grep -qx 'shim_active=0' "$E2E_DIR/plain.report" || fail "a process started without the injection got the shim"
step "$E2E_DIR/p1" post
[ "$STEP_RC" -eq 0 ] && grep -q 'local mode: nothing to roll back' "$E2E_DIR/p1.log" || fail "post: $(cat "$E2E_DIR/p1.log")"
[ ! -e "$PLIST" ] || fail "the host preference was written: $(plist_xml)"

note "the same runner, a second job: the bundle already installed, nothing changed"
job j2
step "$E2E_DIR/m2" main profile=published
[ "$STEP_RC" -eq 0 ] || fail "main again: $(cat "$E2E_DIR/m2.log")"
expect_output "$E2E_DIR/m2" changed false
exported | grep -q '^LUME_METAL_INJECT=' || fail "nothing exported the second time"

note "a runner whose host left it restricted: the shim answers, the kernels do not run; fail (the default)"
machine restricted
job j3
step "$E2E_DIR/m3" main
[ "$STEP_RC" -eq 4 ] || fail "unproven, fail: exit $STEP_RC, expected 4: $(cat "$E2E_DIR/m3.log")"
expect_output "$E2E_DIR/m3" proven false
expect_output "$E2E_DIR/m3" exit-code 4
message=$(jq -r .error.message "$(output "$E2E_DIR/m3" json)")
grep -qF "::error title=lume-metal::$message" "$E2E_DIR/m3.log" || fail "no ::error with '$message': $(cat "$E2E_DIR/m3.log")"
summary_row "$GITHUB_STEP_SUMMARY" "shim active" no yes && grep -q 'the step fails (on-unproven: fail)' "$GITHUB_STEP_SUMMARY" ||
  fail "summary: $(cat "$GITHUB_STEP_SUMMARY")"
[ ! -s "$GITHUB_ENV" ] || fail "exported although unproven: $(cat "$GITHUB_ENV")"

note "the same with on-unproven: skip: the step succeeds, says why, exports nothing"
job j4
step "$E2E_DIR/m4" main on-unproven=skip
[ "$STEP_RC" -eq 0 ] || fail "unproven, skip: exit $STEP_RC: $(cat "$E2E_DIR/m4.log")"
expect_output "$E2E_DIR/m4" proven false
grep -q '^::notice title=lume-metal::the kernels the profile needs did not run on this machine; nothing exported' "$E2E_DIR/m4.log" ||
  fail "no notice: $(cat "$E2E_DIR/m4.log")"
grep -q 'skipped, nothing exported; later steps run stock' "$GITHUB_STEP_SUMMARY" || fail "summary: $(cat "$GITHUB_STEP_SUMMARY")"
[ ! -s "$GITHUB_ENV" ] || fail "exported although skipped: $(cat "$GITHUB_ENV")"

note "bad inputs: refused before lume-metal runs"
job j5
step "$E2E_DIR/b1" main on-unproven=maybe
[ "$STEP_RC" -eq 1 ] && grep -q "::error title=lume-metal::on-unproven is 'maybe'" "$E2E_DIR/b1.log" || fail "on-unproven=maybe: $(cat "$E2E_DIR/b1.log")"
step "$E2E_DIR/b2" main vms=vm1
[ "$STEP_RC" -eq 1 ] && grep -q 'the vms input is for fleet mode' "$E2E_DIR/b2.log" || fail "vms in local mode: $(cat "$E2E_DIR/b2.log")"
set +e
"$runner" "$action" main --input "lume-metal=$LM_BIN" --input mode=remote >"$E2E_DIR/b3" 2>"$E2E_DIR/b3.log"; rc=$?
set -e
[ "$rc" -eq 1 ] && grep -q "mode is 'remote'" "$E2E_DIR/b3.log" || fail "mode=remote: $(cat "$E2E_DIR/b3.log")"
echo "github action, local mode: proven and exported, failed or skipped when the kernels do not run, refusals"
