#!/usr/bin/env bash
# End-to-end scenarios of issue 48, item 5 ("workers that come and go"), on zsh guests: workers.sh NAME.
#   Ollama runs a short discovery runner at start (ollama discover/llama_server.go) and an inference
#   runner per model load that exits after OLLAMA_KEEP_ALIVE (5 minutes, envconfig/config.go) idle
#   (llm/llama_server.go). An idle, healthy Ollama agent is widened: the exited worker's record is
#   kept while the server that started it runs, `agent list`, `status` and `doctor` name it; once
#   the server is stopped too, the records are pruned at the next look.
#   The fixture: ollama-serve (tests/guest/drivers/ollama_serve.c) as the guest's `ollama`; a model
#   load is its SIGUSR1, the keep-alive running out its SIGUSR2 (the test's conditions, no waits).
# See docs/testing.md.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
: "${LM_OLLAMA_SERVE:?LM_OLLAMA_SERVE: the ollama-serve fixture}"
: "${LM_SCHEMA:?LM_SCHEMA: docs/json-output.schema.json}" "${LM_PYTHON:?LM_PYTHON: a python3 with jsonschema}"

LABEL=com.example.ollama

# An enabled vm1 on a SIP-on guest (children keep the shim) with the fixture as /opt/homebrew/bin/ollama.
setup() {
  # A SIP-off guest, as Cua's image and Tart's -base and -xcode are (issue 48's must-show).
  export GUEST_SSHD_SIP=disabled
  sim_start --vm vm1
  lm_json "$E2E_DIR/e.json" enable vm1
  expect_rc 0 "$E2E_DIR/e.json"
  install -m 755 "$LM_OLLAMA_SERVE" "$(vm_dir vm1)/opt/homebrew/bin/ollama"
}

out_log_has() { grep -qE -- "$1" "$(guest_home vm1)/Library/Logs/lume-metal/$LABEL.out.log" 2>/dev/null; }
records() { find "$1" -maxdepth 1 -name '*.json' | wc -l; }
# The guest's pids are its own (a pid namespace): signals and looks go through a guest session.
guest_signal() { plain_ssh vm1 "kill -$1 $2" || fail "kill -$1 $2 in the guest failed"; }
guest_gone() { ! plain_ssh vm1 "kill -0 $1 2>/dev/null"; }

# `ollama serve` installed as the agent and ready: its pid in SERVER_PID.
install_server() {
  lm_json_first "$E2E_DIR/i.json" agent install vm1 --label $LABEL -- ollama serve
  expect_rc 0 "$E2E_DIR/i.json"
  lm_json "$E2E_DIR/l0.json" agent list vm1
  SERVER_PID=$(jq -r '.vms[0].agents[0].pid' "$E2E_DIR/l0.json")
  [[ "$SERVER_PID" =~ ^[0-9]+$ ]] || fail "no server pid: $(cat "$E2E_DIR/l0.json")"
  wait_for 15 "the server to be ready" out_log_has '^server: ready$'
}

# `ollama serve` as an agent: discovery at start, a worker loaded on demand and ended when idle.
# Idle, the agent is widened (OK in doctor) and the exited worker named; stopped, its records go.
scenario_workers_idle_agent() {
  setup
  local home; home=$(guest_home vm1)
  local dir=$home/Library/Logs/lume-metal/$LABEL.activation
  local pid; install_server; pid=$SERVER_PID
  wait_for 15 "the server's record" test -s "$dir/$pid.json"
  out_log_has '^server: discovery exited 0$' || fail "discovery: $(cat "$home/Library/Logs/lume-metal/$LABEL.out.log")"

  note "a model load: the worker runs, its answers widened"
  guest_signal USR1 "$pid"
  wait_for 15 "the worker to be ready" out_log_has '^runner: pid [0-9]+ apple7=1 apple9=1 ready$'
  local worker; worker=$(sed -n 's/^runner: pid \([0-9]*\) .*/\1/p' "$home/Library/Logs/lume-metal/$LABEL.out.log" | tail -1)
  lm_json "$E2E_DIR/live.json" agent list vm1
  jq_is "$E2E_DIR/live.json" '.vms[0].agents[0].shim_widened' true
  jq_is "$E2E_DIR/live.json" '.vms[0].agents[0].shim_widened_exited' null

  note "the keep-alive runs out: the worker exits; the server idles"
  guest_signal USR2 "$pid"
  wait_for 15 "the worker to exit" out_log_has '^server: runner exited [0-9]+$'
  guest_gone "$worker" || fail "worker $worker still runs"
  lm_json "$E2E_DIR/l.json" agent list vm1
  jq_is "$E2E_DIR/l.json" '.vms[0].agents[0].state' running
  jq_is "$E2E_DIR/l.json" '.vms[0].agents[0].shim_loaded' true
  jq_is "$E2E_DIR/l.json" '.vms[0].agents[0].shim_widened' true
  jq_is "$E2E_DIR/l.json" '.vms[0].agents[0].records_pruned' 0
  jq_is "$E2E_DIR/l.json" '.vms[0].agents[0].shim_widened_exited.pid' "$worker"
  jq_is "$E2E_DIR/l.json" '.vms[0].agents[0].shim_widened_exited.exe' /opt/homebrew/bin/ollama
  jq -e '.vms[0].agents[0].shim_widened_exited.at | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$")' \
    "$E2E_DIR/l.json" >/dev/null || fail "at: $(jq -c '.vms[0].agents[0]' "$E2E_DIR/l.json")"
  jq -e --arg w "$worker" '.vms[0].agents[0].shim | contains("widened in a worker that has exited (pid \($w), at ")' \
    "$E2E_DIR/l.json" >/dev/null || fail "shim: $(jq -c '.vms[0].agents[0]' "$E2E_DIR/l.json")"
  [ -e "$dir/$worker.json" ] || fail "the exited worker's record was pruned"
  [ "$(records "$dir")" -eq 3 ] || fail "the server's, the discovery's and the worker's records expected: $(ls "$dir")"
  lm agent list vm1 >"$E2E_DIR/l.txt"
  grep -Eq "^      shim: loaded since it started: loaded the shim, asked no Metal question; widened in a worker that has exited \(pid $worker, at [0-9T:-]+Z\): /opt/homebrew/bin/ollama: asked Apple7→yes \(stock no\), Apple9→yes \(stock no\)$" \
    "$E2E_DIR/l.txt" || fail "agent list: $(cat "$E2E_DIR/l.txt")"
  lm status vm1 >"$E2E_DIR/s.txt"
  grep -q "widened in a worker that has exited (pid $worker, at " "$E2E_DIR/s.txt" || fail "status: $(cat "$E2E_DIR/s.txt")"
  lm_json "$E2E_DIR/s.json" status vm1
  jq_is "$E2E_DIR/s.json" '.vms[0].agents[0].shim_widened_exited.pid' "$worker"
  lm_json "$E2E_DIR/d.json" doctor vm1
  jq -e --arg p "$pid" --arg w "$worker" '[.checks[] | select(.check == "agent-shim")] | length == 1 and
    .[0].level == "ok" and (.[0].message | startswith("com.example.ollama (pid \($p)) loaded the shim")) and
    (.[0].message | contains("widened in a worker that has exited (pid \($w), at "))' \
    "$E2E_DIR/d.json" >/dev/null || fail "doctor: $(jq -c '.checks' "$E2E_DIR/d.json")"

  note "the server stopped too: every record is pruned at the next look"
  guest_signal TERM "$pid"
  wait_for 15 "the server to stop" guest_gone "$pid"
  lm_json "$E2E_DIR/p.json" agent list vm1
  jq_is "$E2E_DIR/p.json" '.vms[0].agents[0].state' loaded
  jq_is "$E2E_DIR/p.json" '.vms[0].agents[0].records_pruned' 3
  jq_is "$E2E_DIR/p.json" '.vms[0].agents[0].shim_widened_exited' null
  [ "$(records "$dir")" -eq 0 ] || fail "records left after the server stopped: $(ls "$dir")"
  "$LM_PYTHON" "$here/../support/json-validate" "$LM_SCHEMA" "$E2E_DIR/l.json" "$E2E_DIR/s.json" "$E2E_DIR/d.json" \
    "$E2E_DIR/p.json" || fail "documents that do not follow $LM_SCHEMA (above)"
}

# The server restarted (launchctl kickstart -k, as KeepAlive or a user's restart does): the earlier
# server's worker has no live ancestor any more -- its record, its server's and its discovery's go
# at the next look, while the new server and its discovery's record stay; until a model is loaded
# again nothing is widened (doctor warns).
scenario_workers_restart() {
  setup
  local home; home=$(guest_home vm1)
  local dir=$home/Library/Logs/lume-metal/$LABEL.activation log=$home/Library/Logs/lume-metal/$LABEL.out.log
  local pid; install_server; pid=$SERVER_PID
  guest_signal USR1 "$pid"
  wait_for 15 "the worker to be ready" out_log_has '^runner: pid [0-9]+ apple7=1 apple9=1 ready$'
  local worker; worker=$(sed -n 's/^runner: pid \([0-9]*\) .*/\1/p' "$log" | tail -1)
  guest_signal USR2 "$pid"
  wait_for 15 "the worker to exit" out_log_has '^server: runner exited [0-9]+$'
  lm_json "$E2E_DIR/l.json" agent list vm1
  jq_is "$E2E_DIR/l.json" '.vms[0].agents[0].shim_widened_exited.pid' "$worker"

  note "restarted: the earlier server's records go, the new server's stay"
  plain_ssh vm1 "launchctl kickstart -k gui/\$(id -u)/$LABEL" || fail "kickstart -k failed"
  wait_for 15 "the new server to be ready" lines_at_least "$log" '^server: ready$' 2
  lm_json "$E2E_DIR/r.json" agent list vm1
  local pid2; pid2=$(jq -r '.vms[0].agents[0].pid' "$E2E_DIR/r.json")
  [ "$pid2" != "$pid" ] || fail "kickstart -k kept pid $pid"
  jq_is "$E2E_DIR/r.json" '.vms[0].agents[0].records_pruned' 3
  jq_is "$E2E_DIR/r.json" '.vms[0].agents[0].shim_loaded' true
  jq_is "$E2E_DIR/r.json" '.vms[0].agents[0].shim_widened' false
  jq_is "$E2E_DIR/r.json" '.vms[0].agents[0].shim_widened_exited' null
  [ ! -e "$dir/$worker.json" ] && [ ! -e "$dir/$pid.json" ] || fail "the earlier server's records were kept: $(ls "$dir")"
  [ -e "$dir/$pid2.json" ] && [ "$(records "$dir")" -eq 2 ] ||
    fail "the new server's and its discovery's records expected: $(ls "$dir")"
  lm_json "$E2E_DIR/d.json" doctor vm1
  jq -e '[.checks[] | select(.check == "agent-shim")] | length == 1 and .[0].level == "warn"' "$E2E_DIR/d.json" >/dev/null ||
    fail "doctor: $(jq -c '.checks' "$E2E_DIR/d.json")"
  "$LM_PYTHON" "$here/../support/json-validate" "$LM_SCHEMA" "$E2E_DIR/l.json" "$E2E_DIR/r.json" ||
    fail "documents that do not follow $LM_SCHEMA (above)"
}

[ $# -eq 1 ] && declare -F "scenario_$1" >/dev/null || { echo "usage: $0 SCENARIO" >&2; exit 2; }
"scenario_$1"
check_guest_shells
