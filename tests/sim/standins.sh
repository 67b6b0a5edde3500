#!/usr/bin/env bash
# The simulator's stand-ins checked directly, as programs, with nothing of lume-metal: Lume's CLI
# (`lume`), Tart's (`tart`) and UTM's (`utmctl`) against docs/simulator.md and
# docs/vm-managers.md, and the macOS tools of the guest fixture (tests/support/guest-sshd:
# sw_vers, sysctl, launchctl, plutil, csrutil, codesign, the login shell) over SSH as the guest's account
# sees them. One scenario per test (standins.sh SCENARIO); docs/simulator.md's table names them.
export LM_SIM_ONLY=1 # no lume-metal here
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"

# The JSON document among the stand-in's log lines on stdout ("[TIME] LEVEL: ...", the
# simulator's notice).
json_of() { grep -vE '^\[(lume-sim\] notice: |[0-9]{4}-[0-9]{2}-[0-9]{2}T)' "$E2E_DIR/$1.out"; }

is_status() { [ "$(vm_status "$1")" = "$2" ]; }
# sim_events_with EVENT VM DETAIL_SUBSTRING: how many such events the simulator logged.
sim_events_with() {
  jq -c --arg e "$1" --arg v "$2" --arg d "$3" \
    'select(.source == "sim" and .event == $e and .vm == $v and ((.detail // "") | contains($d)))' "$SIM_LOG" | wc -l
}
# calls SOURCE ARGV0: logged invocations of a stand-in whose first argument is ARGV0.
calls() { jq -c --arg s "$1" --arg a "$2" 'select(.source == $s and .argv[0] == $a)' "$SIM_LOG" | wc -l; }
# The lowest PID with FILE open, as Lume's `lsof -F p` finds the holder of a VM.
holder_of() { find /proc/[0-9]*/fd -maxdepth 1 -lname "$1" 2>/dev/null | cut -d/ -f3 | sort -n | head -n 1; }

bin() { jq -r .bin_dir "$E2E_DIR/sim.json"; }

# ==== Lume's CLI ==================================================================================

# --version: 0.5.3, or --cli-version, or LUME_SIM_VERSION for one call.
scenario_lume_version() {
  sim_start --vm vm1 --cli-version 0.5.1
  run_checked v 0 "$(bin)/lume" --version
  out_is v 0.5.1
  LUME_SIM_VERSION=0.4.2 run_checked v2 0 "$(bin)/lume" --version
  out_is v2 0.4.2
  [ "$(calls lume-cli --version)" -eq 2 ] || fail "lume --version not recorded twice"
}

# ls and get as JSON among log lines on stdout; get is a one-element array; an unknown VM is an
# Error on stderr with exit 1; NAME:TAG is NAME_TAG; LUME_LOG_LEVEL hides the log lines, never the
# simulator's notice.
scenario_lume_ls_get() {
  sim_start --vm vm1 --vm vm2 --vm img_latest
  local lume; lume="$(bin)/lume"
  run_checked ls 0 "$lume" ls --format json
  json_of ls | jq -e 'type == "array" and length == 3 and (map(.name) == ["vm1", "vm2", "img_latest"])' >/dev/null ||
    fail "ls --format json: $(cat "$E2E_DIR/ls.out")"
  grep -Eq '^\[[0-9T:-]+Z\] INFO: ' "$E2E_DIR/ls.out" || fail "no log line among the JSON: $(cat "$E2E_DIR/ls.out")"
  out_has ls "[lume-sim] notice: "
  run_checked get 0 "$lume" get vm2 --format json
  json_of get | jq -e 'type == "array" and length == 1 and .[0].name == "vm2" and .[0].status == "stopped"' >/dev/null ||
    fail "get --format json: $(cat "$E2E_DIR/get.out")"
  run_checked tag 0 "$lume" get img:latest --format json
  json_of tag | jq -e '.[0].name == "img_latest"' >/dev/null || fail "NAME:TAG: $(cat "$E2E_DIR/tag.out")"
  run_checked ghost 1 "$lume" get ghost --format json
  err_is ghost "Error: Virtual machine not found: ghost"
  LUME_LOG_LEVEL=error run_checked quiet 0 "$lume" get vm1 --format json
  ! grep -q '] INFO: ' "$E2E_DIR/quiet.out" || fail "LUME_LOG_LEVEL=error: $(cat "$E2E_DIR/quiet.out")"
  out_has quiet "[lume-sim] notice: "
  json_of quiet | jq -e '.[0].name == "vm1"' >/dev/null || fail "quiet get: $(cat "$E2E_DIR/quiet.out")"
  run_checked text 0 "$lume" ls
  grep -Eq '^name +os +status +ip' "$E2E_DIR/text.out" || fail "ls (text): $(cat "$E2E_DIR/text.out")"
}

# Bad arguments exit 64 with the usage; config storage list names the one store.
scenario_lume_usage() {
  sim_start --vm vm1
  local lume; lume="$(bin)/lume"
  run_checked none 64 "$lume"
  run_checked unknown 64 "$lume" frobnicate
  err_has unknown "Error: Unknown subcommand 'frobnicate'"
  run_checked option 64 "$lume" ls --all
  err_has option "Error: Unknown option '--all'"
  run_checked format 64 "$lume" ls --format xml
  run_checked noname 64 "$lume" get
  run_checked storage 0 "$lume" config storage list
  out_is storage "VM Storage Locations:
  - home: $(jq -r .home "$E2E_DIR/sim.json") (default)"
}

# `lume run NAME` takes the VM's lock itself, has the simulator run the VM as its own, and blocks;
# `lume stop`'s SIGINT ends it (no handler) and the VM with it; a second `lume run` meets the lock
# (and Lume's lock cleanup is recorded); an HTTP stop signals the holder; a holder that dies takes
# its VM down.
scenario_lume_run_blocking() {
  sim_start --vm vm1 --vm vm2
  local lume config pid rc; lume="$(bin)/lume"
  config=$(vm_field vm1 config)
  # In the background of a script SIGINT would be ignored: started with it as a terminal gives it.
  bg_run() { exec env --default-signal=INT "$lume" run "$@"; }
  bg_run vm1 --no-display >"$E2E_DIR/run.out" 2>&1 &
  pid=$!
  wait_for 30 "vm1 to run" is_status vm1 running
  [ "$(sim_events_with run vm1 "by lume run (PID $pid)")" -eq 1 ] || fail "the run is not lume run's: $(cat "$SIM_LOG")"
  [ "$(holder_of "$config")" = "$pid" ] || fail "config.json is held by $(holder_of "$config"), not lume run ($pid)"
  kill -0 "$pid" || fail "lume run did not block"

  run_checked again 1 "$lume" run vm1
  out_has again "ERROR: VM already running (failed to acquire lock)"
  out_has again "INFO: Attempting emergency lock cleanup"
  err_is again "Error: Virtual machine already running: vm1"
  log_has '.source == "lume-cli" and .exit == -1 and (.note // "" | startswith("emergency lock cleanup"))' ||
    fail "the lock cleanup was not recorded"

  run_checked stop 0 "$lume" stop vm1
  out_has stop "Found process $pid holding lock on config file"
  out_has stop "VM stopped successfully via process termination"
  rc=0; wait "$pid" || rc=$?
  [ "$rc" -eq 130 ] || fail "lume run ended with $rc, not by SIGINT (130)"
  [ "$(vm_status vm1)" = stopped ] || fail "vm1 is $(vm_status vm1) after lume stop"
  log_has ".source == \"lume-cli\" and .note == \"SIGINT to PID $pid, which holds vm1\"" || fail "no SIGINT note"

  # An HTTP stop of a VM that a lume run process holds: the server signals that process.
  bg_run vm2 >"$E2E_DIR/run2.out" 2>&1 &
  pid=$!
  wait_for 30 "vm2 to run" is_status vm2 running
  curl -fsS -X POST "$LUME_METAL_LUME_URL/lume/vms/vm2/stop" >/dev/null
  [ "$(sim_events_with signal vm2 "the server sends SIGINT to PID $pid")" -eq 1 ] || fail "no signal event"
  rc=0; wait "$pid" || rc=$?
  [ "$rc" -eq 130 ] || fail "lume run ended with $rc after the HTTP stop"

  # The holder dies: the simulator sees it gone and takes the VM down.
  bg_run vm1 >"$E2E_DIR/run3.out" 2>&1 &
  pid=$!
  wait_for 30 "vm1 to run again" is_status vm1 running
  kill -KILL "$pid"
  wait "$pid" 2>/dev/null || true
  wait_for 30 "vm1 to go down with its holder" is_status vm1 stopped
  [ "$(sim_events stopped vm1)" -eq 2 ] || fail "no stopped event for the dead holder"
}

# `lume run --detach --log-file PATH` logs there; before 0.5.0 there is no --detach (exit 64).
# (Detaching itself, and a VM that does not exist: e2e_lume_stop_cli_owned.)
scenario_lume_detach_options() {
  sim_start --vm vm1
  local lume pid; lume="$(bin)/lume"
  run_checked detach 0 "$lume" run vm1 --detach --log-file "$E2E_DIR/vm1.log"
  out_has detach "Log: $E2E_DIR/vm1.log"
  pid=$(sed -n "s/^Started 'vm1' in the background (PID \([0-9]*\))\.$/\1/p" "$E2E_DIR/detach.out")
  [ -n "$pid" ] || fail "no Started line: $(cat "$E2E_DIR/detach.out")"
  wait_for 30 "vm1 to run" is_status vm1 running
  wait_for 30 "the detached run to log" grep -q "VM vm1 started" "$E2E_DIR/vm1.log"
  run_checked stop 0 "$lume" stop vm1
  wait_for 30 "the detached run to end" exited "$pid"
  LUME_SIM_VERSION=0.4.9 run_checked old 64 "$lume" run vm1 --detach
  err_has old "Error: Unknown option '--detach'"
  LUME_SIM_VERSION=0.4.9 run_checked oldlog 64 "$lume" run vm1 --log-file "$E2E_DIR/x.log"
}

# `lume stop` of a VM that does not exist, and of one nobody holds: exit 1 in Lume's words. (A
# holder that ignores SIGINT: e2e_lume_stop_cli_owned; the server as holder:
# e2e_lume_stop_ends_server.)
scenario_lume_stop_refusals() {
  sim_start --vm vm1
  run_checked ghost 1 "$(bin)/lume" stop ghost
  err_is ghost "Error: Virtual machine not found: ghost"
  run_checked idle 1 "$(bin)/lume" stop vm1
  err_is idle "Error: Virtual machine not running: vm1"
  [ "$(count_requests POST /stop)" -eq 0 ] || fail "the stand-in asked the server to stop"
}

# `lume clone` and `lume delete` through the server's routes: log lines and exit codes; delete
# asks first unless --force, and anything but y/yes cancels.
scenario_lume_clone_delete() {
  sim_start --vm vm1 --vm vm2
  local lume; lume="$(bin)/lume"
  run_checked clone 0 "$lume" clone vm1 vm9
  out_has clone "INFO: Cloning VM vm1 to vm9"
  out_has clone "INFO: VM cloned successfully"
  [ "$(vm_status vm9)" = stopped ] || fail "no vm9 after the clone"
  run_checked taken 1 "$lume" clone vm1 vm2
  err_is taken "Error: Virtual machine already exists: vm2"
  "$lume" delete vm9 <<<"n" >"$E2E_DIR/no.out" 2>&1 || fail "delete, answered n: $(cat "$E2E_DIR/no.out")"
  # The question has no newline of its own: on a terminal the answer ends its line.
  grep -qx "Are you sure you want to delete the virtual machine 'vm9'? \[y/N\] Deletion cancelled" "$E2E_DIR/no.out" ||
    fail "not asked, or not cancelled: $(cat "$E2E_DIR/no.out")"
  [ "$(vm_status vm9)" = stopped ] || fail "vm9 deleted without a yes"
  "$lume" delete vm9 <<<"yes" >"$E2E_DIR/yes.out" 2>&1 || fail "delete, answered yes: $(cat "$E2E_DIR/yes.out")"
  curl -sS "$LUME_METAL_LUME_URL/lume/vms/vm9" | grep -q "Virtual machine not found: vm9" || fail "vm9 still there"
  run_checked force 0 "$lume" delete vm2 --force
  ! grep -q "Are you sure" "$E2E_DIR/force.out" || fail "--force asked"
  run_checked ghost 1 "$lume" delete ghost --force
  err_is ghost "Error: Virtual machine not found: ghost"
}

# Every invocation of the stand-in is in the request log: argv, exit, pid.
scenario_lume_request_log() {
  sim_start --vm vm1
  run_checked get 0 "$(bin)/lume" get vm1 --format json
  run_checked ghost 1 "$(bin)/lume" get ghost
  log_has '.source == "lume-cli" and .argv == ["get", "vm1", "--format", "json"] and .exit == 0 and (.pid | type) == "number"' ||
    fail "get vm1 not recorded: $(cat "$SIM_LOG")"
  log_has '.source == "lume-cli" and .argv == ["get", "ghost"] and .exit == 1' || fail "get ghost not recorded"
}

# --exit-with-parent: the simulator ends as on SIGTERM once the process that started it is gone
# (its guests stopped, what it made removed).
scenario_exit_with_parent() {
  local pid address
  address=$(lm_test_address 2)
  # A parent that starts it, waits until it listens, and ends.
  bash -c '"$1" --port 0 --dir "$2/orphan" --info "$2/orphan.json" --vm x --boot-delay 0 --address-base "$3" \
             --metal-dir "$4" --exit-with-parent >"$2/orphan.out" 2>&1 &
           echo $! >"$2/orphan.pid"
           for _ in $(seq 1 600); do [ -s "$2/orphan.json" ] && exit 0; sleep 0.05; done; exit 1' \
    _ "$LM_SIM" "$E2E_DIR" "$address" "$LM_FAKE_METAL" || fail "the simulator did not start: $(cat "$E2E_DIR/orphan.out")"
  pid=$(cat "$E2E_DIR/orphan.pid")
  E2E_MORE_SIMS+=("$pid")
  wait_for 60 "the orphaned simulator to end" exited "$pid"
  [ ! -e "$E2E_DIR/orphan" ] || fail "the orphaned simulator left $E2E_DIR/orphan"
  [ ! -e "$E2E_DIR/orphan.json" ] || fail "the orphaned simulator left its info file"
}

# ==== Tart ========================================================================================

tart_vm_dir() { echo "$(jq -r .tart_home "$E2E_DIR/sim.json")/vms/$1"; }
export_tart() { export TART_HOME; TART_HOME=$(jq -r .tart_home "$E2E_DIR/sim.json"); }

# Tart's store, list and get in Tart's formats, an unknown VM, --version.
scenario_tart_list_get() {
  sim_start --tart-vm t1 --tart-vm t2 --tart-version 2.30.1
  export_tart
  local tart f; tart="$(bin)/tart"
  for f in config.json disk.img nvram.bin; do [ -f "$(tart_vm_dir t1)/$f" ] || fail "no $f in Tart's store"; done
  run_checked version 0 "$tart" --version
  out_is version 2.30.1
  run_checked list 0 "$tart" list --format json
  jq -e 'length == 2 and (map(.Name) == ["t1", "t2"]) and (.[0] | keys_unsorted == ["Source", "Name", "Disk", "Size", "Accessed", "Running", "State"])
         and .[0].State == "stopped" and .[0].Running == false and .[0].Source == "local"' "$E2E_DIR/list.out" >/dev/null ||
    fail "tart list --format json: $(cat "$E2E_DIR/list.out")"
  grep -q '^    "Name" : "t1",$' "$E2E_DIR/list.out" || fail "not JSONEncoder's pretty print: $(cat "$E2E_DIR/list.out")"
  run_checked quiet 0 "$tart" list -q
  out_is quiet "t1
t2"
  run_checked text 0 "$tart" list
  ! grep -q Running "$E2E_DIR/text.out" || fail "the text list shows Running: $(cat "$E2E_DIR/text.out")"
  run_checked get 0 "$tart" get t1 --format json
  jq -e 'keys_unsorted == ["OS", "CPU", "Memory", "Disk", "DiskFormat", "Size", "Display", "Running", "State"] and
         .State == "stopped" and (.Size | type) == "string"' "$E2E_DIR/get.out" >/dev/null ||
    fail "tart get --format json: $(cat "$E2E_DIR/get.out")"
  run_checked ghost 2 "$tart" get ghost
  err_is ghost 'the specified VM "ghost" does not exist'
  run_checked usage 64 "$tart" frobnicate
  # A directory without one of the three files is no VM.
  mkdir -p "$(tart_vm_dir half)"
  cp "$(tart_vm_dir t1)/config.json" "$(tart_vm_dir half)/"
  run_checked half 0 "$tart" list -q
  out_is half "t1
t2"
}

# `tart run` holds an fcntl lock on config.json and blocks; a second run meets it (exit 2); an
# unknown VM exits 1; --graphics and --no-graphics are exclusive; SIGINT powers the guest off;
# `tart ip` gives the address of a running VM; `tart stop` signals the holder; not running: exit 2.
scenario_tart_run_stop() {
  sim_start --tart-vm t1 --tart-vm t2
  export_tart
  local tart pid rc address; tart="$(bin)/tart"
  tart_ip() { "$tart" ip "$1" >/dev/null 2>&1; }
  run_checked ghost 1 "$tart" run ghost
  err_is ghost 'Error: the specified VM "ghost" does not exist'
  run_checked excl 64 "$tart" run t1 --graphics --no-graphics
  "$tart" run t1 --no-graphics >"$E2E_DIR/run.out" 2>&1 &
  pid=$!
  wait_for 30 "t1 to boot" tart_ip t1
  address=$("$tart" ip t1)
  [ "$address" = "$(jq -r '.vms[] | select(.name == "t1") | .address' "$E2E_DIR/sim.json")" ] || fail "tart ip: $address"
  # Cirrus Labs' image: the admin account, and the image's own shim.
  grep -q '^admin:x:[0-9]*:[0-9]*:[^:]*:/Users/admin:' "$(vm_field t1 dir)/etc/passwd" || fail "no admin account in t1"
  [ -f "$(vm_field t1 dir)/usr-local-lib/TartMetalCapabilities.dylib" ] || fail "no TartMetalCapabilities.dylib in t1"
  run_checked state 0 "$tart" get t1 --format json
  jq -e '.State == "running" and .Running == true' "$E2E_DIR/state.out" >/dev/null || fail "$(cat "$E2E_DIR/state.out")"
  run_checked again 2 "$tart" run t1
  err_is again 'VM "t1" is already running!'
  run_checked noip 1 "$tart" ip t2
  err_is noip "no IP address found, is your VM running?"
  run_checked stop 0 "$tart" stop t1
  rc=0; wait "$pid" || rc=$?
  [ "$rc" -eq 0 ] || fail "tart run ended with $rc after tart stop"
  grep -qx "Stopping VM..." "$E2E_DIR/run.out" || fail "tart run: $(cat "$E2E_DIR/run.out")"
  ! port22_open "$address" || fail "t1's guest still answers after the stop"
  run_checked idle 2 "$tart" stop t1
  err_is idle 'VM "t1" is not running'
  # The guest stops by itself (SIGUSR2 asks it): tart run ends with 0.
  "$tart" run t1 >"$E2E_DIR/run2.out" 2>&1 &
  pid=$!
  wait_for 30 "t1 to boot" tart_ip t1
  kill -USR2 "$pid"
  rc=0; wait "$pid" || rc=$?
  [ "$rc" -eq 0 ] || fail "tart run ended with $rc after SIGUSR2"
  grep -qx "Requesting guest OS to stop..." "$E2E_DIR/run2.out" || fail "$(cat "$E2E_DIR/run2.out")"
  grep -qx "guest has stopped the virtual machine" "$E2E_DIR/run2.out" || fail "$(cat "$E2E_DIR/run2.out")"
}

# `tart suspend`: SIGUSR1 to `tart run`, which saves the state (state.vzvmsave) and ends; "suspended";
# the next `tart run` restores that guest (the same boot) and removes the file; `tart stop` of a
# suspended VM deletes the snapshot instead, and the run after it boots afresh.
scenario_tart_suspend() {
  sim_start --tart-vm t1
  export_tart
  local tart boot; tart="$(bin)/tart"
  tart_ip() { "$tart" ip "$1" >/dev/null 2>&1; }
  state_is() { [ "$("$tart" get t1 --format json | jq -r .State)" = "$1" ]; }
  run_checked idle 2 "$tart" suspend t1
  err_is idle 'VM "t1" is not running'
  "$tart" run t1 --no-graphics >"$E2E_DIR/run.out" 2>&1 &
  wait_for 30 "t1 to boot" tart_ip t1
  wait_for 30 "t1's boot event" events_are boot t1 1
  boot=$(jq -r 'select(.event == "boot" and .vm == "t1") | .detail' "$SIM_LOG")
  run_checked suspend 0 "$tart" suspend t1
  wait_for 30 "t1 to be suspended" state_is suspended
  [ -f "$(tart_vm_dir t1)/state.vzvmsave" ] || fail "no state.vzvmsave"
  ! port22_open "$(vm_field t1 address)" || fail "a suspended guest answers"
  "$tart" run t1 --no-graphics >"$E2E_DIR/run2.out" 2>&1 &
  wait_for 30 "t1 to be restored" tart_ip t1
  wait_for 30 "t1's resume event" events_are resume t1 1
  [ "$(jq -r 'select(.event == "resume" and .vm == "t1") | .detail' "$SIM_LOG")" = "$boot" ] || fail "not the same guest"
  [ ! -e "$(tart_vm_dir t1)/state.vzvmsave" ] || fail "the snapshot outlived its restore"
  "$tart" suspend t1
  wait_for 30 "t1 to be suspended" state_is suspended
  run_checked discard 0 "$tart" stop t1
  state_is stopped || fail "still suspended after tart stop"
  "$tart" run t1 --no-graphics >"$E2E_DIR/run3.out" 2>&1 &
  wait_for 30 "t1 to boot afresh" events_are boot t1 2
  "$tart" stop t1
}

# `tart clone`: a new VM that keeps its source's ecid and gets a new macAddress (the source, a
# local VM, has the old one); `tart delete`; an unknown source exits 2.
scenario_tart_clone_delete() {
  sim_start --tart-vm t1
  export_tart
  local tart; tart="$(bin)/tart"
  run_checked clone 0 "$tart" clone t1 t9
  [ "$(jq -r .macAddress "$(tart_vm_dir t9)/config.json")" != "$(jq -r .macAddress "$(tart_vm_dir t1)/config.json")" ] ||
    fail "the clone kept the macAddress"
  [ "$(jq -r .ecid "$(tart_vm_dir t9)/config.json")" = "$(jq -r .ecid "$(tart_vm_dir t1)/config.json")" ] ||
    fail "the clone has an ecid of its own"
  jq -e '.ecid | length > 0' "$(tart_vm_dir t9)/config.json" >/dev/null || fail "the clone has no ecid"
  run_checked ghost 2 "$tart" clone ghost t8
  err_is ghost 'the specified VM "ghost" does not exist'
  run_checked delete 0 "$tart" delete t9
  [ ! -e "$(tart_vm_dir t9)" ] || fail "t9 still in Tart's store"
}

# Apple's limit of two running VMs counts every manager's: a Tart VM beyond it is refused.
scenario_tart_vm_limit() {
  sim_start --vm l1 --vm l2 --tart-vm t1
  export_tart
  vm_run l1
  vm_run l2
  run_checked limit 1 "$(bin)/tart" run t1
  err_has limit "The number of VMs exceeds the system limit (other running VMs: "
}

events_are() { [ "$(sim_events "$1" "$2")" -eq "$3" ]; } # EVENT VM COUNT

# ==== UTM ========================================================================================

# utmctl list/status/start/stop/ip-address/version in UTM's words; an identifier is a UUID or the
# whole name; --disposable is not for Apple VMs; one stop style only.
scenario_utmctl() {
  sim_start --utm-vm u1 --utm-vm u2 --utm-version 5.0.3 --utm-request-delay 0.1
  local utm uuid address; utm="$(bin)/utmctl"
  utm_is() { [ "$("$utm" status "$1")" = "$2" ]; }
  utm_has_ip() { [ -n "$("$utm" ip-address "$1")" ]; }
  run_checked version 0 "$utm" version
  out_is version 5.0.3
  run_checked list 0 "$utm" list
  head -n 1 "$E2E_DIR/list.out" | grep -qx 'UUID                                 Status   Name' || fail "$(cat "$E2E_DIR/list.out")"
  grep -Eq '^[0-9A-F-]{36} stopped  u1$' "$E2E_DIR/list.out" || fail "list: $(cat "$E2E_DIR/list.out")"
  uuid=$(awk '$3 == "u1" {print $1}' "$E2E_DIR/list.out")
  run_checked status 0 "$utm" status "$uuid"
  out_is status stopped
  run_checked ghost 1 "$utm" status u
  err_is ghost "Error: Virtual machine not found."
  run_checked dispo 0 "$utm" start u1 --disposable
  err_has dispo "Error from event: Operation not supported by the backend."
  run_checked styles 1 "$utm" stop u1 --force --request   # checked in run(): exit 1, not 64
  err_is styles "Error: You can only specify one of: --force, --kill, or --request"
  run_checked notrunning 0 "$utm" stop u1
  err_has notrunning "The virtual machine is not running."
  run_checked start 0 "$utm" start u1
  wait_for 30 "u1 to start" utm_is u1 started
  wait_for 30 "u1's address" utm_has_ip u1
  address=$("$utm" ip-address u1)
  [ "$address" = "$(jq -r '.vms[] | select(.name == "u1") | .address' "$E2E_DIR/sim.json")" ] || fail "ip-address: $address"
  # --request asks the guest, which shuts down after the request delay.
  run_checked request 0 "$utm" stop u1 --request
  wait_for 30 "u1 to stop" utm_is u1 stopped
  [ "$(sim_events request-stop u1)" -eq 1 ] || fail "no request-stop event"
  ! port22_open "$address" || fail "u1's guest still answers"
  run_checked kill 0 "$utm" stop u1 --kill   # --kill of a stopped VM: no error
}

# Before 5.0.3 ip-address is not supported for Apple VMs; without a GUI session every event fails
# (exit 0, the NOTE); a guest that ignores the request stays up.
scenario_utmctl_limits() {
  sim_start --utm-vm u1 --utm-version 4.6.4 --utm-ignore-request
  local utm; utm="$(bin)/utmctl"
  utm_is() { [ "$("$utm" status "$1")" = "$2" ]; }
  run_checked start 0 "$utm" start u1
  wait_for 30 "u1 to start" utm_is u1 started
  run_checked ip 0 "$utm" ip-address u1
  err_has ip "Error from event: Operation not supported by the backend."
  run_checked request 0 "$utm" stop u1 --request
  [ "$(sim_events request-ignored u1)" -eq 1 ] || fail "no request-ignored event"
  [ "$("$utm" status u1)" = started ] || fail "a guest that ignores the request stopped"
  run_checked force 0 "$utm" stop u1 --force
  wait_for 30 "u1 to stop" utm_is u1 stopped
  curl -fsS -X POST -d '{}' "$LUME_METAL_LUME_URL/_sim/vms/u1/utm-start" >/dev/null
  wait_for 30 "u1 to start" utm_is u1 started
  curl -fsS -X POST -d '{}' "$LUME_METAL_LUME_URL/_sim/vms/u1/power-off" >/dev/null
  wait_for 30 "u1 to stop" utm_is u1 stopped
}
scenario_utmctl_no_gui() {
  sim_start --utm-vm u1 --utm-no-gui
  run_checked list 0 "$(bin)/utmctl" list
  err_has list "Error from event: The operation couldn’t be completed. (OSStatus error -1743.)"
  err_has list "NOTE: utmctl does not work from SSH sessions or before logging in."
  [ ! -s "$E2E_DIR/list.out" ] || fail "list printed without a GUI session: $(cat "$E2E_DIR/list.out")"
  # A VM looked up by name: the lookup runs with error reporting off, so only "not found".
  run_checked status 1 "$(bin)/utmctl" status u1
  err_is status "Error: Virtual machine not found."
}

# `utmctl suspend` pauses (the guest frozen, "paused"), `start` resumes the same guest; with
# --save-state the state is saved (Data/vmstate) and outlives a power-off: the next start restores
# that guest -- the same boot, the GPU level it had -- and deletes it. Then a start boots afresh.
scenario_utmctl_suspend() {
  sim_start --utm-vm u1
  local utm docs address boot; utm="$(bin)/utmctl"
  docs=$(jq -r .utm_documents "$E2E_DIR/sim.json")
  address=$(vm_field u1 address)
  utm_is() { [ "$("$utm" status "$1")" = "$2" ]; }
  up() { port22_open "$address"; }
  run_checked idle 0 "$utm" suspend u1
  err_has idle "Error from event: The virtual machine is not running."
  run_checked start 0 "$utm" start u1
  wait_for 30 "u1 to boot" up
  wait_for 30 "u1's boot event" events_are boot u1 1 # logged once sshd answers
  boot=$(jq -r 'select(.event == "boot" and .vm == "u1") | .detail' "$SIM_LOG")
  run_checked pause 0 "$utm" suspend u1
  out_is pause ""
  utm_is u1 paused || fail "status: $("$utm" status u1)"
  ! up || fail "a paused guest answers"
  run_checked resume 0 "$utm" start u1
  wait_for 30 "u1 to resume" up
  wait_for 30 "u1's resume event" events_are resume u1 1
  utm_is u1 started || fail "status: $("$utm" status u1)"
  [ "$(jq -r 'select(.event == "resume" and .vm == "u1") | .detail' "$SIM_LOG")" = "$boot" ] || fail "not the same guest"
  run_checked save 0 "$utm" suspend --save-state u1
  [ -f "$docs/u1.utm/Data/vmstate" ] || fail "no saved state"
  # UTM's guard (vm.state == .started || stopMethod == .kill): a paused VM refuses --force and
  # --request, exit 0 as every event's error; --kill stops it.
  run_checked force_paused 0 "$utm" stop u1 --force
  err_has force_paused "Error from event: The virtual machine is not running."
  run_checked request_paused 0 "$utm" stop u1 --request
  err_has request_paused "Error from event: The virtual machine is not running."
  utm_is u1 paused || fail "a refused stop changed it: $("$utm" status u1)"
  run_checked off 0 "$utm" stop u1 --kill
  utm_is u1 stopped || fail "status: $("$utm" status u1)"
  [ -f "$docs/u1.utm/Data/vmstate" ] || fail "the power-off discarded the saved state"
  run_checked restore 0 "$utm" start u1
  wait_for 30 "u1 to be restored" up
  wait_for 30 "u1's second resume event" events_are resume u1 2
  [ ! -e "$docs/u1.utm/Data/vmstate" ] || fail "the saved state outlived its restore"
  [ "$(sim_events resume u1)" -eq 2 ] && [ "$(sim_events boot u1)" -eq 1 ] || fail "restored by a boot"
  "$utm" stop u1 --force
  run_checked cold 0 "$utm" start u1
  wait_for 30 "u1 to boot afresh" events_are boot u1 2
}

# --api-address (issue 36, item 10): two simulators on the same port, each on its own address of
# this test's /24, side by side (as Lume, 127.0.0.1 is the default); each answers with its own VMs.
scenario_sim_api_address() {
  local a b port url_b
  a=$(lm_test_address 250) b=$(lm_test_address 251)
  sim_start --vm a1 --api-address "$a"
  port=${LUME_METAL_LUME_URL##*:}
  [ "$LUME_METAL_LUME_URL" = "http://$a:$port" ] || fail "the first simulator's URL: $LUME_METAL_LUME_URL"
  "$LM_SIM" --port "$port" --api-address "$b" --vm b1 --dir "$E2E_DIR/sim2" --info "$E2E_DIR/sim2.json" \
    --boot-delay 0.2 --stop-delay 0.1 --metal-dir "$LM_FAKE_METAL" --address-base "$(lm_test_address 100)" \
    --exit-with-parent >"$E2E_DIR/sim2.out" 2>&1 &
  SIM2_PID=$!
  wait_for 30 "the second simulator did not start: $(cat "$E2E_DIR/sim2.out")" test -s "$E2E_DIR/sim2.json"
  url_b=$(jq -r .url "$E2E_DIR/sim2.json")
  [ "$url_b" = "http://$b:$port" ] || fail "the second simulator's URL: $url_b"
  [ "$(curl -fsS "$LUME_METAL_LUME_URL/lume/vms" | jq -r '[.[].name] | join(",")')" = a1 ] || fail "the first simulator's VMs"
  [ "$(curl -fsS "$url_b/lume/vms" | jq -r '[.[].name] | join(",")')" = b1 ] || fail "the second simulator's VMs"
  run_checked bad 64 "$LM_SIM" --api-address not-an-address
  err_has bad "--api-address not-an-address: expected an IPv4 address"
  kill -TERM "$SIM2_PID"
  wait "$SIM2_PID" || true
  SIM2_PID=
}

# Every utmctl command launches UTM.app (hidden) when it is not running: the app's own process,
# bin/UTM.app/Contents/MacOS/UTM, beside the utmctl bin/utmctl links to (Homebrew's layout).
scenario_utmctl_app() {
  sim_start --utm-vm u1 --utm-app-not-running
  local app pid; app=$(jq -r .utm_app "$E2E_DIR/sim.json")
  app_pid() { for p in /proc/[0-9]*; do [ "$(readlink "$p/exe" 2>/dev/null)" = "$app" ] && basename "$p"; done; true; }
  [ "$(readlink "$(bin)/utmctl")" = UTM.app/Contents/MacOS/utmctl ] || fail "bin/utmctl: $(readlink "$(bin)/utmctl")"
  [ -z "$(app_pid)" ] || fail "UTM.app runs before anything launched it"
  run_checked status 0 "$(bin)/utmctl" status u1
  out_is status stopped
  pid=$(app_pid)
  [ -n "$pid" ] || fail "utmctl did not launch UTM.app"
  "$(bin)/utmctl" list >/dev/null
  [ "$(app_pid)" = "$pid" ] || fail "UTM.app launched twice"
  curl -fsS -X POST -d '{}' "$LUME_METAL_LUME_URL/_sim/utm/quit" >/dev/null
  wait_for 30 "UTM.app to quit" test -z "$(app_pid)"
}

# A NAT guest: its traffic is not in the ARP cache (`ip-address` prints nothing, exit 0 with
# --utm-no-arp) and bootpd's lease file has its address by MAC (config.plist Network[0]).
scenario_utmctl_nat() {
  sim_start --utm-vm u1 --utm-no-arp
  local utm leases docs address; utm="$(bin)/utmctl"
  leases=$(jq -r .dhcpd_leases "$E2E_DIR/sim.json")
  docs=$(jq -r .utm_documents "$E2E_DIR/sim.json")
  address=$(vm_field u1 address)
  plistutil -i "$docs/u1.utm/config.plist" -o - -f xml | tr -d '\n\t ' |
    grep -q '<key>Network</key><array><dict><key>MacAddress</key><string>7A:6D:5F:00:00:00</string>' ||
    fail "no MacAddress: $(cat "$docs/u1.utm/config.plist")"
  "$utm" start u1
  wait_for 30 "u1 to boot" port22_open "$address"
  run_checked ip 0 "$utm" ip-address u1
  out_is ip ""
  grep -q "^	ip_address=$address\$" "$leases" && grep -q '^	hw_address=1,7a:6d:5f:0:0:0$' "$leases" &&
    grep -Eq '^	lease=0x[0-9a-f]+$' "$leases" || fail "lease file: $(cat "$leases")"
}

# UTM's bundles: config.plist with Backend Apple, Information Name and UUID, a Display (none with
# --utm-headless); a clone gets a new UUID; delete removes the bundle.
scenario_utmctl_bundles() {
  sim_start --utm-vm u1 --utm-headless h1
  local utm docs; utm="$(bin)/utmctl"
  docs=$(jq -r .utm_documents "$E2E_DIR/sim.json")
  # One line each, white space gone, as plistutil reads them.
  plistutil -i "$docs/u1.utm/config.plist" -o - -f xml | tr -d '\n\t ' >"$E2E_DIR/u1.xml"
  plistutil -i "$docs/h1.utm/config.plist" -o - -f xml | tr -d '\n\t ' >"$E2E_DIR/h1.xml"
  grep -q '<key>Backend</key><string>Apple</string>' "$E2E_DIR/u1.xml" || fail "no Apple backend: $(cat "$E2E_DIR/u1.xml")"
  grep -q '<key>Information</key><dict><key>Name</key><string>u1</string><key>UUID</key><string>' "$E2E_DIR/u1.xml" ||
    fail "no Information Name and UUID: $(cat "$E2E_DIR/u1.xml")"
  grep -q '<key>Display</key><array><dict>' "$E2E_DIR/u1.xml" || fail "u1 has no display: $(cat "$E2E_DIR/u1.xml")"
  grep -Eq '<key>Display</key>(<array/>|<array></array>)' "$E2E_DIR/h1.xml" || fail "the headless VM has a display: $(cat "$E2E_DIR/h1.xml")"
  run_checked clone 0 "$utm" clone u1 --name u9
  [ -f "$docs/u9.utm/config.plist" ] || fail "no clone bundle"
  uuid_of() { plistutil -i "$docs/$1.utm/config.plist" -o - -f xml | tr -d '\n\t ' | sed -n 's/.*<key>UUID<\/key><string>\([^<]*\)<.*/\1/p'; }
  [ "$(uuid_of u9)" != "$(uuid_of u1)" ] || fail "the clone kept the UUID"
  run_checked noname 64 "$utm" clone u1
  run_checked delete 0 "$utm" delete u9
  [ ! -e "$docs/u9.utm" ] || fail "u9's bundle left"
}

# ==== the guest's macOS tools (guest-sshd) =======================================================

# A guest of the fixture itself on the test's /24, with a key let in for its account.
GUEST_DIR=
guest_up() { # [guest-sshd start options...]
  GUEST_DIR=$E2E_DIR/guest
  ssh-keygen -q -t ed25519 -N '' -C standins -f "$E2E_DIR/key" </dev/null
  "$GUEST_SSHD" start --dir "$GUEST_DIR" --address "$(lm_test_address 2)" "$@" >/dev/null
  mkdir -p "$GUEST_DIR/home/.ssh"
  cp "$E2E_DIR/key.pub" "$GUEST_DIR/home/.ssh/authorized_keys"
}
SIM2_PID=
lm_test_before_exit() {
  [ -z "$GUEST_DIR" ] || "$GUEST_SSHD" stop --dir "$GUEST_DIR" >/dev/null 2>&1 || true
  [ -z "$SIM2_PID" ] || { kill -TERM "$SIM2_PID" 2>/dev/null; wait "$SIM2_PID" 2>/dev/null; } || true
  e2e_before_exit "$@"
}
# gsh NAME WANT_EXIT 'COMMAND': the command run by the guest's login shell over SSH.
gsh() {
  local name=$1 want=$2
  shift 2
  run_checked "$name" "$want" ssh -i "$E2E_DIR/key" -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
    -o LogLevel=ERROR "lume@$(lm_test_address 2)" "$@"
}

# The account's login shell is zsh with its default options (a glob that matches nothing is an
# error), PATH is macOS sshd's after the stand-ins, HOME is /Users/lume; --shell sh gives /bin/sh.
scenario_guest_shell() {
  guest_up
  gsh shell 0 'echo "$0|$HOME|$PATH"'
  out_is shell "zsh|/Users/lume|$GUEST_DIR/standins:/usr/bin:/bin:/usr/sbin:/sbin"
  gsh nomatch 1 'echo /tmp/*.no-such-glob'
  err_has nomatch "no matches found"
  gsh brew 0 'ls -A /opt/homebrew/bin /usr/local/bin'
  out_is brew "/opt/homebrew/bin:

/usr/local/bin:"
  "$GUEST_SSHD" stop --dir "$GUEST_DIR"
  GUEST_SSHD_SHELL=sh "$GUEST_SSHD" start --dir "$GUEST_DIR" --address "$(lm_test_address 2)" >/dev/null
  gsh sh 0 'echo "$0"'
  out_is sh "sh"
}

# sw_vers in macOS's format, the version from --os-version and a build number from it.
scenario_guest_sw_vers() {
  guest_up --os-version 15.1
  gsh all 0 sw_vers
  out_is all "$(printf 'ProductName:\t\tmacOS\nProductVersion:\t\t15.1\nBuildVersion:\t\t%s' "$(cat "$GUEST_DIR/build_version")")"
  gsh version 0 'sw_vers -productVersion'
  out_is version 15.1
  gsh build 0 'sw_vers -buildVersion'
  grep -Eqx '[0-9]+[A-Z][0-9]+' "$E2E_DIR/build.out" || fail "build version: $(cat "$E2E_DIR/build.out")"
  gsh bad 1 'sw_vers -frobnicate'
  err_has bad "usage: sw_vers"
  grep -qx 'sw_vers -productVersion' "$GUEST_DIR/calls.log" || fail "calls.log: $(cat "$GUEST_DIR/calls.log")"
}

# sysctl: kern.boottime with microseconds as macOS prints it, -n, the keys the host asks about,
# an unknown oid; guest-sshd boot-time changes what it says.
scenario_guest_sysctl() {
  guest_up --boot-time 1796000000.25
  gsh boot 0 'sysctl kern.boottime'
  grep -Eqx 'kern\.boottime: \{ sec = 1796000000, usec = 250000 \} [A-Z][a-z]{2} [A-Z][a-z]{2} [ 0-9]{2} [0-9:]{8} [0-9]{4}' \
    "$E2E_DIR/boot.out" || fail "kern.boottime: $(cat "$E2E_DIR/boot.out")"
  gsh n 0 'sysctl -n kern.boottime hw.model kern.ostype hw.optional.arm64'
  [ "$(sed -n 2,4p "$E2E_DIR/n.out")" = "$(printf 'VirtualMac2,1\nDarwin\n1')" ] || fail "sysctl -n: $(cat "$E2E_DIR/n.out")"
  gsh unknown 1 'sysctl kern.nothing'
  err_is unknown "sysctl: unknown oid 'kern.nothing'"
  "$GUEST_SSHD" boot-time --dir "$GUEST_DIR" 1796000100.000001
  gsh boot2 0 'sysctl -n kern.boottime'
  grep -q '^{ sec = 1796000100, usec = 1 }' "$E2E_DIR/boot2.out" || fail "after boot-time: $(cat "$E2E_DIR/boot2.out")"
}

# launchctl as launchd checks it: the caller's own gui/UID domain, an absolute plist the user owns
# and others cannot write; per-label state; a started agent really runs with its plist's
# arguments, environment and log paths; launchd's messages and exit codes; anything else refused.
# write_agent_plist LABEL: ~/Library/LaunchAgents/LABEL.plist in the guest, a RunAtLoad agent that
# prints "hello world" to ~/agent.out and sleeps.
write_agent_plist() {
  local plist=/Users/lume/Library/LaunchAgents/$1.plist
  gsh "write-$1" 0 "mkdir -p ~/Library/LaunchAgents && cat >$plist <<'EOF'
<?xml version=\"1.0\" encoding=\"UTF-8\"?>
<plist version=\"1.0\"><dict>
<key>Label</key><string>$1</string>
<key>ProgramArguments</key><array><string>/bin/sh</string><string>-c</string><string>echo \"\$GREETING \$1\"; exec sleep 600</string><string>sh</string><string>world</string></array>
<key>EnvironmentVariables</key><dict><key>GREETING</key><string>hello</string></dict>
<key>StandardOutPath</key><string>/Users/lume/agent.out</string>
<key>RunAtLoad</key><true/>
</dict></plist>
EOF
chmod 644 $plist"
}

# `launchctl print gui/UID/LABEL` in the guest shows LINE (a wait_for condition).
guest_print_has() {
  ssh -i "$E2E_DIR/key" -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR \
    "lume@$(lm_test_address 2)" "launchctl print gui/\$(id -u)/$1" 2>/dev/null | grep -qF "$2"
}

scenario_guest_launchctl() {
  guest_up
  local uid plist=/Users/lume/Library/LaunchAgents/dev.test.agent.plist
  gsh uid 0 'id -u'
  uid=$(cat "$E2E_DIR/uid.out")
  write_agent_plist dev.test.agent
  gsh lint 0 "plutil -lint $plist"
  out_is lint "$plist: OK"
  gsh otherdomain 1 "launchctl bootstrap gui/0 $plist"
  err_is otherdomain "Bootstrap failed: 1: Operation not permitted"
  gsh relative 2 "cd ~/Library/LaunchAgents && launchctl bootstrap gui/$uid dev.test.agent.plist"
  err_is relative "Bootstrap failed: 2: No such file or directory"
  gsh writable 5 "chmod 666 $plist && launchctl bootstrap gui/$uid $plist; rc=\$?; chmod 644 $plist; exit \$rc"
  err_has writable "Bootstrap failed: 5: Input/output error (path had bad ownership/permissions)"
  gsh boot 0 "launchctl bootstrap gui/$uid $plist"
  wait_for 30 "the agent's output" grep -qx 'hello world' "$GUEST_DIR/home/agent.out"
  gsh print 0 "launchctl print gui/$uid/dev.test.agent"
  out_has print "state = running"
  # What `brew services info` reads (Homebrew's formula_wrapper.rb): the log paths and the last exit.
  out_has print "stdout path = /Users/lume/agent.out"
  out_has print "last exit code = (never exited)"
  local pid; pid=$(sed -n 's/^[[:space:]]*pid = //p' "$E2E_DIR/print.out")
  [ -n "$pid" ] || fail "no pid: $(cat "$E2E_DIR/print.out")"
  gsh twice 5 "launchctl bootstrap gui/$uid $plist"
  gsh kick 0 "launchctl kickstart -k gui/$uid/dev.test.agent"
  gsh print2 0 "launchctl print gui/$uid/dev.test.agent"
  [ "$(sed -n 's/^[[:space:]]*pid = //p' "$E2E_DIR/print2.out")" != "$pid" ] || fail "kickstart -k kept pid $pid"
  gsh target 64 "launchctl kickstart dev.test.agent"
  err_has target "Unrecognized target specifier."
  gsh unknown 113 "launchctl print gui/$uid/dev.test.nothing"
  err_is unknown "Could not find service \"dev.test.nothing\" in domain for user gui: $uid"
  gsh setenv 64 "launchctl setenv A b"
  err_has setenv "'setenv' is not simulated"
  gsh out 0 "launchctl bootout gui/$uid/dev.test.agent"
  gsh print3 113 "launchctl print gui/$uid/dev.test.agent"
  gsh out2 3 "launchctl bootout gui/$uid/dev.test.agent"
  err_is out2 "Boot-out failed: 3: No such process"
  # A job that ended: `print` gives its exit code.
  gsh exiter 0 "mkdir -p ~/Library/LaunchAgents && cat >~/Library/LaunchAgents/dev.test.exit.plist <<'EOF'
<?xml version=\"1.0\" encoding=\"UTF-8\"?>
<plist version=\"1.0\"><dict>
<key>Label</key><string>dev.test.exit</string>
<key>ProgramArguments</key><array><string>/bin/sh</string><string>-c</string><string>exit 3</string></array>
<key>RunAtLoad</key><true/>
</dict></plist>
EOF
chmod 644 ~/Library/LaunchAgents/dev.test.exit.plist && launchctl bootstrap gui/$uid /Users/lume/Library/LaunchAgents/dev.test.exit.plist"
  wait_for 30 "launchd to say the job exited 3" guest_print_has dev.test.exit "last exit code = 3"
  # Every call recorded, arguments quoted like printf %q.
  grep -qx "launchctl bootstrap gui/0 ${plist}" "$GUEST_DIR/calls.log" || fail "calls.log: $(cat "$GUEST_DIR/calls.log")"
  gsh quoted 2 "launchctl bootstrap gui/$uid '/Users/lume/a b.plist'"
  grep -qxF "launchctl bootstrap gui/$uid /Users/lume/a\\ b.plist" "$GUEST_DIR/calls.log" || fail "calls.log: $(cat "$GUEST_DIR/calls.log")"
  # A boot starts with nothing loaded.
  gsh boot2 0 "launchctl bootstrap gui/$uid $plist"
  "$GUEST_SSHD" stop --dir "$GUEST_DIR"
  "$GUEST_SSHD" start --dir "$GUEST_DIR" --address "$(lm_test_address 2)" >/dev/null
  gsh print4 113 "launchctl print gui/$uid/dev.test.agent"
}

# launchd's slow bootout (reference/vm-managers-and-bench.md, "launchd"): for the guest's drain
# time after `bootout` the label stays -- `print` shows it (exit 0), `bootstrap` fails with 5,
# `kickstart` with 37, another `bootout` is accepted -- and then it is gone (`print` 113) and can
# be bootstrapped again. The drain is read at each bootout (guest-sshd launchd-drain).
scenario_guest_launchctl_drain() {
  guest_up --launchd-drain 30
  local uid plist=/Users/lume/Library/LaunchAgents/dev.test.slow.plist
  [ "$(cat "$GUEST_DIR/launchd_drain")" = 30 ] || fail "drain: $(cat "$GUEST_DIR/launchd_drain")"
  gsh uid 0 'id -u'
  uid=$(cat "$E2E_DIR/uid.out")
  write_agent_plist dev.test.slow
  gsh boot 0 "launchctl bootstrap gui/$uid $plist"
  wait_for 30 "the agent's output" grep -qx 'hello world' "$GUEST_DIR/home/agent.out"
  gsh print 0 "launchctl print gui/$uid/dev.test.slow"
  local pid; pid=$(sed -n 's/^[[:space:]]*pid = //p' "$E2E_DIR/print.out")
  [ -n "$pid" ] || fail "no pid: $(cat "$E2E_DIR/print.out")"
  gsh out 0 "launchctl bootout gui/$uid/dev.test.slow"
  # Draining (30 s from the bootout: far more than these few commands take).
  gsh drain-print 0 "launchctl print gui/$uid/dev.test.slow"
  out_has drain-print "state = not running"
  gsh drain-boot 5 "launchctl bootstrap gui/$uid $plist"
  err_is drain-boot "Bootstrap failed: 5: Input/output error"
  gsh drain-kick 37 "launchctl kickstart -k gui/$uid/dev.test.slow"
  err_is drain-kick "Could not kickstart service \"dev.test.slow\": 37: Operation already in progress"
  gsh drain-out 0 "launchctl bootout gui/$uid/dev.test.slow"
  gsh alive 1 "kill -0 $pid"
  # A drain of 1 s: gone once it is over, and loaded again.
  "$GUEST_SSHD" launchd-drain --dir "$GUEST_DIR" 1
  write_agent_plist dev.test.quick
  gsh boot2 0 "launchctl bootstrap gui/$uid /Users/lume/Library/LaunchAgents/dev.test.quick.plist"
  gsh out2 0 "launchctl bootout gui/$uid/dev.test.quick"
  gone() { ! ssh -i "$E2E_DIR/key" -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
    -o LogLevel=ERROR "lume@$(lm_test_address 2)" "launchctl print gui/$uid/dev.test.quick" >/dev/null 2>&1; }
  wait_for 30 "launchd to let go of dev.test.quick" gone
  gsh gone 113 "launchctl print gui/$uid/dev.test.quick"
  gsh boot3 0 "launchctl bootstrap gui/$uid /Users/lume/Library/LaunchAgents/dev.test.quick.plist"
  # Drain 0 (the default): gone at once.
  "$GUEST_SSHD" launchd-drain --dir "$GUEST_DIR" 0
  gsh out3 0 "launchctl bootout gui/$uid/dev.test.quick"
  gsh gone2 113 "launchctl print gui/$uid/dev.test.quick"
  run_checked bad 1 "$GUEST_SSHD" launchd-drain --dir "$GUEST_DIR" soon
  err_has bad "the launchd drain must be seconds"
}

# plutil: only -lint, through plistutil.
scenario_guest_plutil() {
  guest_up
  gsh good 0 "printf '<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\"><dict/></plist>\n' >~/good.plist && plutil -lint ~/good.plist"
  out_is good "/Users/lume/good.plist: OK"
  gsh bad 1 "printf 'not a plist' >~/bad.plist && plutil -lint ~/bad.plist"
  out_is bad "/Users/lume/bad.plist: Property List error: could not parse"
  gsh missing 1 "plutil -lint ~/none.plist"
  out_is missing "/Users/lume/none.plist: file does not exist or is not readable or is not a regular file"
  gsh convert 1 "plutil -convert xml1 ~/good.plist"
  err_has convert "only -lint is supported"
}

# csrutil status in macOS's words from --sip, read at each call; changes need Recovery.
scenario_guest_csrutil() {
  guest_up --sip disabled
  gsh off 0 'csrutil status'
  out_is off "System Integrity Protection status: disabled."
  echo enabled >"$GUEST_DIR/sip"
  gsh on 0 'csrutil status'
  out_is on "System Integrity Protection status: enabled."
  echo custom >"$GUEST_DIR/sip"
  gsh custom 0 'csrutil status'
  out_has custom "System Integrity Protection status: unknown (Custom Configuration)."
  out_has custom "Filesystem Protections: disabled"
  gsh change 1 'csrutil disable'
  err_is change "csrutil: failed to modify system integrity configuration. This tool needs to be executed from the Recovery OS."
  gsh usage 64 'csrutil frobnicate'
}

# codesign -dv --entitlements - as macOS 12 and later print it (the signature on stderr, the
# entitlements on stdout as [Dict], or XML with --xml) for what `guest-sshd sign` signed, an ad-hoc
# linker signature for any other binary, "not signed at all" for a script; only display is
# simulated. And dyld's rule, kept by the machine's loader: a program signed with the hardened
# runtime without the dyld-environment entitlement never gets the shim (nor passes it on), one with
# the entitlement does.
scenario_guest_codesign() {
  : "${LM_METAL_SERVER:?LM_METAL_SERVER: the metal-server fixture}" "${LM_SHIM_SO:?LM_SHIM_SO: the Linux shim}"
  guest_up --metal-dir "$LM_FAKE_METAL"
  local bin=$GUEST_DIR/opt/homebrew/bin allow=com.apple.security.cs.allow-dyld-environment-variables
  local nolv=com.apple.security.cs.disable-library-validation
  install -m 755 "$LM_METAL_SERVER" "$bin/plain"
  install -m 755 "$LM_METAL_SERVER" "$bin/hardened"
  install -m 755 "$LM_METAL_SERVER" "$bin/entitled"
  install -m 644 "$LM_SHIM_SO" "$GUEST_DIR/home/shim.so"
  printf '#!/bin/sh\necho hi\n' >"$GUEST_DIR/home/job.sh"
  "$GUEST_SSHD" sign --options runtime --team ABCDE12345 "$bin/hardened"
  "$GUEST_SSHD" sign --options runtime --team ABCDE12345 --entitlement "$allow" --entitlement "$nolv" "$bin/entitled"

  gsh plain 0 'codesign -dv --entitlements - /opt/homebrew/bin/plain'
  err_has plain "Executable=/opt/homebrew/bin/plain"
  err_has plain "flags=0x20002(adhoc,linker-signed) hashes="
  err_has plain "TeamIdentifier=not set"
  out_is plain ""
  gsh hard 0 'codesign -dv --entitlements - /opt/homebrew/bin/hardened'
  err_has hard "flags=0x10000(runtime) hashes="
  err_has hard "TeamIdentifier=ABCDE12345"
  err_has hard "Runtime Version="
  out_is hard ""
  gsh ent 0 'codesign -dv --entitlements - /opt/homebrew/bin/entitled'
  out_is ent "$(printf '[Dict]\n\t[Key] %s\n\t[Value]\n\t\t[Bool] true\n\t[Key] %s\n\t[Value]\n\t\t[Bool] true' "$allow" "$nolv")"
  gsh xml 0 'codesign -d --entitlements - --xml /opt/homebrew/bin/entitled'
  out_has xml "<key>$allow</key>"
  out_has xml '<plist version="1.0">'
  gsh script 1 'codesign -dv job.sh'
  err_is script "job.sh: code object is not signed at all"
  gsh sign 1 'codesign -s - job.sh'
  err_is sign "job.sh: code object is not signed at all"
  gsh usage 64 'codesign job.sh'
  grep -q '^codesign -dv --entitlements - /opt/homebrew/bin/plain$' "$GUEST_DIR/calls.log" || fail "calls.log: $(cat "$GUEST_DIR/calls.log")"

  # The loader: the hardened program and its runner stay stock, the entitled one and its runner
  # (LUME_METAL_INHERIT=1) are widened, the plain one too.
  local env='LD_PRELOAD=$HOME/shim.so LUME_METAL_APPLE_FAMILY_MAX=1009 LUME_METAL_INHERIT=1'
  gsh loader 0 "$env /opt/homebrew/bin/hardened; $env /opt/homebrew/bin/entitled; $env /opt/homebrew/bin/plain"
  out_is loader "$(printf '%s\n' 'runner: apple7=0 apple9=0' 'server: runner exited 0' 'runner: apple7=1 apple9=1' \
    'server: runner exited 0' 'runner: apple7=1 apple9=1' 'server: runner exited 0')"

  # Re-signing a copy, as --resign-copy does (reference/metal.md, 2026-12-02): ad hoc, the hardened
  # runtime kept, the dyld entitlements granted; the copy then gets the shim, the original not.
  local plist='<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict>'
  plist+="<key>$allow</key><true/><key>$nolv</key><true/><key>com.example.off</key><false/></dict></plist>"
  printf '%s' "$plist" >"$GUEST_DIR/home/e.plist"
  printf '%s' '<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict></dict></plist>' >"$GUEST_DIR/home/none.plist"
  gsh copy 0 'cp -p /opt/homebrew/bin/hardened copy'
  gsh again 1 'codesign --sign - --options runtime --entitlements e.plist copy'
  err_is again "copy: is already signed"
  gsh nodyld 64 'codesign --force --sign - --options runtime --entitlements none.plist copy'
  gsh resign 0 'codesign --force --sign - --options runtime --entitlements e.plist copy'
  gsh shown 0 'codesign -dv --entitlements - copy'
  err_has shown "flags=0x10002(adhoc,runtime) hashes="
  err_has shown "Signature=adhoc"
  err_has shown "TeamIdentifier=not set"
  out_is shown "$(printf '[Dict]\n\t[Key] %s\n\t[Value]\n\t\t[Bool] true\n\t[Key] %s\n\t[Value]\n\t\t[Bool] true' "$allow" "$nolv")"
  [ "$(grep -c '^#lume-sim-codesign$' "$GUEST_DIR/home/copy")" -eq 1 ] || fail "the old signature is still in the copy"
  gsh resigned 0 "$env ./copy; $env /opt/homebrew/bin/hardened"
  out_is resigned "$(printf '%s\n' 'runner: apple7=1 apple9=1' 'server: runner exited 0' 'runner: apple7=0 apple9=0' \
    'server: runner exited 0')"
}

"scenario_${1:?usage: standins.sh SCENARIO}"
echo "ok: standins $1"
