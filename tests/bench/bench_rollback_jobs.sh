#!/usr/bin/env bash
# bench-rollback-jobs (figures, not a test; issue 50, item 3): `rollback --all` of a fleet of
# $LM_BENCH_VMS VMs (default 8), one at a time (--jobs 1) against --jobs $LM_BENCH_JOBS (default 4),
# on one simulator that lets them all run at once (1 s boot, 0.3 s stop delay, as bench_fleet.sh's).
# Each round enables the fleet (--jobs 8: every VM running at the unlocked level, so the rollback
# removes each one's guest files, restores the preference after the last, and restarts every VM
# off the unlocked level), then times the rollback, the process alone, by wall clock. Rounds
# alternate the two (1, N, 1, N, ...) so that a machine that slows down meanwhile slows both;
# $LM_BENCH_RUNS rounds of each (default 3). Then the same without the restarts (--no-restart):
# the guest files alone.
# Prints one line per run, "run JOBS RESTART SECONDS", and per case "median JOBS RESTART SECONDS".
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench_lib.sh"
n=${LM_BENCH_VMS:-8}
jobs=${LM_BENCH_JOBS:-4}
runs=${LM_BENCH_RUNS:-3}

vms=()
names=()
for i in $(seq 1 "$n"); do vms+=(--vm "r$i"); names+=("r$i"); done
sim_start "${vms[@]}" --max-running "$n" --boot-delay 1 --stop-delay 0.3

# One round: the fleet enabled, then `rollback --all --jobs J [--no-restart]` timed.
round() { # JOBS RESTART(yes|no)
  local j=$1 restart=$2 extra=() t0 t1 rc
  [ "$restart" = yes ] || extra=(--no-restart)
  "$LM_BIN" enable "${names[@]}" --jobs "$n" --quiet >"$E2E_DIR/e.out" 2>&1 || fail "enable: $(cat "$E2E_DIR/e.out")"
  t0=$(now)
  set +e; "$LM_BIN" rollback --all --jobs "$j" "${extra[@]}" >"$E2E_DIR/r.out" 2>&1; rc=$?; set -e
  t1=$(now)
  [ $rc -eq 0 ] || fail "rollback --jobs $j: exit $rc: $(cat "$E2E_DIR/r.out")"
  grep -Eq "^$n rolled back, 0 failed in " "$E2E_DIR/r.out" || fail "rollback --jobs $j: $(cat "$E2E_DIR/r.out")"
  elapsed "$t0" "$t1"
}

for restart in yes no; do
  one=() many=()
  for _ in $(seq 1 "$runs"); do
    s=$(round 1 "$restart"); one+=("$s"); printf 'run 1 %s %.2f\n' "$restart" "$s"
    s=$(round "$jobs" "$restart"); many+=("$s"); printf 'run %d %s %.2f\n' "$jobs" "$restart" "$s"
  done
  printf 'median 1 %s %.2f\n' "$restart" "$(printf '%s\n' "${one[@]}" | median)"
  printf 'median %d %s %.2f\n' "$jobs" "$restart" "$(printf '%s\n' "${many[@]}" | median)"
done
