#!/usr/bin/env bash
# End-to-end scenarios about the guests as Cua's macOS images are (zsh, sshd's default PATH,
# Homebrew's directories) and about the restart rule: guests.sh NAME. See docs/testing.md.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

# ---------------------------------------------------------------------------------------------
# `run` finds Homebrew's programs; a plain session does not (sshd's default PATH, no profile).

# guest_program DIR NAME TEXT: an executable NAME in the guest's DIR that prints TEXT and its arguments.
guest_program() {
  printf '#!/bin/sh\necho "%s $*"\n' "$3" >"$1/$2"
  chmod 755 "$1/$2"
}

scenario_homebrew_path() {
  sim_start --vm vm1
  lm_json "$E2E_DIR/e.json" enable vm1
  expect_rc 0 "$E2E_DIR/e.json"
  local vmdir; vmdir=$(vm_dir vm1)
  guest_program "$vmdir/opt/homebrew/bin" llama-bench "llama-bench from /opt/homebrew/bin:"
  guest_program "$vmdir/usr-local-bin" intel-tool "intel-tool from /usr/local/bin:"
  guest_program "$vmdir/opt/homebrew/bin" both "/opt/homebrew/bin comes first:"
  guest_program "$vmdir/usr-local-bin" both "/usr/local/bin came first:"
  guest_program "$vmdir/opt/homebrew/bin" metal-capabilities "Homebrew came before the bundle:"

  # The guest is what Cua's images are: zsh, sshd's default PATH, NOMATCH.
  [ -n "$(plain_ssh vm1 'echo $ZSH_VERSION')" ] || fail "the guest's login shell is not zsh"
  [ "$(plain_ssh vm1 'echo $PATH')" = "$vmdir/standins:/usr/bin:/bin:/usr/sbin:/sbin" ] ||
    fail "plain session PATH: $(plain_ssh vm1 'echo $PATH')"
  if plain_ssh vm1 'echo /nonexistent-dir-*' >/dev/null 2>&1; then fail "the guest's zsh has no NOMATCH"; fi

  # A plain session does not find them by name...
  if out=$(plain_ssh vm1 'command -v llama-bench' 2>&1); then fail "a plain session found llama-bench: $out"; fi
  if out=$(plain_ssh vm1 'command -v intel-tool' 2>&1); then fail "a plain session found intel-tool: $out"; fi
  # ...run does, Apple silicon's directory before Intel's, the bundle's tools before both.
  out=$(lm run vm1 -- llama-bench -m 'model file.gguf' -p 512)
  [ "$out" = "llama-bench from /opt/homebrew/bin: -m model file.gguf -p 512" ] || fail "run llama-bench: $out"
  out=$(lm run vm1 -- intel-tool x)
  [ "$out" = "intel-tool from /usr/local/bin: x" ] || fail "run intel-tool: $out"
  out=$(lm run vm1 -- both y)
  [ "$out" = "/opt/homebrew/bin comes first: y" ] || fail "run both: $out"
  out=$(lm run vm1 -- metal-capabilities 1009)
  echo "$out" | grep -qx 'supports_family=true' || fail "run metal-capabilities did not run the bundle's: $out"
  # The session's PATH still follows: the stand-ins are found.
  out=$(lm run vm1 -- sw_vers -productVersion)
  [ "$out" = 26.5.2 ] || fail "run sw_vers: $out"
}

# ---------------------------------------------------------------------------------------------
# A login shell that talks (issue 49, 9): a ~/.zshenv that prints a greeting on both streams, as
# many users' dotfiles do. zsh reads ~/.zshenv for every `zsh -c` sshd runs (zsh(1), STARTUP/SHUTDOWN
# FILES), so its lines come before each command's answer. lume-metal reads its answers after a
# line of its own (host/lib/ssh/exec.c); enable, status, doctor and rollback go on as with a quiet
# shell, and the greeting reaches no error message.
scenario_chatty_login_shell() {
  sim_start --vm vm1
  vm_run vm1 # the guest's home exists once it has booted
  printf 'echo "Welcome to the lab Mac"\necho "Last backup: today" >&2\n' >"$(guest_home vm1)/.zshenv"
  [ "$(plain_ssh vm1 'echo answer' 2>/dev/null)" = "$(printf 'Welcome to the lab Mac\nanswer')" ] ||
    fail "the guest's zsh did not read ~/.zshenv: $(plain_ssh vm1 'echo answer' 2>&1)"

  lm_json "$E2E_DIR/e.json" enable vm1
  expect_rc 0 "$E2E_DIR/e.json"
  jq_is "$E2E_DIR/e.json" '.vms[0].guest.os' "$(uname -s)" # the simulator's guests are this machine's OS
  jq_is "$E2E_DIR/e.json" '.vms[0].shimmed.families.Apple9' true
  lm_json "$E2E_DIR/s.json" status vm1
  expect_rc 0 "$E2E_DIR/s.json"
  jq_is "$E2E_DIR/s.json" '.vms[0].bundle_verified' true
  lm_json "$E2E_DIR/d.json" doctor vm1
  expect_rc 0 "$E2E_DIR/d.json"
  ! grep -q "Welcome\|Last backup" "$E2E_DIR/e.json.err" "$E2E_DIR/s.json.err" "$E2E_DIR/d.json.err" ||
    fail "the greeting reached lume-metal's messages: $(cat "$E2E_DIR"/*.err)"
  lm_json "$E2E_DIR/r.json" rollback vm1
  expect_rc 0 "$E2E_DIR/r.json"
  jq_is "$E2E_DIR/r.json" '.ok' true
}

# ---------------------------------------------------------------------------------------------
# The restart rule (docs/lume-metal.md, "When a VM is restarted"): one row per scenario.

# The preference changed at C (lume-metal host enable), vm1 started by someone else (the API)
# and its guest kernel said to have booted at C + OFFSET. status and enable must agree.
# restart_row OFFSET RESTART(true|false) [lume-metal options...]
restart_row() {
  local offset=$1 expect=$2; shift 2
  sim_start --vm vm1
  lm_json "$E2E_DIR/h.json" host enable
  expect_rc 0 "$E2E_DIR/h.json"
  local changed boot
  changed=$(jq -r .host_preference.changed_at "$E2E_DIR/h.json")
  vm_run vm1
  boot=$(awk -v c="$changed" -v o="$offset" 'BEGIN { printf "%.6f", c + o }')
  "$GUEST_SSHD" boot-time --dir "$(vm_dir vm1)" "$boot"

  lm_json "$E2E_DIR/s.json" status vm1 "$@"
  expect_rc 0 "$E2E_DIR/s.json"
  jq -e --argjson b "$boot" '(.vms[0].guest.boot_time - $b) | fabs < 0.000002' "$E2E_DIR/s.json" >/dev/null ||
    fail "boot time not read to the microsecond: $(jq .vms[0].guest "$E2E_DIR/s.json"), expected $boot"
  jq_is "$E2E_DIR/s.json" '.vms[0].restart_pending' "$expect"

  local from; from=$(log_lines)
  lm_json "$E2E_DIR/e.json" enable vm1 "$@"
  expect_rc 0 "$E2E_DIR/e.json"
  jq_is "$E2E_DIR/e.json" '.vms[0].restarted' "$expect"
  jq_is "$E2E_DIR/e.json" '.vms[0].shimmed.families.Apple9' true
  [ "$(count_requests POST /stop "$from")" -eq "$([ "$expect" = true ] && echo 1 || echo 0)" ] ||
    fail "stops sent: $(count_requests POST /stop "$from")"
  # Either way nothing is pending afterwards: restarted by lume-metal, or known to be new.
  lm_json "$E2E_DIR/s2.json" status vm1 "$@"
  jq_is "$E2E_DIR/s2.json" '.vms[0].restart_pending' false
}

scenario_restart_boot_0_5_before() { restart_row -0.5 true; }
scenario_restart_boot_1_2_before() { restart_row -1.2 true; }
scenario_restart_boot_2_5_before() { restart_row -2.5 true; }
scenario_restart_boot_5_after() { restart_row 5 true; }      # inside the 30 s margin
# Booted after the change, past the margin: Lume's server does not show the VM's process, and a
# guest reboot in a process that started before the change boots just as late (issue 48, item
# 3): unsure, restarted. These two were "keep" rows before a guest reboot was told from a restart.
scenario_restart_boot_40_after() { restart_row 40 true; }
scenario_restart_boot_5_after_margin_2() { restart_row 5 true --boot-margin 2; }

# lume-metal started the VM after the change: left alone even though its kernel booted within
# the margin, because the journal says who started it and when.
scenario_keep_tool_started() {
  sim_start --vm vm1
  lm_json "$E2E_DIR/h.json" host enable
  expect_rc 0 "$E2E_DIR/h.json"
  local changed; changed=$(jq -r .host_preference.changed_at "$E2E_DIR/h.json")
  lm_json "$E2E_DIR/e1.json" enable vm1
  expect_rc 0 "$E2E_DIR/e1.json"
  jq_is "$E2E_DIR/e1.json" '.vms[0].started' true
  jq -e --argjson c "$changed" '.vms.vm1.vm_started_at > $c' "$LUME_METAL_STATE_DIR/state.json" >/dev/null ||
    fail "the start is not recorded after the change: $(jq .vms.vm1 "$LUME_METAL_STATE_DIR/state.json")"
  "$GUEST_SSHD" boot-time --dir "$(vm_dir vm1)" "$(awk -v c="$changed" 'BEGIN { printf "%.6f", c + 5 }')"
  lm_json "$E2E_DIR/s.json" status vm1
  jq_is "$E2E_DIR/s.json" '.vms[0].restart_pending' false
  local from; from=$(log_lines)
  lm_json "$E2E_DIR/e2.json" enable vm1
  expect_rc 0 "$E2E_DIR/e2.json"
  jq_is "$E2E_DIR/e2.json" '.vms[0].restarted' false
  [ "$(count_requests POST /stop "$from")" -eq 0 ] || fail "the VM was stopped"
}

name=${1:?usage: guests.sh NAME}
"scenario_$name"
check_guest_shells
echo "e2e $name: passed"
