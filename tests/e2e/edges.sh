#!/usr/bin/env bash
# Exit codes that say what happened, and a VM's files gone with its record (issue 25, items 5
# and 7): edges.sh NAME. See docs/testing.md.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

JOURNAL="$LUME_METAL_STATE_DIR/state.json"
damage() { # JQ-FILTER: the journal changed in place
  jq "$1" "$JOURNAL" >"$E2E_DIR/j.tmp" && cat "$E2E_DIR/j.tmp" >"$JOURNAL"
}
locks() { find "$LUME_METAL_STATE_DIR" -maxdepth 1 -name 'vm-*.lock' | wc -l; }
# expect_state_error FILE WHAT: exit 1, a `corrupt` error naming the journal and WHAT.
expect_state_error() {
  expect_rc 1 "$1"
  jq_is "$1" '.error.code' corrupt
  jq -r .error.message "$1" | grep -qF "$JOURNAL" || fail "the message does not name $JOURNAL: $(cat "$1")"
  jq -r .error.message "$1" | grep -qF -- "$2" || fail "the message does not say '$2': $(cat "$1")"
}

# rollback --all --restore-host with a damaged preference record (issue 36, item 4): before, the
# first VM's rollback rewrote the journal and the last VM lost its guest files yet stayed enabled;
# the message said the damaged file was left as it is. Now nothing is rolled back: both VMs stay
# enabled in the journal and keep their guest files, and the journal is left byte for byte.
scenario_damaged_pref_record() {
  sim_start --vms 2
  lm_json "$E2E_DIR/e.json" enable vm1 vm2
  expect_rc 0 "$E2E_DIR/e.json"
  damage '.preference.original = 5'
  local sum vm; sum=$(sha256sum <"$JOURNAL")
  lm_json "$E2E_DIR/r.json" rollback --all --restore-host
  expect_state_error "$E2E_DIR/r.json" "It was left as it is"
  [ "$(sha256sum <"$JOURNAL")" = "$sum" ] || fail "the damaged journal, said to be left as it is, was rewritten"
  for vm in vm1 vm2; do
    [ "$(jq -r --arg v "$vm" '.vms[$v].status' "$JOURNAL")" = enabled ] || fail "$vm is no longer enabled in the journal"
    [ -e "$(guest_home "$vm")/.local/share/lume-metal/current" ] || fail "$vm's guest files were removed, yet it is enabled"
  done
}

# A journal written by a newer lume-metal: exit 5 (not 4, "guest unsupported"), error `newer`,
# the advice to upgrade, and the journal left byte for byte.
scenario_newer_journal() {
  sim_start --vm vm1
  mkdir -m 700 -p "$LUME_METAL_STATE_DIR"
  printf '{"schema": 2, "vms": {"vm1": {"status": "enabled", "future": true}}}\n' >"$JOURNAL"
  cp "$JOURNAL" "$E2E_DIR/journal.orig"
  local cmd i=0
  for cmd in "enable vm1" "rollback vm1" "rollback --all" "status" "host disable" "gc"; do
    i=$((i + 1))
    # shellcheck disable=SC2086 # the command's words
    lm_json "$E2E_DIR/n$i.json" $cmd
    expect_rc 5 "$E2E_DIR/n$i.json"
    jq_is "$E2E_DIR/n$i.json" '.exit_code' 5
    jq_is "$E2E_DIR/n$i.json" '.error.code' newer
    jq -r .error.message "$E2E_DIR/n$i.json" | grep -q "written by a newer lume-metal (schema 2, this one knows 1)" ||
      fail "$cmd: $(cat "$E2E_DIR/n$i.json")"
    jq -r .error.hint "$E2E_DIR/n$i.json" | grep -q '^upgrade lume-metal' || fail "$cmd: no upgrade hint: $(cat "$E2E_DIR/n$i.json")"
    cmp -s "$JOURNAL" "$E2E_DIR/journal.orig" || fail "$cmd changed the newer journal"
  done
  set +e; lm enable vm1 >"$E2E_DIR/t.out" 2>"$E2E_DIR/t.err"; rc=$?; set -e
  [ "$rc" -eq 5 ] || fail "enable (text): exit $rc, expected 5"
  grep -q '^hint: upgrade lume-metal' "$E2E_DIR/t.err" || fail "enable (text): $(cat "$E2E_DIR/t.err")"
  for cmd in "run vm1 -- true" "probe vm1"; do
    # shellcheck disable=SC2086 # the command's words
    set +e; lm $cmd >"$E2E_DIR/t.out" 2>"$E2E_DIR/t.err"; rc=$?; set -e
    [ "$rc" -eq 5 ] || fail "$cmd: exit $rc, expected 5: $(cat "$E2E_DIR/t.err")"
  done
  cmp -s "$JOURNAL" "$E2E_DIR/journal.orig" || fail "the newer journal changed"
  lm --help | grep -q '^ *5 .*written by a newer' || fail "--help does not list exit code 5"
}

# The journal itself wrong: a state error naming the file (exit 1, `corrupt`), never a usage
# error (exit 2) -- too large, a name inside it no VM can have; a damaged preference record in
# rollback --all --restore-host fails and the preference stays as it is. And a VM's lock file
# goes with its record (rollback).
scenario_state_errors() {
  sim_start --vm vm1
  lm_json "$E2E_DIR/e.json" enable vm1
  expect_rc 0 "$E2E_DIR/e.json"
  [ "$(locks)" -eq 1 ] || fail "enable left $(locks) VM lock files, expected 1 (vm1's)"
  lm_json "$E2E_DIR/r.json" rollback vm1
  expect_rc 0 "$E2E_DIR/r.json"
  [ "$(locks)" -eq 0 ] || fail "vm1's lock file outlived its record: $(ls "$LUME_METAL_STATE_DIR")"

  lm_json "$E2E_DIR/e2.json" enable vm1 --keep-host
  expect_rc 0 "$E2E_DIR/e2.json"
  cp "$JOURNAL" "$E2E_DIR/good.json"

  head -c 17000000 /dev/zero | tr '\0' ' ' >>"$JOURNAL"
  lm_json "$E2E_DIR/big.json" rollback --all
  expect_state_error "$E2E_DIR/big.json" "too large"

  cp "$E2E_DIR/good.json" "$JOURNAL"
  damage '.vms["../x"] = .vms.vm1'
  lm_json "$E2E_DIR/name.json" rollback --all
  expect_state_error "$E2E_DIR/name.json" "VM name '../x'"
  lm_json "$E2E_DIR/name2.json" status
  expect_state_error "$E2E_DIR/name2.json" "VM name '../x'"

  # A damaged preference record, with vm1 enabled and with nothing enabled.
  cp "$E2E_DIR/good.json" "$JOURNAL"
  damage '.preference.kept = "yes"'
  lm_json "$E2E_DIR/pref1.json" rollback --all --restore-host
  expect_rc 1 "$E2E_DIR/pref1.json"
  plist_xml | grep -q '<true/>' || fail "the preference changed: $(plist_xml)"
  cp "$E2E_DIR/good.json" "$JOURNAL"
  lm_json "$E2E_DIR/r2.json" rollback --all
  expect_rc 0 "$E2E_DIR/r2.json"
  jq_is "$E2E_DIR/r2.json" '.host_preference_restored' false   # kept for the fleet
  damage '.preference.original.state = "bogus"'
  lm_json "$E2E_DIR/pref2.json" rollback --all --restore-host
  expect_state_error "$E2E_DIR/pref2.json" "preference.original.state"
  plist_xml | grep -q '<true/>' || fail "the preference changed: $(plist_xml)"
}

# Too few file descriptors (issue 49, 9): status under `ulimit -n N` for every N from where the
# tool cannot start to where it has enough. Each run either answers whole (exit 0, the guest read)
# or fails naming the cause ("Too many open files", the limit); never an answer that hides it.
scenario_status_few_descriptors() {
  sim_start --vm vm1
  lm_json "$E2E_DIR/e.json" enable vm1
  expect_rc 0 "$E2E_DIR/e.json"
  local n rc failed=0 whole=0 failed_at=()
  # From 5: with 4 the dynamic loader cannot open liblume-metal.so itself (exit 127, ld.so's words).
  for n in $(seq 5 24); do
    rc=0
    (ulimit -n "$n" && exec "$LM_BIN" status vm1 --format json) >"$E2E_DIR/s$n.json" 2>"$E2E_DIR/s$n.err" || rc=$?
    if [ "$rc" -eq 0 ]; then
      jq -e '.ok and .vms[0].bundle_verified == true and .vms[0].result == "ok"' "$E2E_DIR/s$n.json" >/dev/null ||
        fail "ulimit -n $n: exit 0 without the whole answer: $(jq -c '.vms[0] | [.result, .message, .bundle_verified]' "$E2E_DIR/s$n.json")"
      whole=$((whole + 1))
    else
      [ "$rc" -eq 1 ] || fail "ulimit -n $n: exit $rc: $(cat "$E2E_DIR/s$n.err")"
      jq -e '.ok == false' "$E2E_DIR/s$n.json" >/dev/null || fail "ulimit -n $n: exit 1 with ok: $(cat "$E2E_DIR/s$n.json")"
      grep -q 'Too many open files' "$E2E_DIR/s$n.json" ||
        fail "ulimit -n $n: the cause is not named: $(jq -c '[.error.message, .vms[0].message]' "$E2E_DIR/s$n.json")"
      failed=$((failed + 1))
      failed_at+=("$n")
    fi
  done
  [ "$failed" -gt 0 ] && [ "$whole" -gt 0 ] || fail "expected both failures and whole answers: $failed failed, $whole whole"
  echo "status under ulimit -n 5..24: $failed named the cause, $whole answered whole"
  # The same in text: the message on standard error, at the limits where JSON named the cause.
  # Which limits those are depends on the libraries' own descriptors (5 and 6 on Debian 13's,
  # 5 to 7 on Debian 12's), so they are taken from the run above, not written here.
  for n in "${failed_at[@]}"; do
    rc=0
    (ulimit -n "$n" && exec "$LM_BIN" status vm1) >"$E2E_DIR/t$n.out" 2>"$E2E_DIR/t$n.err" || rc=$?
    [ "$rc" -eq 1 ] && grep -q 'Too many open files' "$E2E_DIR/t$n.err" ||
      fail "ulimit -n $n, text: exit $rc: $(cat "$E2E_DIR/t$n.out" "$E2E_DIR/t$n.err")"
  done
}

"scenario_${1:?usage: edges.sh SCENARIO}"
