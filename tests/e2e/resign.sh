#!/usr/bin/env bash
# End-to-end scenarios of issue 34's host side, on zsh guests: resign.sh NAME.
#   - "got the unlock" is an answer widened: a workload that loaded the shim and asked no Metal
#     question fails --require-shim, and doctor is not OK for such an agent;
#   - records at scale and damaged ones: the workload's exit status is kept, the records past the
#     limit counted, a damaged one said and skipped; an agent's record folder pruned to the live
#     processes of this boot;
#   - --resign-copy on an Ollama-shaped fixture: `ollama` (tests/guest/drivers/spawn_sibling.c)
#     starting the `llama-server` beside it (the metal-server fixture), both signed with the
#     hardened runtime (guest-sshd sign: the loader then ignores the shim, as dyld does), in
#     ~/Applications/Ollama.app/Contents/Resources as Ollama ships them.
# See docs/testing.md.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
: "${LM_METAL_SERVER:?LM_METAL_SERVER: the metal-server fixture}" "${LM_SPAWN_SIBLING:?LM_SPAWN_SIBLING: the spawn-sibling fixture}"

RES=/Users/lume/Applications/Ollama.app/Contents/Resources
COPIES=/Users/lume/.local/share/lume-metal/resigned

rc_is() { [ "$RUN_RC" -eq "$2" ] || fail "$1: exit $RUN_RC, expected $2: $(cat "$E2E_DIR/$1.out" "$E2E_DIR/$1.err")"; }
err_has() { grep -qF -- "$2" "$E2E_DIR/$1.err" || fail "$1: no '$2' in: $(cat "$E2E_DIR/$1.err")"; }
err_lacks() { ! grep -qF -- "$2" "$E2E_DIR/$1.err" || fail "$1: '$2' in: $(cat "$E2E_DIR/$1.err")"; }

# An enabled vm1 on a SIP-on guest (the host passes LUME_METAL_INHERIT=1: children keep the shim).
setup() {
  export GUEST_SSHD_SIP=enabled
  sim_start --vm vm1
  lm_json "$E2E_DIR/e.json" enable vm1
  expect_rc 0 "$E2E_DIR/e.json"
}

# The Ollama-shaped fixture, hardened, and a file beside it that is no program (its layout is kept).
ollama_fixture() {
  local res; res="$(guest_home vm1)/Applications/Ollama.app/Contents/Resources"
  mkdir -p "$res/lib"
  install -m 755 "$LM_SPAWN_SIBLING" "$res/ollama"
  install -m 755 "$LM_METAL_SERVER" "$res/llama-server"
  printf 'kernel void k() {}\n' >"$res/lib/ggml-metal.metal"
  "$GUEST_SSHD" sign --options runtime --team ABCDE12345 "$res/ollama"
  "$GUEST_SSHD" sign --options runtime --team ABCDE12345 "$res/llama-server"
}
originals_sha() { (cd "$(guest_home vm1)/Applications" && sha256sum Ollama.app/Contents/Resources/ollama \
  Ollama.app/Contents/Resources/llama-server Ollama.app/Contents/Resources/lib/ggml-metal.metal); }

# Refused without the flag, the sibling named before the run; with --resign-copy both copies run
# with the shim (the worker's answers widened), the originals untouched; the copy is kept while the
# original is the same, made again when it changes, and gone after rollback.
scenario_resign_ollama() {
  setup
  ollama_fixture
  local before; before=$(originals_sha)

  run_capture refused vm1 -- "$RES/ollama" llama-server --runner
  rc_is refused 1
  [ ! -s "$E2E_DIR/refused.out" ] || fail "the hardened program ran: $(cat "$E2E_DIR/refused.out")"
  err_has refused "llama-server ($RES/llama-server), shipped beside $RES/ollama, is signed with the hardened runtime (flags=0x10000(runtime))"
  err_has refused "ollama ($RES/ollama) is signed with the hardened runtime"
  err_has refused "--resign-copy"

  run_capture copy vm1 --verbose --resign-copy -- "$RES/ollama" llama-server --runner
  rc_is copy 0
  out_is copy "$(printf '%s\n' 'runner: apple7=1 apple9=1' 'spawn-sibling: llama-server exited 0')"
  err_has copy "runs a re-signed copy: $COPIES/run-"
  grep -Eq "^shim: pid [0-9]+ $COPIES/run-[0-9a-f]{16}/Ollama.app/Contents/Resources/llama-server: asked Apple7→yes \(stock no\), Apple9→yes \(stock no\)" \
    "$E2E_DIR/copy.err" || fail "the worker's copy: $(cat "$E2E_DIR/copy.err")"
  grep -Eq "^shim: pid [0-9]+ $COPIES/run-[0-9a-f]{16}/Ollama.app/Contents/Resources/ollama: loaded the shim, asked no Metal question" \
    "$E2E_DIR/copy.err" || fail "the server's copy: $(cat "$E2E_DIR/copy.err")"
  err_lacks copy "no answer was widened"
  [ "$(originals_sha)" = "$before" ] || fail "an original changed: $before / $(originals_sha)"
  local dir; dir=$(find "$(guest_home vm1)/.local/share/lume-metal/resigned" -mindepth 1 -maxdepth 1 -name 'run-*')
  [ -f "$dir/Ollama.app/Contents/Resources/lib/ggml-metal.metal" ] || fail "the layout was not kept: $(find "$dir")"
  getcap "$(guest_home vm1)/Applications/Ollama.app/Contents/Resources/ollama" | grep -q cap_net_bind_service ||
    fail "the original lost its signature's model (file capability)"

  note "the same original: the copy is kept; a changed one: made again"
  run_capture again vm1 --verbose --resign-copy --require-shim -- "$RES/ollama" llama-server --runner
  rc_is again 0
  err_has again "runs the re-signed copy $COPIES/run-"
  err_has again "(made before from the same $RES/ollama)"
  lm_json_first "$E2E_DIR/again.json" run vm1 --resign-copy --require-shim -- "$RES/ollama" llama-server --runner
  expect_rc 0 "$E2E_DIR/again.json"
  jq -e --arg c "$COPIES/" '[.activation.records[].exe | startswith($c)] == [true, true]' "$E2E_DIR/again.json" >/dev/null ||
    fail "records: $(jq -c .activation "$E2E_DIR/again.json")"
  printf 'x' >>"$(guest_home vm1)/Applications/Ollama.app/Contents/Resources/ollama" # an update
  run_capture remade vm1 --verbose --resign-copy -- "$RES/ollama" llama-server --runner
  rc_is remade 0
  err_has remade "runs a re-signed copy: $COPIES/run-"
  err_has remade "re-signed ad hoc with the dyld entitlements (the original is untouched)"

  lm_json "$E2E_DIR/r.json" rollback vm1
  expect_rc 0 "$E2E_DIR/r.json"
  [ ! -e "$(guest_home vm1)/.local/share/lume-metal" ] ||
    fail "left after rollback: $(find "$(guest_home vm1)/.local/share/lume-metal")"
  [ -x "$(guest_home vm1)/Applications/Ollama.app/Contents/Resources/ollama" ] || fail "rollback removed the original"
}

# An agent of the fixture with --resign-copy: its plist runs the copy, not throttled (ProcessType);
# its worker's record shows the widened answer, so list and doctor say so; agent remove removes the copy.
scenario_resign_agent() {
  setup
  ollama_fixture
  local home; home=$(guest_home vm1)
  local label=com.example.ollama
  lm_json_first "$E2E_DIR/i.json" agent install vm1 --resign-copy --label $label -- "$RES/ollama" llama-server --runner --stay
  expect_rc 0 "$E2E_DIR/i.json"
  jq_is "$E2E_DIR/i.json" '.vms[0].agents[0].program' "$COPIES/$label/Ollama.app/Contents/Resources/ollama"
  local xml; xml=$(plistutil -i "$home/Library/LaunchAgents/$label.plist" -o - -f xml 2>/dev/null ||
    plistutil -i "$home/Library/LaunchAgents/$label.plist" -o -)
  grep -qF "<key>ProcessType</key>" <<<"$xml" && grep -qF "<string>Interactive</string>" <<<"$xml" ||
    fail "plist without ProcessType Interactive: $xml"
  wait_for 15 "the worker to answer" grep -q 'runner: apple7=1 apple9=1' "$home/Library/Logs/lume-metal/$label.out.log"
  lm agent list vm1 >"$E2E_DIR/l.txt"
  grep -Eq "^      shim: loaded since it started: loaded the shim, asked no Metal question; pid [0-9]+ $COPIES/$label/Ollama.app/Contents/Resources/llama-server: asked Apple7→yes" \
    "$E2E_DIR/l.txt" || fail "agent list: $(cat "$E2E_DIR/l.txt")"
  lm_json "$E2E_DIR/d.json" doctor vm1
  jq -e '[.checks[] | select(.check == "agent-shim" and .level == "ok")] | length == 1' "$E2E_DIR/d.json" >/dev/null ||
    fail "doctor: $(jq -c '.checks' "$E2E_DIR/d.json")"
  lm_json "$E2E_DIR/rm.json" agent remove vm1 --label $label
  expect_rc 0 "$E2E_DIR/rm.json"
  [ ! -e "$home/.local/share/lume-metal/resigned/$label" ] || fail "agent remove left the copy"

  note "--process-type chooses another; a value launchd does not know is a usage error"
  install -m 755 "$LM_METAL_SERVER" "$(vm_dir vm1)/opt/homebrew/bin/metal-server"
  lm_json_first "$E2E_DIR/bg.json" agent install vm1 --process-type Background --label com.example.bg -- metal-server --runner --stay
  expect_rc 0 "$E2E_DIR/bg.json"
  grep -qF "<string>Background</string>" <<<"$(plistutil -i "$home/Library/LaunchAgents/com.example.bg.plist" -o - -f xml 2>/dev/null ||
    plistutil -i "$home/Library/LaunchAgents/com.example.bg.plist" -o -)" || fail "ProcessType Background not in the plist"
  set +e
  lm agent install vm1 --process-type Fast --label com.example.bad -- metal-server >"$E2E_DIR/bad.out" 2>"$E2E_DIR/bad.err"
  local rc=$?
  set -e
  [ $rc -eq 2 ] || fail "--process-type Fast: exit $rc: $(cat "$E2E_DIR/bad.err")"
  grep -q "'Fast' is not a launchd ProcessType" "$E2E_DIR/bad.err" || fail "the usage error: $(cat "$E2E_DIR/bad.err")"
}

# A workload that loaded the shim and asked no Metal question: said as such, never OK --
# --require-shim fails, and an agent of it is not OK in doctor. A record older than the guest's
# boot is pruned and never taken for the live process.
scenario_no_answer() {
  setup
  local bin; bin="$(vm_dir vm1)/opt/homebrew/bin"
  install -m 755 "$(command -v sleep)" "$bin/idle"
  install -m 755 "$LM_METAL_SERVER" "$bin/metal-server"
  run_capture idle vm1 --verbose -- idle 0
  rc_is idle 0
  grep -Eq '^shim: pid [0-9]+ /opt/homebrew/bin/idle: loaded the shim, asked no Metal question' "$E2E_DIR/idle.err" ||
    fail "the process line: $(cat "$E2E_DIR/idle.err")"
  err_has idle "shim: no answer was widened: 1 process loaded the shim and it was not given more than stock"
  err_lacks idle "no process of the workload loaded the shim"
  lm_json_first "$E2E_DIR/req.json" run vm1 --require-shim -- idle 0
  expect_rc 1 "$E2E_DIR/req.json"
  jq_is "$E2E_DIR/req.json" '.error.code' no-shim
  jq_is "$E2E_DIR/req.json" '.exit_status' 0
  jq_is "$E2E_DIR/req.json" '.activation.records | length' 1
  jq_is "$E2E_DIR/req.json" '.activation.records[0].took' false
  jq -e '.activation.no_shim | startswith("no answer was widened")' "$E2E_DIR/req.json" >/dev/null ||
    fail "no_shim: $(jq -c .activation "$E2E_DIR/req.json")"

  note "an agent that asked nothing: not OK in doctor"
  local home; home=$(guest_home vm1)
  local label=com.example.idle dir=$home/Library/Logs/lume-metal/com.example.idle.activation
  lm_json_first "$E2E_DIR/i.json" agent install vm1 --label $label -- idle 600
  expect_rc 0 "$E2E_DIR/i.json"
  lm_json "$E2E_DIR/l0.json" agent list vm1
  local pid; pid=$(jq -r '.vms[0].agents[0].pid' "$E2E_DIR/l0.json")
  wait_for 15 "the agent's record" test -s "$dir/$pid.json"
  lm_json "$E2E_DIR/l.json" agent list vm1
  jq_is "$E2E_DIR/l.json" '.vms[0].agents[0].shim_loaded' true
  jq_is "$E2E_DIR/l.json" '.vms[0].agents[0].shim_widened' false
  lm agent list vm1 >"$E2E_DIR/l.txt"
  grep -q "^      shim: no answer widened since it started: loaded the shim, asked no Metal question" "$E2E_DIR/l.txt" ||
    fail "agent list: $(cat "$E2E_DIR/l.txt")"
  lm_json "$E2E_DIR/d.json" doctor vm1
  jq -e --arg p "$pid" '[.checks[] | select(.check == "agent-shim")] | length == 1 and .[0].level == "warn" and
    (.[0].message | startswith("com.example.idle (pid \($p)) loaded the shim but no answer was widened"))' \
    "$E2E_DIR/d.json" >/dev/null || fail "doctor: $(jq -c '.checks' "$E2E_DIR/d.json")"

  note "records of gone processes and of an earlier boot are pruned"
  printf '{}' >"$dir/4194000.json" # a pid that does not run
  chown --reference="$dir" "$dir/4194000.json"
  lm_json "$E2E_DIR/p.json" agent list vm1
  jq_is "$E2E_DIR/p.json" '.vms[0].agents[0].records_pruned' 1
  [ ! -e "$dir/4194000.json" ] || fail "a gone process's record was kept"
  [ -e "$dir/$pid.json" ] || fail "the live process's record was pruned"
  "$GUEST_SSHD" boot-time --dir "$(vm_dir vm1)" "$(( $(date +%s) + 2 ))"
  lm_json "$E2E_DIR/b.json" agent list vm1
  jq_is "$E2E_DIR/b.json" '.vms[0].agents[0].shim_loaded' false
  jq_is "$E2E_DIR/b.json" '.vms[0].agents[0].records_pruned' 1
  [ ! -e "$dir/$pid.json" ] || fail "a record older than the boot was kept"
}

# 300 shim-loading children: the workload's own exit status, the first 256 records shown and the
# rest counted; a damaged record is said and skipped, in JSON too, never the run's error.
scenario_records_scale() {
  setup
  local bin; bin="$(vm_dir vm1)/opt/homebrew/bin"
  install -m 755 "$LM_SPAWN_SIBLING" "$bin/spawn-sibling"
  install -m 755 "$LM_METAL_SERVER" "$bin/metal-server"
  run_capture many vm1 --verbose -- spawn-sibling -n 300 -x 7 metal-server --runner
  rc_is many 7
  [ "$(grep -c '^runner: apple7=1 apple9=1$' "$E2E_DIR/many.out")" -eq 300 ] || fail "300 runners expected: $(wc -l <"$E2E_DIR/many.out")"
  [ "$(grep -c '^shim: pid ' "$E2E_DIR/many.err")" -eq 256 ] || fail "256 process lines expected: $(grep -c '^shim: pid ' "$E2E_DIR/many.err")"
  err_has many "shim: 45 more processes loaded the shim (records past the first 256 are counted, not read)"
  err_lacks many "no answer was widened"
  lm_json_first "$E2E_DIR/many.json" run vm1 --require-shim -- spawn-sibling -n 300 -x 7 metal-server --runner
  expect_rc 7 "$E2E_DIR/many.json"
  jq_is "$E2E_DIR/many.json" '.exit_status' 7
  jq_is "$E2E_DIR/many.json" '.activation.records | length' 256
  jq_is "$E2E_DIR/many.json" '.activation.records_dropped' 45
  jq_is "$E2E_DIR/many.json" '.error' null

  damage_part
}

damage_part() {
  local bin; bin="$(vm_dir vm1)/opt/homebrew/bin"
  note "a damaged record: said and skipped; the workload's status and output kept"
  printf '#!/bin/sh\nprintf "{\\"format\\": 1" >"$LUME_METAL_RECORD_DIR/77777.json"\necho wrote\nexit 3\n' >"$bin/damage"
  chmod 755 "$bin/damage"
  run_capture dmg vm1 --verbose -- damage
  rc_is dmg 3
  out_is dmg wrote
  err_has dmg "shim: skipped a damaged activation record: /Users/lume/.local/share/lume-metal/activation/run-"
  err_has dmg "77777.json"
  lm_json_first "$E2E_DIR/dmg.json" run vm1 -- damage
  expect_rc 3 "$E2E_DIR/dmg.json"
  jq_is "$E2E_DIR/dmg.json" '.stdout' wrote
  jq_is "$E2E_DIR/dmg.json" '.activation.records_skipped' 1
  jq -e '.activation.skipped[0] | contains("77777.json")' "$E2E_DIR/dmg.json" >/dev/null ||
    fail "skipped: $(jq -c .activation "$E2E_DIR/dmg.json")"
}

[ $# -eq 1 ] && declare -F "scenario_$1" >/dev/null || { echo "usage: $0 SCENARIO" >&2; exit 2; }
"scenario_$1"
check_guest_shells
