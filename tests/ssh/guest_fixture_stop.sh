#!/usr/bin/env bash
# guest_fixture_stop.sh GUEST_SSHD WORKDIR: stopping one simulated guest powers off that guest —
# its sshd and every process its sessions started, detached ones included — and nothing of any
# other guest's (a stop once killed by a recorded mount namespace id, which the kernel reuses).
. "$(dirname "$0")/../support/lm_test.sh"
G=$1 WORK=$2
# Two guests on port 22 of the test's own /24 (the address plan).
address_a=$(lm_test_address 2)
address_b=$(lm_test_address 3)
rm -rf "$WORK"
mkdir -p "$WORK"
chmod 755 "$WORK"
cleanup() {
  local rc=$?
  "$G" stop --dir "$WORK/a" >/dev/null 2>&1 || true
  "$G" stop --dir "$WORK/b" >/dev/null 2>&1 || true
  rm -rf "$WORK"
  exit $rc
}
trap cleanup EXIT INT TERM
ssh-keygen -q -t ed25519 -N '' -C stop-test -f "$WORK/key" </dev/null

# guest NAME ADDRESS: start it and let the key in.
guest() {
  "$G" start --dir "$WORK/$1" --address "$2" >/dev/null
  mkdir -p "$WORK/$1/home/.ssh"
  cp "$WORK/key.pub" "$WORK/$1/home/.ssh/authorized_keys"
}
# leave_sleeper ADDRESS TAG: a session that starts a detached process (own session, no tty, its
# output nowhere) and ends. TAG is a tiny number, so that `sleep 600 TAG` is recognisable.
leave_sleeper() {
  ssh -i "$WORK/key" -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
    -o LogLevel=ERROR "lume@$1" "setsid sleep 600 $2 </dev/null >/dev/null 2>&1 & echo started"
}
# sleeper_pids TAG: this machine's PIDs of the sleepers tagged TAG.
sleeper_pids() { pgrep -f "^sleep 600 $1\$" || true; }
# wait_sleeper TAG running|gone: until the sleeper is there (its exec may lag its session's end)
# or gone (the kernel ends a PID namespace's processes as its first one exits); 5 s at most.
wait_sleeper() {
  local i
  for i in $(seq 1 100); do
    if [ "$2" = running ]; then [ -n "$(sleeper_pids "$1")" ] && return 0; else [ -z "$(sleeper_pids "$1")" ] && return 0; fi
    sleep 0.05
  done
  return 1
}

tag_a=0.${$}1 tag_b=0.${$}2 tag_b2=0.${$}3
guest a "$address_a"
guest b "$address_b"
[ "$(leave_sleeper "$address_a" "$tag_a")" = started ] || fail "session in a"
[ "$(leave_sleeper "$address_b" "$tag_b")" = started ] || fail "session in b"
wait_sleeper "$tag_a" running && wait_sleeper "$tag_b" running || fail "the sleepers did not start"
pid_b=$(cat "$WORK/b/sshd.pid")

"$G" stop --dir "$WORK/a"
wait_sleeper "$tag_a" gone || fail "a's detached process survived a's stop: $(sleeper_pids "$tag_a")"
"$G" status --dir "$WORK/a" && fail "a still running"
"$G" status --dir "$WORK/b" || fail "stopping a stopped b"
kill -0 "$pid_b" || fail "stopping a killed b's sshd"
[ -n "$(sleeper_pids "$tag_b")" ] || fail "stopping a killed b's session process"
[ "$(leave_sleeper "$address_b" "$tag_b2")" = started ] && wait_sleeper "$tag_b2" running || fail "b no longer answers"

"$G" stop --dir "$WORK/b"
wait_sleeper "$tag_b" gone || fail "b's detached process survived b's stop"
wait_sleeper "$tag_b2" gone || fail "b's second detached process survived b's stop"
"$G" stop --dir "$WORK/b" # idempotent
echo "guest_fixture_stop: passed"
