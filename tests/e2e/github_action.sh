#!/usr/bin/env bash
# The GitHub Action (examples/github-action): its main and post steps (the bundle, dist/) run as a
# runner runs a node24 action (tests/support/run-node-action) against the Lume simulator: outputs and the job summary
# from lume-metal's JSON, the post step's rollback after a job that succeeded, failed or was
# cancelled, failures in lume-metal's own words, the minimum version named.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/action_lib.sh"

# vm3 never gets an address: its enable waits, and is cancelled while it does.
sim_start --vm vm1 --vm vm2 --vm vm3 --never-ready vm3 --boot-delay 0 --stop-delay 0
vm_run vm1
vm_run vm2
export GITHUB_ENV="$E2E_DIR/github_env" RUNNER_TEMP="$E2E_DIR/runner_temp"
mkdir -p "$RUNNER_TEMP"; : >"$GITHUB_ENV"

# job NAME: a new job, with its own state (kept from main to post) and summary.
job() {
  export LM_ACTION_STATE_FILE="$E2E_DIR/$1.state" GITHUB_STEP_SUMMARY="$E2E_DIR/$1.summary"
  : >"$LM_ACTION_STATE_FILE"; : >"$GITHUB_STEP_SUMMARY"
}
home1=$(guest_home vm1); home2=$(guest_home vm2); home3=$(guest_home vm3)
enabled_in_journal() { jq -e --arg v "$1" '.vms[$v] != null' "$LUME_METAL_STATE_DIR/state.json" >/dev/null 2>&1; }

note "job 1, main: enable two VMs (both restarted); outputs, step lines, the probe table in the summary"
job j1
step "$E2E_DIR/e1" main vms="vm1 vm2"
[ "$STEP_RC" -eq 0 ] || fail "enable: $(cat "$E2E_DIR/e1" "$E2E_DIR/e1.log")"
expect_output "$E2E_DIR/e1" changed true
expect_output "$E2E_DIR/e1" restarted true
expect_output "$E2E_DIR/e1" exit-code 0
[ "$(output "$E2E_DIR/e1" results | jq -c .)" = '{"vm1":"ok","vm2":"ok"}' ] || fail "results: $(cat "$E2E_DIR/e1")"
json=$(output "$E2E_DIR/e1" json)
jq_is "$json" '.command' enable
jq_is "$json" '[.vms[].restarted] | all' true
grep -Eq '^vm1: [a-z-]+ done \([0-9]+\.[0-9]{2} s\)' "$E2E_DIR/e1.log" || fail "no step lines as they happened: $(cat "$E2E_DIR/e1.log")"
# The fleet as one table: a header, then a row per VM (manager, enabled, restarted, family, kernels).
[ "$(grep -o '<th>VM</th><th>result</th><th>manager</th><th>enabled</th><th>restarted</th><th>highest Apple family</th><th>kernels</th><th>message</th>' "$GITHUB_STEP_SUMMARY" | wc -l)" -eq 1 ] ||
  fail "summary: not one fleet table: $(cat "$GITHUB_STEP_SUMMARY")"
for i in 0 1; do
  vm=$(jq -r ".vms[$i].vm" "$json")
  kernels=$(jq -r ".vms[$i].exercise | to_entries | map(select(.key | IN(\"threadgroup_memory\", \"nocopy_buffer\", \"indirect_command_buffer\") | not)) | \"\(map(select(.value.result == \"pass\")) | length)/\(length) pass\"" "$json")
  summary_row "$GITHUB_STEP_SUMMARY" "$vm" ok "$(jq -r ".vms[$i].manager" "$json")" yes yes \
    "$(jq -r ".vms[$i].shimmed.highest_apple_family" "$json")" "$kernels" "$(jq -r ".vms[$i].message" "$json")" ||
    fail "summary: no row for $vm ($kernels): $(cat "$GITHUB_STEP_SUMMARY")"
done
stock_tg=$(jq -r '.vms[0].stock.max_threadgroup_memory' "$json"); shim_tg=$(jq -r '.vms[0].shimmed.max_threadgroup_memory' "$json")
summary_row "$GITHUB_STEP_SUMMARY" "max threadgroup memory (reported)" "$stock_tg" "$shim_tg" &&
  summary_row "$GITHUB_STEP_SUMMARY" "shim active" no yes &&
  grep -q '<tr><td>exercise: ' "$GITHUB_STEP_SUMMARY" &&
  grep -qF "<p>$shim_tg bytes of threadgroup memory is the value the device reports with the shim; kernels run with up to $(jq -r '.vms[0].exercise.threadgroup_memory.largest' "$json"). llama.cpp uses the reported value only in assertions.</p>" "$GITHUB_STEP_SUMMARY" ||
  fail "summary: no probe table: $(cat "$GITHUB_STEP_SUMMARY")"
# The CLI's words (probe --exercise): the threadgroup memory that runs, the known defects "not
# shown" (their kernels passed), never "pass"; the recap line last, as the CLI ends a fleet run.
summary_row "$GITHUB_STEP_SUMMARY" "exercise: threadgroup memory that runs" " " \
    "$(jq -r '.vms[0].exercise.threadgroup_memory.largest' "$json") bytes" ||
  fail "summary: the threadgroup memory row: $(cat "$GITHUB_STEP_SUMMARY")"
for d in nocopy_buffer indirect_command_buffer; do
  [ "$(jq -r ".vms[0].exercise.$d.result" "$json")" = pass ] || continue
  summary_row "$GITHUB_STEP_SUMMARY" "known defect (reported, not required): $d" " " "not shown" ||
    fail "summary: the $d row does not say 'not shown': $(cat "$GITHUB_STEP_SUMMARY")"
done
! grep -q "<td>exercise: \(nocopy_buffer\|indirect_command_buffer\)" "$GITHUB_STEP_SUMMARY" ||
  fail "summary: a known defect shown as an exercise: $(cat "$GITHUB_STEP_SUMMARY")"
tail -n 1 "$GITHUB_STEP_SUMMARY" | grep -Eqx '<p>2 enabled, 0 failed in [0-9]+\.[0-9] s</p>' ||
  fail "summary: does not end with the recap line: $(tail -n 3 "$GITHUB_STEP_SUMMARY")"
[ -L "$home1/.local/share/lume-metal/current" ] && [ -L "$home2/.local/share/lume-metal/current" ] ||
  fail "bundle not installed"

note "job 2 (while job 1 runs its workload), rollback-at-end false: nothing changed, nothing to roll back"
job j2
step "$E2E_DIR/e2" main vms="vm1
vm2" jobs=1 rollback-at-end=false
[ "$STEP_RC" -eq 0 ] || fail "re-enable: $(cat "$E2E_DIR/e2" "$E2E_DIR/e2.log")"
expect_output "$E2E_DIR/e2" changed false
expect_output "$E2E_DIR/e2" restarted false
jq_is "$(output "$E2E_DIR/e2" json)" '[.vms[].enabled] | all' true
step "$E2E_DIR/p2" post vms="vm1 vm2" rollback-at-end=false
[ "$STEP_RC" -eq 0 ] && grep -q 'nothing to roll back' "$E2E_DIR/p2.log" || fail "post without rollback: $(cat "$E2E_DIR/p2.log")"
[ -L "$home1/.local/share/lume-metal/current" ] || fail "job 2's post rolled back"

note "job 1, post: the VMs are rolled back"
LM_ACTION_STATE_FILE="$E2E_DIR/j1.state" GITHUB_STEP_SUMMARY="$E2E_DIR/j1.summary" step "$E2E_DIR/p1" post vms="vm1 vm2"
[ "$STEP_RC" -eq 0 ] || fail "post: $(cat "$E2E_DIR/p1.log")"
grep -q '<tr><td>vm1</td><td>ok</td>' "$E2E_DIR/j1.summary" && grep -qx '<h3>lume-metal rollback</h3>' "$E2E_DIR/j1.summary" &&
  tail -n 1 "$E2E_DIR/j1.summary" | grep -Eqx '<p>2 rolled back, 0 failed in [0-9]+\.[0-9] s</p>' ||
  fail "summary: no rollback: $(cat "$E2E_DIR/j1.summary")"
[ ! -e "$home1/.local/share/lume-metal" ] && [ ! -e "$home2/.local/share/lume-metal" ] || fail "guest files left"
! enabled_in_journal vm1 && ! enabled_in_journal vm2 || fail "journal: $(cat "$LUME_METAL_STATE_DIR/state.json")"

note "a failed job: a VM that does not exist fails main in lume-metal's words; post rolls back the other"
job j3
step "$E2E_DIR/bad" main vms="vm1 no-such-vm"
[ "$STEP_RC" -eq 3 ] || fail "partial failure: exit $STEP_RC, expected 3: $(cat "$E2E_DIR/bad.log")"
expect_output "$E2E_DIR/bad" exit-code 3
[ "$(output "$E2E_DIR/bad" results | jq -r '."no-such-vm"')" = failed ] || fail "results: $(cat "$E2E_DIR/bad")"
message=$(jq -r '.vms[] | select(.vm == "no-such-vm") | .error.message' "$(output "$E2E_DIR/bad" json)")
grep -qF "::error title=lume-metal no-such-vm::$message" "$E2E_DIR/bad.log" || fail "no ::error with '$message': $(cat "$E2E_DIR/bad.log")"
# lume-metal's backticks are code in the summary, never shown literally; the recap counts the failure.
! grep -q '`' "$GITHUB_STEP_SUMMARY" && tail -n 1 "$GITHUB_STEP_SUMMARY" | grep -Eqx '<p>1 enabled, 1 failed in [0-9]+\.[0-9] s</p>' ||
  fail "summary of the failed job: $(cat "$GITHUB_STEP_SUMMARY")"
if jq -e '.error.hint // "" | test("`")' "$(output "$E2E_DIR/bad" json)" >/dev/null; then
  grep -q '<code>' "$GITHUB_STEP_SUMMARY" || fail "summary: the hint's code lost: $(cat "$GITHUB_STEP_SUMMARY")"
fi
[ -L "$home1/.local/share/lume-metal/current" ] || fail "vm1 not enabled"
step "$E2E_DIR/pbad" post vms="vm1 no-such-vm"
[ ! -e "$home1/.local/share/lume-metal" ] && ! enabled_in_journal vm1 || fail "failed job: vm1 not rolled back: $(cat "$E2E_DIR/pbad.log")"

note "a job cancelled while enable waits for its VM: lume-metal undoes it, post finds nothing left"
job j4
[ "$(vm_status vm3)" = stopped ] || fail "vm3: $(vm_status vm3)"
runs_before=$(count_requests POST /vm3/run)
"$runner" "$action" main --input "lume-metal=$LM_BIN" --input vms=vm3 --input jobs=1 \
  >"$E2E_DIR/c1" 2>"$E2E_DIR/c1.log" &
main_pid=$!
E2E_MORE_SIMS+=("$main_pid")
wait_for 60 "enable never started vm3: $(cat "$E2E_DIR/c1.log")" \
  eval '[ "$(count_requests POST /vm3/run)" -gt "$runs_before" ]'
kill -INT "$main_pid"
set +e; wait "$main_pid"; STEP_RC=$?; set -e
[ "$STEP_RC" -ne 0 ] || fail "cancelled main exited 0: $(cat "$E2E_DIR/c1.log")"
grep -q 'SIGINT: the job is being cancelled' "$E2E_DIR/c1.log" && grep -q '::error title=lume-metal vm3::' "$E2E_DIR/c1.log" ||
  fail "cancelled main: $(cat "$E2E_DIR/c1.log")"
jq_is "$(output "$E2E_DIR/c1" json)" '.vms[0].error.code' canceled
step "$E2E_DIR/pc" post vms=vm3 jobs=1
[ "$STEP_RC" -eq 0 ] || fail "post after cancel: exit $STEP_RC: $(cat "$E2E_DIR/pc.log")"
grep -q '^vm3: ok' "$E2E_DIR/pc.log" || fail "post after cancel: $(cat "$E2E_DIR/pc.log")"
wait_for 30 "vm3 not stopped again: $(vm_status vm3)" eval '[ "$(vm_status vm3)" = stopped ]'
[ ! -e "$home3/.local/share/lume-metal" ] && ! enabled_in_journal vm3 || fail "cancelled job left vm3 enabled"

note "bad inputs and a lume-metal too old: refused before enable runs, the minimum version named"
job j5
step "$E2E_DIR/empty" main vms=""
[ "$STEP_RC" -eq 1 ] && grep -q '::error title=lume-metal::the vms input is empty' "$E2E_DIR/empty.log" ||
  fail "empty vms: exit $STEP_RC: $(cat "$E2E_DIR/empty.log")"
step "$E2E_DIR/dash" main vms="--all"
[ "$STEP_RC" -eq 1 ] && grep -q "VM name '--all' starts with '-'" "$E2E_DIR/dash.log" || fail "--all as a VM: $(cat "$E2E_DIR/dash.log")"
step "$E2E_DIR/rae" main vms=vm1 rollback-at-end=yes
[ "$STEP_RC" -eq 1 ] && grep -q "rollback-at-end is 'yes'" "$E2E_DIR/rae.log" || fail "rollback-at-end=yes: $(cat "$E2E_DIR/rae.log")"
min=$(sed -n 's/^export const MIN_VERSION = "\(.*\)";/\1/p' "$action/src/lib.js")
grep -q "^## \[$min\]" "$here/../../CHANGELOG.md" || fail "MIN_VERSION $min is no release in CHANGELOG.md"
printf '#!/bin/sh\necho "lume-metal 0.0.9"\n' >"$E2E_DIR/old-lume-metal"; chmod +x "$E2E_DIR/old-lume-metal"
"$runner" "$action" main --input "lume-metal=$E2E_DIR/old-lume-metal" --input vms=vm1 >"$E2E_DIR/old" 2>"$E2E_DIR/old.log" && fail "an old lume-metal was accepted"
grep -qF "::error title=lume-metal::$E2E_DIR/old-lume-metal is lume-metal 0.0.9; this action needs $min or later" "$E2E_DIR/old.log" ||
  fail "old lume-metal: $(cat "$E2E_DIR/old.log")"
step "$E2E_DIR/pold" post vms=vm1
[ "$STEP_RC" -eq 0 ] && grep -q 'nothing to roll back' "$E2E_DIR/pold.log" || fail "post after refused inputs: $(cat "$E2E_DIR/pold.log")"
step "$E2E_DIR/hp" main vms=vm1 host-preference=sometimes
[ "$STEP_RC" -eq 1 ] && grep -q "host-preference is 'sometimes': it is always, auto, never or empty" "$E2E_DIR/hp.log" ||
  fail "host-preference=sometimes: $(cat "$E2E_DIR/hp.log")"

note "host-preference: no --host-preference unless the input is set (a lume-metal that records its argv)"
cat >"$E2E_DIR/argv-lume-metal" <<EOF
#!/bin/sh
[ "\$1" = --version ] && exec "$LM_BIN" --version
printf '%s\n' "\$@" >"$E2E_DIR/argv.\$\$"; mv "$E2E_DIR/argv.\$\$" "$E2E_DIR/argv"
echo '{"schema":2,"command":"enable","error":null,"vms":[]}'
EOF
chmod +x "$E2E_DIR/argv-lume-metal"
job j6
for hp in "" auto; do
  "$runner" "$action" main --input "lume-metal=$E2E_DIR/argv-lume-metal" --input vms=vm1 --input rollback-at-end=false \
    --input "host-preference=$hp" >"$E2E_DIR/hp-$hp" 2>"$E2E_DIR/hp-$hp.log" ||
    fail "main with host-preference '$hp': $(cat "$E2E_DIR/hp-$hp.log")"
  want="--format jsonl enable --keep-host --jobs 1 ${hp:+--host-preference $hp }vm1 "
  [ "$(tr '\n' ' ' <"$E2E_DIR/argv")" = "$want" ] || fail "host-preference '$hp': argv $(tr '\n' ' ' <"$E2E_DIR/argv"), expected $want"
done
echo "github action: main, summary, post after success, failure and cancellation, refusals, host-preference as expected"

