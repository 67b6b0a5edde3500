#!/usr/bin/env bash
# `run` behaves like `tart exec` (issue 26, item 1): run_exec.sh NAME, on zsh guests with the
# guest's workload stand-ins (tests/support/guest-sshd: read-input, tty-check, process-tree).
# Every lume-metal here runs under a hang guard (timeout): before this, stdin was never closed,
# so `echo x | lume-metal run vm1 -- cat` hung until the job's own timeout.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

GUARD=${LM_RUN_GUARD:-$LM_HANG_GUARD_FLOOR} # seconds; a hang guard, not a time target
TMUX_SOCK= TMUX_PID=
lm_test_before_exit() {
  [ -z "$TMUX_PID" ] || kill -KILL "$TMUX_PID" 2>/dev/null || true
  e2e_before_exit "$@"
}
pane() { tmux -S "$TMUX_SOCK" capture-pane -p -t r 2>/dev/null | grep -v '^$' || true; }
pane_has() { pane | grep -q -- "$1"; }

setup() {
  sim_start --vm vm1
  lm_json "$E2E_DIR/e.json" enable vm1
  expect_rc 0 "$E2E_DIR/e.json"
}

rc_is() { [ "$RUN_RC" -eq "$2" ] || fail "$1: exit $RUN_RC, expected $2: $(cat "$E2E_DIR/$1.out" "$E2E_DIR/$1.err")"; }
out_has() { grep -q -- "$2" "$E2E_DIR/$1.out" || fail "$1: no '$2' on stdout: $(cat "$E2E_DIR/$1.out" "$E2E_DIR/$1.err")"; }
err_has() { grep -q -- "$2" "$E2E_DIR/$1.err" || fail "$1: no '$2' on stderr: $(cat "$E2E_DIR/$1.out" "$E2E_DIR/$1.err")"; }
# guarded NAME INPUT ARGS...: lume-metal run ARGS with INPUT as its stdin, under the hang guard.
guarded() {
  local name=$1 input=$2
  shift 2
  set +e
  timeout -s KILL "$GUARD" "$LM_BIN" run "$@" <"$input" >"$E2E_DIR/$name.out" 2>"$E2E_DIR/$name.err"
  RUN_RC=$?
  set -e
  [ "$RUN_RC" -ne 137 ] || fail "$name: lume-metal run $* hung (killed after $GUARD s): $(cat "$E2E_DIR/$name.err")"
}
runs_left() { find "$(guest_home vm1)/.local/share/lume-metal/activation" -mindepth 1 2>/dev/null | wc -l; }

# stdin reaches the workload and is closed at its end: a pipe, /dev/null, a file larger than the
# SSH channel's window (2 MB) while the workload echoes it back (both directions at once), and an
# endless input to a workload that never reads it.
scenario_run_stdin() {
  setup
  printf 'hello\nworld\n' >"$E2E_DIR/small"
  guarded pipe "$E2E_DIR/small" vm1 -- read-input
  rc_is pipe 0
  out_has pipe '^read-input: 12 bytes$'
  guarded null /dev/null vm1 -- read-input
  rc_is null 0
  out_has null '^read-input: 0 bytes$'
  head -c 3000000 /dev/urandom >"$E2E_DIR/big"
  guarded big "$E2E_DIR/big" vm1 -- read-input
  rc_is big 0
  out_has big '^read-input: 3000000 bytes$'
  guarded echo "$E2E_DIR/big" vm1 -- cat
  rc_is echo 0
  cmp -s "$E2E_DIR/big" "$E2E_DIR/echo.out" || fail "cat gave back $(wc -c <"$E2E_DIR/echo.out") other bytes"
  # An input that never ends, to a workload that never reads it: the run ends with the workload.
  set +e
  yes | timeout -s KILL "$GUARD" "$LM_BIN" run vm1 -- sh -c 'echo never read' >"$E2E_DIR/yes.out" 2>"$E2E_DIR/yes.err"
  RUN_RC=${PIPESTATUS[1]}
  set -e
  rc_is yes 0
  out_has yes '^never read$'
  [ "$(runs_left)" -eq 0 ] || fail "a run's record directory was left"
}

# The workload's exit status is lume-metal's; a signal's death is 128 + N, as a shell reports it.
scenario_run_status() {
  setup
  guarded seven /dev/null vm1 -- sh -c 'exit 7'
  rc_is seven 7
  guarded term /dev/null vm1 -- sh -c 'kill -s TERM $$'
  rc_is term 143
  guarded segv /dev/null vm1 -- sh -c 'kill -s SEGV $$'
  rc_is segv 139
  guarded zero /dev/null vm1 -- sh -c 'exit 0'
  rc_is zero 0
  lm_json_first "$E2E_DIR/seven.json" run vm1 -- sh -c 'exit 7' </dev/null
  expect_rc 7 "$E2E_DIR/seven.json"
}

# in_terminal NAME COMMAND: COMMAND run by script(1) on a terminal of 101 x 33 with TERM
# xterm-e2e; what the terminal showed in NAME.out (carriage returns dropped).
in_terminal() {
  local name=$1
  set +e
  TERM=xterm-e2e timeout -s KILL "$GUARD" script -qec "stty cols 101 rows 33; $2" /dev/null </dev/null \
    >"$E2E_DIR/$name.raw" 2>"$E2E_DIR/$name.err"
  RUN_RC=$?
  set -e
  [ "$RUN_RC" -ne 137 ] || fail "$name: hung (killed after $GUARD s): $(cat "$E2E_DIR/$name.raw")"
  tr -d '\r' <"$E2E_DIR/$name.raw" >"$E2E_DIR/$name.out"
}

# -t: a pseudo-terminal in the guest with this terminal's size and TERM, this terminal raw while
# the workload runs and restored after; -i at a terminal gets one too; at a terminal without
# either the workload reads EOF at once (as tart exec without -i) and has no terminal.
scenario_run_tty() {
  setup
  local q; q=$(printf '%q' "$LM_BIN")
  in_terminal t "stty -g >$E2E_DIR/before; $q run -t vm1 -- tty-check; echo rc=\$?; stty -g >$E2E_DIR/after"
  out_has t '^tty-check: stdin=tty stdout=tty size=33 101 term=xterm-e2e$'
  out_has t '^rc=0$'
  cmp -s "$E2E_DIR/before" "$E2E_DIR/after" || fail "the terminal was not restored: $(cat "$E2E_DIR/before") -> $(cat "$E2E_DIR/after")"
  in_terminal i "$q run -i vm1 -- tty-check"
  out_has i '^tty-check: stdin=tty stdout=tty size=33 101 term=xterm-e2e$'
  in_terminal plain "$q run vm1 -- tty-check; $q run vm1 -- read-input"
  out_has plain '^tty-check: stdin=no stdout=no size=none term='
  out_has plain '^read-input: 0 bytes$'
  # A window change reaches the guest's terminal: lume-metal in a tmux window of its own, resized.
  TMUX_SOCK="$E2E_DIR/tmux.sock"
  tmux -S "$TMUX_SOCK" new-session -d -s r -x 101 -y 33 "$q run -t vm1 -- tty-check --watch; echo rc=\$?; sleep 600"
  TMUX_PID=$(tmux -S "$TMUX_SOCK" display -p '#{pid}')
  wait_for 30 "the workload in tmux" pane_has '^tty-check: watching, size 33 101'
  tmux -S "$TMUX_SOCK" resize-window -t r -x 120 -y 40
  wait_for 30 "the window change" pane_has '^tty-check: resized to 40 120'
  wait_for 30 "run's end in tmux" pane_has '^rc=0$'
  # Off a terminal -t still gives the guest one (80 x 24), and nothing local is made raw.
  guarded piped /dev/null -t vm1 -- tty-check
  rc_is piped 0
  grep -q '^tty-check: stdin=tty stdout=tty size=24 80 term=' <(tr -d '\r' <"$E2E_DIR/piped.out") ||
    fail "-t from a pipe: $(cat "$E2E_DIR/piped.out" "$E2E_DIR/piped.err")"
}

# processes_of FILE: PARENT and CHILD, the PIDs process-tree recorded in FILE.
processes_of() { read -r _ PARENT _ CHILD <"$1"; }

# SIGINT, SIGTERM and SIGHUP to lume-metal stop the workload's whole process group in the guest:
# process-tree's parent and its child (which ignores SIGINT, as a background child of sh does).
# After SIGINT the child is killed after the grace; SIGTERM and SIGHUP end both at once. The test
# reads the PIDs the stand-in recorded and looks at the process table itself once lume-metal has
# exited: nothing is left, and lume-metal ended by the signal it got. An error of lume-metal's own
# stops the workload as well.
scenario_run_cancel() {
  setup
  local sig pid file want
  for sig in INT TERM HUP; do
    file=$(guest_home vm1)/tree-$sig
    set +e
    "$LM_BIN" run vm1 -- process-tree "/Users/lume/tree-$sig" </dev/null >"$E2E_DIR/$sig.out" 2>"$E2E_DIR/$sig.err" &
    pid=$!
    set -e
    wait_for 60 "process-tree did not start: $(cat "$E2E_DIR/$sig.err")" test -s "$file"
    processes_of "$file"
    ! exited "$PARENT" && ! exited "$CHILD" || fail "$sig: process-tree's processes are not running"
    kill -s "$sig" "$pid"
    wait_for 60 "lume-metal did not end after SIG$sig: $(cat "$E2E_DIR/$sig.err")" exited "$pid"
    set +e
    wait "$pid"
    RUN_RC=$?
    set -e
    case $sig in INT) want=130 ;; TERM) want=143 ;; HUP) want=129 ;; esac
    rc_is "$sig" "$want"
    exited "$PARENT" || fail "SIG$sig: the workload's process $PARENT is still running in the guest"
    exited "$CHILD" || fail "SIG$sig: the workload's child $CHILD is still running in the guest"
    if [ "$sig" = INT ]; then
      err_has INT "did not end within 5 s of SIGINT; its process group ([0-9]*) was killed (SIGKILL), nothing of it is left"
    else
      err_has "$sig" "SIG$sig went to the workload's process group ([0-9]*); it ended (exit $want), nothing of it is left"
    fi
    # As after ^C to `tart exec`: one line of ours, no lesson on exit codes.
    [ "$(grep -c '^lume-metal: ' "$E2E_DIR/$sig.err")" -eq 1 ] && ! grep -q '^hint: ' "$E2E_DIR/$sig.err" ||
      fail "SIG$sig: more than one line of lume-metal's: $(cat "$E2E_DIR/$sig.err")"
  done
  # An error of lume-metal's own while the workload runs (its input cannot be read: a directory)
  # stops the workload too: exit 1, the error, and no process-tree left.
  guarded err / vm1 -- process-tree /Users/lume/tree-err
  rc_is err 1
  err_has err "reading the input for the guest command: Is a directory; the workload was stopped (its process group got SIGTERM)"
  ! pgrep -f "process-tree /Users/lume/tree-err" >/dev/null || fail "process-tree still runs after lume-metal's error"
  if [ -s "$(guest_home vm1)/tree-err" ]; then
    processes_of "$(guest_home vm1)/tree-err"
    exited "$PARENT" && exited "$CHILD" || fail "process-tree's processes outlived lume-metal's error"
  fi
  [ "$(runs_left)" -eq 0 ] || fail "a stopped run's record directory was left"
}

# A killed run leaves nothing behind (issue 36, item 5): lume-metal SIGKILLed while its workload
# runs leaves the run's record folder (the group file, maybe records) in the guest. Once that
# workload is gone the next run removes the folder; rollback removes another such folder as
# lume-metal's own (never "not lume-metal's"), and the guest's home is then as before the first
# enable.
tree_of() { (cd "$1" && find . -mindepth 1 -printf '%y %m %P %l\n' | sort); }
killed_run() { # NAME: a run of process-tree killed with SIGKILL, then its workload ended
  local file pid
  file=$(guest_home vm1)/$1
  "$LM_BIN" run vm1 -- process-tree "/Users/lume/$1" </dev/null >"$E2E_DIR/$1.out" 2>"$E2E_DIR/$1.err" &
  pid=$!
  wait_for 60 "process-tree did not start: $(cat "$E2E_DIR/$1.err")" test -s "$file"
  kill -KILL "$pid"
  wait "$pid" 2>/dev/null || true
  processes_of "$file"
  kill -KILL "$PARENT" "$CHILD" 2>/dev/null || true
  wait_for 30 "the killed run's workload to end" exited "$PARENT"
  wait_for 30 "the killed run's workload's child to end" exited "$CHILD"
  rm -f "$file" "$file.child"
  [ -n "$(ls -A "$(guest_home vm1)/.local/share/lume-metal/activation")" ] || fail "the killed run left nothing to clean up"
}
scenario_run_killed() {
  sim_start --vm vm1
  vm_run vm1
  local home before after
  home=$(guest_home vm1)
  before=$(tree_of "$home")
  lm_json "$E2E_DIR/e.json" enable vm1
  expect_rc 0 "$E2E_DIR/e.json"
  killed_run k1
  guarded next /dev/null vm1 -- true
  rc_is next 0
  [ "$(runs_left)" -eq 0 ] || fail "the next run left the killed run's folder: $(find "$home/.local/share/lume-metal/activation")"
  killed_run k2
  lm_json "$E2E_DIR/r.json" rollback vm1
  expect_rc 0 "$E2E_DIR/r.json"
  ! grep -q "not lume-metal's" "$E2E_DIR/r.json" || fail "rollback called lume-metal's own leftovers not its own: $(cat "$E2E_DIR/r.json")"
  after=$(tree_of "$home")
  [ "$after" = "$before" ] || fail "the guest's home is not as before the first enable: $(diff <(echo "$before") <(echo "$after"))"
}

# Output that cannot be written (issue 36, item 1): with SIGPIPE ignored, as Python's subprocess,
# .NET and Node-based runners leave it, a reader that goes away makes every write EPIPE; run
# stopped the workload never and read its output forever. Now the first failed write stops the
# workload as SIGTERM does and the run fails saying so; a closed stdout is refused at once.
scenario_run_epipe() {
  setup
  local file; file=$(guest_home vm1)/epipe
  # shellcheck disable=SC2016 # the guest's shell expands it
  local writer='read -r p _ </proc/self/stat; echo "$p" >/Users/lume/epipe.tmp; mv /Users/lume/epipe.tmp /Users/lume/epipe; exec yes'
  set +e
  ( trap '' PIPE
    timeout -s KILL "$GUARD" "$LM_BIN" run vm1 -- sh -c "$writer" </dev/null 2>"$E2E_DIR/epipe.err"
    echo $? >"$E2E_DIR/epipe.rc" ) | head -c 1000 >/dev/null
  set -e
  RUN_RC=$(cat "$E2E_DIR/epipe.rc")
  [ "$RUN_RC" -ne 137 ] || fail "run with a broken pipe hung (killed after $GUARD s): $(cat "$E2E_DIR/epipe.err")"
  [ "$RUN_RC" -eq 1 ] || fail "run with a broken pipe: exit $RUN_RC, expected 1: $(cat "$E2E_DIR/epipe.err")"
  grep -q "writing the workload's output to stdout failed (Broken pipe), so the run was stopped: SIGTERM went to the workload's process group" \
    "$E2E_DIR/epipe.err" || fail "run with a broken pipe: $(cat "$E2E_DIR/epipe.err")"
  [ -s "$file" ] || fail "the writer never started: $(cat "$E2E_DIR/epipe.err")"
  exited "$(cat "$file")" || fail "the workload $(cat "$file") still runs in the guest after the broken pipe"
  [ "$(runs_left)" -eq 0 ] || fail "the stopped run's record directory was left"
  # A closed stdout: refused before anything runs in the guest.
  set +e
  timeout -s KILL "$GUARD" "$LM_BIN" run vm1 -- sh -c 'echo ran >/Users/lume/closed' </dev/null >&- 2>"$E2E_DIR/closed.err"
  RUN_RC=$?
  set -e
  [ "$RUN_RC" -eq 1 ] || fail "run with stdout closed: exit $RUN_RC, expected 1: $(cat "$E2E_DIR/closed.err")"
  grep -q "stdout is closed" "$E2E_DIR/closed.err" || fail "run with stdout closed: $(cat "$E2E_DIR/closed.err")"
  [ ! -e "$(guest_home vm1)/closed" ] || fail "run with stdout closed started the workload"
}

# SIGTERM to a background lume-metal run (PID) whose stderr is $E2E_DIR/NAME.err: waited for,
# its status in RUN_RC, which must be 143 (it ends by the signal, as the workload did).
term_run() { # NAME PID
  kill -s TERM "$2"
  wait_for 60 "lume-metal did not end after SIGTERM: $(cat "$E2E_DIR/$1.err")" exited "$2"
  set +e
  wait "$2"
  RUN_RC=$?
  set -e
  rc_is "$1" 143
}

# A stop finds what left the group (issue 36, item 6): the workload starts a child that calls
# setsid (a session and group of its own, a sleep loop in it), and the run is stopped with
# SIGTERM. The group's signal never reaches that child; the stop finds it as the workload's
# descendant, read before any signal, and ends it too. Once lume-metal has exited the child is
# gone, and the message names it among what was stopped.
scenario_run_setsid() {
  setup
  local file pid
  file=$(guest_home vm1)/setsid-child
  # shellcheck disable=SC2016 # the guest's shell expands it
  local workload='setsid sh -c '\''read -r p _ </proc/self/stat; echo "$p" >/Users/lume/setsid-child.tmp; mv /Users/lume/setsid-child.tmp /Users/lume/setsid-child; while :; do sleep 1; done'\'' & wait'
  set +e
  "$LM_BIN" run vm1 -- sh -c "$workload" </dev/null >"$E2E_DIR/setsid.out" 2>"$E2E_DIR/setsid.err" &
  pid=$!
  set -e
  wait_for 60 "the setsid child did not start: $(cat "$E2E_DIR/setsid.err")" test -s "$file"
  CHILD=$(cat "$file")
  ! exited "$CHILD" || fail "the setsid child $CHILD is not running"
  [ "$(awk '{print $6}' "/proc/$CHILD/stat")" = "$(awk '{print $1}' "/proc/$CHILD/stat")" ] ||
    fail "the child did not get a session of its own: $(cat "/proc/$CHILD/stat")"
  term_run setsid "$pid"
  exited "$CHILD" || fail "the workload's setsid child $CHILD outlived the stop: $(cat "$E2E_DIR/setsid.err")"
  err_has setsid "SIGTERM went to the workload's process group ([0-9]*) and the processes of it that had left the group ([0-9 ]*); it ended (exit 143), nothing of it is left"
  [ "$(runs_left)" -eq 0 ] || fail "the stopped run's record directory was left"
}

# The group file is the workload's to write (issue 36, item 6): a workload that overwrites it with
# another process group's id -- another run's workload, still running, or -1 (every process the
# account may signal) -- gets that group neither signalled nor taken for its own. The stop ends
# the workload itself (its group as the launching shell said it on the channel) and says that the
# file named something else, which was left alone.
scenario_run_foreign_group() {
  setup
  local home by by_pid target file pid
  home=$(guest_home vm1)
  # shellcheck disable=SC2016 # the guest's shell expands it
  "$LM_BIN" run vm1 -- sh -c 'read -r p _ </proc/self/stat; echo "$$ $p" >/Users/lume/bystander.tmp; mv /Users/lume/bystander.tmp /Users/lume/bystander; exec sleep 600' \
    </dev/null >"$E2E_DIR/by.out" 2>"$E2E_DIR/by.err" &
  by_pid=$!
  wait_for 60 "the bystander did not start: $(cat "$E2E_DIR/by.err")" test -s "$home/bystander"
  read -r by BYSTANDER <"$home/bystander"
  for target in "-$by" -1; do
    file=$home/forger-${target#-}
    rm -f "$file"
    # shellcheck disable=SC2016 # the guest's shell expands it
    "$LM_BIN" run vm1 -- sh -c '[ -n "$LUME_METAL_RECORD_DIR" ] || exit 64; printf "%s\n" "$1" >"$LUME_METAL_RECORD_DIR/process-group"; read -r p _ </proc/self/stat; echo "$p" >"$2.tmp"; mv "$2.tmp" "$2"; exec sleep 600' \
      forger "$target" "/Users/lume/forger-${target#-}" </dev/null >"$E2E_DIR/forger.out" 2>"$E2E_DIR/forger.err" &
    pid=$!
    wait_for 60 "the forging workload did not start: $(cat "$E2E_DIR/forger.err")" test -s "$file"
    FORGER=$(cat "$file")
    term_run forger "$pid"
    exited "$FORGER" || fail "file $target: the forging workload $FORGER outlived the stop: $(cat "$E2E_DIR/forger.err")"
    ! exited "$BYSTANDER" || fail "file $target: the other run's workload $BYSTANDER was killed: $(cat "$E2E_DIR/forger.err")"
    ! exited "$by_pid" || fail "file $target: the other run ended: $(cat "$E2E_DIR/by.err")"
    err_has forger "the run's process-group file (which the workload can write) says $target, which is not the workload's process group ([0-9]*): nothing was sent to $target; SIGTERM went to the workload's process group ([0-9]*); it ended (exit 143), nothing of it is left"
  done
  kill -s TERM "$by_pid"
  wait_for 60 "the bystander's run did not end after SIGTERM: $(cat "$E2E_DIR/by.err")" exited "$by_pid"
  wait "$by_pid" || true
  exited "$BYSTANDER" || fail "the bystander $BYSTANDER outlived its own run's stop"
}

"scenario_$1"
