#!/usr/bin/env bash
# End-to-end scenarios about Lume as it really starts and stops, and whose preference domain the
# VMs read (issue 9, sections 2 and 3): lume_scenarios.sh NAME. Each starts its own simulator
# (docs/simulator.md) and state; the request log is the witness of what was and was not done.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

clock_at_least() { [ "$(date +%s)" -ge "$1" ]; }
# End the simulator and wait until it has stopped its guests (a condition, however long the guests
# take on a busy machine), so that none outlives the scenario.
sim_stop() {
  [ -n "$SIM_PID" ] || return 0
  kill -TERM "$SIM_PID"
  wait_for 120 "the simulator to stop its guests" exited "$SIM_PID"
  wait "$SIM_PID" || fail "the simulator exited with status $?"
  SIM_PID=
}

# Start a VM through the API (as a user would) and wait until SSH answers, however long a busy
# machine takes to start its guest.

# Until the wall clock is 2 s past NAME's last boot: its guest then clearly booted before any
# change of the preference made from now on (the restart rule compares the two).
after_boot_of() {
  local boot
  boot=$(jq -r --arg v "$1" 'select(.source == "sim" and .event == "boot" and .vm == $v) | .detail' "$SIM_LOG" | tail -n 1)
  wait_for 10 "the clock to pass $1's boot" clock_at_least $((boot + 2))
}

# `lume stop` on a VM the server runs signals the server, as VM.swift's stop() does: the server
# ends, and every VM it runs (here vm2, never named) goes down with it. No request is sent.
scenario_lume_stop_ends_server() {
  sim_start --vm vm1 --vm vm2 --keep --stop-grace 120
  vm_run vm1
  vm_run vm2
  local a1 a2 rc
  a1=$(vm_field vm1 address)
  a2=$(vm_field vm2 address)
  set +e; lume_cli stop vm1 >"$E2E_DIR/stop.out" 2>&1; rc=$?; set -e
  [ $rc -eq 0 ] || fail "lume stop vm1: exit $rc: $(cat "$E2E_DIR/stop.out")"
  wait_for 30 "the simulated server to end" exited "$SIM_PID"
  wait "$SIM_PID" || true
  SIM_PID=
  ! port22_open "$a1" || fail "vm1 still answers"
  ! port22_open "$a2" || fail "vm2 still answers: it should have gone down with the server"
  log_has '.source == "lume-cli" and (.note // "" | startswith("SIGINT to PID "))' || fail "no SIGINT recorded"
  log_has '.source == "sim" and .event == "exit" and .detail == "signal 2 (SIGINT)"' ||
    fail "the server did not end on SIGINT: $(tail -n 5 "$SIM_LOG")"
  [ "$(jq -c 'select(.event == "stopped" and .detail == "the server exited")' "$SIM_LOG" | wc -l)" -eq 2 ] ||
    fail "not both VMs went down with the server: $(grep stopped "$SIM_LOG")"
  [ "$(count_requests POST /stop)" -eq 0 ] || fail "the lume stand-in asked the server to stop"
}

# A VM run by `lume run --detach` belongs to that process: `lume stop` ends it, the server and its
# own VM stay. Lume's detach messages, exit 0 for a VM that does not exist, and SIGKILL after the
# grace period for a holder that ignores SIGINT.
scenario_lume_stop_cli_owned() {
  sim_start --vm vm1 --vm vm2
  vm_run vm1
  local out pid log cfg holder rc runs1 stops1
  out=$(lume_cli run vm2 --detach) || fail "lume run vm2 --detach: exit $?"
  pid=$(printf '%s\n' "$out" | sed -n "1s/^Started 'vm2' in the background (PID \([0-9][0-9]*\))\.\$/\1/p")
  log=$(printf '%s\n' "$out" | sed -n '2s/^Log: //p')
  [ -n "$pid" ] && [ -f "$log" ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 2 ] || fail "run --detach printed: $out"
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q ' run vm2 --display none ' || fail "child: $(tr '\0' ' ' <"/proc/$pid/cmdline")"
  wait_for 60 "vm2 to be ready" vm_ready vm2
  # The detail goes on with the host level the VM read as it started (issue 13).
  [ "$(sim_events run vm2)" -eq 1 ] &&
    log_has '.event == "run" and .vm == "vm2" and (.detail | startswith("by lume run (PID '"$pid"');"))' ||
    fail "vm2 not run by PID $pid: $(jq -c 'select(.vm == "vm2")' "$SIM_LOG")"
  runs1=$(sim_events run vm1)
  stops1=$(sim_events stopped vm1)

  lume_cli stop vm2 >"$E2E_DIR/stop.out" 2>&1 || fail "lume stop vm2: $(cat "$E2E_DIR/stop.out")"
  grep -q "SIGINT to PID $pid, which holds vm2" "$SIM_LOG" || fail "the run process was not signalled"
  # `lume stop` answers once the VM is down; its run process may still be ending (under load).
  wait_for 300 "the lume run process $pid to end after lume stop" exited "$pid"
  [ "$(vm_status vm2)" = stopped ] || fail "vm2 is $(vm_status vm2)"
  kill -0 "$SIM_PID" || fail "the server ended"
  [ "$(vm_status vm1)" = running ] && [ "$(sim_events run vm1)" -eq "$runs1" ] &&
    [ "$(sim_events stopped vm1)" -eq "$stops1" ] || fail "vm1 was touched"
  [ "$(count_requests POST /stop)" -eq 0 ] || fail "the lume stand-in asked the server to stop"

  # Lume's detach looks at nothing: a VM that does not exist "starts", and fails in its log.
  out=$(lume_cli run ghost --detach) || fail "lume run ghost --detach: exit $?"
  log=$(printf '%s\n' "$out" | sed -n '2s/^Log: //p')
  wait_for 30 "the background run of ghost to fail" grep -q "Virtual machine not found: ghost" "$log"

  # Whatever holds the config.json is what `lume stop` signals; one that ignores SIGINT is killed.
  cfg=$(vm_field vm2 config)
  bash -c 'trap "" INT; exec 3<"$1"; exec sleep 600' _ "$cfg" &
  holder=$!
  wait_for 10 "the holder to open $cfg" holds "$holder" "$cfg"
  out=$(LUME_SIM_STOP_GRACE=0.5 lume_cli stop vm2) || fail "lume stop (holder): exit $?"
  printf '%s\n' "$out" | grep -q "VM forcefully stopped" || fail "no SIGKILL: $out"
  set +e; wait "$holder" 2>/dev/null; rc=$?; set -e
  [ $rc -eq 137 ] || fail "the holder ended with $rc, not SIGKILL"
}

# The two-VM slow-status test: the host status takes seconds, yet lume-metal uses the API (found by
# a connection, not by that endpoint), restarts vm1, and never stops or starts vm2.
scenario_slow_status_bystander() {
  sim_start --vm vm1 --vm vm2 --status-delay 2
  vm_run vm1
  vm_run vm2
  local t0 t1 from runs2 stops2 boots2
  t0=$(date +%s.%N)
  curl -fsS "$LUME_METAL_LUME_URL/lume/host/status" >"$E2E_DIR/hs.json"
  t1=$(date +%s.%N)
  note "GET /lume/host/status with 2 running VMs took $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s"
  jq_is "$E2E_DIR/hs.json" .version 1.0.0
  after_boot_of vm1
  runs2=$(sim_events run vm2)
  stops2=$(sim_events stopped vm2)
  boots2=$(sim_events boot vm2)
  from=$(log_lines)
  lm_json "$E2E_DIR/e.json" enable vm1
  expect_rc 0 "$E2E_DIR/e.json"
  jq_is "$E2E_DIR/e.json" '.vms[0].restarted' true
  # Through the API: one stop and one run of vm1, no host status, no lume command.
  [ "$(count_requests POST /lume/vms/vm1/stop "$from")" -eq 1 ] || fail "vm1 not stopped over HTTP"
  [ "$(count_requests POST /lume/vms/vm1/run "$from")" -eq 1 ] || fail "vm1 not started over HTTP"
  [ "$(count_requests GET /lume/host/status "$from")" -eq 0 ] || fail "detection asked the slow host status"
  [ "$(tail -n +"$((from + 1))" "$SIM_LOG" | jq -c 'select(.source == "lume-cli")' | wc -l)" -eq 0 ] ||
    fail "the lume CLI was used"
  # vm2: never stopped, never started again.
  [ "$(sim_events run vm2)" -eq "$runs2" ] || fail "vm2 was started again"
  [ "$(sim_events stopped vm2)" -eq "$stops2" ] || fail "vm2 was stopped"
  [ "$(sim_events boot vm2)" -eq "$boots2" ] || fail "vm2 rebooted"
  [ "$(count_requests POST /lume/vms/vm2/stop "$from")" -eq 0 ] || fail "a stop of vm2 was sent"
  [ "$(vm_status vm2)" = running ] || fail "vm2 is $(vm_status vm2)"
}

# A re-enable while another VM the journal remembers boots again with its old lease (an address,
# a silent guest): Lume's GET of that VM would wait out its 2-second check of port 22
# (reference/lume.md; tests/sim/sim_vm.c lume_ssh_check). The sweep for deleted VMs asks Lume
# only about VMs whose files are not in Lume's storage (host/lib/vm/vm_auto.c lm_vm_gone): vm2's
# are, so neither backend asks about vm2. A deleted VM is still forgotten (ephemeral.sh).
scenario_silent_bystander() {
  sim_start --vm vm1 --vm vm2
  vm_run vm1
  vm_run vm2
  lm_json "$E2E_DIR/e.json" enable vm1 vm2
  expect_rc 0 "$E2E_DIR/e.json"
  curl -fsS -X POST "$LUME_METAL_LUME_URL/lume/vms/vm2/stop" >/dev/null
  curl -fsS -X POST -d '{"hold": true}' "$LUME_METAL_LUME_URL/_sim/vms/vm2/hold-boot" >/dev/null
  curl -fsS -X POST -d '{"noDisplay":true}' "$LUME_METAL_LUME_URL/lume/vms/vm2/run" >/dev/null
  # The state the sweep meets: running, an address, the guest silent (one 2-s check, here).
  curl -fsS "$LUME_METAL_LUME_URL/lume/vms/vm2" >"$E2E_DIR/vm2.json"
  jq_is "$E2E_DIR/vm2.json" .status running
  jq -e '.ipAddress != null and .sshAvailable == false' "$E2E_DIR/vm2.json" >/dev/null ||
    fail "vm2 is not booting with an address: $(cat "$E2E_DIR/vm2.json")"
  local from; from=$(log_lines)
  lm_json "$E2E_DIR/r.json" enable vm1
  expect_rc 0 "$E2E_DIR/r.json"
  jq_is "$E2E_DIR/r.json" '.vms[0].restarted' false
  note "re-enable of vm1 beside the silent vm2: $(jq -r .seconds "$E2E_DIR/r.json") s"
  [ "$(count_requests GET /lume/vms/vm1 "$from")" -ge 1 ] || fail "vm1 was not asked about"
  [ "$(count_requests GET /lume/vms/vm2 "$from")" -eq 0 ] || fail "the sweep asked Lume about vm2"
  # The CLI backend: no `lume get vm2` either.
  from=$(log_lines)
  lm_json "$E2E_DIR/c.json" enable vm1 --vm-manager lume-cli --lume "$(jq -r .lume "$E2E_DIR/sim.json")"
  expect_rc 0 "$E2E_DIR/c.json"
  [ "$(tail -n +"$((from + 1))" "$SIM_LOG" | jq -c 'select(.source == "lume-cli" and .argv[0] == "get" and .argv[1] == "vm2")' | wc -l)" -eq 0 ] ||
    fail "the sweep ran lume get vm2"
  [ "$(tail -n +"$((from + 1))" "$SIM_LOG" | jq -c 'select(.source == "lume-cli" and .argv[0] == "get" and .argv[1] == "vm1")' | wc -l)" -ge 1 ] ||
    fail "the CLI backend did not ask about vm1: $(tail -n +"$((from + 1))" "$SIM_LOG")"
  jq_is "$LUME_METAL_STATE_DIR/state.json" '.vms | keys | join(",")' "vm1,vm2"
  curl -fsS -X POST -d '{"hold": false}' "$LUME_METAL_LUME_URL/_sim/vms/vm2/hold-boot" >/dev/null
}

# With the CLI backend forced, a VM the server runs is never stopped with `lume stop` (which would
# end the server): enable says so and what to do; both VMs and the server keep running.
scenario_cli_backend_spares_server() {
  sim_start --vm vm1 --vm vm2
  vm_run vm1
  vm_run vm2
  after_boot_of vm1
  local from; from=$(log_lines)
  lm_json "$E2E_DIR/e.json" enable vm1 --vm-manager lume-cli --lume "$(jq -r .lume "$E2E_DIR/sim.json")"
  expect_rc 1 "$E2E_DIR/e.json"
  jq_is "$E2E_DIR/e.json" '.vms[0].error.code' vm-owner
  jq -r '.vms[0].message' "$E2E_DIR/e.json" | grep -q "lume stop vm1. would send that process SIGINT" ||
    fail "$(jq -r '.vms[0].message' "$E2E_DIR/e.json")"
  jq -r '.vms[0].message' "$E2E_DIR/e.json" | grep -q "vm1 was not stopped" || fail "$(cat "$E2E_DIR/e.json")"
  jq -r '.error.hint' "$E2E_DIR/e.json" | grep -q "start .lume serve. (or pass --lume-url" ||
    fail "no advice: $(cat "$E2E_DIR/e.json")"
  jq -r '.vms[0].message' "$E2E_DIR/e.json" | grep -q "host preference restored" || fail "$(cat "$E2E_DIR/e.json")"
  kill -0 "$SIM_PID" || fail "the server ended"
  [ "$(tail -n +"$((from + 1))" "$SIM_LOG" | jq -c 'select(.source == "lume-cli" and .argv[0] == "stop")' | wc -l)" -eq 0 ] ||
    fail "lume stop was run"
  [ "$(sim_events stopped vm1)" -eq 0 ] && [ "$(sim_events stopped vm2)" -eq 0 ] || fail "a VM was stopped"
  [ "$(vm_status vm1)" = running ] && [ "$(vm_status vm2)" = running ] || fail "a VM is down"
  [ ! -e "$PLIST" ] || fail "preference left changed"
}

# libcurl is loaded at its first use (host/lib/vm/curl_lib.c): without it the Lume API backend
# fails with what to install and what to use instead, before anything changed; Lume's command line
# (and any backend but the API) works without it.
scenario_curl_missing() {
  sim_start --vm vm1
  vm_run vm1
  local lib=libcurl-not-here.so.4
  export LUME_METAL_TEST_CURL_LIBRARY=$lib
  LM_BIN=$LM_BIN_HOOKS
  lm_json "$E2E_DIR/e.json" enable vm1 --vm-manager lume-api
  [ "$LM_RC" -ne 0 ] || fail "enable succeeded without libcurl: $(cat "$E2E_DIR/e.json")"
  jq -r '[.. | objects | (.message, .hint) | strings] | join("\n")' "$E2E_DIR/e.json" >"$E2E_DIR/e.msg"
  grep -q "libcurl ($lib), which the Lume HTTP API needs, could not be loaded: $lib: cannot open shared object file" \
    "$E2E_DIR/e.msg" || fail "message: $(cat "$E2E_DIR/e.json")"
  grep -q "sudo apt-get install libcurl4" "$E2E_DIR/e.msg" || fail "no advice: $(cat "$E2E_DIR/e.json")"
  grep -q "(the lume-cli VM manager)" "$E2E_DIR/e.msg" && grep -qx -- "--vm-manager lume-cli uses Lume's command line" "$E2E_DIR/e.msg" || fail "no alternative: $(cat "$E2E_DIR/e.json")"
  [ ! -e "$PLIST" ] || fail "preference left changed: $(cat "$E2E_DIR/e.json")"
  [ "$(vm_status vm1)" = running ] || fail "vm1 is down"
  lm_json "$E2E_DIR/s.json" status vm1 --vm-manager lume-cli --lume "$(jq -r .lume "$E2E_DIR/sim.json")"
  expect_rc 0 "$E2E_DIR/s.json"
  jq_is "$E2E_DIR/s.json" '.vms[0].state' running
}

# macOS 13.0's libcurl (7.84.0) does not know CURLOPT_PROTOCOLS_STR (7.85.0): the API backend then
# limits every request to http and https with CURLOPT_PROTOCOLS, and a libcurl that takes neither
# is refused before anything changed, never used unrestricted (host/lib/vm/vm_api.c).
scenario_curl_784() {
  sim_start --vm vm1
  vm_run vm1
  export LUME_METAL_TEST_CURL_LIBRARY=$LM_FAKE_CURL LM_FAKE_CURL_LOG=$E2E_DIR/curl.log
  LM_BIN=$LM_BIN_HOOKS
  local from
  from=$(wc -l <"$SIM_LOG")

  # Neither option: refused with what to do, and nothing sent, nothing changed.
  LM_FAKE_CURL_REFUSE=all lm_json "$E2E_DIR/refused.json" enable vm1 --vm-manager lume-api
  [ "$LM_RC" -ne 0 ] || fail "enable succeeded with a libcurl that cannot be limited: $(cat "$E2E_DIR/refused.json")"
  jq -r '[.. | objects | (.message, .hint) | strings] | join("\n")' "$E2E_DIR/refused.json" >"$E2E_DIR/refused.msg"
  grep -q "libcurl ($LM_FAKE_CURL) cannot be limited to http and https" "$E2E_DIR/refused.msg" ||
    fail "message: $(cat "$E2E_DIR/refused.json")"
  grep -q "needs libcurl 7.84.0 or later" "$E2E_DIR/refused.msg" || fail "no version: $(cat "$E2E_DIR/refused.json")"
  grep -q "(the lume-cli VM manager)" "$E2E_DIR/refused.msg" && grep -qx -- "--vm-manager lume-cli uses Lume's command line" "$E2E_DIR/refused.msg" || fail "no alternative: $(cat "$E2E_DIR/refused.json")"
  [ "$(tail -n +"$((from + 1))" "$SIM_LOG" | jq -c 'select(.source == "http")' | wc -l)" -eq 0 ] ||
    fail "a request was sent: $(tail -n +"$((from + 1))" "$SIM_LOG" | jq -c 'select(.source == "http")')"
  [ ! -e "$PLIST" ] || fail "preference left changed: $(cat "$E2E_DIR/refused.json")"
  grep -q "refused CURLOPT_PROTOCOLS 3" "$E2E_DIR/curl.log" || fail "CURLOPT_PROTOCOLS not asked: $(cat "$E2E_DIR/curl.log")"
  : >"$E2E_DIR/curl.log"

  # 7.84.0: every request is limited by the bit mask (CURLPROTO_HTTP | CURLPROTO_HTTPS = 3).
  lm_json "$E2E_DIR/e.json" enable vm1 --vm-manager lume-api
  expect_rc 0 "$E2E_DIR/e.json"
  jq_is "$E2E_DIR/e.json" '.vms[0].result' ok
  local asked limited
  asked=$(grep -c "^refused CURLOPT_PROTOCOLS_STR$" "$E2E_DIR/curl.log" || true)
  limited=$(grep -c "^CURLOPT_PROTOCOLS 3$" "$E2E_DIR/curl.log" || true)
  [ "$asked" -gt 0 ] && [ "$asked" -eq "$limited" ] && [ "$(wc -l <"$E2E_DIR/curl.log")" -eq $((asked + limited)) ] ||
    fail "each request limited once: $asked refusals, $limited limits: $(cat "$E2E_DIR/curl.log")"
}

# The preference goes to the user whose VMs read it: lume-metal run as another user than the
# server's is refused before anything is written; status says whose domain; forcing is possible.
scenario_user_mismatch() {
  sim_start --vm vm1
  local nb="$E2E_DIR/nobody"
  mkdir -p "$nb/home"
  chown -R nobody "$nb"
  chmod 700 "$nb"
  as_nobody() {
    runuser -u nobody -- env HOME="$nb/home" LUME_METAL_STATE_DIR="$nb/state" LUME_METAL_PREFS_DIR="$nb/prefs" \
      LUME_METAL_LUME_URL="$LUME_METAL_LUME_URL" NO_COLOR=1 "$LM_BIN" "$@"
  }
  set +e; as_nobody host enable --format json >"$E2E_DIR/h.json" 2>"$E2E_DIR/h.json.err"; LM_RC=$?; set -e
  expect_rc 1 "$E2E_DIR/h.json"
  jq_is "$E2E_DIR/h.json" .error.code wrong-user
  jq -r .error.message "$E2E_DIR/h.json" | grep -q "runs as root, but lume-metal runs as nobody" || fail "$(cat "$E2E_DIR/h.json")"
  jq -r .error.message "$E2E_DIR/h.json" | grep -q "Nothing was written. Run lume-metal as root" || fail "$(cat "$E2E_DIR/h.json")"
  jq -r .error.hint "$E2E_DIR/h.json" | grep -q -- "--force-user-mismatch" || fail "$(cat "$E2E_DIR/h.json")"
  grep -q -- "--force-user-mismatch" "$E2E_DIR/h.json.err" || fail "text: $(cat "$E2E_DIR/h.json.err")"
  [ -z "$(find "$nb" -name '*.plist')" ] || fail "a preference file was written"
  [ ! -e "$nb/state/state.json" ] || ! jq -e .preference "$nb/state/state.json" >/dev/null || fail "journal written"

  # enable: refused once, before any VM is touched.
  set +e; as_nobody enable vm1 --format json >"$E2E_DIR/e.json" 2>"$E2E_DIR/e.json.err"; LM_RC=$?; set -e
  expect_rc 1 "$E2E_DIR/e.json"
  jq_is "$E2E_DIR/e.json" '.vms[0].error.code' wrong-user
  [ "$(count_requests POST /run)" -eq 0 ] || fail "a VM was started"
  [ -z "$(find "$nb" -name '*.plist')" ] || fail "a preference file was written"

  # status: whose domain, in JSON and text.
  set +e; as_nobody status --format json >"$E2E_DIR/s.json" 2>/dev/null; set -e
  jq_is "$E2E_DIR/s.json" .host_preference.user nobody
  jq_is "$E2E_DIR/s.json" .host_preference.server_user root
  jq_is "$E2E_DIR/s.json" .host_preference.user_mismatch true
  as_nobody host status | grep -q "user: *nobody's domain, but the Lume server runs as root" ||
    fail "host status: $(as_nobody host status)"
  lm_json "$E2E_DIR/r.json" status
  jq_is "$E2E_DIR/r.json" .host_preference.user root
  jq_is "$E2E_DIR/r.json" .host_preference.server_user root
  jq_is "$E2E_DIR/r.json" .host_preference.user_mismatch false
  lm status | grep -q "user: root's domain, the Lume server's user's" || fail "status: $(lm status)"

  # Forced: written, with a warning.
  as_nobody host enable --force-user-mismatch >/dev/null 2>"$E2E_DIR/f.err" || fail "forced enable: $(cat "$E2E_DIR/f.err")"
  grep -q "forced: writing nobody's preference domain although" "$E2E_DIR/f.err" || fail "no warning: $(cat "$E2E_DIR/f.err")"
  [ -n "$(find "$nb/prefs" -name '*.plist')" ] || fail "forced enable wrote nothing"
  as_nobody host disable --force-user-mismatch >/dev/null 2>&1 || fail "forced disable"
  [ ! -d "$nb/prefs" ] || [ -z "$(find "$nb/prefs" -name "*.plist")" ] || fail "forced disable left the file"

  # root, the default preference store, and no Lume server at the URL: refused as well.
  set +e
  env -u LUME_METAL_PREFS_DIR HOME="$E2E_DIR/roothome" "$LM_BIN" host enable --lume-url http://127.0.0.1:1 \
    --format json >"$E2E_DIR/root.json" 2>"$E2E_DIR/root.json.err"
  LM_RC=$?
  set -e
  expect_rc 1 "$E2E_DIR/root.json"
  jq_is "$E2E_DIR/root.json" .error.code wrong-user
  jq -r .error.message "$E2E_DIR/root.json" | grep -q "runs as root and no Lume server answers at 127.0.0.1:1" ||
    fail "$(cat "$E2E_DIR/root.json")"
  [ ! -e "$E2E_DIR/roothome/Library/Preferences" ] || [ -z "$(ls -A "$E2E_DIR/roothome/Library/Preferences")" ] ||
    fail "root's preference written"
}

name=${1:?usage: lume_scenarios.sh NAME}
"scenario_$name"
sim_stop
echo "e2e $name: passed"
