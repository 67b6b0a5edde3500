#!/usr/bin/env bash
# The main job, end to end: enable a VM, show its status, run the probe with the shim, roll back,
# and leave the VM as it was found (a VM that was stopped is stopped again).
#
#   examples/demo.sh [VM]        (after `cmake --preset default && cmake --build --preset default`)
#
# With real Lume (macOS, `lume serve` answering or `lume` on PATH) it works on your VM (default
# "my-vm"). Without Lume it starts the bundled Lume simulator with one VM — a real OpenSSH guest
# on 127.0.0.2 (LUME_METAL_DEMO_ADDRESS_BASE: another loopback address), its API on a free port of
# 127.0.0.1 (LUME_METAL_DEMO_API_ADDRESS: another one) — and points lume-metal at
# it with its own home, state and preference directories, so nothing of this machine's is touched;
# the simulator is stopped at the end. Like Cua's images, the simulated guest's login shell is zsh
# with sshd's default PATH; GUEST_SSHD_SHELL=sh gives /bin/sh. Needs jq (macOS 15 has /usr/bin/jq).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${LUME_METAL_BUILD_DIR:-$root/build}
bin=$build/bin
[ -x "$bin/lume-metal" ] || { echo "demo: build first: cmake --preset default && cmake --build --preset default" >&2; exit 1; }
command -v jq >/dev/null || { echo "demo: it reads lume-metal's JSON with jq: brew install jq (Debian/Ubuntu: apt-get install jq)" >&2; exit 1; }
export PATH="$bin:$PATH"
bold='' plain=''
if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then bold=$'\033[1m' plain=$'\033[0m'; fi
step() { printf '\n%s$ %s%s\n' "$bold" "$*" "$plain"; "$@"; }

real_lume=0
# Lume's server answers at once on an unknown route (404); its host status can take seconds.
if [ "$(uname -s)" = Darwin ] && { curl -sS -o /dev/null -m 5 "${LUME_METAL_LUME_URL:-http://127.0.0.1:7777}/" 2>/dev/null || command -v lume >/dev/null; }; then
  real_lume=1
fi

if [ $real_lume -eq 1 ]; then
  vm=${1:-my-vm}
else
  vm=${1:-demo-vm}
  # The simulator's guests are sshd servers on port 22 in their own mount namespaces.
  [ "$(id -u)" -eq 0 ] || { echo "demo: without Lume it runs the Lume simulator, which needs root: sudo $0${*:+ $*}" >&2; exit 1; }
  work=$(mktemp -d "${TMPDIR:-/tmp}/lume-metal-demo.XXXXXX")
  chmod 755 "$work"   # the guest account reaches its stand-ins below it
  sim_pid=
  cleanup() {
    [ -n "$sim_pid" ] && kill -TERM "$sim_pid" 2>/dev/null && wait "$sim_pid" 2>/dev/null || true
    rm -rf "$work"
  }
  trap cleanup EXIT INT TERM
  metal=$(sed -n 's/^LUME_METAL_FAKE_METAL_DIR:INTERNAL=//p' "$build/CMakeCache.txt")
  # Lume's VM store in the demo's own home, where lume-metal reads each VM's identity as on a Mac.
  export HOME=$work/home
  mkdir -p "$HOME"
  echo "No Lume here: starting the Lume simulator with one VM ($vm), a real sshd guest."
  "$bin/lume-sim" --port 0 --vm "$vm" --dir "$work/sim" --info "$work/sim.json" --boot-delay 1 \
    --stop-delay 1 --metal-dir "$metal" --prefs-dir "$work/prefs" --lume-home "$HOME/.lume" \
    --address-base "${LUME_METAL_DEMO_ADDRESS_BASE:-127.0.0.2}" --api-address "${LUME_METAL_DEMO_API_ADDRESS:-127.0.0.1}" \
    --exit-with-parent >"$work/sim.log" 2>&1 &
  sim_pid=$!
  for _ in $(seq 1 100); do [ -s "$work/sim.json" ] && break; sleep 0.1; done
  [ -s "$work/sim.json" ] || { cat "$work/sim.log" >&2; exit 1; }
  cat "$work/sim.log"
  url=$(sed -n 's/.*Lume API at \(http[^ ]*\).*/\1/p' "$work/sim.log" | head -n 1)
  export LUME_METAL_LUME_URL=$url
  export LUME_METAL_STATE_DIR=$work/state LUME_METAL_PREFS_DIR=$work/prefs
  mkdir -p "$work/prefs"
fi

lume_url=${LUME_METAL_LUME_URL:-http://127.0.0.1:7777}
# The VM's state as its manager tells it (running, stopped...), through lume-metal's JSON.
vm_state() { lume-metal status "$vm" --format json | jq -r '.vms[0].state // "unknown"'; }
found=$(vm_state)
echo "$vm is $found."

step lume-metal enable "$vm"
step lume-metal status "$vm"
step lume-metal run "$vm" -- metal-capabilities 1009
step lume-metal probe "$vm"
step lume-metal enable "$vm"          # again: nothing to do, well under a second
if [ "$found" = running ]; then
  # Rollback restarts it, so that it runs at the stock level again.
  step lume-metal rollback "$vm"
else
  # enable started it: it is stopped again instead of restarted, which also leaves the unlocked
  # level. Lume's server stops the VMs it started over HTTP; `lume stop` would signal the server.
  step lume-metal rollback --no-restart "$vm"
  if curl -sS -o /dev/null -m 5 "$lume_url/lume/vms/$vm" 2>/dev/null; then
    step curl -fsS -X POST "$lume_url/lume/vms/$vm/stop"
    echo
  else
    step lume stop "$vm"
  fi
fi
step lume-metal status "$vm"
now=$(vm_state)
echo
if [ "$now" != "$found" ]; then
  echo "demo: $vm was $found and is $now now: start or stop it to put it back" >&2
  exit 1
fi
echo "demo: done — $vm is $now, as it was found, with its guest files removed and the host preference restored."
