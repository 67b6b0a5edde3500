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

  note "installing the same label again boots the old one out first, and waits until launchd let go of it"
  clear_calls vm1
  lm_json_first "$E2E_DIR/i2.json" agent install vm1 --label $LABEL --run-at-load -- llama-server
  expect_rc 0 "$E2E_DIR/i2.json"
  expect_calls vm1 "plutil -lint $GUEST_PLIST
launchctl print gui/501/$LABEL
launchctl bootout gui/501/$LABEL
launchctl print gui/501/$LABEL
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

  note "a name no VM manager knows is a wrong name, not a VM to enable first (issue 50)"
  lm_json_first "$E2E_DIR/nf.json" probe nosuchvm
  expect_rc 1 "$E2E_DIR/nf.json"
  jq_is "$E2E_DIR/nf.json" '.error.code' not-found
  jq -e '.error.hint | startswith("check the name")' "$E2E_DIR/nf.json" >/dev/null || fail "hint: $(jq -c .error "$E2E_DIR/nf.json")"
  local rc=0
  lm probe nosuchvm >/dev/null 2>"$E2E_DIR/nf.err" || rc=$?
  [ "$rc" -eq 1 ] && ! grep -q "enable" "$E2E_DIR/nf.err" && grep -q '^hint: check the name' "$E2E_DIR/nf.err" ||
    fail "probe of an unknown VM: exit $rc: $(cat "$E2E_DIR/nf.err")"
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
  # script(1) gives the command a pseudo-terminal and keeps what it drew; a terminal that can
  # redraw a line, whatever the caller's TERM (TERM=dumb rightly gets plain lines: host/cli/color.c).
  TERM=xterm script -qefc "$(printf '%q ' "$LM_BIN" enable vm1)" "$E2E_DIR/tty.log" >/dev/null ||
    fail "enable on a terminal: $(cat "$E2E_DIR/tty.log")"
  grep -q $'\r\033\[Kvm1: wait-ready: waiting [0-9]* s: ' "$E2E_DIR/tty.log" || fail "no live line: $(cat -v "$E2E_DIR/tty.log")"
  # Each step once: a live line while it runs, then its line in the summary.
  grep -q $'\r\033\[Kvm1: install \.\.\.' "$E2E_DIR/tty.log" || fail "no live step line: $(cat -v "$E2E_DIR/tty.log")"
  ! grep -q 'vm1: install done' "$E2E_DIR/tty.log" || fail "a step line besides the summary: $(cat -v "$E2E_DIR/tty.log")"
  [ "$(grep -c '^  install ' "$E2E_DIR/tty.log")" = 1 ] || fail "the install step not once in the summary: $(cat -v "$E2E_DIR/tty.log")"
}

scenario_help() {
  note "help and completion are text, as agent logs is: --format json is a usage error (issue 50)"
  local c rc
  for c in "help" "help enable" "completion bash"; do
    rc=0
    # shellcheck disable=SC2086 # the words of c
    "$LM_BIN" $c --format json >"$E2E_DIR/hj.json" 2>/dev/null || rc=$?
    [ "$rc" -eq 2 ] || fail "$c --format json: exit $rc: $(head -c 300 "$E2E_DIR/hj.json")"
    jq -e '.ok == false and .error.code == "invalid" and (.error.message | contains("no --format json"))' \
      "$E2E_DIR/hj.json" >/dev/null || fail "$c --format json: $(cat "$E2E_DIR/hj.json")"
  done
  note "help per command, and the nearest command to a wrong one"
  lm enable --help >"$E2E_DIR/h1" || fail "enable --help"
  grep -q '^usage: lume-metal enable VM' "$E2E_DIR/h1" || fail "$(cat "$E2E_DIR/h1")"
  grep -q '^  --jobs N ' "$E2E_DIR/h1" || fail "enable's options: $(cat "$E2E_DIR/h1")"
  lm help agent >"$E2E_DIR/h2" || fail "help agent"
  grep -q '^  --label LABEL ' "$E2E_DIR/h2" || fail "$(cat "$E2E_DIR/h2")"
  note "subcommands: their own help, and the nearest one to a typo"
  for sub in "bench compare" "agent install" "local probe" "agent remove" "profile show" "host disable"; do
    # shellcheck disable=SC2086 # the command and its subcommand, two words
    lm $sub --help >"$E2E_DIR/sh.out" 2>"$E2E_DIR/sh.err" || fail "$sub --help: $(cat "$E2E_DIR/sh.err")"
    grep -q "^usage: lume-metal $sub " "$E2E_DIR/sh.out" || fail "$sub --help is not its own: $(cat "$E2E_DIR/sh.out")"
    # shellcheck disable=SC2086
    lm help $sub >"$E2E_DIR/sh2.out" || fail "help $sub"
    cmp -s "$E2E_DIR/sh.out" "$E2E_DIR/sh2.out" || fail "help $sub differs from $sub --help"
  done
  lm agent install --help >"$E2E_DIR/ai.out"
  grep -q '^  --keep-alive ' "$E2E_DIR/ai.out" && grep -q '^  --jobs N ' "$E2E_DIR/ai.out" || fail "agent install's options: $(cat "$E2E_DIR/ai.out")"
  note "an option's text in a command's help names no other command (issue 50)"
  local cmds="enable status probe run rollback profile host forget-host gc bench report agent doctor selftest local" c others bad
  for c in enable status probe run rollback gc bench report doctor selftest; do
    others=$(echo $cmds | tr ' ' '\n' | grep -vx "$c" | paste -sd'|')
    # one line per option (a wide COLUMNS: no wrapping), its text after the option's column
    bad=$(COLUMNS=2000 "$LM_BIN" help "$c" | sed -n '/^Options:/,/^$/p' | grep '^  --' | sed -E 's/^  --[^ ]+( [^ ]+)? +//' |
      grep -Ew "^($others)( [a-z]+)?[:,/]|[(, ]($others)[,)]" || true)
    [ -z "$bad" ] || fail "help $c: an option's text names another command: $bad"
  done
  lm help rollback >"$E2E_DIR/hr.out"
  grep -q '^  --jobs N ' "$E2E_DIR/hr.out" || fail "rollback takes no --jobs: $(cat "$E2E_DIR/hr.out")"
  note "a subcommand's help lists every option whose text names it (issue 50: agent install's --process-type)"
  local opt
  for sub in "agent install" "agent remove" "agent list" "agent logs" "bench compare" "local probe" "local run" \
      "local install" "local env" "profile show" "profile lint" "host enable" "host disable"; do
    # shellcheck disable=SC2086
    lm help ${sub% *} >"$E2E_DIR/cmd.out"
    # shellcheck disable=SC2086
    lm $sub --help >"$E2E_DIR/sub.out"
    # Each option of the command's help and the commands its text begins with ("run, agent install:
    # ..."; the text starts at column 29, on the option's line or the next), then those naming SUB.
    # shellcheck disable=SC2016 # awk programs
    for opt in $(awk 'function out() { if (o != "") { sub(/:.*/, "", t); print o "\t" t } o = "" }
                      /^  --/ { out(); o = $1; t = substr($0, 27, 2) == "  " ? substr($0, 29) : ""; next }
                      /^      / && o != "" { t = t substr($0, 29); next }
                      { out() }
                      END { out() }' "$E2E_DIR/cmd.out" |
                 awk -F '\t' -v sub_="$sub" '{ n = split($2, w, /, /)
                   for (i = 1; i <= n; i++) { # "agent logs (-f)"; "agent install/remove/logs" is three
                     x = w[i]; sub(/ \(.*\)$/, "", x); c = x; sub(/ .*/, "", c)
                     m = split(substr(x, length(c) + 2), s, "/")
                     for (k = 1; k <= m; k++) if (c " " s[k] == sub_) print $1 } }'); do
      grep -q -- "^  $opt\( \|\$\)" "$E2E_DIR/sub.out" || fail "$sub --help omits $opt, whose text names it: $(cat "$E2E_DIR/sub.out")"
    done
  done
  for typo in "profile shw:show" "agent instal:install" "local prob:probe" "host stat:status"; do
    words=${typo%%:*}
    set +e; lm ${words% *} ${words#* } >"$E2E_DIR/t.out" 2>"$E2E_DIR/t.err"; rc=$?; set -e
    [ $rc -eq 2 ] && [ ! -s "$E2E_DIR/t.out" ] || fail "$words: exit $rc: $(cat "$E2E_DIR/t.out")"
    grep -qx "lume-metal: ${words% *}: unknown subcommand '${words#* }'; did you mean '${typo##*:}'? (lume-metal help ${words% *} ${typo##*:})" \
      "$E2E_DIR/t.err" || fail "$words: $(cat "$E2E_DIR/t.err")"
  done
  set +e; lm agent frob vm1 >/dev/null 2>"$E2E_DIR/t.err"; set -e
  grep -qx "lume-metal: agent: unknown subcommand 'frob'; use install, remove, list or logs (lume-metal help agent)" "$E2E_DIR/t.err" ||
    fail "nothing near: $(cat "$E2E_DIR/t.err")"
  note "version, as gh version: a line, or a document"
  [ "$(lm version)" = "$(lm --version)" ] || fail "version: $(lm version)"
  lm version --format json | jq -e --arg v "$(lm --version | cut -d' ' -f2)" '.command == "version" and .version == $v and .library_version == $v' >/dev/null ||
    fail "version --format json: $(lm version --format json)"

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
  ( . "$E2E_DIR/c.bash"; COMP_WORDS=(lume-metal --format ''); COMP_CWORD=2; _lume_metal; [ "${COMPREPLY[*]}" = "text json jsonl markdown" ] ) ||
    fail "bash completes --format wrongly"
  lm completion zsh >"$E2E_DIR/c.zsh"; zsh -n "$E2E_DIR/c.zsh" || fail "zsh -n"
  lm completion fish >"$E2E_DIR/c.fish"
  "${LM_FISH:?LM_FISH: fish, for fish -n}" -n "$E2E_DIR/c.fish" || fail "fish -n"
  grep -q "^complete -c lume-metal -l format -x -a 'text json jsonl markdown'" "$E2E_DIR/c.fish" || fail "$(cat "$E2E_DIR/c.fish")"

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

# ---- Completion, driven through the real shells (issue 26) ----
# bash: its own completion protocol (COMP_WORDS, COMP_CWORD, the function complete -F names);
# fish: its own query mode (complete -C); zsh: typed into an interactive zsh in tmux, its list
# read from the screen. VM names come from the simulator through `lume-metal __complete vms`.

# The tool under its installed name, first on PATH: the scripts complete `lume-metal`.
completion_setup() {
  mkdir -p "$E2E_DIR/bin" "$E2E_DIR/empty"
  ln -sf "$LM_BIN" "$E2E_DIR/bin/lume-metal"
  export PATH="$E2E_DIR/bin:$PATH"
  lm completion bash >"$E2E_DIR/c.bash"
  lm completion fish >"$E2E_DIR/c.fish"
  mkdir -p "$E2E_DIR/zfunc"; lm completion zsh >"$E2E_DIR/zfunc/_lume-metal"
  PROFILES=$(lm profile list --format json | jq -r '[.profiles[].name] | join(" ")')
}

# bash_offers LINE: the words bash's completion offers at the end of LINE, sorted, one line.
bash_offers() {
  ( cd "$E2E_DIR/empty"; . "$E2E_DIR/c.bash"
    read -ra COMP_WORDS <<<"$1"; [[ $1 == *" " ]] && COMP_WORDS+=("")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=()
    _lume_metal; printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//' )
}
# fish_offers LINE: what fish offers (word<TAB>description lines), sorted.
fish_offers() { ( cd "$E2E_DIR/empty"; "$LM_FISH" -c "source '$E2E_DIR/c.fish'; complete -C '$1'" | sort ); }
fish_words() { fish_offers "$1" | cut -f1 | tr '\n' ' ' | sed 's/ $//'; }

expect_offers() { # SHELL LINE GOT WANT
  [ "$3" = "$4" ] || fail "$1 completes '$2' with '$3', expected '$4'"
}

scenario_completion() {
  sim_start --vm vm1 --vm ci-runner-1
  completion_setup
  local cmds="agent bench completion doctor enable forget-host gc help host local probe profile report rollback run selftest status version"
  local vms="ci-runner-1 vm1" sorted_profiles
  sorted_profiles=$(tr ' ' '\n' <<<"$PROFILES" | sort | tr '\n' ' ' | sed 's/ $//')
  lm __complete vms | sort | tr '\n' ' ' | grep -qx "$vms " || fail "__complete vms: $(lm __complete vms)"

  note "bash, through its completion function"
  expect_offers bash "lume-metal " "$(bash_offers "lume-metal ")" "$cmds"
  expect_offers bash "lume-metal enable " "$(bash_offers "lume-metal enable ")" "$vms"
  expect_offers bash "lume-metal enable vm1 " "$(bash_offers "lume-metal enable vm1 ")" "$vms"
  expect_offers bash "lume-metal probe vm1 " "$(bash_offers "lume-metal probe vm1 ")" ""
  expect_offers bash "lume-metal profile " "$(bash_offers "lume-metal profile ")" "lint list show"
  expect_offers bash "lume-metal profile show " "$(bash_offers "lume-metal profile show ")" "$sorted_profiles"
  expect_offers bash "lume-metal agent install " "$(bash_offers "lume-metal agent install ")" "$vms"
  expect_offers bash "lume-metal bench " "$(bash_offers "lume-metal bench ")" "ci-runner-1 compare vm1"
  expect_offers bash "lume-metal --format json " "$(bash_offers "lume-metal --format json ")" "$cmds"
  expect_offers bash "lume-metal --format json st" "$(bash_offers "lume-metal --format json st")" "status"
  expect_offers bash "lume-metal status --format json vm" "$(bash_offers "lume-metal status --format json vm")" "vm1"
  expect_offers bash "lume-metal --color " "$(bash_offers "lume-metal --color ")" "always auto never"
  expect_offers bash "lume-metal --profile " "$(bash_offers "lume-metal --profile ")" "$sorted_profiles"
  expect_offers bash "lume-metal help " "$(bash_offers "lume-metal help ")" "$(tr ' ' '\n' <<<"$cmds options" | sort | tr '\n' ' ' | sed 's/ $//')"
  expect_offers bash "lume-metal rollback --re" "$(bash_offers "lume-metal rollback --re")" "--restore-host"
  expect_offers bash "lume-metal --hos" "$(bash_offers "lume-metal --hos")" "--host-key-policy --host-preference" # not the old --host

  note "fish, through complete -C: the same words, and whole descriptions"
  expect_offers fish "lume-metal " "$(fish_words "lume-metal ")" "$cmds"
  expect_offers fish "lume-metal enable vm1 " "$(fish_words "lume-metal enable vm1 ")" "$vms"
  expect_offers fish "lume-metal probe vm1 " "$(fish_words "lume-metal probe vm1 ")" ""
  expect_offers fish "lume-metal profile " "$(fish_words "lume-metal profile ")" "lint list show"
  expect_offers fish "lume-metal profile show " "$(fish_words "lume-metal profile show ")" "$sorted_profiles"
  expect_offers fish "lume-metal agent install " "$(fish_words "lume-metal agent install ")" "$vms"
  expect_offers fish "lume-metal --format json " "$(fish_words "lume-metal --format json ")" "$cmds"
  expect_offers fish "lume-metal --format " "$(fish_words "lume-metal --format ")" "json jsonl markdown text"
  # The whole help text, past its first sentence.
  fish_offers "lume-metal enable --for" | grep -qF "then the document on one line (for CI logs and dashboards)." ||
    fail "fish cuts --format's description: $(fish_offers "lume-metal enable --for")"
  fish_offers "lume-metal " | grep -qF "status	Host preference and, per VM, state, bundle, restart pending, last probe." ||
    fail "fish's command descriptions: $(fish_offers "lume-metal ")"

  note "zsh, typed into an interactive zsh in tmux"
  zsh_start
  zsh_expect "lume-metal profile " "list *-- The built-in profiles" "show *-- A profile's capabilities"
  zsh_expect "lume-metal agent install " "ci-runner-1" "vm1"
  ! grep -q "remove" "$E2E_DIR/pane" || fail "zsh offers subcommands after agent install: $(cat "$E2E_DIR/pane")"
  zsh_expect "lume-metal --format json " "status *-- Host preference and, per VM" "enable *-- Unlock the VMs"
  zsh_expect "lume-metal --format json st" "> lume-metal --format json status"
  zsh_expect "lume-metal enable --for" "--format *-- Output format. json prints one document"
  # The whole description: zsh shows it up to the width of the screen (200 columns here).
  grep -qF "jsonl prints one line per step" "$E2E_DIR/pane" || fail "zsh cuts --format's description: $(cat "$E2E_DIR/pane")"
  zsh_expect "lume-metal enable ci-runner-1 " "ci-runner-1" "vm1"
  zsh_expect "lume-metal enable vm" "^> lume-metal enable vm1$"
}

# An interactive zsh (no startup files) in a tmux server of this test's own, with the completion
# system and the script on fpath; stopped with the test.
zsh_start() {
  TMUX_SOCK="$E2E_DIR/tmux.sock"
  tmux -S "$TMUX_SOCK" new-session -d -s z -x 200 -y 50 \
    "env -i HOME=$HOME TERM=xterm PATH=$PATH LUME_METAL_LUME_URL=$LUME_METAL_LUME_URL \
     LUME_METAL_STATE_DIR=$LUME_METAL_STATE_DIR zsh -f"
  TMUX_PID=$(tmux -S "$TMUX_SOCK" display -p '#{pid}')
  tmux -S "$TMUX_SOCK" send-keys -t z "cd $E2E_DIR/empty; fpath=($E2E_DIR/zfunc \$fpath); autoload -Uz compinit; \
compinit -u -D; PS1='> '; print ready" Enter
  wait_for 15 "zsh to start" pane_has "^ready$"
}
pane_has() { tmux -S "$TMUX_SOCK" capture-pane -p -t z >"$E2E_DIR/pane"; grep -q -- "$1" "$E2E_DIR/pane"; }
# zsh_expect LINE PATTERN...: type LINE on a cleared screen, press Tab, wait for every pattern.
zsh_expect() {
  local line=$1 pat; shift
  tmux -S "$TMUX_SOCK" send-keys -t z C-u C-l
  wait_for 15 "zsh to clear its screen" pane_is_prompt
  tmux -S "$TMUX_SOCK" send-keys -t z -l "$line"
  tmux -S "$TMUX_SOCK" send-keys -t z Tab
  for pat in "$@"; do
    wait_for 15 "zsh to offer '$pat' for '$line' (screen: $(cat "$E2E_DIR/pane" 2>/dev/null))" pane_has "$pat"
  done
}
pane_is_prompt() { tmux -S "$TMUX_SOCK" capture-pane -p -t z | grep -v '^$' >"$E2E_DIR/pane"; [ "$(cat "$E2E_DIR/pane")" = ">" ]; }
lm_test_before_exit() {
  [ -z "${TMUX_PID:-}" ] || kill -KILL "$TMUX_PID" 2>/dev/null || true
  e2e_before_exit "$@"
}

# ---- A fleet's hints belong to their VMs (issue 26) ----
# enable vm1 ci-runner-1 --jobs 2 where only ci-runner-1's host key changed: its own error and hint
# name ci-runner-1, the run's hint too, and vm1 (healthy, enabled) carries none.
scenario_fleet_hint() {
  sim_start --vm vm1 --vm ci-runner-1
  lm_json "$E2E_DIR/e1.json" enable vm1 ci-runner-1 --jobs 2
  expect_rc 0 "$E2E_DIR/e1.json"
  curl -fsS -X POST "$LUME_METAL_LUME_URL/lume/vms/ci-runner-1/stop" >/dev/null
  curl -fsS -X POST "$LUME_METAL_LUME_URL/_sim/vms/ci-runner-1/rekey" >/dev/null
  lm_json "$E2E_DIR/e2.json" enable vm1 ci-runner-1 --jobs 2
  expect_rc 3 "$E2E_DIR/e2.json"
  jq_is "$E2E_DIR/e2.json" '.vms[] | select(.vm == "vm1") | .error' null
  jq_is "$E2E_DIR/e2.json" '.vms[] | select(.vm == "ci-runner-1") | .error.code' host-key
  jq -r '.vms[] | select(.vm == "ci-runner-1") | .error.hint' "$E2E_DIR/e2.json" |
    grep -q "lume-metal forget-host ci-runner-1" || fail "ci-runner-1's hint: $(cat "$E2E_DIR/e2.json")"
  jq -r '.error.hint' "$E2E_DIR/e2.json" | grep -q "lume-metal forget-host ci-runner-1" ||
    fail "the run's hint does not name the failed VM: $(cat "$E2E_DIR/e2.json")"
  ! grep -q "forget-host vm1" "$E2E_DIR/e2.json" || fail "a hint to forget the healthy VM's key: $(cat "$E2E_DIR/e2.json")"
  # The VM's name once in its message.
  ! jq -r '.vms[].message' "$E2E_DIR/e2.json" | grep -q "ci-runner-1: ci-runner-1" || fail "name doubled"

  note "the same in text: the hint after the VM's message, about that VM"
  set +e; lm enable vm1 ci-runner-1 --jobs 2 >"$E2E_DIR/t.out" 2>"$E2E_DIR/t.err"; rc=$?; set -e
  [ $rc -eq 3 ] || fail "exit $rc: $(cat "$E2E_DIR/t.err")"
  grep -q "^hint: .*lume-metal forget-host ci-runner-1" "$E2E_DIR/t.err" || fail "$(cat "$E2E_DIR/t.err")"
  ! grep -q "forget-host vm1" "$E2E_DIR/t.err" || fail "$(cat "$E2E_DIR/t.err")"
  grep -q "^FAILED ci-runner-1 (" "$E2E_DIR/t.out" || fail "$(cat "$E2E_DIR/t.out")"

  note "--quiet: the result lines only"
  set +e; lm enable vm1 ci-runner-1 --jobs 2 --quiet >"$E2E_DIR/q.out" 2>"$E2E_DIR/q.err"; rc=$?; set -e
  [ $rc -eq 3 ] || fail "exit $rc"
  [ "$(wc -l <"$E2E_DIR/q.out")" -eq 3 ] && grep -Eqx '1 enabled, 1 failed in [0-9]+\.[0-9] s' "$E2E_DIR/q.out" ||
    fail "--quiet printed more than the results and their recap: $(cat "$E2E_DIR/q.out")"

  note "a not-found has a hint about its own cause; a missing agent is removed already"
  lm_json "$E2E_DIR/nf.json" enable nosuch
  jq -r '.error.hint' "$E2E_DIR/nf.json" | grep -q "lume ls" || fail "$(cat "$E2E_DIR/nf.json")"
  [ "$(jq -r '.error.hint | length' "$E2E_DIR/nf.json")" -lt 200 ] || fail "a long hint: $(cat "$E2E_DIR/nf.json")"
  ! jq -r '.vms[0].message' "$E2E_DIR/nf.json" | grep -q "nosuch: nosuch" || fail "name doubled: $(cat "$E2E_DIR/nf.json")"
  lm_json "$E2E_DIR/ar.json" agent remove vm1 --label com.example.none
  expect_rc 0 "$E2E_DIR/ar.json"
  jq_is "$E2E_DIR/ar.json" '.vms[0].error' null

  note "--no-wait names who holds the VM: a run (a shared holder) too"
  local runner
  "$LM_BIN" run vm1 -- sleep 600 </dev/null >"$E2E_DIR/run.out" 2>&1 &
  runner=$!
  wait_for 15 "the run to note itself on the VM's lock" grep -qs "pid $runner, run" "$LUME_METAL_STATE_DIR"/vm-*.lock
  lm_json "$E2E_DIR/busy.json" enable vm1 --no-wait
  expect_rc 1 "$E2E_DIR/busy.json"
  jq -r '.vms[0].message' "$E2E_DIR/busy.json" | grep -q "another lume-metal process (pid $runner, run)" ||
    fail "--no-wait does not say who holds the lock: $(cat "$E2E_DIR/busy.json")"
  jq -r '.vms[0].error.hint' "$E2E_DIR/busy.json" | grep -q "named above" || fail "$(cat "$E2E_DIR/busy.json")"
  kill -KILL "$runner" 2>/dev/null || true
  wait "$runner" 2>/dev/null || true
}

# ---- Fleet views (issue 37 item 4) ----
# status for several VMs: one row per VM sorted by name (VM, state, manager, enabled, verified,
# restart pending, family, kernels), --long for the detail; enable, probe and rollback over
# several VMs end with one recap line, as Ansible's PLAY RECAP; the JSON has the same as `recap`.
scenario_fleet_views() {
  local vm head row
  # Four running at once, past Apple's two per Mac (the simulator's default): what is shown here is
  # the view of a fleet, not the limit, which the simulator's own tests keep.
  sim_start --vm vm-d --vm vm-a --vm vm-c --vm vm-b --boot-delay 0 --stop-delay 0 --max-running 4
  # A dry run's recap says what it would do, and what it would restart: the one VM running while
  # the preference would be set now (issue 50).
  vm_run vm-a
  set +e; lm enable vm-d vm-a vm-c vm-b --jobs 4 --dry-run >"$E2E_DIR/d.out" 2>"$E2E_DIR/d.err"; rc=$?; set -e
  [ $rc -eq 0 ] || fail "enable --dry-run: exit $rc: $(cat "$E2E_DIR/d.out" "$E2E_DIR/d.err")"
  [ "$(tail -n 1 "$E2E_DIR/d.out" | sed -E 's/[0-9]+\.[0-9] s$/T s/')" = "would enable 4 (1 restart), 0 failed in T s" ] ||
    fail "the dry run's recap: $(cat "$E2E_DIR/d.out")"
  grep -Eqx 'vm-a: plan ready \(dry run: nothing changed\) \([0-9.]+ s, would restart\)' "$E2E_DIR/d.out" ||
    fail "the dry run's line has no restart: $(cat "$E2E_DIR/d.out")"
  # The plan's steps under --verbose (a fleet's lines are one per VM, issue 50).
  lm enable vm-d vm-a vm-c vm-b --jobs 4 --dry-run --verbose >"$E2E_DIR/dv.out" 2>"$E2E_DIR/dv.err" ||
    fail "enable --dry-run --verbose: $(cat "$E2E_DIR/dv.out" "$E2E_DIR/dv.err")"
  grep -q '^  restart  .* would restart: the VM runs already and the preference would change now' "$E2E_DIR/dv.out" ||
    fail "the dry run's plan has no restart: $(cat "$E2E_DIR/dv.out")"
  set +e; lm enable vm-d vm-a vm-c vm-b --jobs 4 >"$E2E_DIR/e.out" 2>"$E2E_DIR/e.err"; rc=$?; set -e
  [ $rc -eq 0 ] || fail "enable: exit $rc: $(cat "$E2E_DIR/e.out" "$E2E_DIR/e.err")"
  grep -Eqx '4 enabled, 0 failed in [0-9]+\.[0-9] s' "$E2E_DIR/e.out" || fail "no recap: $(cat "$E2E_DIR/e.out")"
  [ "$(tail -n 1 "$E2E_DIR/e.out" | cut -c1-10)" = "4 enabled," ] || fail "the recap is not last: $(cat "$E2E_DIR/e.out")"
  lm_json "$E2E_DIR/e.json" enable vm-d vm-a vm-c vm-b --jobs 4
  expect_rc 0 "$E2E_DIR/e.json"
  jq_is "$E2E_DIR/e.json" '.recap | tojson' '{"ok":4,"failed":0,"unsupported":0}'

  note "status of four VMs: one table, sorted by name"
  lm_json "$E2E_DIR/s.json" status vm-d vm-a vm-c vm-b
  expect_rc 0 "$E2E_DIR/s.json"
  set +e; lm status vm-d vm-a vm-c vm-b >"$E2E_DIR/s.out" 2>"$E2E_DIR/s.err"; rc=$?; set -e
  [ $rc -eq 0 ] || fail "status: exit $rc: $(cat "$E2E_DIR/s.err")"
  head='^VM +STATE +MANAGER +ENABLED +VERIFIED +RESTART PENDING +FAMILY +KERNELS$'
  grep -Eq "$head" "$E2E_DIR/s.out" || fail "no table header: $(cat "$E2E_DIR/s.out")"
  [ "$(grep -EA 10 "$head" "$E2E_DIR/s.out" | sed 1d | awk '{print $1}' | tr '\n' ' ')" = "vm-a vm-b vm-c vm-d " ] ||
    fail "not one row per VM sorted by name: $(cat "$E2E_DIR/s.out")"
  for vm in vm-a vm-b vm-c vm-d; do
    row=$(jq -r --arg v "$vm" '.vms[] | select(.vm == $v) |
      "\(.vm) \(.state) \(.manager) yes \(if .bundle_verified then "yes" else "no" end) \(if .restart_pending then "yes" else "no" end) \(.shimmed.highest_apple_family) \([.exercise | to_entries[] | select(.key != "threadgroup_memory" and .key != "nocopy_buffer" and .key != "indirect_command_buffer") | .value.result] | "\(map(select(. == "pass")) | length)/\(length) pass")"' "$E2E_DIR/s.json")
    [ "$(grep "^$vm " "$E2E_DIR/s.out" | tr -s ' ')" = "$row" ] || fail "$vm's row: '$(grep "^$vm " "$E2E_DIR/s.out")', expected '$row'"
  done
  ! grep -q '^  profile\|^  last probe' "$E2E_DIR/s.out" || fail "the detail without --long: $(cat "$E2E_DIR/s.out")"
  jq_is "$E2E_DIR/s.json" '.recap | tojson' '{"ok":4,"failed":0,"unsupported":0}'
  jq_is "$E2E_DIR/s.json" '[.vms[].vm] | join(" ")' "vm-d vm-a vm-c vm-b"   # the JSON keeps the order given

  note "--long: today's detail, each VM in turn"
  lm status vm-d vm-a vm-c vm-b --long >"$E2E_DIR/l.out" 2>"$E2E_DIR/l.err" || fail "status --long: $(cat "$E2E_DIR/l.err")"
  for vm in vm-a vm-b vm-c vm-d; do grep -qx "$vm: enabled" "$E2E_DIR/l.out" || fail "--long: no $vm: $(cat "$E2E_DIR/l.out")"; done
  ! grep -Eq "$head" "$E2E_DIR/l.out" || fail "--long printed the table"
  [ "$(grep -c '^  last probe: ' "$E2E_DIR/l.out")" -eq 4 ] || fail "--long: $(cat "$E2E_DIR/l.out")"

  note "a failed VM among them: FAILED in its row, its message on stderr once, the recap counts it"
  set +e; lm status vm-a nosuch vm-b >"$E2E_DIR/f.out" 2>"$E2E_DIR/f.err"; rc=$?; set -e
  [ $rc -eq 3 ] || fail "status with a missing VM: exit $rc: $(cat "$E2E_DIR/f.out" "$E2E_DIR/f.err")"
  grep -Eqx 'nosuch +FAILED' "$E2E_DIR/f.out" || fail "no FAILED row: $(cat "$E2E_DIR/f.out")"
  [ "$(grep -c 'nosuch' "$E2E_DIR/f.err")" -eq 1 ] || fail "the failure not once on stderr: $(cat "$E2E_DIR/f.err")"
  set +e; lm enable vm-a nosuch vm-b >"$E2E_DIR/ef.out" 2>"$E2E_DIR/ef.err"; rc=$?; set -e
  [ $rc -eq 3 ] && grep -Eqx '2 enabled, 1 failed in [0-9]+\.[0-9] s' "$E2E_DIR/ef.out" || fail "recap with a failure: $(cat "$E2E_DIR/ef.out")"
  lm_json "$E2E_DIR/ef.json" enable vm-a nosuch vm-b
  jq_is "$E2E_DIR/ef.json" '.recap | tojson' '{"ok":2,"failed":1,"unsupported":0}'

  note "rollback of four: the recap, in text and JSON"
  set +e; lm rollback vm-a vm-b >"$E2E_DIR/r.out" 2>"$E2E_DIR/r.err"; rc=$?; set -e
  [ $rc -eq 0 ] && grep -Eqx '2 rolled back, 0 failed in [0-9]+\.[0-9] s' "$E2E_DIR/r.out" || fail "rollback: $(cat "$E2E_DIR/r.out" "$E2E_DIR/r.err")"
  lm_json "$E2E_DIR/r.json" rollback vm-c vm-d
  expect_rc 0 "$E2E_DIR/r.json"
  jq_is "$E2E_DIR/r.json" '.recap | tojson' '{"ok":2,"failed":0,"unsupported":0}'
  lm status vm-a >"$E2E_DIR/one.out" 2>&1 || true
  ! grep -q 'enabled, .* failed in' "$E2E_DIR/one.out" || fail "a recap for one VM"
}

# ---- A fleet reads like Ansible (issue 50, item 3) ----
# Eight VMs: each gets one line when the run ends (its result, time, restart or not), sorted by name,
# and the recap closes the run -- at most 10 lines where there were 104 (65 for a re-enable); the
# steps under --verbose. rollback and agent install|remove take --jobs as enable does. On a
# terminal every VM that waits is drawn waiting, not only the last one heard.
FLEET8=(vm-h vm-c vm-f vm-a vm-e vm-b vm-g vm-d)
fleet_one_line_each() { # FILE WHAT RE: one line per VM, sorted by name, each matching "VM: RE"; the recap last
  local f=$1 what=$2 re=$3
  [ "$(grep -c '^vm-' "$f")" -eq 8 ] || fail "$what: not one line per VM: $(cat "$f")"
  [ "$(grep '^vm-' "$f" | cut -d: -f1 | tr '\n' ' ')" = "vm-a vm-b vm-c vm-d vm-e vm-f vm-g vm-h " ] ||
    fail "$what: not sorted by name: $(cat "$f")"
  local bad; bad=$(grep '^vm-' "$f" | grep -Ev "^vm-[a-h]: $re" || true)
  [ -z "$bad" ] || fail "$what: lines that are not one VM's result: $bad"
  ! grep -q '^  ' "$f" || fail "$what: step lines without --verbose: $(cat "$f")"
}
only_waits() { # FILE: stderr holds nothing but wait lines (a CI log's line per long wait)
  local bad; bad=$(grep -Ev '^vm-[a-h]: [a-z-]+: waiting \([0-9]+ s so far\): ' "$1" || true)
  [ -z "$bad" ] || fail "stderr has more than waits: $bad"
}
scenario_fleet_lines() {
  local rc vm
  # Half of them running since before the preference changes (each is restarted), half stopped
  # (each is started).
  sim_start $(printf -- '--vm %s ' "${FLEET8[@]}") --boot-delay 0 --stop-delay 0 --max-running 8
  for vm in vm-a vm-c vm-e vm-g; do vm_run "$vm"; done

  note "enable of eight: one line each, sorted, the recap last; at most 10 lines"
  set +e; lm enable "${FLEET8[@]}" --jobs 4 >"$E2E_DIR/e.out" 2>"$E2E_DIR/e.err"; rc=$?; set -e
  [ $rc -eq 0 ] || fail "enable: exit $rc: $(cat "$E2E_DIR/e.out" "$E2E_DIR/e.err")"
  [ "$(wc -l <"$E2E_DIR/e.out")" -le 10 ] || fail "enable of 8: $(wc -l <"$E2E_DIR/e.out") lines: $(cat "$E2E_DIR/e.out")"
  only_waits "$E2E_DIR/e.err"
  fleet_one_line_each "$E2E_DIR/e.out" enable 'enabled \([0-9]+\.[0-9]{2} s, (restarted|started)\)$'
  for vm in vm-a vm-c vm-e vm-g; do grep -q "^$vm: enabled (.*, restarted)$" "$E2E_DIR/e.out" || fail "$vm not restarted: $(cat "$E2E_DIR/e.out")"; done
  for vm in vm-b vm-d vm-f vm-h; do grep -q "^$vm: enabled (.*, started)$" "$E2E_DIR/e.out" || fail "$vm not started: $(cat "$E2E_DIR/e.out")"; done
  tail -n 1 "$E2E_DIR/e.out" | grep -Eqx '8 enabled, 0 failed in [0-9]+\.[0-9] s' || fail "no recap last: $(cat "$E2E_DIR/e.out")"

  note "a re-enable: the same, no restart"
  set +e; lm enable "${FLEET8[@]}" --jobs 4 >"$E2E_DIR/e2.out" 2>"$E2E_DIR/e2.err"; rc=$?; set -e
  [ $rc -eq 0 ] || fail "re-enable: exit $rc: $(cat "$E2E_DIR/e2.out" "$E2E_DIR/e2.err")"
  [ "$(wc -l <"$E2E_DIR/e2.out")" -le 10 ] || fail "re-enable of 8: $(cat "$E2E_DIR/e2.out")"
  only_waits "$E2E_DIR/e2.err"
  fleet_one_line_each "$E2E_DIR/e2.out" re-enable 'already enabled, verified \([0-9]+\.[0-9]{2} s, no restart\)$'

  note "--verbose: each VM's steps under its line"
  set +e; lm enable "${FLEET8[@]}" --verbose >"$E2E_DIR/v.out" 2>"$E2E_DIR/v.err"; rc=$?; set -e
  [ $rc -eq 0 ] || fail "enable --verbose: exit $rc: $(cat "$E2E_DIR/v.err")"
  [ "$(grep -c '^  probe ' "$E2E_DIR/v.out")" -eq 8 ] || fail "--verbose: no steps: $(cat "$E2E_DIR/v.out")"
  note "one VM keeps its steps"
  lm enable vm-a >"$E2E_DIR/one.out" 2>&1 || fail "enable vm-a: $(cat "$E2E_DIR/one.out")"
  grep -q '^  probe ' "$E2E_DIR/one.out" || fail "one VM without its steps: $(cat "$E2E_DIR/one.out")"

  note "rollback --all --jobs 4: one line each, sorted, the recap; the preference restored once"
  set +e; lm rollback --all --jobs 4 --no-restart >"$E2E_DIR/r.out" 2>"$E2E_DIR/r.err"; rc=$?; set -e
  [ $rc -eq 0 ] || fail "rollback --jobs 4: exit $rc: $(cat "$E2E_DIR/r.out" "$E2E_DIR/r.err")"
  only_waits "$E2E_DIR/r.err"
  fleet_one_line_each "$E2E_DIR/r.out" rollback 'rolled back \([0-9]+\.[0-9]{2} s\)$'
  grep -q '^host preference .* restored: ' "$E2E_DIR/r.out" || fail "the preference not restored: $(cat "$E2E_DIR/r.out")"
  tail -n 1 "$E2E_DIR/r.out" | grep -Eqx '8 rolled back, 0 failed in [0-9]+\.[0-9] s' || fail "no recap last: $(cat "$E2E_DIR/r.out")"
  [ "$(plist_xml)" = absent ] || fail "the preference is not back to absent: $(plist_xml)"
  lm_json "$E2E_DIR/s.json" status
  jq_is "$E2E_DIR/s.json" '.vms | length' 0

  note "agent install and remove --jobs 4: one line each, sorted, the recap"
  lm_json "$E2E_DIR/e3.json" enable "${FLEET8[@]}" --jobs 4
  expect_rc 0 "$E2E_DIR/e3.json"
  for vm in "${FLEET8[@]}"; do install_workload "$vm"; done
  set +e; lm agent install "${FLEET8[@]}" --jobs 4 --label $LABEL -- llama-server >"$E2E_DIR/i.out" 2>"$E2E_DIR/i.err"; rc=$?; set -e
  [ $rc -eq 0 ] || fail "agent install --jobs 4: exit $rc: $(cat "$E2E_DIR/i.out" "$E2E_DIR/i.err")"
  fleet_one_line_each "$E2E_DIR/i.out" "agent install" "agent $LABEL installed"
  tail -n 1 "$E2E_DIR/i.out" | grep -Eqx '8 installed, 0 failed in [0-9]+\.[0-9] s' || fail "no recap: $(cat "$E2E_DIR/i.out")"
  lm_json "$E2E_DIR/l.json" agent list "${FLEET8[@]}"
  jq_is "$E2E_DIR/l.json" "[.vms[].agents[] | select(.label == \"$LABEL\")] | length" 8
  set +e; lm agent remove "${FLEET8[@]}" --jobs 4 --label $LABEL >"$E2E_DIR/x.out" 2>"$E2E_DIR/x.err"; rc=$?; set -e
  [ $rc -eq 0 ] || fail "agent remove --jobs 4: exit $rc: $(cat "$E2E_DIR/x.out" "$E2E_DIR/x.err")"
  fleet_one_line_each "$E2E_DIR/x.out" "agent remove" "agent $LABEL removed"
  tail -n 1 "$E2E_DIR/x.out" | grep -Eqx '8 removed, 0 failed in [0-9]+\.[0-9] s' || fail "no recap: $(cat "$E2E_DIR/x.out")"
  lm_json "$E2E_DIR/l2.json" agent list "${FLEET8[@]}"
  jq_is "$E2E_DIR/l2.json" "[.vms[].agents[] | select(.label == \"$LABEL\")] | length" 0
  lm_json "$E2E_DIR/r2.json" rollback --all --jobs 4
  expect_rc 0 "$E2E_DIR/r2.json"
  jq_is "$E2E_DIR/r2.json" '.recap | tojson' '{"ok":8,"failed":0,"unsupported":0}'

  note "a failure whose time is not known prints none, never (0.00 s)"
  set +e; lm probe nosuch >"$E2E_DIR/p.out" 2>"$E2E_DIR/p.err"; rc=$?; set -e
  [ $rc -ne 0 ] && grep -qx 'FAILED nosuch' "$E2E_DIR/p.out" || fail "probe nosuch: exit $rc: $(cat "$E2E_DIR/p.out" "$E2E_DIR/p.err")"
  ! grep -q '0\.00 s' "$E2E_DIR/p.out" "$E2E_DIR/p.err" || fail "a time that did not happen: $(cat "$E2E_DIR/p.out" "$E2E_DIR/p.err")"
}

# On a terminal every VM that waits has its own live row: four VMs whose locks other lume-metal
# processes hold (stopped at a step by the test hook, so that the waits last until released) are
# drawn waiting in one frame of the live area.
scenario_fleet_waits() {
  local vm holders=() rc
  sim_start --vm vm-a --vm vm-b --vm vm-c --vm vm-d --boot-delay 0 --stop-delay 0 --max-running 4
  trap 'rc=$?; kill -KILL "${holders[@]}" 2>/dev/null || true; lm_test_exit "$rc"' EXIT
  for vm in vm-a vm-b vm-c vm-d; do
    LUME_METAL_TEST_STOP_AT=after-preference "$LM_BIN_HOOKS" enable "$vm" >"$E2E_DIR/h-$vm.out" 2>&1 &
    holders+=($!)
  done
  for p in "${holders[@]}"; do wait_for 15 "holder $p to stop at its step" is_stopped "$p"; done
  TERM=xterm script -qefc "$(printf '%q ' "$LM_BIN" enable vm-a vm-b vm-c vm-d --jobs 4)" "$E2E_DIR/tty.log" >/dev/null &
  local waiter=$!
  four_waiting() { # one frame (what follows an erase of the area's first row) with all four rows waiting
    perl -0777 -ne 'for (split /\r\e\[K/) { my $n = () = /(?:^|\e\[K)vm-[a-d]: wait-lock: waiting \d+ s: another lume-metal process/g; exit 0 if $n == 4 } exit 1' "$E2E_DIR/tty.log"
  }
  wait_for 30 "four VMs drawn waiting at once: $(cat -v "$E2E_DIR/tty.log" | tail -c 2000)" four_waiting
  kill -CONT "${holders[@]}"
  for p in "${holders[@]}"; do wait "$p" || fail "a holder failed: $(cat "$E2E_DIR"/h-*.out)"; done
  set +e; wait $waiter; rc=$?; set -e
  [ $rc -eq 0 ] || fail "enable on a terminal: exit $rc: $(cat -v "$E2E_DIR/tty.log")"
  tr -d '\r' <"$E2E_DIR/tty.log" | grep -Eqx '4 enabled, 0 failed in [0-9]+\.[0-9] s' || fail "no recap: $(cat -v "$E2E_DIR/tty.log")"
}

# ---- Agents over a fleet (issue 37 items 4 and 6) ----
# agent install/remove/list over four VMs end with the recap line enable's and rollback's have (and
# JSON's `recap`); agent list shows each agent's pid, last exit and log paths (as `launchctl print`
# and `brew services info`); agent logs prints them, -f follows until SIGTERM.
FLEET_LABEL=com.example.poke
install_poke() { # VM: a workload that says it started, writes to stderr, then prints ~/poke's lines
  local f; f="$(vm_dir "$1")/opt/homebrew/bin/poke-server"
  printf '#!/bin/sh\necho "started $*"\necho "an error line" >&2\nwhile :; do\n  if [ -f "$HOME/poke" ]; then cat "$HOME/poke"; rm -f "$HOME/poke"; fi\n  sleep 0.1\ndone\n' >"$f"
  chmod 755 "$f"
  f="$(vm_dir "$1")/opt/homebrew/bin/exit-seven"
  printf '#!/bin/sh\necho "leaving"\nexit 7\n' >"$f"
  chmod 755 "$f"
}
last_exit_is() { # VM LABEL STATUS: agent list's JSON says the agent last exited STATUS
  "$LM_BIN" agent list "$1" --format json 2>/dev/null |
    jq -e --arg l "$2" --argjson s "$3" '.vms[0].agents[] | select(.label == $l) | .last_exit_status == $s' >/dev/null
}
started_once() { # VM: the agent wrote to both its logs
  local d; d="$(guest_home "$1")/Library/Logs/lume-metal"
  grep -qx 'started x' "$d/$FLEET_LABEL.out.log" 2>/dev/null && grep -qx 'an error line' "$d/$FLEET_LABEL.err.log" 2>/dev/null
}
scenario_agent_fleet() {
  local vm out_log err_log follow_pid rc
  sim_start --vm vm-d --vm vm-a --vm vm-c --vm vm-b --boot-delay 0 --stop-delay 0 --max-running 4
  lm_json "$E2E_DIR/e.json" enable vm-d vm-a vm-c vm-b --jobs 4
  expect_rc 0 "$E2E_DIR/e.json"
  for vm in vm-a vm-b vm-c vm-d; do install_poke "$vm"; done
  out_log=/Users/lume/Library/Logs/lume-metal/$FLEET_LABEL.out.log
  err_log=/Users/lume/Library/Logs/lume-metal/$FLEET_LABEL.err.log

  note "agent install over four VMs: each VM's result, then the recap"
  set +e; lm agent install vm-d vm-a vm-c vm-b --label $FLEET_LABEL -- poke-server x >"$E2E_DIR/i.out" 2>"$E2E_DIR/i.err"; rc=$?; set -e
  [ $rc -eq 0 ] || fail "agent install: exit $rc: $(cat "$E2E_DIR/i.out" "$E2E_DIR/i.err")"
  for vm in vm-a vm-b vm-c vm-d; do
    grep -Eq "^$vm: agent $FLEET_LABEL installed and started \(pid [0-9]+\) \([0-9.]+ s\)$" "$E2E_DIR/i.out" ||
      fail "no $vm line: $(cat "$E2E_DIR/i.out")"
  done
  tail -n 1 "$E2E_DIR/i.out" | grep -Eqx '4 installed, 0 failed in [0-9]+\.[0-9] s' || fail "no recap last: $(cat "$E2E_DIR/i.out")"
  # JSON: another agent (one that starts no processes: reinstalling over a running agent whose
  # processes keep writing activation records races the install's clearing of its record folder).
  for vm in vm-a vm-b vm-c vm-d; do install_workload "$vm"; done
  lm_json_first "$E2E_DIR/i.json" agent install vm-d vm-a vm-c vm-b --label $LABEL -- llama-server
  expect_rc 0 "$E2E_DIR/i.json"
  jq_is "$E2E_DIR/i.json" '.recap | tojson' '{"ok":4,"failed":0,"unsupported":0}'
  jq_is "$E2E_DIR/i.json" '[.vms[].vm] | join(" ")' "vm-d vm-a vm-c vm-b"
  jq -e '.seconds | type == "number"' "$E2E_DIR/i.json" >/dev/null || fail "no run time: $(jq .seconds "$E2E_DIR/i.json")"

  note "agent list: pid, last exit and log paths, in text and JSON; the recap over several"
  for vm in vm-a vm-b; do
    wait_for 15 "$vm's agent to start" started_once "$vm"
  done
  lm_json "$E2E_DIR/l.json" agent list vm-a vm-b
  expect_rc 0 "$E2E_DIR/l.json"
  poke() { echo "[.vms[].agents[] | select(.label == \"$FLEET_LABEL\") | $1]"; }
  jq -e "$(poke .pid) | length == 2 and all(. > 0)" "$E2E_DIR/l.json" >/dev/null || fail "no pid: $(cat "$E2E_DIR/l.json")"
  jq_is "$E2E_DIR/l.json" "$(poke .last_exit_status) | tojson" '[null,null]'
  jq_is "$E2E_DIR/l.json" "$(poke .stdout_path) | unique | join(\" \")" "$out_log"
  jq_is "$E2E_DIR/l.json" "$(poke .stderr_path) | unique | join(\" \")" "$err_log"
  jq_is "$E2E_DIR/l.json" '.recap | tojson' '{"ok":2,"failed":0,"unsupported":0}'
  set +e; lm agent list vm-a vm-b >"$E2E_DIR/l.out" 2>"$E2E_DIR/l.err"; rc=$?; set -e
  [ $rc -eq 0 ] || fail "agent list: exit $rc: $(cat "$E2E_DIR/l.err")"
  grep -Eq "^    $FLEET_LABEL +running \(pid [0-9]+\)  /opt/homebrew/bin/poke-server$" "$E2E_DIR/l.out" || fail "$(cat "$E2E_DIR/l.out")"
  [ "$(grep -cx '      last exit: never exited since it was loaded' "$E2E_DIR/l.out")" -eq 4 ] || fail "last exit: $(cat "$E2E_DIR/l.out")"
  [ "$(grep -cxF "      stdout: $out_log" "$E2E_DIR/l.out")" -eq 2 ] || fail "stdout path: $(cat "$E2E_DIR/l.out")"
  [ "$(grep -cxF "      stderr: $err_log" "$E2E_DIR/l.out")" -eq 2 ] || fail "stderr path: $(cat "$E2E_DIR/l.out")"
  tail -n 1 "$E2E_DIR/l.out" | grep -Eqx '2 listed, 0 failed in [0-9]+\.[0-9] s' || fail "no recap: $(cat "$E2E_DIR/l.out")"

  note "an agent that exited: its last exit status"
  lm agent install vm-c --label com.example.exit-seven -- exit-seven >"$E2E_DIR/x.out" 2>&1 || true
  wait_for 15 "launchd to say the agent exited 7" last_exit_is vm-c com.example.exit-seven 7
  lm agent list vm-c >"$E2E_DIR/x.txt" 2>&1 || fail "agent list vm-c: $(cat "$E2E_DIR/x.txt")"
  grep -qx '      last exit: exit 7' "$E2E_DIR/x.txt" || fail "no exit 7: $(cat "$E2E_DIR/x.txt")"

  note "agent logs: stdout's and stderr's logs under their headers"
  set +e; lm agent logs vm-a --label $FLEET_LABEL >"$E2E_DIR/g.out" 2>"$E2E_DIR/g.err"; rc=$?; set -e
  [ $rc -eq 0 ] || fail "agent logs: exit $rc: $(cat "$E2E_DIR/g.err")"
  [ "$(cat "$E2E_DIR/g.out")" = "==> $out_log <==
started x

==> $err_log <==
an error line" ] || fail "agent logs: $(cat "$E2E_DIR/g.out")"

  note "agent logs -f: a line the agent writes appears, SIGTERM ends it"
  lm agent logs vm-b --label $FLEET_LABEL -f >"$E2E_DIR/f.out" 2>"$E2E_DIR/f.err" &
  follow_pid=$!
  wait_for 15 "the follower to print the logs" grep -qx "an error line" "$E2E_DIR/f.out"
  echo "poked 42" >"$(guest_home vm-b)/poke.tmp" && mv "$(guest_home vm-b)/poke.tmp" "$(guest_home vm-b)/poke"
  wait_for 15 "the agent's new line in the follower's output" grep -qx "poked 42" "$E2E_DIR/f.out"
  kill -TERM "$follow_pid"
  set +e; wait "$follow_pid"; rc=$?; set -e
  # The project's convention (interrupt.c): it ends by the signal it got, as tail -f does.
  [ $rc -eq 143 ] || fail "agent logs -f after SIGTERM: exit $rc: $(cat "$E2E_DIR/f.err")"
  ! grep -q . "$E2E_DIR/f.err" || fail "agent logs -f said: $(cat "$E2E_DIR/f.err")"

  note "unknown VM or label: a clear error saying what to do"
  set +e; lm agent logs vm-a --label com.example.none >"$E2E_DIR/u.out" 2>"$E2E_DIR/u.err"; rc=$?; set -e
  [ $rc -ne 0 ] && grep -qF "vm-a: lume-metal installed no agent com.example.none there (the journal records none by that label)" \
    "$E2E_DIR/u.err" && grep -qxF "hint: \`lume-metal agent list vm-a\` lists the VM's agents" "$E2E_DIR/u.err" || fail "unknown label: exit $rc: $(cat "$E2E_DIR/u.err")"
  set +e; lm agent logs nosuch --label $FLEET_LABEL >"$E2E_DIR/n.out" 2>"$E2E_DIR/n.err"; rc=$?; set -e
  [ $rc -ne 0 ] && grep -q "nosuch" "$E2E_DIR/n.err" || fail "unknown VM: exit $rc: $(cat "$E2E_DIR/n.err")"

  note "agent list with a missing VM: its FAILED line and the recap counts it"
  set +e; lm agent list vm-a nosuch >"$E2E_DIR/lf.out" 2>"$E2E_DIR/lf.err"; rc=$?; set -e
  [ $rc -eq 3 ] || fail "agent list with a missing VM: exit $rc: $(cat "$E2E_DIR/lf.out" "$E2E_DIR/lf.err")"
  grep -Eqx 'FAILED nosuch' "$E2E_DIR/lf.out" || fail "no FAILED line: $(cat "$E2E_DIR/lf.out")"
  tail -n 1 "$E2E_DIR/lf.out" | grep -Eqx '1 listed, 1 failed in [0-9]+\.[0-9] s' || fail "recap: $(cat "$E2E_DIR/lf.out")"

  note "agent remove over four VMs: the recap, in JSON and text"
  lm_json "$E2E_DIR/r.json" agent remove vm-a vm-b --label $FLEET_LABEL
  expect_rc 0 "$E2E_DIR/r.json"
  jq_is "$E2E_DIR/r.json" '.recap | tojson' '{"ok":2,"failed":0,"unsupported":0}'
  set +e; lm agent remove vm-d vm-a vm-c vm-b --label $FLEET_LABEL >"$E2E_DIR/r.out" 2>"$E2E_DIR/r.err"; rc=$?; set -e
  [ $rc -eq 0 ] || fail "agent remove: exit $rc: $(cat "$E2E_DIR/r.out" "$E2E_DIR/r.err")"
  tail -n 1 "$E2E_DIR/r.out" | grep -Eqx '4 removed, 0 failed in [0-9]+\.[0-9] s' || fail "no recap: $(cat "$E2E_DIR/r.out")"
  lm agent list vm-a >"$E2E_DIR/one.out" 2>&1 || true
  ! grep -q 'listed, .* failed in' "$E2E_DIR/one.out" || fail "a recap for one VM: $(cat "$E2E_DIR/one.out")"
}

# ---- Output that cannot be written (issue 49, items 1 and 7) ----
# Every command's stdout goes through one output layer (host/cli/print.c): the first write that
# fails ends the command at once, exit 1, with one line on stderr saying so (and why). Before, only
# `run` did: the others exited 0 with their output lost, and `agent logs -f` never ended. Three ways
# a stdout fails: /dev/full, a closed stdout (refused before anything runs), and a pipe whose reader
# has gone while SIGPIPE is ignored (as Python's subprocess, .NET and Node-based runners leave it).
OUT_GUARD=${LM_RUN_GUARD:-$LM_HANG_GUARD_FLOOR} # seconds; a hang guard, not a time target
# unwritable HOW NAME ARGS...: lume-metal ARGS with stdout HOW (full, closed, gone), stderr in
# $E2E_DIR/NAME.err; it must end, exit 1 and say why.
unwritable() {
  local how=$1 name=$2 rc why
  shift 2
  set +e
  case $how in
    full) timeout -s KILL "$OUT_GUARD" "$LM_BIN" "$@" >/dev/full 2>"$E2E_DIR/$name.err"; rc=$? why="No space left on device" ;;
    closed) timeout -s KILL "$OUT_GUARD" "$LM_BIN" "$@" >&- 2>"$E2E_DIR/$name.err"; rc=$? why="Bad file descriptor (stdout is closed)" ;;
    gone) ( trap '' PIPE; exec timeout -s KILL "$OUT_GUARD" "$LM_BIN" "$@" >&"$GONE" 2>"$E2E_DIR/$name.err" ); rc=$? why="Broken pipe" ;;
  esac
  set -e
  [ "$rc" -ne 137 ] || fail "lume-metal $* with stdout $how never ended (killed after $OUT_GUARD s): $(cat "$E2E_DIR/$name.err")"
  [ "$rc" -eq 1 ] || fail "lume-metal $* with stdout $how: exit $rc, expected 1: $(cat "$E2E_DIR/$name.err")"
  grep -qF "lume-metal: cannot write the output to stdout: $why" "$E2E_DIR/$name.err" ||
    fail "lume-metal $* with stdout $how: no line saying so: $(cat "$E2E_DIR/$name.err")"
}
scenario_output_fails() {
  sim_start --vm vm1
  lm_json "$E2E_DIR/e.json" enable vm1
  expect_rc 0 "$E2E_DIR/e.json"
  install_poke vm1
  set +e; lm agent install vm1 --label $FLEET_LABEL -- poke-server x >"$E2E_DIR/i.out" 2>"$E2E_DIR/i.err"; rc=$?; set -e
  [ $rc -eq 0 ] || fail "agent install: exit $rc: $(cat "$E2E_DIR/i.out" "$E2E_DIR/i.err")"
  wait_for 15 "the agent to write its logs" started_once vm1
  # A pipe whose reader has already exited: every write to it fails with EPIPE.
  exec {GONE}> >(exec true)
  wait $!
  local how i cmds=("status" "host status" "enable vm1 --format json" "probe vm1" "doctor vm1"
    "agent logs vm1 --label $FLEET_LABEL" "agent logs vm1 --label $FLEET_LABEL -f")
  note "each command prints to a file and exits 0 (the cases below differ only by their stdout)"
  for i in 0 1 2 3 4 5; do
    set +e; lm ${cmds[$i]} >"$E2E_DIR/ok$i.out" 2>"$E2E_DIR/ok$i.err"; rc=$?; set -e
    [ $rc -eq 0 ] && [ -s "$E2E_DIR/ok$i.out" ] || fail "${cmds[$i]}: exit $rc: $(cat "$E2E_DIR/ok$i.out" "$E2E_DIR/ok$i.err")"
  done
  for how in full closed gone; do
    for i in "${!cmds[@]}"; do
      note "${cmds[$i]} with stdout $how: exit 1, saying so"
      unwritable "$how" "$how$i" ${cmds[$i]}
    done
  done
  exec {GONE}>&-
}

# ---- Colour and width the way terminals expect (issue 26) ----
# Colour only where asked or on a terminal, never with NO_COLOR or TERM=dumb or on a pipe; help
# wrapped to COLUMNS (the terminal's width), 80 off a terminal.
has_esc() { grep -q $'\033' "$1"; }
scenario_color_width() {
  sim_start --vm vm1
  vm_run vm1
  note "off a terminal: no colour, whatever NO_COLOR says"
  env -u NO_COLOR "$LM_BIN" doctor vm1 >"$E2E_DIR/d.out" 2>&1 || fail "doctor: $(cat "$E2E_DIR/d.out")"
  ! has_esc "$E2E_DIR/d.out" || fail "colour on a pipe: $(cat -v "$E2E_DIR/d.out")"
  note "CLICOLOR_FORCE and FORCE_COLOR colour a pipe; NO_COLOR wins over them; CLICOLOR_FORCE=0 does not (issue 50)"
  for how in "CLICOLOR_FORCE=1" "FORCE_COLOR=1" "FORCE_COLOR=true"; do
    env -u NO_COLOR $how "$LM_BIN" doctor vm1 >"$E2E_DIR/f.out" 2>&1 || fail "doctor with $how: $(cat "$E2E_DIR/f.out")"
    grep -q $'^\033\[32mok\033\[0m ' "$E2E_DIR/f.out" || fail "no colour on a pipe with $how: $(cat -v "$E2E_DIR/f.out")"
  done
  for how in "NO_COLOR=1 CLICOLOR_FORCE=1" "NO_COLOR=1 FORCE_COLOR=1" "CLICOLOR_FORCE=0" "CLICOLOR_FORCE=1 --color never"; do
    # shellcheck disable=SC2086 # variables, then perhaps an option
    env -u NO_COLOR ${how%% --*} "$LM_BIN" doctor vm1 $([ "${how#*--}" != "$how" ] && echo "--${how#*--}") >"$E2E_DIR/f.out" 2>&1 ||
      fail "doctor with $how: $(cat "$E2E_DIR/f.out")"
    ! has_esc "$E2E_DIR/f.out" || fail "colour with $how: $(cat -v "$E2E_DIR/f.out")"
  done
  note "--color always: ok, warn and fail coloured"
  env -u NO_COLOR "$LM_BIN" doctor vm1 --color always >"$E2E_DIR/d2.out" 2>&1 || fail "$(cat "$E2E_DIR/d2.out")"
  grep -q $'^\033\[32mok\033\[0m ' "$E2E_DIR/d2.out" || fail "ok not green: $(cat -v "$E2E_DIR/d2.out")"
  note "on a terminal (script's pseudo-terminal): coloured, unless NO_COLOR, TERM=dumb or --color never"
  env -u NO_COLOR TERM=xterm script -qefc "$(printf '%q ' "$LM_BIN" doctor vm1)" "$E2E_DIR/tty1.log" >/dev/null ||
    fail "doctor on a terminal: $(cat -v "$E2E_DIR/tty1.log")"
  grep -q $'\033\[32mok' "$E2E_DIR/tty1.log" || fail "no colour on a terminal: $(cat -v "$E2E_DIR/tty1.log")"
  for how in "NO_COLOR=1 TERM=xterm" "NO_COLOR=yes TERM=xterm" "TERM=dumb"; do
    env -u NO_COLOR $how script -qefc "$(printf '%q ' "$LM_BIN" doctor vm1)" "$E2E_DIR/tty2.log" >/dev/null ||
      fail "doctor with $how: $(cat -v "$E2E_DIR/tty2.log")"
    ! grep -q $'\033\[3' "$E2E_DIR/tty2.log" || fail "colour with $how: $(cat -v "$E2E_DIR/tty2.log")"
  done
  env -u NO_COLOR TERM=xterm script -qefc "$(printf '%q ' "$LM_BIN" doctor vm1 --color never)" "$E2E_DIR/tty3.log" >/dev/null ||
    fail "doctor --color never: $(cat -v "$E2E_DIR/tty3.log")"
  ! grep -q $'\033\[3' "$E2E_DIR/tty3.log" || fail "colour with --color never: $(cat -v "$E2E_DIR/tty3.log")"
  note "TERM=dumb: no live line redrawn either"
  lm_json "$E2E_DIR/e.json" enable vm1
  TERM=dumb script -qefc "$(printf '%q ' "$LM_BIN" probe vm1 --exercise)" "$E2E_DIR/tty4.log" >/dev/null ||
    fail "probe on a dumb terminal: $(cat -v "$E2E_DIR/tty4.log")"
  ! grep -q $'\033' "$E2E_DIR/tty4.log" || fail "escape codes for TERM=dumb: $(cat -v "$E2E_DIR/tty4.log")"

  note "help: wrapped to COLUMNS, 80 off a terminal; common options once"
  for cols in 60 100; do
    for h in "--help" "help options" "help enable" "help agent" "help rollback" "enable --help"; do
      COLUMNS=$cols "$LM_BIN" $h >"$E2E_DIR/h.txt" || fail "$h"
      awk -v c=$cols 'length($0) > c { print; bad = 1 } END { exit bad }' "$E2E_DIR/h.txt" ||
        fail "$h wider than $cols columns"
    done
  done
  env -u COLUMNS "$LM_BIN" help options >"$E2E_DIR/h80.txt"
  awk 'length($0) > 80 { bad = 1 } END { exit bad }' "$E2E_DIR/h80.txt" || fail "wider than 80 off a terminal"
  grep -q "^  --state-dir DIR" "$E2E_DIR/h80.txt" || fail "help options lacks --state-dir: $(cat "$E2E_DIR/h80.txt")"
  env -u COLUMNS "$LM_BIN" help enable >"$E2E_DIR/he.txt"
  ! grep -q -- "^  --state-dir" "$E2E_DIR/he.txt" || fail "enable's help repeats the common options"
  grep -q "^Examples:" "$E2E_DIR/he.txt" || fail "no examples: $(cat "$E2E_DIR/he.txt")"
  [ "$(env -u COLUMNS "$LM_BIN" --help | wc -l)" -lt 70 ] || fail "the overview is 70 lines or more"
  note "on a terminal: the terminal's width (stty cols 50)"
  env -u COLUMNS script -qefc "stty cols 50; $(printf '%q ' "$LM_BIN" help options)" "$E2E_DIR/tty5.log" >/dev/null
  tr -d '\r' <"$E2E_DIR/tty5.log" | grep -v '^Script ' | awk 'length($0) > 50 { print; bad = 1 } END { exit bad }' ||
    fail "help options wider than the terminal's 50 columns"
  note "a mistyped option: the nearest one; the old --host is unknown"
  set +e; lm enable vm1 --dryrun >"$E2E_DIR/o.out" 2>"$E2E_DIR/o.err"; rc=$?; set -e
  [ $rc -eq 2 ] || fail "exit $rc"
  grep -qF "unknown option '--dryrun'; did you mean '--dry-run'?" "$E2E_DIR/o.err" || fail "$(cat "$E2E_DIR/o.err")"
  set +e; lm rollback --host vm1 >"$E2E_DIR/o.out" 2>"$E2E_DIR/o.err"; rc=$?; set -e
  [ $rc -eq 2 ] || fail "exit $rc"
  grep -qF "unknown option '--host'" "$E2E_DIR/o.err" || fail "$(cat "$E2E_DIR/o.err")"
}

"scenario_$1"
