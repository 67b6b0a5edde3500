#!/usr/bin/env bash
# Benchmark (figures, not a test), every figure of issue 28 in one run, the machine's load average
# printed beside them:
#  - on the Lume simulator with zero boot and stop delays: a first `lume-metal enable` (restart
#    included) broken down by step; an idempotent re-enable (median of 10) against one OpenSSH
#    `ssh host true` to the same guest (median of 10), each split into connect, key exchange,
#    authentication, command and local work (lume-metal's from its timing trace, LUME_METAL_TRACE;
#    OpenSSH's from `ssh -v`'s lines, timed as they arrive, in 10 more runs); the documented manual
#    recipe scripted with OpenSSH's ssh/scp and curl doing the same checks (stop, preference
#    written and read back, start, wait for SSH, mkdir, copy, SHA-256 on both sides, probe stock
#    and shimmed, compare), one connection per command as the recipe does;
#  - then (bench_fleet.sh) fleets of 1, 4, 16 and 64 VMs (LM_BENCH_SIZES) with 1 s boot and 0.3 s
#    stop delay against the simulator alone restarting them (the floor): lume-metal's time beyond
#    the floor, its CPU per VM, and where the time went (its trace).
# Wall clock is taken around the lume-metal process alone (the JSON is checked after the clock
# stops). With LM_BENCH_SVG set, a chart of the run (gnuplot) is written there; with LM_BENCH_OUT
# set, the run's traces and results are kept in that directory.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench_lib.sh"

# An idle machine first: until the 1-minute load average falls below LM_BENCH_IDLE_LOAD (0.5), at
# most LM_BENCH_IDLE_WAIT seconds (600; 0: no wait). A run that started busier says so.
idle_load=${LM_BENCH_IDLE_LOAD:-0.5} idle_wait=${LM_BENCH_IDLE_WAIT:-600} waited=0
idle() { awk -v max="$idle_load" '{exit !($1 < max)}' /proc/loadavg; }
until idle || [ "$waited" -ge "$idle_wait" ]; do
  [ "$waited" -gt 0 ] || echo "bench-enable: waiting for the load average ($(cut -d' ' -f1 /proc/loadavg)) to fall below $idle_load (at most ${idle_wait} s)" >&2
  sleep 5; waited=$((waited + 5))
done
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
idle || echo "bench-enable: the load average is still $load_before after ${waited} s: this run's figures are a busy machine's" >&2
if [ -n "${LM_BENCH_OUT:-}" ]; then rm -rf "$LM_BENCH_OUT"; mkdir -p "$LM_BENCH_OUT"; fi
sim_start --vm lm-vm --vm manual-vm --vm auto-vm --stock-kernels auto-vm=run --max-running 3 --boot-delay 0 --stop-delay 0
vm_run lm-vm
vm_run manual-vm
vm_run auto-vm
# Three running at once: Apple's two-VM limit ignored, as the fleets do. All run from before the
# preference changes: lm-vm and manual-vm need a restart (docs/lume-metal.md, "When a VM is
# restarted"); auto-vm's stock level runs the kernels, so `auto` proves it as it is.

# timed_lm OUT TRACE ARGS...: lume-metal alone on the clock (seconds on stdout), traced into TRACE.
timed_lm() {
  local out=$1 trace=$2 t0 t1; shift 2
  set +e
  t0=$EPOCHREALTIME
  echo "$t0" >"$out.t0" # the clock before the process: its start-up is measured from here
  LUME_METAL_TRACE=$trace "$LM_BIN" "$@" --format json >"$out" 2>"$out.err"
  LM_RC=$?
  t1=$EPOCHREALTIME
  set -e
  expect_rc 0 "$out"
  jq -e . "$out" >/dev/null || fail "lume-metal $* printed no JSON document: $(cat "$out" "$out.err")"
  elapsed "$t0" "$t1"
}

# --- lume-metal, first enable with --host-preference auto on a VM whose stock level runs the
# kernels (--stock-kernels auto-vm=run): proven as it is, no restart, the preference untouched.
# First, while the preference is still as it was. ---
auto_first=$(timed_lm "$E2E_DIR/auto.json" "$E2E_DIR/auto.trace" enable auto-vm --host-preference auto)
jq_is "$E2E_DIR/auto.json" '.vms[0].restarted' false
jq_is "$E2E_DIR/auto.json" '.host_preference_changed' false

# --- lume-metal, first enable ---
first=$(timed_lm "$E2E_DIR/first.json" "$E2E_DIR/first.trace" enable lm-vm)

# --- lume-metal, idempotent re-enable: wall clock and, from its trace, each step ---
for i in $(seq 1 10); do
  rm -f "$E2E_DIR/again.trace"
  wall=$(timed_lm "$E2E_DIR/again.json" "$E2E_DIR/again.trace" enable lm-vm)
  jq_is "$E2E_DIR/again.json" '.vms[0].restarted' false
  # The split (issue 39): start-up from the clock before the process to its first request to the
  # manager (the trace's clock line puts its monotonic START beside the wall clock), the manager's
  # requests, SSH (connection and commands), and the rest: local work.
  awk -v wall="$wall" -v t0="$(cat "$E2E_DIR/again.json.t0")" '
    $5 == "clock" {off = $6 - $1}
    $5 ~ /^vm-/ {v += $2; if (first == "" || $1 < first) first = $1}
    $5 ~ /^ssh-/ {h += $2}
    END {st = first + off - t0; printf "%s %s %s %s %s\n", wall, st, v, h, wall - st - v - h}' \
    "$E2E_DIR/again.trace" >>"$E2E_DIR/again.split"
  awk -v wall="$wall" '
    $5 == "ssh-connect" {c += $2} $5 == "ssh-kex" {k += $2; kex = $6 " " $7}
    $5 == "ssh-hostkey-check" || $5 == "ssh-auth" {a += $2} $5 == "ssh-command" {m += $2; n++}
    END {printf "%s %s %s %s %s %s %d %s\n", wall, c, k, a, m, wall - c - k - a - m, n, kex}' "$E2E_DIR/again.trace"
  cat "$E2E_DIR/again.trace" >>"$E2E_DIR/again-all.trace"
done >"$E2E_DIR/again.steps"
col() { awk -v c="$1" '{print $c}' "$2" | median; } # the median of column C of FILE
again=$(col 1 "$E2E_DIR/again.steps")

# --- one OpenSSH connection running `true` in the same guest (what re-enable is held against) ---
lm_addr=$(jq -r '.vms[] | select(.name == "lm-vm") | .address' "$E2E_DIR/sim.json")
export MANUAL_KNOWN_HOSTS="$E2E_DIR/manual_known_hosts"
openssh_askpass "$E2E_DIR"
openssh_opts "$MANUAL_KNOWN_HOSTS"
setsid -w ssh "${sshopts[@]}" "lume@$lm_addr" true </dev/null   # its host key recorded first
for i in $(seq 1 10); do
  t0=$EPOCHREALTIME; setsid -w ssh "${sshopts[@]}" "lume@$lm_addr" true </dev/null; t1=$EPOCHREALTIME
  elapsed "$t0" "$t1"
done >"$E2E_DIR/ssh.times"
ssh_true=$(median <"$E2E_DIR/ssh.times")
# OpenSSH's steps: its -v lines stamped as they arrive (separate runs: the stamping is not free).
# connect: "Connecting to" .. "Connection established"; kex: .. "SSH2_MSG_NEWKEYS received"; auth:
# .. "Authenticated to"; command: .. "Exit status"; local work: the rest of the process's time.
for i in $(seq 1 10); do
  t0=$EPOCHREALTIME
  setsid -w ssh -v "${sshopts[@]}" -o LogLevel=DEBUG1 "lume@$lm_addr" true </dev/null 2>&1 |
    while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done >"$E2E_DIR/ssh-v.log"
  t1=$EPOCHREALTIME
  awk -v t0="$t0" -v t1="$t1" '
    / Connecting to / {a = $1} / Connection established/ {b = $1} / SSH2_MSG_NEWKEYS received/ {c = $1}
    / Authenticated to / {d = $1} / Exit status / {e = $1} / kex: algorithm: / {kex = $NF} / kex: host key algorithm: / {hk = $NF}
    END {printf "%s %s %s %s %s %s 1 %s %s\n", t1 - t0, b - a, c - b, d - c, e - d, (t1 - t0) - (e - a), kex, hk}' "$E2E_DIR/ssh-v.log"
done >"$E2E_DIR/ssh.steps"

# --- the manual recipe, scripted (manual_recipe.sh) ---
addr=$(jq -r '.vms[] | select(.name == "manual-vm") | .address' "$E2E_DIR/sim.json")
t0=$EPOCHREALTIME
"$here/manual_recipe.sh" manual-vm "$addr" "$E2E_DIR"
t1=$EPOCHREALTIME
manual=$(elapsed "$t0" "$t1")

# --- the fleets: their own simulator (1 s boot, 0.3 s stop), after this one is stopped ---
kill -TERM "$SIM_PID"; for _ in $(seq 1 600); do kill -0 "$SIM_PID" 2>/dev/null || break; sleep 0.1; done
SIM_PID=
"$here/bench_fleet.sh" "$E2E_DIR/fleet.txt"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
size() { awk -v n="$1" -v c="$2" '$1 == "size" && $2 == n {print $c}' "$E2E_DIR/fleet.txt"; } # N COLUMN
read -r -a sizes <<<"$(awk '$1 == "size" {printf "%s ", $2}' "$E2E_DIR/fleet.txt")"
calc() { awk "BEGIN {printf \"%.6f\", $1}"; }

echo
echo "bench-enable, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs; load average $load_before at the start (after ${waited} s waiting for < $idle_load), $load_after at the end"
echo
echo "lume-metal enable on the simulator (boot delay 0, stop delay 0), one run:"
printf '  %-40s %9s\n' "step (first enable)" "seconds"
jq -r '.vms[0].steps[] | "\(.name)\t\(.seconds)"' "$E2E_DIR/first.json" |
  awk -F'\t' '{printf "  %-40s %9.3f\n", $1, $2}'
printf '  %-40s %9.3f\n' "total, first enable (wall clock)" "$first"
printf '  %-40s %9.3f\n' "manual recipe (ssh/scp/curl)" "$manual"
echo
echo "re-enable against one OpenSSH connection, medians of 10 (seconds; the floor is one"
echo "connection, one key exchange, one authentication, one command):"
printf '  %-14s %12s %12s %12s\n' "step" "re-enable" "ssh true" "difference"
i=1
for name in "wall clock" connect "key exchange" "authentication" command "local work"; do
  a=$(col $i "$E2E_DIR/again.steps"); b=$(col $i "$E2E_DIR/ssh.steps")
  [ "$i" != 1 ] || b=$ssh_true # the wall clock of the runs without -v
  printf '  %-14s %12.4f %12.4f %+12.4f\n' "$name" "$a" "$b" "$(calc "$a - $b")"
  i=$((i + 1))
done
printf '  %-14s %12s %12s\n' "commands" "$(col 7 "$E2E_DIR/again.steps")" 1
printf '  %-14s %12s %12s\n' "kex" "$(awk 'NR == 1 {print $8}' "$E2E_DIR/again.steps")" "$(awk 'NR == 1 {print $8}' "$E2E_DIR/ssh.steps")"
printf '  %-14s %12s %12s\n' "host key" "$(awk 'NR == 1 {print $9}' "$E2E_DIR/again.steps")" "$(awk 'NR == 1 {print $9}' "$E2E_DIR/ssh.steps")"
echo
echo "fleets on one simulator (boot delay 1 s, stop delay 0.3 s, every VM restarted), one run each;"
echo "the floor is the simulator alone restarting the same VMs (no lume-metal):"
printf '  %5s %9s %9s %9s %11s %11s\n' VMs enable floor beyond "CPU (s)" "CPU/VM (ms)"
for n in "${sizes[@]}"; do
  printf '  %5s %9.3f %9.3f %+9.3f %11.3f %11.1f\n' "$n" "$(size "$n" 3)" "$(size "$n" 4)" \
    "$(calc "$(size "$n" 3) - $(size "$n" 4)")" "$(size "$n" 5)" "$(calc "$(size "$n" 5) / $n * 1000")"
done
echo
echo "the machine's busy CPU (every process: lume-metal, the simulator, the guests; seconds) during"
echo "the floor and during the enable; what the enable costs beyond the floor spread over the $(nproc)"
echo "CPUs is the time it can take beyond the floor when every CPU is busy, as here, where the guests"
echo "share them (a Mac gives each VM cores of its own):"
printf '  %5s %11s %11s %11s %15s %15s\n' VMs floor enable extra "extra / CPUs" "lume-metal's"
for n in "${sizes[@]}"; do
  printf '  %5s %11.2f %11.2f %+11.2f %15.3f %15.3f\n' "$n" "$(size "$n" 7)" "$(size "$n" 6)" \
    "$(calc "$(size "$n" 6) - $(size "$n" 7)")" "$(calc "($(size "$n" 6) - $(size "$n" 7)) / $(nproc)")" "$(size "$n" 5)"
done
echo
echo "where the time goes (lume-metal's trace; per fleet: count, mean and longest in ms):"
printf '  %-26s' "event"; for n in "${sizes[@]}"; do printf ' %22s' "$n VMs"; done; echo
for w in journal-lock-wait journal-held journal-save journal-lock-wait-shared journal-held-shared vm-lock-wait \
    ready-ask ready-wait ssh-connect ssh-kex ssh-hostkey-check ssh-auth ssh-command context; do
  printf '  %-26s' "$w"
  for n in "${sizes[@]}"; do
    awk -v n="$n" -v w="$w" '$1 == "trace" && $2 == n && $3 == w {printf " %5d %7.1f %8.1f", $4, $6 * 1000, $7 * 1000; f = 1}
      END {if (!f) printf " %22s", "-"}' "$E2E_DIR/fleet.txt"
  done
  echo
done
echo "each step of enable (seconds summed per VM; mean and longest over the fleet):"
printf '  %-26s' "step"; for n in "${sizes[@]}"; do printf ' %17s' "$n VMs"; done; echo
for s in $(awk '$1 == "step" {print $3}' "$E2E_DIR/fleet.txt" | sort -u); do
  printf '  %-26s' "$s"
  for n in "${sizes[@]}"; do
    awk -v n="$n" -v s="$s" '$1 == "step" && $2 == n && $3 == s {printf " %8.3f %8.3f", $4, $5; f = 1}
      END {if (!f) printf " %17s", "-"}' "$E2E_DIR/fleet.txt"
  done
  echo
done

# The re-enable's wall clock split (medians of 10, each column on its own).
scol() { awk -v c="$1" '{print $c}' "$E2E_DIR/again.split" | median; }
echo
echo "the re-enable's wall clock split (medians of 10, ms): start-up is the clock before the process"
echo "to its first request to the manager; manager: its requests; SSH: connection and commands:"
printf '  %-14s %9s %9s %9s %9s %9s\n' "" "wall" "start-up" "manager" "SSH" "local"
printf '  %-14s %9.1f %9.1f %9.1f %9.1f %9.1f\n' "re-enable" "$(calc "$(scol 1) * 1000")" "$(calc "$(scol 2) * 1000")" \
  "$(calc "$(scol 3) * 1000")" "$(calc "$(scol 4) * 1000")" "$(calc "$(scol 5) * 1000")"
fkey() { awk -v k="$1" -v n="$2" '$1 == k && $2 == n {print $3}' "$E2E_DIR/fleet.txt"; } # KEY N
recipe16=$(fkey recipe 16); reenable16=$(fkey reenable 16); sshtrue16=$(fkey sshtrue 16)
echo
echo "16 VMs (boot delay 1 s, stop delay 0.3 s), the same guests: enable --jobs 16 against the scripted"
echo "recipe 16-wide (xargs -P16), and the fleet's re-enable against 16 parallel ssh host true:"
printf '  %-44s %9.3f s\n' "manual recipe, 16-wide (xargs -P16)" "$recipe16" "enable --jobs 16 (every VM restarted)" "$(size 16 3)" \
  "the floor (the simulator alone restarting them)" "$(size 16 4)" "re-enable --jobs 16 (median of 5)" "$reenable16" \
  "16 parallel ssh host true (median of 5)" "$sshtrue16"
echo
echo "--host-preference auto, first enable of a VM whose stock level runs the kernels: $(printf '%.3f' "$auto_first") s,"
echo "restarted: $(jq -r '.vms[0].restarted' "$E2E_DIR/auto.json"), preference changed: $(jq -r '.host_preference_changed' "$E2E_DIR/auto.json")"

one=$(size 1 3); sixteen_beyond=$(calc "$(size 16 3) - $(size 16 4)")
cpu1=$(calc "$(size 1 5) / 1"); cpu16=$(calc "$(size 16 5) / 16")
echo
echo "goals:"
printf '  %-52s %8.2fx  (goal <= 0.25x)\n' "first enable / manual recipe" "$(calc "$first / $manual")"
printf '  %-52s %8.2fx  (goal <= 0.30x)\n' "idempotent re-enable / ssh host true" "$(calc "$again / $ssh_true")"
printf '  %-52s %8.1f ms (goal <= 5 ms)\n' "re-enable: start-up to the first manager request" "$(calc "$(scol 2) * 1000")"
printf '  %-52s %8.2fx  (goal <= 0.25x)\n' "16 VMs: enable --jobs 16 / the recipe 16-wide" "$(calc "$(size 16 3) / $recipe16")"
printf '  %-52s %8.2fx  (goal <= 0.50x)\n' "16 VMs: re-enable / 16 parallel ssh host true" "$(calc "$reenable16 / $sshtrue16")"
printf '  %-52s %8.2fx  (goal <= 0.10x)\n' "auto, no restart needed: first enable / manual recipe" "$(calc "$auto_first / $manual")"
printf '  %-52s %8.3f s (goal <= %.3f s: 0.15 x one VM'"'"'s %.3f s)\n' "16 VMs: lume-metal's time beyond the floor" \
  "$sixteen_beyond" "$(calc "0.15 * $one")" "$one"
printf '  %-52s %8.1f ms (goal <= %.1f ms: one VM'"'"'s)\n' "16 VMs: lume-metal's CPU per VM" \
  "$(calc "$cpu16 * 1000")" "$(calc "$cpu1 * 1000")"

if [ -n "${LM_BENCH_OUT:-}" ]; then
  cp "$E2E_DIR"/*.trace "$E2E_DIR"/*.steps "$E2E_DIR"/*.split "$E2E_DIR/fleet.txt" "$E2E_DIR/first.json" "$LM_BENCH_OUT/"
  echo "  traces and results: $LM_BENCH_OUT"
fi
# The chart for docs/testing.md: each single-VM figure against what it is held to, and how the
# fleet's cost grows with its size.
if [ -n "${LM_BENCH_SVG:-}" ]; then
  cat >"$E2E_DIR/bench.dat" <<DAT
"first enable\nvs manual recipe" $first $manual
"re-enable\nvs ssh host true" $again $ssh_true
"16 VMs: enable\nvs the floor" $(size 16 3) $(size 16 4)
"16 VMs: enable\nvs recipe -P16" $(size 16 3) $recipe16
"16 VMs: re-enable\nvs 16 ssh true" $reenable16 $sshtrue16
"auto, no restart\nvs manual recipe" $auto_first $manual
DAT
  for n in "${sizes[@]}"; do
    echo "$n $(calc "$(size "$n" 5) / $n * 1000") $(calc "$(size "$n" 3) - $(size "$n" 4)")"
  done >"$E2E_DIR/growth.dat"
  gnuplot -e "data='$E2E_DIR/bench.dat'; growth='$E2E_DIR/growth.dat'; out='$LM_BENCH_SVG'; goal=$(calc "0.15 * $one")" \
    "$here/bench_enable.gp"
  echo "  chart: $LM_BENCH_SVG"
fi
