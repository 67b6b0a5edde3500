#!/usr/bin/env bash
# End-to-end scenarios for the shim's children decided at each spawn (issue 34), on zsh guests, SIP
# off and on: spawn.sh NAME. The fixtures (tests/guest/drivers): framework-stub, which re-executes
# its real program in place as CPython's framework bin/python3.x does; metal-server with a worker
# shipped beside it, as Ollama's llama-server; spawn-calls, starting one program through one exec
# or spawn call; protected-tool in the guest's /usr/libexec, whose simulated dyld terminates it
# when it inherits the (arm64-only) shim on a SIP-off guest; an arm64e tool outside the system
# folders (guest-sshd arm64e-tool), which the loader stand-in terminates the same way. See
# docs/testing.md.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
: "${LM_METAL_SERVER:?LM_METAL_SERVER: the metal-server fixture}"
: "${LM_SPAWN_FIXTURES:?LM_SPAWN_FIXTURES: the directory of framework-stub, spawn-calls and protected-tool}"

FW=/opt/homebrew/Frameworks/Python.framework/Versions/3.13

# An enabled vm1 with the fixtures installed where such programs live.
setup() {
  export GUEST_SSHD_SIP=$1
  sim_start --vm vm1
  lm_json "$E2E_DIR/e.json" enable vm1
  expect_rc 0 "$E2E_DIR/e.json"
  local d; d=$(vm_dir vm1)
  install -m 755 "$LM_METAL_SERVER" "$d/opt/homebrew/bin/metal-server"
  install -m 755 "$LM_METAL_SERVER" "$d/opt/homebrew/bin/metal-worker"
  install -m 755 "$LM_SPAWN_FIXTURES/spawn-calls" "$d/opt/homebrew/bin/spawn-calls"
  install -D -m 755 "$LM_SPAWN_FIXTURES/framework-stub" "$d$FW/bin/python3.13"
  install -D -m 755 "$LM_METAL_SERVER" "$d$FW/Resources/Python.app/Contents/MacOS/Python"
  install -m 755 "$LM_SPAWN_FIXTURES/protected-tool" "$d/usr-libexec/protected-tool"
}

rc_is() { [ "$RUN_RC" -eq "$2" ] || fail "$1: exit $RUN_RC, expected $2: $(cat "$E2E_DIR/$1.out" "$E2E_DIR/$1.err")"; }
# The JSON run's raw activation records, one per line.
records() { jq -c '.activation.records[].record' "$1"; }

# The exec-in-place stub: one pid, whose record is the final image's, with the widened answers.
exec_in_place() {
  lm_json_first "$E2E_DIR/stub.json" run vm1 --require-shim -- "$FW/bin/python3.13" --runner
  expect_rc 0 "$E2E_DIR/stub.json"
  jq_is "$E2E_DIR/stub.json" '.stdout' 'runner: apple7=1 apple9=1'
  jq -e --arg exe "$FW/Resources/Python.app/Contents/MacOS/Python" '[.activation.records[].record] | length == 1
    and (.[0] | .exe == $exe and .format == "lume-metal-activation/1.1" and .forked == false
      and ([.questions[] | select(.family == 1009)] == [{"device_class": 0, "family": 1009, "stock": false, "given": true}]))' \
    "$E2E_DIR/stub.json" >/dev/null || fail "the final image's record: $(records "$E2E_DIR/stub.json")"
}

# The server and its worker: the worker's own record shows the unlock; the server's says what the
# worker was given.
server_worker() {
  local why=$1
  lm_json_first "$E2E_DIR/sw.json" run vm1 -- metal-server --worker /opt/homebrew/bin/metal-worker
  expect_rc 0 "$E2E_DIR/sw.json"
  jq_is "$E2E_DIR/sw.json" '.stdout' "$(printf '%s\n' 'runner: apple7=1 apple9=1' 'server: runner exited 0')"
  jq -e --arg why "$why" '[.activation.records[].record] as $r
    | ($r | map(select(.exe == "/opt/homebrew/bin/metal-server"))) as $s
    | ($r | map(select(.exe == "/opt/homebrew/bin/metal-worker"))) as $w
    | ($s | length) == 1 and ($w | length) == 1 and $w[0].ppid == $s[0].pid
    and ([$w[0].questions[] | select(.family == 1007 or .family == 1009) | .given] == [true, true])
    and ($s[0].spawns == [{"call": "posix_spawn", "path": "/opt/homebrew/bin/metal-worker",
      "resolved": "/opt/homebrew/bin/metal-worker", "interpreter": null, "protected": false, "shim": "kept",
      "why": $why, "pid": $w[0].pid, "error": null}])' "$E2E_DIR/sw.json" >/dev/null ||
    fail "the server's and the worker's records: $(records "$E2E_DIR/sw.json")"
}

# A protected child of a shimmed program: what dyld (simulated) sees, and what the record says.
protected_child() { # SHIM WHY
  lm_json_first "$E2E_DIR/pc.json" run vm1 -- spawn-calls posix_spawn /usr/libexec/protected-tool
  expect_rc 0 "$E2E_DIR/pc.json"
  jq_is "$E2E_DIR/pc.json" '.stdout' "$(printf '%s\n' 'protected-tool: LD_PRELOAD unset' 'spawn-calls: exit 0')"
  jq -e '.stderr | contains("dyld[") | not' "$E2E_DIR/pc.json" >/dev/null || fail "dyld spoke: $(jq -r .stderr "$E2E_DIR/pc.json")"
  jq -e --arg shim "$1" --arg why "$2" '[.activation.records[].record] | length == 1
    and (.[0].spawns | length == 1 and .[0].path == "/usr/libexec/protected-tool" and .[0].protected
      and .[0].shim == $shim and .[0].why == $why and .[0].error == null)' "$E2E_DIR/pc.json" >/dev/null ||
    fail "the parent's record: $(records "$E2E_DIR/pc.json")"
}

scenario_spawn_sip_off_exec_in_place() {
  setup disabled
  exec_in_place
  check_guest_shells
}

scenario_spawn_sip_on_exec_in_place() {
  setup enabled
  exec_in_place
  jq -e '.activation.records[0].record.children.why == "decided at each spawn: guest SIP enabled, so every child keeps the shim (protected programs ignore it)"' \
    "$E2E_DIR/stub.json" >/dev/null || fail "children: $(records "$E2E_DIR/stub.json")"
  check_guest_shells
}

scenario_spawn_sip_off_server_worker() {
  setup disabled
  server_worker "not a protected program"

  note "a hardened worker under a plain server: the loader ignores the shim there, as dyld does"
  local bin; bin="$(vm_dir vm1)/opt/homebrew/bin"
  install -m 755 "$LM_METAL_SERVER" "$bin/hardened-worker"
  install -m 755 "$LM_METAL_SERVER" "$bin/lv-worker"
  "$GUEST_SSHD" sign --options runtime --team ABCDE12345 "$bin/hardened-worker"
  "$GUEST_SSHD" sign --options runtime --team ABCDE12345 \
    --entitlement com.apple.security.cs.allow-dyld-environment-variables "$bin/lv-worker"
  lm_json_first "$E2E_DIR/hw.json" run vm1 -- metal-server --worker /opt/homebrew/bin/hardened-worker
  expect_rc 0 "$E2E_DIR/hw.json"
  jq_is "$E2E_DIR/hw.json" '.stdout' "$(printf '%s\n' 'runner: apple7=0 apple9=0' 'server: runner exited 0')"
  # The server's record names the worker it gave the shim to; the worker wrote none.
  jq -e '[.activation.records[].record] | length == 1 and (.[0].spawns[0] | .path == "/opt/homebrew/bin/hardened-worker"
    and .shim == "kept" and (.pid | type == "number"))' "$E2E_DIR/hw.json" >/dev/null ||
    fail "the hardened worker's run: $(records "$E2E_DIR/hw.json")"

  note "library validation refuses the shim in a worker with the dyld entitlement only, with dyld's warning"
  lm_json_first "$E2E_DIR/lv.json" run vm1 -- metal-server --worker /opt/homebrew/bin/lv-worker
  expect_rc 0 "$E2E_DIR/lv.json"
  jq_is "$E2E_DIR/lv.json" '.stdout' "$(printf '%s\n' 'runner: apple7=0 apple9=0' 'server: runner exited 0')"
  jq -e '.stderr | test("dyld\\[[0-9]+\\]: warning: could not load inserted library .*liblume-metal-shim.so. into hardened process because code signature in <.*> not valid for use in process using Library Validation: mapped file has no Team ID and is not a platform binary")' \
    "$E2E_DIR/lv.json" >/dev/null || fail "no library validation warning: $(jq -r .stderr "$E2E_DIR/lv.json")"
  jq_is "$E2E_DIR/lv.json" '.activation.records | length' 1
  check_guest_shells
}

scenario_spawn_sip_on_server_worker() {
  setup enabled
  server_worker "not a protected program"
  check_guest_shells
}

# SIP off: the protected child starts without the shim and lives; a shell's children are decided
# one by one; forced with LUME_METAL_INHERIT=1, the child inherits the shim and dyld terminates it
# (so the rule is what keeps it alive).
scenario_spawn_sip_off_protected_child() {
  setup disabled
  protected_child removed "protected program on a SIP-off guest and the shim has no arm64e slice"

  note "a shell: its protected child and its Homebrew child, each decided at its own exec"
  mkdir -p "$(guest_home vm1)/venv/bin"
  cp "$(readlink -f /bin/sh)" "$(guest_home vm1)/venv/bin/sh"
  chown -R --reference="$(guest_home vm1)" "$(guest_home vm1)/venv"
  run_capture sh vm1 -- venv/bin/sh -c '/usr/libexec/protected-tool; metal-worker --runner'
  rc_is sh 0
  out_is sh "$(printf '%s\n' 'protected-tool: LD_PRELOAD unset' 'runner: apple7=1 apple9=1')"
  ! grep -q 'dyld\[' "$E2E_DIR/sh.err" || fail "dyld spoke: $(cat "$E2E_DIR/sh.err")"

  note "forced on: the protected child inherits an arm64-only shim, and dyld terminates it"
  lm_json_first "$E2E_DIR/forced.json" run vm1 -- LUME_METAL_INHERIT=1 spawn-calls posix_spawn /usr/libexec/protected-tool
  jq_is "$E2E_DIR/forced.json" '.stdout' 'spawn-calls: exit 134'
  jq -e '.stderr | test("dyld\\[[0-9]+\\]: terminating because inserted dylib .*liblume-metal-shim.so. could not be loaded")' \
    "$E2E_DIR/forced.json" >/dev/null || fail "no termination: $(jq -r .stderr "$E2E_DIR/forced.json")"
  jq -e '.activation.records[0].record.spawns[0] | .shim == "kept" and .why == "LUME_METAL_INHERIT=1"' \
    "$E2E_DIR/forced.json" >/dev/null || fail "the forced record: $(records "$E2E_DIR/forced.json")"
  check_guest_shells
}

# An arm64e tool outside the system folders (Xcode's clang, which build systems call by full path;
# issue 48), made by guest-sshd arm64e-tool: its Mach-O header, not its folder, says it cannot take
# the arm64-only shim, so a shimmed parent's execvp starts it without the shim, and it lives.
# Forced on, it inherits the shim and the loader stand-in terminates it, as dyld does.
scenario_spawn_sip_off_arm64e_tool() {
  setup disabled
  local home rel=Applications/Xcode.app/Contents/Developer/Toolchains/XcodeDefault.xctoolchain/usr/bin
  home=$(guest_home vm1)
  mkdir -p "$home/$rel"
  "$GUEST_SSHD" arm64e-tool "$home/$rel/clang"
  chown -R --reference="$home" "$home/Applications"
  local clang=/Users/lume/$rel/clang
  lm_json_first "$E2E_DIR/a64.json" run vm1 -- spawn-calls execvp "$clang"
  expect_rc 0 "$E2E_DIR/a64.json"
  jq_is "$E2E_DIR/a64.json" '.stdout' 'arm64e-tool: LD_PRELOAD unset'
  jq -e '.stderr | contains("dyld[") | not' "$E2E_DIR/a64.json" >/dev/null || fail "dyld spoke: $(jq -r .stderr "$E2E_DIR/a64.json")"
  jq -e --arg p "$clang" '[.activation.records[].record] | length == 1
    and (.[0].spawns | length == 1 and .[0].path == $p and (.[0].protected | not) and .[0].shim == "removed"
      and .[0].why == "arm64e program (its Mach-O header) on a SIP-off guest and the shim has no arm64e slice")' \
    "$E2E_DIR/a64.json" >/dev/null || fail "the parent's record: $(records "$E2E_DIR/a64.json")"

  note "forced on: the arm64e tool inherits an arm64-only shim, and the loader stand-in terminates it"
  lm_json_first "$E2E_DIR/a64f.json" run vm1 -- LUME_METAL_INHERIT=1 spawn-calls execvp "$clang"
  jq_is "$E2E_DIR/a64f.json" '.stdout' ''
  jq -e '.stderr | test("dyld\\[[0-9]+\\]: terminating because inserted dylib .*liblume-metal-shim.so. could not be loaded")' \
    "$E2E_DIR/a64f.json" >/dev/null || fail "no termination: $(jq -r .stderr "$E2E_DIR/a64f.json")"

  note "run as the workload itself: the host warns from the same header"
  run_capture direct vm1 -- "$clang"
  grep -qF "warning: vm1: $clang ($clang) is arm64e only (its Mach-O header) and the guest's SIP is disabled: dyld loads the shim into it, and the installed shim has no arm64e slice, so dyld cannot load it and stops the program" \
    "$E2E_DIR/direct.err" || fail "no warning: $(cat "$E2E_DIR/direct.err")"
  check_guest_shells
}

# SIP on: the protected child keeps the shim in its environment and purges it itself.
scenario_spawn_sip_on_protected_child() {
  setup enabled
  protected_child kept "protected program on a SIP-on guest: it purges the variable itself"
  check_guest_shells
}

[ $# -eq 1 ] && declare -F "scenario_$1" >/dev/null || { echo "usage: $0 SCENARIO" >&2; exit 2; }
"scenario_$1"
