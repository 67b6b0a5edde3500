#!/usr/bin/env bash
# End-to-end scenarios of the tool's own surface (issue 14): agents, doctor, JSON Lines events,
# progress while waiting, help, suggestions and completions: cli.sh NAME. See docs/testing.md.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

LABEL=com.example.llama-server
GUEST_PLIST=/Users/lume/Library/LaunchAgents/$LABEL.plist

# The guest's launchctl and plutil calls since the log was last cleared, one per line.
launchd_calls() { grep -E '^(launchctl|plutil) ' "$(vm_dir "$1")/calls.log" || true; }
clear_calls() { : >"$(vm_dir "$1")/calls.log"; }
expect_calls() { # VM EXPECTED-LINES
  local got; got=$(launchd_calls "$1")
  [ "$got" = "$2" ] || fail "launchctl/plutil calls:
--- expected
$2
--- got
$got"
}

# A long-running workload in the guest's Homebrew directory, which says what environment it got.
install_workload() { # VM
  local f; f="$(vm_dir "$1")/opt/homebrew/bin/llama-server"
  printf '#!/bin/sh\necho "family=${LUME_METAL_APPLE_FAMILY_MAX:-none} shim=${LD_PRELOAD:-none} args=$*"\nexec sleep 600\n' >"$f"
  chmod 755 "$f"
}

is_stopped() { [ "$(ps -o stat= -p "$1" | cut -c1)" = T ]; }


scenario_agents() {
  sim_start --vm vm1
  lm_json "$E2E_DIR/e.json" enable vm1
  expect_rc 0 "$E2E_DIR/e.json"
  install_workload vm1
  local home; home=$(guest_home vm1)

  note "a bad label changes nothing"
  clear_calls vm1
  set +e; lm agent install vm1 --label 'bad label' -- llama-server >"$E2E_DIR/bad.out" 2>"$E2E_DIR/bad.err"; rc=$?; set -e
  [ $rc -eq 2 ] || fail "bad label: exit $rc: $(cat "$E2E_DIR/bad.err")"
  grep -q "reverse-DNS characters only" "$E2E_DIR/bad.err" || fail "bad label message: $(cat "$E2E_DIR/bad.err")"
  expect_calls vm1 ""

  note "install: plist uploaded, linted, bootstrapped and kickstarted"
  lm_json_first "$E2E_DIR/i.json" agent install vm1 --label $LABEL --keep-alive -- llama-server --port 8080
  expect_rc 0 "$E2E_DIR/i.json"
  jq -e '.vms[0].message | test("^vm1: agent '$LABEL' installed and started \\(pid [0-9]+\\)$")' "$E2E_DIR/i.json" >/dev/null ||
    fail "install message: $(jq .vms[0].message "$E2E_DIR/i.json")"
  jq_is "$E2E_DIR/i.json" '.command' "agent install"
  jq_is "$E2E_DIR/i.json" '.vms[0].agents[0].label' $LABEL
  jq_is "$E2E_DIR/i.json" '.vms[0].agents[0].program' /opt/homebrew/bin/llama-server
  expect_calls vm1 "plutil -lint $GUEST_PLIST
launchctl print gui/501/$LABEL
launchctl bootstrap gui/501 $GUEST_PLIST
launchctl kickstart -k gui/501/$LABEL
launchctl print gui/501/$LABEL"
  local xml; xml=$(plistutil -i "$home/Library/LaunchAgents/$LABEL.plist" -o - -f xml 2>/dev/null ||
    plistutil -i "$home/Library/LaunchAgents/$LABEL.plist" -o -)
  for want in "<string>$LABEL</string>" "<string>/opt/homebrew/bin/llama-server</string>" "<string>--port</string>" \
      "<key>LUME_METAL_APPLE_FAMILY_MAX</key>" "<key>LD_PRELOAD</key>" "<key>KeepAlive</key>" \
      "<string>/Users/lume/Library/Logs/lume-metal/$LABEL.out.log</string>"; do
    grep -qF "$want" <<<"$xml" || fail "plist lacks $want: $xml"
  done
  ! grep -q "<key>RunAtLoad</key>" <<<"$xml" || fail "RunAtLoad without --run-at-load: $xml"
  [ "$(stat -c %a "$home/Library/LaunchAgents/$LABEL.plist")" = 644 ] || fail "plist mode"

  note "the workload runs with the shim's environment"
  local log=$home/Library/Logs/lume-metal/$LABEL.out.log
  wait_for 15 "the agent to start" grep -q "family=1009 shim=.*args=--port 8080" "$log"

  note "list and status show it with launchd's state"
  lm_json "$E2E_DIR/l.json" agent list vm1
  expect_rc 0 "$E2E_DIR/l.json"
  jq_is "$E2E_DIR/l.json" '.vms[0].agents[0].state' running
  jq -e '.vms[0].agents[0].pid > 0' "$E2E_DIR/l.json" >/dev/null || fail "no pid: $(cat "$E2E_DIR/l.json")"
  lm agent list vm1 >"$E2E_DIR/l.txt"
  grep -Eq "^    $LABEL +running \(pid [0-9]+\)  /opt/homebrew/bin/llama-server$" "$E2E_DIR/l.txt" || fail "$(cat "$E2E_DIR/l.txt")"
  lm_json "$E2E_DIR/s.json" status vm1
  jq_is "$E2E_DIR/s.json" '.vms[0].agents[0].state' running

  note "installing the same label again boots the old one out first"
  clear_calls vm1
  lm_json_first "$E2E_DIR/i2.json" agent install vm1 --label $LABEL --run-at-load -- llama-server
  expect_rc 0 "$E2E_DIR/i2.json"
  expect_calls vm1 "plutil -lint $GUEST_PLIST
launchctl print gui/501/$LABEL
launchctl bootout gui/501/$LABEL
launchctl bootstrap gui/501 $GUEST_PLIST
launchctl kickstart -k gui/501/$LABEL
launchctl print gui/501/$LABEL"

  note "remove: booted out, plist gone, journal forgets it"
  clear_calls vm1
  lm_json "$E2E_DIR/r.json" agent remove vm1 --label $LABEL
  expect_rc 0 "$E2E_DIR/r.json"
  expect_calls vm1 "launchctl print gui/501/$LABEL
launchctl bootout gui/501/$LABEL"
  [ ! -e "$home/Library/LaunchAgents/$LABEL.plist" ] || fail "plist still there"
  jq -e '.vms.vm1.agents == null' "$LUME_METAL_STATE_DIR/state.json" >/dev/null || fail "journal: $(cat "$LUME_METAL_STATE_DIR/state.json")"
  note "removing it again is done already (idempotent): exit 0, no launchctl call"
  clear_calls vm1
  lm_json "$E2E_DIR/r2.json" agent remove vm1 --label $LABEL
  expect_rc 0 "$E2E_DIR/r2.json"
  jq_is "$E2E_DIR/r2.json" '.vms[0].message' "vm1: no agent $LABEL installed by lume-metal; nothing to remove"
  expect_calls vm1 ""

  note "rollback removes the VM's agents before its files"
  lm_json_first "$E2E_DIR/a1.json" agent install vm1 --label com.example.one -- llama-server
  lm_json_first "$E2E_DIR/a2.json" agent install vm1 --label com.example.two -- llama-server
  clear_calls vm1
  lm_json "$E2E_DIR/rb.json" rollback vm1
  expect_rc 0 "$E2E_DIR/rb.json"
  expect_calls vm1 "launchctl print gui/501/com.example.one
launchctl bootout gui/501/com.example.one
launchctl print gui/501/com.example.two
launchctl bootout gui/501/com.example.two"
  jq -r '.vms[0].steps[] | select(.name == "guest-files") | .detail' "$E2E_DIR/rb.json" |
    grep -q "agents booted out and removed: com.example.one, com.example.two" || fail "$(cat "$E2E_DIR/rb.json")"
  [ -z "$(ls -A "$home/Library/LaunchAgents")" ] || fail "plists left: $(ls "$home/Library/LaunchAgents")"
  [ -z "$(ls -A "$(vm_dir vm1)/launchd")" ] || fail "services left loaded: $(ls "$(vm_dir vm1)/launchd")"

  note "agents need an enabled VM; launchctl setenv is never used"
  lm_json_first "$E2E_DIR/ne.json" agent install vm1 --label $LABEL -- llama-server
  expect_rc 1 "$E2E_DIR/ne.json"
  jq_is "$E2E_DIR/ne.json" '.error.code' not-enabled
  ! grep -q '^launchctl setenv' "$(vm_dir vm1)/calls.log" || fail "launchctl setenv was used"
  check_guest_shells
}

scenario_doctor() {
  sim_start --vm vm1
  vm_run vm1

  note "doctor on a VM not enabled: nothing fails"
  lm_json "$E2E_DIR/d0.json" doctor vm1
  expect_rc 0 "$E2E_DIR/d0.json"
  jq_is "$E2E_DIR/d0.json" '.command' doctor
  jq_is "$E2E_DIR/d0.json" '[.checks[] | select(.vm == "vm1" and .check == "manager")][0].message' "lume-api (found automatically)"
  jq_is "$E2E_DIR/d0.json" '[.checks[] | select(.vm == "vm1" and .check == "reachable")][0].level' ok
  jq_is "$E2E_DIR/d0.json" '[.checks[] | select(.vm == "vm1" and .check == "shell")][0].message' /bin/zsh
  jq_is "$E2E_DIR/d0.json" '[.checks[] | select(.vm == null and .check == "vm-manager")][0].level' ok
  jq_is "$E2E_DIR/d0.json" '.counts.fail' 0

  note "enabled: bundle, last probe and exercise are ok; text lines, exit 0"
  lm_json "$E2E_DIR/e.json" enable vm1
  expect_rc 0 "$E2E_DIR/e.json"
  lm doctor vm1 >"$E2E_DIR/d1.txt"
  for c in "vm1 bundle" "vm1 last-probe" "vm1 last-exercise" "vm1 sip" "host preference"; do
    grep -q "^ok    $c: " "$E2E_DIR/d1.txt" || fail "no ok line for $c: $(cat "$E2E_DIR/d1.txt")"
  done
  grep -Eq '^[0-9]+ checks: [0-9]+ ok, [0-9]+ warn, 0 fail$' "$E2E_DIR/d1.txt" || fail "$(cat "$E2E_DIR/d1.txt")"

  note "a changed guest file fails the bundle check, with what to do; exit 1"
  local f; f=$(find "$(guest_home vm1)/.local/share/lume-metal" -name 'metal-capabilities' -type f | head -n 1)
  [ -n "$f" ] || fail "no installed probe found"
  printf 'x' >>"$f"
  set +e; lm doctor vm1 >"$E2E_DIR/d2.txt"; rc=$?; set -e
  [ $rc -eq 1 ] || fail "doctor with a broken bundle: exit $rc"
  grep -q "^fail  vm1 bundle: " "$E2E_DIR/d2.txt" || fail "$(cat "$E2E_DIR/d2.txt")"
  grep -q "^      -> .*lume-metal enable vm1" "$E2E_DIR/d2.txt" || fail "no advice: $(cat "$E2E_DIR/d2.txt")"

  note "a VM no manager knows fails, naming lume ls"
  lm_json "$E2E_DIR/d3.json" doctor nosuchvm
  expect_rc 1 "$E2E_DIR/d3.json"
  jq_is "$E2E_DIR/d3.json" '[.checks[] | select(.vm == "nosuchvm")][0].level' fail
  jq -r '[.checks[] | select(.vm == "nosuchvm")][0].hint' "$E2E_DIR/d3.json" | grep -q "lume ls" ||
    fail "$(cat "$E2E_DIR/d3.json")"
}

scenario_jsonl() {
  sim_start --vm vm1
  set +e; lm enable vm1 --format jsonl >"$E2E_DIR/e.jsonl" 2>"$E2E_DIR/e.err"; rc=$?; set -e
  [ $rc -eq 0 ] || fail "enable: exit $rc: $(cat "$E2E_DIR/e.err")"
  jq -e . "$E2E_DIR/e.jsonl" >/dev/null || fail "not JSON Lines: $(cat "$E2E_DIR/e.jsonl")"
  [ "$(wc -l <"$E2E_DIR/e.jsonl")" -ge 5 ] || fail "too few lines: $(cat "$E2E_DIR/e.jsonl")"
  # Every line but the last is a step event; each step of vm1 started once and ended once.
  head -n -1 "$E2E_DIR/e.jsonl" | jq -se 'all(.[]; .event == "step" and .schema == 2 and .command == "enable"
    and .vm == "vm1")' >/dev/null || fail "events: $(cat "$E2E_DIR/e.jsonl")"
  head -n -1 "$E2E_DIR/e.jsonl" | jq -se '[.[] | select(.state == "started") | .step] ==
    [.[] | select(.state == "done") | .step]' >/dev/null || fail "unmatched events: $(cat "$E2E_DIR/e.jsonl")"
  head -n -1 "$E2E_DIR/e.jsonl" | jq -se 'any(.[]; .step == "install" and .state == "done")' >/dev/null ||
    fail "no install event: $(cat "$E2E_DIR/e.jsonl")"
  tail -n 1 "$E2E_DIR/e.jsonl" | jq -e '.schema == 2 and .command == "enable" and .ok == true and
    (.vms | length) == 1' >/dev/null || fail "final document: $(tail -n 1 "$E2E_DIR/e.jsonl")"

  note "a failure: its step's failed event, then the document with the error"
  set +e; lm status nosuchvm --format jsonl >"$E2E_DIR/s.jsonl" 2>/dev/null; set -e
  tail -n 1 "$E2E_DIR/s.jsonl" | jq -e '.ok == false and .vms[0].error.code == "not-found"' >/dev/null ||
    fail "$(cat "$E2E_DIR/s.jsonl")"
}

scenario_progress() {
  # A boot that takes a while: enable waits for the VM, and says so off a terminal.
  sim_start --vm vm1 --boot-delay 2
  set +e; lm enable vm1 >"$E2E_DIR/e.out" 2>"$E2E_DIR/e.err"; rc=$?; set -e
  [ $rc -eq 0 ] || fail "enable: exit $rc: $(cat "$E2E_DIR/e.err")"
  grep -Eq '^vm1: wait-ready: waiting \([0-9]+ s so far\): ' "$E2E_DIR/e.err" || fail "no wait line: $(cat "$E2E_DIR/e.err")"
  ! grep -q $'\r' "$E2E_DIR/e.err" || fail "a terminal's live line off a terminal"
  lm_json "$E2E_DIR/r.json" rollback vm1

  note "--quiet: no wait lines"
  set +e; lm enable vm1 --quiet >"$E2E_DIR/q.out" 2>"$E2E_DIR/q.err"; rc=$?; set -e
  [ $rc -eq 0 ] || fail "enable --quiet: exit $rc: $(cat "$E2E_DIR/q.err")"
  ! grep -q 'waiting' "$E2E_DIR/q.err" || fail "--quiet printed: $(cat "$E2E_DIR/q.err")"

  note "a concurrent run's lock: the second process says it waits"
  # The first holds the VM's lock, stopped at a step (test hook); the second waits for it. Both
  # are ended by PID if the test fails.
  LUME_METAL_TEST_STOP_AT=after-preference "$LM_BIN_HOOKS" enable vm1 >"$E2E_DIR/h.out" 2>"$E2E_DIR/h.err" &
  holder=$!
  waiter=
  trap 'rc=$?; kill -KILL $holder $waiter 2>/dev/null || true; lm_test_exit "$rc"' EXIT
  wait_for 15 "the holder to stop at its step" is_stopped $holder
  "$LM_BIN" probe vm1 >"$E2E_DIR/p.out" 2>"$E2E_DIR/p.err" &
  waiter=$!
  wait_for 15 "the waiter to say it waits" grep -q '^vm1: wait-lock: waiting (.*): another lume-metal process (pid [0-9]*, enable) is working on this VM' "$E2E_DIR/p.err"
  kill -CONT $holder
  wait $holder || fail "the holder failed: $(cat "$E2E_DIR/h.err")"
  wait $waiter || fail "the waiter failed: $(cat "$E2E_DIR/p.err")"

  note "on a terminal: the wait is one live line, redrawn in place"
  lm_json "$E2E_DIR/r2.json" rollback vm1 --no-restart
  # script(1) gives the command a pseudo-terminal and keeps what it drew.
  script -qefc "$(printf '%q ' "$LM_BIN" enable vm1)" "$E2E_DIR/tty.log" >/dev/null ||
    fail "enable on a terminal: $(cat "$E2E_DIR/tty.log")"
  grep -q $'\r\033\[Kvm1: wait-ready: waiting [0-9]* s: ' "$E2E_DIR/tty.log" || fail "no live line: $(cat -v "$E2E_DIR/tty.log")"
  grep -q 'vm1: install done' "$E2E_DIR/tty.log" || fail "no step lines on a terminal: $(cat -v "$E2E_DIR/tty.log")"
}

scenario_help() {
  note "help per command, and the nearest command to a wrong one"
  lm enable --help >"$E2E_DIR/h1" || fail "enable --help"
  grep -q '^usage: lume-metal enable VM' "$E2E_DIR/h1" || fail "$(cat "$E2E_DIR/h1")"
  grep -q '^  --jobs N ' "$E2E_DIR/h1" || fail "enable's options: $(cat "$E2E_DIR/h1")"
  lm help agent >"$E2E_DIR/h2" || fail "help agent"
  grep -q '^  --label LABEL ' "$E2E_DIR/h2" || fail "$(cat "$E2E_DIR/h2")"
  for pair in disable:rollback ls:status enabel:enable stat:status; do
    set +e; lm "${pair%%:*}" vm1 >"$E2E_DIR/n.out" 2>"$E2E_DIR/n.err"; rc=$?; set -e
    [ $rc -eq 2 ] || fail "${pair%%:*}: exit $rc"
    grep -qx "lume-metal: unknown command '${pair%%:*}'; did you mean '${pair##*:}'? (lume-metal help ${pair##*:})" \
      "$E2E_DIR/n.err" || fail "$(cat "$E2E_DIR/n.err")"
    [ ! -s "$E2E_DIR/n.out" ] || fail "stdout: $(cat "$E2E_DIR/n.out")"
  done

  note "completion scripts parse in their shells"
  lm completion bash >"$E2E_DIR/c.bash"; bash -n "$E2E_DIR/c.bash" || fail "bash -n"
  ( . "$E2E_DIR/c.bash"; COMP_WORDS=(lume-metal ag); COMP_CWORD=1; _lume_metal; [ "${COMPREPLY[*]}" = agent ] ) ||
    fail "bash completes 'ag' wrongly"
  ( . "$E2E_DIR/c.bash"; COMP_WORDS=(lume-metal --format ''); COMP_CWORD=2; _lume_metal; [ "${COMPREPLY[*]}" = "text json jsonl" ] ) ||
    fail "bash completes --format wrongly"
  lm completion zsh >"$E2E_DIR/c.zsh"; zsh -n "$E2E_DIR/c.zsh" || fail "zsh -n"
  lm completion fish >"$E2E_DIR/c.fish"
  "${LM_FISH:?LM_FISH: fish, for fish -n}" -n "$E2E_DIR/c.fish" || fail "fish -n"
  grep -q "^complete -c lume-metal -l format -x -a 'text json jsonl'" "$E2E_DIR/c.fish" || fail "$(cat "$E2E_DIR/c.fish")"

  note "an error is printed once, on stderr, with one prefix; a VM not found names lume ls"
  sim_start --vm vm1
  set +e; lm enable nosuchvm >"$E2E_DIR/f.out" 2>"$E2E_DIR/f.err"; rc=$?; set -e
  [ $rc -eq 1 ] || fail "exit $rc"
  [ "$(grep -c '^lume-metal: ' "$E2E_DIR/f.err")" = 1 ] || fail "not once: $(cat "$E2E_DIR/f.err")"
  ! grep -q 'lume-metal: .*lume-metal: ' "$E2E_DIR/f.err" || fail "doubled prefix: $(cat "$E2E_DIR/f.err")"
  ! grep -q 'nosuchvm: nosuchvm' "$E2E_DIR/f.err" || fail "doubled VM prefix: $(cat "$E2E_DIR/f.err")"
  ! grep -q 'not found' "$E2E_DIR/f.out" || fail "error on stdout: $(cat "$E2E_DIR/f.out")"
  grep -q '^hint: .*lume ls' "$E2E_DIR/f.err" || fail "no lume ls: $(cat "$E2E_DIR/f.err")"
}

"scenario_$1"
