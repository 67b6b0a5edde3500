#!/usr/bin/env bash
# End-to-end scenarios for the proof at the workload (issue 23), on zsh guests: activation.sh NAME.
# The workloads are the metal-server fixture (tests/guest/drivers/metal_server.c: a server whose
# Metal work is in a child, or that child alone with --runner), installed as the guest's
# Homebrew-installed programs, plain or signed with guest-sshd sign (the codesign stand-in reports
# the signature; the loader ignores the shim in a hardened program without the dyld entitlement, as
# dyld does). See docs/testing.md.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
: "${LM_METAL_SERVER:?LM_METAL_SERVER: the metal-server fixture}"

ALLOW=com.apple.security.cs.allow-dyld-environment-variables
NOLV=com.apple.security.cs.disable-library-validation

# An enabled vm1 with the fixture as /opt/homebrew/bin/metal-server, and signed copies of it:
# hardened-server (hardened runtime, no entitlement) and entitled-server (both entitlements).
setup() {
  sim_start --vm vm1
  lm_json "$E2E_DIR/e.json" enable vm1
  expect_rc 0 "$E2E_DIR/e.json"
  local bin; bin="$(vm_dir vm1)/opt/homebrew/bin"
  install -m 755 "$LM_METAL_SERVER" "$bin/metal-server"
  install -m 755 "$LM_METAL_SERVER" "$bin/hardened-server"
  install -m 755 "$LM_METAL_SERVER" "$bin/entitled-server"
  "$GUEST_SSHD" sign --options runtime --team ABCDE12345 "$bin/hardened-server"
  "$GUEST_SSHD" sign --options runtime --team ABCDE12345 --entitlement "$ALLOW" --entitlement "$NOLV" "$bin/entitled-server"
}

rc_is() { [ "$RUN_RC" -eq "$2" ] || fail "$1: exit $RUN_RC, expected $2: $(cat "$E2E_DIR/$1.out" "$E2E_DIR/$1.err")"; }
# The guest's run directories: each run's record directory is gone after it.
runs_left() { find "$(guest_home vm1)/.local/share/lume-metal/runs" -mindepth 1 2>/dev/null | wc -l; }

# A plain workload: its record says the shim loaded and Apple7/Apple9 were answered yes; the
# record directory is the run's own and is gone afterwards; JSON carries the records.
scenario_activation_plain() {
  export GUEST_SSHD_SIP=enabled
  setup
  run_capture plain vm1 --verbose -- metal-server --runner
  rc_is plain 0
  out_is plain "runner: apple7=1 apple9=1"
  grep -Eq '^shim: pid [0-9]+ /opt/homebrew/bin/metal-server: asked Apple7→yes \(stock no\), Apple9→yes \(stock no\); its children keep the shim$' \
    "$E2E_DIR/plain.err" || fail "no process line: $(cat "$E2E_DIR/plain.err")"
  grep -qx 'shim: children keep the shim (guest SIP enabled: protected children purge DYLD_\* themselves)' "$E2E_DIR/plain.err" ||
    fail "no children line: $(cat "$E2E_DIR/plain.err")"
  ! grep -q 'no process of the workload' "$E2E_DIR/plain.err" || fail "said no process loaded the shim"
  [ "$(runs_left)" -eq 0 ] || fail "the run's record directory was left: $(find "$(guest_home vm1)/.local/share/lume-metal/runs")"
  # As quiet as `tart exec`: one line of run's own by default (the process line), none with --quiet.
  run_capture quiet1 vm1 -- metal-server --runner
  rc_is quiet1 0
  [ "$(wc -l <"$E2E_DIR/quiet1.err")" -eq 1 ] && grep -Eq '^shim: pid [0-9]+ /opt/homebrew/bin/metal-server: asked ' "$E2E_DIR/quiet1.err" ||
    fail "run printed more than one line of its own: $(cat "$E2E_DIR/quiet1.err")"
  run_capture quiet0 vm1 --quiet -- metal-server --runner
  rc_is quiet0 0
  out_is quiet0 "runner: apple7=1 apple9=1"
  [ ! -s "$E2E_DIR/quiet0.err" ] || fail "run --quiet printed: $(cat "$E2E_DIR/quiet0.err")"

  lm_json_first "$E2E_DIR/plain.json" run vm1 --require-shim -- metal-server --runner
  expect_rc 0 "$E2E_DIR/plain.json"
  jq -e '.activation.records | length == 1' "$E2E_DIR/plain.json" >/dev/null || fail "records: $(cat "$E2E_DIR/plain.json")"
  jq -e '.activation.records[0].record as $r | $r.exe == "/opt/homebrew/bin/metal-server" and $r.profile.active
    and ([$r.questions[] | select(.family == 1007 or .family == 1009) | .given] == [true, true])
    and $r.children.inherit and ($r.children.host_reason | startswith("guest SIP enabled"))' "$E2E_DIR/plain.json" >/dev/null ||
    fail "the record: $(jq -c .activation.records "$E2E_DIR/plain.json")"
  jq_is "$E2E_DIR/plain.json" '.activation.no_shim' null
  jq_is "$E2E_DIR/plain.json" '.activation.children_inherit' true
  jq -e '.activation.record_dir | startswith("/Users/lume/.local/share/lume-metal/activation/run-")' "$E2E_DIR/plain.json" >/dev/null ||
    fail "record_dir: $(jq -c .activation "$E2E_DIR/plain.json")"
  [ "$(runs_left)" -eq 0 ] || fail "the JSON run's record directory was left"
}

# A hardened workload: refused before it starts (its own error code), with the override it runs
# stock, its records show no activation and run says so; --require-shim then fails with its own
# code. The same program signed with the entitlements gets the shim.
scenario_activation_hardened() {
  export GUEST_SSHD_SIP=enabled
  setup
  local calls; calls="$(vm_dir vm1)/calls.log"
  run_capture hard vm1 -- hardened-server
  rc_is hard 1
  [ ! -s "$E2E_DIR/hard.out" ] || fail "the hardened program ran: $(cat "$E2E_DIR/hard.out")"
  grep -q "^lume-metal: vm1: hardened-server (/opt/homebrew/bin/hardened-server) is signed with the hardened runtime (flags=0x10000(runtime)) without the entitlement $ALLOW: dyld ignores DYLD_INSERT_LIBRARIES in it, so the shim cannot load and it would run stock. Nothing was started" \
    "$E2E_DIR/hard.err" || fail "no refusal: $(cat "$E2E_DIR/hard.err")"
  grep -q -- "--run-hardened-stock" "$E2E_DIR/hard.err" || fail "no hint: $(cat "$E2E_DIR/hard.err")"
  grep -q '^codesign -dv --entitlements - /opt/homebrew/bin/hardened-server$' "$calls" || fail "codesign not asked: $(cat "$calls")"
  lm_json_first "$E2E_DIR/hard.json" run vm1 -- hardened-server
  expect_rc 1 "$E2E_DIR/hard.json"
  jq_is "$E2E_DIR/hard.json" '.error.code' hardened

  run_capture stock vm1 --run-hardened-stock -- hardened-server
  rc_is stock 0
  out_is stock "$(printf '%s\n' 'runner: apple7=0 apple9=0' 'server: runner exited 0')"
  grep -q '^warning: vm1: hardened-server .* Nothing was started; started all the same, as asked: with the guest.s SIP enabled dyld is documented to ignore the shim in it, so it is expected to run stock (the activation records will tell)$' "$E2E_DIR/stock.err" ||
    fail "no warning: $(cat "$E2E_DIR/stock.err")"
  grep -q '^shim: no process of the workload loaded the shim: the program (or its script.s interpreter) is signed with the hardened runtime' \
    "$E2E_DIR/stock.err" || fail "run did not say so: $(cat "$E2E_DIR/stock.err")"
  ! grep -q '^shim: pid ' "$E2E_DIR/stock.err" || fail "a process line: $(cat "$E2E_DIR/stock.err")"

  lm_json_first "$E2E_DIR/req.json" run vm1 --run-hardened-stock --require-shim -- hardened-server
  expect_rc 1 "$E2E_DIR/req.json"
  jq_is "$E2E_DIR/req.json" '.error.code' no-shim
  jq_is "$E2E_DIR/req.json" '.activation.records | length' 0
  jq -e '.activation.no_shim | contains("hardened runtime")' "$E2E_DIR/req.json" >/dev/null || fail "no_shim: $(cat "$E2E_DIR/req.json")"
  jq_is "$E2E_DIR/req.json" '.stdout' "$(printf '%s\n' 'runner: apple7=0 apple9=0' 'server: runner exited 0')"

  run_capture entitled vm1 --require-shim --verbose -- entitled-server
  rc_is entitled 0
  out_is entitled "$(printf '%s\n' 'runner: apple7=1 apple9=1' 'server: runner exited 0')"
  [ "$(grep -c '^shim: pid ' "$E2E_DIR/entitled.err")" -eq 2 ] || fail "two processes expected: $(cat "$E2E_DIR/entitled.err")"
  run_capture entitled1 vm1 --require-shim -- entitled-server
  # The process the answers were widened in is named (the runner, which exited before the server; issue 48).
  [ "$(wc -l <"$E2E_DIR/entitled1.err")" -eq 1 ] && grep -Eqx 'shim: loaded by 2 processes of the workload, widened in pid [0-9]+ /opt/homebrew/bin/entitled-server \(--verbose: each\)' "$E2E_DIR/entitled1.err" ||
    fail "two processes without --verbose: $(cat "$E2E_DIR/entitled1.err")"
  lm_json_first "$E2E_DIR/entitled1.json" run vm1 --require-shim -- entitled-server
  expect_rc 0 "$E2E_DIR/entitled1.json"
  jq -e '.activation.widened_in as $w | ($w.exe == "/opt/homebrew/bin/entitled-server") and
    ([.activation.records[] | select(.took)][0].pid == $w.pid)' "$E2E_DIR/entitled1.json" >/dev/null ||
    fail "widened_in: $(jq -c .activation "$E2E_DIR/entitled1.json")"
  [ "$(runs_left)" -eq 0 ] || fail "record directories were left"
}

# A server whose Metal work is in a child, on a SIP-on guest, with default settings: the child
# keeps the shim, and its record shows the unlock.
scenario_activation_child_sip_on() {
  export GUEST_SSHD_SIP=enabled
  setup
  lm_json_first "$E2E_DIR/c.json" run vm1 -- metal-server
  expect_rc 0 "$E2E_DIR/c.json"
  jq_is "$E2E_DIR/c.json" '.stdout' "$(printf '%s\n' 'runner: apple7=1 apple9=1' 'server: runner exited 0')"
  jq -e '.activation.records | length == 2' "$E2E_DIR/c.json" >/dev/null || fail "records: $(jq -c .activation "$E2E_DIR/c.json")"
  # The runner: the server's child, and the one that asked.
  jq -e '.activation.records as $rs | [$rs[].record] as $r | ($r | map(.pid)) as $pids
    | [$r[] | select(.ppid as $p | $pids | index($p))] | length == 1 and (.[0].questions | map(select(.family == 1009)) | .[0].given)
    and (.[0].children.setting == null) and (.[0].children.why | startswith("decided at each spawn: guest SIP enabled"))' \
    "$E2E_DIR/c.json" >/dev/null || fail "the child's record: $(jq -c .activation.records "$E2E_DIR/c.json")"
  run_capture ct vm1 --verbose -- metal-server
  grep -Eq '^shim: pid [0-9]+ /opt/homebrew/bin/metal-server: asked Apple7→yes \(stock no\), Apple9→yes \(stock no\)' "$E2E_DIR/ct.err" ||
    fail "the child's line: $(cat "$E2E_DIR/ct.err")"
  grep -Eq '^shim: pid [0-9]+ /opt/homebrew/bin/metal-server: loaded the shim, asked no Metal question; its children keep the shim$' \
    "$E2E_DIR/ct.err" || fail "the server's line: $(cat "$E2E_DIR/ct.err")"
}

# SIP off and no arm64e slice (the Linux shim has none): the shim decides at each spawn, so the
# server's runner (not a protected program) keeps it, and run says protected children would not;
# the user's own LUME_METAL_INHERIT=0 still wins (tests/e2e/spawn.sh has the protected child).
scenario_activation_child_sip_off() {
  export GUEST_SSHD_SIP=disabled
  setup
  run_capture off vm1 --verbose -- metal-server
  rc_is off 0
  out_is off "$(printf '%s\n' 'runner: apple7=1 apple9=1' 'server: runner exited 0')"
  [ "$(grep -c '^shim: pid ' "$E2E_DIR/off.err")" -eq 2 ] || fail "two processes expected: $(cat "$E2E_DIR/off.err")"
  grep -Eq '^shim: pid [0-9]+ /opt/homebrew/bin/metal-server: loaded the shim, asked no Metal question; its children keep the shim$' \
    "$E2E_DIR/off.err" || fail "the server's line: $(cat "$E2E_DIR/off.err")"
  grep -qx 'shim: children keep the shim (guest SIP disabled and the installed shim has no arm64e slice: protected and arm64e children start without it (dyld would stop them), every other child keeps it)' \
    "$E2E_DIR/off.err" || fail "the rule is not explained: $(cat "$E2E_DIR/off.err")"
  lm_json_first "$E2E_DIR/off.json" run vm1 -- metal-server
  jq -e '[.activation.records[].record.children] | length == 2 and all(.inherit and .setting == null
    and (.host_reason | startswith("guest SIP disabled")))' \
    "$E2E_DIR/off.json" >/dev/null || fail "the records' children: $(jq -c .activation "$E2E_DIR/off.json")"
  # The server started its runner with posix_spawn: its record names the runner (parent_named);
  # the server's own parent wrote no record (null).
  jq -e '[.activation.records[] | .parent_named] | sort == [null, true]' "$E2E_DIR/off.json" >/dev/null ||
    fail "parent_named: $(jq -c '[.activation.records[] | {pid, ppid, parent_named}]' "$E2E_DIR/off.json")"
  # Through a shell, which forks and execs: the shell's record cannot name the server (issue 48 item 7).
  run_capture fx vm1 --verbose -- sh -c 'metal-server; :'
  rc_is fx 0
  grep -Eq "^shim: pid [0-9]+ /opt/homebrew/bin/metal-server: loaded the shim, asked no Metal question; its children keep the shim; its parent's record \(pid [0-9]+\) does not name it: started through fork and exec, or with the parent's exec and spawn hooks off \(AMFI can switch interposing off\)$" \
    "$E2E_DIR/fx.err" || fail "the server's line through a shell: $(cat "$E2E_DIR/fx.err")"

  run_capture own vm1 --verbose -- LUME_METAL_INHERIT=0 metal-server
  out_is own "$(printf '%s\n' 'runner: apple7=0 apple9=0' 'server: runner exited 0')"
  [ "$(grep -c '^shim: pid ' "$E2E_DIR/own.err")" -eq 1 ] || fail "one process expected: $(cat "$E2E_DIR/own.err")"
  ! grep -q '^shim: children ' "$E2E_DIR/own.err" || fail "a policy line beside the user's own: $(cat "$E2E_DIR/own.err")"
}

# Agents: install gives each its record directory (and refuses a hardened program before anything
# is installed); agent list, status and doctor say whether the agent's process loaded the shim
# since it started, and what it asked.
scenario_activation_agent() {
  export GUEST_SSHD_SIP=enabled
  setup
  local home; home=$(guest_home vm1)
  local label=com.example.metal dir=$home/Library/Logs/lume-metal/com.example.metal.activation
  lm_json_first "$E2E_DIR/i.json" agent install vm1 --label $label -- metal-server --runner --stay
  expect_rc 0 "$E2E_DIR/i.json"
  jq_is "$E2E_DIR/i.json" '.vms[0].agents[0].record_dir' /Users/lume/Library/Logs/lume-metal/$label.activation
  local xml; xml=$(plistutil -i "$home/Library/LaunchAgents/$label.plist" -o - -f xml 2>/dev/null ||
    plistutil -i "$home/Library/LaunchAgents/$label.plist" -o -)
  for want in "<key>LUME_METAL_RECORD_DIR</key>" "<string>/Users/lume/Library/Logs/lume-metal/$label.activation</string>" \
      "<key>LUME_METAL_GUEST_SIP</key>" "<key>LUME_METAL_SHIM_ARM64E</key>" "<key>LUME_METAL_INHERIT_REASON</key>"; do
    grep -qF "$want" <<<"$xml" || fail "plist lacks $want: $xml"
  done
  lm_json "$E2E_DIR/l0.json" agent list vm1
  local pid; pid=$(jq -r '.vms[0].agents[0].pid' "$E2E_DIR/l0.json")
  wait_for 15 "the agent's record" grep -q '"written": *"update"' "$dir/$pid.json"

  lm agent list vm1 >"$E2E_DIR/l.txt"
  grep -qx "      shim: loaded since it started: asked Apple7→yes (stock no), Apple9→yes (stock no)" "$E2E_DIR/l.txt" ||
    fail "agent list: $(cat "$E2E_DIR/l.txt")"
  lm_json "$E2E_DIR/s.json" status vm1
  jq_is "$E2E_DIR/s.json" '.vms[0].agents[0].shim_loaded' true
  jq_is "$E2E_DIR/s.json" '.vms[0].agents[0].shim' "asked Apple7→yes (stock no), Apple9→yes (stock no)"
  lm_json "$E2E_DIR/d.json" doctor vm1
  jq -e --arg p "$pid" '.checks[] | select(.check == "agent-shim") | .level == "ok" and
    (.message == "com.example.metal (pid \($p)) loaded the shim: asked Apple7→yes (stock no), Apple9→yes (stock no)")' \
    "$E2E_DIR/d.json" >/dev/null || fail "doctor: $(jq -c '.checks' "$E2E_DIR/d.json")"

  note "a hardened program: refused before anything is installed, or installed stock on request"
  local hl=com.example.hardened
  lm_json_first "$E2E_DIR/h.json" agent install vm1 --label $hl -- hardened-server --runner --stay
  expect_rc 1 "$E2E_DIR/h.json"
  jq_is "$E2E_DIR/h.json" '.error.code' hardened
  [ ! -e "$home/Library/LaunchAgents/$hl.plist" ] || fail "the refused agent's plist was uploaded"
  jq -e --arg l $hl '[.vms.vm1.agents[]? | select(.label == $l)] | length == 0' "$LUME_METAL_STATE_DIR/state.json" >/dev/null ||
    fail "the journal lists the refused agent"
  lm_json_first "$E2E_DIR/h2.json" agent install vm1 --run-hardened-stock --label $hl -- hardened-server --runner --stay
  expect_rc 0 "$E2E_DIR/h2.json"
  wait_for 15 "the hardened agent to run" grep -q 'runner: apple7=0 apple9=0' "$home/Library/Logs/lume-metal/$hl.out.log"
  lm agent list vm1 >"$E2E_DIR/l2.txt"
  grep -Eq "^      shim: not loaded by its process since it started \(no activation record for pid [0-9]+ in /Users/lume/Library/Logs/lume-metal/$hl.activation\)$" \
    "$E2E_DIR/l2.txt" || fail "agent list: $(cat "$E2E_DIR/l2.txt")"
  lm_json "$E2E_DIR/d2.json" doctor vm1
  jq -e '[.checks[] | select(.check == "agent-shim" and .level == "fail" and (.message | startswith("com.example.hardened (pid ")))]
    | length == 1' "$E2E_DIR/d2.json" >/dev/null || fail "doctor: $(jq -c '.checks' "$E2E_DIR/d2.json")"
}

# SIP off (Cua's image, Tart's -base and -xcode; issue 48): a hardened program is started, not
# refused, with one line saying why. A copy the loader gives the shim (guest-sshd sign --dir: no
# hardened runtime with SIP off, Apple Developer Forums thread 757000) has its answers widened and
# its records say so, by `run` and by `agent install`; one the loader keeps the shim out of (sign
# without --dir: a macOS that applies it all the same, as Bear issue 232 reports of 10.14) runs
# stock and run says the records answered the other way.
scenario_activation_hardened_sip_off() {
  export GUEST_SSHD_SIP=disabled
  setup
  local bin home; bin="$(vm_dir vm1)/opt/homebrew/bin" home=$(guest_home vm1)
  install -m 755 "$LM_METAL_SERVER" "$bin/hardened-off"
  "$GUEST_SSHD" sign --dir "$(vm_dir vm1)" --options runtime --team ABCDE12345 "$bin/hardened-off"
  run_capture off vm1 --require-shim --verbose -- hardened-off --runner
  rc_is off 0
  out_is off "runner: apple7=1 apple9=1"
  grep -qxF "warning: vm1: hardened-off (/opt/homebrew/bin/hardened-off) is signed with the hardened runtime (flags=0x10000(runtime)) without the entitlement $ALLOW: this guest's SIP is disabled, and macOS does not apply hardened-runtime restrictions with SIP off (an Apple Security Engineer, Apple Developer Forums thread 757000; Proxyman issue 788 agrees, Bear issue 232 on macOS 10.14 does not), so it is started; the activation records will tell whether the shim loaded" \
    "$E2E_DIR/off.err" || fail "no one-line note: $(cat "$E2E_DIR/off.err")"
  grep -Eq '^shim: pid [0-9]+ /opt/homebrew/bin/hardened-off: asked Apple7→yes \(stock no\), Apple9→yes \(stock no\)' \
    "$E2E_DIR/off.err" || fail "no process line: $(cat "$E2E_DIR/off.err")"
  ! grep -q 'library validation\|runs stock' "$E2E_DIR/off.err" || fail "a SIP-on warning: $(cat "$E2E_DIR/off.err")"
  lm_json_first "$E2E_DIR/off.json" run vm1 --require-shim -- hardened-off --runner
  expect_rc 0 "$E2E_DIR/off.json"
  jq -e '.activation.records | length == 1 and (.[0].record | .exe == "/opt/homebrew/bin/hardened-off" and .profile.active
    and ([.questions[] | select(.family == 1007 or .family == 1009) | .given] == [true, true]))' "$E2E_DIR/off.json" >/dev/null ||
    fail "the record: $(jq -c .activation "$E2E_DIR/off.json")"
  jq_is "$E2E_DIR/off.json" '.activation.no_shim' null

  note "agent install: started, not refused, and its process's record shows the unlock"
  local hl=com.example.hardened-off
  lm_json_first "$E2E_DIR/a.json" agent install vm1 --label $hl -- hardened-off --runner --stay
  expect_rc 0 "$E2E_DIR/a.json"
  wait_for 15 "the hardened agent to run" grep -q 'runner: apple7=1 apple9=1' "$home/Library/Logs/lume-metal/$hl.out.log"

  note "a macOS that applies the hardened runtime with SIP off all the same: started, and the records say stock"
  run_capture bear vm1 --require-shim -- hardened-server --runner
  rc_is bear 1
  out_is bear "runner: apple7=0 apple9=0"
  grep -q "^warning: vm1: hardened-server (/opt/homebrew/bin/hardened-server) is signed with the hardened runtime (flags=0x10000(runtime)) without the entitlement $ALLOW: this guest's SIP is disabled" \
    "$E2E_DIR/bear.err" || fail "no one-line note: $(cat "$E2E_DIR/bear.err")"
  grep -qF "no process of the workload loaded the shim: the program (or its script's interpreter) is signed with the hardened runtime or library validation, and although macOS is said not to apply those with SIP disabled (Apple Developer Forums thread 757000), on this guest it did, as Bear issue 232 reports of macOS 10.14: run it as a copy re-signed ad hoc" \
    "$E2E_DIR/bear.err" && grep -qxF "hint: --resign-copy runs such a copy (the original untouched)" "$E2E_DIR/bear.err" || fail "run did not say what the records showed: $(cat "$E2E_DIR/bear.err")"
}

[ $# -eq 1 ] && declare -F "scenario_$1" >/dev/null || { echo "usage: $0 SCENARIO" >&2; exit 2; }
"scenario_$1"
check_guest_shells
