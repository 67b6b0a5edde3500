#!/usr/bin/env bash
# Part of bench-enable (figures, not a test): how lume-metal's cost grows with a fleet, against the
# simulator's own floor. One simulator that ignores Apple's two-VM limit (1 s boot, 0.3 s stop
# delay) holds a fleet per size in $LM_BENCH_SIZES (default "1 4 16 64"), VMs of their own, every
# one running from before the preference changes (so each needs a restart). Per size, in order:
#  - the floor: the simulator alone restarts the fleet through its API (stop and run in parallel),
#    until its event log says every guest booted (its sshd answering), no lume-metal;
#  - `enable --jobs N` of the fleet: wall clock around the process alone, its CPU time (its
#    children included: perf's task-clock), the machine's busy CPU, and a timing trace
#    (LUME_METAL_TRACE) of its journal transactions, lock waits, readiness questions and SSH steps;
#  - `rollback --no-restart` of the fleet, the preference given back, so that the next size sets
#    it again as this one did (like for like).
# Writes to the file $1, one line per size:
#   "size N WALL FLOOR CPU BUSY FLOOR_BUSY" (BUSY: the machine's CPU seconds during the enable,
#   every process's; FLOOR_BUSY: the same during the floor) and per traced event "trace N WHAT COUNT TOTAL MEAN MAX",
# and per size and step of the JSON result (summed per VM) "step N NAME MEAN MAX".
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench_lib.sh"
out=$1
read -r -a sizes <<<"${LM_BENCH_SIZES:-1 4 16 64}"

vms=()
total=0
for n in "${sizes[@]}"; do
  for i in $(seq 1 "$n"); do vms+=(--vm "s$n-$i"); done
  total=$((total + n))
done
sim_start "${vms[@]}" --max-running "$total" --boot-delay 1 --stop-delay 0.3

# fleet N: the VM names of size N's fleet.
fleet() { local i; for i in $(seq 1 "$1"); do echo "s$1-$i"; done; }
# until_ssh VM...: until every one of them says sshAvailable, one list request every 0.05 s.
until_ssh() {
  local want; want=$(printf '%s\n' "$@" | jq -R . | jq -s -c .)
  until [ "$(curl -fsS "$LUME_METAL_LUME_URL/lume/vms" |
    jq --argjson want "$want" '[.[] | select(.name as $n | $want | index($n)) | select(.sshAvailable == true)] | length')" = $# ]; do
    sleep 0.05
  done
}
# Every fleet started at once (each boots on its own), then waited for (the requests by their PIDs:
# a bare `wait` would wait for the simulator too).
runs=()
for n in "${sizes[@]}"; do
  for vm in $(fleet "$n"); do
    curl -fsS -X POST -d '{"noDisplay":true}' "$LUME_METAL_LUME_URL/lume/vms/$vm/run" >/dev/null &
    runs+=($!)
  done
done
for p in "${runs[@]}"; do wait "$p" || fail "a run request failed"; done
for n in "${sizes[@]}"; do mapfile -t f < <(fleet "$n"); until_ssh "${f[@]}"; done

# The floor: the simulator alone restarting the same VMs. Its guests share this machine's cores,
# where a Mac gives each VM its own: what N restarts cost here beyond one is the machine's, and
# lume-metal's own share is what its run takes beyond this. The end is the simulator's own "boot"
# event of the last of them (logged when its guest's sshd answers), read from the event log:
# asking the API instead would probe every booted VM's port 22 at each question (an sshd fork
# each), load that the floor would count.
# The machine's busy CPU time, in clock ticks (every process: lume-metal, the simulator, its guests).
busy() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8}' /proc/stat; }
sim_restart() { # VM...: seconds until all are running again with SSH answering, and the machine's busy CPU meanwhile
  local t0 b0 vm from booted
  from=$(($(stat -c %s "$SIM_LOG") + 1))
  b0=$(busy)
  t0=$EPOCHREALTIME
  for vm in "$@"; do
    { curl -fsS -X POST "$LUME_METAL_LUME_URL/lume/vms/$vm/stop" >/dev/null &&
      curl -fsS -X POST -d '{"noDisplay":true}' "$LUME_METAL_LUME_URL/lume/vms/$vm/run" >/dev/null; } &
  done
  wait
  # Counted with grep while waiting (no other VM boots meanwhile), read with jq once: parsing the
  # log every 0.05 s cost the machine more CPU than a few guests' boots, CPU the floor then had
  # less of.
  until [ "$(tail -c "+$from" "$SIM_LOG" | grep -c '"event":"boot"')" -ge $# ]; do sleep 0.05; done
  booted=$(tail -c "+$from" "$SIM_LOG" | jq -s -c '[.[] | select(.event == "boot")] | map(.time) | max')
  echo "$(elapsed "$t0" "$booted") $(echo "($(busy) - $b0) / $(getconf CLK_TCK)" | bc -l)"
}
# cpu_of FILE COMMAND...: COMMAND's CPU time, its children's included, into FILE: perf's task-clock
# (to the microsecond) where perf may count, else /usr/bin/time's user + system (to 10 ms).
cpu_of() {
  local f=$1; shift
  if perf stat -x, -e task-clock -o /dev/null -- true 2>/dev/null; then perf stat -x, -e task-clock -o "$f" -- "$@"
  else /usr/bin/time -f 'time %U %S' -o "$f" "$@"; fi
}

# The scripted manual recipe (manual_recipe.sh) over a fleet as a user would run it, N at once with
# xargs -P: one VM's stop, preference, start, wait, copy, check and probes per process.
export MANUAL_KNOWN_HOSTS="$E2E_DIR/manual_known_hosts"
openssh_askpass "$E2E_DIR"
openssh_opts "$MANUAL_KNOWN_HOSTS"
addr_of() { jq -r --arg n "$1" '.vms[] | select(.name == $n) | .address' "$E2E_DIR/sim.json"; }
recipe_wide() { # N VM...: seconds for the recipe over the VMs, N at a time
  local n=$1 t0 t1 vm; shift
  for vm in "$@"; do printf '%s %s %s\n' "$vm" "$(addr_of "$vm")" "$E2E_DIR"; done >"$E2E_DIR/recipe-$n.list"
  t0=$EPOCHREALTIME
  xargs -P "$n" -L 1 "$here/manual_recipe.sh" <"$E2E_DIR/recipe-$n.list" >/dev/null 2>"$E2E_DIR/recipe-$n.err" ||
    fail "the manual recipe over $n VMs failed: $(cat "$E2E_DIR/recipe-$n.err")"
  t1=$EPOCHREALTIME
  elapsed "$t0" "$t1"
}
# ssh_true_wide VM...: seconds for one OpenSSH `ssh host true` to each, all at once.
ssh_true_wide() {
  local t0 t1 vm pids=() p
  t0=$EPOCHREALTIME
  for vm in "$@"; do setsid -w ssh "${sshopts[@]}" "lume@$(addr_of "$vm")" true </dev/null & pids+=($!); done
  for p in "${pids[@]}"; do wait "$p" || fail "ssh host true failed"; done
  t1=$EPOCHREALTIME
  elapsed "$t0" "$t1"
}

: >"$out"
for n in "${sizes[@]}"; do
  mapfile -t f < <(fleet "$n")
  if [ "$n" = 16 ]; then
    # What a user would script instead, on the same VMs, paying the same guests' CPU (issue 39).
    echo "recipe $n $(recipe_wide "$n" "${f[@]}")" >>"$out"
  fi
  read -r floor floor_busy < <(sim_restart "${f[@]}")
  res=$E2E_DIR/fleet-$n.json trace=$E2E_DIR/fleet-$n.trace
  rm -f "$trace"
  b0=$(busy)
  t0=$EPOCHREALTIME
  set +e
  LUME_METAL_TRACE=$trace cpu_of "$res.cpu" \
    "$LM_BIN" enable --jobs "$n" "${f[@]}" --format json >"$res" 2>"$res.err"
  LM_RC=$?
  set -e
  t1=$EPOCHREALTIME
  b1=$(busy)
  expect_rc 0 "$res"
  jq_is "$res" '[.vms[].restarted] | all' true
  jq_is "$res" '.vms | length' "$n"
  jq_is "$res" '.host_preference_changed' true
  if [ "$n" = 16 ]; then
    # The fleet's re-enable against one `ssh host true` to each VM, all at once (medians of 5).
    for i in 1 2 3 4 5; do
      t0=$EPOCHREALTIME
      "$LM_BIN" enable --jobs "$n" "${f[@]}" --format json >"$res.again" 2>"$res.again.err" ||
        fail "re-enable of $n VMs failed: $(cat "$res.again" "$res.again.err")"
      t1=$EPOCHREALTIME
      jq_is "$res.again" '[.vms[].restarted] | any' false
      elapsed "$t0" "$t1"
    done | median | sed "s/^/reenable $n /" >>"$out"
    ssh_true_wide "${f[@]}" >/dev/null # host keys recorded first
    for i in 1 2 3 4 5; do ssh_true_wide "${f[@]}"; done | median | sed "s/^/sshtrue $n /" >>"$out"
  fi
  lm_json "$E2E_DIR/rollback-$n.json" rollback --no-restart "${f[@]}"
  expect_rc 0 "$E2E_DIR/rollback-$n.json"
  jq_is "$E2E_DIR/rollback-$n.json" '.host_preference_restored' true
  printf 'size %s %s %s %s %s %s\n' "$n" "$(elapsed "$t0" "$t1")" "$floor" \
    "$(awk -F'[ ,]' '$3 == "task-clock" {print $1 / 1000} $1 == "time" {print $2 + $3}' "$res.cpu")" "$(echo "($b1 - $b0) / $(getconf CLK_TCK)" | bc -l)" \
    "$floor_busy" >>"$out"
  # Each traced event: how many, their sum, mean and longest (the kex's algorithms dropped from
  # its name; "context" is the whole process).
  awk -v n="$n" '{ w = $5; c[w]++; s[w] += $2; if ($2 > m[w]) m[w] = $2 }
    END { for (w in c) printf "trace %s %s %d %.6f %.6f %.6f\n", n, w, c[w], s[w], s[w] / c[w], m[w] }' \
    "$trace" | sort -k3 >>"$out"
  # Each step of the result: its mean and longest over the fleet's VMs.
  jq -r --arg n "$n" '.vms as $v | [$v[].steps[].name] | unique[] as $s |
    [$v[] | [.steps[] | select(.name == $s) | .seconds] | add // 0] as $per |
    "step \($n) \($s) \(($per | add) / ($per | length)) \($per | max)"' "$res" >>"$out"
done
# The traces and results, for a look at one VM's timeline (bench_enable.sh made the directory).
[ -z "${LM_BENCH_OUT:-}" ] || cp "$E2E_DIR"/fleet-* "$SIM_LOG" "$LM_BENCH_OUT/"
