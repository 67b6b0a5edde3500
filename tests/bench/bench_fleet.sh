#!/usr/bin/env bash
# Part of bench-enable (figures, not a test): a fleet on one simulator that ignores Apple's two-VM
# limit, 1 s boot and 0.3 s stop delay, every VM running from before the preference changes (so
# each needs a restart): `enable` of one VM, its rollback (the preference given back), then
# `enable --jobs 16` of 16 others; both runs set the preference. Before them, the simulator alone
# restarts the one VM, then the 16 (the floor). Writes "one SECONDS", "sixteen SECONDS",
# "floor_one SECONDS", "floor_sixteen SECONDS", "cpu_sixteen SECONDS" (the machine's busy CPU time
# during the 16-VM run), "cores N" and per step "step NAME ONE MEAN MAX" to the file $1.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench_lib.sh"
out=$1

vms=(--vm solo)
fleet=()
for i in $(seq 1 16); do vms+=(--vm "f$i"); fleet+=("f$i"); done
sim_start "${vms[@]}" --max-running 17 --boot-delay 1 --stop-delay 0.3
vm_run solo
for vm in "${fleet[@]}"; do vm_run "$vm"; done

# The floor: the simulator alone restarting the same VMs through its API (stop, run, until every
# one says sshAvailable), no lume-metal. Its guests share this machine's cores, where a Mac gives
# each VM its own: what 16 restarts cost here beyond one is the machine's, and lume-metal's own
# share is what its runs take beyond this. One list request every 0.1 s watches them all.
sim_restart() { # VM...: seconds until all are running again with SSH answering
  local t0 t1 vm
  t0=$(now)
  for vm in "$@"; do
    { curl -fsS -X POST "$LUME_METAL_LUME_URL/lume/vms/$vm/stop" >/dev/null &&
      curl -fsS -X POST -d '{"noDisplay":true}' "$LUME_METAL_LUME_URL/lume/vms/$vm/run" >/dev/null; } &
  done
  wait
  until [ "$(curl -fsS "$LUME_METAL_LUME_URL/lume/vms" |
    jq --argjson want "$(printf '%s\n' "$@" | jq -R . | jq -s .)" \
      '[.[] | select(.name as $n | $want | index($n)) | select(.sshAvailable == true)] | length')" = $# ]; do
    sleep 0.1
  done
  t1=$(now)
  echo "$t1 - $t0" | bc -l
}
floor_one=$(sim_restart solo)
floor_16=$(sim_restart "${fleet[@]}")

t0=$(now); lm_json "$E2E_DIR/one.json" enable solo; t1=$(now)
expect_rc 0 "$E2E_DIR/one.json"
jq_is "$E2E_DIR/one.json" '.vms[0].restarted' true
jq_is "$E2E_DIR/one.json" '.host_preference_changed' true
one=$(echo "$t1 - $t0" | bc -l)
# Like for like: the fleet starts where the one VM started, with the preference not set (the
# rollback gives it back), so that neither run finds it set by the other.
lm_json "$E2E_DIR/rollback.json" rollback solo
expect_rc 0 "$E2E_DIR/rollback.json"
jq_is "$E2E_DIR/rollback.json" '.host_preference_restored' true

# The machine's busy CPU time (every process: lume-metal, the simulator, its guests) over the run.
busy() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8}' /proc/stat; }
b0=$(busy)
t0=$(now); lm_json "$E2E_DIR/sixteen.json" enable --jobs 16 "${fleet[@]}"; t1=$(now)
b1=$(busy)
expect_rc 0 "$E2E_DIR/sixteen.json"
jq_is "$E2E_DIR/sixteen.json" '[.vms[].restarted] | all' true
jq_is "$E2E_DIR/sixteen.json" '.vms | length' 16
jq_is "$E2E_DIR/sixteen.json" '.host_preference_changed' true
sixteen=$(echo "$t1 - $t0" | bc -l)
printf 'one %s\nsixteen %s\nfloor_one %s\nfloor_sixteen %s\n' "$one" "$sixteen" "$floor_one" "$floor_16" >"$out"
printf 'cpu_sixteen %s\ncores %s\n' "$(echo "($b1 - $b0) / $(getconf CLK_TCK)" | bc -l)" "$(nproc)" >>"$out"
# Where the time went: each step's seconds for the one VM, and the mean and the longest of the 16.
jq -r --slurpfile one "$E2E_DIR/one.json" --argjson vms "$(jq -c .vms "$E2E_DIR/sixteen.json")" '
  def per_vm($n): [.steps[] | select(.name == $n) | .seconds] | add // 0;
  [.vms[].steps[].name] | unique[] as $n |
  "step \($n) \($one[0].vms[0] | per_vm($n)) \(([$vms[] | per_vm($n)] | add) / 16) \([$vms[] | per_vm($n)] | max)"' \
  "$E2E_DIR/sixteen.json" >>"$out"
