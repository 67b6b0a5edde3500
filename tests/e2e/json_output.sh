#!/usr/bin/env bash
# Every command's --format json document, on success and on failure, is valid against
# docs/json-output.schema.json (python3-jsonschema, JSON Schema 2020-12); and every document is
# one JSON document on stdout whatever the exit code.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
: "${LM_SCHEMA:?LM_SCHEMA: docs/json-output.schema.json}" "${LM_PYTHON:?LM_PYTHON: a python3 with jsonschema}"
VALIDATE="$here/../support/json-validate"
n=0
declare -A seen

# doc NAME EXPECTED_EXIT ARGS...: run lume-metal ARGS --format json and keep its document.
doc() {
  local name=$1 want=$2; shift 2
  n=$((n + 1))
  lm_json "$E2E_DIR/doc-$n-$name.json" "$@"
  [ "$LM_RC" -eq "$want" ] || fail "$name: exit $LM_RC, expected $want: $(cat "$E2E_DIR/doc-$n-$name.json" "$E2E_DIR/doc-$n-$name.json.err")"
  local command ok; command=$(jq -r .command "$E2E_DIR/doc-$n-$name.json"); ok=$(jq -r .ok "$E2E_DIR/doc-$n-$name.json")
  seen["$command/$ok"]=1
}

sim_start --vm vm1
printf '{"format": "nope"}\n' >"$E2E_DIR/bad-profile.json"

doc profile-list 0 profile list
doc profile-show 0 profile show published
doc profile-lint 0 profile lint conservative --chip Apple7
doc profile-show-unknown 1 profile show no-such-profile
doc profile-lint-bad 1 profile lint "$E2E_DIR/bad-profile.json"
doc profile-usage 2 profile
doc host-status 0 host status
doc host-enable-dry 0 host enable --dry-run
doc host-enable 0 host enable
doc host-disable 0 host disable
doc host-usage 2 host frobnicate
doc probe-not-enabled 1 probe vm1
# run: options go before "--" (what follows is the guest's command line; the --format json that
# doc() appends lands in the guest's sh -c as ignored positional parameters).
doc run-not-enabled 1 --format json run vm1 -- true
doc enable-unknown-vm 1 enable no-such-vm
doc enable-usage 2 enable
doc enable 0 enable vm1
doc status 0 status
doc status-vm 0 status vm1
doc probe 0 probe vm1
doc run 3 --format json run vm1 -- sh -c 'echo out; printf "\377\n"; echo err >&2; exit 3'
# A byte that is not UTF-8 reaches the document as the text \xff (the one sanitiser).
jq -e '.stdout == "out\n\\xff\n" and .stderr == "err\n" and .exit_status == 3' "$E2E_DIR/doc-$n-run.json" >/dev/null ||
  fail "run: output not carried: $(cat "$E2E_DIR/doc-$n-run.json")"
doc host-disable-live 1 host disable
jq -e '.error.code == "conflict" and (.error.hint | test("--force"))' "$E2E_DIR/doc-$n-host-disable-live.json" >/dev/null ||
  fail "host disable with a live VM: no conflict with a hint: $(cat "$E2E_DIR/doc-$n-host-disable-live.json")"
# Agents (options before "--", as for run) and doctor.
mkdir -p "$(vm_dir vm1)/opt/homebrew/bin"
printf '#!/bin/sh\nexec sleep 600\n' >"$(vm_dir vm1)/opt/homebrew/bin/server"
chmod 755 "$(vm_dir vm1)/opt/homebrew/bin/server"
doc agent-install 0 --format json agent install vm1 --label com.example.server -- server
doc agent-list 0 agent list vm1
doc agent-remove 0 agent remove vm1 --label com.example.server
doc agent-remove-again 0 agent remove vm1 --label com.example.server
doc agent-remove-unknown 1 agent remove no-such-vm --label com.example.server
doc agent-usage 2 agent frobnicate vm1
doc doctor 0 doctor vm1
doc doctor-fail 1 doctor no-such-vm
# JSON Lines: step events, then the document on one line.
lm status vm1 --format jsonl >"$E2E_DIR/status.jsonl" || fail "status --format jsonl"
lm enable vm1 --format jsonl >"$E2E_DIR/enable.jsonl" || fail "enable --format jsonl"
"$LM_PYTHON" "$VALIDATE" "$LM_SCHEMA" --lines step_event "$E2E_DIR/status.jsonl" "$E2E_DIR/enable.jsonl" ||
  fail "JSON Lines that do not follow $LM_SCHEMA (above)"
# The published schema takes each line as it is: an event (it has `event`) or the document.
"$LM_PYTHON" "$VALIDATE" "$LM_SCHEMA" --each-line "$E2E_DIR/status.jsonl" "$E2E_DIR/enable.jsonl" ||
  fail "JSON Lines whose lines do not each validate against $LM_SCHEMA (above)"
doc forget-host 0 forget-host vm1
doc forget-host-usage 2 forget-host
doc rollback 0 rollback vm1 --no-restart
doc rollback-all 0 rollback --all
doc rollback-usage 2 rollback
doc gc 0 gc
doc gc-dry 0 gc --dry-run
doc gc-usage 2 gc vm1
doc status-no-lume 1 status vm1 --lume-url http://127.0.0.1:9 --vm-manager lume-api
doc unknown-command 2 frobnicate
doc unknown-option 2 status --no-such-option
# A usage error's document names its command, even when an option fails before the command is read.
jq_is "$E2E_DIR/doc-$n-unknown-option.json" .command status
doc unknown-option-first 2 --no-such-option enable vm1
jq_is "$E2E_DIR/doc-$n-unknown-option-first.json" .command enable
doc version 0 version
jq_is "$E2E_DIR/doc-$n-version.json" .version "$("$LM_BIN" --version | cut -d' ' -f2)"
doc version-usage 2 version extra

"$LM_PYTHON" "$VALIDATE" "$LM_SCHEMA" "$E2E_DIR"/doc-*.json || fail "documents that do not follow $LM_SCHEMA (above)"

# Every command of the tool, succeeding and failing.
for c in enable status probe run rollback "profile list" "profile show" "profile lint" "host enable" \
         "host disable" "host status" forget-host gc "agent install" "agent list" "agent remove" doctor version; do
  [ -n "${seen["$c/true"]:-}" ] || [ "$c" = run ] || fail "no successful '$c' document was checked"
done
for c in enable status probe run rollback profile "profile show" "profile lint" host forget-host gc "agent remove" \
         agent doctor version; do
  [ -n "${seen["$c/false"]:-}" ] || fail "no failing '$c' document was checked"
done
echo "ok: $n documents valid against $(basename "$LM_SCHEMA")"
