#!/usr/bin/env bash
# End-to-end scenarios for System Integrity Protection and the shim's children: sip.sh NAME.
# The simulated guest's csrutil answers from GUEST_SSHD_SIP; its /bin and /usr/bin (the machine's)
# stand in for macOS's protected directories (tests/support/guest-sshd). See docs/testing.md.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

# Files in the guest's home, as its account would have them.
guest_file() { # VM PATH-IN-HOME MODE CONTENT
  local f; f="$(guest_home "$1")/$2"
  mkdir -p "$(dirname "$f")"
  printf '%s' "$4" >"$f"
  chmod "$3" "$f"
  chown -R --reference="$(guest_home "$1")" "$(guest_home "$1")"
}


warnings() { grep -c '^warning: ' "$E2E_DIR/$1.err" || true; }

# SIP on: a protected program, a script whose interpreter is protected and a link to a protected
# program are warned about, before anything runs; programs outside the system directories are not.
# Children of a shimmed program start without the shim unless LUME_METAL_INHERIT=1.
scenario_sip_enabled() {
  export GUEST_SSHD_SIP=enabled
  sim_start --vm vm1
  lm_json "$E2E_DIR/e.json" enable vm1
  expect_rc 0 "$E2E_DIR/e.json"

  note "status shows the guest's SIP state"
  lm_json "$E2E_DIR/s.json" status vm1
  jq_is "$E2E_DIR/s.json" '.vms[0].guest.sip' enabled
  lm status vm1 >"$E2E_DIR/s.txt"
  grep -Eq '^  guest .*, SIP enabled$' "$E2E_DIR/s.txt" || fail "status text: $(cat "$E2E_DIR/s.txt")"
  jq -e '.vms.vm1.guest.sip == "enabled"' "$LUME_METAL_STATE_DIR/state.json" >/dev/null ||
    fail "the journal does not record the SIP state: $(jq -c .vms.vm1.guest "$LUME_METAL_STATE_DIR/state.json")"

  note "a protected program found on PATH: warned before it runs, then it runs"
  run_capture sh vm1 -- sh -c 'echo out; echo err >&2; exit 3'
  [ "$RUN_RC" -eq 3 ] || fail "run: exit $RUN_RC, expected 3"
  [ "$(cat "$E2E_DIR/sh.out")" = out ] || fail "run: stdout $(cat "$E2E_DIR/sh.out")"
  head -n 1 "$E2E_DIR/sh.err" | grep -Eq '^warning: vm1: sh is (/usr)?/bin/sh(, a link to /usr/bin/[a-z]+)?, which System Integrity Protection protects \(SIP enabled\): macOS removes DYLD_INSERT_LIBRARIES from protected programs, so the shim cannot reach the workload and it runs stock\. Run it with a program or interpreter outside the system directories \(Homebrew.s /opt/homebrew/bin/python3, a venv.s bin/python\)\.$' ||
    fail "no warning first: $(cat "$E2E_DIR/sh.err")"
  [ "$(sed -n 2p "$E2E_DIR/sh.err")" = err ] || fail "the command's stderr: $(cat "$E2E_DIR/sh.err")"
  [ "$(warnings sh)" -eq 1 ] || fail "one warning expected: $(cat "$E2E_DIR/sh.err")"

  note "leading NAME=VALUE words are env's: the program is the word after them"
  run_capture envsh vm1 -- LUME_METAL_LOG=1 env true
  grep -Eq '^warning: vm1: env is (/usr)?/bin/env, ' "$E2E_DIR/envsh.err" || fail "env: $(cat "$E2E_DIR/envsh.err")"

  note "a script whose #! interpreter is protected"
  guest_file vm1 job.sh 755 $'#!/bin/sh\necho job ran\n'
  run_capture job vm1 -- ./job.sh
  [ "$RUN_RC" -eq 0 ] && grep -qx 'job ran' "$E2E_DIR/job.out" || fail "job.sh: $(cat "$E2E_DIR/job.out" "$E2E_DIR/job.err")"
  grep -qx 'warning: vm1: ./job.sh (./job.sh) is a script run by /bin/sh, which System Integrity Protection protects (SIP enabled): .*' "$E2E_DIR/job.err" ||
    fail "job.sh: $(cat "$E2E_DIR/job.err")"
  guest_file vm1 bin/envjob 755 $'#!  /usr/bin/env sh\necho envjob ran\n'
  run_capture envjob vm1 -- PATH=/Users/lume/bin:/usr/bin:/bin envjob
  grep -qx 'envjob ran' "$E2E_DIR/envjob.out" || fail "envjob: $(cat "$E2E_DIR/envjob.out" "$E2E_DIR/envjob.err")"
  grep -q '^warning: vm1: envjob (/Users/lume/bin/envjob) is a script run by /usr/bin/env, ' "$E2E_DIR/envjob.err" ||
    fail "envjob: $(cat "$E2E_DIR/envjob.err")"

  note "a link in the home to a protected program"
  ln -sfn /bin/sh "$(guest_home vm1)/bin/mysh"
  run_capture link vm1 -- ./bin/mysh -c 'exit 0'
  grep -Eq '^warning: vm1: \./bin/mysh is \./bin/mysh, a link to /usr/bin/[a-z]+, which System Integrity' "$E2E_DIR/link.err" ||
    fail "link: $(cat "$E2E_DIR/link.err")"

  note "outside the system directories: no warning"
  run_capture probe vm1 -- metal-capabilities 1009
  grep -qx 'supports_family=true' "$E2E_DIR/probe.out" || fail "probe: $(cat "$E2E_DIR/probe.out")"
  # After the workload run says which processes loaded the shim ("shim: " lines), nothing else.
  ! grep -qv '^shim: ' "$E2E_DIR/probe.err" || fail "probe: unexpected stderr $(cat "$E2E_DIR/probe.err")"
  # A venv-like interpreter: a copy of a shell in the home.
  mkdir -p "$(guest_home vm1)/venv/bin"
  cp "$(readlink -f /bin/sh)" "$(guest_home vm1)/venv/bin/sh"
  guest_file vm1 venvjob 755 $'#!/Users/lume/venv/bin/sh\necho venv ran\n'
  run_capture venv vm1 -- ./venvjob
  grep -qx 'venv ran' "$E2E_DIR/venv.out" || fail "venvjob: $(cat "$E2E_DIR/venv.out" "$E2E_DIR/venv.err")"
  ! grep -qv '^shim: ' "$E2E_DIR/venv.err" || fail "venvjob: unexpected stderr $(cat "$E2E_DIR/venv.err")"
  run_capture missing vm1 -- no-such-program
  [ "$RUN_RC" -eq 127 ] || fail "missing program: exit $RUN_RC"
  [ "$(warnings missing)" -eq 0 ] || fail "missing program: $(cat "$E2E_DIR/missing.err")"

  note "with SIP on, children of a shimmed program keep the shim (run's default), unless LUME_METAL_INHERIT=0"
  # The venv shell is shimmed (not protected); its children are /usr/bin/env and the probe.
  local child='/usr/bin/env | grep "^LD_PRELOAD=" || echo "LD_PRELOAD unset"; metal-capabilities 1009 | grep supports_family'
  run_capture child vm1 -- venv/bin/sh -c "$child"
  grep -q '^LD_PRELOAD=/Users/lume/.local/share/lume-metal/current/' "$E2E_DIR/child.out" &&
    grep -qx 'supports_family=true' "$E2E_DIR/child.out" ||
    fail "children by default: $(cat "$E2E_DIR/child.out" "$E2E_DIR/child.err")"
  run_capture clean vm1 -- LUME_METAL_INHERIT=0 venv/bin/sh -c "$child"
  [ "$(cat "$E2E_DIR/clean.out")" = $'LD_PRELOAD unset\nsupports_family=false' ] ||
    fail "children with LUME_METAL_INHERIT=0: $(cat "$E2E_DIR/clean.out" "$E2E_DIR/clean.err")"
}

# SIP off (as on Cua's published test image): the warning says dyld stops the program.
scenario_sip_disabled() {
  export GUEST_SSHD_SIP=disabled
  sim_start --vm vm1
  lm_json "$E2E_DIR/e.json" enable vm1
  expect_rc 0 "$E2E_DIR/e.json"
  jq_is "$E2E_DIR/e.json" '.vms[0].guest.sip' disabled
  lm status vm1 | grep -Eq '^  guest .*, SIP disabled$' || fail "status text: $(lm status vm1)"
  run_capture sh vm1 -- sh -c 'exit 0'
  grep -Eq '^warning: vm1: sh is .*, which System Integrity Protection covers \(SIP disabled\): dyld then loads the shim into it, but protected programs are arm64e, and unless the shim has an arm64e slice \(a native macOS build\) dyld cannot load it and stops the program \("inserted dylib could not be loaded"\)\. Run the workload with a program or interpreter outside the system directories' "$E2E_DIR/sh.err" ||
    fail "no warning: $(cat "$E2E_DIR/sh.err")"
}

# A custom SIP configuration is reported as such.
scenario_sip_custom() {
  export GUEST_SSHD_SIP=custom
  sim_start --vm vm1
  lm_json "$E2E_DIR/e.json" enable vm1
  expect_rc 0 "$E2E_DIR/e.json"
  lm_json "$E2E_DIR/s.json" status vm1
  jq_is "$E2E_DIR/s.json" '.vms[0].guest.sip' custom
  run_capture sh vm1 -- sh -c 'exit 0'
  # Which protections a custom configuration keeps is not reported: macOS may purge or stop it.
  grep -q '^warning: vm1: sh is .*(SIP custom: which protections are on is not reported): macOS may purge DYLD_INSERT_LIBRARIES from it, and it runs stock, or load the shim into it and stop it' "$E2E_DIR/sh.err" ||
    fail "no warning: $(cat "$E2E_DIR/sh.err")"
}

[ $# -eq 1 ] && declare -F "scenario_$1" >/dev/null || { echo "usage: $0 sip_enabled|sip_disabled|sip_custom" >&2; exit 2; }
"scenario_$1"
