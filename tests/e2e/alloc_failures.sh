#!/usr/bin/env bash
# Allocation failures (issue 22, model: SQLite's src/test_malloc.c faultsimStep): alloc_failures.sh
# COMMAND MODE, COMMAND a command of one VM on the simulator (enable, status, rollback; gc, host
# status|enable|disable, forget-host, agent install|list|remove, bench compare; json-X: X with
# --format json), MODE once or persistent. For N = 1, 2, ... lume-metal-hooks runs the command with its Nth counted allocation
# failing (LUME_METAL_TEST_FAIL_ALLOC=N,1 once; =N, and every one after it, persistent), until a
# run in which no allocation failed: that run succeeded, and N - 1 is the number of failure
# points. Every other run must end in an error that says "out of memory" (exit 1: no crash, no
# sanitizer report, no hang), with the host preference, the journal and the guest's files exactly
# as before the command or exactly as after a successful run; then the world is put back as it
# was before for the next N. Every N is run, none sampled: LM_FAULT_WORKERS workers (default 4),
# each with a simulator and a VM of its own on its own loopback /24 (LM_ADDRESS_BASE's and the
# next ones), take every LM_FAULT_WORKERS-th N. `alloc_failures.sh COMMAND MODE N` runs that N alone
# and shows its output and the world's differences (to reproduce a problem). docs/testing.md,
# "Allocation failures".
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
: "${LM_BIN_HOOKS:?LM_BIN_HOOKS: lume-metal built with the test hooks}"

usage() {
  echo "usage: alloc_failures.sh enable|status|rollback|gc|host-status|host-enable|host-disable|forget-host|agent-install|agent-list|agent-remove|bench-compare|json-status|json-host-status|json-enable|json-rollback|json-run|json-doctor|json-gc once|persistent [N]" >&2
  exit 2
}

# The agent the agent sweeps install, list and remove: a workload in the guest's Homebrew folder
# that runs until it is booted out.
AGENT_LABEL=com.example.sweep
AGENT_PLIST=/Users/lume/Library/LaunchAgents/$AGENT_LABEL.plist

# The command line of a sweep's COMMAND (sets ARGS): json-X is X with --format json, whose
# document must be whole or absent (issue 36, item 2).
args_of() {
  case "$1" in
  enable|status|rollback|forget-host) ARGS=("$1" vm1) ;;
  gc) ARGS=(gc) ;;
  host-status|host-enable|host-disable) ARGS=(host "${1#host-}") ;;
  agent-install) ARGS=(agent install vm1 --label "$AGENT_LABEL" -- sweep-agent --port 8080) ;;
  agent-list) ARGS=(agent list vm1) ;;
  agent-remove) ARGS=(agent remove vm1 --label "$AGENT_LABEL") ;;
  bench-compare) ARGS=(bench compare "$E2E_DIR/bench") ;;
  json-status|json-enable|json-rollback|json-doctor) ARGS=("${1#json-}" vm1 --format json) ;;
  json-host-status) ARGS=(host status --format json) ;;
  json-run) ARGS=(run vm1 --format json -- echo ran) ;;
  json-gc) ARGS=(gc --format json) ;;
  *) usage ;;
  esac
}

# What COMMAND works on, made once per worker (vm1 running): the state every run starts from.
setup_for() {
  case "$1" in
  enable|json-enable|host-enable) ;;
  host-disable) lm host enable >"$E2E_DIR/setup.out" 2>&1 || fail "host enable before $1: $(cat "$E2E_DIR/setup.out")" ;;
  *) lm enable vm1 >"$E2E_DIR/setup.out" 2>&1 || fail "enable before $1: $(cat "$E2E_DIR/setup.out")" ;;
  esac
  case "$1" in
  gc|json-gc)
    # Two VMs Lume no longer knows: one with a journal entry and a pin, one with a pin only.
    flock "$LUME_METAL_STATE_DIR/state.lock" sh -c 'jq ".vms[\"ci-gone\"] = .vms.vm1" "$1" >"$1.edit" &&
      chmod 600 "$1.edit" && mv "$1.edit" "$1"' setup "$LUME_METAL_STATE_DIR/state.json"
    { sed -n 's/^vm1 /ci-gone /p' "$LUME_METAL_STATE_DIR/known_hosts"; sed -n 's/^vm1 /ci-pin /p' "$LUME_METAL_STATE_DIR/known_hosts"; } >"$E2E_DIR/pins"
    cat "$E2E_DIR/pins" >>"$LUME_METAL_STATE_DIR/known_hosts"
    grep -q '^ci-pin ' "$LUME_METAL_STATE_DIR/known_hosts" || fail "no pin of vm1's to copy: $(cat "$LUME_METAL_STATE_DIR/known_hosts")"
    ;;
  agent-*)
    local f; f="$(vm_dir vm1)/opt/homebrew/bin/sweep-agent"
    printf '#!/bin/sh\nexec sleep 600\n' >"$f"
    chmod 755 "$f"
    if [ "$1" != agent-install ]; then
      lm agent install vm1 --label "$AGENT_LABEL" -- sweep-agent --port 8080 >"$E2E_DIR/setup.out" 2>&1 ||
        fail "agent install before $1: $(cat "$E2E_DIR/setup.out")"
    fi
    ;;
  bench-compare)
    : "${LM_LLAMA_BENCH:?LM_LLAMA_BENCH: the llama-bench stand-in}"
    install -m 755 "$LM_LLAMA_BENCH" "$(vm_dir vm1)/usr-local-bin/llama-bench"
    mkdir -p "$(guest_home vm1)/models"
    head -c 4096 /dev/urandom >"$(guest_home vm1)/models/tiny.gguf"
    chmod 644 "$(guest_home vm1)/models/tiny.gguf"
    lm bench vm1 --repetitions 1 --out "$E2E_DIR/bench" -- llama-bench -m models/tiny.gguf -p 8 -n 4 -r 1 \
      >"$E2E_DIR/setup.out" 2>&1 || fail "bench before $1: $(cat "$E2E_DIR/setup.out")"
    ;;
  esac
}

# A JSON command's stdout: a whole document or nothing. After a failure (EXIT, not 0) only an
# error document is whole: ok false, the exit code, the error with its code and message.
json_whole() { # FILE EXIT: empty, or the reason it is not whole
  [ -s "$1" ] || { [ "$2" -ne 0 ] || echo "exit 0 and no document"; return 0; }
  jq -e . "$1" >/dev/null 2>&1 || { echo "not one JSON document: $(head -c 200 "$1" | tr '\n' ' ')"; return 0; }
  jq -e '(.schema | type) == "number" and (.command | type) == "string" and (.ok | type) == "boolean" and
      (.exit_code | type) == "number" and has("error")' "$1" >/dev/null ||
    { echo "the envelope lacks schema, command, ok, exit_code or error: $(head -c 300 "$1" | tr '\n' ' ')"; return 0; }
  if [ "$2" -ne 0 ]; then
    jq -e '.ok == false and .exit_code != 0 and (.error.code | type) == "string" and (.error.message | type) == "string"' \
      "$1" >/dev/null || echo "exit $2 with a document that does not say so: $(head -c 300 "$1" | tr '\n' ' ')"
  fi
}

# The world as the command sees it, in a form that compares: the preference file's bytes, the
# journal with its times, the exercise's duration and run marks blanked (a successful run at
# another moment writes other ones), an absent journal the same as an empty one, and the guest's files (type, mode, size,
# link target, content hash; the owner record's with this state directory's identity blanked);
# any staging directory left behind shows up in the latter. Every
# run is followed by one: the journal's form is computed once per distinct content.
# gc and forget-host: the pinned host keys too. The agent sweeps: the guest's LaunchAgents (their
# plists' hashes) and launchd's state of each label (loaded, or started: its pid differs from run
# to run), as agents_view has them.
declare -A JOURNAL_VIEW=()
agents_view() {
  local home f pid
  home=$(guest_home vm1)
  [ ! -d "$home/Library/LaunchAgents" ] || (cd "$home/Library/LaunchAgents" && find . -type f -exec sha256sum {} + | sort)
  for f in "$(vm_dir vm1)"/launchd/*; do
    [ -e "$f" ] || continue
    pid=$(sed -n 's/^pid //p' "$f")
    echo "${f##*/} $([ "$pid" = 0 ] && echo loaded || echo started)$(grep -q '^draining' "$f" && echo ' draining')"
  done
}
world() { # sets WORLD
  local raw='{"schema":1,"vms":{}}' plist guest
  if [ -e "$PLIST" ]; then plist=$(sha256sum <"$PLIST"); else plist=absent; fi
  [ ! -e "$LUME_METAL_STATE_DIR/state.json" ] || { raw=; IFS= read -r -d '' raw <"$LUME_METAL_STATE_DIR/state.json" || true; }
  if [ -z "${JOURNAL_VIEW[x$raw]+set}" ]; then
    JOURNAL_VIEW[x$raw]=$(printf '%s' "$raw" | jq -S 'walk(if type == "object" then with_entries(
        if (.key | test("^(changed_at|enabled_at|vm_started_at|boot_time|at|installed_at|exercise_seconds)$")) and (.value | type) == "number" then .value = "TIME"
        elif .key == "enable_run" then .value = "RUN" else . end) else . end)')
  fi
  if [ -e "$GUEST" ]; then
    guest=$(cd "$GUEST" && find . -printf '%y %m %s %P %l\n' -type f ! -path ./owner.json -exec sha256sum {} + | sort)
    # The owner record names the state directory's identity, random per fresh state directory:
    # compared as "this state directory's" (any other identity still shows as itself).
    if [ -f "$GUEST/owner.json" ]; then
      local ours=none
      [ ! -f "$LUME_METAL_STATE_DIR/identity" ] || ours=$(cat "$LUME_METAL_STATE_DIR/identity")
      guest+=$'\n'"owner.json $(sed "s/\"state_id\": \"$ours\"/\"state_id\": \"THIS STATE DIRECTORY\"/" "$GUEST/owner.json" | sha256sum)"
    fi
  else
    guest=absent
  fi
  WORLD="== preference"$'\n'"$plist"$'\n'"== journal"$'\n'"${JOURNAL_VIEW[x$raw]}"$'\n'"== guest"$'\n'"$guest"
  case "$cmd" in
  gc|json-gc|forget-host) WORLD+=$'\n'"== known_hosts"$'\n'"$(cat "$LUME_METAL_STATE_DIR/known_hosts" 2>/dev/null || echo absent)" ;;
  agent-*) WORLD+=$'\n'"== agents"$'\n'"$(agents_view)" ;;
  esac
}

# What a run printed, without what differs from one successful run to the next: durations and
# times (numbers with a fraction, ISO 8601 times), the guest's process ids (the simulated guest's
# count on from run to run) and a run's record folder (run-<16 random hex digits>).
shown() {
  sed -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z/TIME/g; s/[0-9]+(\.[0-9]+)?e[-+][0-9]+/#/g; s/[0-9]+\.[0-9]+/#/g
    s/run-[0-9a-f]{16}/run-ID/g; s/(pid|"pid":|"ppid":)([[:space:]]*)[0-9]+/\1\2PID/g' "$1"
}

# Files and VM of the state before the command: saved once, put back before every run.
save_before() {
  mkdir -p "$E2E_DIR/before"
  [ ! -e "$LUME_METAL_STATE_DIR" ] || cp -a "$LUME_METAL_STATE_DIR" "$E2E_DIR/before/state"
  cp -a "$LUME_METAL_PREFS_DIR" "$E2E_DIR/before/prefs"
  [ ! -e "$GUEST" ] || cp -a "$GUEST" "$E2E_DIR/before/guest"
  # The agent sweeps: the guest's LaunchAgents and launchd's view of them as they were.
  if [[ $cmd == agent-* ]]; then
    [ ! -e "$(guest_home vm1)/Library/LaunchAgents" ] || cp -a "$(guest_home vm1)/Library/LaunchAgents" "$E2E_DIR/before/agents"
    AGENTS_BEFORE=$(agents_view)
  fi
  # The guest's ~/.local as it was: enable notes which parents it made, rollback removes them.
  [ ! -e "${GUEST%/.local/share/lume-metal}/.local" ] || touch "$E2E_DIR/before/had-local"
}

restore_before() {
  rm -rf "$LUME_METAL_STATE_DIR" "$LUME_METAL_PREFS_DIR" "$GUEST"
  [ -e "$E2E_DIR/before/had-local" ] || rm -rf "${GUEST%/.local/share/lume-metal}/.local"
  [ ! -e "$E2E_DIR/before/state" ] || cp -a "$E2E_DIR/before/state" "$LUME_METAL_STATE_DIR"
  cp -a "$E2E_DIR/before/prefs" "$LUME_METAL_PREFS_DIR"
  # (rollback also removes the ~/.local and ~/.local/share the first enable made)
  if [ -e "$E2E_DIR/before/guest" ]; then
    local home=${GUEST%/.local/share/lume-metal}
    mkdir -p "$home/.local/share"
    chown --reference="$home" "$home/.local" "$home/.local/share"
    cp -a "$E2E_DIR/before/guest" "$GUEST"
  fi
  # Before every command the VM runs: enable's restart and rollback's too start from a running
  # VM (one the preference restored above applies to, when it has to be started again).
  [[ $(curl -fsS "$LUME_METAL_LUME_URL/lume/vms/vm1") =~ \"status\":[[:space:]]*\"running\" ]] || vm_run vm1
  # The agent sweeps: launchd as it was, when a run changed it (booted out through the guest's own
  # launchctl, which ends the job, then loaded and started again from the plist as it was).
  if [[ $cmd == agent-* ]] && [ "$(agents_view)" != "$AGENTS_BEFORE" ]; then
    local home; home=$(guest_home vm1)
    plain_ssh vm1 "launchctl bootout gui/\$(id -u)/$AGENT_LABEL" >/dev/null 2>&1 || true
    rm -rf "$home/Library/LaunchAgents"
    [ ! -e "$E2E_DIR/before/agents" ] || cp -a "$E2E_DIR/before/agents" "$home/Library/LaunchAgents"
    if [ -n "$AGENTS_BEFORE" ]; then
      plain_ssh vm1 "launchctl bootstrap gui/\$(id -u) $AGENT_PLIST && launchctl kickstart -k gui/\$(id -u)/$AGENT_LABEL" \
        >"$E2E_DIR/agent-restore.out" 2>&1 || fail "the agent not started again: $(cat "$E2E_DIR/agent-restore.out")"
    fi
    [ "$(agents_view)" = "$AGENTS_BEFORE" ] || fail "launchd not as it was: $(diff <(echo "$AGENTS_BEFORE") <(agents_view))"
  fi
}

# worker COMMAND MODE K WORKERS OUT [ONE]: N = K, K + WORKERS, ... until a run without a failure.
# OUT gets "fired COUNT", "absorbed COUNT", "clean-at N", one "absorbed-at N" line per run that
# succeeded in spite of its failure, and one "problem N: ..." line per run that broke a rule.
# ONE: N = K only, its output and the world's differences shown.
worker() {
  local cmd=$1 mode=$2 k=$3 w=$4 out=$5 one=${6:-} n rc spec fired=0 absorbed=0 between=0 err errtext before after now ok_shown
  local step=$((w * STRIDE)) whole
  args_of "$cmd"
  sim_start --vm vm1 --boot-delay 0 --stop-delay 0
  GUEST="$(guest_home vm1)/.local/share/lume-metal"
  vm_run vm1
  setup_for "$cmd"
  save_before
  world
  before=$WORLD
  "$LM_BIN_HOOKS" "${ARGS[@]}" >"$E2E_DIR/ok.out" 2>"$E2E_DIR/ok.err" ||
    fail "$cmd without failures: $(cat "$E2E_DIR/ok.out" "$E2E_DIR/ok.err")"
  ok_shown=$(shown "$E2E_DIR/ok.out")
  world
  after=$WORLD
  : >"$out"
  for ((n = 1 + OFFSET + (k - 1) * STRIDE; ; n += step)); do
    restore_before
    case "$mode" in once) spec="$n,1" ;; persistent) spec=$n ;; esac
    rm -f "$E2E_DIR/fired" "$E2E_DIR/trace"
    set +e
    LUME_METAL_TEST_FAIL_ALLOC=$spec LUME_METAL_TEST_FAIL_ALLOC_LOG="$E2E_DIR/fired" \
      LUME_METAL_TEST_FAIL_ALLOC_TRACE=${one:+$E2E_DIR/trace} \
      timeout -s KILL "$LM_HANG_GUARD_FLOOR" "$LM_BIN_HOOKS" "${ARGS[@]}" >"$E2E_DIR/run.out" 2>"$E2E_DIR/run.err"
    rc=$?
    set -e
    world
    now=$WORLD
    errtext=
    IFS= read -r -d '' errtext <"$E2E_DIR/run.err" || true
    # --format json: a failure is said in the (whole) document, or on stderr when none could be
    # rendered; the document's error counts as the error line.
    if [[ $cmd == json-* ]] && [ -s "$E2E_DIR/run.out" ]; then
      errtext+=$'\n'"lume-metal: $(jq -r '.error.message // empty' "$E2E_DIR/run.out" 2>/dev/null | tr '\n' ' ')"
    fi
    err=${errtext//$'\n'/ }
    err=${err:0:400}
    if [ -n "$one" ]; then
      echo "--- N=$n: exit $rc; allocation failures: $(wc -l <"$E2E_DIR/fired" 2>/dev/null || echo 0)"
      echo "--- stdout:"; cat "$E2E_DIR/run.out"; echo "--- stderr:"; cat "$E2E_DIR/run.err"
      if [ -s "$E2E_DIR/trace" ]; then
        echo "--- where the allocation failed:"
        # "binary(+0xOFFSET) [...]" lines: the offsets, resolved where the binary is ours
        sed -nE 's/^([^(]+)\(\+(0x[0-9a-f]+)\).*/\1 \2/p' "$E2E_DIR/trace" | while read -r bin off; do
          if command -v addr2line >/dev/null; then addr2line -f -i -p -e "$bin" "$off" 2>/dev/null | sed "s|^|  |"; else echo "  $bin $off"; fi
        done
      fi
      echo "--- world: before -> now"; diff <(echo "$before") <(echo "$now") || true
      echo "--- world: after -> now"; diff <(echo "$after") <(echo "$now") || true
    fi
    if [ ! -s "$E2E_DIR/fired" ]; then
      # No allocation failed: the command has fewer than N; it must simply have succeeded.
      [ "$rc" -eq 0 ] || echo "problem $n: no allocation failed, yet exit $rc: $err" >>"$out"
      [ "$now" = "$after" ] ||
        echo "problem $n: no allocation failed, yet the world differs from a successful run's: $(diff <(echo "$after") <(echo "$now") | head -5 | tr '\n' ' ')" >>"$out"
      echo "clean-at $n" >>"$out"
      break
    fi
    fired=$((fired + 1))
    if [[ $cmd == json-* ]]; then
      whole=$(json_whole "$E2E_DIR/run.out" "$rc")
      [ -z "$whole" ] || echo "problem $n: the JSON document is not whole or absent: $whole" >>"$out"
    fi
    if [ "$rc" -eq 0 ]; then
      # The failure was absorbed: fine only if nothing shows it (the code had another way).
      if [ "$(shown "$E2E_DIR/run.out")" = "$ok_shown" ] && [ "$now" = "$after" ]; then
        absorbed=$((absorbed + 1))
        echo "absorbed-at $n" >>"$out"
      else
        echo "problem $n: an allocation failed, yet the command succeeded with another output or world: $(diff <(echo "$ok_shown") <(shown "$E2E_DIR/run.out") | head -6 | tr '\n' ' ')$(diff <(echo "$after") <(echo "$now") | head -6 | tr '\n' ' ')" >>"$out"
      fi
    elif [ "$rc" -eq 137 ]; then
      echo "problem $n: no end within 120 s (killed)" >>"$out"
    elif [ "$rc" -ne 1 ]; then
      echo "problem $n: exit $rc, expected 1: $err" >>"$out"
    elif ! [[ $'\n'$errtext =~ $'\n'lume-metal:\ [^$'\n']*out\ of\ memory ]]; then
      echo "problem $n: the error does not say out of memory: $err" >>"$out"
    fi
    if [[ $errtext == *Sanitizer* || $errtext == *"runtime error:"* ]]; then
      echo "problem $n: sanitizer report: $err" >>"$out"
    fi
    if [ "$now" != "$before" ] && [ "$now" != "$after" ]; then
      # In between: what a crash at that point leaves (rollback removes the guest's files before
      # the journal forgets the VM; a persistent failure leaves no memory to undo anything). The
      # journal still says what is left: the same command, run again, must finish the job.
      set +e
      "$LM_BIN_HOOKS" "${ARGS[@]}" >"$E2E_DIR/again.out" 2>"$E2E_DIR/again.err"
      rc=$?
      set -e
      world
      if [ "$rc" -eq 0 ] && [ "$WORLD" = "$after" ]; then
        between=$((between + 1))
        echo "between-at $n" >>"$out"
      else
        echo "problem $n: the world is neither as before nor as after, and the command run again (exit $rc) left: $(diff <(echo "$after") <(echo "$WORLD") | head -8 | tr '\n' ' ') (after the failure: $(diff <(echo "$before") <(echo "$now") | head -8 | tr '\n' ' '))" >>"$out"
      fi
      [ -z "$one" ] || { echo "--- run again: exit $rc"; cat "$E2E_DIR/again.out" "$E2E_DIR/again.err"; }
    fi
    [ -z "$one" ] || break
  done
  echo "fired $fired" >>"$out"
  echo "absorbed $absorbed" >>"$out"
  echo "between $between" >>"$out"
  check_guest_shells
}

# LM_FAULT_STRIDE=S: only every S-th failure point is run (1, 1 + S, ...; default 1: every one),
# for the sweeps of the suite that would otherwise take too long; the count of points is then
# the sampled ones.
STRIDE=${LM_FAULT_STRIDE:-1}
[[ $STRIDE =~ ^[1-9][0-9]*$ ]] || fail "LM_FAULT_STRIDE=$STRIDE: expected a positive number"
# LM_FAULT_ROTATE=1 (the suite's sampled sweeps): the sample starts at 1 + R, R the checkout's HEAD
# commit (its first 7 hex digits) modulo S, so that successive commits run different points; the
# same commit always runs the same ones, and LM_FAULT_OFFSET=R runs a given sample again.
OFFSET=${LM_FAULT_OFFSET:-}
if [ -z "$OFFSET" ] && [ "${LM_FAULT_ROTATE:-0}" = 1 ] &&
  head=$(git -C "$(dirname "$0")" rev-parse --short=7 HEAD 2>/dev/null); then
  OFFSET=$((16#$head % STRIDE))
fi
OFFSET=${OFFSET:-0}
[[ $OFFSET =~ ^[0-9]+$ ]] && [ "$OFFSET" -lt "$STRIDE" ] || fail "LM_FAULT_OFFSET=$OFFSET: expected 0 to $((STRIDE - 1))"

if [ "${1:-}" = --worker ]; then
  shift
  worker "$@"
  exit 0
fi

[ $# -eq 2 ] || [ $# -eq 3 ] || usage
cmd=$1 mode=$2
args_of "$cmd"
case "$mode" in once|persistent) ;; *) usage ;; esac
if [ $# -eq 3 ]; then
  [[ $3 =~ ^[1-9][0-9]*$ ]] || usage
  worker "$cmd" "$mode" "$3" 1 "$E2E_DIR/one" one
  cat "$E2E_DIR/one"
  ! grep -q '^problem' "$E2E_DIR/one"
  exit
fi
workers=${LM_FAULT_WORKERS:-4}
[[ $workers =~ ^[1-9][0-9]?$ ]] || fail "LM_FAULT_WORKERS=$workers: expected 1 to 99"
IFS=. read -r a b net _ <<<"$LM_ADDRESS_BASE"

pids=()
stop_workers() {
  local p
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
# The workers go first, then lib.sh's own clean-up (its simulator, the scratch directory).
lm_test_before_exit() { stop_workers; e2e_before_exit "$@"; }

for ((k = 1; k <= workers; k++)); do
  LM_ADDRESS_BASE="$a.$b.$((net + k - 1)).2" "$0" --worker "$cmd" "$mode" "$k" "$workers" "$E2E_DIR/worker-$k" \
    >"$E2E_DIR/worker-$k.log" 2>&1 &
  pids+=($!)
done
failed_workers=0
for ((k = 1; k <= workers; k++)); do
  if ! wait "${pids[k - 1]}"; then
    failed_workers=1
    echo "--- worker $k failed:" >&2; tail -n 20 "$E2E_DIR/worker-$k.log" >&2
  fi
done
pids=()
[ "$failed_workers" -eq 0 ] || fail "$cmd ($mode): a worker failed"

# Every N below the first that ran clean must have failed an allocation: the workers agree.
points=0 absorbed=0 between=0 first_clean=
for ((k = 1; k <= workers; k++)); do
  f=$(awk '$1 == "fired" {print $2}' "$E2E_DIR/worker-$k")
  a=$(awk '$1 == "absorbed" {print $2}' "$E2E_DIR/worker-$k")
  b=$(awk '$1 == "between" {print $2}' "$E2E_DIR/worker-$k")
  c=$(awk '$1 == "clean-at" {print $2}' "$E2E_DIR/worker-$k")
  points=$((points + f)) absorbed=$((absorbed + a)) between=$((between + b))
  if [ -z "$first_clean" ] || [ "$c" -lt "$first_clean" ]; then first_clean=$c; fi
done
problems=$(cat "$E2E_DIR"/worker-* | grep '^problem' | sort -t' ' -k2,2n || true)
sample=
[ "$STRIDE" -eq 1 ] || sample=" (one point in $STRIDE, from $((1 + OFFSET)): LM_FAULT_OFFSET=$OFFSET)"
echo "$cmd ($mode): $points failure points$sample (the command makes $((first_clean - 1)) counted allocations):" \
  "$((points - absorbed)) ended in out of memory ($((points - absorbed - between)) with the world as before or" \
  "as after, $between in between and finished by the next run), $absorbed absorbed the failure with the same" \
  "output and world; $(printf '%s' "$problems" | grep -c . || true) broke a rule"
[ -z "$problems" ] || fail "$cmd ($mode):
$problems"
[ "$points" -gt 0 ] || fail "$cmd ($mode): no allocation failed at all (is the allocator wrapped?)"
