#!/usr/bin/env bash
# Benchmark (figures, not a test): an ephemeral CI fleet on the Lume simulator (issue 17).
# JOBS jobs in a row (default 50), each: `lume clone base ci-N` -> start it (Lume's API) ->
# `lume-metal enable ci-N` -> a workload through `lume-metal run` -> `lume-metal rollback` ->
# stop -> `lume delete ci-N --force`, the host kept unlocked (`host enable --keep`). Prints:
#  - VM restarts after the first job (the fleet mode's promise: 0),
#  - the median per-job `enable` time, and as a ratio to one OpenSSH `ssh host true`,
#  - the journal's size after job 1 and after the last job (bounded: equal).
# The simulator's guests boot 0.2 s after their start; a boot margin of 0.5 s stands for the 30 s
# a Mac's firmware takes (docs/lume-metal.md, "When a VM is restarted").
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench_lib.sh"

JOBS=${JOBS:-50}

sim_start --vm base --lume-home "$HOME/.lume"

# One OpenSSH `ssh host true` into a fresh clone, password auth as the guests use (median of 10).
lume_cli clone base ssh-ref >/dev/null
vm_run ssh-ref
addr=$(curl -fsS "$LUME_METAL_LUME_URL/lume/vms/ssh-ref" | jq -r .ipAddress)
openssh_askpass "$E2E_DIR"
openssh_opts "$E2E_DIR/ssh_known_hosts"
setsid -w ssh "${sshopts[@]}" "lume@$addr" true </dev/null || fail "ssh host true"
for i in $(seq 1 10); do
  t0=$(now); setsid -w ssh "${sshopts[@]}" "lume@$addr" true </dev/null; t1=$(now)
  elapsed "$t0" "$t1"
done >"$E2E_DIR/ssh.times"
ssh_true=$(median <"$E2E_DIR/ssh.times")
curl -fsS -X POST "$LUME_METAL_LUME_URL/lume/vms/ssh-ref/stop" >/dev/null
lume_cli delete ssh-ref --force >/dev/null

lm_json "$E2E_DIR/h.json" host enable --keep
expect_rc 0 "$E2E_DIR/h.json"
restarts=0
: >"$E2E_DIR/enable.times"
for n in $(seq 1 "$JOBS"); do
  vm=ci-$n
  lume_cli clone base "$vm" >/dev/null || fail "job $n: clone"
  vm_run "$vm"
  t0=$(now)
  lm_json "$E2E_DIR/e.json" enable "$vm" --boot-margin 0.5
  t1=$(now)
  expect_rc 0 "$E2E_DIR/e.json"
  elapsed "$t0" "$t1" >>"$E2E_DIR/enable.times"
  if [ "$n" -gt 1 ] && [ "$(jq -r '.vms[0].restarted' "$E2E_DIR/e.json")" = true ]; then restarts=$((restarts + 1)); fi
  lm run "$vm" -- metal-capabilities 1009 >/dev/null || fail "job $n: run"
  lm_json "$E2E_DIR/r.json" rollback "$vm"
  expect_rc 0 "$E2E_DIR/r.json"
  curl -fsS -X POST "$LUME_METAL_LUME_URL/lume/vms/$vm/stop" >/dev/null
  lume_cli delete "$vm" --force >/dev/null || fail "job $n: delete"
  [ "$n" -eq 1 ] && size1=$(wc -c <"$LUME_METAL_STATE_DIR/state.json")
  [ $((n % 10)) -eq 0 ] && echo "  $n jobs done" >&2
done
sizeN=$(wc -c <"$LUME_METAL_STATE_DIR/state.json")
enable_median=$(median <"$E2E_DIR/enable.times")
pins=$(grep -c '^[A-Za-z0-9]' "$LUME_METAL_STATE_DIR/known_hosts" || true)

echo
echo "ephemeral CI fleet on the simulator: $JOBS jobs (clone, start, enable, run, rollback, delete), host kept unlocked"
echo
printf '  %-52s %s\n' "VM restarts after the first job" "$restarts"
printf '  %-52s %.3f s\n' "median per-job enable" "$enable_median"
printf '  %-52s %.3f s\n' "one OpenSSH \`ssh host true\` (median of 10)" "$ssh_true"
printf '  %-52s %.2fx (goal <= 1.25x)\n' "enable / ssh host true" "$(echo "$enable_median / $ssh_true" | bc -l)"
printf '  %-52s %s bytes\n' "journal after job 1" "$size1"
printf '  %-52s %s bytes\n' "journal after job $JOBS" "$sizeN"
printf '  %-52s %s\n' "known_hosts pins left (the last job's, until a sweep)" "$pins"
echo
