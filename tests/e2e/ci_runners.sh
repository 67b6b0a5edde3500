#!/usr/bin/env bash
# A CI runner that lives inside an ephemeral clone (issue 27 item 4; docs/ci-topologies.md), end to
# end on the simulator: the executor's prepare hook on the host (examples/ci-runners/prepare-host.sh)
# sets the preference before the clone starts, and the job inside the clone, where lume-metal runs
# as the guest's own program with no SSH and no VM manager, installs the bundle into its image's
# place, exports `local env` and runs the probe's kernels with the shim. A clone started before the
# hook keeps the restricted level: the shim answers, the kernels do not run.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
hook="$here/../../examples/ci-runners/prepare-host.sh"

sim_start --vm clone-1 --vm clone-2
export LUME_METAL="$LM_BIN"

# The job inside CLONE: the image's place filled by local install (in a real image it was filled at
# build time), the environment evaluated by the step's shell, the workload -- the probe with its
# kernels -- started by that shell. Its report in $E2E_DIR/CLONE.report.
job_in_clone() {
  plain_ssh "$1" "set -e
    '$LM_BIN' local install --prefix \"\$HOME/image\" >/dev/null
    eval \"\$('$LM_BIN' local env --prefix \"\$HOME/image\")\"
    metal-capabilities --report --exercise" >"$E2E_DIR/$1.report" 2>"$E2E_DIR/$1.err" ||
    fail "the job in $1: $(cat "$E2E_DIR/$1.report" "$E2E_DIR/$1.err")"
  grep -qx 'shim_active=1' "$E2E_DIR/$1.report" || fail "$1's job ran stock: $(cat "$E2E_DIR/$1.report")"
}
# clone_job CLONE LEVEL: the executor starts the clone, which must read LEVEL; then its job runs.
clone_job() {
  vm_run "$1"
  [ "$(cat "$(vm_dir "$1")/feature_level")" = "$2" ] || fail "$1 started $(cat "$(vm_dir "$1")/feature_level"), not $2"
  job_in_clone "$1"
}

note "a clone started before the hook: restricted level; the job's shim answers Apple9, the kernels fail"
clone_job clone-1 restricted
grep -qx 'family.Apple9=1' "$E2E_DIR/clone-1.report" && grep -q '^exercise.simdgroup_matrix=error' "$E2E_DIR/clone-1.report" ||
  fail "clone-1's report: $(cat "$E2E_DIR/clone-1.report")"

note "the prepare hook: the preference set (kept), then the executor's own prepare step runs"
printf '#!/bin/sh\nprintf "%%s\\n" "$*" >"%s/executor.args"\nplistutil -i "%s" -o - -f xml >"%s/executor.plist"\n' \
  "$E2E_DIR" "$PLIST" "$E2E_DIR" >"$E2E_DIR/executor"
chmod +x "$E2E_DIR/executor"
"$hook" "$E2E_DIR/executor" prepare --vm clone-2 >"$E2E_DIR/h1.out" 2>&1 || fail "hook: $(cat "$E2E_DIR/h1.out")"
[ "$(cat "$E2E_DIR/executor.args")" = "prepare --vm clone-2" ] || fail "the executor got: $(cat "$E2E_DIR/executor.args")"
grep -q '<true/>' "$E2E_DIR/executor.plist" || fail "the preference was not on when the executor ran: $(cat "$E2E_DIR/executor.plist")"
grep -q '^mode: kept' "$E2E_DIR/h1.out" || fail "hook output: $(cat "$E2E_DIR/h1.out")"
lm host status --format json >"$E2E_DIR/hs.json"
jq_is "$E2E_DIR/hs.json" .host_preference.mode kept

note "the clone the executor starts next reads it: unlocked; the job's kernels run with the shim"
clone_job clone-2 unlocked
grep -qx 'exercise.simdgroup_reduction=pass' "$E2E_DIR/clone-2.report" && grep -qx 'exercise.simdgroup_matrix=pass' "$E2E_DIR/clone-2.report" ||
  fail "clone-2's report: $(cat "$E2E_DIR/clone-2.report")"

note "the next job's hook: nothing changed, the executor runs; a hook without an executor just sets it"
before=$(stat -c '%i %Y' "$PLIST")
"$hook" "$E2E_DIR/executor" prepare again >"$E2E_DIR/h2.out" 2>&1 || fail "hook again: $(cat "$E2E_DIR/h2.out")"
grep -q 'already enabled' "$E2E_DIR/h2.out" && [ "$(cat "$E2E_DIR/executor.args")" = "prepare again" ] ||
  fail "hook again: $(cat "$E2E_DIR/h2.out")"
[ "$(stat -c '%i %Y' "$PLIST")" = "$before" ] || fail "the preference file was rewritten"
"$hook" >"$E2E_DIR/h3.out" 2>&1 || fail "hook alone: $(cat "$E2E_DIR/h3.out")"

note "a preference that cannot be written: the executor does not run, GitLab's system-failure code"
rm -f "$E2E_DIR/executor.args"
: >"$E2E_DIR/not-a-dir"
set +e
LUME_METAL_PREFS_DIR="$E2E_DIR/not-a-dir" SYSTEM_FAILURE_EXIT_CODE=42 "$hook" "$E2E_DIR/executor" prepare \
  >"$E2E_DIR/h4.out" 2>&1
rc=$?
set -e
[ "$rc" -eq 42 ] && [ ! -e "$E2E_DIR/executor.args" ] && grep -q 'keep the restricted GPU level' "$E2E_DIR/h4.out" ||
  fail "failing hook: exit $rc: $(cat "$E2E_DIR/h4.out")"
echo "ci runners: the prepare hook unlocks the next clone; the job inside it runs its kernels with local env"
