#!/usr/bin/env bash
# Benchmark (figures, not a test): what the functional proof costs.
#  - on the Lume simulator: `lume-metal probe VM` against `probe VM --exercise` (medians of 10),
#    and the exercise step of a first enable;
#  - in the guest process: instructions of `metal-capabilities --report` against
#    `--report --exercise` (valgrind's callgrind, the shim preloaded, the fake Metal at the
#    unlocked level), split by object. The fake Metal computes the kernels on the CPU, so its share
#    stands for the GPU's work, which a real device does elsewhere.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench_lib.sh"
: "${LM_PROBE:?LM_PROBE: the Linux probe}" "${LM_SHIM:?LM_SHIM: the Linux shim}"


sim_start --vm vm1 --boot-delay 0 --stop-delay 0
lm_json "$E2E_DIR/e.json" enable vm1
expect_rc 0 "$E2E_DIR/e.json"
step=$(jq -r '.vms[0].steps[] | select(.name == "exercise") | .seconds' "$E2E_DIR/e.json")
runs=${LM_BENCH_RUNS:-20}
for mode in plain exercise; do
  for i in $(seq 1 "$runs"); do
    t0=$(now)
    if [ $mode = plain ]; then lm probe vm1 >/dev/null; else lm probe vm1 --exercise >/dev/null; fi
    t1=$(now)
    elapsed "$t0" "$t1"
  done >"$E2E_DIR/$mode.times"
done
plain=$(median <"$E2E_DIR/plain.times")
exercise=$(median <"$E2E_DIR/exercise.times")

echo
echo "The exercise on the simulator (boot and stop delays 0; medians of $runs, wall clock;"
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs):"
printf '  %-44s %9.3f s\n' "lume-metal probe vm1" "$plain"
printf '  %-44s %9.3f s\n' "lume-metal probe vm1 --exercise" "$exercise"
printf '  %-44s %9.3f s\n' "added by --exercise" "$(echo "$exercise - $plain" | bc -l)"
printf '  %-44s %9.3f s\n' "enable's exercise step (first enable, once)" "$step"

# The guest process alone, outside SSH: the probe with the shim, as enable runs it.
guest_env=(env -i LD_LIBRARY_PATH="$LM_FAKE_METAL" LD_PRELOAD="$LM_SHIM" LUME_METAL_APPLE_FAMILY_MAX=1009
  LM_FAKE_METAL_FEATURE_LEVEL=unlocked)
for mode in report exercise; do
  for i in $(seq 1 "$runs"); do
    t0=$(now)
    if [ $mode = report ]; then "${guest_env[@]}" "$LM_PROBE" --report >/dev/null
    else "${guest_env[@]}" "$LM_PROBE" --report --exercise >/dev/null; fi
    t1=$(now)
    elapsed "$t0" "$t1"
  done >"$E2E_DIR/local-$mode.times"
done
printf '  %-44s %9.4f s\n' "metal-capabilities --report (process)" "$(median <"$E2E_DIR/local-report.times")"
printf '  %-44s %9.4f s\n' "metal-capabilities --report --exercise" "$(median <"$E2E_DIR/local-exercise.times")"

if command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null; then
  echo
  echo "Instructions in the guest process (callgrind; shim preloaded, fake Metal unlocked):"
  for args in "--report" "--report --exercise"; do
    out="$E2E_DIR/cg.$(echo "$args" | tr -cd 'a-z')"
    # shellcheck disable=SC2086
    env -i LD_LIBRARY_PATH="$LM_FAKE_METAL" LD_PRELOAD="$LM_SHIM" LUME_METAL_APPLE_FAMILY_MAX=1009 \
      LM_FAKE_METAL_FEATURE_LEVEL=unlocked valgrind --tool=callgrind --callgrind-out-file="$out" \
      "$LM_PROBE" $args >/dev/null 2>"$out.err" || fail "callgrind: $(cat "$out.err")"
    printf '  metal-capabilities %-20s %12s total\n' "$args" \
      "$(awk '/^totals:/ {print $2}' "$out")"
    callgrind_annotate --threshold=100 "$out" 2>/dev/null | awk '
      match($0, /\[[^]]*\][ \t]*$/) {
        n = $1; gsub(",", "", n); obj = substr($0, RSTART + 1, RLENGTH - 2); sub(/[ \t\]]*$/, "", obj)
        sub(/.*\//, "", obj); sum[obj] += n
      }
      END { for (o in sum) printf "      %-32s %12d\n", o, sum[o] }' | sort -k2 -n -r
  done
else
  echo "(valgrind not installed: no instruction counts)"
fi
