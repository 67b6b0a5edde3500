#!/usr/bin/env bash
# Two state directories and one VM (issue 49, defect 12): state_owner.sh NAME. The guest files
# carry the identity of the state directory that installed them (~/.local/share/lume-metal/
# owner.json, docs/bundle-format.md); enable and rollback from any other state directory are
# refused naming it, and change nothing in the guest, unless --take-over is given.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

BASE=.local/share/lume-metal
A=$LUME_METAL_STATE_DIR
B=$E2E_DIR/state-b

# in_b CMD...: the command with state directory B (the environment variable, as a CI job sets it).
in_b() { LUME_METAL_STATE_DIR=$B "$@"; }
has() { grep -qF -- "$2" <<<"$1" || fail "expected '$2' in: $1"; }
# Every entry of the guest's lume-metal directory with its kind, size and SHA-256.
snapshot() {
  local home; home=$(guest_home vm1)
  (cd "$home/$BASE" && find . -printf '%p %y %s %l\n' | sort && find . -type f -exec sha256sum {} + | sort)
}
owner_field() { jq -r ".$1" "$(guest_home vm1)/$BASE/owner.json"; }
message() { jq -r '.vms[0].message' "$1"; }
# refused FILE OWNER_DIR: the run failed as other-state, naming that directory and its identity.
refused() {
  expect_rc 1 "$1"
  jq_is "$1" '.vms[0].error.code' other-state
  jq_is "$1" '.error.code' other-state
  has "$(message "$1")" "$2"
  has "$(message "$1")" "$(cat "$2/identity")"
  has "$(jq -r '.error.hint' "$1")" "--take-over"
  "$here/../support/json-validate" "$here/../../docs/json-output.schema.json" "$1" ||
    fail "$1 does not validate against docs/json-output.schema.json"
}
probe_unlocked() { # [in_b]
  "$@" "$LM_BIN" probe vm1 >"$E2E_DIR/probe.txt" || fail "probe: $(cat "$E2E_DIR/probe.txt")"
  grep -Eq '^  Apple9 +no +yes' "$E2E_DIR/probe.txt" || fail "probe table: $(cat "$E2E_DIR/probe.txt")"
}

# Enabled from A: B's enable is refused naming A, and changes nothing in the guest nor in B's
# journal; A's install still unlocks. B takes it over explicitly; then A's enable and rollback are
# refused naming B; B's rollback removes the files, and A's rollback only forgets the VM (and, the
# last VM with A's record of the preference, restores it).
scenario_two_state_dirs() {
  sim_start --vm vm1
  lm_json "$E2E_DIR/a1.json" enable vm1
  expect_rc 0 "$E2E_DIR/a1.json"
  local before; before=$(snapshot)

  in_b lm_json "$E2E_DIR/b1.json" enable vm1
  [ "$LM_RC" -ne 0 ] || fail "B's enable of the VM A enabled succeeded, saying nothing of A: $(message "$E2E_DIR/b1.json")"
  grep -Eqx '[0-9a-f]{32}' "$A/identity" || fail "A's identity: $(cat "$A/identity")"
  [ "$(owner_field state_id)" = "$(cat "$A/identity")" ] || fail "owner.json: $(owner_field state_id)"
  [ "$(owner_field state_dir)" = "$A" ] || fail "owner.json: $(owner_field state_dir)"
  refused "$E2E_DIR/b1.json" "$A"
  has "$(message "$E2E_DIR/b1.json")" "$B"
  [ "$(snapshot)" = "$before" ] || fail "B's refused enable changed the guest: $(diff <(echo "$before") <(snapshot))"
  [ "$(jq '.vms.vm1' "$B/state.json")" = null ] || fail "B's journal kept vm1: $(cat "$B/state.json")"
  # Its text names the owner too, with the advice; a dry run is refused the same way.
  set +e; in_b "$LM_BIN" enable vm1 >"$E2E_DIR/b1.txt" 2>&1; rc=$?; set -e
  [ "$rc" -eq 1 ] || fail "B's enable (text): exit $rc: $(cat "$E2E_DIR/b1.txt")"
  has "$(cat "$E2E_DIR/b1.txt")" "$(cat "$A/identity")"
  has "$(cat "$E2E_DIR/b1.txt")" "hint: "
  in_b lm_json "$E2E_DIR/b1d.json" enable vm1 --dry-run
  refused "$E2E_DIR/b1d.json" "$A"
  [ "$(snapshot)" = "$before" ] || fail "B's refused enable changed the guest"
  probe_unlocked

  # B takes it over: the files stay (the same bundle), their owner is B now.
  in_b lm_json "$E2E_DIR/b2.json" enable vm1 --take-over
  expect_rc 0 "$E2E_DIR/b2.json"
  has "$(jq -r '.vms[0].steps[] | select(.name == "bundle") | .detail' "$E2E_DIR/b2.json")" "taken over from"
  [ "$(owner_field state_id)" = "$(cat "$B/identity")" ] || fail "owner after take-over: $(owner_field state_id)"
  [ "$(owner_field state_dir)" = "$B" ] || fail "owner after take-over: $(owner_field state_dir)"
  before=$(snapshot)

  # A, whose journal still says enabled: enable and rollback refused, nothing removed.
  lm_json "$E2E_DIR/a2.json" enable vm1
  refused "$E2E_DIR/a2.json" "$B"
  lm_json "$E2E_DIR/a3.json" rollback vm1
  refused "$E2E_DIR/a3.json" "$B"
  has "$(message "$E2E_DIR/a3.json")" "Nothing was removed"
  [ "$(snapshot)" = "$before" ] || fail "A's refused commands changed the guest: $(diff <(echo "$before") <(snapshot))"
  jq -e '.vms.vm1.status == "enabled"' "$A/state.json" >/dev/null || fail "A's refused rollback forgot vm1"
  probe_unlocked in_b

  # The owner's rollback removes them; then A's only forgets vm1 and restores the preference.
  in_b lm_json "$E2E_DIR/b3.json" rollback vm1
  expect_rc 0 "$E2E_DIR/b3.json"
  [ ! -e "$(guest_home vm1)/$BASE" ] || fail "B's rollback left: $(find "$(guest_home vm1)/$BASE")"
  lm_json "$E2E_DIR/a4.json" rollback vm1
  expect_rc 0 "$E2E_DIR/a4.json"
  [ "$(jq '.vms.vm1' "$A/state.json")" = null ] || fail "A's rollback kept vm1"
  [ ! -e "$PLIST" ] || fail "preference file left after the last rollback (it was absent): $(plist_xml)"
}

# Guest files an older lume-metal installed carry no owner: the state directory that enables the
# VM next records itself as their owner (its step says so), whichever it is; from then on the
# other one is refused.
scenario_older_install() {
  sim_start --vm vm1
  local home; home=$(guest_home vm1)
  lm_json "$E2E_DIR/a1.json" enable vm1
  expect_rc 0 "$E2E_DIR/a1.json"
  rm "$home/$BASE/owner.json"
  lm_json "$E2E_DIR/a2.json" enable vm1
  expect_rc 0 "$E2E_DIR/a2.json"
  jq_is "$E2E_DIR/a2.json" '.vms[0].files_uploaded' 0
  [ "$(owner_field state_id)" = "$(cat "$A/identity")" ] || fail "A did not record itself: $(ls -A "$home/$BASE")"
  rm "$home/$BASE/owner.json"
  in_b lm_json "$E2E_DIR/b1.json" enable vm1
  expect_rc 0 "$E2E_DIR/b1.json"
  has "$(jq -r '.vms[0].steps[] | select(.name == "bundle") | .detail' "$E2E_DIR/b1.json")" "no owner recorded"
  [ "$(owner_field state_id)" = "$(cat "$B/identity")" ] || fail "B did not record itself"
  lm_json "$E2E_DIR/a3.json" rollback vm1
  refused "$E2E_DIR/a3.json" "$B"
  [ -L "$home/$BASE/current" ] || fail "A's refused rollback removed the files"
  in_b lm_json "$E2E_DIR/b2.json" rollback vm1
  expect_rc 0 "$E2E_DIR/b2.json"
  [ ! -e "$home/$BASE" ] || fail "B's rollback left: $(find "$home/$BASE")"
}

# A state directory that is gone (a CI workspace wiped): its files are another's for the new one
# at the same path, and --take-over is the way out, for rollback too.
scenario_take_over() {
  sim_start --vm vm1
  local home; home=$(guest_home vm1)
  lm_json "$E2E_DIR/a1.json" enable vm1
  expect_rc 0 "$E2E_DIR/a1.json"
  in_b lm_json "$E2E_DIR/b1.json" enable vm1 --take-over
  expect_rc 0 "$E2E_DIR/b1.json"
  # A's refused rollback, then with --take-over: the files go, and A forgets vm1.
  lm_json "$E2E_DIR/a2.json" rollback vm1
  refused "$E2E_DIR/a2.json" "$B"
  lm_json "$E2E_DIR/a3.json" rollback vm1 --take-over
  expect_rc 0 "$E2E_DIR/a3.json"
  [ ! -e "$home/$BASE" ] || fail "rollback --take-over left: $(find "$home/$BASE")"
  # B's journal entry is stale now: its rollback finds no files and forgets vm1.
  in_b lm_json "$E2E_DIR/b2.json" rollback vm1
  expect_rc 0 "$E2E_DIR/b2.json"
  [ "$(jq '.vms.vm1' "$B/state.json")" = null ] || fail "B's rollback kept vm1"
  # --take-over is for enable and rollback only.
  set +e; lm status vm1 --take-over >/dev/null 2>&1; rc=$?; set -e
  [ "$rc" -eq 2 ] || fail "status --take-over: exit $rc, expected 2 (usage)"
}

name=${1:?usage: state_owner.sh NAME}
"scenario_$name"
check_guest_shells
echo "e2e $name: passed"
