#!/usr/bin/env bash
# Part of bench-enable (figures, not a test): a fleet on one simulator that ignores Apple's two-VM
# limit, 1 s boot and 0.3 s stop delay, every VM running from before the preference changes (so
# each needs a restart): `enable` of one VM, then `enable --jobs 16` of 16 others. Writes
# "one SECONDS", "sixteen SECONDS" and per step "step NAME ONE MEAN MAX" to the file $1.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
out=$1

now() { date +%s.%N; }
vms=(--vm solo)
fleet=()
for i in $(seq 1 16); do vms+=(--vm "f$i"); fleet+=("f$i"); done
sim_start "${vms[@]}" --max-running 17 --boot-delay 1 --stop-delay 0.3
vm_run solo
for vm in "${fleet[@]}"; do vm_run "$vm"; done

t0=$(now); lm_json "$E2E_DIR/one.json" enable solo; t1=$(now)
expect_rc 0 "$E2E_DIR/one.json"
jq_is "$E2E_DIR/one.json" '.vms[0].restarted' true
one=$(echo "$t1 - $t0" | bc -l)

t0=$(now); lm_json "$E2E_DIR/sixteen.json" enable --jobs 16 "${fleet[@]}"; t1=$(now)
expect_rc 0 "$E2E_DIR/sixteen.json"
jq_is "$E2E_DIR/sixteen.json" '[.vms[].restarted] | all' true
jq_is "$E2E_DIR/sixteen.json" '.vms | length' 16
sixteen=$(echo "$t1 - $t0" | bc -l)
printf 'one %s\nsixteen %s\n' "$one" "$sixteen" >"$out"
# Where the time went: each step's seconds for the one VM, and the mean and the longest of the 16.
jq -r --slurpfile one "$E2E_DIR/one.json" --argjson vms "$(jq -c .vms "$E2E_DIR/sixteen.json")" '
  def per_vm($n): [.steps[] | select(.name == $n) | .seconds] | add // 0;
  [.vms[].steps[].name] | unique[] as $n |
  "step \($n) \($one[0].vms[0] | per_vm($n)) \(([$vms[] | per_vm($n)] | add) / 16) \([$vms[] | per_vm($n)] | max)"' \
  "$E2E_DIR/sixteen.json" >>"$out"
