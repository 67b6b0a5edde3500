#!/usr/bin/env bash
# should_cancel: Ctrl-C (SIGINT) to `lume-metal enable` while it waits for the VM to boot; the tool
# turns it into the library's should_cancel, which stops the run at the next safe point and undoes
# it: error "canceled", the host preference as it was, no journal entry left, and the process
# ends by SIGINT (130 in a shell).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

sim_start --vm vm1 --boot-delay 60
"$LM_BIN" enable vm1 --verbose --format json >"$E2E_DIR/e.json" 2>"$E2E_DIR/e.err" &
pid=$!
# Wait for the condition, not for a time: the step line saying the wait for readiness began.
for _ in $(seq 1 600); do
  grep -q '^vm1: ready \.\.\.$' "$E2E_DIR/e.err" && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.05
done
grep -q '^vm1: ready \.\.\.$' "$E2E_DIR/e.err" || fail "enable never began to wait: $(cat "$E2E_DIR/e.err")"
t0=$(date +%s.%N)
kill -INT "$pid"
set +e; wait "$pid"; rc=$?; set -e
echo "latency readiness $(echo "$(date +%s.%N) - $t0" | bc -l)" # a figure for bench_cancel.sh, not asserted
[ $rc -eq 130 ] || fail "canceled enable exited $rc, expected 130 (ended by SIGINT): $(cat "$E2E_DIR/e.json" "$E2E_DIR/e.err")"
jq_is "$E2E_DIR/e.json" '.error.code' canceled
jq_is "$E2E_DIR/e.json" '.vms[0].result' failed
jq_is "$E2E_DIR/e.json" '[.vms[0].steps[] | select(.state == "failed") | .name] | join(",")' ready
grep -q '^vm1: ready FAILED' "$E2E_DIR/e.err" || fail "no FAILED step line: $(cat "$E2E_DIR/e.err")"
jq -r '.vms[0].message' "$E2E_DIR/e.json" | grep -q 'host preference restored' || fail "not undone: $(cat "$E2E_DIR/e.json")"
[ ! -e "$PLIST" ] || fail "the host preference file is left (it was absent)"
lm_json "$E2E_DIR/s.json" status
jq_is "$E2E_DIR/s.json" '.vms | length' 0
echo "ok: canceled at the ready step, undone"
