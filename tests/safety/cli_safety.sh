#!/usr/bin/env bash
# Issue 11 seen from the lume-metal tool: `--` only for run (item 2), echoed input sanitised in text
# and JSON (item 3), FIFOs never hang (item 5), relative directories refused (item 6), out-of-range
# numbers in the journal (item 7). Every run is bounded by `timeout`: a hang is a failure, not a
# stuck test.
# usage: cli_safety.sh LUME_METAL
. "$(dirname "$0")/../support/lm_test.sh"
LM=$1
lm_test_scratch safety-cli
unset LUME_METAL_PREFS_DIR LUME_METAL_STATE_DIR LUME_METAL_BUNDLE LUME_METAL_SSH_PASSWORD
export HOME=$T/home XDG_STATE_HOME=$T/xdg
mkdir -p "$HOME"
RAW=$'[\e\a]'   # ESC starts terminal escape sequences; BEL ends OSC ones
CSI8=$'\xc2\x9b' # the C1 CSI, U+009B, as UTF-8
DOMAIN=com.apple.gpusw.ParavirtualizedGraphics


# run NAME EXPECTED-EXIT ARGS...: stdout in $T/NAME.out, stderr in $T/NAME.err.
run() {
  local name=$1 want=$2 rc=0
  shift 2
  # A hang guard, not a time limit (issue 49: a second idle can be twenty under load).
  timeout 300 "$LM" "$@" >"$T/$name.out" 2>"$T/$name.err" || rc=$?
  [ "$rc" != 124 ] || fail "$name: lume-metal hung (killed after 300 s)"
  [ "$rc" = "$want" ] || fail "$name: exit $rc, expected $want; stderr: $(cat "$T/$name.err")"
  echo "ok: $name (exit $rc): $(head -c 200 "$T/$name.err" | tr '\n' ' ')"
}
no_raw_control() { # nothing in stdout or stderr that could drive a terminal
  local f
  for f in "$T/$1.out" "$T/$1.err"; do
    if LC_ALL=C grep -q "$RAW" "$f" || LC_ALL=C grep -qF "$CSI8" "$f"; then fail "$1: raw control bytes in $f"; fi
    iconv -f UTF-8 -t UTF-8 "$f" >/dev/null 2>&1 || fail "$1: $f is not valid UTF-8"
  done
}

# ---- item 2: `--` is a usage error for every command but run --------------------------------
export LUME_METAL_PREFS_DIR=$T/default-prefs LUME_METAL_STATE_DIR=$T/default-state
run dd_host_enable 2 host enable -- --dry-run --prefs-dir /x
err_has dd_host_enable "'--' is only for run"
[ ! -e "$T/default-prefs" ] && [ ! -e "$T/default-state" ] || fail "dd_host_enable: something was written"
run dd_enable 2 enable vm1 -- vm2
run dd_status 2 status --
run dd_rollback 2 rollback vm1 -- --all
run dd_profile 2 profile list --
run dd_forget 2 forget-host vm1 -- vm2
run dd_json 2 host status --format json -- x
grep -q '"exit_code":[[:space:]]*2' "$T/dd_json.out" || fail "dd_json: no JSON error document"
[ ! -e "$T/default-prefs" ] && [ ! -e "$T/default-state" ] || fail "'--' runs wrote something"
unset LUME_METAL_PREFS_DIR LUME_METAL_STATE_DIR

# ---- item 3: echoed input is sanitised --------------------------------------------------------
S=$T/state
run echo_enable 2 enable $'bad\e[31mname\e]0;title\a' --state-dir "$S"
no_raw_control echo_enable
err_has echo_enable '\x1b[31m'
run echo_c1 2 enable $'csi\xc2\x9b2Jname' --state-dir "$S"
no_raw_control echo_c1
err_has echo_c1 '\xc2\x9b'
run echo_command 2 $'\e[2Jfrobnicate'
no_raw_control echo_command
run echo_option 2 status $'--\e[1mbold'
no_raw_control echo_option
run echo_forget 2 forget-host $'vm\e[5m' --state-dir "$S"
no_raw_control echo_forget
run echo_profile 1 profile show "$T/"$'\e[31mred.json'
no_raw_control echo_profile
err_has echo_profile '\x1b[31mred.json'
# JSON: valid UTF-8 and one document whatever the bytes.
run echo_json 2 enable $'\xff\xfe\e[31m\xc0\xaf' --format json --state-dir "$S"
no_raw_control echo_json
grep -q '"ok":[[:space:]]*false' "$T/echo_json.out" || fail "echo_json: no JSON error document"
run echo_json_cmd 2 $'\xffbad' --format json
no_raw_control echo_json_cmd
grep -qF '\\xffbad' "$T/echo_json_cmd.out" || fail "echo_json_cmd: the command is not shown sanitised"

# ---- item 5: a FIFO where a file is expected never hangs ---------------------------------------
mkfifo "$T/profile.json"
run fifo_profile 1 profile show "$T/profile.json"
err_has fifo_profile FIFO
run fifo_lint 1 enable vm1 --profile "$T/profile.json" --state-dir "$S"
err_has fifo_lint FIFO
mkdir -p "$T/fs1" && chmod 700 "$T/fs1" && mkfifo "$T/fs1/state.json"
run fifo_journal 1 host status --state-dir "$T/fs1" --prefs-dir "$T/fp1"
err_has fifo_journal FIFO
run fifo_journal_write 1 host enable --state-dir "$T/fs1" --prefs-dir "$T/fp1"
err_has fifo_journal_write FIFO
mkdir -p "$T/fs2" && chmod 700 "$T/fs2" && mkfifo "$T/fs2/state.lock"
run fifo_lock 1 host enable --state-dir "$T/fs2" --prefs-dir "$T/fp2"
err_has fifo_lock "not a regular file"
mkdir -p "$T/fp3" && mkfifo "$T/fp3/$DOMAIN.plist"
run fifo_plist 1 host enable --state-dir "$T/fs3" --prefs-dir "$T/fp3"
err_has fifo_plist FIFO
mkdir -p "$T/fs4" && chmod 700 "$T/fs4" && mkfifo "$T/fs4/known_hosts"
run fifo_known_hosts 1 forget-host vm1 --state-dir "$T/fs4"
err_has fifo_known_hosts FIFO

# ---- item 6: relative directories are refused, showing what they would have meant ---------------
mkdir -p "$T/cwd"
cd "$T/cwd"
run rel_state 2 host status --state-dir state --prefs-dir "$T/fp6"
err_has rel_state "'state' is a relative path"
err_has rel_state "$T/cwd/state"
run rel_prefs 2 host enable --state-dir "$T/fs6" --prefs-dir ./prefs
err_has rel_prefs "$T/cwd/./prefs"
run rel_bundle 2 enable vm1 --bundle bundles/x --state-dir "$T/fs6"
err_has rel_bundle "$T/cwd/bundles/x"
LUME_METAL_STATE_DIR=rel-state run rel_env_state 2 host status --prefs-dir "$T/fp6"
err_has rel_env_state LUME_METAL_STATE_DIR
LUME_METAL_PREFS_DIR=rel-prefs run rel_env_prefs 2 host status --state-dir "$T/fs6"
err_has rel_env_prefs "$T/cwd/rel-prefs"
[ -z "$(ls -A "$T/cwd")" ] || fail "relative directories were created: $(ls -A "$T/cwd")"
[ ! -e "$T/fs6" ] || fail "the state directory was created by a refused run"
cd "$T"

# ---- item 7: out-of-range numbers in the journal are damage, not undefined behaviour ------------
mkdir -p "$T/fs7" && chmod 700 "$T/fs7"
printf '{"schema": 1e300, "vms": {}}\n' >"$T/fs7/state.json"
run schema_1e300 1 host status --state-dir "$T/fs7" --prefs-dir "$T/fp7"
err_has schema_1e300 "schema"
printf '{"schema": 2147483648, "vms": {}}\n' >"$T/fs7/state.json"
run schema_int_max 1 host status --state-dir "$T/fs7" --prefs-dir "$T/fp7"

# The recorded time of the preference change is shown as a date: 1e300 must not reach time_t.
run pref_setup 0 host enable --state-dir "$T/fs8" --prefs-dir "$T/fp8"
sed -i 's/"changed_at":[^,}]*/"changed_at": 1e300/' "$T/fs8/state.json"
grep -q '"changed_at": 1e300' "$T/fs8/state.json" || fail "could not set changed_at in the journal"
run changed_at_1e300 1 host status --state-dir "$T/fs8" --prefs-dir "$T/fp8"
err_has changed_at_1e300 changed_at

echo "all safety CLI checks passed"
