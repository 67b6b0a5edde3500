#!/usr/bin/env bash
# Children get only the environment they need (issue 25, item 3): with the guest password and an
# SSH agent's socket in lume-metal's environment, every kind of child it starts on the host --
# `lume --version` for the API backend (doctor), the lume CLI's queries and its `run --detach`
# (the VM's owner), `tart --version` and `tart run` (detached), `utmctl`, and bench's bare-metal
# workload -- is a recording stand-in that writes down the environment it got; none may hold
# either secret. A variable that is no secret must reach them all (the recording sees what is
# passed on).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

export TART_HOME="$E2E_DIR/tart-home"
UTM_DOCS="$HOME/Library/Containers/com.utmapp.UTM/Data/Documents"
sim_start --vm vm1 --tart-vm tvm --tart-home "$TART_HOME" --utm-vm uvm --utm-documents "$UTM_DOCS"
BIN=$(jq -r .bin_dir "$E2E_DIR/sim.json")

REC="$E2E_DIR/rec-bin" ENVS="$E2E_DIR/envs"
mkdir -p "$REC" "$ENVS"
# recorder NAME REAL: $REC/NAME writes its environment and arguments, then becomes REAL.
recorder() {
  printf '#!/bin/sh\nenv >"%s/%s.$$.env"\necho "$*" >"%s/%s.$$.args"\n%s\n' "$ENVS" "$1" "$ENVS" "$1" \
    "${2:+exec $2 \"\$@\"}" >"$REC/$1"
  chmod 755 "$REC/$1"
}
recorder lume "$BIN/lume"
recorder tart "$BIN/tart"
recorder utmctl "$(readlink -f "$BIN/utmctl")"
recorder workload ""
export PATH="$REC:$BIN:$PATH"

export LUME_METAL_SSH_PASSWORD=lume SSH_AUTH_SOCK="$E2E_DIR/no-agent.sock" LM_NOT_SECRET=passed-on

# lume --version (the API backend's version), tart --version: doctor's vm-manager check, every
# manager found automatically (utmctl is not asked there: UTM.app is not found next to a stand-in).
lm_json "$E2E_DIR/doctor.json" doctor --lume "$REC/lume"
# The lume CLI: get, run --detach (its relaunched `lume run` owns the VM), ...
lm_json "$E2E_DIR/cli.json" enable vm1 --vm-manager lume-cli --lume "$REC/lume"
expect_rc 0 "$E2E_DIR/cli.json"
# tart: get, run (a detached child, the VM's owner), ip ...; Cirrus Labs' image's password.
LUME_METAL_SSH_PASSWORD=admin lm_json "$E2E_DIR/tart.json" enable tvm --vm-manager tart
expect_rc 0 "$E2E_DIR/tart.json"
# utmctl: status ...
lm_json "$E2E_DIR/utm.json" status uvm --vm-manager utm
# bench's bare-metal workload.
lm_json_first "$E2E_DIR/bench.json" bench --bare-metal --workload-parser none --repetitions 1 \
  --out "$E2E_DIR/bare" -- "$REC/workload"

# Every kind of child was seen, with what makes it that kind.
seen() { grep -lx -- "$2" "$ENVS"/"$1".*.args >/dev/null 2>&1 || fail "no '$1 $2' child was recorded: $(cat "$ENVS"/*.args)"; }
seen lume --version
seen lume 'get vm1 --format json'
seen lume 'run vm1 --detach'
seen tart --version
seen tart 'run --no-graphics tvm'
seen utmctl 'status uvm'
ls "$ENVS"/workload.*.env >/dev/null 2>&1 || fail "bench's bare-metal workload was not recorded"
n=0
for f in "$ENVS"/*.env; do
  n=$((n + 1))
  ! grep -E '^(LUME_METAL_SSH_PASSWORD|SSH_AUTH_SOCK)=' "$f" ||
    fail "$(basename "$f") ($(cat "${f%.env}.args")) got a secret"
  grep -qx LM_NOT_SECRET=passed-on "$f" || fail "$(basename "$f") did not get the environment at all"
done
echo "ok: $n children (lume, tart, utmctl, bench's workload), none got LUME_METAL_SSH_PASSWORD or SSH_AUTH_SOCK"
