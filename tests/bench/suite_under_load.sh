#!/usr/bin/env bash
# The README's test command, RUNS times in a row (3 unless given), while `stress-ng --cpu WORKERS`
# (4 unless given: twice this 2-CPU machine's processors) loads the machine: issue 49's proof that
# no test depends on how fast the machine is. Prints each run's time, passed and failed tests, and
# the names of any that failed; exits 1 when a run failed. A measurement, not a test: CTest does not
# run it.
#
#   tests/bench/suite_under_load.sh [RUNS [WORKERS]]     (from the source tree; needs stress-ng)
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-3}
workers=${2:-4}
command -v stress-ng >/dev/null ||
  { echo "suite_under_load: stress-ng is not installed (Debian: apt-get install stress-ng)" >&2; exit 2; }
log_dir=$(mktemp -d "${TMPDIR:-/tmp}/lm-under-load.XXXXXX")

stress-ng --cpu "$workers" --timeout 0 --quiet &
stress=$!
# stress-ng's workers are its children: its own SIGTERM handler ends them with it.
trap 'kill -TERM "$stress" 2>/dev/null; wait "$stress" 2>/dev/null || true' EXIT

status=0
printf 'run  seconds  passed  failed  skipped  load(1 min) at the end\n'
for i in $(seq 1 "$runs"); do
  t=$SECONDS rc=0
  cmake --workflow --preset default >"$log_dir/run$i.log" 2>&1 || rc=$?
  summary=$(grep -Eo '[0-9]+% tests passed, [0-9]+ tests failed out of [0-9]+' "$log_dir/run$i.log" | tail -n 1)
  # "100% tests passed, 0 tests failed out of 404": the failed count is the fourth word, the total
  # the last; CTest counts a skipped test (listed under "did not run") as not failed.
  total=$(echo "$summary" | awk '{print $NF}')
  failed=$(echo "$summary" | awk '{print $4}')
  skipped=$(sed -n '/The following tests did not run/,/^$/p' "$log_dir/run$i.log" | grep -c '(Skipped)' || true)
  printf '%3d  %7d  %6s  %6s  %7s  %s\n' "$i" $((SECONDS - t)) "$((${total:-0} - ${failed:-0} - skipped))" \
    "${failed:-?}" "$skipped" "$(cut -d' ' -f1 /proc/loadavg)"
  if [ "$rc" -ne 0 ]; then
    status=1
    sed -n '/The following tests FAILED/,$p' "$log_dir/run$i.log" | head -n 20
  fi
done
echo "logs: $log_dir"
exit "$status"
