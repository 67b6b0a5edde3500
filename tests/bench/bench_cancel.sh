#!/usr/bin/env bash
# bench-cancel (figures, not a test): how long lume-metal takes to end after SIGINT in each kind of
# wait (issue 25, item 4; target at most 1 s). Each run is one of the e2e scenarios that prove the
# cancellation (tests/e2e/cancel_waits.sh, and cancel.sh for the readiness poll), on its own
# simulator; each prints "latency SCENARIO SECONDS", from the signal to the process's end, undo
# included. LM_BENCH_RUNS runs per wait (default 5); min, median and max per wait.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench_lib.sh"
runs=${LM_BENCH_RUNS:-5}

printf '%-12s %6s %8s %8s %8s\n' wait runs min median max
for s in readiness http_stop stop_wait child_wait gone_loop lock_wait; do
  figures=()
  for _ in $(seq 1 "$runs"); do
    if [ "$s" = readiness ]; then out=$("$here/../e2e/cancel.sh" 2>&1); else out=$("$here/../e2e/cancel_waits.sh" "$s" 2>&1); fi ||
      fail "$s: $out"
    figures+=("$(echo "$out" | awk '$1 == "latency" {print $3}')")
  done
  sorted=$(printf '%s\n' "${figures[@]}" | sort -n)
  printf '%-12s %6d %8.3f %8.3f %8.3f\n' "$s" "$runs" "$(echo "$sorted" | head -n 1)" "$(echo "$sorted" | median)" \
    "$(echo "$sorted" | tail -n 1)"
done
