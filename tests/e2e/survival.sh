#!/usr/bin/env bash
# What a real Mac does to a routine operation, and what lume-metal must survive (issue 24, items
# 1, 2 and 5): launchd's slow bootout under `agent install`, the CI runner's reaper of a job's
# processes, and macOS 15's Local Network privacy under the readiness wait. survival.sh SCENARIO;
# see docs/testing.md.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

LABEL=com.example.llama-server

# json_of OUTFILE COMMAND...: lm_json for any command line (lume-metal-hooks with a hook, lume-metal
# in another network namespace or environment): its exit code in LM_RC, its JSON document checked.
json_of() {
  local out=$1; shift
  set +e
  "$@" >"$out" 2>"$out.err"
  LM_RC=$?
  set -e
  jq -e . "$out" >/dev/null || fail "$* printed no JSON document: $(cat "$out" "$out.err")"
}

# A long-running workload in the guest's Homebrew directory, which says what it was started with.
install_workload() { # VM
  local f; f="$(vm_dir "$1")/opt/homebrew/bin/llama-server"
  printf '#!/bin/sh\necho "started args=$*"\nexec sleep 600\n' >"$f"
  chmod 755 "$f"
}
agent_log() { echo "$(guest_home vm1)/Library/Logs/lume-metal/$LABEL.out.log"; }
agent_plist() { echo "$(guest_home vm1)/Library/LaunchAgents/$LABEL.plist"; }
plist_args() { plistutil -i "$(agent_plist)" -o - -f xml 2>/dev/null || plistutil -i "$(agent_plist)" -o -; }
# The pid launchd (the stand-in) has for the label, "" when it runs nothing.
agent_pid() { sed -n 's/^pid //p' "$(vm_dir vm1)/launchd/$LABEL" 2>/dev/null | grep -v '^0$' || true; }
# The guest's launchctl calls since the log was last cleared, one per line.
launchctl_calls() { grep -E '^launchctl ' "$(vm_dir vm1)/calls.log" || true; }

# agent_is_installed PORT: the agent of the workload with --port PORT is the one launchd runs,
# `agent list` and the journal show, and nothing but its plist is left in LaunchAgents.
agent_is_installed() {
  lm_json "$E2E_DIR/l.json" agent list vm1
  jq_is "$E2E_DIR/l.json" '.vms[0].agents[0].state' running
  jq -r '.vms.vm1.agents[0].argv | join(" ")' "$LUME_METAL_STATE_DIR/state.json" | grep -qx -- "--port $1" ||
    fail "journal: $(jq -c .vms.vm1.agents "$LUME_METAL_STATE_DIR/state.json")"
  [ -z "$(ls -A "$(guest_home vm1)/Library/LaunchAgents" | grep -v "^$LABEL.plist$")" ] ||
    fail "left in LaunchAgents: $(ls -A "$(guest_home vm1)/Library/LaunchAgents")"
}

# An enabled VM running agent v1 (`--port 8080`), launchd keeping a booted-out label for DRAIN s.
agent_setup() { # DRAIN
  GUEST_SSHD_LAUNCHD_DRAIN=$1 sim_start --vm vm1
  lm_json "$E2E_DIR/e.json" enable vm1
  expect_rc 0 "$E2E_DIR/e.json"
  install_workload vm1
  lm_json_first "$E2E_DIR/i1.json" agent install vm1 --label $LABEL -- llama-server --port 8080
  expect_rc 0 "$E2E_DIR/i1.json"
  wait_for 15 "agent v1 to start" grep -q "started args=--port 8080" "$(agent_log)"
  [ "$(cat "$(vm_dir vm1)/launchd_drain")" = "$1" ] || fail "the guest's launchd drain is not $1 s"
  : >"$(vm_dir vm1)/calls.log"
}

# Item 1: a re-install over a running agent while launchd takes 2 s to let go of the label: the
# install waits for it (print until 113) and the new workload replaces the old one.
scenario_agent_slow_bootout() {
  agent_setup 2
  local old; old=$(agent_pid)
  [ -n "$old" ] || fail "agent v1 is not running"
  lm_json_first "$E2E_DIR/i2.json" agent install vm1 --label $LABEL -- llama-server --port 9090
  expect_rc 0 "$E2E_DIR/i2.json"
  wait_for 15 "agent v2 to start" grep -q "started args=--port 9090" "$(agent_log)"
  local new; new=$(agent_pid)
  [ -n "$new" ] && [ "$new" != "$old" ] || fail "agent v2 does not run (pid '$new', v1 had $old)"
  plist_args | grep -q "<string>9090</string>" || fail "the plist is not v2's: $(plist_args)"
  # launchd was asked until it let go, and the bootstrap came after that.
  local calls; calls=$(launchctl_calls)
  grep -qx "launchctl bootout gui/501/$LABEL" <<<"$calls" || fail "no bootout: $calls"
  [ "$(sed -n "/^launchctl bootout/,/^launchctl bootstrap/p" <<<"$calls" | grep -c "^launchctl print")" -ge 2 ] ||
    fail "the install did not wait for launchd to let go of the label: $calls"
  agent_is_installed 9090
  check_guest_shells
}

# Item 1: launchd holds the label for longer (6 s) than the install waits (3 s, the test hook):
# the install fails saying so, and the previous agent is back -- its plist, loaded and running --
# with its journal entry; nothing is left behind.
scenario_agent_bootout_past_bound() {
  agent_setup 6
  json_of "$E2E_DIR/i2.json" env LUME_METAL_TEST_LAUNCHD_WAIT=3 "$LM_BIN_HOOKS" --format json agent install vm1 \
    --label $LABEL -- llama-server --port 9090
  expect_rc 1 "$E2E_DIR/i2.json"
  local msg; msg=$(jq -r '.vms[0].message' "$E2E_DIR/i2.json")
  grep -q "launchd still holds $LABEL" <<<"$msg" || fail "the message does not say launchd held the label: $msg"
  grep -q "the previous agent $LABEL is back as it was (running)" <<<"$msg" || fail "previous agent not back: $msg"
  plist_args | grep -q "<string>8080</string>" || fail "the plist is not v1's: $(plist_args)"
  [ -n "$(agent_pid)" ] || fail "agent v1 is not running again"
  wait_for 15 "agent v1 to start again" lines_at_least "$(agent_log)" "started args=--port 8080" 2
  ! grep -q "started args=--port 9090" "$(agent_log)" || fail "v2 ran"
  agent_is_installed 8080
  check_guest_shells
}

# Item 2: the CI runner's end of job. lume-metal runs inside a job whose processes carry the
# runner's tracking variables and starts a stopped VM; the job ends and, like the GitHub runner
# ("Cleaning up orphan processes") and Jenkins' ProcessTreeKiller, every process that carries them
# is killed. The VM's owner (`tart run`, the detached `lume run`) did not carry them: it runs on.
# Unique to this run: the scenarios of other tests run at the same time.
JOB_VARS=(RUNNER_TRACKING_ID="github_job_$$_${RANDOM}" JENKINS_NODE_COOKIE="jenkins_$$_${RANDOM}" BUILD_ID="$$${RANDOM}")
reap_job() { # the PIDs and commands of the processes it killed, one per line
  local p e v
  for p in /proc/[0-9]*; do
    e=$( (tr '\0' '\n' <"$p/environ") 2>/dev/null) || continue
    for v in "${JOB_VARS[@]}"; do
      if grep -qxF "$v" <<<"$e"; then
        echo "${p#/proc/} $(tr '\0' ' ' <"$p/cmdline" 2>/dev/null)"
        kill -KILL "${p#/proc/}" 2>/dev/null || true
        break
      fi
    done
  done
}
ci_reaper() { # MANAGER
  local bin state
  case "$1" in
  tart) sim_start --tart-vm vm1 --tart-home "$E2E_DIR/tart-home"; export TART_HOME="$E2E_DIR/tart-home" ;;
  lume-cli) sim_start --vm vm1 ;;
  esac
  bin=$(jq -r .bin_dir "$E2E_DIR/sim.json")
  export PATH="$bin:$PATH"
  json_of "$E2E_DIR/e.json" env "${JOB_VARS[@]}" "$LM_BIN" --vm-manager "$1" --lume "$bin/lume" --timeout 120 \
    enable vm1 --format json
  expect_rc 0 "$E2E_DIR/e.json"
  jq_is "$E2E_DIR/e.json" '.vms[0].started' true
  local reaped; reaped=$(reap_job)
  [ -z "$reaped" ] || fail "the job's end killed processes lume-metal left running: $reaped"
  case "$1" in
  tart) state=$("$bin/tart" get vm1 --format json | jq -r .State) ;;
  lume-cli) state=$(vm_status vm1) ;;
  esac
  [ "$state" = running ] || fail "vm1 is $state after the job ended"
  port22_open "$(vm_field vm1 address)" || fail "vm1's guest is down after the job ended"
  # And lume-metal still knows it as enabled: the next job confirms it without a start.
  lm_json "$E2E_DIR/e2.json" --vm-manager "$1" --lume "$bin/lume" enable vm1
  expect_rc 0 "$E2E_DIR/e2.json"
  jq_is "$E2E_DIR/e2.json" '.vms[0].started' false
  check_guest_shells
}
scenario_ci_reaper_tart() { ci_reaper tart; }
scenario_ci_reaper_lume_cli() { ci_reaper lume-cli; }

# Item 5: the guest's address unreachable, as macOS 15's Local Network privacy makes it for a
# program it has not allowed (connect fails at once with EHOSTUNREACH, Apple TN3179): lume-metal
# runs in a network namespace of its own where the guests' /24 has an `unreachable` route (a real
# EHOSTUNREACH from the kernel, no hook). The readiness wait says what the connect answered, not
# that the boot is slow, and doctor names the permission and what to do. A refused address (no
# namespace: an address of the test's /24 where nothing listens) is said to be refused.
unreachable() { # COMMAND...: run in a network namespace where the guests' /24 is unreachable
  unshare -n bash -c 'ip link set lo up && ip route del local 127.0.0.0/8 dev lo table local &&
    ip route add unreachable "$0" && exec "$@"' \
    "${GUEST_ADDRESS_BASE%.*}.0/24" "$@"
}
scenario_local_network() {
  sim_start --vm vm1
  vm_run vm1
  local addr; addr=$(vm_field vm1 address)
  json_of "$E2E_DIR/e.json" unreachable "$LM_BIN" --vm-manager none --address "$addr" --timeout 3 enable vm1 --format json
  expect_rc 1 "$E2E_DIR/e.json"
  local msg; msg=$(jq -r '.vms[0].message' "$E2E_DIR/e.json")
  grep -q "SSH at $addr (port 22): no route to host (EHOSTUNREACH)" <<<"$msg" || fail "not said unreachable: $msg"
  grep -q "Local Network privacy" <<<"$msg" || fail "Local Network privacy not named: $msg"
  ! grep -q "not reachable yet" <<<"$msg" || fail "said as a slow boot: $msg"
  json_of "$E2E_DIR/d.json" unreachable "$LM_BIN" --vm-manager none --address "$addr" doctor vm1 --format json
  expect_rc 1 "$E2E_DIR/d.json"
  jq_is "$E2E_DIR/d.json" '[.checks[] | select(.check == "local-network")][0].level' fail
  jq -r '.checks[] | select(.check == "local-network") | .message + " / " + .hint' "$E2E_DIR/d.json" |
    grep -q "EHOSTUNREACH.*Local Network privacy.* / .*System Settings > Privacy & Security > Local Network" ||
    fail "doctor: $(jq -c .checks "$E2E_DIR/d.json")"
  unreachable "$LM_BIN" --vm-manager none --address "$addr" doctor vm1 >"$E2E_DIR/d.txt" 2>&1 || true
  grep -q "Local Network" "$E2E_DIR/d.txt" || fail "doctor's text: $(cat "$E2E_DIR/d.txt")"

  note "a refused address is said to be refused"
  lm_json "$E2E_DIR/r.json" --vm-manager none --address "$(lm_test_address 250)" --timeout 3 enable vm1
  expect_rc 1 "$E2E_DIR/r.json"
  jq -r '.vms[0].message' "$E2E_DIR/r.json" | grep -q "connection refused (ECONNREFUSED)" ||
    fail "not said refused: $(jq -r '.vms[0].message' "$E2E_DIR/r.json")"
  # The same guest, reachable: doctor finds it so.
  lm_json "$E2E_DIR/ok.json" --vm-manager none --address "$addr" doctor vm1
  jq_is "$E2E_DIR/ok.json" '[.checks[] | select(.check == "reachable")][0].level' ok
  check_guest_shells
}

# Item 5, the readiness wait: a Tart VM that runs (`tart run` holds it, `tart ip` has its address)
# while its guest's port 22 refuses: enable waits for it and then says what the connect answered.
scenario_ready_refused() {
  export TART_HOME="$E2E_DIR/tart-home"
  sim_start --tart-vm vm1 --tart-home "$TART_HOME"
  local bin; bin=$(jq -r .bin_dir "$E2E_DIR/sim.json")
  export PATH="$bin:$PATH"
  # The preference first: the VM then starts at the unlocked level and needs no restart.
  lm host enable >/dev/null
  setsid "$bin/tart" run --no-graphics vm1 >>"$E2E_DIR/tart-run.log" 2>&1 </dev/null &
  "$bin/tart" ip vm1 --wait 60 >/dev/null || fail "tart ip: no address: $(cat "$E2E_DIR/tart-run.log")"
  "$GUEST_SSHD" stop --dir "$(vm_dir vm1)"
  lm_json "$E2E_DIR/e.json" --vm-manager tart --timeout 3 enable vm1
  expect_rc 1 "$E2E_DIR/e.json"
  local msg; msg=$(jq -r '.vms[0].message' "$E2E_DIR/e.json")
  grep -q "not ready after 3 s: running at $(vm_field vm1 address), SSH (port 22): connection refused (ECONNREFUSED)" \
    <<<"$msg" || fail "the wait did not say what the connect answered: $msg"
  "$bin/tart" stop vm1 >/dev/null 2>&1 || true
}

"scenario_$1"
